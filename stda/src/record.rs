//! The pieces shared by the STDA writer and reader: the two buffer formats,
//! the header layout, the record flags, and records going in and coming out.
//!
//! A record in the buffer is its data, then its timestamp, then the 8-byte
//! trailer, written forward:
//!
//! ```text
//!   old, with time:   data.. | s h     | f | pid | min | len | maj
//!   old, without:     data..           | f | pid | min | len | maj
//!   new (always):     data.. | H M s h | f | pid | min | len | maj
//! ```
//!
//! `pid`, `min` and `len` are little-endian u16; `maj` is the low byte of
//! the major code (codes above 255 keep their low byte, as DosSysTrace does).

use bitflags::bitflags;

use crate::time::{Stamp, TraceDateTime};

/// `"SYSTRACE"`, the first 8 bytes of every STDA.
pub const MAGIC: &[u8; 8] = b"SYSTRACE";
/// Offset of FIRST (u16) in the header.
pub const FIRST_OFFSET: usize = 8;
/// Offset of LAST (u16) in the header.
pub const LAST_OFFSET: usize = 10;
/// Offset of NEXT (u16) in the header.
pub const NEXT_OFFSET: usize = 12;
/// Offset of the TRACE ON time in a new-format header.
pub const TRACE_ON_OFFSET: usize = 0x0E;
/// Offset of the TRACE OFF time in a new-format header.
pub const TRACE_OFF_OFFSET: usize = 0x16;
/// Size of a trace event trailer: flags, PID, minor, length, major.
pub const TRAILER_SIZE: usize = 8;

/// The two STDA formats, told apart by FIRST.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StdaFormat {
    /// GA OS/2 2.x and 3.x: records from 0x000E, 2-byte timestamps written
    /// only when the time changed.
    Old,
    /// From OS/2 2.11 fix pack 91 and 3.0 fix pack 8: records from 0x001E,
    /// TRACE ON/OFF times in the header, a 4-byte timestamp on every record.
    New,
}

impl StdaFormat {
    /// The FIRST offset of this format.
    pub const fn first(self) -> u16 {
        match self {
            StdaFormat::Old => 0x000E,
            StdaFormat::New => 0x001E,
        }
    }

    /// The format whose FIRST offset is `first`, if any.
    pub const fn from_first(first: u16) -> Option<Self> {
        match first {
            0x000E => Some(StdaFormat::Old),
            0x001E => Some(StdaFormat::New),
            _ => None,
        }
    }

    /// Size of a timestamp in this format.
    pub const fn stamp_size(self) -> usize {
        match self {
            StdaFormat::Old => 2,
            StdaFormat::New => 4,
        }
    }
}

bitflags! {
    /// The trailer's flags byte.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct RecordFlags: u8 {
        /// Bit 0: set when the record came from an API (DosSysTrace,
        /// DosDynamicTrace); clear for kernel records.
        const API = 0x01;
        /// Bit 1: set when the record has NO timestamp (old format only).
        const NO_TIMESTAMP = 0x02;
        /// Bit 2: generated in protect mode.
        const PROTECT = 0x04;
        /// Bit 3: a dynamic (not static) trace record.
        const DYNAMIC = 0x08;
        /// Bit 4: an incomplete dynamic trace record.
        const INCOMPLETE = 0x10;
    }
}

/// A record to log: what a tracepoint hit hands to
/// [`TraceBuffer::log`](crate::TraceBuffer::log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordIn<'a> {
    /// Major code; only the low byte is stored.
    pub major: u16,
    /// Minor code.
    pub minor: u16,
    /// Process ID (0 means interrupt time).
    pub pid: u16,
    /// Flags; the writer owns [`RecordFlags::NO_TIMESTAMP`] and ignores the
    /// caller's value of that bit.
    pub flags: RecordFlags,
    /// The logged data.
    pub data: &'a [u8],
}

/// A record read back from an STDA.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Record {
    /// Offset in the STDA of the record's first byte (its first data byte,
    /// or its timestamp or trailer when it has no data).
    pub offset: u16,
    /// The flags byte, reserved bits kept.
    pub flags: RecordFlags,
    /// Process ID.
    pub pid: u16,
    /// Minor code.
    pub minor: u16,
    /// Major code (the trailer's byte).
    pub major: u8,
    /// The logged data.
    pub data: Vec<u8>,
    /// The timestamp this record carries, if any.
    pub stamp: Option<Stamp>,
    /// The record's time: its own stamp, or in the old format the stamp of
    /// the nearest older stamped record still in the buffer. Filled in by
    /// the time-ordered reads; equal to `stamp` in the backward walk.
    pub time: Option<Stamp>,
}

impl Record {
    /// Bytes the record occupies in the buffer.
    pub fn size(&self) -> usize {
        self.data.len() + TRAILER_SIZE + self.stamp.map_or(0, |s| stamp_len(&s))
    }
}

fn stamp_len(s: &Stamp) -> usize {
    match s {
        Stamp::Old { .. } => 2,
        Stamp::New(_) => 4,
    }
}

/// The TRACE ON and TRACE OFF times of a new-format header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TraceTimes {
    /// When tracing was switched on.
    pub on: TraceDateTime,
    /// When tracing was switched off (all zero while it is on).
    pub off: TraceDateTime,
}

// Built for every logged record on the hit path.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(size_of::<RecordIn<'static>>() == 24);
