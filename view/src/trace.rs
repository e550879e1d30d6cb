//! Reading traces for the views: one or more TRACEFMT save files (or bare
//! STDAs), TRSPOOL series among them, each with its fine-time sidecar when
//! there is one, into one list of records in order.
//!
//! * Files are read in the order given. A directory stands for the TRSPOOL
//!   files `TRACEBUF.nnn` in it. Spool files that come together (from a
//!   directory or named one after the other) form a series and are put in
//!   the order of their capture time (the save file's DATETIME, then the
//!   number), since the cycle of numbers wraps.
//! * In a series, a number missing between two files is a gap (the file was
//!   never written or was removed); the records lost to wraps before each
//!   capture come from the file's sidecar. Both are reported per source.
//! * A file that is neither a save file nor a bare STDA may be a CPTRAP or
//!   a TNF file ([`crate::foreign`]).
//! * A sidecar `FILE.idx` ([`stda::sidecar`]) gives each record its
//!   emulated cycle, nanosecond, cost, tracepoint address and thread. A
//!   sidecar that does not match its file's records is ignored with a
//!   warning.

use std::path::{Path, PathBuf};

use stda::savefile::SaveFile;
use stda::sidecar::{HitTime, Sidecar};
use stda::{DosDateTime, Record, Stamp, Stda, TraceTimes};
use thiserror::Error;

use crate::foreign::{Foreign, ForeignRecord};

/// A file that cannot be read as a trace.
#[derive(Debug, Error)]
pub enum LoadError {
    /// Reading failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The bytes are not a save file or an STDA.
    #[error("{path}: {what}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong, with its offset.
        what: String,
    },
}

/// One file of the trace.
#[derive(Debug, Clone)]
pub struct Source {
    /// The file.
    pub path: PathBuf,
    /// Capture time of a save file.
    pub captured: Option<DosDateTime>,
    /// TRACE ON/OFF times of a new-format STDA.
    pub times: Option<TraceTimes>,
    /// Number of its records.
    pub records: usize,
    /// Records lost to wraps before the capture (from the sidecar).
    pub lost: Option<u64>,
    /// The TRSPOOL file number, for `TRACEBUF.nnn`.
    pub spool_number: Option<u16>,
    /// Spool files missing just before this one in its series.
    pub missing_before: Vec<u16>,
    /// Whether a matching sidecar was read.
    pub has_sidecar: bool,
    /// `STDA`, `CPTRAP` or `TNF`.
    pub kind: &'static str,
}

/// One record of the trace.
#[derive(Debug, Clone)]
pub struct Entry {
    /// 1-based position over the whole trace.
    pub seq: usize,
    /// Index of its file in [`Trace::sources`].
    pub source: usize,
    /// The record.
    pub record: Record,
    /// Its fine time, from the sidecar.
    pub fine: Option<HitTime>,
    /// The text of a record of a CPTRAP or TNF file.
    pub foreign: Option<Foreign>,
}

impl Entry {
    /// The OS/2 time in hundredths of a second since midnight (seconds and
    /// hundredths only for the old format), when known.
    pub fn hundredths(&self) -> Option<u64> {
        self.record.time.map(stamp_hundredths)
    }

    /// The time column: the OS/2 time, then the fine time when known.
    pub fn time_text(&self) -> String {
        let os2 = self
            .record
            .time
            .map_or_else(|| "-".to_string(), |t| t.to_string());
        match self.fine {
            Some(f) => format!("{os2} {}", ns_text(f.ns)),
            None => os2,
        }
    }
}

/// Hundredths of a second of a stamp.
pub fn stamp_hundredths(s: Stamp) -> u64 {
    match s {
        Stamp::Old {
            seconds,
            hundredths,
        } => u64::from(seconds) * 100 + u64::from(hundredths),
        Stamp::New(t) => {
            ((u64::from(t.hours) * 60 + u64::from(t.minutes)) * 60 + u64::from(t.seconds)) * 100
                + u64::from(t.hundredths)
        }
    }
}

/// Emulated nanoseconds as `+1.234567ms`.
pub fn ns_text(ns: u64) -> String {
    format!("+{}.{:06}ms", ns / 1_000_000, ns % 1_000_000)
}

/// A whole trace.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// The files, in reading order.
    pub sources: Vec<Source>,
    /// The records, oldest first.
    pub entries: Vec<Entry>,
    /// Problems that did not stop the reading (a sidecar that does not
    /// match, a spool directory with no files).
    pub warnings: Vec<String>,
}

/// The number of a `TRACEBUF.nnn` file name (any case).
pub fn spool_number(path: &Path) -> Option<u16> {
    let name = path.file_name()?.to_str()?;
    let (stem, ext) = name.split_once('.')?;
    if !stem.eq_ignore_ascii_case("TRACEBUF") || ext.len() != 3 {
        return None;
    }
    ext.bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| ext.parse().ok())?
}

/// A read file before it joins the trace.
struct Loaded {
    source: Source,
    records: Vec<Record>,
    fine: Option<Vec<HitTime>>,
    foreign: Vec<Foreign>,
}

fn foreign_file(path: &Path, kind: &'static str, recs: Vec<ForeignRecord>) -> Loaded {
    let mut records = Vec::with_capacity(recs.len());
    let mut fine = Vec::with_capacity(recs.len());
    let mut foreign = Vec::with_capacity(recs.len());
    for (r, f, t) in recs {
        records.push(r);
        fine.push(t);
        foreign.push(f);
    }
    let timed = fine.iter().all(Option::is_some) && !fine.is_empty();
    Loaded {
        source: Source {
            path: path.to_path_buf(),
            captured: None,
            times: None,
            records: records.len(),
            lost: None,
            spool_number: None,
            missing_before: Vec::new(),
            has_sidecar: false,
            kind,
        },
        records,
        fine: timed.then(|| fine.into_iter().flatten().collect()),
        foreign,
    }
}

fn read_file(path: &Path, warnings: &mut Vec<String>) -> Result<Loaded, LoadError> {
    let bytes = std::fs::read(path).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let sidecar = std::fs::read(Sidecar::path_for(path)).ok();
    read_bytes(path, &bytes, sidecar.as_deref(), warnings)
}

/// A file's bytes (and its sidecar's), as read from `path`.
fn read_bytes(
    path: &Path,
    bytes: &[u8],
    sidecar: Option<&[u8]>,
    warnings: &mut Vec<String>,
) -> Result<Loaded, LoadError> {
    let format = |what: String| LoadError::Format {
        path: path.to_path_buf(),
        what,
    };
    let save;
    let (captured, stda_bytes) = if bytes.starts_with(stda::MAGIC) {
        (None, bytes)
    } else {
        match SaveFile::parse(bytes) {
            Ok(s) => {
                save = s;
                (Some(save.datetime), save.stda.as_slice())
            }
            Err(e) => {
                if let Some(recs) = crate::foreign::cptrap(bytes) {
                    return Ok(foreign_file(path, "CPTRAP", recs));
                }
                if let Some(recs) = crate::foreign::tnf(bytes) {
                    return Ok(foreign_file(path, "TNF", recs));
                }
                return Err(format(format!(
                    "{e} (nor is it a bare STDA, a CPTRAP or a TNF file)"
                )));
            }
        }
    };
    let stda = Stda::parse(stda_bytes).map_err(|e| format(e.to_string()))?;
    let records = stda.records();
    let mut source = Source {
        path: path.to_path_buf(),
        captured,
        times: stda.trace_times(),
        records: records.len(),
        lost: None,
        spool_number: spool_number(path),
        missing_before: Vec::new(),
        has_sidecar: false,
        kind: "STDA",
    };
    let idx = Sidecar::path_for(path);
    let mut fine = None;
    if let Some(b) = sidecar {
        match Sidecar::parse(b) {
            Ok(s) if s.matches(&records) => {
                source.lost = Some(s.lost);
                source.has_sidecar = true;
                fine = Some(s.entries);
            }
            Ok(_) => warnings.push(format!(
                "{}: does not match the records of {}; fine times not shown",
                idx.display(),
                path.display()
            )),
            Err(e) => warnings.push(format!("{}: {e}", idx.display())),
        }
    }
    Ok(Loaded {
        source,
        records,
        fine,
        foreign: Vec::new(),
    })
}

/// The trace of one capture in memory (`run --export`): a save file's
/// bytes and its sidecar's, named `label`.
///
/// # Errors
/// Bytes that are not a save file or an STDA.
pub fn from_capture(label: &Path, save: &[u8], sidecar: Option<&[u8]>) -> Result<Trace, LoadError> {
    let mut trace = Trace::default();
    let l = read_bytes(label, save, sidecar, &mut trace.warnings)?;
    push(&mut trace, l);
    Ok(trace)
}

fn push(trace: &mut Trace, l: Loaded) {
    let source = trace.sources.len();
    let fine = l.fine.unwrap_or_default();
    let mut foreign = l.foreign.into_iter();
    for (k, record) in l.records.into_iter().enumerate() {
        let seq = trace.entries.len() + 1;
        trace.entries.push(Entry {
            seq,
            source,
            record,
            fine: fine.get(k).copied(),
            foreign: foreign.next(),
        });
    }
    trace.sources.push(l.source);
}

/// The capture order of a spool file.
fn capture_key(l: &Loaded) -> (u16, u8, u8, u8, u8, u8, u8, u16) {
    let d = l.source.captured.unwrap_or_default();
    (
        d.year,
        d.month,
        d.day,
        d.time.hours,
        d.time.minutes,
        d.time.seconds,
        d.time.hundredths,
        l.source.spool_number.unwrap_or(0),
    )
}

/// Expands directories into their spool files, sorted by name.
fn expand(paths: &[PathBuf], warnings: &mut Vec<String>) -> Result<Vec<PathBuf>, LoadError> {
    let mut out = Vec::new();
    for p in paths {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let rd = std::fs::read_dir(p).map_err(|source| LoadError::Io {
            path: p.clone(),
            source,
        })?;
        let mut files: Vec<PathBuf> = rd
            .filter_map(|e| Some(e.ok()?.path()))
            .filter(|f| spool_number(f).is_some())
            .collect();
        files.sort();
        if files.is_empty() {
            warnings.push(format!("{}: no TRACEBUF.nnn files", p.display()));
        }
        out.extend(files);
    }
    Ok(out)
}

/// Reads the files (and spool directories) into one trace.
///
/// # Errors
/// The first file that cannot be read or is not a trace.
pub fn load(paths: &[PathBuf]) -> Result<Trace, LoadError> {
    let mut trace = Trace::default();
    let files = expand(paths, &mut trace.warnings)?;
    let mut loaded = Vec::with_capacity(files.len());
    for f in &files {
        loaded.push(read_file(f, &mut trace.warnings)?);
    }
    // Runs of spool files become series in capture order.
    let mut i = 0;
    while i < loaded.len() {
        let start = i;
        while i < loaded.len() && loaded[i].source.spool_number.is_some() {
            i += 1;
        }
        if i > start {
            let series = &mut loaded[start..i];
            series.sort_by_key(capture_key);
            mark_gaps(series);
        } else {
            i += 1;
        }
    }
    for l in loaded {
        push(&mut trace, l);
    }
    Ok(trace)
}

/// Marks the spool numbers missing between consecutive files of a series.
fn mark_gaps(series: &mut [Loaded]) {
    for k in 1..series.len() {
        let (Some(prev), Some(this)) = (
            series[k - 1].source.spool_number,
            series[k].source.spool_number,
        ) else {
            continue;
        };
        // The cycle wraps to 000; a jump down to 0 is not a gap.
        let missing: Vec<u16> = if this > prev {
            (prev + 1..this).collect()
        } else {
            (0..this).collect()
        };
        series[k].source.missing_before = missing;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spool_names() {
        assert_eq!(spool_number(Path::new("a/TRACEBUF.007")), Some(7));
        assert_eq!(spool_number(Path::new("tracebuf.100")), Some(100));
        assert_eq!(spool_number(Path::new("TRACEBUF.07")), None);
        assert_eq!(spool_number(Path::new("TRACE.SAV")), None);
        assert_eq!(ns_text(1_234_567_891), "+1234.567891ms");
    }
}
