//! The one argument layer (issue 13, items 1 and 7-8): help, version,
//! suggestions, exit codes, OS/2 switches and paths, outputs that are
//! inputs, completions and man pages.

mod common;

use common::{os2trace, stdout};

fn code(out: &std::process::Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn help_version_and_usage_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in [
        "demo",
        "trcust",
        "run",
        "exehdr",
        "rpn",
        "tracefmt",
        "trapred",
        "dtrace",
        "tdf",
        "testprogs",
    ] {
        let out = os2trace(dir.path(), &[cmd, "--help"]);
        assert_eq!(code(&out), 0, "{cmd} --help: {out:?}");
        assert!(text(&out.stdout).contains("Usage:"), "{cmd}");
    }
    let out = os2trace(dir.path(), &["--version"]);
    assert_eq!(code(&out), 0);
    assert!(text(&out.stdout).starts_with("os2trace "));
    let out = os2trace(dir.path(), &["trcust", "--version"]);
    assert_eq!(code(&out), 0);
    // did you mean
    let out = os2trace(dir.path(), &["trcsut"]);
    assert_eq!(code(&out), 2);
    assert!(text(&out.stderr).contains("trcust"), "{out:?}");
    // usage errors are 2 everywhere
    for args in [
        &["run", "--tracebuf", "0", "X.EXE"][..],
        &["run", "--tracebuf", "-1", "X.EXE"],
        &["demo", "extra"],
        &["tdf", "verify", "A"],
        &["tracefmt", "S", "/Q"],
        &[],
    ] {
        assert_eq!(code(&os2trace(dir.path(), args)), 2, "{args:?}");
    }
    // The README's explanations are in the per-command help.
    let out = os2trace(dir.path(), &["run", "--help"]);
    let help = text(&out.stdout);
    assert!(
        help.contains("everything after it go to the program"),
        "{help}"
    );
    assert!(help.contains("minors 1,2-10"), "{help}");
}

fn tsf_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    stdout(&os2trace(dir.path(), &["testprogs", "build", "."]));
    dir
}

#[test]
fn a_slash_path_is_an_output_not_a_switch() {
    let dir = tsf_dir();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("x.TDF");
    let out = os2trace(
        dir.path(),
        &[
            "trcust",
            "HELLO16.TSF",
            target.to_str().unwrap(),
            "/M=HELLO16.MAP",
        ],
    );
    assert_eq!(code(&out), 0, "{out:?}");
    assert!(target.is_file(), "{}", text(&out.stdout));
    // After `--`, a switch spelling is a file name.
    let out = os2trace(
        dir.path(),
        &["trcust", "HELLO16.TSF", "/M=HELLO16.MAP", "--", "/W1"],
    );
    assert!(!text(&out.stdout).contains("invalid parameter"), "{out:?}");
    // dtrace buildtdf and tdf verify, run from elsewhere on /paths.
    let rpn = dir.path().join("HELLO16.RPN");
    let built = elsewhere.path().join("y.TDF");
    let out = os2trace(
        elsewhere.path(),
        &[
            "dtrace",
            "buildtdf",
            rpn.to_str().unwrap(),
            built.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&out), 0, "{out:?}");
    assert!(built.is_file(), "{out:?}");
    let exe = dir.path().join("HELLO16.EXE");
    let map = format!("/M={}", dir.path().join("HELLO16.MAP").display());
    for tdf in [&target, &built] {
        let out = os2trace(
            elsewhere.path(),
            &[
                "tdf",
                "verify",
                tdf.to_str().unwrap(),
                exe.to_str().unwrap(),
                &map,
            ],
        );
        assert_eq!(code(&out), 0, "{}: {out:?}", tdf.display());
    }
}

#[test]
fn no_command_writes_over_its_own_input() {
    let dir = tsf_dir();
    let map = std::fs::read(dir.path().join("HELLO16.MAP")).unwrap();
    let out = os2trace(
        dir.path(),
        &[
            "trcust",
            "HELLO16.TSF",
            "--output",
            "HELLO16.MAP",
            "/M=HELLO16.MAP",
        ],
    );
    assert_eq!(code(&out), 2, "{out:?}");
    assert!(
        text(&out.stderr).contains("refusing to write over it"),
        "{out:?}"
    );
    assert_eq!(std::fs::read(dir.path().join("HELLO16.MAP")).unwrap(), map);
    let rpn = std::fs::read(dir.path().join("HELLO16.RPN")).unwrap();
    let out = os2trace(
        dir.path(),
        &["rpn", "asm", "HELLO16.RPN", "-o", "HELLO16.RPN"],
    );
    assert_eq!(code(&out), 2, "{out:?}");
    let out = os2trace(
        dir.path(),
        &["dtrace", "buildtdf", "HELLO16.RPN", "HELLO16.RPN"],
    );
    assert_eq!(code(&out), 2, "{out:?}");
    assert_eq!(std::fs::read(dir.path().join("HELLO16.RPN")).unwrap(), rpn);
    // DTRACE's assumed .RPN extension.
    let out = os2trace(dir.path(), &["dtrace", "buildtdf", "HELLO16"]);
    assert_eq!(code(&out), 0, "{out:?}");
    assert!(dir.path().join("HELLO16.TDF").is_file());
}

#[test]
fn trcust_strict_fails_on_errors_and_warnings() {
    let dir = tsf_dir();
    let out = os2trace(
        dir.path(),
        &["trcust", "HELLO16.TSF", "/M=HELLO16.MAP", "/BOGUS"],
    );
    assert_eq!(code(&out), 0, "IBM's exit code after an ERROR: {out:?}");
    assert!(text(&out.stdout).contains("invalid parameter: '/BOGUS', ignored"));
    let out = os2trace(
        dir.path(),
        &[
            "trcust",
            "HELLO16.TSF",
            "/M=HELLO16.MAP",
            "/BOGUS",
            "--strict",
        ],
    );
    assert_eq!(code(&out), 1, "{out:?}");
    let out = os2trace(
        dir.path(),
        &["trcust", "HELLO16.TSF", "/M=HELLO16.MAP", "--strict"],
    );
    assert_eq!(code(&out), 0, "{out:?}");
}

#[test]
fn completions_and_man_pages() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let out = os2trace(dir.path(), &["completions", shell]);
        assert_eq!(code(&out), 0);
        assert!(text(&out.stdout).contains("trcust"), "{shell}");
    }
    let out = os2trace(dir.path(), &["manpages", "man"]);
    assert_eq!(code(&out), 0, "{out:?}");
    let page = std::fs::read_to_string(dir.path().join("man/os2trace-run.1")).unwrap();
    assert!(page.contains(".TH"), "{page}");
    assert!(dir.path().join("man/os2trace-tdf-verify.1").is_file());
}

#[test]
fn non_utf8_trace_program_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("L1.RPN"), b"; ok\n; caf\xE9 latin-1\n").unwrap();
    let out = os2trace(dir.path(), &["rpn", "verify", "L1.RPN"]);
    assert_eq!(code(&out), 1, "{out:?}");
    assert!(
        text(&out.stderr).contains("L1.RPN:2:6: not UTF-8"),
        "{out:?}"
    );
}

#[test]
fn rpn_run_vars_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("V.RPN"),
        "minor=1\n  Push EAX\n  Log DN,1\n",
    )
    .unwrap();
    let out = os2trace(dir.path(), &["rpn", "run", "V.RPN", "--vars", "400000000"]);
    assert_eq!(code(&out), 2, "{out:?}");
    assert!(text(&out.stderr).contains("65535"), "{out:?}");
}

#[test]
fn a_missing_input_fails_with_one_line_that_says_each_cause_once() {
    let dir = tsf_dir();
    stdout(&os2trace(
        dir.path(),
        &["trcust", "TPDLL16.TSF", "/M=TPDLL16.MAP"],
    ));
    for args in [
        &["tracefmt", "NOSUCH.SAV"][..],
        &["exehdr", "NOSUCH.EXE"],
        &["rpn", "verify", "NOSUCH.RPN"],
        &["rpn", "asm", "NOSUCH.RPN"],
        &["dtrace", "buildtdf", "NOSUCH"],
        &["tdf", "show", "NOSUCH.TDF"],
        &["tdf", "verify", "TPDLL16.TDF", "NOSUCH.DLL"],
        &["run", "--root", "NODIR", "X.EXE"],
        &["run", "--root", ".", "NOSUCH.EXE"],
        &["run", "--root", ".", "--apply", "NOSUCH", "DLLCAL16.EXE"],
        &[
            "run",
            "--root",
            ".",
            "--trace",
            "TPDLL16",
            "--save",
            "NODIR/S.SAV",
            "DLLCAL16.EXE",
        ],
    ] {
        let out = os2trace(dir.path(), args);
        let err = text(&out.stderr);
        assert_eq!(code(&out), 1, "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("os2trace "), "{args:?}: {err}");
        // No part of the chain is said twice ("X: X", "cannot read A:
        // cannot read A: ...").
        let parts: Vec<&str> = err.trim_end().split(": ").collect();
        for (i, p) in parts.iter().enumerate() {
            assert!(!parts[i + 1..].contains(p), "{args:?}: {err}");
        }
        assert!(!err.contains(".tmp"), "{args:?}: {err}");
    }
}
