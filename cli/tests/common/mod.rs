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
