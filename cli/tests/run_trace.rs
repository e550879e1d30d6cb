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

/// `run --api-log`'s closing totals: (instructions, cycles).
fn api_log_totals(stderr: &str) -> (u64, u64) {
    let line = stderr
        .lines()
        .rfind(|l| l.starts_with("run: "))
        .unwrap_or_else(|| panic!("no totals: {stderr}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    // run: N instructions, C cycles, M ms of emulated time
    let number = |i: usize| words[i].trim_end_matches(',').parse::<u64>().unwrap();
    (number(1), number(3))
}

#[test]
fn api_log_totals_include_what_tracing_cost() {
    let dir = prepared();
    let d = dir.path();
    let untraced = os2trace(d, &["run", "--root", ".", "--api-log", "DLLCAL16.EXE"]);
    assert!(untraced.status.success(), "{untraced:?}");
    let (insns, cycles) = api_log_totals(&String::from_utf8_lossy(&untraced.stderr));
    let traced = os2trace(
        d,
        &[
            "run",
            "--root",
            ".",
            "--api-log",
            "--trace",
            "TPDLL16",
            "--apply",
            "DLLCAL16",
            "--query",
            "DLLCAL16.EXE",
        ],
    );
    assert!(traced.status.success(), "{traced:?}");
    let query = String::from_utf8_lossy(&traced.stdout);
    // QUERY: "  minor 0001 major 00C2 at ...: 1 hits, 1 records, 302 cycles"
    let (mut hits, mut hit_cycles) = (0, 0);
    for l in query
        .lines()
        .filter(|l| l.trim_start().starts_with("minor "))
    {
        let w: Vec<&str> = l.split_whitespace().collect();
        let n = w.len();
        assert_eq!((w[n - 5], w[n - 1]), ("hits,", "cycles"), "{l}");
        hits += w[n - 6].parse::<u64>().unwrap();
        hit_cycles += w[n - 2].parse::<u64>().unwrap();
    }
    assert_eq!(hits, 7, "{query}");
    // Each hit adds its INT3 to the instructions and its cost to the
    // emulated clock; the totals say so (they used not to move at all).
    let totals = api_log_totals(&String::from_utf8_lossy(&traced.stderr));
    assert_eq!(totals, (insns + hits, cycles + hit_cycles), "{query}");
}

#[test]
fn the_default_limits_and_the_messages_of_a_limit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A program that loops forever: L: jmp L.
    let mut m = loader::Module::new_lx("LOOPER");
    m.add_object(0x2005, 2, &[0xEB, 0xFE]);
    m.add_object(0x2003, 0x1000, &[]);
    m.start = Some(loader::Address {
        object: 1,
        offset: 0,
    });
    m.stack = Some(loader::Address {
        object: 2,
        offset: 0x1000,
    });
    std::fs::write(d.join("L.EXE"), loader::write(&m).unwrap()).unwrap();
    let help = text(&os2trace(d, &["run", "--help"]));
    assert!(help.contains("[default: 10000000000]"), "{help}");
    assert!(help.contains("[default: 60]"), "{help}");
    let out = os2trace(d, &["run", "--root", ".", "--max-insns", "5000", "L.EXE"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the instruction limit of 5000 ran out") && err.contains("--max-insns"),
        "{err}"
    );
    // --max-insns 0 is no instruction limit: the wall clock ends it.
    let out = os2trace(
        d,
        &[
            "run",
            "--root",
            ".",
            "--max-insns",
            "0",
            "--timeout",
            "1",
            "L.EXE",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the wall-clock limit of 1 s ran out") && err.contains("--timeout"),
        "{err}"
    );
}

/// A traced program that CMD.EXE runs (`/C`) is traced in the child: its
/// TDFs (the EXE's and its DLL's) go into the copies the child loads, the
/// records are formatted as when the program runs alone but with the
/// child's PID, QUERY names the process, and two runs write the same
/// TRACEGET file. A TDF whose module never loads is named on stderr.
#[test]
fn a_program_run_by_cmd_is_traced_in_the_child() {
    let dir = prepared();
    for tsf in ["TPDLL32", "DLLCAL32", "HELLO16"] {
        let map = format!("/M={tsf}.MAP");
        text(&os2trace(
            dir.path(),
            &["trcust", &format!("{tsf}.TSF"), &map],
        ));
    }
    let run = |program: &[&str], save: &str| {
        let mut args = vec![
            "run",
            "--root",
            ".",
            "--trace",
            "DLLCAL32",
            "--trace",
            "TPDLL32",
            "--tracefmt",
            "--save",
            save,
            "--query",
        ];
        args.extend_from_slice(program);
        os2trace(dir.path(), &args)
    };
    let alone = text(&run(&["DLLCAL32.EXE"], "A.SAV"));
    let child = text(&run(&["C:\\OS2\\CMD.EXE", "/C", "DLLCAL32"], "C.SAV"));
    let formatted = |out: &str| -> Vec<String> {
        out.lines()
            .skip_while(|l| !l.starts_with("    1  "))
            .take_while(|l| !l.starts_with("DTO "))
            .map(String::from)
            .collect()
    };
    let (alone_lines, child_lines) = (formatted(&alone), formatted(&child));
    assert_eq!(alone_lines.len(), child_lines.len(), "{child}");
    assert_eq!(
        child_lines
            .iter()
            .filter(|l| l.contains(" PID=0002 "))
            .count(),
        10,
        "{child}"
    );
    for (a, c) in alone_lines.iter().zip(&child_lines) {
        // TPDLL32's initialization returns to a thunk in the system
        // region, wherever CMD.EXE's start left the next free one.
        if a.starts_with("   ret=") {
            assert_eq!(a[15..], c[15..]);
            continue;
        }
        assert_eq!(a.replace(" PID=0001 ", " PID=0002 "), *c);
    }
    assert!(
        child.contains("DTO 1: module TPDLL32.DLL id 0 vars 0 errors 0\n  in processes: 2\n"),
        "{child}"
    );
    assert!(!alone.contains("in processes"), "{alone}");
    let again = text(&run(&["C:\\OS2\\CMD.EXE", "/C", "DLLCAL32"], "D.SAV"));
    assert_eq!(again, child);
    let saved = |f: &str| std::fs::read(dir.path().join(f)).unwrap();
    assert_eq!(saved("C.SAV"), saved("D.SAV"));
    // HELLO16 never runs: said on stderr, and the run still succeeds.
    let out = os2trace(
        dir.path(),
        &["run", "--root", ".", "--trace", "HELLO16", "DLLCAL32.EXE"],
    );
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("module HELLO16.EXE was never loaded: none of its tracepoints went in"),
        "{err}"
    );
}
