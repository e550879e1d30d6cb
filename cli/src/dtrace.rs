//! `os2trace dtrace buildtdf FILE.rpn [TDF] [/m=major] [/n=name] [/i=id] [/q]`:
//! DTRACE's BUILDTDF, a trace program file to a TDF (the other DTRACE
//! functions act on a running system: see `os2trace run`).

use std::path::Path;

use anyhow::{Context, Result};
use tdf::buildtdf::{Overrides, build};

use crate::util::{parse_u32, write_atomically};

const USAGE: &str =
    "usage: os2trace dtrace buildtdf FILE.rpn [TDF] [/m=major] [/n=name] [/i=id] [/q]
  FILE.rpn  a DTRACE trace program file
  TDF       output name (default: FILE with .TDF)
  /m= /n= /i=  default major code, module name, id (override the file header)
  /q        quiet
";

/// Entry point of the subcommand.
pub fn run(args: &[String]) -> Result<i32> {
    match args.first().map(|s| s.to_ascii_lowercase()) {
        Some(s) if s == "buildtdf" => buildtdf(&args[1..]),
        Some(s) if s == "-h" || s == "--help" => {
            print!("{USAGE}");
            Ok(0)
        }
        _ => {
            eprint!("{USAGE}");
            Ok(2)
        }
    }
}

fn small(v: &str, what: &str) -> Result<u16, String> {
    let n = parse_u32(v)?;
    u16::try_from(n).map_err(|_| format!("{what} {v} does not fit 16 bits"))
}

fn buildtdf(args: &[String]) -> Result<i32> {
    let mut files = Vec::new();
    let mut ov = Overrides::default();
    let mut quiet = false;
    for a in args {
        let lower = a.to_ascii_lowercase();
        let value = || {
            a.split_once('=')
                .map(|(_, v)| v.to_string())
                .unwrap_or_default()
        };
        let r = if lower.starts_with("/m=") || lower.starts_with("-m=") {
            small(&value(), "major").map(|m| ov.major = Some(m))
        } else if lower.starts_with("/i=") || lower.starts_with("-i=") {
            small(&value(), "id").map(|i| ov.id = Some(i))
        } else if lower.starts_with("/n=") || lower.starts_with("-n=") {
            ov.name = Some(value());
            Ok(())
        } else if lower == "/q" || lower == "-q" {
            quiet = true;
            Ok(())
        } else if lower.starts_with('/') || lower.starts_with('-') {
            Err(format!("unknown option '{a}'"))
        } else {
            files.push(a.clone());
            Ok(())
        };
        if let Err(e) = r {
            eprint!("os2trace dtrace buildtdf: {e}\n{USAGE}");
            return Ok(2);
        }
    }
    let (src, out) = match files.as_slice() {
        [src] => (src.clone(), tdf::trcust::replace_ext(src, "TDF")),
        [src, out] => (src.clone(), tdf::trcust::with_default_ext(out, "TDF")),
        _ => {
            eprint!("{USAGE}");
            return Ok(2);
        }
    };
    let text = std::fs::read_to_string(&src).with_context(|| format!("cannot read {src}"))?;
    let tdf = match build(&src, &text, &ov) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            return Ok(1);
        }
    };
    write_atomically(Path::new(&out), &tdf.to_bytes())?;
    if !quiet {
        println!(
            "Created TDF file: {out}\t # records = {}",
            tdf.records.len()
        );
    }
    Ok(0)
}
