//! `os2trace dtrace buildtdf FILE[.rpn] [TDF] [/m=major] [/n=name] [/i=id] [/q]`:
//! DTRACE's BUILDTDF, a trace program file to a TDF (the other DTRACE
//! functions act on a running system: see `os2trace run`).

use std::path::Path;

use anyhow::Result;
use tdf::buildtdf::{Overrides, build};

use crate::util::{parse_u32, refuse_overwrite};

/// DTRACE's functions that work on files.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Dtrace,
}

#[derive(clap::Subcommand, Debug)]
enum Dtrace {
    /// BUILDTDF: compile a trace program file to a TDF.
    #[command(after_help = "DTRACE's switches are accepted: /m=major /n=name /i=id /q.")]
    Buildtdf(BuildArgs),
}

#[derive(clap::Args, Debug)]
struct BuildArgs {
    /// The DTRACE trace program file (`.RPN` assumed when it has no extension).
    file: String,
    /// The TDF to write (default: FILE with `.TDF`).
    tdf: Option<String>,
    /// /m=: the default major code (overrides the file header).
    #[arg(long, value_parser = parse_u16)]
    major: Option<u16>,
    /// /n=: the module name (overrides the file header).
    #[arg(long)]
    name: Option<String>,
    /// /i=: the TDF id (overrides the file header).
    #[arg(long, value_parser = parse_u16)]
    id: Option<u16>,
    /// /q: print nothing on success.
    #[arg(short, long)]
    quiet: bool,
}

/// Entry point of the subcommand.
pub fn run(args: Args) -> Result<i32> {
    match args.command {
        Dtrace::Buildtdf(b) => buildtdf(b),
    }
}

fn parse_u16(v: &str) -> Result<u16, String> {
    let n = parse_u32(v)?;
    u16::try_from(n).map_err(|_| format!("{v} does not fit 16 bits"))
}

fn buildtdf(args: BuildArgs) -> Result<i32> {
    let ov = Overrides {
        major: args.major,
        name: args.name.clone(),
        id: args.id,
    };
    let src = tdf::trcust::with_default_ext(&args.file, "RPN");
    let out = match &args.tdf {
        None => tdf::trcust::replace_ext(&src, "TDF"),
        Some(out) => tdf::trcust::tdf_output_name(Path::new("."), out),
    };
    if !Path::new(&src).is_file() {
        // A missing input is work that failed (1), as in every command.
        anyhow::bail!("cannot read {src}: no such file");
    }
    refuse_overwrite(Path::new(&out), &[Path::new(&src)])?;
    let quiet = args.quiet;
    let text = crate::util::read_source(Path::new(&src))?;
    let tdf = match build(&src, &text, &ov) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            return Ok(1);
        }
    };
    outfile::write_atomic(Path::new(&out), &tdf.to_bytes())?;
    if !quiet {
        println!(
            "Created TDF file: {out}\t # records = {}",
            tdf.records.len()
        );
    }
    Ok(0)
}
