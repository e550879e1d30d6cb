//! Running the `os2trace` binary from integration tests.

// Each test file uses some of these helpers, none uses all.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Runs `os2trace ARGS` in `dir`.
pub fn os2trace(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_os2trace"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("runs")
}

/// Runs `os2trace ARGS` in `dir` with `stdin` as its standard input and
/// `dir` as HOME, so no file of the user's (a `.prexrc`) takes part.
pub fn os2trace_with_input(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_os2trace"))
        .current_dir(dir)
        .env("HOME", dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let mut input = child.stdin.take().expect("piped");
    // A command that ends before reading all of its input is not an error
    // of the test's: the broken pipe is ignored, the exit status tells.
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    child.wait_with_output().expect("runs")
}

/// The standard output of a run that must have succeeded (else both
/// streams are shown).
pub fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `os2trace ARGS` in `dir` with its address space limited to
/// `limit_kb` KB (`ulimit -v`), so a test can show a command's memory
/// stays bounded: past the limit an allocation fails and the run aborts.
pub fn os2trace_limited(dir: &Path, args: &[&str], limit_kb: u64) -> Output {
    Command::new("sh")
        .current_dir(dir)
        .arg("-c")
        .arg(format!("ulimit -v {limit_kb} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_os2trace"))
        .args(args)
        .output()
        .expect("runs sh")
}

/// IBM's toolkit from OS2TK_DIR, when it has `bin/TOOL`; else `None`,
/// with a skip notice printed (whole, through the locked stderr).
pub fn toolkit_having(tool: &str) -> Option<PathBuf> {
    match std::env::var_os("OS2TK_DIR").map(PathBuf::from) {
        Some(d) if d.join("bin").join(tool).exists() => Some(d),
        _ => {
            let _ = writeln!(
                std::io::stderr().lock(),
                "OS2TK_DIR is not set (or has no bin/{tool}): skipped"
            );
            None
        }
    }
}
