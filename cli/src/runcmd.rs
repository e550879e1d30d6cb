//! `os2trace run [--root DIR] [--env K=V ...] [--api-log] [--max-insns N]
//! PROGRAM [ARGS...]`: run an OS/2 program in the emulated machine.
//!
//! Options come first; everything after PROGRAM goes to the program (clap
//! parses; `args.rs` puts a `--` before PROGRAM). PROGRAM is a host file
//! (inside DIR or not) or an OS/2 path in DIR; DIR is drive C: and the
//! current directory, and without --root C: is a fresh scratch directory
//! (see [`LONG_ABOUT`]). The exit code is the program's; a run that ends
//! any other way (an unimplemented API, a fault, a limit) prints why on
//! stderr and exits 1; Ctrl-C exits 130.

use std::path::{Path, PathBuf};

use anyhow::Context;
use kernel_sim::{Outcome, Process, ProcessConfig};

use kernel_sim::trace::select::{split_apply_operand, split_operand};

use crate::tracing::TraceOptions;

/// `run --help`'s explanation.
pub const LONG_ABOUT: &str = "Run an OS/2 program (LX or NE) in the emulated machine, \
optionally traced.

Options come first; PROGRAM and everything after it go to the program (an argument after \
PROGRAM is never taken as an os2trace option).

PROGRAM is a host file, or an OS/2 path inside --root DIR. DIR is drive C: and the current \
directory. A program outside DIR is read from where it is and the guest sees it as C:\\NAME.EXE; \
its DLLs are searched beside it first, then along LIBPATH in DIR. Without --root, C: is a \
fresh, empty scratch directory removed after the run: the program gets no access to the host \
directory it is in (give --root DIR for files it should read or write).

Limits: --max-insns (default 10^10; API calls count 100 each) and --timeout (default 60 s); \
0 turns either off. Ctrl-C stops the program at the next instruction boundary, still writes \
--save, --tracefmt and --query for what was captured, and exits 130.";

/// `run --help`'s closing lines.
pub const AFTER_HELP: &str = "Exit code: the program's; 1 when the run \
ended another way (an unimplemented API, a fault, a limit), with the reason on stderr; 2 bad \
usage. --exit-code-file tells the program's exit code from os2trace's own failures.";

/// `run`'s command line.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The host directory that is drive C: and the current directory.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// An environment variable for the program (repeatable).
    #[arg(long, value_name = "K=V", value_parser = parse_env)]
    env: Vec<(String, String)>,
    /// Print every API call on stderr, and the run's totals.
    #[arg(long)]
    api_log: bool,
    /// Stop after N guest instructions (API calls count 100 each); 0 for
    /// no limit.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_INSNS)]
    max_insns: u64,
    /// Stop after SECONDS of host time; 0 for no limit.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_TIMEOUT)]
    timeout: u64,
    /// Write the program's exit code (decimal) to FILE when it exits; the
    /// file is removed when the run starts and not written when the run
    /// ends any other way.
    #[arg(long, value_name = "FILE")]
    exit_code_file: Option<PathBuf>,
    /// The program: an OS/2 path in the sandbox, or a host file.
    #[arg(value_name = "PROGRAM")]
    program: String,
    /// Arguments for the program.
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    args: Vec<String>,
    #[command(flatten)]
    trace: TraceOptions,
    #[command(flatten)]
    cptrap: crate::cptrapopts::CptrapOptions,
}

/// The default instruction budget: 10^10 (minutes of emulated time).
const DEFAULT_MAX_INSNS: u64 = 10_000_000_000;
/// The default wall-clock limit, seconds.
const DEFAULT_TIMEOUT: u64 = 60;
/// The exit code after Ctrl-C, as shells report SIGINT (128 + 2).
const EXIT_INTERRUPTED: i32 = 130;

fn parse_env(kv: &str) -> Result<(String, String), String> {
    match kv.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("wants K=V, got {kv:?}")),
    }
}

/// Entry point.
pub fn run(o: Args) -> anyhow::Result<i32> {
    let place = place_program(o.root.as_deref(), &o.program)?;
    let root = place.root.clone();
    let mut cfg = ProcessConfig::new(&root, place.program.clone());
    cfg.program_host = place.host.clone();
    cfg.args = o.args;
    for (k, v) in &o.env {
        cfg.set_env(k, v);
    }
    cfg.api_log = o.api_log;
    cfg.max_instructions = (o.max_insns != 0).then_some(o.max_insns);
    cfg.max_wall = (o.timeout != 0).then(|| std::time::Duration::from_secs(o.timeout));
    cfg.interrupt = Some(crate::sigpipe::interrupt_flag());
    let mut trace = o.trace;
    resolve_trace_names(&mut trace, &root)?;
    // No output may be one of the run's inputs: the program (where it was
    // named and where it runs from), the TDFs and the trace programs.
    let mut inputs: Vec<PathBuf> = vec![PathBuf::from(&o.program), root.join(&o.program)];
    inputs.extend(place.host.clone());
    inputs.extend(
        trace
            .traces
            .iter()
            .map(|t| PathBuf::from(split_operand(t).0)),
    );
    inputs.extend(
        trace
            .applies
            .iter()
            .map(|a| PathBuf::from(split_apply_operand(a).0)),
    );
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let outputs = [
        &trace.save,
        &trace.views.export,
        &trace.views.svg,
        &o.exit_code_file,
    ];
    for out in outputs.into_iter().flatten() {
        crate::util::refuse_overwrite(out, &inputs)?;
    }
    if let Some(file) = &o.exit_code_file
        && std::fs::symlink_metadata(file).is_ok_and(|m| m.is_file())
    {
        // A file left by an earlier run must not read as this run's code.
        std::fs::remove_file(file)
            .with_context(|| format!("cannot remove the old {}", file.display()))?;
    }
    let mut p = Process::new(cfg).with_context(|| format!("loading {}", o.program))?;
    let tally = crate::apitally::ApiTally::default();
    if o.api_log {
        // Module names and strings in the entries are the guest's.
        let tally = tally.clone();
        p.set_api_log_sink(Box::new(move |e| {
            tally.add(e);
            eprintln!("api: {}", crate::util::escape_controls(&e.to_string()));
        }));
    }
    o.cptrap.start(&mut p)?;
    let status = crate::status::StatusLine::attach(&mut p);
    let outcome = if trace.active() {
        p.trace_commands(&trace.commands()?)?;
        crate::runviews::start(&trace.views, &mut p, trace.tff_dirs(&root));
        let outcome = p.run();
        status.finish();
        // Also after Ctrl-C or a limit: what was captured is written.
        crate::tracing::finish(&trace, &mut p, &root)?;
        outcome
    } else {
        let outcome = p.run();
        status.finish();
        outcome
    };
    o.cptrap.finish(&mut p)?;
    if o.api_log {
        eprintln!(
            "run: {} instructions, {} cycles, {} ms of emulated time",
            p.instructions(),
            // The emulated clock's total: the program's cycles and what
            // tracing (and sleeps) added, as --query counts them.
            p.clock().cycles(p.machine().cycles()),
            p.now_millis()
        );
        eprint!("{}", tally.summary(&outcome));
    }
    match outcome {
        Outcome::Exited(code) => {
            if let Some(file) = &o.exit_code_file {
                outfile::write_atomic(file, format!("{code}\n").as_bytes())?;
            }
            Ok(code as i32)
        }
        Outcome::Interrupted => {
            eprintln!(
                "os2trace run: interrupted (Ctrl-C) after {} instructions; the outputs asked for hold what was captured",
                p.instructions()
            );
            Ok(EXIT_INTERRUPTED)
        }
        Outcome::InstructionLimit(n) => {
            eprintln!(
                "os2trace run: the instruction limit of {n} ran out (the program may loop); --max-insns N changes it, 0 for none"
            );
            Ok(1)
        }
        other => {
            eprintln!(
                "os2trace run: {}",
                crate::util::escape_controls(&other.to_string())
            );
            Ok(1)
        }
    }
}

/// Where the program runs: drive C: and the program's name there, or its
/// host file when it is outside C:.
struct Placement {
    root: PathBuf,
    program: String,
    host: Option<PathBuf>,
    /// A scratch drive C: (without --root), removed when the run ends.
    _scratch: Option<tempfile::TempDir>,
}

/// PROGRAM is a host file (inside the root or not) or an OS/2 path in the
/// root. Without --root, C: is a fresh empty scratch directory: the guest
/// gets no access to the host directory the program is in.
fn place_program(root: Option<&Path>, program: &str) -> anyhow::Result<Placement> {
    let host = Path::new(program);
    let is_host_file = host.is_file();
    match root {
        Some(root) => {
            if is_host_file {
                let canon_root = root
                    .canonicalize()
                    .with_context(|| format!("--root {}", root.display()))?;
                let canon = host.canonicalize().with_context(|| program.to_string())?;
                if let Ok(rel) = canon.strip_prefix(&canon_root) {
                    let name = rel.to_string_lossy().replace('/', "\\");
                    return Ok(Placement {
                        root: root.to_path_buf(),
                        program: name,
                        host: None,
                        _scratch: None,
                    });
                }
                return Ok(Placement {
                    root: root.to_path_buf(),
                    program: program.to_string(),
                    host: Some(canon),
                    _scratch: None,
                });
            }
            Ok(Placement {
                root: root.to_path_buf(),
                program: program.to_string(),
                host: None,
                _scratch: None,
            })
        }
        None if is_host_file => {
            let scratch = tempfile::tempdir().context("cannot create a scratch drive C:")?;
            Ok(Placement {
                root: scratch.path().to_path_buf(),
                program: program.to_string(),
                host: Some(host.to_path_buf()),
                _scratch: Some(scratch),
            })
        }
        None => Err(crate::util::UsageError(format!(
            "{program}: no such file (an OS/2 path needs --root DIR, the directory that is drive C:)"
        ))
        .into()),
    }
}

/// `--trace NAME` is TRACE ON's spelling: a bare name finds `NAME.TDF` in
/// the current directory or the root. `--apply FILE` assumes `.RPN`, as
/// DTRACE does.
pub(crate) fn resolve_trace_names(trace: &mut TraceOptions, root: &Path) -> anyhow::Result<()> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    // The file a name stands for: itself when it exists, else NAME.EXT in
    // the current directory or the root; a name found nowhere is an error
    // that says what was looked for and where.
    let find = |option: &str, name: &str, ext: &str| -> anyhow::Result<Option<String>> {
        if Path::new(name).is_file() {
            return Ok(None);
        }
        let with_ext = tdf::trcust::with_default_ext(name, ext);
        let dirs = [cwd.as_path(), root];
        match dirs
            .iter()
            .find_map(|dir| tdf::trcust::find_file(dir, &with_ext))
        {
            Some(p) => Ok(Some(p.to_string_lossy().into_owned())),
            None => anyhow::bail!(
                "{option} {name}: no file {name} or {with_ext} in the current directory or the root ({})",
                root.display()
            ),
        }
    };
    for operand in &mut trace.traces {
        let (file, spec) = split_operand(operand);
        // A static major (`245`, `0xF5(1,3)`) names no file.
        if kernel_sim::trace::statics::static_major(file).is_some() {
            continue;
        }
        if let Some(found) = find("--trace", file, "TDF")? {
            *operand = match spec {
                Some(s) => format!("{found}({s})"),
                None => found,
            };
        }
    }
    for operand in &mut trace.applies {
        let (file, module) = split_apply_operand(operand);
        if let Some(found) = find("--apply", file, "RPN")? {
            *operand = match module {
                Some(m) => format!("{found}@{m}"),
                None => found,
            };
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(a: &[&str]) -> Result<Args, clap::Error> {
        let mut all = vec!["run"];
        all.extend_from_slice(a);
        match crate::parse_for_test(&all)? {
            crate::Command::Run(a) => Ok(a),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn options_come_first_and_the_rest_goes_to_the_program() {
        let o = parse(&[
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
        ])
        .unwrap();
        assert_eq!(o.root, Some(PathBuf::from("/r")));
        assert_eq!(o.env, vec![("A".to_string(), "1".to_string())]);
        assert!(o.api_log);
        assert_eq!(o.max_insns, 99);
        assert_eq!(o.program, "P.EXE");
        assert_eq!(o.args, ["--root", "x"]);
    }

    #[test]
    fn bad_usage_is_an_error() {
        assert!(parse(&[]).is_err());
        assert!(parse(&["--env", "NOEQUALS", "P.EXE"]).is_err());
        assert!(parse(&["--max-insns", "many", "P.EXE"]).is_err());
        assert!(parse(&["--bogus", "P.EXE"]).is_err());
        assert!(parse(&["--root"]).is_err());
        assert!(parse(&["--tracebuf", "0", "P.EXE"]).is_err());
        assert!(parse(&["--tracebuf", "64", "P.EXE"]).is_err());
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
        assert_eq!(
            run(parse(&["--root", &root, "TEST.EXE"]).unwrap()).unwrap(),
            0
        );
        assert!(run(parse(&["--root", &root, "MISSING.EXE"]).unwrap()).is_err());
        assert_eq!(
            run(parse(&["--max-insns", "1", "--root", &root, "TEST.EXE"]).unwrap()).unwrap(),
            1
        );
        // 0: no limit.
        assert_eq!(
            run(parse(&["--max-insns", "0", "--root", &root, "TEST.EXE"]).unwrap()).unwrap(),
            0
        );
    }
}
