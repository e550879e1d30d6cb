//! `os2trace testprogs build DIR` and `os2trace testprogs list`: the sample
//! OS/2 programs and DLLs of the `testprogs` crate, with their MAP files,
//! TSFs and trace program files.
//!
//! `build DIR` creates DIR when needed and writes `NAME.EXE`/`NAME.DLL`,
//! `NAME.MAP`, `NAME.TSF` and `NAME.RPN` for every program, printing each
//! path written. `list` prints one line per program: file name, format,
//! module type, size in bytes, imported modules.

use std::path::Path;

use anyhow::{Context, Result};

/// `testprogs`'s arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Testprogs,
}

#[derive(clap::Subcommand, Debug)]
enum Testprogs {
    /// Write every sample module with its .MAP, .TSF and .RPN into DIR.
    Build {
        /// The directory (created when needed).
        dir: std::path::PathBuf,
    },
    /// List the sample modules.
    List,
}

/// Entry point of the subcommand.
pub fn run(args: Args) -> Result<i32> {
    match args.command {
        Testprogs::Build { dir } => build(&dir),
        Testprogs::List => list(),
    }
}

fn build(dir: &Path) -> Result<i32> {
    let paths = ::testprogs::build_all(dir)
        .with_context(|| format!("cannot build the sample modules into {}", dir.display()))?;
    for p in paths {
        println!("{}", p.display());
    }
    Ok(0)
}

fn list() -> Result<i32> {
    for p in ::testprogs::all().context("cannot build the sample modules")? {
        println!(
            "{:<13} {} {:<8} {:>5} bytes  imports {}",
            p.file_name,
            p.module.format.name(),
            p.module.module_type().name(),
            p.bytes.len(),
            p.module.imports.join(", ")
        );
    }
    Ok(0)
}
