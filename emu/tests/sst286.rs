//! SingleStepTests 80286 real-mode conformance: every test must pass on the
//! defined flags (revoked hashes skipped). Runs when the captures exist.

#[path = "support/sst.rs"]
mod sst;

use std::io::Write as _;
use std::path::Path;

#[test]
fn sst286_all_pass() {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/conformance/sst286"
    ));
    if !dir.join("trim100").is_dir() {
        // Past the harness's capture, so `cargo test` shows it.
        let _ = writeln!(
            std::io::stderr(),
            "sst286 captures not found at {}; skipped",
            dir.display()
        );
        return;
    }
    let mut failures = Vec::new();
    let t = sst::run_dir(dir, None, &mut |l| failures.push(l)).expect("runner");
    assert!(t.passed > 30_000, "only {} tests ran", t.passed);
    assert!(
        failures.is_empty(),
        "{} passed, {} failed; first failures:\n{}",
        t.passed,
        t.failed,
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
