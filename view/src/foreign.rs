//! Trace files of os2trace's cousins, read into the views' records: VM/SP
//! CPTRAP files (the `cptrap` crate) and Solaris TNF files (the `tnf`
//! crate). Each of their records becomes an [`Entry`](crate::trace::Entry)
//! with a [`Foreign`] text, shown the way their own tools show it
//! (TRAPRED's record lines, tnfdump's cooked line).
//!
//! So that filters, exports and the histogram work on them as on STDA
//! records: a CPTRAP record's major is its typenum (`02` API call, `3E`
//! interface data...) and its data the interface data; a TNF event's major
//! is 0, its minor the probe's index in order of first appearance, its PID
//! and thread the schedule's, and its fine time the event's time since the
//! first event.

use stda::sidecar::HitTime;
use stda::{Record, RecordFlags};

/// The text of a record from another tool's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Foreign {
    /// `CPTRAP` or `TNF`.
    pub kind: &'static str,
    /// What the record is (the list's DESC column).
    pub desc: String,
    /// The record as its own tool shows it.
    pub lines: Vec<String>,
}

/// One record read from a foreign file.
pub type ForeignRecord = (Record, Foreign, Option<HitTime>);

fn record(major: u8, minor: u16, pid: u16, data: Vec<u8>) -> Record {
    Record {
        offset: 0,
        flags: RecordFlags::empty(),
        pid,
        minor,
        major,
        data,
        stamp: None,
        time: None,
    }
}

/// The records of a CPTRAP file, or None when the bytes are not one.
pub fn cptrap(bytes: &[u8]) -> Option<Vec<ForeignRecord>> {
    let file = cptrap::CptrapFile::parse(bytes).ok()?;
    Some(
        file.records()
            .iter()
            .map(|r| {
                let lines = cptrap::trapred::display::record_lines(r);
                let t = r.record.typenum();
                let frame = r.record.frame();
                let data = match &r.record {
                    cptrap::Record::Interface { record, .. } => record.data().to_vec(),
                    _ => Vec::new(),
                };
                let desc = lines.get(1).map_or_else(
                    || t.name().to_string(),
                    |l| format!("{} {}", t.name(), l.trim()),
                );
                (
                    record(t.0, 0, frame.pid, data),
                    Foreign {
                        kind: "CPTRAP",
                        desc,
                        lines,
                    },
                    None,
                )
            })
            .collect(),
    )
}

/// The events of a TNF file, or None when the bytes are not one.
pub fn tnf(bytes: &[u8]) -> Option<Vec<ForeignRecord>> {
    let file = tnf::TnfFile::parse(bytes).ok()?;
    let text = tnf::dump::cooked(&file, false).ok()?;
    let header = tnf::dump::cooked_header();
    let body = text.split_once(header.as_str())?.1;
    let mut probes: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for line in body.lines() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() < 7 {
            continue;
        }
        let ms: f64 = cols[0].parse().unwrap_or(0.0);
        let pid: u16 = cols[2].parse().unwrap_or(0);
        let tid = u16::from_str_radix(cols[4].trim_start_matches("0x"), 16)
            .or_else(|_| cols[4].parse())
            .unwrap_or(0);
        let name = cols[6].to_string();
        let minor = match probes.iter().position(|p| *p == name) {
            Some(i) => i,
            None => {
                probes.push(name.clone());
                probes.len() - 1
            }
        } as u16;
        let rest = cols[7..].join(" ");
        let desc = if rest.is_empty() {
            name.clone()
        } else {
            format!("{name} {rest}")
        };
        out.push((
            record(0, minor, pid, Vec::new()),
            Foreign {
                kind: "TNF",
                desc,
                lines: vec![line.trim_end().to_string()],
            },
            Some(HitTime {
                ns: (ms * 1e6).round() as u64,
                pid,
                tid,
                minor,
                ..HitTime::default()
            }),
        ));
    }
    Some(out)
}
