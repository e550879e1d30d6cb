//! Records as text and JSON: the shared formatting of the views.
//!
//! * [`Formatter`] holds the TFF rules, loaded from one or more
//!   directories, and says which majors have none ([`Formatter::hints`]:
//!   "no TFF found for major 00C2 in DIR").
//! * [`Formatter::lines`] gives a record's TRACEFMT lines (the header line
//!   carries the fine time when the sidecar gave one);
//!   [`Formatter::json`] its JSON object: the fields of `tracefmt --json`
//!   (`seq`, `time`, `major`, `minor`, `pid`, `flags`, `len`, `data`) and,
//!   beside them, `file`, `desc`, `lines` and `fields` (name, control,
//!   value) when a rule formats it, and `cycle`, `ns`, `cost_ns`,
//!   `cost_cycles`, `address`, `tid` from the sidecar.
//! * [`series_line`] describes where one file of a series starts: its
//!   capture time, record count, gaps and lost records.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use stda::fields::{Decoded, decode};
use stda::fmt::{FormatInput, hex_dump};
use stda::tracefmt::{Rules, format_one};
use stda::{RecordFlags, Stamp};

use crate::trace::{Entry, Source, Trace, ns_text};

/// The rules and where they came from.
#[derive(Debug, Clone, Default)]
pub struct Formatter {
    rules: Rules,
    dirs: Vec<PathBuf>,
}

impl Formatter {
    /// Loads `TRC00xx.TFF` from each directory (earlier ones first) for the
    /// majors of the trace. Returns unreadable files as warnings.
    pub fn load(dirs: &[PathBuf], trace: &Trace) -> (Self, Vec<String>) {
        let majors: BTreeSet<u8> = trace.entries.iter().map(|e| e.record.major).collect();
        let mut rules = Rules::new();
        let mut warnings = Vec::new();
        for dir in dirs {
            let (found, errors) = Rules::load_dir(dir, majors.iter().copied());
            warnings.extend(errors.iter().map(|e| format!("warning: {e}")));
            rules.fill_from(found);
        }
        (
            Formatter {
                rules,
                dirs: dirs.to_vec(),
            },
            warnings,
        )
    }

    /// The rules.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// One hint per major of the trace that no rule formats.
    pub fn hints(&self, trace: &Trace) -> Vec<String> {
        let mut unformatted = BTreeSet::new();
        for e in trace.entries.iter().filter(|e| e.foreign.is_none()) {
            let r = &e.record;
            if self.rules.rule(r.major, r.minor).is_none() {
                unformatted.insert(r.major);
            }
        }
        unformatted
            .into_iter()
            .map(|major| {
                let has_file = trace.entries.iter().any(|e| {
                    e.record.major == major && self.rules.rule(major, e.record.minor).is_some()
                });
                if self.dirs.is_empty() {
                    format!(
                        "hint: no TFF directory given for major {major:04X}: its records print as hex (give /T=DIR)"
                    )
                } else if has_file {
                    format!(
                        "hint: TRC00{major:02X}.TFF has no rule for some minors of major {major:04X}: those print as hex"
                    )
                } else {
                    format!(
                        "hint: no TFF found for major {major:04X} in {}: its records print as hex",
                        dirs_text(&self.dirs)
                    )
                }
            })
            .collect()
    }

    /// The decoded record, when a rule formats it.
    pub fn decode(&self, e: &Entry) -> Option<Decoded> {
        if e.foreign.is_some() {
            return None;
        }
        let r = &e.record;
        let rule = self.rules.rule(r.major, r.minor)?;
        Some(decode(
            rule,
            &FormatInput {
                major: u16::from(r.major),
                minor: r.minor,
                dynamic: r.flags.contains(RecordFlags::DYNAMIC),
                data: &r.data,
            },
        ))
    }

    /// The TRACEFMT lines of a record; the fine time follows the OS/2 time.
    pub fn lines(&self, e: &Entry) -> Vec<String> {
        if let Some(f) = &e.foreign {
            let mut lines = vec![format!("{:5}  {}", e.seq, f.kind)];
            lines.extend(f.lines.iter().map(|l| format!("   {l}")));
            return lines;
        }
        let mut lines = format_one(&self.rules, e.seq, &e.record);
        if let (Some(f), Some(first)) = (e.fine, lines.first_mut()) {
            let _ = write!(first, "  T={} TID={:04X}", ns_text(f.ns), f.tid);
        }
        lines
    }

    /// The DESC of a record, or `-` when no rule formats it.
    pub fn desc(&self, e: &Entry) -> String {
        if let Some(f) = &e.foreign {
            return f.desc.clone();
        }
        let r = &e.record;
        self.rules
            .rule(r.major, r.minor)
            .map_or_else(|| "-".to_string(), |rule| text(&rule.desc))
    }

    /// The text the search looks in.
    pub fn search_text(&self, e: &Entry) -> String {
        let mut t = self.lines(e).join("\n");
        t.push('\n');
        t.push_str(&hex(&e.record.data));
        t
    }

    /// The JSON object of a record.
    pub fn json(&self, e: &Entry, sources: &[Source]) -> Value {
        let r = &e.record;
        let mut v = json!({
            "seq": e.seq,
            "time": r.time.map(|t| t.to_string()),
            "major": r.major,
            "minor": r.minor,
            "pid": r.pid,
            "flags": r.flags.bits(),
            "len": r.data.len(),
            "data": hex(&r.data),
        });
        let m = v.as_object_mut().expect("an object");
        if sources.len() > 1
            && let Some(s) = sources.get(e.source)
        {
            m.insert("file".into(), json!(file_name(&s.path)));
        }
        if let Some(f) = &e.foreign {
            m.insert("kind".into(), json!(f.kind));
            m.insert("desc".into(), json!(f.desc));
            m.insert("lines".into(), json!(f.lines));
        }
        if let Some(d) = self.decode(e) {
            m.insert("desc".into(), json!(d.desc));
            m.insert("lines".into(), json!(d.lines));
            m.insert(
                "fields".into(),
                serde_json::to_value(&d.fields).unwrap_or_default(),
            );
        }
        if let Some(f) = e.fine {
            m.insert("cycle".into(), json!(f.cycle));
            m.insert("ns".into(), json!(f.ns));
            m.insert("cost_ns".into(), json!(f.cost_ns));
            m.insert("cost_cycles".into(), json!(f.cost_cycles));
            m.insert("address".into(), json!(format!("{:08X}", f.address)));
            m.insert("tid".into(), json!(f.tid));
        }
        v
    }
}

fn dirs_text(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A file's name for display.
pub fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Lower-case hex of the data.
pub fn hex(data: &[u8]) -> String {
    let mut s = String::with_capacity(data.len() * 2);
    for b in data {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Text bytes as ISO-8859-1; control bytes as `.`.
pub fn text(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| {
            if b < 0x20 || b == 0x7F {
                '.'
            } else {
                char::from(b)
            }
        })
        .collect()
}

/// The hex dump of a record with the 3-byte prefixes of its data items
/// (`%P` items: status, u16 length) shown in brackets, when the record is
/// dynamic and its data reads as a chain of items.
pub fn marked_hex(data: &[u8], dynamic: bool) -> Vec<String> {
    if dynamic && let Some(items) = prefix_chain(data) {
        let mut out = Vec::new();
        for (at, status, len) in items {
            let body = &data[at + 3..(at + 3 + len).min(data.len())];
            out.push(format!(
                "+{at:04X} [{status:02X} {:04X}] {}",
                len,
                stda_hex_spaced(body)
            ));
        }
        return out;
    }
    hex_dump(data)
}

fn stda_hex_spaced(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The items of data made only of prefixed items, or None.
fn prefix_chain(data: &[u8]) -> Option<Vec<(usize, u8, usize)>> {
    let mut at = 0;
    let mut items = Vec::new();
    while at < data.len() {
        let rest = &data[at..];
        if rest.len() < 3 || !matches!(rest[0], 0 | 1 | 0xFD..=0xFF) {
            return None;
        }
        let len = usize::from(u16::from_le_bytes([rest[1], rest[2]]));
        if 3 + len > rest.len() {
            return None;
        }
        items.push((at, rest[0], len));
        at += 3 + len;
    }
    (!items.is_empty()).then_some(items)
}

/// The line that opens a file of a multi-file trace.
pub fn series_line(s: &Source) -> String {
    let mut line = format!("--- {}", s.path.display());
    if let Some(d) = s.captured {
        let _ = write!(
            line,
            "  captured {:04}-{:02}-{:02} {}",
            d.year, d.month, d.day, d.time
        );
    }
    let _ = write!(line, "  {} records", s.records);
    match s.lost {
        Some(n) => {
            let _ = write!(line, "  {n} lost to wraps before it");
        }
        None => line.push_str("  lost: unknown (no sidecar)"),
    }
    if !s.missing_before.is_empty() {
        let names: Vec<String> = s
            .missing_before
            .iter()
            .map(|n| stda::spool::file_name(*n))
            .collect();
        let _ = write!(line, "  gap: {} missing", names.join(", "));
    }
    line
}

/// A stamp's text, `-` when there is none.
pub fn stamp_text(s: Option<Stamp>) -> String {
    s.map_or_else(|| "-".to_string(), |t| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_marked() {
        let data = [0, 2, 0, 0xAA, 0xBB, 1, 1, 0, b'x'];
        assert_eq!(
            marked_hex(&data, true),
            ["+0000 [00 0002] AA BB", "+0005 [01 0001] 78"]
        );
        assert_eq!(marked_hex(&[1, 2, 3, 4], true), hex_dump(&[1, 2, 3, 4]));
    }
}
