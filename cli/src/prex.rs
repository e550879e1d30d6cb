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
//! the probes as set, `quit suspend` leaves it unrun; once the target has
//! run, quit writes the trace file with what it recorded (on Solaris the
//! file is mapped and always holds it). Ctrl-C (SIGINT) while the target
//! runs stops it at an instruction boundary, prints `Target process
//! stopped` and returns to the prompt; `continue` resumes it where it
//! stopped, and probes of DLLs it loaded meanwhile join the session.
//! Ctrl-C at the prompt is ignored (our choice; the next `continue` runs
//! on). The command language is the `tnf` crate's ([`tnf::prex`]).
//!
//! The options of `os2trace run` for OS/2's system trace (`--trace`,
//! `--apply`, `--tracefmt`, `--save`, ...) work here too: TNF probes and
//! OS/2 dynamic tracepoints record in the same run, each into its own file.
//!
//! `-k` is kernel mode over os2trace's system probes (API calls, module
//! loads, thread switches; kernel_sim's `tnf::system`): the whole command
//! language, with `buffer`, `ktrace` and `pfilter`. `prex -k PROGRAM`
//! runs PROGRAM as the "kernel's" workload: `continue` runs it and comes
//! back to the prompt when it ends (the kernel goes on), and `quit` writes
//! the kernel buffer, if one is still allocated, to `-o` (default
//! `ktrace-<pid>`), which is tnfxtract's part on Solaris. Without PROGRAM
//! there is nothing to run and nothing recorded.

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use std::cell::RefCell;
use std::rc::Rc;

use anyhow::{Context, Result, bail};
use kernel_sim::tnf::{KernelControl, ProbeAction, SYSTEM_OBJECT, SYSTEM_PROBES, system_probes};
use kernel_sim::{Outcome, Process, ProcessConfig};
use tnf::prex::{Action, Mode, ProbeState, QuitMode, Session};
use tnf::{Endian, TnfWriter};

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
    #[arg(short = 'k')]
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

/// The program prex controls, loaded and stopped before its first
/// instruction.
struct Target {
    p: Process,
    root: PathBuf,
    trace: crate::tracing::TraceOptions,
    interrupt: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Target {
    fn load(o: &mut Args) -> Result<Target> {
        let program = o.program.clone().unwrap_or_default();
        let (root, guest_program) = place(o.root.clone(), &program);
        let mut cfg = ProcessConfig::new(&root, guest_program);
        cfg.args = o.args.clone();
        let interrupt = crate::sigpipe::interrupt_flag();
        cfg.interrupt = Some(interrupt.clone());
        let mut trace = std::mem::take(&mut o.trace);
        crate::runcmd::resolve_trace_names(&mut trace, &root)?;
        let mut p = Process::new(cfg).with_context(|| format!("loading {program}"))?;
        if trace.active() {
            p.trace_commands(&trace.commands()?)?;
        }
        Ok(Target {
            p,
            root,
            trace,
            interrupt,
        })
    }

    /// Runs the target until it ends or Ctrl-C stops it.
    fn resume(&mut self) -> Outcome {
        // A Ctrl-C typed at the prompt does not stop the run to come.
        self.interrupt
            .store(false, std::sync::atomic::Ordering::SeqCst);
        crate::sigpipe::interrupt_flag();
        self.p.run()
    }

    /// Writes OS/2's system trace, if it was on.
    fn finish_system_trace(&mut self) -> Result<()> {
        if self.trace.active() {
            crate::tracing::finish(&self.trace, &mut self.p, &self.root)?;
        }
        Ok(())
    }
}

/// Entry point of `os2trace prex`.
pub fn run(mut o: Args) -> Result<i32> {
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

    if o.kernel && o.program.is_none() {
        // No target: the dialogue alone; continue has nothing to resume.
        let mut s = kernel_session();
        let mut action = dialogue(&mut s, &mut input, &mut out)?;
        while action == Action::Continue {
            action = commands(&mut s, &mut input, &mut out)?;
        }
        return Ok(0);
    }
    let mut t = Target::load(&mut o)?;
    let default_name = if o.kernel { "ktrace" } else { "trace" };
    let trace_file = o
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{default_name}-{}", t.p.tnf_pid())));
    if o.kernel {
        kernel_mode(&mut t, &trace_file, &mut input, &mut out)
    } else {
        user_mode(&mut t, &trace_file, size, &mut input, &mut out)
    }
}

/// A session over a program's own probes. The session decides what each
/// probe does as the kernel finds it, so probes of DLLs loaded while the
/// program runs get prex's history replayed on them.
fn user_mode(
    t: &mut Target,
    trace_file: &Path,
    size: u64,
    input: &mut Input,
    out: &mut dyn Write,
) -> Result<i32> {
    let session = Rc::new(RefCell::new(Session::new(
        Mode::User,
        &trace_file.to_string_lossy(),
    )));
    let shared = Rc::clone(&session);
    t.p.tnf_set_policy(Box::new(move |g| {
        let mut s = shared.borrow_mut();
        let i = s.add_probes(&g.object, [g.desc.clone()]);
        action_of(&s.probes()[i])
    }));
    t.p.tnf_discover()
        .context("reading the probes of the program and its DLLs")?;
    let mut action = dialogue(&mut session.borrow_mut(), input, out)?;
    let mut started = false;
    loop {
        let runs = match action {
            Action::Continue | Action::Quit(QuitMode::Resume) => true,
            Action::Quit(_) | Action::Prompt => false,
        };
        if !runs {
            if started {
                // The target ran and is killed (or left) here: the trace
                // file holds what it recorded, as Solaris's mapped file does.
                t.finish_system_trace()?;
                write_trace(&mut t.p, trace_file)?;
            }
            return Ok(0);
        }
        for (i, probe) in session.borrow().probes().iter().enumerate() {
            t.p.tnf_set_action(i, action_of(probe));
        }
        if !started {
            t.p.tnf_start(TnfWriter::new(size, Endian::Little)?);
            started = true;
        }
        match t.resume() {
            // Ctrl-C stops the target and returns to the prompt.
            Outcome::Interrupted if action == Action::Continue => {
                // The handler is armed again: a Ctrl-C at the prompt does
                // not end prex (the next continue forgets it).
                crate::sigpipe::interrupt_flag();
                writeln!(out, "\nTarget process stopped")?;
                // DLLs loaded since: their probes join the session.
                if let Err(e) = t.p.tnf_discover() {
                    eprintln!("prex: {e}");
                }
                action = commands(&mut session.borrow_mut(), input, out)?;
            }
            outcome => {
                t.finish_system_trace()?;
                return finish(&mut t.p, trace_file, outcome, out);
            }
        }
    }
}

fn action_of(probe: &ProbeState) -> ProbeAction {
    ProbeAction {
        record: probe.records(),
        debug: probe.debugs(),
    }
}

/// A kernel-mode session over os2trace's system probes.
fn kernel_session() -> Session {
    let mut s = Session::new(Mode::Kernel, "");
    s.add_probes(SYSTEM_OBJECT, system_probes());
    s
}

/// What the session's kernel-mode state asks of the kernel.
fn kernel_control(s: &Session) -> KernelControl {
    let mut record = [false; SYSTEM_PROBES];
    for (r, probe) in record.iter_mut().zip(s.probes()) {
        *r = probe.records();
    }
    KernelControl {
        buffer: s.kernel.buffer,
        tracing: s.kernel.tracing,
        filter: s.kernel.filtering.then(|| s.kernel.pids.clone()),
        record,
    }
}

/// `prex -k PROGRAM`: kernel mode while PROGRAM runs. `continue` runs it
/// (until it ends or Ctrl-C) and comes back to the prompt, as the kernel
/// goes on running; `quit` copies the kernel buffer, if one is allocated,
/// into the trace file (tnfxtract's part).
fn kernel_mode(
    t: &mut Target,
    trace_file: &Path,
    input: &mut Input,
    out: &mut dyn Write,
) -> Result<i32> {
    let mut s = kernel_session();
    let mut action = dialogue(&mut s, input, out)?;
    let mut ended: Option<bool> = None;
    while action == Action::Continue {
        if ended.is_some() {
            eprintln!("prex: the target process has finished");
        } else {
            t.p.tnf_kernel_control(&kernel_control(&s))?;
            match t.resume() {
                Outcome::Interrupted => {
                    crate::sigpipe::interrupt_flag();
                    writeln!(out, "\nTarget process stopped")?
                }
                Outcome::Exited(_) => {
                    t.finish_system_trace()?;
                    writeln!(out, "prex: target process finished")?;
                    ended = Some(true);
                }
                other => {
                    t.finish_system_trace()?;
                    eprintln!("prex: the target stopped: {other}");
                    ended = Some(false);
                }
            }
        }
        action = commands(&mut s, input, out)?;
    }
    // The state at quit counts: a buffer deallocated is gone.
    t.p.tnf_kernel_control(&kernel_control(&s))?;
    let (dropped, why) = t.p.tnf_kernel_dropped();
    if dropped > 0 {
        eprintln!("prex: {dropped} events not written: {}", why.unwrap_or("?"));
    }
    if let Some(bytes) = t.p.tnf_kernel_buffer() {
        outfile::write_atomic(trace_file, bytes)
            .with_context(|| trace_file.display().to_string())?;
    }
    Ok(if ended == Some(false) { 1 } else { 0 })
}

/// Writes the trace file (what the target recorded so far).
fn write_trace(p: &mut Process, trace_file: &Path) -> Result<()> {
    let writer = p.tnf_finish().context("the trace writer is gone")?;
    outfile::write_atomic(trace_file, writer.bytes())
        .with_context(|| trace_file.display().to_string())?;
    let (_, dropped, why) = p.tnf_counts();
    if dropped > 0 {
        eprintln!("prex: {dropped} events not written: {}", why.unwrap_or("?"));
    }
    Ok(())
}

/// Writes the trace file and reports how the target ended.
fn finish(
    p: &mut Process,
    trace_file: &Path,
    outcome: Outcome,
    out: &mut dyn Write,
) -> Result<i32> {
    write_trace(p, trace_file)?;
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
        assert!(parse(&["-k", "-o", "x", "P.EXE"]).unwrap().kernel);
    }
}
