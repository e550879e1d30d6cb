//! Run the SingleStepTests 80286 real-mode captures:
//! `cargo run -p emu --release --example sst286 -- DIR [PREFIX]`
//! prints each failure and ends with `N passed, M failed`.

#[path = "../tests/support/sst.rs"]
mod sst;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: sst286 DIR [FILE-PREFIX]");
        return ExitCode::from(2);
    };
    let filter = args.next();
    let mut failures = 0usize;
    let r = sst::run_dir(&PathBuf::from(dir), filter.as_deref(), &mut |line| {
        failures += 1;
        if failures <= 2000 {
            println!("{line}");
        }
    });
    match r {
        Ok(t) => {
            if t.skipped > 0 {
                println!("{} revoked tests skipped", t.skipped);
            }
            println!("{} passed, {} failed", t.passed, t.failed);
            if t.failed == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("sst286: {e}");
            ExitCode::from(2)
        }
    }
}
