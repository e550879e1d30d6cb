//! The formatting engine: one record's data through one TFF rule. The
//! behaviour of every control, and the decisions where the documents are
//! silent, are listed in the [`crate::fmt`] module docs.

use std::fmt::Write as _;

use binread::Cursor;

use super::{Control, FmtItem, parse_fmt};
use crate::tff::TffRecord;

/// What the engine needs to know about a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatInput<'a> {
    /// Major code (printed by `%X`).
    pub major: u16,
    /// Minor code (printed by `%Y`).
    pub minor: u16,
    /// A dynamic record (flags bit 3): `%R` reads a prefix.
    pub dynamic: bool,
    /// The record's data.
    pub data: &'a [u8],
}

/// Formats a record with its rule: the DESC line, then one line per FMT.
/// (TRACEFMT itself uses [`super::PreparedRule`], which parses the FMT
/// strings once and writes into one buffer.)
pub fn format_record(rule: &TffRecord, input: &FormatInput<'_>) -> Vec<String> {
    let mut lines = Vec::with_capacity(1 + rule.fmts.len());
    lines.push(text(&rule.desc));
    let mut cur = RecordState::new(input);
    for fmt in &rule.fmts {
        let mut line = String::new();
        for item in parse_fmt(fmt) {
            cur.item(item, &mut line);
        }
        cur.end_line();
        lines.push(line);
    }
    lines
}

/// Hex dump of data with no formatting rule, in TRACEFMT's dump layout:
/// `Data [+0000  04 00 5A 00 00 0C 00 2B-DF F6 FF FF FF 00 00 01  ..Z....+........ ]`.
pub fn hex_dump(data: &[u8]) -> Vec<String> {
    data.chunks(16)
        .enumerate()
        .map(|(i, chunk)| {
            let mut hex = String::with_capacity(47);
            for (j, b) in chunk.iter().enumerate() {
                if j > 0 {
                    hex.push(if j == 8 { '-' } else { ' ' });
                }
                let _ = write!(hex, "{b:02X}");
            }
            let ascii: String = chunk.iter().map(|&b| printable(b)).collect();
            format!("Data [+{:04X}  {hex:<47}  {ascii} ]", i * 16)
        })
        .collect()
}

fn printable(b: u8) -> char {
    if (0x20..0x7F).contains(&b) {
        char::from(b)
    } else {
        '.'
    }
}

/// Text bytes as ISO-8859-1; control bytes other than tab as `.`.
pub(super) fn text(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    push_text(&mut s, bytes);
    s
}

/// [`text`], appended to `out`.
pub(super) fn push_text(out: &mut String, bytes: &[u8]) {
    if bytes.iter().all(|&b| (0x20..0x7F).contains(&b)) {
        // Printable ASCII, the usual case: one copy.
        out.push_str(std::str::from_utf8(bytes).unwrap_or_default());
        return;
    }
    for &b in bytes {
        out.push(if b < 0x20 && b != b'\t' || b == 0x7F {
            '.'
        } else {
            char::from(b)
        });
    }
}

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";
const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";

/// `v`'s low `digits` hex digits, upper case, appended to `out`.
pub(crate) fn push_hex(out: &mut String, v: u32, digits: u32) {
    for i in (0..digits).rev() {
        out.push(char::from(HEX_UPPER[(v >> (4 * i)) as usize & 15]));
    }
}

fn hex_bytes(bytes: &[u8], upper: bool) -> String {
    let mut s = String::with_capacity(bytes.len() * 3);
    push_hex_bytes(&mut s, bytes, upper);
    s
}

/// Hex bytes, space separated, appended to `out`.
fn push_hex_bytes(out: &mut String, bytes: &[u8], upper: bool) {
    let digits = if upper { HEX_UPPER } else { HEX_LOWER };
    out.reserve(bytes.len() * 3);
    for (i, &b) in bytes.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push(char::from(digits[usize::from(b >> 4)]));
        out.push(char::from(digits[usize::from(b & 15)]));
    }
}

/// Structure names for the shared reader (its errors are printed as
/// `<no data>` or `<only N bytes: ...>`, never returned).
const PREFIX: &str = "FMT item prefix";
const VALUE: &str = "FMT value";

/// The reading state of one record, carried from one FMT line to the
/// next: where the next control reads (a [`Cursor`] over the record's
/// data) and what the previous controls left pending.
pub(super) struct RecordState<'a> {
    input: &'a FormatInput<'a>,
    /// Where the next control reads; never past the end of the data.
    cur: Cursor<'a>,
    /// The current prefixed item: where its bytes start and end.
    item: Option<(u64, u64)>,
    /// A fault item was printed; the next data control prints nothing.
    swallow: bool,
    /// `%R` is waiting for its control: repeat up to this offset.
    repeat_end: Option<u64>,
}

impl<'a> RecordState<'a> {
    pub(super) fn new(input: &'a FormatInput<'a>) -> Self {
        Self {
            input,
            cur: Cursor::new(input.data),
            item: None,
            swallow: false,
            repeat_end: None,
        }
    }

    /// Length of the record's data.
    fn len(&self) -> u64 {
        self.cur.bytes().len()
    }

    /// The data from `from` to `to` (both within the data).
    fn span(&self, from: u64, to: u64) -> &'a [u8] {
        let data = self.input.data;
        data.get(from as usize..to as usize).unwrap_or_default()
    }

    /// The data not read yet.
    fn rest(&self) -> &'a [u8] {
        self.span(self.cur.pos(), self.len())
    }

    /// One item of a FMT line.
    pub(super) fn item(&mut self, item: FmtItem<'_>, out: &mut String) {
        match item {
            FmtItem::Text(t) => push_text(out, t),
            FmtItem::Ignore(n) => {
                self.repeat_end = None;
                let to = self.cur.pos().saturating_add(u64::from(n));
                self.cur.seek(to.min(self.len()));
            }
            FmtItem::Control(c) => self.control(c, out),
        }
    }

    /// The end of a FMT line (a pending `%R` does not carry over).
    pub(super) fn end_line(&mut self) {
        self.repeat_end = None;
    }

    fn control(&mut self, c: Control, out: &mut String) {
        match c {
            Control::X => push_hex(out, u32::from(self.input.major), 4),
            Control::Y => push_hex(out, u32::from(self.input.minor), 4),
            Control::P => {
                self.repeat_end = None;
                self.prefix(out);
            }
            Control::R => {
                if self.input.dynamic {
                    if self.prefix(out) {
                        self.repeat_end = self.item.map(|(_, end)| end);
                    }
                } else {
                    self.item = None;
                    self.repeat_end = Some(self.len());
                }
            }
            Control::U => {
                self.repeat_end = None;
                self.swallow = false;
                push_hex_bytes(out, self.rest(), false);
                self.cur.seek(self.len());
            }
            Control::S => {
                self.repeat_end = None;
                if !std::mem::take(&mut self.swallow) {
                    self.string(out);
                }
            }
            _ => {
                if std::mem::take(&mut self.swallow) {
                    self.repeat_end = None;
                } else if let Some(end) = self.repeat_end.take() {
                    self.repeat(c, end, out);
                } else {
                    self.value(c, out);
                }
            }
        }
    }

    /// Reads a prefix at the current position (after skipping what the
    /// previous item left). True when it starts a readable item.
    fn prefix(&mut self, out: &mut String) -> bool {
        if let Some((_, end)) = self.item.take() {
            let to = self.cur.pos().max(end.min(self.len()));
            self.cur.seek(to);
        }
        self.swallow = false;
        let (b, at) = (self.cur.bytes(), self.cur.pos());
        let (Ok(status), Ok(len)) = (b.u8(at, PREFIX), b.u16(at + 1, PREFIX)) else {
            out.push_str(&short(self.rest(), "<no data>"));
            self.cur.seek(self.len());
            self.swallow = true;
            return false;
        };
        let start = at + 3;
        let end = start.saturating_add(u64::from(len)).min(self.len());
        if let Some(kind) = fault_kind(status) {
            out.push_str(&fault_text(kind, status, b.u32(start, PREFIX).ok()));
            self.cur.seek(end);
            self.swallow = true;
            return false;
        }
        if status > 1 {
            let _ = write!(out, "<bad prefix status {status:#04x}>");
        }
        self.cur.seek(start);
        self.item = Some((start, end));
        true
    }

    /// One value of a fixed-size control.
    fn value(&mut self, c: Control, out: &mut String) {
        let w = c.width().unwrap_or(1) as u64;
        if self.cur.remaining() < w {
            out.push_str(&short(self.rest(), "<no data>"));
            self.cur.seek(self.len());
            return;
        }
        let _ = put_value(c, w, &mut self.cur, out);
    }

    fn repeat(&mut self, c: Control, end: u64, out: &mut String) {
        let w = c.width().unwrap_or(1) as u64;
        let end = end.min(self.len()).max(self.cur.pos());
        let sep = if c == Control::C { "" } else { " " };
        let mut first = true;
        while self.cur.pos() + w <= end {
            if !first {
                out.push_str(sep);
            }
            first = false;
            let _ = put_value(c, w, &mut self.cur, out);
        }
        if self.cur.pos() < end {
            if !first {
                out.push(' ');
            }
            let partial = self.span(self.cur.pos(), end);
            let _ = write!(out, "<partial: {}>", hex_bytes(partial, true));
            self.cur.seek(end);
        }
    }

    fn string(&mut self, out: &mut String) {
        if let Some((start, end)) = self.item
            && start == self.cur.pos()
        {
            push_text(out, self.span(start, end));
            self.cur.seek(end);
            self.item = None;
            return;
        }
        self.item = None;
        let rest = self.rest();
        if rest.is_empty() {
            out.push_str("<no data>");
            return;
        }
        let (b, at) = (self.cur.bytes(), self.cur.pos());
        if let (Ok(status), Ok(len)) = (b.u8(at, PREFIX), b.u16(at + 1, PREFIX)) {
            let len = u64::from(len);
            if status <= 1
                && let Ok(text) = b.slice(at + 3, len, PREFIX)
            {
                push_text(out, text);
                self.cur.seek(at + 3 + len);
                return;
            }
            if let Some(kind) = fault_kind(status)
                && len == 4
                && let Ok(address) = b.u32(at + 3, PREFIX)
            {
                out.push_str(&fault_text(kind, status, Some(address)));
                self.cur.seek(at + 7);
                return;
            }
        }
        let n = rest.iter().position(|&b| b == 0);
        push_text(out, &rest[..n.unwrap_or(rest.len())]);
        self.cur.seek(at + n.map_or(rest.len(), |n| n + 1) as u64);
    }
}

/// One value of control `c`, `w` bytes, read from `cur`. The callers
/// check first that `w` bytes remain (a short value prints differently),
/// so this does not fail.
fn put_value(c: Control, w: u64, cur: &mut Cursor<'_>, out: &mut String) -> binread::Result<()> {
    match c {
        Control::B => push_hex(out, u32::from(cur.u8(VALUE)?), 2),
        Control::C => out.push(printable(cur.u8(VALUE)?)),
        Control::W => push_hex(out, u32::from(cur.u16(VALUE)?), 4),
        Control::D | Control::A => {
            let d = cur.u32(VALUE)?;
            push_hex(out, d >> 16, 4);
            out.push(if c == Control::D { ' ' } else { ':' });
            push_hex(out, d & 0xFFFF, 4);
        }
        Control::F => push_hex(out, cur.u32(VALUE)?, 8),
        Control::Q => {
            let (lo, hi) = (cur.u32(VALUE)?, cur.u32(VALUE)?);
            push_hex(out, lo, 8);
            out.push(' ');
            push_hex(out, hi, 8);
        }
        _ => cur.skip(w, VALUE)?,
    }
    Ok(())
}

/// What a value that runs out prints.
fn short(rest: &[u8], none: &str) -> String {
    if rest.is_empty() {
        none.to_string()
    } else {
        format!("<only {} bytes: {}>", rest.len(), hex_bytes(rest, true))
    }
}

#[derive(Clone, Copy)]
enum FaultKind {
    InvalidSelector,
    SelectorNotPresent,
    PageNotPresent,
}

fn fault_kind(status: u8) -> Option<FaultKind> {
    match status {
        0xFF => Some(FaultKind::InvalidSelector),
        0xFE => Some(FaultKind::SelectorNotPresent),
        0xFD => Some(FaultKind::PageNotPresent),
        _ => None,
    }
}

/// What a fault item prints; `address` is its 4-byte address, when the
/// data has it.
fn fault_text(kind: FaultKind, status: u8, address: Option<u32>) -> String {
    let what = match kind {
        FaultKind::InvalidSelector => "invalid selector",
        FaultKind::SelectorNotPresent => "selector not present",
        FaultKind::PageNotPresent => "page not present",
    };
    let Some(a) = address else {
        return format!("<{what} (status {status:#04x}), address missing>");
    };
    match kind {
        FaultKind::PageNotPresent => format!("<{what} at 0x{a:08X}>"),
        _ => format!("<{what} at {:04X}:{:04X}>", a >> 16, a & 0xFFFF),
    }
}
