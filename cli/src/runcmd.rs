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

const USAGE: &str = "usage: os2trace run [--root DIR] [--env K=V ...] [--api-log] [--max-insns N] PROGRAM [ARGS...]";

/// Parsed command line.
struct Options {
    root: Option<PathBuf>,
    env: Vec<(String, String)>,
    api_log: bool,
    max_insns: Option<u64>,
    program: String,
    args: Vec<String>,
}

fn parse(args: &[String]) -> anyhow::Result<Options> {
    let mut o = Options {
        root: None,
        env: Vec::new(),
        api_log: false,
        max_insns: None,
        program: String::new(),
        args: Vec::new(),
    };
    let mut i = 0;
    while i < args.len() {
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
        println!("{USAGE}");
        return Ok(0);
    }
    let o = match parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("os2trace run: {e}\n{USAGE}");
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
    let outcome = p.run();
    if o.api_log {
        for e in p.api_log() {
            eprintln!("api: {e}");
        }
    }
    match outcome {
        Outcome::Exited(code) => Ok(code as i32),
        other => {
            eprintln!("os2trace run: {other}");
            Ok(1)
        }
    }
}
