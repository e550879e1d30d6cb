//! TRACEFMT's output: the records of an STDA, oldest first, formatted with
//! TFF rules, or as raw lines, or as JSON lines. The `os2trace tracefmt`
//! command only reads files and prints what this module returns.
//!
//! * Rules are found by the record's major byte as `TRC00xx.TFF` in the
//!   directory given with `/T=` (the name matched without regard to case,
//!   as on OS/2). When there is none, the first `TRCnnxx.TFF` is used: the
//!   trailer keeps only the low byte of a major above 255, so a module
//!   traced with `MAJOR=0x1C5` logs 0xC5 and is formatted with
//!   `TRC01C5.TFF`. Without a directory, or without a file or a minor for a
//!   record, the record prints as a hex dump ([`crate::fmt::hex_dump`]).
//! * A formatted record is a header line
//!   `seq  time  MAJ=00C5 MIN=0010 PID=0003 CONTEXT=API:PROTECT [DYNAMIC] [INCOMPLETE]`
//!   followed by its DESC line and FMT lines (or dump lines), indented by
//!   three spaces. The CONTEXT words are those of the kernel debugger's
//!   `.T` command. A new-format buffer starts with its TRACE ON/OFF times.
//! * Raw lines: `seq time major minor pid flags len data`, with seq and len
//!   in decimal, major, minor, PID and flags in hex, data as hex bytes
//!   (`-` when there is none; time `-` when unknown).
//! * JSON lines: `{"seq":1,"time":"12:00:00.05","major":197,"minor":16,
//!   "pid":3,"flags":12,"len":4,"data":"01020304"}`, time `null` when
//!   unknown.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::fmt::{FormatInput, PreparedRule, hex_dump, push_hex};
use crate::reader::Stda;
use crate::record::{Record, RecordFlags};
use crate::tff::{Tff, TffError, TffRecord};

/// Why a TFF could not be loaded.
#[derive(Debug, Error)]
pub enum LoadError {
    /// Reading the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a valid TFF.
    #[error("{path}: {source}")]
    Tff {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: TffError,
    },
}

/// Formatting rules, by major byte, each also parsed once for formatting
/// ([`PreparedRule`]).
#[derive(Debug, Clone, Default)]
pub struct Rules {
    by_major: HashMap<u8, Tff>,
    prepared: HashMap<(u8, u16), PreparedRule>,
}

impl Rules {
    /// No rules: every record prints as hex.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a TFF under the low byte of its major code.
    pub fn insert(&mut self, tff: Tff) {
        self.put(tff.major as u8, tff);
    }

    /// Sets the TFF of a major byte and prepares its rules (the first
    /// record of a minor wins, as in [`Tff::record`]).
    fn put(&mut self, major: u8, tff: Tff) {
        self.prepared.retain(|&(m, _), _| m != major);
        for r in &tff.records {
            self.prepared
                .entry((major, r.minor))
                .or_insert_with(|| PreparedRule::new(r));
        }
        self.by_major.insert(major, tff);
    }

    /// Adds the rules of `other` for the majors that have none here, so
    /// that rules loaded first take precedence.
    pub fn fill_from(&mut self, other: Rules) {
        for (major, tff) in other.by_major {
            if !self.by_major.contains_key(&major) {
                self.put(major, tff);
            }
        }
    }

    /// The prepared rule for a record.
    pub fn prepared(&self, major: u8, minor: u16) -> Option<&PreparedRule> {
        self.prepared.get(&(major, minor))
    }

    /// The rule for a record.
    pub fn rule(&self, major: u8, minor: u16) -> Option<&TffRecord> {
        self.by_major.get(&major)?.record(minor)
    }

    /// Loads `TRC00xx.TFF` from `dir` for each major byte in `majors`.
    /// Missing files are not errors; unreadable or malformed ones are
    /// returned beside the rules that did load.
    pub fn load_dir(dir: &Path, majors: impl IntoIterator<Item = u8>) -> (Self, Vec<LoadError>) {
        let mut rules = Self::new();
        let mut errors = Vec::new();
        let mut names: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(|e| {
                    let path = e.ok()?.path();
                    let name = path.file_name()?.to_str()?.to_ascii_uppercase();
                    Some((name, path))
                })
                .collect()
            })
            .unwrap_or_default();
        names.sort();
        let mut majors: Vec<u8> = majors.into_iter().collect();
        majors.sort_unstable();
        majors.dedup();
        for major in majors {
            let Some(path) = tff_for(&names, major) else {
                continue;
            };
            match std::fs::read(path) {
                Err(source) => errors.push(LoadError::Io {
                    path: path.clone(),
                    source,
                }),
                Ok(bytes) => match Tff::parse(&bytes) {
                    Ok(tff) => rules.put(major, tff),
                    Err(source) => errors.push(LoadError::Tff {
                        path: path.clone(),
                        source,
                    }),
                },
            }
        }
        (rules, errors)
    }
}

/// The TFF for a major byte among upper-cased directory entries:
/// `TRC00xx.TFF`, else the first `TRCnnxx.TFF` (a major above 255 whose
/// low byte the trailer kept).
fn tff_for(names: &[(String, PathBuf)], major: u8) -> Option<&PathBuf> {
    let exact = Tff::file_name(u16::from(major));
    let suffix = format!("{major:02X}.TFF");
    names
        .iter()
        .find(|(n, _)| *n == exact)
        .or_else(|| {
            names.iter().find(|(n, _)| {
                n.len() == exact.len()
                    && n.starts_with("TRC")
                    && n.ends_with(&suffix)
                    && n[3..5].bytes().all(|b| b.is_ascii_hexdigit())
            })
        })
        .map(|(_, p)| p)
}

fn time_text(rec: &Record) -> String {
    rec.time.map_or_else(|| "-".to_string(), |t| t.to_string())
}

/// Appends `v` in decimal with at least two digits (`{:02}`).
fn push_dec2(out: &mut String, v: u8) {
    if v >= 100 {
        out.push(char::from(b'0' + v / 100));
    }
    out.push(char::from(b'0' + v / 10 % 10));
    out.push(char::from(b'0' + v % 10));
}

/// Appends `v` in decimal.
fn push_dec(out: &mut String, v: usize) {
    let mut digits = [0u8; 20];
    let mut n = 0;
    let mut v = v;
    loop {
        digits[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for &d in digits[..n].iter().rev() {
        out.push(char::from(d));
    }
}

/// Appends the record's time as [`Stamp`](crate::Stamp)'s `Display`
/// writes it, or `-`.
fn push_time(out: &mut String, rec: &Record) {
    match rec.time {
        None => out.push('-'),
        Some(crate::Stamp::Old {
            seconds,
            hundredths,
        }) => {
            push_dec2(out, seconds);
            out.push('.');
            push_dec2(out, hundredths);
        }
        Some(crate::Stamp::New(t)) => {
            for (i, v) in [t.hours, t.minutes, t.seconds].into_iter().enumerate() {
                if i > 0 {
                    out.push(':');
                }
                push_dec2(out, v);
            }
            out.push('.');
            push_dec2(out, t.hundredths);
        }
    }
}

/// The `.T` CONTEXT words and the dynamic/incomplete markers, appended to
/// `out`.
fn push_context(out: &mut String, flags: RecordFlags) {
    out.push_str("CONTEXT=");
    out.push_str(if flags.contains(RecordFlags::API) {
        "API"
    } else {
        "KERNEL"
    });
    out.push_str(if flags.contains(RecordFlags::PROTECT) {
        ":PROTECT"
    } else {
        ":REAL"
    });
    if flags.contains(RecordFlags::DYNAMIC) {
        out.push_str(" DYNAMIC");
    }
    if flags.contains(RecordFlags::INCOMPLETE) {
        out.push_str(" INCOMPLETE");
    }
}

/// The header line of a formatted record (no newline), appended to `out`:
/// `{seq:5}  {time:<11}  MAJ=.. MIN=.. PID=.. CONTEXT=..`.
fn push_header(out: &mut String, seq: usize, rec: &Record) {
    let start = out.len();
    push_dec(out, seq);
    let width = out.len() - start;
    if width < 5 {
        out.insert_str(start, &"     "[..5 - width]);
    }
    out.push_str("  ");
    let start = out.len();
    push_time(out, rec);
    for _ in out.len() - start..11 {
        out.push(' ');
    }
    out.push_str("  MAJ=");
    push_hex(out, u32::from(rec.major), 4);
    out.push_str(" MIN=");
    push_hex(out, u32::from(rec.minor), 4);
    out.push_str(" PID=");
    push_hex(out, u32::from(rec.pid), 4);
    out.push(' ');
    push_context(out, rec.flags);
}

/// The lines of one formatted record: header, then DESC and FMT lines (or
/// the hex dump), indented.
pub fn format_one(rules: &Rules, seq: usize, rec: &Record) -> Vec<String> {
    let mut out = String::new();
    write_one(rules, seq, rec, &mut out);
    out.lines().map(str::to_string).collect()
}

/// [`format_one`]'s lines, each ending in a newline, appended to `out`:
/// nothing is allocated beyond `out`'s growth for a record with a rule.
pub fn write_one(rules: &Rules, seq: usize, rec: &Record, out: &mut String) {
    push_header(out, seq, rec);
    out.push('\n');
    match rules.prepared(rec.major, rec.minor) {
        Some(rule) => rule.write(
            &FormatInput {
                major: u16::from(rec.major),
                minor: rec.minor,
                dynamic: rec.flags.contains(RecordFlags::DYNAMIC),
                data: &rec.data,
            },
            "   ",
            out,
        ),
        None => {
            for l in hex_dump(&rec.data) {
                out.push_str("   ");
                out.push_str(&l);
                out.push('\n');
            }
        }
    }
}

/// The whole formatted listing of an STDA.
pub fn format_stda(stda: &Stda<'_>, rules: &Rules) -> String {
    let mut out = String::new();
    write_stda(stda, rules, &mut out);
    out
}

/// [`format_stda`], appended to `out`.
pub fn write_stda(stda: &Stda<'_>, rules: &Rules, out: &mut String) {
    if let Some(t) = stda.trace_times() {
        let _ = writeln!(out, "Trace On at {}", t.on);
        let _ = writeln!(out, "Trace Off at {}", t.off);
    }
    for (i, rec) in stda.forward().enumerate() {
        write_one(rules, i + 1, &rec, out);
    }
}

fn hex(data: &[u8]) -> String {
    let mut s = String::with_capacity(data.len() * 2);
    push_hex_run(&mut s, data);
    s
}

/// Data as lower-case hex with no separators, appended to `out`.
fn push_hex_run(out: &mut String, data: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(data.len() * 2);
    for &b in data {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
}

/// One raw line (no newline).
pub fn raw_line(seq: usize, rec: &Record) -> String {
    let data = if rec.data.is_empty() {
        "-".to_string()
    } else {
        hex(&rec.data)
    };
    format!(
        "{seq} {} {:04X} {:04X} {:04X} {:02X} {} {data}",
        time_text(rec),
        rec.major,
        rec.minor,
        rec.pid,
        rec.flags.bits(),
        rec.data.len()
    )
}

/// [`json_line`] and a newline, appended to `out` (the same bytes, without
/// building the line apart).
pub fn write_json_line(seq: usize, rec: &Record, out: &mut String) {
    out.push_str("{\"seq\":");
    push_dec(out, seq);
    out.push_str(",\"time\":");
    if rec.time.is_some() {
        // A time prints digits, colons and a dot: nothing to escape.
        out.push('"');
        push_time(out, rec);
        out.push('"');
    } else {
        out.push_str("null");
    }
    out.push_str(",\"major\":");
    push_dec(out, usize::from(rec.major));
    out.push_str(",\"minor\":");
    push_dec(out, usize::from(rec.minor));
    out.push_str(",\"pid\":");
    push_dec(out, usize::from(rec.pid));
    out.push_str(",\"flags\":");
    push_dec(out, usize::from(rec.flags.bits()));
    out.push_str(",\"len\":");
    push_dec(out, rec.data.len());
    out.push_str(",\"data\":\"");
    push_hex_run(out, &rec.data);
    out.push_str("\"}\n");
}

/// One JSON line (no newline).
pub fn json_line(seq: usize, rec: &Record) -> String {
    let mut out = String::new();
    write_json_line(seq, rec, &mut out);
    out.pop();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tff::TffRecord;
    use serde::Serialize;

    #[derive(Serialize)]
    struct JsonRecord {
        seq: usize,
        time: Option<String>,
        major: u8,
        minor: u16,
        pid: u16,
        flags: u8,
        len: usize,
        data: String,
    }

    /// The JSON line as serde writes it: the reference for json_line.
    fn serde_line(seq: usize, rec: &Record) -> String {
        let j = JsonRecord {
            seq,
            time: rec.time.map(|t| t.to_string()),
            major: rec.major,
            minor: rec.minor,
            pid: rec.pid,
            flags: rec.flags.bits(),
            len: rec.data.len(),
            data: hex(&rec.data),
        };
        serde_json::to_string(&j).unwrap()
    }

    fn tff(major: u16, desc: &str) -> Vec<u8> {
        Tff {
            major,
            records: vec![TffRecord {
                minor: 1,
                desc: desc.as_bytes().to_vec(),
                fmts: vec![],
            }],
        }
        .to_bytes()
    }

    fn record(time: Option<crate::Stamp>, data: &[u8], flags: u8) -> Record {
        Record {
            offset: 0,
            flags: RecordFlags::from_bits_retain(flags),
            pid: 0x1234,
            minor: 0xBEEF,
            major: 0xC5,
            data: data.to_vec(),
            stamp: time,
            time,
        }
    }

    #[test]
    fn written_lines_are_those_of_the_formatting_macros() {
        use crate::{Stamp, Timestamp};
        let times = [
            None,
            Some(Stamp::Old {
                seconds: 7,
                hundredths: 123,
            }),
            Some(Stamp::New(Timestamp::new(1, 2, 3, 4))),
            Some(Stamp::New(Timestamp::new(23, 59, 200, 99))),
        ];
        for (i, time) in times.into_iter().enumerate() {
            for (seq, data, flags) in [
                (1, &[][..], 0),
                (99_999, &[1, 0xAB][..], 0x1F),
                (123_456, &[0xFF; 40][..], 0x0D),
            ] {
                let rec = record(time, data, flags);
                let mut out = String::new();
                write_json_line(seq, &rec, &mut out);
                assert_eq!(out, format!("{}\n", serde_line(seq, &rec)), "case {i}");
                assert_eq!(json_line(seq, &rec), serde_line(seq, &rec));
                let want = format!(
                    "{seq:5}  {:<11}  MAJ={:04X} MIN={:04X} PID={:04X} {}",
                    time_text(&rec),
                    rec.major,
                    rec.minor,
                    rec.pid,
                    {
                        let mut c = String::new();
                        push_context(&mut c, rec.flags);
                        c
                    }
                );
                let mut header = String::new();
                push_header(&mut header, seq, &rec);
                assert_eq!(header, want, "case {i}");
                let lines = format_one(&Rules::new(), seq, &rec);
                assert_eq!(lines[0], want);
                let dump: Vec<String> = hex_dump(data).iter().map(|l| format!("   {l}")).collect();
                assert_eq!(lines[1..], dump[..]);
            }
        }
    }

    #[test]
    fn tffs_are_found_by_major_byte() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("trc00c5.tff"), tff(0xC5, "c5")).unwrap();
        std::fs::write(dir.path().join("TRC01C5.TFF"), tff(0x1C5, "1c5")).unwrap();
        std::fs::write(dir.path().join("TRC01C6.TFF"), tff(0x1C6, "1c6")).unwrap();
        std::fs::write(dir.path().join("TRC00C7.TFF"), b"TFF\0junk").unwrap();
        let (rules, errors) = Rules::load_dir(dir.path(), [0xC5, 0xC6, 0xC7, 0xC8]);
        assert_eq!(rules.rule(0xC5, 1).unwrap().desc, b"c5");
        assert_eq!(rules.rule(0xC6, 1).unwrap().desc, b"1c6");
        assert!(rules.rule(0xC7, 1).is_none());
        assert!(rules.rule(0xC8, 1).is_none());
        assert_eq!(errors.len(), 1);
        assert!(errors[0].to_string().contains("TRC00C7.TFF"));
    }
}
