//! The TSF compiler: TRCUST's translation of a trace source file into a
//! TDF, a TFF and a TMI, with its messages.
//!
//! The compiler works in one pass over the tokens, as TRCUST does, so that
//! its messages come out in TRCUST's order and carry the line numbers
//! TRCUST reports: the header (`header`), then each TRACE statement
//! (`trace`), whose address forms and data statements are in
//! `operands`, RETEP's search for the return point in [`retep`], and what
//! comes from debug information (`@file,line`, `.var`, `RETEP=CV`) in
//! `debug`.
//! Code comes from [`crate::codegen`]; every program is checked by
//! `rpn_vm`'s verifier (16 stack entries, 255 bytes) as it grows.
//!
//! Where TRCUST 3.05A is wrong (TRCUST-FORMATS.md, defects) the compiler
//! does the right thing: a duplicate minor keeps the first tracepoint and
//! the TDF is still written; TYPE= or GROUP= may end the file; `-reg`
//! subtracts; truncations warn (messages 142 and 143). Module bytes come
//! from `loader`, which decodes iterated pages per the LX specification.

mod debug;
mod header;
mod operands;
pub mod retep;
mod trace;

use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

use stda::tff::{Tff, TffRecord};

use crate::definition::{NameEntry, Tdf, TdfRecord};
use crate::diag::{ConsoleLine, Diagnostic, Severity};
use crate::target::{ModuleImage, SymbolTable};
use crate::tmi::{Tmi, TmiRecord, orbit_id};
use crate::tsf::lexer::Lexer;

pub use trace::UNTRACEABLE;

/// Whether a tracepoint cannot be placed on an instruction starting with
/// `opcode` ([`UNTRACEABLE`]).
pub fn trace_untraceable(opcode: u8) -> bool {
    trace::UNTRACEABLE.contains(&opcode)
}

/// TRCUST's options that affect compilation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// `/D`: allow duplicate minor codes.
    pub allow_duplicate_minors: bool,
    /// `/RAS`: MAJOR=0 is kept.
    pub ras: bool,
    /// `/P`: keep the MODNAME path in the TDF and TMI.
    pub keep_path: bool,
    /// `/I`: MAP symbols are matched case-insensitively.
    pub ignore_case: bool,
    /// `/RMn`: RETEP match criteria (bit 1 LEAVE, 2 JMP, 4 RET).
    pub retep_mask: u8,
    /// `/RSnnn`: RETEP search range in bytes back from the routine's end.
    pub retep_range: Option<u32>,
    /// `/RP`: `RET n` (Pascal returns) count as returns.
    pub retep_pascal: bool,
    /// `/NODE`: ignore debug information.
    pub no_debug: bool,
    /// `/NOLN`: ignore the line numbers of the debug information.
    pub no_lines: bool,
}

/// A module opened for the compiler.
pub struct OpenedModule {
    /// The path shown in `Using module file:` and in messages.
    pub display: String,
    /// Its objects.
    pub image: Box<dyn ModuleImage>,
}

/// Where the compiler gets the module to trace.
pub trait ModuleSource {
    /// Opens the module MODNAME names (with `.DLL` added when it has no
    /// extension). `Err` carries the name to show in `file not found or
    /// access denied : name`, or a FATAL diagnostic text.
    fn open(&mut self, modname: &str) -> Result<OpenedModule, ModuleOpenError>;

    /// The symbols of the `.SYM` file of the module MODNAME names, used
    /// where no MAP file is given: `None` when there is none, else the
    /// name to show in `Using symbol file:` and the symbols, or the
    /// reason the file cannot be read. No `.SYM` file by default.
    fn symbols(&mut self, modname: &str) -> Option<(String, Result<SymbolTable, String>)> {
        let _ = modname;
        None
    }
}

/// Why a module could not be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModuleOpenError {
    /// The file does not exist (FATAL 2 with this name).
    NotFound(String),
    /// The file is not an LX or NE module (FATAL 10 with this name).
    BadHeader(String),
    /// The `/L=` file does not exist: TRCUST announces it (`Using module
    /// file:` with this name) and then reports it not found.
    LoadModuleNotFound(String),
}

/// A module source that has no modules: every dynamic tracepoint fails.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoModules;

impl ModuleSource for NoModules {
    fn open(&mut self, modname: &str) -> Result<OpenedModule, ModuleOpenError> {
        Err(ModuleOpenError::NotFound(modname.to_string()))
    }
}

/// What a compilation produced.
#[derive(Debug, Clone, Default)]
pub struct Compilation {
    /// Console lines in order (`Using module file:` and the diagnostics).
    pub console: Vec<ConsoleLine>,
    /// A FATAL or SEVERE message stopped the run: nothing is written.
    pub aborted: bool,
    /// The TDF, when at least one dynamic tracepoint was accepted.
    pub tdf: Option<Tdf>,
    /// The TFF, when at least one accepted tracepoint has a DESC.
    pub tff: Option<Tff>,
    /// The TMI, when an accepted tracepoint has ORBIT=.
    pub tmi: Option<Tmi>,
    /// Tracepoints accepted (static and dynamic).
    pub accepted: usize,
    /// Diagnostics found while the TDF is built (duplicate addresses):
    /// TRCUST prints them after the TFF's `Creating` line.
    pub tdf_console: Vec<ConsoleLine>,
}

impl Compilation {
    /// The diagnostics, in order.
    pub fn diagnostics(&self) -> impl Iterator<Item = &Diagnostic> {
        self.console
            .iter()
            .chain(&self.tdf_console)
            .filter_map(|l| match l {
                ConsoleLine::Diag(d) => Some(d),
                ConsoleLine::Text(_) => None,
            })
    }
}

/// Why a statement stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// An ERROR: the tracepoint is discarded.
    Discard,
    /// A FATAL or SEVERE message: the run ends.
    Abort,
}

pub(crate) type Step<T> = Result<T, Stop>;

/// A dynamic tracepoint to keep: its record, its ORBIT (mask, variable),
/// whether that ORBIT was assigned automatically.
pub(crate) type Dynamic = (TdfRecord, Option<(u32, u32)>, bool);

/// An accepted tracepoint: the line of its TRACE, its minor, its format
/// and, for a dynamic one, its record and what the TMI needs.
struct Accepted {
    line: u32,
    minor: u16,
    tff: Option<TffRecord>,
    dynamic: Option<Dynamic>,
}

/// Compiler state.
pub(crate) struct Compiler<'a> {
    pub(crate) lex: Lexer<'a>,
    pub(crate) opts: &'a Options,
    /// The MAP file's symbols, or those of the module's `.SYM` file once
    /// read ([`ModuleSource::symbols`]).
    map: Option<Rc<SymbolTable>>,
    modules: &'a mut dyn ModuleSource,
    pub(crate) console: Vec<ConsoleLine>,
    // Header.
    pub(crate) modname: Option<Vec<u8>>,
    pub(crate) major: Option<u16>,
    pub(crate) max_data_len: Option<u16>,
    pub(crate) tdf_id: Option<u16>,
    pub(crate) entries: Vec<NameEntry>,
    /// TYPELIST / GROUPLIST statements read (header keywords after them
    /// are stray words).
    pub(crate) entries_seen: Vec<String>,
    /// TYPELIST and GROUPLIST entries read, valid or not.
    pub(crate) list_counts: (usize, usize),
    /// The keyword being read, as written (for `'=' expected before`).
    pub(crate) keyword: String,
    pub(crate) types: HashMap<String, u16>,
    pub(crate) groups: HashMap<String, u16>,
    // Module, opened at the first dynamic tracepoint.
    module: Option<OpenedModule>,
    // Its debug information, read at first use.
    debug: debug::DebugState,
    // Tracepoints.
    pub(crate) trace_count: u32,
    pub(crate) explicit_minors: Option<bool>,
    pub(crate) auto_orbits: u32,
    accepted: Vec<Accepted>,
    accepted_count: usize,
}

impl<'a> Compiler<'a> {
    /// Emits a diagnostic at the lexer's line.
    pub(crate) fn diag(&mut self, severity: Severity, text: impl Into<String>) {
        let d = Diagnostic::new(self.lex.line, severity, text);
        self.console.push(ConsoleLine::Diag(d));
    }

    /// An ERROR that discards the tracepoint.
    pub(crate) fn error(&mut self, text: impl Into<String>) -> Stop {
        self.diag(Severity::Error, text);
        Stop::Discard
    }

    /// A SEVERE message that ends the run.
    pub(crate) fn severe(&mut self, text: impl Into<String>) -> Stop {
        self.diag(Severity::Severe, text);
        Stop::Abort
    }

    /// A lexer failure (already FATAL or SEVERE).
    pub(crate) fn lex_failed(&mut self, d: Diagnostic) -> Stop {
        self.console.push(ConsoleLine::Diag(d));
        Stop::Abort
    }

    pub(crate) fn major(&self) -> u16 {
        self.major.unwrap_or(1)
    }

    /// The module, opened on first use: `Using module file:` is printed
    /// then, as TRCUST does.
    pub(crate) fn module(&mut self) -> Step<&dyn ModuleImage> {
        self.open_module(true)
    }

    /// The module; without MODNAME, SEVERE `module name not specified`
    /// when `named`, else (`TP=@file`, as TRCUST does) the module `""`,
    /// which is not found.
    pub(crate) fn open_module(&mut self, named: bool) -> Step<&dyn ModuleImage> {
        if self.module.is_none() {
            let name = match self.modname.as_deref() {
                Some(n) => n,
                None if named => return Err(self.severe("module name not specified")),
                None => &[],
            };
            let name = crate::tsf::lexer::latin1(name);
            match self.modules.open(&name) {
                Ok(m) => {
                    self.console.push(ConsoleLine::Text(format!(
                        "Using module file: {}",
                        m.display
                    )));
                    self.module = Some(m);
                }
                Err(ModuleOpenError::LoadModuleNotFound(n)) => {
                    self.console
                        .push(ConsoleLine::Text(format!("Using module file: {n}")));
                    self.diag(
                        Severity::Fatal,
                        format!("file not found or access denied : {n}"),
                    );
                    return Err(Stop::Abort);
                }
                Err(ModuleOpenError::NotFound(n)) => {
                    self.diag(
                        Severity::Fatal,
                        format!("file not found or access denied : {n}"),
                    );
                    return Err(Stop::Abort);
                }
                Err(ModuleOpenError::BadHeader(n)) => {
                    self.diag(Severity::Fatal, format!("unknown EXE header type for: {n}"));
                    return Err(Stop::Abort);
                }
            }
        }
        match &self.module {
            Some(m) => Ok(m.image.as_ref()),
            None => Err(Stop::Abort),
        }
    }

    pub(crate) fn module_display(&self) -> String {
        self.module
            .as_ref()
            .map(|m| m.display.clone())
            .unwrap_or_default()
    }

    /// The symbol table: the MAP file's, else the module's `.SYM`
    /// file's (read at first use, with `Using symbol file:`), else
    /// SEVERE 39.
    pub(crate) fn symbols(&mut self) -> Step<Rc<SymbolTable>> {
        if let Some(m) = &self.map {
            return Ok(m.clone());
        }
        if let Some(name) = self.modname.as_deref() {
            let name = crate::tsf::lexer::latin1(name);
            if let Some((shown, read)) = self.modules.symbols(&name) {
                self.console
                    .push(ConsoleLine::Text(format!("Using symbol file: {shown}")));
                match read {
                    Ok(t) => {
                        let t = Rc::new(t);
                        self.map = Some(t.clone());
                        return Ok(t);
                    }
                    Err(e) => {
                        self.diag(
                            Severity::Fatal,
                            format!("error reading file: {shown}, Rc = {e}"),
                        );
                        return Err(Stop::Abort);
                    }
                }
            }
        }
        let shown = self.module_display();
        Err(self.severe(format!("symbolic info not given for {shown}")))
    }

    /// Records an accepted tracepoint (line of its TRACE, minor, format,
    /// dynamic record). Duplicates are found when the files are built.
    pub(crate) fn accept(
        &mut self,
        line: u32,
        minor: u16,
        tff: Option<TffRecord>,
        dynamic: Option<Dynamic>,
    ) {
        self.accepted_count += 1;
        self.accepted.push(Accepted {
            line,
            minor,
            tff,
            dynamic,
        });
    }

    /// Drops the tracepoints whose minor is taken (unless `/D`): the first
    /// keeps it, each other is reported at its TRACE's line, by minor.
    fn drop_duplicate_minors(&mut self, accepted: &mut Vec<Accepted>) {
        if self.opts.allow_duplicate_minors {
            return;
        }
        let mut seen = BTreeSet::new();
        let mut dropped: Vec<(u16, usize, u32)> = Vec::new();
        for (i, a) in accepted.iter().enumerate() {
            if !seen.insert(a.minor) {
                dropped.push((a.minor, i, a.line));
            }
        }
        dropped.sort();
        for &(minor, _, line) in &dropped {
            self.console.push(ConsoleLine::Diag(Diagnostic::new(
                line,
                Severity::Error,
                format!("duplicate minor code = {minor:04X}, ignored"),
            )));
        }
        let gone: BTreeSet<usize> = dropped.iter().map(|d| d.1).collect();
        let mut i = 0;
        accepted.retain(|_| {
            i += 1;
            !gone.contains(&(i - 1))
        });
    }

    /// The dynamic tracepoints by address, one per address. They are
    /// sorted by address with [`quicksort`], which leaves tracepoints of
    /// the same address in an order of its own; of those the last one
    /// keeps the address, each other is reported (in `console`) at its
    /// TRACE's line. (**Inferred**: this reproduces which TRACE TRCUST
    /// reports and keeps in most cases tried, not in all.)
    fn unique_addresses(accepted: &[Accepted], console: &mut Vec<ConsoleLine>) -> Vec<Dynamic> {
        let mut dynamic: Vec<(u32, &Dynamic)> = accepted
            .iter()
            .filter_map(|a| Some((a.line, a.dynamic.as_ref()?)))
            .collect();
        quicksort(&mut dynamic, &|(_, d)| (d.0.object, d.0.offset));
        let mut out: Vec<Dynamic> = Vec::new();
        for (k, (line, d)) in dynamic.iter().enumerate() {
            let key = (d.0.object, d.0.offset);
            let later = dynamic
                .get(k + 1)
                .is_some_and(|(_, n)| (n.0.object, n.0.offset) == key);
            if later {
                console.push(ConsoleLine::Diag(Diagnostic::new(
                    *line,
                    Severity::Error,
                    format!("duplicate TP address {:08X}:{:08X}, ignored", key.0, key.1),
                )));
            } else {
                out.push((*d).clone());
            }
        }
        out
    }

    fn finish(mut self) -> Compilation {
        let module_name = self.stored_module_name();
        let major = self.major();
        let mut points = std::mem::take(&mut self.accepted);
        self.drop_duplicate_minors(&mut points);
        let tff_records: Vec<TffRecord> = points.iter().filter_map(|a| a.tff.clone()).collect();
        let mut tdf_console = Vec::new();
        let kept = Self::unique_addresses(&points, &mut tdf_console);
        let any_auto_orbit = kept.iter().any(|d| d.2);
        let accepted: Vec<(TdfRecord, Option<(u32, u32)>)> =
            kept.into_iter().map(|(r, o, _)| (r, o)).collect();
        let vars = if any_auto_orbit {
            let top = accepted
                .iter()
                .filter_map(|a| a.1.map(|(_, v)| v))
                .max()
                .unwrap_or(0);
            vec![0; top as usize + 1]
        } else {
            Vec::new()
        };
        let tdf_id = self.tdf_id.unwrap_or(0);
        let tmi = self.build_tmi(&accepted, &module_name, major, tdf_id);
        let tdf = (!accepted.is_empty()).then(|| Tdf {
            max_data_len: self
                .max_data_len
                .unwrap_or(crate::definition::DEFAULT_MAX_DATA_LEN),
            major,
            module: module_name.clone(),
            tdf_id,
            entries: self.entries.clone(),
            vars,
            records: accepted.into_iter().map(|a| a.0).collect(),
            ..Tdf::default()
        });
        let tff = (!tff_records.is_empty()).then_some(Tff {
            major,
            records: tff_records,
        });
        Compilation {
            console: self.console,
            aborted: false,
            tdf,
            tff,
            tmi,
            accepted: self.accepted_count,
            tdf_console,
        }
    }

    fn build_tmi(
        &self,
        accepted: &[(TdfRecord, Option<(u32, u32)>)],
        module: &[u8],
        major: u16,
        tdf_id: u16,
    ) -> Option<Tmi> {
        let mut records: Vec<TmiRecord> = accepted
            .iter()
            .filter_map(|(record, orbit)| {
                let (mask, var) = (*orbit)?;
                let (object, offset, size, name) = match self
                    .map
                    .as_deref()
                    .and_then(|m| m.containing(record.object, record.offset))
                {
                    Some((s, size)) => (s.object, s.offset, size, s.name.clone().into_bytes()),
                    None => (record.object, record.offset, u32::MAX, Vec::new()),
                };
                Some(TmiRecord {
                    orbit_id: orbit_id(mask, var),
                    object,
                    offset,
                    size,
                    name,
                })
            })
            .collect();
        if records.is_empty() {
            return None;
        }
        records.sort_by_key(|r| r.orbit_id);
        Some(Tmi {
            major,
            module: module.to_vec(),
            tdf_id,
            reserved: [0; 30],
            records,
        })
    }

    /// MODNAME as stored: `.DLL` added when it has no extension (but
    /// OS2KRNL), without its path unless `/P`.
    fn stored_module_name(&self) -> Vec<u8> {
        let mut name = self.modname.clone().unwrap_or_default();
        let base = crate::module::file_name_bytes(&name);
        if !name.is_empty() && !base.contains(&b'.') && !base.eq_ignore_ascii_case(b"OS2KRNL") {
            name.extend_from_slice(b".DLL");
        }
        if self.opts.keep_path {
            return name;
        }
        crate::module::file_name_bytes(&name).to_vec()
    }
}

/// Sorts `v` by `key` with a quicksort that takes the first element as
/// the pivot and partitions from both ends (Hoare's scheme): not stable,
/// the order TRCUST's sort leaves equal records in, as far as observed.
fn quicksort<T, K: Ord>(v: &mut [T], key: &impl Fn(&T) -> K) {
    if v.len() < 2 {
        return;
    }
    let hi = v.len() - 1;
    let (mut i, mut j) = (0usize, hi + 1);
    loop {
        i += 1;
        while i <= hi && key(&v[i]) < key(&v[0]) {
            i += 1;
        }
        j -= 1;
        while key(&v[j]) > key(&v[0]) {
            j -= 1;
        }
        if i >= j {
            break;
        }
        v.swap(i, j);
    }
    v.swap(0, j);
    let (left, right) = v.split_at_mut(j);
    quicksort(left, key);
    quicksort(&mut right[1..], key);
}

/// Compiles a TSF. `map` is the symbol table from `/M=` (if any); the
/// module is opened through `modules` at the first dynamic tracepoint.
pub fn compile(
    src: &[u8],
    opts: &Options,
    map: Option<&SymbolTable>,
    modules: &mut dyn ModuleSource,
) -> Compilation {
    let mut c = Compiler {
        lex: Lexer::new(src),
        opts,
        map: map.map(|m| Rc::new(m.clone())),
        modules,
        console: Vec::new(),
        modname: None,
        major: None,
        max_data_len: None,
        tdf_id: None,
        entries: Vec::new(),
        entries_seen: Vec::new(),
        list_counts: (0, 0),
        keyword: String::new(),
        types: HashMap::new(),
        groups: HashMap::new(),
        module: None,
        debug: debug::DebugState::Unread,
        trace_count: 0,
        explicit_minors: None,
        auto_orbits: 0,
        accepted: Vec::new(),
        accepted_count: 0,
    };
    let run = c.header().and_then(|()| c.traces());
    match run {
        Ok(()) => c.finish(),
        Err(_) => Compilation {
            console: c.console,
            aborted: true,
            ..Compilation::default()
        },
    }
}
