//! `os2trace trcust`, `os2trace tdf show|verify` and `os2trace dtrace
//! buildtdf` as a user runs them: in a directory, with exit codes.

use std::fs;
use std::path::Path;
use std::process::Command;

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/formats/trcust-corpus"
);
const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/samples");

fn os2trace(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_os2trace"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn case_dir(case: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for e in fs::read_dir(format!("{CORPUS}/{case}/in"))
        .unwrap()
        .flatten()
    {
        fs::copy(e.path(), dir.path().join(e.file_name())).unwrap();
    }
    fs::copy(
        format!("{SAMPLES}/lx/hello.exe"),
        dir.path().join("HELLO.EXE"),
    )
    .unwrap();
    dir
}

#[test]
fn trcust_runs_in_the_current_directory() {
    let dir = case_dir("tp_two");
    let (code, out, _) = os2trace(dir.path(), &["trcust", "TP_TWO.TSF", "/M=HELLO2.MAP"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with("\nTrcust Version 3.05A\n\nUsing source file: "),
        "{out}"
    );
    assert!(out.contains("TRC00C6.TFF \t # records = 2\n"), "{out}");
    let want = fs::read(format!("{CORPUS}/tp_two/expect/TP_TWO.TDF")).unwrap();
    assert_eq!(fs::read(dir.path().join("TP_TWO.TDF")).unwrap(), want);

    let (code, out, _) = os2trace(dir.path(), &["tdf", "show", "TP_TWO.TDF"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("minor 0001  0002:00000000  opcode 68"),
        "{out}"
    );
    assert!(out.contains("Log DN"), "{out}");
    let (code, out, _) = os2trace(dir.path(), &["tdf", "show", "TRC00C6.TFF", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["kind"], "TFF");
    assert_eq!(v["records"].as_array().unwrap().len(), 2);

    let (code, out, _) = os2trace(
        dir.path(),
        &["tdf", "verify", "TP_TWO.TDF", "HELLO.EXE", "/M=HELLO2.MAP"],
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no problems"), "{out}");
}

#[test]
fn trcust_abort_exits_1() {
    let dir = case_dir("dyn_nomap");
    let names = || {
        let mut v: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };
    let before = names();
    let (code, out, _) = os2trace(dir.path(), &["trcust", "DYN.TSF"]);
    assert_eq!(code, 1);
    assert!(
        out.ends_with("\nFATAL/SEVERE error detected, TRCUST aborted\n"),
        "{out}"
    );
    assert_eq!(names(), before, "an aborted run writes no TFF, TDF or temp");
}

#[test]
fn verify_reports_problems_and_exits_1() {
    let dir = case_dir("tp_mid");
    let (code, _, _) = os2trace(dir.path(), &["trcust", "TP_MID.TSF", "/M=HELLO2.MAP"]);
    assert_eq!(code, 0);
    let (code, out, _) = os2trace(
        dir.path(),
        &["tdf", "verify", "TP_MID.TDF", "HELLO.EXE", "/M=HELLO2.MAP"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("minor 0001 at 0002:00000001: not on an instruction boundary"),
        "{out}"
    );
}

#[test]
fn dtrace_buildtdf_writes_a_tdf() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("T.RPN"),
        "name=HELLO.EXE\nmajor=0xC6\nminor=1, object=2, offset=0, opcode=0x68\nPush EAX\nLog DN,1\n",
    )
    .unwrap();
    let (code, out, err) = os2trace(dir.path(), &["dtrace", "buildtdf", "T.RPN"]);
    assert_eq!(code, 0, "{out}{err}");
    let want = fs::read(format!("{CORPUS}/r_eax/expect/R_EAX.TDF")).unwrap();
    // Same tracepoint and program as TRCUST's REGS=(EAX) at .startup.
    assert_eq!(fs::read(dir.path().join("T.TDF")).unwrap(), want);
}
