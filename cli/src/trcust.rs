//! `os2trace trcust ...`: IBM's Trace Customizer with its own command line,
//! run in the current directory as TRCUST is:
//!
//! ```text
//! os2trace trcust TSF [TDF] [/M=map] [/W0-2] [/D] [/L=module] [/P] [/I]
//!                 [/RM0-7] [/RSnnn] [/RP] [/NODE] [/NOLN] [/RAS]
//! os2trace trcust TCF /C=dest.tff [/W0-2]
//! ```
//!
//! Everything TRCUST prints goes to stdout, as TRCUST wrote it to the
//! console; the exit code is TRCUST's (1 after a FATAL or SEVERE message).

use anyhow::{Context, Result};
use tdf::trcust::{PathStyle, run as trcust};

/// Entry point of the subcommand.
pub fn run(args: &[String]) -> Result<i32> {
    let dir = std::env::current_dir().context("cannot read the current directory")?;
    let outcome = trcust(args, &dir, PathStyle::Host);
    print!("{}", outcome.text());
    Ok(outcome.exit_code)
}
