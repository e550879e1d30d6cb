//! `os2trace trcust` with debug information: testprogs' DBG16 and DBG32
//! carry CodeView line numbers and symbols, and `TP=@file,line`,
//! `REGS=(.var)` and `RETEP=CV` compile without a MAP file.

use std::fs;
use std::path::Path;
use std::process::Command;

fn os2trace(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_os2trace"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn trcust_compiles_tp_file_line_from_codeview() {
    // DBGH32's IBM HLL is read as IBM's TRCUST reads it, where REGS=(.var)
    // finds nothing and its Add2 has no end for RETEP=CV (tdf's
    // debuginfo tests and tdf/tests/trcust-diff/hll_* cover it).
    let codeview = testprogs::debug_programs()
        .unwrap()
        .into_iter()
        .filter(|p| p.name != "DBGH32");
    for p in codeview {
        let dir = tempfile::tempdir().unwrap();
        p.write_to(dir.path()).unwrap();
        let (file, _) = p.source.unwrap();
        let add2 = if p.name == "DBG16" { "add2" } else { "Add2" };
        fs::write(
            dir.path().join("L.TSF"),
            format!(
                "MODNAME={}\nMAJOR=0x51\n\
                 TRACE MINOR=1, TP=@{file},10, REGS=(.sum,.scratch), DESC=\"line 10\", FMT=\"%W\"\n\
                 TRACE MINOR=2, TP=.{add2},RETEP=CV, REGS=(AX)\n",
                p.file_name
            ),
        )
        .unwrap();
        let (code, out) = os2trace(dir.path(), &["trcust", "L.TSF"]);
        assert_eq!(code, 0, "{}: {out}", p.name);
        assert!(!out.contains("TRCUST("), "{}: {out}", p.name);
        let tdf = tdf::Tdf::parse(&fs::read(dir.path().join("L.TDF")).unwrap()).unwrap();
        let at = |l: &str| p.symbol(l).unwrap().offset;
        let offsets: Vec<u32> = tdf.records.iter().map(|r| r.offset).collect();
        assert_eq!(offsets, [at("line_10"), at("add2_epilogue")], "{}", p.name);

        // Without debug information (/NODE) and without a MAP file,
        // TRCUST's message (IBM's TRCUST says so too:
        // tdf/tests/trcust-diff/at_file_nomap).
        let (code, out) = os2trace(dir.path(), &["trcust", "L.TSF", "/NODE"]);
        assert_eq!(code, 1, "{}: {out}", p.name);
        assert!(
            out.contains("TRCUST(3) SEVERE: symbolic info not given for"),
            "{}: {out}",
            p.name
        );
    }
}
