//! Running the `os2trace` binary from integration tests.

use std::path::Path;
use std::process::{Command, Output};

/// Runs `os2trace ARGS` in `dir`.
pub fn os2trace(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_os2trace"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("runs")
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
#[allow(dead_code)] // not every test file limits memory
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
