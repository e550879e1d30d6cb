//! `os2trace prex [-o trace_file] [-s kbytes] [-f commands] PROGRAM [ARGS]`
//! and `os2trace prex -k`: Solaris prex(1) over the TNF probes of the
//! program os2trace runs (see kernel_sim's `tnf` module for how they are
//! found).
//!
//! prex loads the program, stops it before it runs and reads `$HOME/.prexrc`
//! then `./.prexrc`, then commands: from `-f FILE` (`-` is stdin), or from
//! stdin, with the prompt `prex> ` on a terminal and each command echoed
//! after it otherwise, so a scripted run prints the dialogue it was.
//! `continue` runs the program with the probes as set, writes the trace
//! file (default `trace-<pid>` in the current directory, 4 MB, at least 128
//! KB) and ends with `prex: target process finished`. `quit` (or the end of
//! the input) kills the target, `quit resume` lets it run to its end with
//! the probes as set, `quit suspend` leaves it unrun. Ctrl-C while the
//! target runs stops it and returns to the prompt; `continue` resumes it. The command language
//! is the `tnf` crate's ([`tnf::prex`]).
//!
//! The options of `os2trace run` for OS/2's system trace (`--trace`,
//! `--apply`, `--tracefmt`, `--save`, ...) work here too: TNF probes and
//! OS/2 dynamic tracepoints record in the same run, each into its own file.
//!
//! `-k` is kernel mode over os2trace's system probes (API calls, module
//! loads, thread switches): the whole command language, with `buffer`,
//! `ktrace` and `pfilter`; os2trace does not record system probes yet.

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use kernel_sim::tnf::ProbeAction;
use kernel_sim::{Outcome, Process, ProcessConfig};
use tnf::prex::{Action, Mode, QuitMode, Session};
use tnf::{ArgType, Endian, ProbeDesc, TnfWriter};

use crate::util::UsageError;

/// `prex`'s arguments.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Commands (\"help\" at the prompt lists them): list probes|values|sets|\
history|tracefile|fcns, enable, disable, trace, untrace, connect &debug, clear, create $set, \
source, continue, quit [kill|resume|suspend], help; kernel mode: buffer, ktrace, pfilter."
)]
pub struct Args {
    /// The trace file (default trace-<pid> in the current directory).
    #[arg(short = 'o', value_name = "TRACE_FILE")]
    output: Option<PathBuf>,
    /// The trace file's size in KB (default 4096, at least 128).
    #[arg(short = 's', value_name = "KBYTES")]
    kbytes: Option<u64>,
    /// Read the commands from FILE ('-' is stdin) and echo them.
    #[arg(short = 'f', value_name = "FILE", allow_hyphen_values = true)]
    commands: Option<String>,
    /// Kernel mode: os2trace's system probes.
    #[arg(short = 'k', conflicts_with_all = ["output", "program"])]
    kernel: bool,
    /// The host directory that is drive C: and the current directory.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// The program: an OS/2 path in the sandbox, or a host file.
    #[arg(value_name = "PROGRAM", required_unless_present = "kernel")]
    program: Option<String>,
    /// Arguments for the program.
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    args: Vec<String>,
    /// OS/2's system trace in the same run (as `os2trace run`).
    #[command(flatten)]
    trace: crate::tracing::TraceOptions,
}

/// The sandbox root and the program's path in it.
fn place(root: Option<PathBuf>, program: &str) -> (PathBuf, String) {
    if let Some(r) = root {
        return (r, program.to_string());
    }
    let host = Path::new(program);
    match (host.is_file(), host.parent(), host.file_name()) {
        (true, Some(dir), Some(name)) => {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            (dir.to_path_buf(), name.to_string_lossy().into_owned())
        }
        _ => (PathBuf::from("."), program.to_string()),
    }
}

/// `source` and `.prexrc` read host files.
fn load(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| e.to_string())
}

/// Where the commands come from.
struct Input {
    lines: Box<dyn BufRead>,
    interactive: bool,
    line: usize,
}

impl Input {
    /// The next logical line (backslash-newline joined), or None at the end.
    fn next(&mut self, out: &mut dyn Write) -> Result<Option<(usize, String)>> {
        if self.interactive {
            write!(out, "prex> ")?;
            out.flush()?;
        }
        let mut text = String::new();
        let start = self.line + 1;
        loop {
            let mut l = String::new();
            if self.lines.read_line(&mut l)? == 0 {
                return Ok((!text.is_empty()).then_some((start, text)));
            }
            self.line += 1;
            let l = l.trim_end_matches(['\n', '\r']);
            match l.strip_suffix('\\') {
                Some(head) => {
                    text.push_str(head);
                    text.push(' ');
                }
                None => {
                    text.push_str(l);
                    return Ok(Some((start, text)));
                }
            }
        }
    }
}

/// Prints what the session said since last time.
fn flush(s: &mut Session, out: &mut dyn Write) -> Result<()> {
    out.write_all(std::mem::take(&mut s.out).as_bytes())?;
    out.flush()?;
    eprint!("{}", std::mem::take(&mut s.err));
    Ok(())
}

/// Runs `.prexrc` files and prints the banner; an action if a file ends
/// the dialogue.
fn startup(s: &mut Session, out: &mut dyn Write) -> Result<Action> {
    let mut rcs = Vec::new();
    if let Some(home) = std::env::var_os("HOME") {
        rcs.push(Path::new(&home).join(".prexrc"));
    }
    rcs.push(PathBuf::from(".prexrc"));
    for rc in rcs {
        if let Ok(text) = std::fs::read_to_string(&rc) {
            let a = s.run(&text, 1, &mut load);
            flush(s, out)?;
            if a != Action::Prompt {
                return Ok(a);
            }
        }
    }
    out.write_all(s.banner().as_bytes())?;
    Ok(Action::Prompt)
}

/// Commands until continue or quit (the end of the input is quit).
fn commands(s: &mut Session, input: &mut Input, out: &mut dyn Write) -> Result<Action> {
    while let Some((n, line)) = input.next(out)? {
        if !input.interactive {
            writeln!(out, "prex> {line}")?;
        }
        let a = s.run(&line, n, &mut load);
        flush(s, out)?;
        if a != Action::Prompt {
            return Ok(a);
        }
    }
    Ok(Action::Quit(QuitMode::Default))
}

/// The whole dialogue: startup, then commands.
fn dialogue(s: &mut Session, input: &mut Input, out: &mut dyn Write) -> Result<Action> {
    match startup(s, out)? {
        Action::Prompt => commands(s, input, out),
        a => Ok(a),
    }
}

/// os2trace's system probes, for `prex -k`.
fn system_probes() -> Vec<ProbeDesc> {
    let p = |name: &str, keys: &str, args: &[(ArgType, &str)]| ProbeDesc {
        name: name.into(),
        keys: keys.into(),
        detail: String::new(),
        file: "kernel_sim".into(),
        line: 0,
        args: args.iter().map(|(t, n)| (*t, (*n).to_string())).collect(),
        debug: false,
    };
    vec![
        p(
            "syscall_start",
            "syscall api",
            &[(ArgType::String, "module"), (ArgType::ULong, "ordinal")],
        ),
        p("syscall_end", "syscall api", &[(ArgType::ULong, "rc")]),
        p(
            "module_load",
            "module loader",
            &[(ArgType::String, "path"), (ArgType::ULong, "hmod")],
        ),
        p(
            "thread_switch",
            "thread sched",
            &[(ArgType::ULong, "from"), (ArgType::ULong, "to")],
        ),
    ]
}

/// Entry point of `os2trace prex`.
pub fn run(o: Args) -> Result<i32> {
    let size = o
        .kbytes
        .map_or(u64::from(tnf::layout::DEFAULT_FILE_SIZE), |k| {
            k.saturating_mul(1024)
        });
    if size < u64::from(tnf::layout::MIN_FILE_SIZE) || size > u64::from(tnf::layout::MAX_FILE_SIZE)
    {
        return Err(UsageError(format!(
            "-s {}: the trace file must be 128 to 262144 KB",
            o.kbytes.unwrap_or(0)
        ))
        .into());
    }
    let stdin_is_terminal = io::stdin().is_terminal();
    let (lines, interactive): (Box<dyn BufRead>, bool) = match o.commands.as_deref() {
        None => (Box::new(io::BufReader::new(io::stdin())), stdin_is_terminal),
        Some("-") => (Box::new(io::BufReader::new(io::stdin())), false),
        Some(path) => {
            let f = std::fs::File::open(path).with_context(|| format!("cannot read {path}"))?;
            (Box::new(io::BufReader::new(f)), false)
        }
    };
    let mut input = Input {
        lines,
        interactive,
        line: 0,
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();

    if o.kernel {
        let mut s = Session::new(Mode::Kernel, "");
        s.add_probes("kernel_sim", system_probes());
        dialogue(&mut s, &mut input, &mut out)?;
        return Ok(0);
    }

    let program = o.program.clone().unwrap_or_default();
    let (root, guest_program) = place(o.root.clone(), &program);
    let mut cfg = ProcessConfig::new(&root, guest_program);
    cfg.args = o.args.clone();
    let interrupt = crate::sigpipe::interrupt_flag();
    cfg.interrupt = Some(interrupt.clone());
    let mut trace = o.trace;
    crate::runcmd::resolve_trace_names(&mut trace, &root)?;
    let mut p = Process::new(cfg).with_context(|| format!("loading {program}"))?;
    if trace.active() {
        p.trace_commands(&trace.commands()?)?;
    }
    p.tnf_discover()
        .with_context(|| format!("reading the probes of {program}"))?;
    let trace_file = o
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("trace-{}", p.tnf_pid())));
    let mut s = Session::new(Mode::User, &trace_file.to_string_lossy());
    let descs: Vec<(String, ProbeDesc)> = p
        .tnf_probes()
        .iter()
        .map(|g| (g.object.clone(), g.desc.clone()))
        .collect();
    for (object, desc) in descs {
        s.add_probes(&object, [desc]);
    }
    let mut action = dialogue(&mut s, &mut input, &mut out)?;
    let mut started = false;
    loop {
        let runs = match action {
            Action::Continue | Action::Quit(QuitMode::Resume) => true,
            Action::Quit(_) | Action::Prompt => false,
        };
        if !runs {
            return Ok(0);
        }
        for (i, probe) in s.probes().iter().enumerate() {
            p.tnf_set_action(
                i,
                ProbeAction {
                    record: probe.records(),
                    debug: probe.debugs(),
                },
            );
        }
        if !started {
            p.tnf_start(TnfWriter::new(size, Endian::Little)?);
            started = true;
        }
        // A Ctrl-C typed at the prompt does not stop the run to come.
        interrupt.store(false, std::sync::atomic::Ordering::SeqCst);
        crate::sigpipe::interrupt_flag();
        match p.run() {
            // Ctrl-C stops the target and returns to the prompt.
            Outcome::Interrupted if action == Action::Continue => {
                writeln!(out, "\nTarget process stopped")?;
                action = commands(&mut s, &mut input, &mut out)?;
            }
            outcome => {
                if trace.active() {
                    crate::tracing::finish(&trace, &mut p, &root)?;
                }
                return finish(&mut p, &trace_file, outcome, &mut out);
            }
        }
    }
}

/// Writes the trace file and reports how the target ended.
fn finish(
    p: &mut Process,
    trace_file: &Path,
    outcome: Outcome,
    out: &mut dyn Write,
) -> Result<i32> {
    // Probes found while running (DLLs loaded later) are not in the session.
    let writer = p.tnf_finish().context("the trace writer is gone")?;
    outfile::write_atomic(trace_file, writer.bytes())
        .with_context(|| trace_file.display().to_string())?;
    let (_, dropped, why) = p.tnf_counts();
    if dropped > 0 {
        eprintln!("prex: {dropped} events not written: {}", why.unwrap_or("?"));
    }
    match outcome {
        Outcome::Exited(_) => {
            writeln!(out, "prex: target process finished")?;
            Ok(0)
        }
        other => bail!("the target stopped: {other}"),
    }
}

#[cfg(test)]
mod tests {
    fn parse(v: &[&str]) -> Result<super::Args, clap::Error> {
        let mut all = vec!["prex"];
        all.extend_from_slice(v);
        match crate::parse_for_test(&all)? {
            crate::Command::Prex(a) => Ok(a),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn options() {
        let o = parse(&["-o", "t.tnf", "-s", "256", "-f", "cmds", "P.EXE", "-x", "y"]).unwrap();
        assert_eq!(o.output.as_deref(), Some(std::path::Path::new("t.tnf")));
        assert_eq!((o.kbytes, o.commands.as_deref()), (Some(256), Some("cmds")));
        assert_eq!(
            (o.program.as_deref(), o.args.as_slice()),
            (Some("P.EXE"), &["-x".to_string(), "y".to_string()][..])
        );
        assert!(parse(&["-k"]).unwrap().kernel);
        assert!(parse(&[]).is_err());
        assert!(parse(&["-k", "-o", "x"]).is_err());
    }
}
