//! The `os2trace` binary: argument parsing and printing only.
//!
//! Each subcommand lives in its own module with one entry point,
//! `run(args: &[String]) -> anyhow::Result<i32>`, which receives the
//! arguments after the subcommand name and returns the process exit code.
//! Subcommands parse their own arguments because the OS/2 tools they mirror
//! use option spellings (`/M=`, `/W2`, `/T=DIR`) that do not fit one parser.
//! Exit codes: 0 success, 1 the work failed (message on stderr), 2 bad usage.

use std::process::ExitCode;

mod demo;
mod dtrace;
mod exehdr;
mod rpn;
mod runcmd;
mod sigpipe;
mod tdfcmd;
mod testprogs;
mod tracefmt;
mod tracing;
mod trapred;
mod trcust;
mod util;

type Subcommand = fn(&[String]) -> anyhow::Result<i32>;

/// The subcommand table: name, one-line summary, entry point.
const SUBCOMMANDS: &[(&str, &str, Subcommand)] = &[
    (
        "demo",
        "the main job: trace the sample programs and print the trace",
        demo::run,
    ),
    (
        "exehdr",
        "dump an LX or NE module (--json for JSON)",
        exehdr::run,
    ),
    ("rpn", "trace programs: asm, disasm, verify, run", rpn::run),
    (
        "run",
        "run an OS/2 program in the emulated machine",
        runcmd::run,
    ),
    (
        "tracefmt",
        "print a saved system trace buffer, formatted with TFF files",
        tracefmt::run,
    ),
    (
        "trapred",
        "TRAPRED: select and show the records of a CPTRAP file",
        trapred::run,
    ),
    (
        "trcust",
        "TRCUST: compile a TSF to TDF/TFF/TMI, or combine TFFs",
        trcust::run,
    ),
    (
        "dtrace",
        "DTRACE BUILDTDF: a trace program file to a TDF",
        dtrace::run,
    ),
    (
        "tdf",
        "show a TDF/TFF/TMI, or verify a TDF against its module",
        tdfcmd::run,
    ),
    (
        "testprogs",
        "write the sample NE/LX modules with MAP, TSF and RPN files",
        testprogs::run,
    ),
];

fn usage() -> String {
    let mut text = String::from("usage: os2trace <command> [args...]\n\ncommands:\n");
    for (name, summary, _) in SUBCOMMANDS {
        text.push_str(&format!("  {name:<10} {summary}\n"));
    }
    text
}

fn main() -> ExitCode {
    sigpipe::restore_default();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = args.first() else {
        eprint!("{}", usage());
        return ExitCode::from(2);
    };
    if command == "--help" || command == "-h" || command == "help" {
        print!("{}", usage());
        return ExitCode::SUCCESS;
    }
    let Some((_, _, entry)) = SUBCOMMANDS.iter().find(|(name, _, _)| name == command) else {
        eprintln!("os2trace: unknown command '{command}'");
        eprint!("{}", usage());
        return ExitCode::from(2);
    };
    match entry(&args[1..]) {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(err) => {
            eprintln!("os2trace {command}: {err:#}");
            ExitCode::from(1)
        }
    }
}
