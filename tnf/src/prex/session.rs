//! A prex session: the probe table with each probe's state (enabled,
//! traced, connected functions), sets, function aliases, the history of
//! probe commands (replayed on probes that appear later, as prex does for
//! objects loaded by dlopen), and kernel mode's buffer, ktrace switch and
//! process filter. Output goes to two strings the caller drains: prex
//! prints results on stdout and complaints on stderr.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::lex::{logical_lines, tokens};
use super::matching::{Unit, any_matches, units, units_matching};
use super::parse::{
    Buffer, Expr, ParseError, Pfilter, ProbeOp, QuitMode, Selector, Spec, Stmt, parse,
};
use super::{help, regex::EdRegex};
use crate::probe::ProbeDesc;

/// User mode (a program's probes) or kernel mode (`prex -k`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Probes of the program prex started.
    User,
    /// os2trace's system probes.
    Kernel,
}

/// What the caller does after a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Read the next command.
    Prompt,
    /// Resume the target (kernel mode: the workload, if there is one).
    Continue,
    /// Leave prex.
    Quit(QuitMode),
}

/// One probe and its state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeState {
    /// The probe.
    pub desc: ProbeDesc,
    /// The module it is in.
    pub object: String,
    /// Enabled (starts off).
    pub enabled: bool,
    /// Traced (starts on for user probes, off for kernel probes).
    pub traced: bool,
    /// Connected functions.
    pub funcs: Vec<String>,
}

impl ProbeState {
    /// The attribute string prex matches: its own state, then the probe's.
    pub fn attributes(&self) -> String {
        let onoff = |b: bool| if b { "on" } else { "off" };
        let mut funcs = String::new();
        for f in &self.funcs {
            write!(funcs, " &{f}").ok();
        }
        format!(
            "enable {}; trace {}; object {}; funcs{};{}",
            onoff(self.enabled),
            onoff(self.traced),
            self.object,
            funcs,
            self.desc.attributes()
        )
    }

    /// Writes a trace record when it fires.
    pub fn records(&self) -> bool {
        self.enabled && self.traced
    }

    /// Calls &debug when it fires.
    pub fn debugs(&self) -> bool {
        self.enabled && self.funcs.iter().any(|f| f == "debug")
    }
}

/// Kernel mode's state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelState {
    /// The buffer's size, if allocated.
    pub buffer: Option<u64>,
    /// `ktrace on`.
    pub tracing: bool,
    /// `pfilter on`.
    pub filtering: bool,
    /// The process filter set.
    pub pids: BTreeSet<u64>,
}

/// prex's kernel buffer default, 384 KB.
pub const KERNEL_BUFFER: u64 = 384 * 1024;

/// How deep `source` may nest.
const MAX_SOURCE_DEPTH: usize = 16;

/// A prex session.
#[derive(Clone, Debug)]
pub struct Session {
    mode: Mode,
    probes: Vec<ProbeState>,
    sets: BTreeMap<String, Vec<Expr>>,
    fcns: BTreeMap<String, String>,
    history: Vec<(ProbeOp, Selector)>,
    tracefile: String,
    /// Kernel mode's buffer, ktrace and filter.
    pub kernel: KernelState,
    /// Physical memory, for the buffer limit (half of it).
    pub memory: u64,
    depth: usize,
    /// What prex printed on stdout since the caller last took it.
    pub out: String,
    /// What prex printed on stderr since the caller last took it.
    pub err: String,
}

impl Session {
    /// A session in `mode`, tracing to `tracefile` (user mode).
    pub fn new(mode: Mode, tracefile: &str) -> Self {
        let mut sets = BTreeMap::new();
        let all = EdRegex::new(".*").map(|r| {
            vec![Expr {
                attr: Spec::Ident("keys".into()),
                value: Spec::Regex(r),
            }]
        });
        sets.insert("all".to_string(), all.unwrap_or_default());
        let mut fcns = BTreeMap::new();
        fcns.insert("debug".to_string(), "tnf_probe_debug".to_string());
        Session {
            mode,
            probes: Vec::new(),
            sets,
            fcns,
            history: Vec::new(),
            tracefile: tracefile.to_string(),
            kernel: KernelState::default(),
            memory: 64 * 1024 * 1024,
            depth: 0,
            out: String::new(),
            err: String::new(),
        }
    }

    /// The banner prex prints before its first prompt.
    pub fn banner(&self) -> &'static str {
        match self.mode {
            Mode::User => {
                "Target process stopped\nType \"continue\" to resume the target, \"help\" for help ...\n"
            }
            Mode::Kernel => "Type \"help\" for help ...\n",
        }
    }

    /// The probes and their state.
    pub fn probes(&self) -> &[ProbeState] {
        &self.probes
    }

    /// Adds the probes of a newly loaded module; the history is replayed
    /// on them. Returns the index of the first.
    pub fn add_probes(
        &mut self,
        object: &str,
        descs: impl IntoIterator<Item = ProbeDesc>,
    ) -> usize {
        let first = self.probes.len();
        let traced = self.mode == Mode::User;
        for desc in descs {
            self.probes.push(ProbeState {
                desc,
                object: object.to_string(),
                enabled: false,
                traced,
                funcs: Vec::new(),
            });
        }
        let history = self.history.clone();
        for (op, sel) in &history {
            if let Ok(hits) = self.select(sel) {
                for i in hits.into_iter().filter(|i| *i >= first) {
                    self.apply(op, i);
                }
            }
        }
        first
    }

    /// Runs `text` (one or more lines; `line` numbers its first line),
    /// stopping at `continue` or `quit`. `loader` reads files for `source`.
    pub fn run(
        &mut self,
        text: &str,
        line: usize,
        loader: &mut dyn FnMut(&str) -> Result<String, String>,
    ) -> Action {
        for (n, l) in logical_lines(text) {
            let action = self.line(&l, line + n - 1, loader);
            if action != Action::Prompt {
                return action;
            }
        }
        Action::Prompt
    }

    fn line(
        &mut self,
        text: &str,
        line: usize,
        loader: &mut dyn FnMut(&str) -> Result<String, String>,
    ) -> Action {
        match parse(&tokens(text)) {
            Ok(stmt) => self.execute(stmt, loader),
            Err(ParseError::Syntax) => {
                writeln!(self.err, "prex: syntax error, line {line}").ok();
                Action::Prompt
            }
            Err(ParseError::Regex(e)) => {
                writeln!(self.err, "prex: {e}, line {line}").ok();
                Action::Prompt
            }
        }
    }

    /// The probes a selector picks, in table order.
    fn select(&self, sel: &Selector) -> Result<Vec<usize>, String> {
        let exprs = match sel {
            Selector::Set(s) => self
                .sets
                .get(s)
                .ok_or_else(|| format!("prex: set ${s} not defined"))?,
            Selector::Exprs(e) => e,
        };
        Ok((0..self.probes.len())
            .filter(|i| any_matches(exprs, &units(&self.probes[*i].attributes())))
            .collect())
    }

    fn apply(&mut self, op: &ProbeOp, i: usize) {
        let p = &mut self.probes[i];
        match op {
            ProbeOp::Enable => p.enabled = true,
            ProbeOp::Disable => p.enabled = false,
            ProbeOp::Trace => p.traced = true,
            ProbeOp::Untrace => p.traced = false,
            ProbeOp::Clear => p.funcs.clear(),
            ProbeOp::Connect(f) => {
                if !p.funcs.contains(f) {
                    p.funcs.push(f.clone());
                }
            }
        }
    }

    fn kernel_only(&mut self, what: &str) -> bool {
        if self.mode != Mode::Kernel {
            writeln!(
                self.err,
                "prex: \"{what}\" is valid only in kernel mode (prex -k)"
            )
            .ok();
            return false;
        }
        true
    }

    fn execute(
        &mut self,
        stmt: Stmt,
        loader: &mut dyn FnMut(&str) -> Result<String, String>,
    ) -> Action {
        match stmt {
            Stmt::Empty => {}
            Stmt::Help(None) => self.out.push_str(help::SUMMARY),
            Stmt::Help(Some(t)) => match help::text(&t) {
                Some(h) => self.out.push_str(h),
                None => {
                    writeln!(self.err, "prex: no help for \"{t}\"").ok();
                }
            },
            // In kernel mode the caller decides: os2trace's "kernel" has a
            // workload to resume only when prex -k was given a program.
            Stmt::Continue => return Action::Continue,
            Stmt::Quit(q) => {
                if self.mode == Mode::Kernel && matches!(q, QuitMode::Kill | QuitMode::Resume) {
                    writeln!(
                        self.err,
                        "prex: \"quit kill\" and \"quit resume\" are invalid in kernel mode"
                    )
                    .ok();
                    return Action::Prompt;
                }
                return Action::Quit(q);
            }
            Stmt::Probe(op, sel) => {
                if let ProbeOp::Connect(f) = &op
                    && !self.fcns.contains_key(f)
                {
                    writeln!(self.err, "prex: function &{f} not defined").ok();
                    return Action::Prompt;
                }
                match self.select(&sel) {
                    Ok(hits) => {
                        for i in hits {
                            self.apply(&op, i);
                        }
                        self.history.push((op, sel));
                    }
                    Err(e) => {
                        writeln!(self.err, "{e}").ok();
                    }
                }
            }
            Stmt::CreateSet(name, exprs) => {
                self.sets.insert(name, exprs);
            }
            Stmt::CreateFcn(name, entry) => {
                self.fcns.insert(name, entry);
            }
            Stmt::Source(file) => return self.source(&file, loader),
            Stmt::ListSets => {
                for (name, exprs) in &self.sets {
                    let parts: Vec<String> = exprs.iter().map(|e| e.to_string()).collect();
                    writeln!(self.out, "${name} {}", parts.join(" ")).ok();
                }
            }
            Stmt::ListHistory => {
                for (i, (op, sel)) in self.history.iter().enumerate() {
                    writeln!(self.out, "[{i}] {op} {sel}").ok();
                }
            }
            Stmt::ListTracefile => match self.mode {
                Mode::User => {
                    writeln!(self.out, "Current trace file is: {}", self.tracefile).ok();
                }
                Mode::Kernel => self
                    .out
                    .push_str("There is no trace file in kernel mode!\n"),
            },
            Stmt::ListFcns => {
                for (name, entry) in &self.fcns {
                    writeln!(self.out, "&{name:<10}{entry}").ok();
                }
            }
            Stmt::ListProbes(specs, sel) => self.list_probes(specs, &sel),
            Stmt::ListValues(specs) => self.list_values(&specs),
            Stmt::Pfilter(p) => {
                if self.kernel_only("pfilter") {
                    self.pfilter(p);
                }
            }
            Stmt::Ktrace(on) => {
                if self.kernel_only("ktrace") {
                    self.ktrace(on);
                }
            }
            Stmt::Buffer(b) => {
                if self.kernel_only("buffer") {
                    self.buffer(b);
                }
            }
        }
        Action::Prompt
    }

    fn source(
        &mut self,
        file: &str,
        loader: &mut dyn FnMut(&str) -> Result<String, String>,
    ) -> Action {
        if self.depth >= MAX_SOURCE_DEPTH {
            writeln!(
                self.err,
                "prex: source nested deeper than {MAX_SOURCE_DEPTH}: {file}"
            )
            .ok();
            return Action::Prompt;
        }
        match loader(file) {
            Ok(text) => {
                self.depth += 1;
                let action = self.run(&text, 1, loader);
                self.depth -= 1;
                action
            }
            Err(e) => {
                writeln!(self.err, "prex: cannot open {file}: {e}").ok();
                Action::Prompt
            }
        }
    }

    fn list_probes(&mut self, specs: Vec<Spec>, sel: &Selector) {
        let specs = if specs.is_empty() {
            ["name", "enable", "trace", "file", "line", "funcs"]
                .iter()
                .map(|s| Spec::Ident((*s).to_string()))
                .collect()
        } else {
            specs
        };
        let hits = match self.select(sel) {
            Ok(h) => h,
            Err(e) => {
                writeln!(self.err, "{e}").ok();
                return;
            }
        };
        for i in hits {
            let us: Vec<Unit> = units(&self.probes[i].attributes());
            let mut line = String::new();
            for spec in &specs {
                let mut any = false;
                for u in units_matching(spec, &us) {
                    any = true;
                    let v = if u.raw.is_empty() {
                        "<no value>"
                    } else {
                        &u.raw
                    };
                    write!(line, "{}={v} ", u.attr).ok();
                }
                if !any {
                    line.push_str("<no attr> ");
                }
            }
            writeln!(self.out, "{line}").ok();
        }
    }

    fn list_values(&mut self, specs: &[Spec]) {
        let mut values: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for p in &self.probes {
            for u in units(&p.attributes()) {
                if specs.is_empty() || specs.iter().any(|s| s.matches(&u.attr)) {
                    values
                        .entry(u.attr.clone())
                        .or_default()
                        .extend(u.values.iter().cloned());
                }
            }
        }
        for (attr, vals) in values {
            writeln!(self.out, "{attr} =").ok();
            for v in vals {
                writeln!(self.out, "\t{v}").ok();
            }
        }
    }

    fn pfilter(&mut self, p: Pfilter) {
        let k = &mut self.kernel;
        match p {
            Pfilter::Show => {
                let pids: Vec<String> = k.pids.iter().map(|p| p.to_string()).collect();
                let onoff = if k.filtering { "on" } else { "off" };
                writeln!(
                    self.out,
                    "Process filtering is {onoff}\nProcess filter set is {{{}}}",
                    pids.join(", ")
                )
                .ok();
            }
            Pfilter::Set(on) => k.filtering = on,
            Pfilter::Add(pids) => k.pids.extend(pids),
            Pfilter::Delete(pids) => {
                for p in pids {
                    if !k.pids.remove(&p) {
                        writeln!(self.err, "prex: pid {p} is not in the process filter set").ok();
                    }
                }
            }
        }
    }

    fn ktrace(&mut self, on: Option<bool>) {
        match on {
            None => {
                let onoff = if self.kernel.tracing { "on" } else { "off" };
                writeln!(self.out, "Tracing is {onoff}").ok();
            }
            Some(true) if self.kernel.buffer.is_none() => {
                self.err
                    .push_str("prex: no trace buffer allocated (use \"buffer alloc\")\n");
            }
            Some(on) => self.kernel.tracing = on,
        }
    }

    fn buffer(&mut self, b: Buffer) {
        match b {
            Buffer::Show => match self.kernel.buffer {
                None => self.out.push_str("No trace buffer allocated\n"),
                Some(n) => {
                    writeln!(self.out, "Trace buffer size is {n} bytes").ok();
                }
            },
            Buffer::Alloc(_) if self.kernel.buffer.is_some() => {
                self.err.push_str("There is already a buffer allocated\n");
            }
            Buffer::Alloc(size) => {
                let n = size.unwrap_or(KERNEL_BUFFER);
                if n > self.memory / 2 {
                    writeln!(
                        self.err,
                        "prex: buffer of {n} bytes is more than half of physical memory"
                    )
                    .ok();
                } else if n < u64::from(crate::layout::MIN_FILE_SIZE) {
                    writeln!(self.err, "prex: buffer of {n} bytes is smaller than 128 KB").ok();
                } else {
                    self.kernel.buffer = Some(n);
                    writeln!(self.out, "Buffer of size {n} bytes allocated").ok();
                }
            }
            Buffer::Dealloc if self.kernel.tracing => {
                self.err.push_str(
                    "prex: cannot deallocate the buffer while tracing is on (ktrace off first)\n",
                );
            }
            Buffer::Dealloc if self.kernel.buffer.is_none() => {
                self.out.push_str("No trace buffer allocated\n")
            }
            Buffer::Dealloc => {
                self.kernel.buffer = None;
                self.out.push_str("buffer deallocated\n");
            }
        }
    }
}
