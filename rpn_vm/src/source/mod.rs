//! Trace program files (DTRACE's `.RPN`): parsing into a typed model and
//! assembling each tracepoint's program to verified bytecode.
//!
//! The format is warp-debug-dtrace.txt §1.3.6 to §1.5. A file is a header
//! (`vars=`, `major=`, `hmte=`, `id=`, `logmax=`, `name=`, `typedef=`,
//! `groupdef=`), then tracepoints, each opened by `minor=` and followed by
//! its own `major=`, `opcode=`, `object=`, `offset=`, `type=a+b`, `group=`
//! and its instructions. Instruction lines are
//! `[label:] operator [operand1 [,operand2 ...]] [; comment]`.
//!
//! Decisions where the seed is silent:
//! * A line holding `=` is a `key=value` line; several may share a line
//!   separated by commas (`minor=1, object=2, offset=0x10`), except that
//!   `typedef=`/`groupdef=` take `keyword,id` as their value.
//! * Blanks are ignored everywhere except inside a `name=` value, which is
//!   only trimmed. Mnemonics, forms, labels and keys are case-insensitive.
//! * Numbers are decimal, `0x` hex or `h`-suffixed hex (which must start
//!   with a digit, so `fh` is a label and `0fh` is 15). `Push D` also takes
//!   a negative number, stored as two's complement.
//! * `Push n` without a form is accepted as `Push W,n` (or `Push D,n` above
//!   0xFFFF), as in the examples of §1.7.
//! * Labels belong to their tracepoint; a label must precede an
//!   instruction (§1.3.7), jumps to labels must go forward.
//! * Header keys after the first `minor=` are errors, except `major=`, which
//!   then belongs to the tracepoint.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt;

use crate::instr::Instr;
use crate::interp::DEFAULT_LOGMAX;
use crate::opcode::Op;
use crate::verify::Program;

mod line;

pub use line::parse_number;
use line::{ParsedTarget, parse_instruction};

/// A problem in a trace program file, at a 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// What is wrong.
    pub message: String,
}

/// All the problems found in one file, in line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceErrors {
    /// The file name the errors are reported against.
    pub file: String,
    /// The errors.
    pub errors: Vec<SourceError>,
}

impl fmt::Display for SourceErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}:{}:{}: {}", self.file, e.line, e.col, e.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for SourceErrors {}

/// The file header.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileHeader {
    /// `vars=`: number of DTO variables (default 0).
    pub vars: Option<u32>,
    /// `major=`: default major code.
    pub major: Option<u16>,
    /// `hmte=`: module handle.
    pub hmte: Option<u32>,
    /// `id=`: DTO grouping id (default 0).
    pub id: Option<u32>,
    /// `logmax=`: log limit (default 512).
    pub logmax: Option<u32>,
    /// `name=`: module name.
    pub name: Option<String>,
    /// `typedef=keyword,id`, in file order.
    pub typedefs: Vec<(String, u32)>,
    /// `groupdef=keyword,id`, in file order.
    pub groupdefs: Vec<(String, u32)>,
}

impl FileHeader {
    /// Variables, defaulting to 0.
    pub fn vars(&self) -> u32 {
        self.vars.unwrap_or(0)
    }

    /// Log limit, defaulting to 512.
    pub fn logmax(&self) -> u32 {
        self.logmax.unwrap_or(DEFAULT_LOGMAX as u32)
    }
}

/// One assembled instruction with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingLine {
    /// Byte offset in the tracepoint's program.
    pub offset: usize,
    /// The instruction.
    pub instr: Instr,
    /// 1-based source line.
    pub line: usize,
    /// 1-based column of the operator.
    pub col: usize,
    /// The source line as written, without its line break.
    pub text: String,
}

/// One tracepoint: its header and its assembled, verified program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracepoint {
    /// `minor=`.
    pub minor: u16,
    /// `major=` override.
    pub major: Option<u16>,
    /// `opcode=`: the byte expected at the tracepoint.
    pub opcode: Option<u8>,
    /// `object=`, numbered from 1.
    pub object: Option<u32>,
    /// `offset=` within the object.
    pub offset: Option<u32>,
    /// `type=` keywords.
    pub types: Vec<String>,
    /// `group=` keyword.
    pub group: Option<String>,
    /// 1-based line of `minor=`.
    pub line: usize,
    /// The program, verified against the header's `vars`.
    pub program: Program,
    /// Listing of the program.
    pub listing: Vec<ListingLine>,
}

impl Tracepoint {
    /// The major code in effect: the tracepoint's, else the file's.
    pub fn effective_major(&self, header: &FileHeader) -> Option<u16> {
        self.major.or(header.major)
    }
}

/// A parsed and assembled trace program file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TraceProgramFile {
    /// The file header.
    pub header: FileHeader,
    /// Tracepoints in file order.
    pub tracepoints: Vec<Tracepoint>,
}

/// A line with blanks removed, remembering each character's column.
struct Squeezed {
    text: String,
    cols: Vec<usize>,
}

impl Squeezed {
    fn new(raw: &str) -> Squeezed {
        let mut text = String::new();
        let mut cols = Vec::new();
        for (i, c) in raw.chars().enumerate() {
            if !c.is_whitespace() {
                text.push(c);
                cols.push(i + 1);
            }
        }
        Squeezed { text, cols }
    }

    /// Column of the character at byte index `i` of `text`.
    fn col(&self, i: usize) -> usize {
        let char_index = self.text[..i.min(self.text.len())].chars().count();
        self.cols
            .get(char_index)
            .copied()
            .unwrap_or_else(|| self.cols.last().map_or(1, |c| c + 1))
    }
}

/// A jump operand before labels are resolved.
#[derive(Debug, Clone)]
enum Target {
    Distance(u32),
    Label { name: String, col: usize },
}

/// A parsed instruction awaiting label resolution.
struct Pending {
    op: Op,
    operand: u32,
    target: Option<Target>,
    line: usize,
    col: usize,
    text: String,
}

/// The tracepoint being collected.
struct Building {
    tp: Tracepoint,
    pending: Vec<Pending>,
    labels: HashMap<String, (usize, usize, usize)>,
    open_labels: Vec<(String, usize, usize)>,
}

/// Where a trace program file stops being UTF-8: the 1-based line and
/// column of the first bad byte, and the byte. Old files often have
/// Latin-1 comments; every tool reports them at `FILE:LINE:COL` with this.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotUtf8 {
    /// Line, from 1.
    pub line: usize,
    /// Column (characters), from 1.
    pub col: usize,
    /// The first byte that is not UTF-8.
    pub byte: u8,
}

/// A trace program file's bytes as text.
///
/// # Errors
/// [`NotUtf8`]: where the first byte that is not UTF-8 is.
pub fn decode_text(bytes: Vec<u8>) -> Result<String, NotUtf8> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let before = &bytes[..at];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let col = String::from_utf8_lossy(&before[line_start..])
            .chars()
            .count()
            + 1;
        NotUtf8 {
            line,
            col,
            byte: bytes[at],
        }
    })
}

/// Parses and assembles a trace program file.
///
/// # Errors
/// Every problem found, each with its line and column.
pub fn parse(file: &str, text: &str) -> Result<TraceProgramFile, SourceErrors> {
    parse_with(file, text, true)
}

/// [`parse`] without the listings ([`Tracepoint::listing`] stays empty),
/// for tools that verify, run or apply programs and never print their
/// lines: a listing line costs several times the source line it copies,
/// so memory then stays near the file's own size.
///
/// # Errors
/// As [`parse`].
pub fn parse_programs(file: &str, text: &str) -> Result<TraceProgramFile, SourceErrors> {
    parse_with(file, text, false)
}

fn parse_with(file: &str, text: &str, listing: bool) -> Result<TraceProgramFile, SourceErrors> {
    let mut parser = Parser {
        out: TraceProgramFile::default(),
        current: None,
        errors: Vec::new(),
        listing,
    };
    for (index, raw) in text.lines().enumerate() {
        parser.line(index + 1, raw);
    }
    parser.finish_tracepoint();
    if parser.errors.is_empty() {
        Ok(parser.out)
    } else {
        parser.errors.sort_by_key(|e| (e.line, e.col));
        Err(SourceErrors {
            file: file.to_string(),
            errors: parser.errors,
        })
    }
}

struct Parser {
    out: TraceProgramFile,
    current: Option<Building>,
    errors: Vec<SourceError>,
    /// Keep each tracepoint's listing.
    listing: bool,
}

impl Parser {
    fn error(&mut self, line: usize, col: usize, message: impl Into<String>) {
        self.errors.push(SourceError {
            line,
            col,
            message: message.into(),
        });
    }

    fn line(&mut self, line: usize, raw: &str) {
        let code = match raw.find(';') {
            Some(i) => &raw[..i],
            None => raw,
        };
        let sq = Squeezed::new(code);
        if sq.text.is_empty() {
            return;
        }
        if sq.text.contains('=') {
            self.key_values(line, raw, &sq);
        } else {
            self.instruction_line(line, raw, &sq);
        }
    }

    /// `key=value[,key=value...]`.
    fn key_values(&mut self, line: usize, raw: &str, sq: &Squeezed) {
        let text = sq.text.as_str();
        let mut start = 0;
        while start < text.len() {
            // A pair runs to the next comma that begins another `key=`.
            let mut end = text.len();
            let mut search = start;
            while let Some(rel) = text[search..].find(',') {
                let comma = search + rel;
                let rest = &text[comma + 1..];
                let next_is_pair = rest.split(',').next().is_some_and(|s| s.contains('='));
                if next_is_pair {
                    end = comma;
                    break;
                }
                search = comma + 1;
            }
            self.key_value(line, raw, sq, start, &text[start..end]);
            start = end + 1;
        }
    }

    fn key_value(&mut self, line: usize, raw: &str, sq: &Squeezed, at: usize, pair: &str) {
        let col = sq.col(at);
        let Some((key, value)) = pair.split_once('=') else {
            return self.error(line, col, format!("expected key=value, found '{pair}'"));
        };
        let key = key.to_ascii_lowercase();
        let vcol = sq.col(at + key.len() + 1);
        let number = |p: &mut Parser, max: u64| -> Option<u32> {
            match parse_number(value) {
                Some(n) if n <= max => Some(n as u32),
                Some(n) => {
                    p.error(line, vcol, format!("{key}={n} out of range (max {max})"));
                    None
                }
                None => {
                    p.error(line, vcol, format!("invalid number '{value}' for {key}="));
                    None
                }
            }
        };
        let in_tracepoint = self.current.is_some();
        match key.as_str() {
            "minor" => {
                let minor = number(self, 0xFFFF).unwrap_or(0) as u16;
                self.finish_tracepoint();
                self.current = Some(Building {
                    tp: Tracepoint {
                        minor,
                        major: None,
                        opcode: None,
                        object: None,
                        offset: None,
                        types: Vec::new(),
                        group: None,
                        line,
                        program: Program::empty(),
                        listing: Vec::new(),
                    },
                    pending: Vec::new(),
                    labels: HashMap::new(),
                    open_labels: Vec::new(),
                });
            }
            "major" => {
                let major = number(self, 0xFFFF).map(|n| n as u16);
                match &mut self.current {
                    Some(b) => b.tp.major = major,
                    None => self.out.header.major = major,
                }
            }
            "opcode" | "object" | "offset" | "type" | "group" => {
                if !in_tracepoint {
                    return self.error(line, col, format!("missing minor= before {key}="));
                }
                let n = match key.as_str() {
                    "opcode" => number(self, 0xFF),
                    "object" | "offset" => number(self, u64::from(u32::MAX)),
                    _ => None,
                };
                let Some(b) = self.current.as_mut() else {
                    return;
                };
                match key.as_str() {
                    "opcode" => b.tp.opcode = n.map(|n| n as u8),
                    "object" => b.tp.object = n,
                    "offset" => b.tp.offset = n,
                    "type" => {
                        b.tp.types = value
                            .split('+')
                            .filter(|s| !s.is_empty())
                            .map(str::to_string)
                            .collect()
                    }
                    _ => b.tp.group = Some(value.to_string()),
                }
            }
            "vars" | "hmte" | "id" | "logmax" | "name" | "typedef" | "groupdef"
                if in_tracepoint =>
            {
                self.error(
                    line,
                    col,
                    format!("file header key {key}= after the first tracepoint"),
                );
            }
            "vars" => self.out.header.vars = number(self, 0xFFFF),
            "hmte" => self.out.header.hmte = number(self, 0xFFFF),
            "id" => self.out.header.id = number(self, u64::from(u32::MAX)),
            "logmax" => self.out.header.logmax = number(self, 0xFFFF),
            "name" => {
                // Blanks inside a name are kept: take it from the raw line.
                let name = raw
                    .split_once('=')
                    .map(|(_, v)| v.split(';').next().unwrap_or("").trim().to_string())
                    .unwrap_or_default();
                self.out.header.name = Some(if raw.matches('=').count() == 1 {
                    name
                } else {
                    value.to_string()
                });
            }
            "typedef" | "groupdef" => {
                let Some((word, id)) = value.split_once(',') else {
                    return self.error(line, vcol, format!("{key}= needs keyword,id"));
                };
                let Some(id) = parse_number(id).filter(|&n| n <= u64::from(u32::MAX)) else {
                    return self.error(line, vcol, format!("invalid id '{id}' in {key}="));
                };
                let id = id as u32;
                if key == "typedef" {
                    if !id.is_power_of_two() || id == 1 {
                        return self.error(
                            line,
                            vcol,
                            format!("typedef id {id:#x} must be a power of two from 2**1 to 2**31"),
                        );
                    }
                    self.out.header.typedefs.push((word.to_string(), id));
                } else {
                    self.out.header.groupdefs.push((word.to_string(), id));
                }
            }
            _ => self.error(line, col, format!("unknown keyword '{key}='")),
        }
    }

    fn instruction_line(&mut self, line: usize, raw: &str, sq: &Squeezed) {
        let mut text = sq.text.as_str();
        let mut at = 0;
        if self.current.is_none() {
            return self.error(
                line,
                sq.col(0),
                "missing minor=: instructions must follow a tracepoint header",
            );
        }
        // Labels: `name:` (possibly several, possibly alone on the line).
        while let Some(colon) = text.find(':') {
            let label = &text[..colon];
            let col = sq.col(at);
            if label.is_empty()
                || label.starts_with(|c: char| c.is_ascii_digit())
                || label.len() > 255
            {
                return self.error(line, col, format!("invalid label '{label}'"));
            }
            let key = label.to_ascii_lowercase();
            if let Some(b) = self.current.as_mut() {
                b.open_labels.push((key, line, col));
            }
            at += colon + 1;
            text = &text[colon + 1..];
        }
        if text.is_empty() {
            return;
        }
        let col = sq.col(at);
        match parse_instruction(text) {
            Ok((op, operand, target)) => {
                let target = target.map(|t| match t {
                    ParsedTarget::Distance(d) => Target::Distance(d),
                    ParsedTarget::Label(name, rel) => Target::Label {
                        name,
                        col: sq.col(at + rel),
                    },
                });
                let Some(b) = self.current.as_mut() else {
                    return;
                };
                let index = b.pending.len();
                let mut duplicates = Vec::new();
                for (name, l, c) in b.open_labels.drain(..) {
                    match b.labels.entry(name) {
                        Entry::Occupied(e) => {
                            duplicates.push((l, c, format!("duplicate label '{}'", e.key())))
                        }
                        Entry::Vacant(e) => {
                            e.insert((index, l, c));
                        }
                    }
                }
                b.pending.push(Pending {
                    op,
                    operand,
                    target,
                    line,
                    col,
                    text: raw.to_string(),
                });
                for (l, c, m) in duplicates {
                    self.error(l, c, m);
                }
            }
            Err((rel, message)) => self.error(line, sq.col(at + rel), message),
        }
    }

    /// Resolves labels, encodes and verifies the open tracepoint.
    fn finish_tracepoint(&mut self) {
        let Some(mut b) = self.current.take() else {
            return;
        };
        for (name, line, col) in b.open_labels.drain(..) {
            self.errors.push(SourceError {
                line,
                col,
                message: format!("label '{name}' must precede an instruction"),
            });
        }
        let mut offsets = Vec::with_capacity(b.pending.len() + 1);
        let mut offset = 0;
        for p in &b.pending {
            offsets.push(offset);
            offset += p.op.len();
        }
        offsets.push(offset);
        let errors_before = self.errors.len();
        let mut listing = Vec::with_capacity(b.pending.len());
        for (i, p) in b.pending.iter().enumerate() {
            let mut operand = p.operand;
            match &p.target {
                Some(Target::Distance(d)) => operand = *d,
                Some(Target::Label { name, col }) => match b.labels.get(&name.to_ascii_lowercase())
                {
                    None => self.error(p.line, *col, format!("undefined label '{name}'")),
                    Some(&(target, _, _)) if target <= i => {
                        self.error(
                            p.line,
                            *col,
                            format!("backward jump to label '{name}' is not permitted"),
                        );
                    }
                    Some(&(target, _, _)) => {
                        let distance = offsets[target] - offsets[i + 1];
                        operand = distance as u32;
                    }
                },
                None => {}
            }
            listing.push(ListingLine {
                offset: offsets[i],
                instr: Instr::with(p.op, operand),
                line: p.line,
                col: p.col,
                text: p.text.clone(),
            });
        }
        if self.errors.len() > errors_before {
            return;
        }
        let code = crate::instr::encode_all(&listing.iter().map(|l| l.instr).collect::<Vec<_>>());
        match Program::load(&code, self.out.header.vars()) {
            Ok(program) => {
                b.tp.program = program;
                if self.listing {
                    b.tp.listing = listing;
                }
                self.out.tracepoints.push(b.tp);
            }
            Err(e) => {
                let (line, col) = listing
                    .iter()
                    .rev()
                    .find(|l| l.offset <= e.offset)
                    .map_or((b.tp.line, 1), |l| (l.line, l.col));
                self.error(line, col, e.kind.to_string());
            }
        }
    }
}
