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

use serde::Serialize;
use thiserror::Error;

use crate::fmt::{FormatInput, format_record, hex_dump};
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

/// Formatting rules, by major byte.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    by_major: HashMap<u8, Tff>,
}

impl Rules {
    /// No rules: every record prints as hex.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a TFF under the low byte of its major code.
    pub fn insert(&mut self, tff: Tff) {
        self.by_major.insert(tff.major as u8, tff);
    }

    /// Adds the rules of `other` for the majors that have none here, so
    /// that rules loaded first take precedence.
    pub fn fill_from(&mut self, other: Rules) {
        for (major, tff) in other.by_major {
            self.by_major.entry(major).or_insert(tff);
        }
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
                    Ok(tff) => {
                        rules.by_major.insert(major, tff);
                    }
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

/// The `.T` CONTEXT words and the dynamic/incomplete markers.
fn context(flags: RecordFlags) -> String {
    let mut s = String::from("CONTEXT=");
    s.push_str(if flags.contains(RecordFlags::API) {
        "API"
    } else {
        "KERNEL"
    });
    s.push_str(if flags.contains(RecordFlags::PROTECT) {
        ":PROTECT"
    } else {
        ":REAL"
    });
    if flags.contains(RecordFlags::DYNAMIC) {
        s.push_str(" DYNAMIC");
    }
    if flags.contains(RecordFlags::INCOMPLETE) {
        s.push_str(" INCOMPLETE");
    }
    s
}

/// The lines of one formatted record: header, then DESC and FMT lines (or
/// the hex dump), indented.
pub fn format_one(rules: &Rules, seq: usize, rec: &Record) -> Vec<String> {
    let mut lines = vec![format!(
        "{seq:5}  {:<11}  MAJ={:04X} MIN={:04X} PID={:04X} {}",
        time_text(rec),
        rec.major,
        rec.minor,
        rec.pid,
        context(rec.flags)
    )];
    let body = match rules.rule(rec.major, rec.minor) {
        Some(rule) => format_record(
            rule,
            &FormatInput {
                major: u16::from(rec.major),
                minor: rec.minor,
                dynamic: rec.flags.contains(RecordFlags::DYNAMIC),
                data: &rec.data,
            },
        ),
        None => hex_dump(&rec.data),
    };
    lines.extend(body.into_iter().map(|l| format!("   {l}")));
    lines
}

/// The whole formatted listing of an STDA.
pub fn format_stda(stda: &Stda<'_>, rules: &Rules) -> String {
    let mut out = String::new();
    if let Some(t) = stda.trace_times() {
        let _ = writeln!(out, "Trace On at {}", t.on);
        let _ = writeln!(out, "Trace Off at {}", t.off);
    }
    for (i, rec) in stda.forward().enumerate() {
        for line in format_one(rules, i + 1, &rec) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

fn hex(data: &[u8]) -> String {
    let mut s = String::with_capacity(data.len() * 2);
    for b in data {
        let _ = write!(s, "{b:02x}");
    }
    s
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

/// One JSON line (no newline).
pub fn json_line(seq: usize, rec: &Record) -> String {
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
    serde_json::to_string(&j).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tff::TffRecord;

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
