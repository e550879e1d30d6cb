//! Issue 12, item 6, as one makefile: NMAKE (running here) has ALP
//! assemble a program, LINK386 link it with a MAP, MAPSYM make its
//! `.SYM`, EXEHDR dump it, IBM's TRCUST compile a TSF against the MAP and
//! the program run, each recipe through the built-in CMD.EXE. Then, on
//! the host: our TRCUST gives IBM's TDF and TFF byte for byte, EXEHDR's
//! dump agrees with `os2trace exehdr`, and `os2trace run --trace` with
//! IBM's TDF logs the program's message and formats it with IBM's TFF.
//!
//! The `.DEF` has a DESCRIPTION: on an LX module whose non-resident name
//! table is empty EXEHDR prints its dump, then faults in its own free of
//! the static "" its allocator gives for a size of 0, as it would on OS/2
//! (toolkit_exehdr.rs shows both).
//!
//! Skipped, with a printed notice, unless OS2TK_DIR names the toolkit.

mod common;

use std::path::{Path, PathBuf};

use common::os2trace;

fn toolkit() -> Option<PathBuf> {
    common::toolkit_having("nmake.exe")
}

const HELLO_ASM: &str = "\
        .386
        .model  flat
        extrn   DosWrite:near, DosExit:near
        public  greet, msg
        .stack  4096
        .data
msg     db      \"Hello from the chain\", 13, 10, 0
msglen  equ     $ - msg - 1
written dd      ?
        .code
start:  nop
greet:  push    offset written
        push    msglen
        push    offset msg
        push    1
        call    DosWrite
        add     esp, 16
        push    eax
        push    1
        call    DosExit
        end     start
";

const HELLO_TSF: &str = "\
MODNAME=HELLO.EXE
MAJOR=0xC6
TRACE MINOR=1, TP=.greet, ASCIIZ32=(.msg,DIRECT,64), DESC=\"greeting\", FMT=\"says %S\"
";

const MAKEFILE: &str = "\
all: HELLO.SYM HELLO.HDR HELLO.TDF run

HELLO.OBJ: HELLO.ASM
\talp HELLO.ASM

HELLO.EXE HELLO.MAP: HELLO.OBJ HELLO.DEF
\tlink386 /NOLOGO /MAP HELLO.OBJ,HELLO.EXE,HELLO.MAP,OS2386.LIB,HELLO.DEF;

HELLO.SYM: HELLO.MAP
\tmapsym HELLO.MAP

HELLO.HDR: HELLO.EXE
\texehdr HELLO.EXE > HELLO.HDR

HELLO.TDF: HELLO.TSF HELLO.MAP
\ttrcust HELLO.TSF /M=HELLO.MAP

run: HELLO.EXE
\tHELLO
";

/// The file `name` in `root`, whatever the case of its name.
fn file_ci(root: &Path, name: &str) -> PathBuf {
    std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().eq_ignore_ascii_case(name))
        .map(|e| e.path())
        .unwrap_or_else(|| panic!("no {name} in {}", root.display()))
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn one_makefile_builds_dumps_maps_customizes_and_runs_then_os2trace_traces_it() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (from, to) in [
        ("bin/nmake.exe", "NMAKE.EXE"),
        ("bin/alp.exe", "ALP.EXE"),
        ("bin/alp.msg", "ALP.MSG"),
        ("bin/link386.exe", "LINK386.EXE"),
        ("bin/mapsym.exe", "MAPSYM.EXE"),
        ("bin/exehdr.exe", "EXEHDR.EXE"),
        ("bin/trcust.exe", "TRCUST.EXE"),
        ("lib/os2386.lib", "OS2386.LIB"),
    ] {
        std::fs::copy(tk.join(from), root.join(to)).unwrap();
    }
    std::fs::write(root.join("HELLO.ASM"), HELLO_ASM).unwrap();
    std::fs::write(
        root.join("HELLO.DEF"),
        "NAME HELLO WINDOWCOMPAT\r\nDESCRIPTION 'the chain'\r\n",
    )
    .unwrap();
    std::fs::write(root.join("HELLO.TSF"), HELLO_TSF).unwrap();
    std::fs::write(root.join("MAKEFILE"), MAKEFILE).unwrap();

    let out = os2trace(
        root,
        &[
            "run",
            "--root",
            ".",
            "--env",
            "DPATH=C:\\",
            "NMAKE.EXE",
            "/NOLOGO",
        ],
    );
    let log = text(&out);
    assert_eq!(out.status.code(), Some(0), "{log}");
    let mut at = 0;
    for step in [
        "\talp HELLO.ASM",
        "\tlink386 /NOLOGO /MAP",
        "\tmapsym HELLO.MAP",
        "\texehdr HELLO.EXE > HELLO.HDR",
        "\ttrcust HELLO.TSF /M=HELLO.MAP",
        "\tHELLO\r\nHello from the chain\r\n",
    ] {
        let i = log[at..]
            .find(step)
            .unwrap_or_else(|| panic!("{step:?} in order in:\n{log}"));
        at += i + step.len();
    }

    // MAPSYM's .SYM holds the publics.
    let sym =
        tdf::sym::SymFile::parse(&std::fs::read(file_ci(root, "HELLO.SYM")).unwrap()).unwrap();
    let names: Vec<&str> = sym
        .segments
        .iter()
        .flat_map(|s| s.symbols.iter().map(|(_, n)| n.as_str()))
        .collect();
    assert!(
        names.iter().any(|n| n.eq_ignore_ascii_case("greet")),
        "{names:?}"
    );

    // EXEHDR's dump, made by the recipe, agrees with `os2trace exehdr`.
    let hdr =
        String::from_utf8_lossy(&std::fs::read(file_ci(root, "HELLO.HDR")).unwrap()).into_owned();
    let json: serde_json::Value = serde_json::from_str(&common::stdout(&os2trace(
        root,
        &["exehdr", "--json", "HELLO.EXE"],
    )))
    .unwrap();
    let entry = format!(
        "object {} offset {:08x}",
        json["start"]["object"],
        json["start"]["offset"].as_u64().unwrap()
    );
    assert!(hdr.contains(&entry), "{entry} in:\n{hdr}");
    assert!(hdr.contains("the chain"), "the description:\n{hdr}");

    // Our TRCUST gives IBM's TDF and TFF byte for byte.
    let ibm_tdf = std::fs::read(file_ci(root, "HELLO.TDF")).unwrap();
    let ours = tempfile::tempdir().unwrap();
    for name in ["HELLO.TSF", "HELLO.MAP", "HELLO.EXE"] {
        std::fs::copy(file_ci(root, name), ours.path().join(name)).unwrap();
    }
    common::stdout(&os2trace(
        ours.path(),
        &["trcust", "HELLO.TSF", "/M=HELLO.MAP"],
    ));
    assert_eq!(
        std::fs::read(ours.path().join("HELLO.TDF")).unwrap(),
        ibm_tdf,
        "our TDF is IBM's"
    );
    assert_eq!(
        std::fs::read(ours.path().join("TRC00C6.TFF")).unwrap(),
        std::fs::read(file_ci(root, "TRC00C6.TFF")).unwrap(),
        "our TFF is IBM's"
    );
    let tdf = tdf::Tdf::parse(&ibm_tdf).unwrap();
    assert_eq!(tdf.records.len(), 1);

    // Traced with IBM's TDF, the program logs its message.
    std::fs::rename(file_ci(root, "HELLO.TDF"), root.join("HELLO.TDF")).unwrap();
    let traced = common::stdout(&os2trace(
        root,
        &[
            "run",
            "--root",
            ".",
            "--trace",
            "HELLO.TDF",
            "--tracefmt",
            "HELLO.EXE",
        ],
    ));
    assert!(traced.starts_with("Hello from the chain\r\n"), "{traced}");
    assert!(traced.contains("MAJ=00C6 MIN=0001 PID=0001"), "{traced}");
    // The TFF's FMT prints the logged string (its CR LF as dots).
    assert!(
        traced.contains("\n   greeting\n   says Hello from the chain..\n"),
        "{traced}"
    );

    // NMAKE runs the program again (its `run` target, through CMD.EXE),
    // traced: HELLO is a child of a child, and its copy takes the
    // tracepoints; the record has its PID and formats the same way.
    let out = os2trace(
        root,
        &[
            "run",
            "--root",
            ".",
            "--env",
            "DPATH=C:\\",
            "--trace",
            "HELLO.TDF",
            "--tracefmt",
            "--query",
            "NMAKE.EXE",
            "/NOLOGO",
            "run",
        ],
    );
    let nmake = text(&out);
    assert_eq!(out.status.code(), Some(0), "{nmake}");
    let line = nmake
        .lines()
        .find(|l| l.contains("MAJ=00C6 MIN=0001"))
        .unwrap_or_else(|| panic!("HELLO's record in:\n{nmake}"));
    let pid = line
        .split("PID=")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    assert_ne!(pid, "0001", "{line}");
    assert!(
        nmake.contains(&format!(
            "  in processes: {}\n",
            u16::from_str_radix(pid, 16).unwrap()
        )),
        "{nmake}"
    );
    assert!(
        nmake.contains("\n   greeting\n   says Hello from the chain..\n"),
        "{nmake}"
    );
}
