//! `os2trace apis`: the listing, `--missing` on testprogs modules and the
//! toolkit's tools, `--check` against the toolkit's import libraries
//! (OS2TK_DIR; skipped, and said so, when unset).

mod common;

use common::{os2trace, stdout};
use std::io::Write as _;

#[test]
fn listing_names_the_moved_entries_with_the_program_that_calls_them() {
    let dir = tempfile::tempdir().unwrap();
    let text = stdout(&os2trace(dir.path(), &["apis"]));
    let line = text
        .lines()
        .find(|l| l.starts_with("DOSCALLS    40 "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("DosAllocHuge") && line.contains("ORDS16"),
        "{line}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&os2trace(dir.path(), &["apis", "--json"]))).unwrap();
    let all = json.as_array().unwrap();
    assert_eq!(all.len() + 1, text.lines().count() - 1, "one row per entry");
    let vio = all
        .iter()
        .find(|e| e["module"] == "VIOCALLS" && e["ordinal"] == 46)
        .unwrap();
    assert_eq!(vio["name"], "VioGetConfig");
    assert_eq!(vio["conv"], "16");
}

#[test]
fn missing_lists_only_what_is_not_there() {
    let dir = tempfile::tempdir().unwrap();
    for p in [
        testprogs::hello16().unwrap(),
        testprogs::dllcal16().unwrap(),
        testprogs::call16("DOSCALLS", 12, "DOSPTRACE").unwrap(),
    ] {
        p.write_to(dir.path()).unwrap();
    }
    let run = |exe: &str| stdout(&os2trace(dir.path(), &["apis", "--missing", exe]));
    assert_eq!(run("HELLO16.EXE"), "");
    // TPDLL16.DLL is not there yet: its imports are reported once.
    assert_eq!(
        run("DLLCAL16.EXE"),
        "TPDLL16.1                                         not a system DLL, and not beside the module\n\
         TPDLL16.GETCOUNT                                  not a system DLL, and not beside the module\n\
         TPDLL16.PUTMSG                                    not a system DLL, and not beside the module\n"
    );
    testprogs::tpdll16().unwrap().write_to(dir.path()).unwrap();
    assert_eq!(run("DLLCAL16.EXE"), "");
    assert_eq!(
        run("CALL16.EXE"),
        "DOSCALLS.12      DOSPTRACE                        not implemented (16-bit)\n"
    );
}

#[test]
fn check_against_the_toolkit_libraries() {
    let Some(tk) = std::env::var_os("OS2TK_DIR") else {
        let _ = writeln!(std::io::stderr(), "skipped: OS2TK_DIR is not set");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let tk = tk.to_string_lossy().into_owned();
    let text = stdout(&os2trace(dir.path(), &["apis", "--check", &tk]));
    assert!(text.contains("DOSCALLS: 409 entries compared"), "{text}");
    assert!(text.contains("; 0 disagreements"), "{text}");
    // The tools IBM's C runtime starts: what they still need is listed.
    let exehdr = format!("{tk}/bin/exehdr.exe");
    let missing = stdout(&os2trace(dir.path(), &["apis", "--missing", &exehdr]));
    println!("exehdr.exe needs:\n{missing}");
    assert!(
        missing.lines().all(|l| l.contains("not implemented")),
        "{missing}"
    );
}
