//! `os2trace run [--root DIR] [--env K=V ...] [--api-log] [--max-insns N]
//! PROGRAM [ARGS...]`: run an OS/2 program in the emulated machine.
//!
//! Options come first; everything after PROGRAM goes to the program. DIR
//! is drive C: and the current directory (default: PROGRAM's host
//! directory when PROGRAM is a host file, else `.`). The exit code is the
//! program's; a run that ends any other way (an unimplemented API, a
//! fault, the instruction limit) prints why on stderr and exits 1.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use kernel_sim::{Outcome, Process, ProcessConfig};

use crate::tracing::{TraceOptions, Tracer};

const USAGE: &str = "usage: os2trace run [--root DIR] [--env K=V ...] [--api-log] [--max-insns N] PROGRAM [ARGS...]";

/// Parsed command line.
struct Options {
    root: Option<PathBuf>,
    env: Vec<(String, String)>,
    api_log: bool,
    max_insns: Option<u64>,
    trace: TraceOptions,
    program: String,
    args: Vec<String>,
}

fn parse(args: &[String]) -> anyhow::Result<Options> {
    let mut o = Options {
        root: None,
        env: Vec::new(),
        api_log: false,
        max_insns: None,
        trace: TraceOptions::default(),
        program: String::new(),
        args: Vec::new(),
    };
    let mut i = 0;
    while i < args.len() {
        let used = o.trace.take(args, i)?;
        if used > 0 {
            i += used;
            continue;
        }
        let a = &args[i];
        let mut value = || -> anyhow::Result<String> {
            i += 1;
            args.get(i)
                .cloned()
                .with_context(|| format!("{a} needs a value"))
        };
        match a.as_str() {
            "--root" => o.root = Some(PathBuf::from(value()?)),
            "--env" => {
                let kv = value()?;
                let Some((k, v)) = kv.split_once('=') else {
                    bail!("--env wants K=V, got {kv:?}");
                };
                o.env.push((k.to_string(), v.to_string()));
            }
            "--api-log" => o.api_log = true,
            "--max-insns" => {
                o.max_insns = Some(value()?.parse().context("--max-insns wants a number")?)
            }
            s if s.starts_with("--") => bail!("unknown option {s}"),
            _ => {
                o.program = a.clone();
                o.args = args[i + 1..].to_vec();
                return Ok(o);
            }
        }
        i += 1;
    }
    bail!("no PROGRAM given")
}

/// Entry point.
pub fn run(args: &[String]) -> anyhow::Result<i32> {
    if args.iter().any(|a| a == "--help" || a == "-h")
        && args.first().is_some_and(|a| a.starts_with('-'))
    {
        println!("{USAGE}\n{}", crate::tracing::USAGE);
        return Ok(0);
    }
    let o = match parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("os2trace run: {e}\n{USAGE}\n{}", crate::tracing::USAGE);
            return Ok(2);
        }
    };
    let (root, program) = match o.root {
        Some(r) => (r, o.program.clone()),
        None => {
            let host = Path::new(&o.program);
            match (host.is_file(), host.parent(), host.file_name()) {
                (true, Some(dir), Some(name)) => {
                    let dir = if dir.as_os_str().is_empty() {
                        Path::new(".")
                    } else {
                        dir
                    };
                    (dir.to_path_buf(), name.to_string_lossy().into_owned())
                }
                _ => (PathBuf::from("."), o.program.clone()),
            }
        }
    };
    let mut cfg = ProcessConfig::new(&root, program);
    cfg.args = o.args;
    for (k, v) in &o.env {
        cfg.set_env(k, v);
    }
    cfg.api_log = o.api_log;
    cfg.max_instructions = o.max_insns;
    let mut p = Process::new(cfg).with_context(|| format!("loading {}", o.program))?;
    if o.api_log {
        p.set_api_log_sink(Box::new(|e| eprintln!("api: {e}")));
    }
    let outcome = if o.trace.active() {
        let mut tracer = Tracer::attach(&o.trace, &mut p, &root)?;
        let outcome = p.run_with_hook(Some(&mut tracer));
        tracer.finish(&o.trace, &p)?;
        outcome
    } else {
        p.run()
    };
    if o.api_log {
        eprintln!(
            "run: {} instructions, {} cycles, {} ms of emulated time",
            p.instructions(),
            p.machine().cycles(),
            p.now_millis()
        );
    }
    match outcome {
        Outcome::Exited(code) => Ok(code as i32),
        other => {
            eprintln!("os2trace run: {other}");
            Ok(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_come_first_and_the_rest_goes_to_the_program() {
        let o = parse(&args(&[
            "--root",
            "/r",
            "--env",
            "A=1",
            "--api-log",
            "--max-insns",
            "99",
            "P.EXE",
            "--root",
            "x",
        ]))
        .unwrap();
        assert_eq!(o.root, Some(PathBuf::from("/r")));
        assert_eq!(o.env, vec![("A".to_string(), "1".to_string())]);
        assert!(o.api_log);
        assert_eq!(o.max_insns, Some(99));
        assert_eq!(o.program, "P.EXE");
        assert_eq!(o.args, args(&["--root", "x"]));
    }

    #[test]
    fn bad_usage_is_an_error() {
        assert!(parse(&args(&[])).is_err());
        assert!(parse(&args(&["--env", "NOEQUALS", "P.EXE"])).is_err());
        assert!(parse(&args(&["--max-insns", "many", "P.EXE"])).is_err());
        assert!(parse(&args(&["--bogus", "P.EXE"])).is_err());
        assert!(parse(&args(&["--root"])).is_err());
    }

    #[test]
    fn runs_a_sample_and_passes_its_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let sample = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/samples/ne/test-asm16.exe"
        );
        std::fs::copy(sample, dir.path().join("TEST.EXE")).unwrap();
        let root = dir.path().to_string_lossy().into_owned();
        assert_eq!(run(&args(&["--root", &root, "TEST.EXE"])).unwrap(), 0);
        assert!(run(&args(&["--root", &root, "MISSING.EXE"])).is_err());
        assert_eq!(
            run(&args(&["--max-insns", "0", "--root", &root, "TEST.EXE"])).unwrap(),
            1
        );
    }
}
