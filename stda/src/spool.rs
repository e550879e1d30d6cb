//! TRSPOOL: polling the system trace buffer into a cycle of `TRACEBUF.nnn`
//! files (warp-debug-dtrace.txt §1.3.2), on the emulated clock.
//!
//! The emulator asks [`Spooler::next_poll_at`] when the next poll is due
//! (milliseconds of emulated time) and calls [`Spooler::poll`] then. Each
//! poll takes the buffer with `DosGetSTDA` (resetting it) and yields a
//! TRACEFMT save file for the next file of the cycle.
//!
//! Decisions where the documents are silent:
//!
//! * `/Fn` files are `TRACEBUF.000` to `TRACEBUF.(n-1)`, n in 1..=1000 (the
//!   document says "from 000 to the value specified", but also that /Fn is
//!   the number of files; the number wins). Each file is a TRACEFMT save
//!   file, since TRACEFMT opens them.
//! * A poll that captured no records writes no file and does not advance
//!   the cycle, so quiet periods do not overwrite captured trace.
//! * Records lost between polls: the emulator knows how many records were
//!   logged since the last reset ([`Snapshot`](crate::Snapshot)); those the
//!   captured buffer no longer holds were lost to wraps.
//! * Adaptive polling: the usage of a capture is the share of the record
//!   area that was filled since the previous poll (100 % after a wrap).
//!   Hysteresis: the usage is averaged with the previous poll's, and the
//!   interval changes only when that average is outside the target ± a band
//!   of max(target/4, 2) points. The new interval is
//!   `interval * target / usage`, limited to a quarter or twice the old one
//!   per poll, then to 50..=60000 ms. A poll that lost records skips the
//!   averaging and shrinks the interval at once. Fixed polling keeps its
//!   interval whatever happens.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::buffer::TraceBuffer;
use crate::reader::Stda;
use crate::savefile::SaveFile;
use crate::time::DosDateTime;

/// Shortest adaptive interval, ms.
pub const MIN_ADAPTIVE_MS: u32 = 50;
/// Longest adaptive interval, ms.
pub const MAX_ADAPTIVE_MS: u32 = 60_000;
/// Default target usage, percent (`/A`).
pub const DEFAULT_TARGET_PCT: u32 = 30;
/// Default initial interval, ms (`/T` with adaptive polling).
pub const DEFAULT_INITIAL_MS: u32 = 2000;
/// Default number of files (`/F`).
pub const DEFAULT_FILES: u16 = 10;

/// How the buffer is polled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PollMode {
    /// Every `interval_ms` (`/Tn` alone).
    Fixed {
        /// The interval, ms (at least 1).
        interval_ms: u32,
    },
    /// Towards `target_pct` usage, starting at `initial_ms` (`/An`, `/Tn`).
    Adaptive {
        /// Target usage of the buffer, percent (1..=100).
        target_pct: u32,
        /// The first interval, ms.
        initial_ms: u32,
    },
}

/// TRSPOOL's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpoolOptions {
    /// Number of files in the cycle (`/Fn`).
    pub files: u16,
    /// Polling mode.
    pub mode: PollMode,
    /// `/Q`: no messages.
    pub quiet: bool,
    /// `/W`: write-through (implies pre-allocation).
    pub write_through: bool,
    /// `/P`: pre-allocate the files.
    pub preallocate: bool,
}

impl Default for SpoolOptions {
    fn default() -> Self {
        Self {
            files: DEFAULT_FILES,
            mode: PollMode::Adaptive {
                target_pct: DEFAULT_TARGET_PCT,
                initial_ms: DEFAULT_INITIAL_MS,
            },
            quiet: false,
            write_through: false,
            preallocate: false,
        }
    }
}

/// A bad TRSPOOL option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad TRSPOOL option '{0}'")]
pub struct OptionError(pub String);

impl SpoolOptions {
    /// Parses TRSPOOL's options (`/An /Fn /Tn /Q /W /P`, either case, `-`
    /// or `/`).
    ///
    /// # Errors
    /// [`OptionError`] naming the option.
    pub fn parse(args: &[String]) -> Result<Self, OptionError> {
        let mut o = Self::default();
        let (mut target, mut time) = (None, None);
        for a in args {
            let bad = || OptionError(a.clone());
            let body = a.strip_prefix(['/', '-']).ok_or_else(bad)?;
            let mut chars = body.chars();
            let letter = chars.next().ok_or_else(bad)?.to_ascii_uppercase();
            let rest = chars.as_str();
            let num = |lo: u32, hi: u32| {
                rest.parse::<u32>()
                    .ok()
                    .filter(|n| (lo..=hi).contains(n))
                    .ok_or_else(bad)
            };
            match letter {
                'A' => target = Some(num(1, 100)?),
                'F' => o.files = num(1, 1000)? as u16,
                'T' => time = Some(num(1, u32::MAX)?),
                'Q' if rest.is_empty() => o.quiet = true,
                'W' if rest.is_empty() => {
                    o.write_through = true;
                    o.preallocate = true;
                }
                'P' if rest.is_empty() => o.preallocate = true,
                _ => return Err(bad()),
            }
        }
        o.mode = match (target, time) {
            (None, Some(t)) => PollMode::Fixed { interval_ms: t },
            (target, time) => PollMode::Adaptive {
                target_pct: target.unwrap_or(DEFAULT_TARGET_PCT),
                initial_ms: time
                    .unwrap_or(DEFAULT_INITIAL_MS)
                    .clamp(MIN_ADAPTIVE_MS, MAX_ADAPTIVE_MS),
            },
        };
        Ok(o)
    }
}

/// The name of file `n` of the cycle: `TRACEBUF.nnn`.
pub fn file_name(n: u16) -> String {
    format!("TRACEBUF.{n:03}")
}

/// What one poll captured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpoolPoll {
    /// When the poll ran, ms of emulated time.
    pub at_ms: u64,
    /// The file to write (`TRACEBUF.nnn`), if the capture held records.
    pub file: Option<(String, SaveFile)>,
    /// Records captured.
    pub records: u64,
    /// Records logged since the previous poll that the capture no longer
    /// held.
    pub lost: u64,
    /// Usage of the record area at capture time, percent (0..=100).
    pub usage_pct: u32,
    /// The interval until the next poll, ms.
    pub next_interval_ms: u32,
}

/// Running totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpoolTotals {
    /// Polls made.
    pub polls: u64,
    /// Files written.
    pub files_written: u64,
    /// Records captured.
    pub records: u64,
    /// Records lost to wraps between polls.
    pub lost: u64,
}

impl fmt::Display for SpoolTotals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} polls, {} files, {} records spooled, {} lost",
            self.polls, self.files_written, self.records, self.lost
        )
    }
}

/// The TRSPOOL state machine.
#[derive(Debug, Clone)]
pub struct Spooler {
    options: SpoolOptions,
    interval_ms: u32,
    next_poll_at: u64,
    next_file: u16,
    prev_usage: Option<u32>,
    totals: SpoolTotals,
}

impl Spooler {
    /// A spooler started at `start_ms`.
    pub fn new(options: SpoolOptions, start_ms: u64) -> Self {
        let interval_ms = match options.mode {
            PollMode::Fixed { interval_ms } => interval_ms.max(1),
            PollMode::Adaptive { initial_ms, .. } => {
                initial_ms.clamp(MIN_ADAPTIVE_MS, MAX_ADAPTIVE_MS)
            }
        };
        Self {
            options,
            interval_ms,
            next_poll_at: start_ms + u64::from(interval_ms),
            next_file: 0,
            prev_usage: None,
            totals: SpoolTotals::default(),
        }
    }

    /// When the next poll is due, ms of emulated time.
    pub fn next_poll_at(&self) -> u64 {
        self.next_poll_at
    }

    /// The current polling interval, ms.
    pub fn interval_ms(&self) -> u32 {
        self.interval_ms
    }

    /// The totals so far.
    pub fn totals(&self) -> SpoolTotals {
        self.totals
    }

    /// The options.
    pub fn options(&self) -> &SpoolOptions {
        &self.options
    }

    /// Polls now: captures the buffer (resetting it), counts records and
    /// losses, picks the next interval.
    pub fn poll(&mut self, buffer: &mut TraceBuffer, now_ms: u64, now: DosDateTime) -> SpoolPoll {
        let capacity = buffer.capacity() as u64;
        let snap = buffer.get_stda();
        let records = Stda::parse(&snap.stda).map_or(0, |s| s.walk_back().count() as u64);
        let lost = snap.records_logged.saturating_sub(records);
        let usage_pct = (snap.bytes_logged.min(capacity) * 100 / capacity) as u32;
        self.adapt(usage_pct, lost > 0);
        let file = (records > 0).then(|| {
            let name = file_name(self.next_file);
            self.next_file = (self.next_file + 1) % self.options.files.max(1);
            self.totals.files_written += 1;
            let save = SaveFile {
                datetime: now,
                stda: snap.stda,
            };
            (name, save)
        });
        self.totals.polls += 1;
        self.totals.records += records;
        self.totals.lost += lost;
        self.next_poll_at = now_ms + u64::from(self.interval_ms);
        SpoolPoll {
            at_ms: now_ms,
            file,
            records,
            lost,
            usage_pct,
            next_interval_ms: self.interval_ms,
        }
    }

    fn adapt(&mut self, usage: u32, lost: bool) {
        let PollMode::Adaptive { target_pct, .. } = self.options.mode else {
            return;
        };
        let target = target_pct.clamp(1, 100);
        let smoothed = match (lost, self.prev_usage) {
            (false, Some(prev)) => (usage + prev) / 2,
            _ => usage,
        };
        self.prev_usage = Some(usage);
        let band = (target / 4).max(2);
        if !lost && smoothed.abs_diff(target) <= band {
            return;
        }
        let old = u64::from(self.interval_ms);
        let wanted = old * u64::from(target) / u64::from(smoothed.max(1));
        let limited = if lost {
            old / 4
        } else {
            wanted.clamp(old / 4, old * 2)
        };
        self.interval_ms =
            limited.clamp(u64::from(MIN_ADAPTIVE_MS), u64::from(MAX_ADAPTIVE_MS)) as u32;
    }
}

/// Writes a poll's file into `dir`, returning its path (None when the poll
/// wrote no file).
///
/// # Errors
/// The I/O error of creating or writing the file.
pub fn write_poll(dir: &Path, poll: &SpoolPoll) -> io::Result<Option<PathBuf>> {
    let Some((name, save)) = &poll.file else {
        return Ok(None);
    };
    let path = dir.join(name);
    write_replacing(&path, &save.to_bytes())?;
    Ok(Some(path))
}

/// Writes `bytes` to `path` through a temporary file in the same directory
/// renamed over it, so a reader that watches the directory (`tracefmt
/// --follow`) never sees a half-written file.
///
/// # Errors
/// The I/O error of writing or renaming; the temporary file is removed.
pub fn write_replacing(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.partial"));
    let result = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// `/P` (and `/W`): creates every `TRACEBUF.nnn` of the cycle in `dir`,
/// filled with NULs to the size of a save file of a buffer of `stda_len`
/// bytes, so the space is there before tracing starts.
///
/// # Errors
/// The I/O error of creating or writing a file.
pub fn preallocate(dir: &Path, options: &SpoolOptions, stda_len: usize) -> io::Result<()> {
    let zeros = vec![0u8; crate::savefile::HEADER_SIZE + stda_len];
    for n in 0..options.files.max(1) {
        std::fs::write(dir.join(file_name(n)), &zeros)?;
    }
    Ok(())
}
