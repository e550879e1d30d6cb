//! The `os2trace` binary: argument parsing and printing only.
//!
//! One argument layer for every subcommand: clap (derive). Each subcommand
//! module has an `Args` struct and `run(Args) -> anyhow::Result<i32>`,
//! which returns the process exit code. The OS/2 spellings (`/M=`, `/W2`,
//! `/T=DIR`, `/C=`) are translated to long options before clap parses
//! (`args.rs`).
//!
//! Exit codes: 0 success, 1 the work failed (message on stderr), 2 bad
//! usage (clap's errors and [`util::UsageError`]), 130 interrupted
//! (SIGINT); `run` passes on the program's exit code and `trcust`
//! TRCUST's. A panic is 101.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

mod apis;
mod apitally;
mod args;
mod cptrapopts;
mod demo;
mod dtrace;
mod exehdr;
mod prex;
mod rpn;
mod runcmd;
mod runviews;
mod sigpipe;
mod status;
mod tdfcmd;
mod testcmd;
mod testprogs;
mod tnfdump;
mod tracefmt;
mod tracing;
mod trapred;
mod trcust;
mod util;
mod views;

/// os2trace: the OS/2 dynamic trace facility in an emulated x86 machine.
#[derive(Parser, Debug)]
#[command(
    name = "os2trace",
    version,
    propagate_version = true,
    arg_required_else_help = true,
    after_help = "Exit codes: 0 success, 1 the work failed (message on stderr), 2 bad usage, \
130 interrupted; `run` passes on the program's exit code (see --exit-code-file) and \
`trcust` TRCUST's.\nOS/2 switches (/M=, /W2, /T=, /C=) are accepted where the OS/2 tool took \
them; an argument after `--`, or a /path that exists, is always a path."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The main job: trace the sample programs and print the trace.
    Demo(demo::Args),
    /// Implemented OS/2 APIs: list, --missing MODULE, --check OS2TK_DIR.
    Apis(apis::Args),
    /// Dump an LX or NE module (--json for JSON).
    Exehdr(exehdr::Args),
    /// Trace programs: asm, disasm, verify, run.
    Rpn(rpn::Args),
    /// Run an OS/2 program in the emulated machine, optionally traced.
    #[command(long_about = runcmd::LONG_ABOUT, after_help = runcmd::AFTER_HELP)]
    Run(runcmd::Args),
    /// Print saved trace buffers (several files, TRSPOOL series, --follow), filtered, as text or JSON.
    Tracefmt(tracefmt::Args),
    /// prex: control the TNF probes of a program, then run it.
    Prex(prex::Args),
    /// tnfdump: print TNF trace files.
    Tnfdump(tnfdump::Args),
    /// TRAPRED: select and show the records of a CPTRAP file.
    Trapred(trapred::Args),
    /// TRCUST: compile a TSF to TDF/TFF/TMI, or combine TFFs.
    #[command(long_about = trcust::LONG_ABOUT, after_help = trcust::AFTER_HELP)]
    Trcust(trcust::Args),
    /// DTRACE BUILDTDF: a trace program file to a TDF.
    Dtrace(dtrace::Args),
    /// Show a TDF/TFF/TMI, verify a TDF against its module, or list its tracepoints.
    Tdf(tdfcmd::Args),
    /// Run regression suites of traced programs against golden files.
    #[command(after_help = testcmd::AFTER_HELP)]
    Test(testcmd::Args),
    /// Export traces for Perfetto (--perfetto), Chrome (--chrome) or as SVG (--svg).
    Export(views::ExportArgs),
    /// Browse trace files in the terminal (? shows the keys).
    Browse(views::BrowseArgs),
    /// Write the sample NE/LX modules with MAP, TSF and RPN files.
    Testprogs(testprogs::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Write the man pages (os2trace.1, os2trace-run.1, ...) into DIR.
    Manpages {
        /// The directory (created when needed).
        dir: PathBuf,
    },
}

impl Command {
    fn name(&self) -> &'static str {
        match self {
            Command::Demo(_) => "demo",
            Command::Apis(_) => "apis",
            Command::Exehdr(_) => "exehdr",
            Command::Rpn(_) => "rpn",
            Command::Run(_) => "run",
            Command::Tracefmt(_) => "tracefmt",
            Command::Prex(_) => "prex",
            Command::Tnfdump(_) => "tnfdump",
            Command::Trapred(_) => "trapred",
            Command::Trcust(_) => "trcust",
            Command::Dtrace(_) => "dtrace",
            Command::Tdf(_) => "tdf",
            Command::Test(_) => "test",
            Command::Export(_) => "export",
            Command::Browse(_) => "browse",
            Command::Testprogs(_) => "testprogs",
            Command::Completions { .. } => "completions",
            Command::Manpages { .. } => "manpages",
        }
    }
}

fn dispatch(command: Command) -> anyhow::Result<i32> {
    match command {
        Command::Demo(a) => demo::run(a),
        Command::Apis(a) => apis::run(a),
        Command::Exehdr(a) => exehdr::run(a),
        Command::Rpn(a) => rpn::run(a),
        Command::Run(a) => runcmd::run(a),
        Command::Tracefmt(a) => tracefmt::run(a),
        Command::Prex(a) => prex::run(a),
        Command::Tnfdump(a) => tnfdump::run(a),
        Command::Trapred(a) => trapred::run(a),
        Command::Trcust(a) => trcust::run(a),
        Command::Dtrace(a) => dtrace::run(a),
        Command::Tdf(a) => tdfcmd::run(a),
        Command::Test(a) => testcmd::run(a),
        Command::Export(a) => views::export(a),
        Command::Browse(a) => views::browse(a),
        Command::Testprogs(a) => testprogs::run(a),
        Command::Completions { shell } => {
            let mut cmd = Cli::command();
            clap_complete::generate(shell, &mut cmd, "os2trace", &mut std::io::stdout());
            Ok(0)
        }
        Command::Manpages { dir } => util::manpages(&Cli::command(), &dir),
    }
}

/// Parses the command line (OS/2 spellings translated first).
fn parse(args: Vec<OsString>) -> Result<Cli, clap::Error> {
    let cmd = Cli::command();
    let args = args::translate(&cmd, args).map_err(|e| e.with_cmd(&cmd))?;
    Cli::try_parse_from(args)
}

fn main() -> ExitCode {
    sigpipe::restore_default();
    let cli = match parse(std::env::args_os().collect()) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let name = cli.command.name();
    match dispatch(cli.command) {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(err) => {
            eprintln!("os2trace {name}: {}", util::chain(&err));
            let code = if err.is::<util::UsageError>() { 2 } else { 1 };
            ExitCode::from(code)
        }
    }
}

/// Parses `os2trace ARGS` as main does (for the subcommands' unit tests).
#[cfg(test)]
fn parse_for_test(args: &[&str]) -> Result<Command, clap::Error> {
    let v = std::iter::once("os2trace")
        .chain(args.iter().copied())
        .map(OsString::from);
    parse(v.collect()).map(|cli| cli.command)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }
}
