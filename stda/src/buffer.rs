//! The live system trace buffer: the writer the kernel calls on every
//! tracepoint hit, and `DosGetSTDA`'s snapshot-and-reset.
//!
//! The buffer is one segment of `TRACEBUF=n` KB (1..=63), laid out exactly
//! as the STDA that [`Stda`](crate::Stda) reads: header `"SYSTRACE"`, FIRST,
//! LAST (the offset of the segment's last byte, so the segment is LAST + 1
//! bytes), NEXT, then (new format) the TRACE ON/OFF times, then the circular
//! record area FIRST..=LAST.
//!
//! Decisions where the documents are silent:
//!
//! * **End of data.** Readers walk backwards from NEXT. Before the buffer
//!   has wrapped, the bytes just before FIRST (that is, LAST-7..=LAST)
//!   must read as an end-of-data trailer (major 0, length 0). A fresh
//!   buffer is all zero, and every reset writes that trailer again. Once a
//!   record reaches into those 8 bytes, the walk back from NEXT would need
//!   more than one buffer's worth of bytes to read them, so the reader's
//!   capacity rule ends it there instead. Nothing is written at NEXT, so
//!   the whole area holds records.
//! * **Old-format timestamps.** A record gets the 2-byte stamp when its
//!   full time (hours to hundredths) differs from that of the last stamped
//!   record since the last reset; otherwise flags bit 1 is set. The first
//!   record after a reset is always stamped.
//! * **New format.** Every record is stamped and bit 1 is always clear.
//! * **Refused records.** A record larger than the record area, and a
//!   record with major low byte 0 and no data (it would read as end of
//!   data), are refused with [`LogError`] and nothing is written.
//! * **DosGetSTDA** ([`TraceBuffer::get_stda`]) copies the whole segment,
//!   then resets NEXT to FIRST, writes the end-of-data trailer and forgets
//!   the last stamp. FIRST and LAST never change. Counters of records and
//!   bytes logged since the last reset travel with the snapshot, which is
//!   how TRSPOOL in the emulator counts records lost to wraps.

use thiserror::Error;

use crate::record::{
    FIRST_OFFSET, LAST_OFFSET, MAGIC, NEXT_OFFSET, RecordFlags, RecordIn, StdaFormat,
    TRACE_OFF_OFFSET, TRACE_ON_OFFSET, TRAILER_SIZE, TraceTimes,
};
use crate::time::{Timestamp, TraceDateTime};

/// Why a buffer could not be created.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// `TRACEBUF=n` outside 1..=63.
    #[error("TRACEBUF={0} is outside 1..63 (KB)")]
    BadSize(u32),
}

/// Why a record was not logged.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LogError {
    /// The record needs more bytes than the whole record area.
    #[error("record of {needed} bytes does not fit a record area of {capacity} bytes")]
    TooLarge {
        /// Bytes the record needs (data, stamp, trailer).
        needed: usize,
        /// Size of the record area.
        capacity: usize,
    },
    /// Major low byte 0 with no data reads as the end-of-data trailer.
    #[error("major code {major:#06x} with no data would read as end of data")]
    LooksLikeEnd {
        /// The major code given.
        major: u16,
    },
}

/// A copy of the buffer taken by [`TraceBuffer::get_stda`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The STDA: the whole segment, LAST + 1 bytes.
    pub stda: Vec<u8>,
    /// Records logged since the previous reset.
    pub records_logged: u64,
    /// Bytes (data, stamps, trailers) logged since the previous reset.
    pub bytes_logged: u64,
}

/// The live system trace buffer.
#[derive(Debug, Clone)]
pub struct TraceBuffer {
    format: StdaFormat,
    bytes: Vec<u8>,
    first: usize,
    last: usize,
    next: usize,
    last_stamped: Option<Timestamp>,
    records_logged: u64,
    bytes_logged: u64,
    /// The codes of the record logged last, until a reset.
    last_logged: Option<LastLogged>,
}

/// The codes of the record a [`TraceBuffer`] logged last: what a hit's
/// bookkeeping needs without reading the record back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastLogged {
    /// Major code (the stored low byte).
    pub major: u8,
    /// Minor code.
    pub minor: u16,
    /// Process ID.
    pub pid: u16,
}

impl TraceBuffer {
    /// A zeroed buffer of `size_kb` KB (`TRACEBUF=size_kb`, 1..=63).
    ///
    /// # Errors
    /// [`ConfigError::BadSize`] outside 1..=63.
    pub fn new(format: StdaFormat, size_kb: u32) -> Result<Self, ConfigError> {
        if !(1..=63).contains(&size_kb) {
            return Err(ConfigError::BadSize(size_kb));
        }
        let len = size_kb as usize * 1024;
        let first = usize::from(format.first());
        let mut buf = Self {
            format,
            bytes: vec![0; len],
            first,
            last: len - 1,
            next: first,
            last_stamped: None,
            records_logged: 0,
            bytes_logged: 0,
            last_logged: None,
        };
        buf.bytes[..8].copy_from_slice(MAGIC);
        buf.put_u16(FIRST_OFFSET, first);
        buf.put_u16(LAST_OFFSET, len - 1);
        buf.put_u16(NEXT_OFFSET, first);
        Ok(buf)
    }

    fn put_u16(&mut self, at: usize, v: usize) {
        // Offsets are below 64 KB by construction (at most 63 KB buffers).
        let v = u16::try_from(v).unwrap_or(u16::MAX);
        self.bytes[at..at + 2].copy_from_slice(&v.to_le_bytes());
    }

    /// The buffer format.
    pub fn format(&self) -> StdaFormat {
        self.format
    }

    /// The STDA image as it is now.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Size of the record area, LAST - FIRST + 1.
    pub fn capacity(&self) -> usize {
        self.last - self.first + 1
    }

    /// Offset of the next byte to write.
    pub fn next(&self) -> u16 {
        self.next as u16
    }

    /// The codes of the record logged last, until the next reset.
    pub fn last_logged(&self) -> Option<LastLogged> {
        self.last_logged
    }

    /// Records logged since the last reset.
    pub fn records_logged(&self) -> u64 {
        self.records_logged
    }

    /// Bytes logged since the last reset.
    pub fn bytes_logged(&self) -> u64 {
        self.bytes_logged
    }

    /// Records the TRACE ON time in a new-format header (ignored by the old
    /// format, which has no room for it) and clears the TRACE OFF time.
    pub fn set_trace_on(&mut self, at: TraceDateTime) {
        if self.format == StdaFormat::New {
            self.bytes[TRACE_ON_OFFSET..TRACE_ON_OFFSET + 8].copy_from_slice(&at.to_bytes());
            self.bytes[TRACE_OFF_OFFSET..TRACE_OFF_OFFSET + 8].fill(0);
        }
    }

    /// Records the TRACE OFF time in a new-format header.
    pub fn set_trace_off(&mut self, at: TraceDateTime) {
        if self.format == StdaFormat::New {
            self.bytes[TRACE_OFF_OFFSET..TRACE_OFF_OFFSET + 8].copy_from_slice(&at.to_bytes());
        }
    }

    /// The TRACE ON/OFF times (new format only).
    pub fn trace_times(&self) -> Option<TraceTimes> {
        crate::reader::header_times(self.format, &self.bytes)
    }

    /// Logs one record at `time` (from the emulated clock).
    ///
    /// # Errors
    /// [`LogError`] when the record is refused; the buffer is unchanged.
    pub fn log(&mut self, rec: &RecordIn<'_>, time: Timestamp) -> Result<(), LogError> {
        let major = rec.major as u8;
        if major == 0 && rec.data.is_empty() {
            return Err(LogError::LooksLikeEnd { major: rec.major });
        }
        let mut flags = rec.flags - RecordFlags::NO_TIMESTAMP;
        let mut tail = [0u8; 12];
        let mut n = 0;
        match self.format {
            StdaFormat::New => {
                tail[..4].copy_from_slice(&time.to_bytes());
                n = 4;
            }
            StdaFormat::Old if self.last_stamped != Some(time) => {
                tail[..2].copy_from_slice(&[time.seconds, time.hundredths]);
                n = 2;
            }
            StdaFormat::Old => flags |= RecordFlags::NO_TIMESTAMP,
        }
        let needed = rec.data.len() + n + TRAILER_SIZE;
        if needed > self.capacity() {
            return Err(LogError::TooLarge {
                needed,
                capacity: self.capacity(),
            });
        }
        // A record too large for the capacity cannot have more than 64 KB of
        // data, so the length fits its u16 field.
        let len = rec.data.len() as u16;
        tail[n] = flags.bits();
        tail[n + 1..n + 3].copy_from_slice(&rec.pid.to_le_bytes());
        tail[n + 3..n + 5].copy_from_slice(&rec.minor.to_le_bytes());
        tail[n + 5..n + 7].copy_from_slice(&len.to_le_bytes());
        tail[n + 7] = major;
        if n > 0 {
            self.last_stamped = Some(time);
        }
        self.write(rec.data);
        self.write(&tail[..n + TRAILER_SIZE]);
        self.put_u16(NEXT_OFFSET, self.next);
        self.records_logged += 1;
        self.bytes_logged += needed as u64;
        self.last_logged = Some(LastLogged {
            major,
            minor: rec.minor,
            pid: rec.pid,
        });
        Ok(())
    }

    /// Writes `src` at NEXT, wrapping from LAST to FIRST at any byte.
    fn write(&mut self, mut src: &[u8]) {
        while !src.is_empty() {
            let room = self.last + 1 - self.next;
            let k = room.min(src.len());
            self.bytes[self.next..self.next + k].copy_from_slice(&src[..k]);
            src = &src[k..];
            self.next += k;
            if self.next > self.last {
                self.next = self.first;
            }
        }
    }

    /// Empties the buffer: NEXT back to FIRST, an end-of-data trailer in
    /// the 8 bytes before FIRST (LAST-7..=LAST), counters and the last
    /// stamp forgotten. Header times are kept.
    pub fn reset(&mut self) {
        self.next = self.first;
        self.put_u16(NEXT_OFFSET, self.first);
        let end = self.last + 1;
        self.bytes[end - TRAILER_SIZE..end].fill(0);
        self.last_stamped = None;
        self.last_logged = None;
        self.records_logged = 0;
        self.bytes_logged = 0;
    }

    /// `DosGetSTDA`: a snapshot of the buffer, after which the live buffer
    /// is reset.
    pub fn get_stda(&mut self) -> Snapshot {
        let snap = Snapshot {
            stda: self.bytes.clone(),
            records_logged: self.records_logged,
            bytes_logged: self.bytes_logged,
        };
        self.reset();
        snap
    }
}
