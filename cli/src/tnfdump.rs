//! `os2trace tnfdump [-r] [-x] FILE...`: Solaris tnfdump(1) over TNF trace
//! files (os2trace prex's, or any file in the format, either byte order).
//! The default output is the probe lines and the time-sorted event table;
//! `-r` dumps every record raw; `-x` prints unsigned values in hex. The
//! formats are the `tnf` crate's ([`tnf::dump`]).

use std::io::Write;

use anyhow::{Context, Result};

/// `tnfdump`'s arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Raw dump: every record with its offset, tags, slots and references.
    #[arg(short = 'r')]
    raw: bool,
    /// Print unsigned values in hex.
    #[arg(short = 'x')]
    hex: bool,
    /// TNF files.
    #[arg(value_name = "FILE", required = true)]
    files: Vec<String>,
}

/// Entry point of `os2trace tnfdump`.
pub fn run(o: Args) -> Result<i32> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for path in &o.files {
        let bytes = std::fs::read(path).with_context(|| format!("cannot read {path}"))?;
        let file = tnf::TnfFile::parse(&bytes).with_context(|| path.clone())?;
        let text = if o.raw {
            tnf::dump::raw(&file, o.hex)
        } else {
            tnf::dump::cooked(&file, o.hex)
        };
        out.write_all(text.with_context(|| path.clone())?.as_bytes())?;
    }
    Ok(0)
}
