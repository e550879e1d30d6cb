//! The built-in command processor, CMD.EXE, written in Rust.
//!
//! The system directory `C:\OS2` (a host temporary directory the sandbox
//! shows there, made the first time a path reaches it, `fs.rs`) holds `CMD.EXE`: a small LX program built here
//! ([`image`]) whose code calls `CMDSHELL.1` (CmdStep) in a loop. That
//! call is this interpreter. So CMD.EXE is a real process: DosExecPgm
//! starts it, it has a PID, its own handles and environment, and it
//! starts programs as children with DosExecPgm's own work, waiting for
//! each (EXEC_SYNC) as the scheduler's other waits do.
//!
//! What it understands (decisions where OS/2's CMD.EXE does more):
//! - `CMD /C line` runs the line and ends; `CMD /K line` and `CMD` alone
//!   then read lines from standard input until its end or EXIT.
//! - A line is commands joined by `&`, `&&` and `||`; `%NAME%` is the
//!   environment variable (`%%` a percent sign); `>`, `>>`, `<`, `2>`,
//!   `2>>`, `2>&1` and `1>&2` redirect around one command. `a | b`
//!   pipes `a`'s standard output into `b`'s standard input through an
//!   anonymous pipe ([`pipeline`]); a batch file as a stage runs after
//!   the line, not inside the pipe.
//! - Internal commands: SET (`SET BEGINLIBPATH=` and `SET ENDLIBPATH=`
//!   set the process's extended LIBPATHs, which its children inherit),
//!   ECHO (and `ECHO.`), CD/CHDIR, DEL/ERASE
//!   (wildcards), COPY (wildcards, `a+b` joins), TYPE, MD/MKDIR,
//!   RD/RMDIR, REN/RENAME, PATH, IF [NOT] ERRORLEVEL n / EXIST name /
//!   s1==s2, EXIT [n], REM, CLS, CALL, VER, GOTO label, SHIFT,
//!   `FOR %v IN (set) DO command` (`%%v` in a batch file; the set's
//!   words with `*` or `?` are the files they match, in name order) and
//!   DIR [pattern] [/B] (date, time, size or `<DIR>`, name; then the
//!   count and bytes).
//! - Any other name is a program: as given if it has a path, else in the
//!   current directory then along PATH; without an extension `.EXE`,
//!   then `.CMD`. A `.CMD` file is a batch file: its lines run in turn,
//!   with `%0`..`%9` its arguments (substituted as each line is read,
//!   so SHIFT shows), `@` hiding nothing (lines are not echoed) and
//!   `ECHO OFF` accepted. GOTO jumps to the line after `:label` (a
//!   missing label ends the batch file with a message); CALL of a batch
//!   file runs it and comes back, naming one without CALL ends the
//!   batch file that named it. At most [`MAX_BATCH_LINES`] batch lines
//!   run in one CMD.EXE (a GOTO loop ends there, ERRORLEVEL 1).
//! - Standard input is read a line at a time; an empty pipe with a
//!   writer blocks CMD.EXE's thread until bytes come or the writers
//!   close it (end of input).
//! - ERRORLEVEL is the last program's result code (1 if it did not end
//!   by DosExit), 0 after an internal command that worked and 1 after
//!   one that failed; CMD's own exit code is the last ERRORLEVEL.
//! - A program gets the arguments as OS/2's CMD.EXE passes them: the
//!   program name as typed, NUL, the rest of the command (leading blanks
//!   dropped), NUL, NUL; and CMD's environment with its SETs.

use std::collections::VecDeque;

use crate::api::{Call, Stop};
use crate::children::{EXEC_ASYNCRESULT, EXEC_SYNC, ExecError, ExecRequest, TC_EXIT};
use crate::fs::Handle;
use crate::process::{Process, latin1};
use crate::threads::Wait;

/// The system DLL CMD.EXE's loop calls.
pub const MODULE: &str = "CMDSHELL";

/// Batch lines one CMD.EXE runs at most (this bounds GOTO loops and
/// CALL recursion).
const MAX_BATCH_LINES: usize = 100_000;

/// CMD.EXE as an LX program: `call CMDSHELL.1; jmp back`, and a 16 KB
/// stack whose lowest dwords receive a child's RESULTCODES.
pub(crate) fn image() -> Vec<u8> {
    use loader::{Address, Module, SourceKind, Target};
    let mut m = Module::new_lx("CMD");
    m.add_object(0x2005, 7, &[0xE8, 0, 0, 0, 0, 0xEB, 0xF9]);
    m.add_object(0x2003, 0x4000, &[]);
    m.start = Some(Address {
        object: 1,
        offset: 0,
    });
    m.stack = Some(Address {
        object: 2,
        offset: 0x4000,
    });
    m.stack_size = 0x4000;
    let mi = m.import_module(MODULE);
    m.add_fixup(
        1,
        1,
        SourceKind::Rel32,
        Target::ImportOrdinal {
            module: mi,
            ordinal: 1,
        },
    );
    // A module this small always writes; an empty image would only make
    // CMD.EXE fail to load, never the host.
    loader::write(&m).unwrap_or_default()
}

/// How a command joins the one before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Join {
    Always,
    IfOk,
    IfFailed,
}

/// CMD.EXE's state in its process.
#[derive(Debug, Default)]
pub(crate) struct Shell {
    /// The environment, in order.
    vars: Vec<(String, String)>,
    /// Commands still to run: how each joins the one before, its text,
    /// and whether `%NAME%` is still to be expanded (batch lines are
    /// expanded as they run, command lines as they are read).
    queue: VecDeque<(Join, String, bool)>,
    /// Read more lines from standard input when the queue is empty.
    interactive: bool,
    errorlevel: u32,
    echo: bool,
    /// The child being waited for.
    waiting: Option<u16>,
    /// Batch lines run so far.
    batch_lines: usize,
    /// The batch files running, the innermost (CALLed) last.
    batches: Vec<Batch>,
    /// The command being run was named by CALL.
    calling: bool,
    /// The part of a standard input line read so far.
    line: Vec<u8>,
    /// A pipe read of one byte of standard input is pending
    /// ([`stdin_at`]).
    reading: bool,
    /// A pipeline stage before the last is being started: a program
    /// starts asynchronously.
    piping: bool,
    /// A pipeline's earlier programs, still to wait for.
    drain: Vec<u16>,
}

impl Shell {
    /// Where commands to run next go: the running batch file's line, or
    /// the queue.
    fn next_up(&mut self) -> &mut VecDeque<(Join, String, bool)> {
        match self.batches.last_mut() {
            Some(b) => &mut b.pending,
            None => &mut self.queue,
        }
    }
}

/// A batch file being run.
#[derive(Debug, Default)]
struct Batch {
    lines: Vec<String>,
    /// The next line.
    pos: usize,
    /// `%0`, `%1`, ...
    params: Vec<String>,
    /// The commands of the current line still to run.
    pending: VecDeque<(Join, String, bool)>,
}

/// What a command did.
enum Flow {
    /// Done: ERRORLEVEL is set.
    Done,
    /// A child runs; wait for it.
    Wait(u16),
    /// EXIT.
    Exit(u32),
}

/// CMDSHELL.1: run commands until one starts a program (the thread
/// blocks until it ends) or none are left (CMD.EXE ends).
pub(crate) fn step(p: &mut Process, _c: &Call) -> Result<u32, Stop> {
    if p.pcb.shell.is_none() {
        let shell = start(p);
        p.pcb.shell = Some(Box::new(shell));
    }
    if let Some(pid) = p.shell().waiting.take() {
        let codes = p.read_mem(results_at(p), 8).unwrap_or_default();
        let word = |i: usize| {
            codes
                .get(i..i + 4)
                .map_or(1, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let (term, code) = (word(0), word(4));
        let _ = pid;
        p.shell().errorlevel = if term == TC_EXIT { code } else { 1 };
    }
    loop {
        if let Some(pid) = p.shell().drain.pop() {
            return Err(wait_child(p, pid));
        }
        let Some((join, line, late)) = next_command(p)? else {
            let code = p.shell().errorlevel;
            return Err(Stop::Exit(code));
        };
        let ok = p.shell().errorlevel == 0;
        match join {
            Join::IfOk if !ok => continue,
            Join::IfFailed if ok => continue,
            _ => {}
        }
        match run_line(p, &line, late)? {
            Flow::Done => {}
            Flow::Exit(code) => return Err(Stop::Exit(code)),
            Flow::Wait(pid) => {
                p.shell().waiting = Some(pid);
                return Err(wait_child(p, pid));
            }
        }
    }
}

/// CMD.EXE blocks until child `pid` ends, its RESULTCODES to
/// [`results_at`].
fn wait_child(p: &Process, pid: u16) -> Stop {
    Stop::Block(Wait::Child {
        pid,
        tree: false,
        pres: results_at(p),
        ppid: 0,
        wide: true,
    })
}

/// Where a child's RESULTCODES go: the bottom of CMD.EXE's stack object.
fn results_at(p: &Process) -> u32 {
    p.pcb
        .modules
        .get(p.pcb.exe)
        .and_then(|m| m.objects.get(1))
        .map_or(0, |o| o.base)
}

/// Where a blocked read of standard input puts its byte (and, 4 bytes
/// on, its count): above the RESULTCODES.
fn stdin_at(p: &Process) -> u32 {
    results_at(p) + 0x10
}

impl Process {
    fn shell(&mut self) -> &mut Shell {
        self.pcb.shell.get_or_insert_with(Default::default)
    }
}

/// Bytes of the process's environment segment from `at` up to a NUL.
fn env_string(p: &mut Process, at: u32) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..0x1_0000u32 {
        let mut b = [0u8];
        if p.machine.read_linear(at.wrapping_add(i), &mut b).is_err() || b[0] == 0 {
            break;
        }
        out.push(b[0]);
    }
    out
}

fn text(b: &[u8]) -> String {
    b.iter().map(|&c| char::from(c)).collect()
}

/// The shell of a starting CMD.EXE: its environment and command line.
fn start(p: &mut Process) -> Shell {
    let mut shell = Shell {
        echo: true,
        ..Shell::default()
    };
    let base = p.pcb.env_base;
    let mut at = base;
    loop {
        let s = env_string(p, at);
        if s.is_empty() {
            break;
        }
        at = at.wrapping_add(s.len() as u32 + 1);
        let s = text(&s);
        match s.split_once('=') {
            Some((k, v)) => shell.vars.push((k.to_string(), v.to_string())),
            None => shell.vars.push((s, String::new())),
        }
    }
    let cmd = base + u32::from(p.pcb.cmd_offset);
    let name = env_string(p, cmd);
    let tail = text(&env_string(p, cmd + name.len() as u32 + 1));
    let tail = tail.trim_start();
    let upper = tail.to_ascii_uppercase();
    let (line, interactive) = if upper.starts_with("/C") {
        (&tail[2..], false)
    } else if upper.starts_with("/K") {
        (&tail[2..], true)
    } else {
        (tail, true)
    };
    // `CMD /C "a command"`: one pair of quotes around it all goes.
    let line = line.trim();
    let line = match line.strip_prefix('"').and_then(|l| l.strip_suffix('"')) {
        Some(inner) if !inner.contains('"') => inner,
        _ => line,
    };
    let line = expand(&shell.vars, line);
    shell
        .queue
        .extend(split_line(&line).into_iter().map(|(j, c)| (j, c, false)));
    shell.interactive = interactive;
    shell
}

/// The next command: the running batch file's, else the queue's, else
/// a line of standard input in interactive mode. A read that must wait
/// for a pipe blocks the thread.
fn next_command(p: &mut Process) -> Result<Option<(Join, String, bool)>, Stop> {
    loop {
        let sh = p.shell();
        if let Some(b) = sh.batches.last_mut() {
            if let Some(c) = b.pending.pop_front() {
                return Ok(Some(c));
            }
            let Some(raw) = b.lines.get(b.pos).cloned() else {
                sh.batches.pop();
                continue;
            };
            b.pos += 1;
            let line = substitute(&raw, &b.params);
            b.pending
                .extend(split_line(&line).into_iter().map(|(j, c)| (j, c, true)));
            sh.batch_lines += 1;
            if sh.batch_lines > MAX_BATCH_LINES {
                sh.batches.clear();
                sh.errorlevel = 1;
                say(p, 2, "CMD: too many batch lines.\r\n");
            }
            continue;
        }
        if let Some(c) = sh.queue.pop_front() {
            return Ok(Some(c));
        }
        if !sh.interactive {
            return Ok(None);
        }
        let Some(line) = read_line(p)? else {
            return Ok(None);
        };
        let line = expand(&p.shell().vars, &text(&line));
        let items = split_line(&line).into_iter().map(|(j, c)| (j, c, false));
        p.shell().queue.extend(items);
    }
}

/// A line of standard input (without its line end), `None` at its end.
/// On an empty pipe with a writer the thread blocks for one byte; the
/// next step takes it from [`stdin_at`].
fn read_line(p: &mut Process) -> Result<Option<Vec<u8>>, Stop> {
    loop {
        let byte = if std::mem::take(&mut p.shell().reading) {
            let at = stdin_at(p);
            let got = p.read_mem(at, 8).unwrap_or_default();
            match got.get(4) {
                Some(1) => Some(got[0]),
                _ => None,
            }
        } else if let Some(end) = crate::api::pipes::end_of(p, 0) {
            match end.read(1) {
                Some(b) => b.first().copied(),
                None => {
                    p.shell().reading = true;
                    let at = stdin_at(p);
                    return Err(Stop::Block(Wait::PipeRead {
                        handle: 0,
                        buf: at,
                        len: 1,
                        out: at + 4,
                        wide: true,
                    }));
                }
            }
        } else {
            p.read_handle(0, 1).ok().and_then(|b| b.first().copied())
        };
        let sh = p.shell();
        match byte {
            None if sh.line.is_empty() => return Ok(None),
            None | Some(b'\n') => return Ok(Some(std::mem::take(&mut sh.line))),
            Some(b'\r') => {}
            Some(c) => sh.line.push(c),
        }
    }
}

/// A batch line with `%0`..`%9` replaced by the parameters (`%%` is
/// left for [`expand`]).
fn substitute(raw: &str, params: &[String]) -> String {
    let mut line = String::new();
    let mut it = raw.chars().peekable();
    while let Some(c) = it.next() {
        match (c, it.peek().copied()) {
            ('%', Some('%')) => {
                it.next();
                line.push_str("%%");
            }
            ('%', Some(d @ '0'..='9')) => {
                it.next();
                let i = d as usize - '0' as usize;
                line.push_str(params.get(i).map_or("", String::as_str));
            }
            _ => line.push(c),
        }
    }
    line
}

/// A line cut at `&`, `&&` and `||` outside quotes.
fn split_line(line: &str) -> Vec<(Join, String)> {
    let mut out = Vec::new();
    let mut join = Join::Always;
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            '&' | '|' if !quoted => {
                let double = chars.peek() == Some(&c);
                if c == '|' && !double {
                    cur.push(c);
                    continue;
                }
                if double {
                    chars.next();
                }
                if !cur.trim().is_empty() {
                    out.push((join, std::mem::take(&mut cur)));
                }
                cur.clear();
                join = match (c, double) {
                    ('&', true) => Join::IfOk,
                    ('|', true) => Join::IfFailed,
                    _ => Join::Always,
                };
            }
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push((join, cur));
    }
    out
}

/// `%NAME%` replaced by the variable (nothing if unset), `%%` by `%`.
fn expand(vars: &[(String, String)], line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        rest = &rest[i + 1..];
        if let Some(r) = rest.strip_prefix('%') {
            out.push('%');
            rest = r;
            continue;
        }
        match rest.find('%') {
            Some(j) if j > 0 && !rest[..j].contains(' ') => {
                let name = &rest[..j];
                if let Some((_, v)) = vars.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)) {
                    out.push_str(v);
                }
                rest = &rest[j + 1..];
            }
            _ => out.push('%'),
        }
    }
    out.push_str(rest);
    out
}

/// A redirection of one command.
#[derive(Debug)]
enum Redirect {
    /// Handle to a file: (handle, path, append).
    Out(u16, String, bool),
    /// Handle 0 from a file.
    In(String),
    /// Handle `to` becomes a copy of `from`.
    Dup { to: u16, from: u16 },
}

/// Take the redirections out of a command.
fn redirections(cmd: &str) -> (String, Vec<Redirect>) {
    let b: Vec<char> = cmd.chars().collect();
    let mut out = String::new();
    let mut reds = Vec::new();
    let mut i = 0;
    let mut quoted = false;
    while i < b.len() {
        let c = b[i];
        if c == '"' {
            quoted = !quoted;
        }
        let digit = (c == '1' || c == '2')
            && b.get(i + 1) == Some(&'>')
            && (i == 0 || b[i - 1].is_whitespace());
        if quoted || !(c == '>' || c == '<' || digit) {
            out.push(c);
            i += 1;
            continue;
        }
        let handle = if digit {
            i += 1;
            if c == '2' { 2 } else { 1 }
        } else if c == '<' {
            0
        } else {
            1
        };
        i += 1;
        let append = handle != 0 && b.get(i) == Some(&'>');
        if append {
            i += 1;
        }
        if handle != 0 && b.get(i) == Some(&'&') {
            i += 1;
            let from = match b.get(i) {
                Some('1') => 1,
                Some('2') => 2,
                _ => 1,
            };
            i += 1;
            reds.push(Redirect::Dup { to: handle, from });
            continue;
        }
        while b.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        let mut name = String::new();
        let mut q = false;
        while let Some(&c) = b.get(i) {
            if c == '"' {
                q = !q;
            } else if !q && (c.is_whitespace() || c == '<' || c == '>') {
                break;
            } else {
                name.push(c);
            }
            i += 1;
        }
        reds.push(if handle == 0 {
            Redirect::In(name)
        } else {
            Redirect::Out(handle, name, append)
        });
    }
    (out, reds)
}

/// The handles a command's redirections replaced, to put back.
type Saved = Vec<(u16, Option<(Handle, Option<u16>)>)>;

/// Apply redirections; `Err` is the message for a file that cannot be
/// opened (what was applied is undone by the caller with the saved list).
fn redirect(p: &mut Process, reds: &[Redirect], saved: &mut Saved) -> Result<(), String> {
    for r in reds {
        let (h, handle) = match r {
            Redirect::Dup { to, from } => {
                let Some(d) = p.pcb.files.duplicate(*from) else {
                    return Err("SYS0006: The handle is not valid.".into());
                };
                (*to, d)
            }
            Redirect::Out(h, name, append) => {
                let flags = if *append { 0x11 } else { 0x12 };
                let opened = p.files().open(&latin1(name), flags, 0x41, 0);
                let Ok((n, _)) = opened else {
                    return Err(format!("SYS0002: The system cannot open the file {name}."));
                };
                if *append {
                    let _ = p.pcb.files.seek(n, 0, 2);
                }
                let Some(handle) = p.pcb.files.replace(n, None) else {
                    return Err(format!("SYS0002: The system cannot open the file {name}."));
                };
                (*h, handle)
            }
            Redirect::In(name) => {
                let opened = p.files().open(&latin1(name), 0x01, 0x40, 0);
                let Ok((n, _)) = opened else {
                    return Err(format!("SYS0002: The system cannot find the file {name}."));
                };
                let Some(handle) = p.pcb.files.replace(n, None) else {
                    return Err(format!("SYS0002: The system cannot find the file {name}."));
                };
                (0, handle)
            }
        };
        let old = p.pcb.files.replace(h, Some(handle));
        saved.push((h, old));
    }
    Ok(())
}

fn restore(p: &mut Process, saved: Saved) {
    for (h, old) in saved.into_iter().rev() {
        p.pcb.files.replace(h, old);
    }
}

/// The words of an argument: split at blanks outside quotes, the quotes
/// dropped.
fn words(arg: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut quoted, mut any) = (false, false);
    for c in arg.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn say(p: &mut Process, h: u16, s: &str) {
    let _ = p.write_handle(h, &latin1(s));
}

/// Run one command of a line.
fn run_line(p: &mut Process, line: &str, late: bool) -> Result<Flow, Stop> {
    let line = if late {
        expand(&p.shell().vars, line)
    } else {
        line.to_string()
    };
    let line = line.trim().trim_start_matches('@').trim_start();
    if line.is_empty() || line.starts_with(':') {
        return Ok(Flow::Done);
    }
    let stages = pipe_stages(line);
    if stages.len() > 1 {
        return pipeline(p, &stages);
    }
    let (cmd, reds) = redirections(line);
    let mut saved = Vec::new();
    if let Err(msg) = redirect(p, &reds, &mut saved) {
        restore(p, saved);
        say(p, 2, &format!("{msg}\r\n"));
        p.shell().errorlevel = 1;
        return Ok(Flow::Done);
    }
    let flow = command(p, cmd.trim());
    restore(p, saved);
    flow
}

/// A command cut at `|` outside quotes (`||` was taken by
/// [`split_line`]).
fn pipe_stages(cmd: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    for c in cmd.chars() {
        if c == '"' {
            quoted = !quoted;
        }
        if c == '|' && !quoted {
            out.push(String::new());
        } else if let Some(cur) = out.last_mut() {
            cur.push(c);
        }
    }
    out
}

/// `a | b | c`: each stage's standard output is a new pipe that the next
/// stage reads as its standard input. The programs before the last start
/// asynchronously (EXEC_ASYNCRESULT) and run beside the next ones under
/// the scheduler; CMD.EXE waits for the last, whose result is
/// ERRORLEVEL, then for the others. An internal command writes its
/// output into the pipe before the next stage starts (what does not fit
/// in the pipe's 65504 bytes is lost); a stage whose redirection fails
/// gives the next one an empty input.
fn pipeline(p: &mut Process, stages: &[String]) -> Result<Flow, Stop> {
    use crate::api::pipes::PipeEnd;
    use crate::api::pipes::queue::MAX_SIZE;
    let mut input: Option<PipeEnd> = None;
    let mut started = Vec::new();
    for (k, stage) in stages.iter().enumerate() {
        let last = k + 1 == stages.len();
        let (cmd, reds) = redirections(stage.trim());
        let mut saved: Saved = Vec::new();
        if let Some(r) = input.take() {
            let old = p.pcb.files.replace(0, Some((Handle::Pipe(r), None)));
            saved.push((0, old));
        }
        if !last {
            let (r, w) = PipeEnd::pair(MAX_SIZE);
            let old = p.pcb.files.replace(1, Some((Handle::Pipe(w), None)));
            saved.push((1, old));
            input = Some(r);
        }
        if let Err(msg) = redirect(p, &reds, &mut saved) {
            restore(p, saved);
            say(p, 2, &format!("{msg}\r\n"));
            p.shell().errorlevel = 1;
            continue;
        }
        p.shell().piping = !last;
        let flow = command(p, cmd.trim());
        p.shell().piping = false;
        // CMD.EXE's own copies of the pipe ends go here: a reader sees
        // the end of its input when the writer it started ends.
        restore(p, saved);
        match flow? {
            Flow::Wait(pid) if !last => started.push(pid),
            Flow::Wait(pid) => {
                p.shell().drain = started;
                return Ok(Flow::Wait(pid));
            }
            Flow::Done | Flow::Exit(_) => {}
        }
    }
    p.shell().drain = started;
    Ok(Flow::Done)
}

/// The command word and the rest: `echo.` and `cd\` split after the
/// internal command's name.
fn split_command(cmd: &str) -> (String, String) {
    let end = cmd
        .find(|c: char| c.is_whitespace() || matches!(c, '/' | '.' | '\\' | '+' | '=' | ',' | ';'))
        .unwrap_or(cmd.len());
    let word = cmd[..end].to_ascii_uppercase();
    if INTERNAL.contains(&word.as_str()) {
        return (word, cmd[end..].to_string());
    }
    // A program name runs to the first blank (it may hold a path).
    let end = cmd.find(char::is_whitespace).unwrap_or(cmd.len());
    (cmd[..end].to_string(), cmd[end..].to_string())
}

const INTERNAL: &[&str] = &[
    "SET", "ECHO", "CD", "CHDIR", "DEL", "ERASE", "COPY", "TYPE", "MD", "MKDIR", "RD", "RMDIR",
    "REN", "RENAME", "PATH", "IF", "EXIT", "REM", "CLS", "CALL", "VER", "GOTO", "SHIFT", "FOR",
    "DIR",
];

fn done(p: &mut Process, ok: bool) -> Result<Flow, Stop> {
    p.shell().errorlevel = u32::from(!ok);
    Ok(Flow::Done)
}

fn command(p: &mut Process, cmd: &str) -> Result<Flow, Stop> {
    let (word, rest) = split_command(cmd);
    let arg = rest.trim();
    match word.as_str() {
        "REM" | "CLS" => done(p, true),
        "VER" => {
            say(p, 1, "\r\nThe Operating System/2 Version is 4.50\r\n");
            done(p, true)
        }
        "ECHO" => {
            let shown = rest.strip_prefix(['.', ' ']).unwrap_or(&rest);
            match arg.to_ascii_uppercase().as_str() {
                "" if !rest.starts_with('.') => {
                    let on = if p.shell().echo { "on" } else { "off" };
                    say(p, 1, &format!("ECHO is {on}.\r\n"));
                }
                "ON" => p.shell().echo = true,
                "OFF" => p.shell().echo = false,
                _ => say(p, 1, &format!("{shown}\r\n")),
            }
            done(p, true)
        }
        "SET" => set(p, arg),
        "PATH" => {
            if arg.is_empty() {
                let v = get_var(p, "PATH").unwrap_or_default();
                say(p, 1, &format!("PATH={v}\r\n"));
                done(p, true)
            } else {
                let v = arg.trim_start_matches('=').to_string();
                set(p, &format!("PATH={v}"))
            }
        }
        "CD" | "CHDIR" => {
            if arg.is_empty() {
                let cwd = p.pcb.files.cwd_text();
                say(p, 1, &format!("C:\\{cwd}\r\n"));
                return done(p, true);
            }
            let ok = p.files().chdir(&latin1(arg.trim_matches('"'))).is_ok();
            if !ok {
                say(
                    p,
                    2,
                    "SYS0003: The system cannot find the path specified.\r\n",
                );
            }
            done(p, ok)
        }
        "MD" | "MKDIR" => {
            let ok = p.files().mkdir(&latin1(arg.trim_matches('"'))).is_ok();
            if !ok {
                say(
                    p,
                    2,
                    &format!("SYS0082: The directory {arg} cannot be created.\r\n"),
                );
            }
            done(p, ok)
        }
        "RD" | "RMDIR" => {
            let ok = p
                .files()
                .resolve(&latin1(arg.trim_matches('"')))
                .ok()
                .filter(|r| r.exists == Some(true))
                .is_some_and(|r| std::fs::remove_dir(&r.host).is_ok());
            if !ok {
                say(
                    p,
                    2,
                    &format!("SYS0016: The directory {arg} cannot be removed.\r\n"),
                );
            }
            done(p, ok)
        }
        "DEL" | "ERASE" => del(p, arg),
        "TYPE" => {
            let data = read_file(p, arg.trim_matches('"'));
            match data {
                Some(d) => {
                    let _ = p.write_handle(1, &d);
                    done(p, true)
                }
                None => {
                    say(
                        p,
                        2,
                        "SYS0002: The system cannot find the file specified.\r\n",
                    );
                    done(p, false)
                }
            }
        }
        "COPY" => copy(p, arg),
        "REN" | "RENAME" => {
            let ws = words(arg);
            let (Some(from), Some(to)) = (ws.first(), ws.get(1)) else {
                say(p, 2, "SYS1003: The syntax of the command is incorrect.\r\n");
                return done(p, false);
            };
            let ok = p
                .files()
                .resolve(&latin1(from))
                .ok()
                .filter(|r| r.exists.is_some())
                .and_then(|r| {
                    let dst = r.host.with_file_name(to);
                    (!dst.exists()).then(|| std::fs::rename(&r.host, dst).is_ok())
                })
                .unwrap_or(false);
            if !ok {
                say(
                    p,
                    2,
                    "SYS0002: The system cannot find the file specified.\r\n",
                );
            }
            done(p, ok)
        }
        "EXIT" => {
            let code = arg.parse().unwrap_or(p.shell().errorlevel);
            Ok(Flow::Exit(code))
        }
        "IF" => if_command(p, arg),
        "CALL" => {
            p.shell().calling = true;
            let flow = command(p, arg);
            p.shell().calling = false;
            flow
        }
        "GOTO" => goto(p, arg),
        "SHIFT" => {
            if let Some(b) = p.shell().batches.last_mut()
                && !b.params.is_empty()
            {
                b.params.remove(0);
            }
            done(p, true)
        }
        "FOR" => for_command(p, arg),
        "DIR" => dir(p, arg),
        _ => program(p, &word, &rest),
    }
}

fn get_var(p: &mut Process, name: &str) -> Option<String> {
    p.shell()
        .vars
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.clone())
}

fn set(p: &mut Process, arg: &str) -> Result<Flow, Stop> {
    let Some((k, v)) = arg.split_once('=') else {
        let up = arg.to_ascii_uppercase();
        let list: Vec<String> = p
            .shell()
            .vars
            .iter()
            .filter(|(k, _)| k.to_ascii_uppercase().starts_with(&up))
            .map(|(k, v)| format!("{k}={v}\r\n"))
            .collect();
        let found = !list.is_empty() || up.is_empty();
        say(p, 1, &list.concat());
        return done(p, found);
    };
    let k = k.trim().to_ascii_uppercase();
    // The extended LIBPATHs are the process's, not environment variables.
    if k == "BEGINLIBPATH" || k == "ENDLIBPATH" {
        let old = if k == "BEGINLIBPATH" {
            &p.pcb.ext_libpath.begin
        } else {
            &p.pcb.ext_libpath.end
        };
        let old: String = old.iter().map(|&b| char::from(b)).collect();
        let pattern = format!("%{k}%");
        let value = v
            .replace(&pattern, &old)
            .replace(&pattern.to_ascii_lowercase(), &old);
        if value.len() >= 1024 {
            return done(p, false);
        }
        let bytes = latin1(&value);
        if k == "BEGINLIBPATH" {
            p.pcb.ext_libpath.begin = bytes;
        } else {
            p.pcb.ext_libpath.end = bytes;
        }
        return done(p, true);
    }
    let vars = &mut p.shell().vars;
    vars.retain(|(n, _)| !n.eq_ignore_ascii_case(&k));
    if !v.is_empty() {
        vars.push((k, v.to_string()));
    }
    done(p, true)
}

fn if_command(p: &mut Process, arg: &str) -> Result<Flow, Stop> {
    let (not, rest) = match arg.get(..4) {
        Some(w) if w.eq_ignore_ascii_case("NOT ") => (true, arg[4..].trim_start()),
        _ => (false, arg),
    };
    let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let word = rest[..word_end].to_ascii_uppercase();
    let after = rest[word_end..].trim_start();
    let (cond, then) = if word == "ERRORLEVEL" || word == "EXIST" {
        let end = after.find(char::is_whitespace).unwrap_or(after.len());
        let operand = &after[..end];
        let cond = if word == "ERRORLEVEL" {
            operand
                .parse::<u32>()
                .map(|n| p.shell().errorlevel >= n)
                .unwrap_or(false)
        } else {
            exists(p, &words(operand).concat())
        };
        (cond, after[end..].trim_start().to_string())
    } else if let Some(eq) = rest.find("==") {
        let left = rest[..eq].trim();
        let right_all = rest[eq + 2..].trim_start();
        let end = right_all
            .find(char::is_whitespace)
            .unwrap_or(right_all.len());
        (
            left == &right_all[..end],
            right_all[end..].trim_start().to_string(),
        )
    } else {
        say(p, 2, "SYS1003: The syntax of the command is incorrect.\r\n");
        return done(p, false);
    };
    if cond != not && !then.is_empty() {
        // The command runs next, before the rest of the line.
        p.shell().next_up().push_front((Join::Always, then, false));
    }
    Ok(Flow::Done)
}

fn exists(p: &mut Process, name: &str) -> bool {
    if name.contains(['*', '?']) {
        return p
            .files()
            .find(&latin1(name), 0x37)
            .is_ok_and(|v| !v.is_empty());
    }
    p.files()
        .resolve(&latin1(name))
        .is_ok_and(|r| r.exists.is_some())
}

fn read_file(p: &mut Process, name: &str) -> Option<Vec<u8>> {
    let r = p.files().resolve(&latin1(name)).ok()?;
    if r.exists != Some(false) {
        return None;
    }
    std::fs::read(&r.host).ok()
}

/// The files a pattern names, as OS/2 paths (the directory part kept).
fn matching(p: &mut Process, pattern: &str) -> Vec<String> {
    let dir = match pattern.rfind(['\\', '/', ':']) {
        Some(i) => &pattern[..=i],
        None => "",
    };
    match p.files().find(&latin1(pattern), 0x27) {
        Ok(v) => v.into_iter().map(|e| format!("{dir}{}", e.name)).collect(),
        Err(_) => Vec::new(),
    }
}

fn del(p: &mut Process, arg: &str) -> Result<Flow, Stop> {
    let mut ok = !arg.is_empty();
    for name in words(arg).iter().filter(|a| !a.starts_with('/')) {
        let files = matching(p, name);
        if files.is_empty() {
            say(
                p,
                2,
                &format!("SYS0002: The system cannot find the file {name}.\r\n"),
            );
            ok = false;
        }
        for f in files {
            if p.files().delete(&latin1(&f)).is_err() {
                ok = false;
            }
        }
    }
    done(p, ok)
}

fn copy(p: &mut Process, arg: &str) -> Result<Flow, Stop> {
    let ws: Vec<String> = words(arg)
        .into_iter()
        .filter(|a| !a.starts_with('/'))
        .collect();
    let (src, dst) = match ws.as_slice() {
        [s] => (s.as_str(), "."),
        [s, d] => (s.as_str(), d.as_str()),
        _ => {
            say(p, 2, "SYS1003: The syntax of the command is incorrect.\r\n");
            return done(p, false);
        }
    };
    let parts: Vec<&str> = src.split('+').filter(|s| !s.is_empty()).collect();
    let dst_dir = p
        .files()
        .resolve(&latin1(dst))
        .is_ok_and(|r| r.exists == Some(true));
    // Pairs of (what to read, where to write).
    let mut jobs: Vec<(Vec<String>, String)> = Vec::new();
    if parts.len() > 1 {
        let names: Vec<String> = parts.iter().flat_map(|s| matching(p, s)).collect();
        jobs.push((names, dst.to_string()));
    } else {
        for f in matching(p, src) {
            let target = if dst_dir {
                let base = f.rsplit(['\\', '/', ':']).next().unwrap_or(&f).to_string();
                format!("{}\\{base}", dst.trim_end_matches('\\'))
            } else {
                dst.to_string()
            };
            jobs.push((vec![f], target));
        }
    }
    if jobs.is_empty() || jobs.iter().any(|(s, _)| s.is_empty()) {
        say(
            p,
            2,
            &format!("SYS0002: The system cannot find the file {src}.\r\n"),
        );
        return done(p, false);
    }
    let mut copied = 0;
    for (sources, target) in jobs {
        let mut data = Vec::new();
        for s in &sources {
            data.extend(read_file(p, s).unwrap_or_default());
        }
        if write_file(p, &target, &data) {
            copied += 1;
        } else {
            say(
                p,
                2,
                &format!("SYS0082: The file {target} cannot be written.\r\n"),
            );
            return done(p, false);
        }
    }
    say(p, 1, &format!("{copied:>9} file(s) copied.\r\n"));
    done(p, true)
}

/// Write a whole file through the file system (stamps, write budget).
fn write_file(p: &mut Process, name: &str, data: &[u8]) -> bool {
    let Ok((h, _)) = p.files().open(&latin1(name), 0x12, 0x41, 0) else {
        return false;
    };
    let ok = p.files().write_file(h, data).is_ok();
    let _ = p.pcb.files.close(h);
    ok
}

/// A program, found as the module docs say: its full OS/2 path.
fn find_program(p: &mut Process, name: &str) -> Option<(String, std::path::PathBuf)> {
    let has_ext = name
        .rsplit(['\\', '/', ':'])
        .next()
        .is_some_and(|b| b.contains('.'));
    let exts: &[&str] = if has_ext { &[""] } else { &[".EXE", ".CMD"] };
    let mut dirs = vec![String::new()];
    if !name.contains(['\\', '/', ':']) {
        let path = get_var(p, "PATH").unwrap_or_default();
        dirs.extend(
            path.split(';')
                .filter(|d| !d.is_empty())
                .map(|d| format!("{}\\", d.trim_end_matches('\\'))),
        );
    }
    for d in dirs {
        for e in exts {
            let cand = format!("{d}{name}{e}");
            if let Ok(r) = p.files().resolve(&latin1(&cand))
                && r.exists == Some(false)
            {
                return Some((r.os2, r.host));
            }
        }
    }
    None
}

/// The environment block of CMD's variables.
fn env_block(vars: &[(String, String)]) -> Vec<u8> {
    let mut env = Vec::new();
    for (k, v) in vars {
        env.extend(latin1(k));
        env.push(b'=');
        env.extend(latin1(v));
        env.push(0);
    }
    if vars.is_empty() {
        env.push(0);
    }
    env.push(0);
    env
}

fn program(p: &mut Process, name: &str, rest: &str) -> Result<Flow, Stop> {
    let bare = name.trim_matches('"');
    let Some((os2, host)) = find_program(p, bare) else {
        say(
            p,
            2,
            &format!(
                "SYS1041: The name {bare} is not recognized as an\r\ninternal or external command, operable program or batch file.\r\n"
            ),
        );
        return done(p, false);
    };
    if os2.to_ascii_uppercase().ends_with(".CMD") {
        return batch(p, &host, bare, rest);
    }
    let mut args = latin1(bare);
    args.push(0);
    args.extend(latin1(rest.trim_start()));
    args.extend([0, 0]);
    let env = env_block(&p.shell().vars);
    let flag = if p.shell().piping {
        EXEC_ASYNCRESULT
    } else {
        EXEC_SYNC
    };
    match p.exec(ExecRequest {
        host,
        os2,
        env,
        args,
        flag,
    }) {
        Ok(pid) => Ok(Flow::Wait(pid)),
        Err(ExecError::Run(o)) => Err(Stop::Outcome(o)),
        Err(ExecError::Code(rc, object)) => {
            say(
                p,
                2,
                &format!("SYS{rc:04}: {bare} cannot be run ({object}).\r\n"),
            );
            p.shell().errorlevel = rc;
            Ok(Flow::Done)
        }
    }
}

/// Run a batch file: CALLed (or from the command line) it runs inside
/// the one that named it; named without CALL it takes that one's place.
fn batch(p: &mut Process, host: &std::path::Path, name: &str, rest: &str) -> Result<Flow, Stop> {
    let data = std::fs::read(host).unwrap_or_default();
    let mut params = vec![name.to_string()];
    params.extend(words(rest));
    let lines = text(&data).lines().map(str::to_string).collect();
    let shell = p.shell();
    if !shell.calling {
        shell.batches.pop();
    }
    shell.batches.push(Batch {
        lines,
        pos: 0,
        params,
        pending: VecDeque::new(),
    });
    shell.errorlevel = 0;
    Ok(Flow::Done)
}

/// GOTO label: on in the running batch file after `:label`.
fn goto(p: &mut Process, arg: &str) -> Result<Flow, Stop> {
    let label = arg
        .trim()
        .trim_start_matches(':')
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string();
    let shell = p.shell();
    let Some(b) = shell.batches.last_mut() else {
        return done(p, false);
    };
    let found = b.lines.iter().position(|l| {
        l.trim_start()
            .strip_prefix(':')
            .and_then(|r| r.split_whitespace().next())
            .is_some_and(|w| w.eq_ignore_ascii_case(&label))
    });
    match found {
        Some(i) => {
            b.pos = i + 1;
            b.pending.clear();
            done(p, true)
        }
        None => {
            shell.batches.pop();
            say(
                p,
                2,
                &format!("SYS1011: The system cannot find the batch label {label}.\r\n"),
            );
            done(p, false)
        }
    }
}

/// FOR %v IN (set) DO command: the command once per item of the set,
/// run next.
fn for_command(p: &mut Process, arg: &str) -> Result<Flow, Stop> {
    let syntax = |p: &mut Process| {
        say(p, 2, "SYS1003: The syntax of the command is incorrect.\r\n");
        done(p, false)
    };
    let arg = arg.trim_start();
    let Some(var_end) = arg.find(char::is_whitespace) else {
        return syntax(p);
    };
    let var = &arg[..var_end];
    let rest = arg[var_end..].trim_start();
    let name_ok = var.len() >= 2 && var.starts_with('%') && !var[1..].contains('%');
    let Some(rest) = rest
        .get(..2)
        .filter(|w| w.eq_ignore_ascii_case("IN") && name_ok)
        .map(|_| rest[2..].trim_start())
    else {
        return syntax(p);
    };
    let (Some(rest), Some(close)) = (rest.strip_prefix('('), rest.find(')')) else {
        return syntax(p);
    };
    let set = &rest[..close - 1];
    let after = rest[close..].trim_start();
    let Some(cmd) = after
        .get(..2)
        .filter(|w| w.eq_ignore_ascii_case("DO"))
        .map(|_| after[2..].trim_start())
        .filter(|c| !c.is_empty())
    else {
        return syntax(p);
    };
    let mut items = Vec::new();
    for w in set
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
        .filter(|w| !w.is_empty())
    {
        if w.contains(['*', '?']) {
            items.extend(matching(p, w));
        } else {
            items.push(w.to_string());
        }
    }
    let cmds: Vec<_> = items
        .iter()
        .map(|item| (Join::Always, cmd.replace(var, item), false))
        .collect();
    let queue = p.shell().next_up();
    for c in cmds.into_iter().rev() {
        queue.push_front(c);
    }
    done(p, true)
}

/// A DOS date and time as DIR shows them: `MM-DD-YY  HH:MMa`.
fn dir_stamp((date, time): (u16, u16)) -> String {
    let (y, m, d) = (1980 + (date >> 9), (date >> 5) & 0xF, date & 0x1F);
    let (h, mi) = (time >> 11, (time >> 5) & 0x3F);
    let (h12, ap) = match h {
        0 => (12, 'a'),
        1..=11 => (h, 'a'),
        12 => (12, 'p'),
        _ => (h - 12, 'p'),
    };
    format!("{m:02}-{d:02}-{:02}  {h12:2}:{mi:02}{ap}", y % 100)
}

/// DIR [pattern] [/B]: the entries of a directory (or those a pattern
/// matches), then their count and size.
fn dir(p: &mut Process, arg: &str) -> Result<Flow, Stop> {
    let ws = words(arg);
    let bare = ws.iter().any(|w| w.eq_ignore_ascii_case("/B"));
    let given = ws.iter().find(|w| !w.starts_with('/')).cloned();
    let mut pattern = given.clone().unwrap_or_else(|| "*".into());
    let is_dir = !pattern.contains(['*', '?'])
        && p.files()
            .resolve(&latin1(&pattern))
            .is_ok_and(|r| r.exists == Some(true));
    if is_dir {
        pattern = format!("{}\\*", pattern.trim_end_matches(['\\', '/']));
    }
    let entries = p.files().find(&latin1(&pattern), 0x37).unwrap_or_default();
    let entries: Vec<_> = entries
        .into_iter()
        .filter(|e| e.name != "." && e.name != "..")
        .collect();
    if entries.is_empty() {
        say(
            p,
            2,
            "SYS0002: The system cannot find the file specified.\r\n",
        );
        return done(p, false);
    }
    let mut out = String::new();
    if !bare {
        let cwd = format!("C:\\{}", p.pcb.files.cwd_text());
        let where_ = match pattern.rfind(['\\', '/']) {
            Some(i) if pattern[..i].contains(':') => pattern[..i].to_string(),
            Some(i) if pattern.starts_with(['\\', '/']) => format!("C:{}", &pattern[..i]),
            Some(i) => format!("{}\\{}", cwd.trim_end_matches('\\'), &pattern[..i]),
            None => cwd,
        };
        out.push_str(&format!("\r\n Directory of {where_}\r\n\r\n"));
    }
    let (mut files, mut bytes) = (0u64, 0u64);
    for e in &entries {
        if bare {
            out.push_str(&format!("{}\r\n", e.name));
            continue;
        }
        let size = if e.attr & 0x10 != 0 {
            "<DIR>".to_string()
        } else {
            files += 1;
            bytes += e.size;
            e.size.to_string()
        };
        out.push_str(&format!(
            "{}  {size:>12}  {}\r\n",
            dir_stamp(e.stamps.written),
            e.name
        ));
    }
    if !bare {
        out.push_str(&format!("{files:>9} file(s) {bytes:>12} bytes used\r\n"));
    }
    say(p, 1, &out);
    done(p, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_at_joins_outside_quotes() {
        let v = split_line("a & b && c || \"d & e\"");
        assert_eq!(
            v,
            vec![
                (Join::Always, "a ".to_string()),
                (Join::Always, " b ".to_string()),
                (Join::IfOk, " c ".to_string()),
                (Join::IfFailed, " \"d & e\"".to_string()),
            ]
        );
    }

    #[test]
    fn variables_expand_and_percent_doubles() {
        let vars = vec![("PATH".to_string(), "C:\\".to_string())];
        assert_eq!(expand(&vars, "x%path%y %% %NONE%."), "xC:\\y % .");
        assert_eq!(expand(&vars, "50% off"), "50% off");
    }

    #[test]
    fn redirections_come_out_of_the_command() {
        let (c, r) = redirections("echo hi >out.txt 2>&1");
        assert_eq!(c.trim(), "echo hi");
        assert!(matches!(&r[0], Redirect::Out(1, n, false) if n == "out.txt"));
        assert!(matches!(r[1], Redirect::Dup { to: 2, from: 1 }));
        let (c, r) = redirections("sort < \"in file\" >> log");
        assert_eq!(c.trim(), "sort");
        assert!(matches!(&r[0], Redirect::In(n) if n == "in file"));
        assert!(matches!(&r[1], Redirect::Out(1, n, true) if n == "log"));
    }

    #[test]
    fn internal_commands_split_after_their_name() {
        assert_eq!(split_command("echo.hi"), ("ECHO".into(), ".hi".into()));
        assert_eq!(split_command("cd\\"), ("CD".into(), "\\".into()));
        assert_eq!(
            split_command("C:\\BIN\\TOOL.EXE /x"),
            ("C:\\BIN\\TOOL.EXE".into(), " /x".into())
        );
    }

    #[test]
    fn the_image_is_a_program_that_calls_cmdshell() {
        let m = loader::parse(&image()).unwrap();
        assert_eq!(m.imports, vec![MODULE.to_string()]);
        assert!(m.start.is_some());
    }
}
