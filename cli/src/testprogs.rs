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

const USAGE: &str = "usage: os2trace testprogs build DIR | list
  build DIR   write every sample module with its .MAP, .TSF and .RPN into DIR
  list        list the sample modules
";

/// Entry point of the subcommand.
pub fn run(args: &[String]) -> Result<i32> {
    match args {
        [cmd, dir] if cmd.eq_ignore_ascii_case("build") => build(Path::new(dir)),
        [cmd] if cmd.eq_ignore_ascii_case("list") => list(),
        [h] if h == "-h" || h == "--help" => {
            print!("{USAGE}");
            Ok(0)
        }
        _ => {
            eprint!("{USAGE}");
            Ok(2)
        }
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

#[cfg(test)]
mod tests {
    use super::run;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn build_writes_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("progs");
        let code = run(&args(&["build", out.to_str().unwrap()])).unwrap();
        assert_eq!(code, 0);
        for name in ["HELLO16.EXE", "HELLO32.MAP", "TPDLL16.DLL", "FILEIO16.RPN"] {
            assert!(out.join(name).is_file(), "{name}");
        }
        let bytes = std::fs::read(out.join("DLLCAL32.EXE")).unwrap();
        assert_eq!(loader::parse(&bytes).unwrap().name, "DLLCAL32");
    }

    #[test]
    fn bad_usage_is_exit_2() {
        assert_eq!(run(&args(&[])).unwrap(), 2);
        assert_eq!(run(&args(&["build"])).unwrap(), 2);
        assert_eq!(run(&args(&["frob", "x"])).unwrap(), 2);
        assert_eq!(run(&args(&["list"])).unwrap(), 0);
    }

    #[test]
    fn an_unwritable_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        let err = run(&args(&["build", file.join("d").to_str().unwrap()])).unwrap_err();
        assert!(format!("{err:#}").contains("cannot build"));
    }
}
