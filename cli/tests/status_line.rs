//! `run`'s live status line: shown on a terminal once a run lasts over a
//! second (here under a pseudo-terminal made by `script`), never when
//! stderr is a pipe.

use std::io::Write as _;
use std::path::Path;
use std::process::Command;

/// LOOP32 with its count raised so far that the run lasts seconds even
/// in the native tier; the runs below end it with `--timeout`.
fn long_loop(dir: &Path) {
    let p = testprogs::loop32().unwrap();
    p.write_to(dir).unwrap();
    let exe = dir.join("LOOP32.EXE");
    let mut bytes = std::fs::read(&exe).unwrap();
    let old = testprogs::loops::LOOP32_COUNT.to_le_bytes();
    let at = bytes.windows(4).position(|w| w == old).unwrap();
    bytes[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&exe, bytes).unwrap();
}

#[test]
fn the_status_line_is_shown_on_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    long_loop(dir.path());
    let bin = env!("CARGO_BIN_EXE_os2trace");
    let piped = Command::new(bin)
        .current_dir(dir.path())
        .args(["run", "--root", ".", "--max-insns", "0", "--timeout", "2"])
        .arg("LOOP32.EXE")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&piped.stderr);
    assert!(
        !err.contains("instructions"),
        "no status line on a pipe: {err}"
    );

    if Command::new("script").arg("--version").output().is_err() {
        let _ = writeln!(
            std::io::stderr(),
            "skipped the terminal half: `script` (util-linux) is not installed"
        );
        return;
    }
    let line = format!("exec {bin} run --root . --max-insns 0 --timeout 2 LOOP32.EXE");
    let tty = Command::new("script")
        .current_dir(dir.path())
        .env("SHELL", "/bin/sh")
        // A terminal that can redraw a line: with TERM unset or `dumb`
        // (as under a bare CI environment) indicatif draws nothing.
        .env("TERM", "xterm")
        .args(["-qec", &line, "/dev/null"])
        .output()
        .unwrap();
    let seen = String::from_utf8_lossy(&tty.stdout);
    assert!(
        seen.contains("instructions")
            && seen.contains("emulated")
            && seen.contains("lost to wraps"),
        "a status line on the terminal: {seen:?}"
    );
}
