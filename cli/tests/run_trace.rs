//! `os2trace run` with tracing: TRACE ON with a selection, DTRACE APPLY,
//! TRACEGET, TRSPOOL, TRACEFMT, QUERY and GETVARS over one run.

mod common;

use common::{os2trace, stdout as text};

fn prepared() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    text(&os2trace(dir.path(), &["testprogs", "build", "."]));
    text(&os2trace(
        dir.path(),
        &["trcust", "TPDLL16.TSF", "/M=TPDLL16.MAP"],
    ));
    dir
}

#[test]
fn trace_on_with_a_selection_and_apply_log_and_format() {
    let dir = prepared();
    let out = text(&os2trace(
        dir.path(),
        &[
            "run",
            "--root",
            ".",
            "--trace",
            "TPDLL16.TDF(2)",
            "--apply",
            "DLLCAL16.RPN",
            "--tracefmt",
            "--save",
            "T.SAV",
            "--query",
            "--getvars",
            "DLLCAL16.EXE",
        ],
    ));
    assert!(out.starts_with("DLLCAL16 calls TPDLL16"), "{out}");
    assert!(
        out.contains("   TPDLL16 ADDNUMS arguments\n   ret=000F:0015 b=0003 a=0002\n"),
        "{out}"
    );
    assert!(
        !out.contains("PUTMSG string"),
        "minor 3 was not selected:\n{out}"
    );
    assert!(
        out.contains("MAJ=00C4 MIN=0001"),
        "the applied trace program logged:\n{out}"
    );
    assert!(out.contains("DTO 0: module TPDLL16.DLL id 0 vars 0 errors 0\n  minor 0002 major 00C2 at 0001:00000012 active: 1 hits, 1 records"), "{out}");
    assert!(out.contains("DTO 1: module DLLCAL16"), "{out}");
    // The TRACEGET file reads back with tracefmt.
    let again = text(&os2trace(dir.path(), &["tracefmt", "T.SAV", "/T=."]));
    assert!(again.contains("ret=000F:0015 b=0003 a=0002"), "{again}");
    let raw = text(&os2trace(dir.path(), &["tracefmt", "T.SAV", "--json"]));
    assert_eq!(raw.lines().count(), 4, "{raw}");
}

#[test]
fn trspool_writes_its_cycle_of_files() {
    let dir = prepared();
    let out = text(&os2trace(
        dir.path(),
        &[
            "run",
            "--trace",
            "TPDLL16.TDF",
            "--spool",
            "SPOOL",
            "/F2",
            "/T100",
            "--root",
            ".",
            "DLLCAL16.EXE",
        ],
    ));
    // DLLINIT, PUTMSG, ADDNUMS and GETCOUNT: the init routine runs after
    // TRACE ON, as on OS/2.
    assert!(
        out.contains("TRSPOOL: 1 polls, 4 records captured, 0 lost"),
        "{out}"
    );
    let formatted = text(&os2trace(
        dir.path(),
        &["tracefmt", "SPOOL/TRACEBUF.000", "/T=."],
    ));
    assert!(
        formatted.contains("TPDLL16 GETCOUNT entered"),
        "{formatted}"
    );
}

#[test]
fn bad_tracing_options_fail_clearly() {
    let dir = prepared();
    let out = os2trace(
        dir.path(),
        &[
            "run",
            "--root",
            ".",
            "--trace",
            "TPDLL16.TDF(NOPE)",
            "DLLCAL16.EXE",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("'NOPE' is not a group or type of this TDF"),
        "{out:?}"
    );
    let out = os2trace(
        dir.path(),
        &[
            "run",
            "--root",
            ".",
            "--tracebuf",
            "99",
            "--trace",
            "TPDLL16.TDF",
            "DLLCAL16.EXE",
        ],
    );
    // A value clap checks: bad usage, exit 2 (issue 13).
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let out = os2trace(dir.path(), &["run", "--root", ".", "--tracebuf"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}
