//! Reading an STDA: the header, the backward walk from NEXT, and the
//! records in time order.
//!
//! The walk follows the Debugging Handbook: from NEXT it takes the 8-byte
//! trailer, then the timestamp, then the data, each piece wrapping from
//! FIRST back to LAST when it is longer than the distance from the current
//! position down to FIRST. It stops, without error, at
//!
//! * an end-of-data trailer (major 0 and length 0), or
//! * the first record that would need more bytes than the record area holds
//!   (LAST - FIRST + 1) counting everything walked so far: after a wrap,
//!   that is the oldest record, partly overwritten.
//!
//! Only the header can be malformed; past it every byte sequence reads as
//! some records and a stop. Times of the old format's unstamped records are
//! inherited from the nearest older stamped record in
//! [`Stda::records`] and [`Stda::forward`].

use thiserror::Error;

use crate::record::{
    FIRST_OFFSET, LAST_OFFSET, MAGIC, NEXT_OFFSET, Record, RecordFlags, StdaFormat,
    TRACE_OFF_OFFSET, TRACE_ON_OFFSET, TRAILER_SIZE, TraceTimes,
};
use crate::time::{Stamp, Timestamp, TraceDateTime};

/// A malformed STDA header. Offsets are from the start of the STDA.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StdaError {
    /// A read past the end (the checks before it make this unreachable in
    /// practice; the shared reader reports it with offset and structure).
    #[error("{0}")]
    Read(#[from] binread::Error),
    /// Fewer bytes than the structure needs.
    #[error(
        "STDA truncated at offset {offset:#06x}: {what} needs {needed} bytes, {available} present"
    )]
    Truncated {
        /// Where the structure starts.
        offset: usize,
        /// The structure being read.
        what: &'static str,
        /// Bytes it needs.
        needed: usize,
        /// Bytes present from `offset`.
        available: usize,
    },
    /// The first 8 bytes are not `"SYSTRACE"`.
    #[error("STDA header at offset 0x0000: ID is not \"SYSTRACE\"")]
    BadMagic,
    /// FIRST is neither 0x000E (old format) nor 0x001E (new format).
    #[error("STDA header at offset 0x0008: FIRST {first:#06x} is neither 0x000E nor 0x001E")]
    UnknownFormat {
        /// The FIRST value read.
        first: u16,
    },
    /// LAST is below FIRST + 7 (no room for one trailer).
    #[error(
        "STDA header at offset 0x000a: LAST {last:#06x} leaves no record area after FIRST {first:#06x}"
    )]
    BadLast {
        /// FIRST.
        first: u16,
        /// LAST.
        last: u16,
    },
    /// NEXT lies outside FIRST..=LAST.
    #[error(
        "STDA header at offset 0x000c: NEXT {next:#06x} is outside FIRST {first:#06x}..LAST {last:#06x}"
    )]
    BadNext {
        /// FIRST.
        first: u16,
        /// LAST.
        last: u16,
        /// NEXT.
        next: u16,
    },
}

/// Why a backward walk stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StopReason {
    /// An end-of-data trailer (major 0, length 0).
    EndOfData,
    /// The next record would need more than one buffer's worth of bytes.
    Capacity,
}

/// A parsed STDA header over the buffer's bytes.
#[derive(Debug, Clone, Copy)]
pub struct Stda<'a> {
    bytes: &'a [u8],
    format: StdaFormat,
    first: usize,
    last: usize,
    next: usize,
}

/// The TRACE ON/OFF times of a new-format header (the caller has checked
/// the length).
pub(crate) fn header_times(format: StdaFormat, b: &[u8]) -> Option<TraceTimes> {
    if format != StdaFormat::New || b.len() < TRACE_OFF_OFFSET + 8 {
        return None;
    }
    let get = |at: usize| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[at..at + 8]);
        TraceDateTime::from_bytes(a)
    };
    Some(TraceTimes {
        on: get(TRACE_ON_OFFSET),
        off: get(TRACE_OFF_OFFSET),
    })
}

impl<'a> Stda<'a> {
    /// Parses the header. `bytes` may be longer than LAST + 1; the rest is
    /// ignored.
    ///
    /// # Errors
    /// [`StdaError`] naming the offset and the header field at fault.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, StdaError> {
        if bytes.len() < 14 {
            return Err(StdaError::Truncated {
                offset: 0,
                what: "STDA header",
                needed: 14,
                available: bytes.len(),
            });
        }
        if &bytes[..8] != MAGIC {
            return Err(StdaError::BadMagic);
        }
        let b = binread::Bytes::new(bytes);
        let first = b.u16(FIRST_OFFSET as u64, "STDA header")?;
        let last = b.u16(LAST_OFFSET as u64, "STDA header")?;
        let next = b.u16(NEXT_OFFSET as u64, "STDA header")?;
        let format = StdaFormat::from_first(first).ok_or(StdaError::UnknownFormat { first })?;
        if usize::from(last) < usize::from(first) + TRAILER_SIZE - 1 {
            return Err(StdaError::BadLast { first, last });
        }
        if next < first || next > last {
            return Err(StdaError::BadNext { first, last, next });
        }
        if bytes.len() <= usize::from(last) {
            return Err(StdaError::Truncated {
                offset: 0,
                what: "STDA of LAST + 1 bytes",
                needed: usize::from(last) + 1,
                available: bytes.len(),
            });
        }
        Ok(Self {
            bytes: &bytes[..=usize::from(last)],
            format,
            first: usize::from(first),
            last: usize::from(last),
            next: usize::from(next),
        })
    }

    /// The buffer format.
    pub fn format(&self) -> StdaFormat {
        self.format
    }

    /// FIRST.
    pub fn first(&self) -> u16 {
        self.first as u16
    }

    /// LAST.
    pub fn last(&self) -> u16 {
        self.last as u16
    }

    /// NEXT.
    pub fn next_offset(&self) -> u16 {
        self.next as u16
    }

    /// The STDA bytes, LAST + 1 of them.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Size of the record area.
    pub fn capacity(&self) -> usize {
        self.last - self.first + 1
    }

    /// TRACE ON/OFF times (new format only).
    pub fn trace_times(&self) -> Option<TraceTimes> {
        header_times(self.format, self.bytes)
    }

    /// Records from the newest back to the oldest intact one.
    pub fn walk_back(&self) -> WalkBack<'a> {
        WalkBack {
            stda: *self,
            pos: self.next,
            consumed: 0,
            stop: None,
            tmp: Vec::with_capacity(TRAILER_SIZE),
        }
    }

    /// All intact records, oldest first, with old-format times inherited.
    pub fn records(&self) -> Vec<Record> {
        let mut v: Vec<Record> = self.walk_back().collect();
        v.reverse();
        let mut current = None;
        for r in &mut v {
            if r.stamp.is_some() {
                current = r.stamp;
            }
            r.time = current;
        }
        v
    }

    /// The records in time order (oldest first); see [`Stda::records`].
    pub fn forward(&self) -> std::vec::IntoIter<Record> {
        self.records().into_iter()
    }
}

/// The backward walk from NEXT; see the module docs.
#[derive(Debug, Clone)]
pub struct WalkBack<'a> {
    stda: Stda<'a>,
    pos: usize,
    consumed: usize,
    stop: Option<StopReason>,
    /// The trailer and timestamp bytes of the record being read (kept to
    /// allocate once per walk, not once per record).
    tmp: Vec<u8>,
}

impl WalkBack<'_> {
    /// Why the walk stopped, once it has.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.stop
    }

    /// Takes the `n` bytes ending at the current position, wrapping below
    /// FIRST to LAST, into `out` (in buffer order). None when they would
    /// reach past one buffer's worth.
    fn take_back(&mut self, n: usize, out: &mut Vec<u8>) -> Option<()> {
        if self.consumed + n > self.stda.capacity() {
            return None;
        }
        let s = &self.stda;
        let near = self.pos - s.first;
        out.clear();
        if n <= near {
            out.extend_from_slice(&s.bytes[self.pos - n..self.pos]);
            self.pos -= n;
        } else {
            let far = n - near;
            out.extend_from_slice(&s.bytes[s.last + 1 - far..=s.last]);
            out.extend_from_slice(&s.bytes[s.first..self.pos]);
            self.pos = s.last + 1 - far;
        }
        self.consumed += n;
        Some(())
    }

    fn step(&mut self) -> Result<Record, StopReason> {
        let mut tmp = std::mem::take(&mut self.tmp);
        let record = self.step_with(&mut tmp);
        self.tmp = tmp;
        record
    }

    fn step_with(&mut self, tmp: &mut Vec<u8>) -> Result<Record, StopReason> {
        self.take_back(TRAILER_SIZE, tmp)
            .ok_or(StopReason::Capacity)?;
        let flags = RecordFlags::from_bits_retain(tmp[0]);
        let pid = u16::from_le_bytes([tmp[1], tmp[2]]);
        let minor = u16::from_le_bytes([tmp[3], tmp[4]]);
        let len = usize::from(u16::from_le_bytes([tmp[5], tmp[6]]));
        let major = tmp[7];
        if major == 0 && len == 0 {
            return Err(StopReason::EndOfData);
        }
        let stamp = match self.stda.format {
            StdaFormat::New => {
                self.take_back(4, tmp).ok_or(StopReason::Capacity)?;
                Some(Stamp::New(Timestamp::new(tmp[0], tmp[1], tmp[2], tmp[3])))
            }
            StdaFormat::Old if !flags.contains(RecordFlags::NO_TIMESTAMP) => {
                self.take_back(2, tmp).ok_or(StopReason::Capacity)?;
                Some(Stamp::Old {
                    seconds: tmp[0],
                    hundredths: tmp[1],
                })
            }
            StdaFormat::Old => None,
        };
        let mut data = Vec::with_capacity(len);
        if self.consumed + len > self.stda.capacity() {
            return Err(StopReason::Capacity);
        }
        self.take_back(len, &mut data).ok_or(StopReason::Capacity)?;
        Ok(Record {
            offset: self.pos as u16,
            flags,
            pid,
            minor,
            major,
            data,
            stamp,
            time: stamp,
        })
    }
}

impl Iterator for WalkBack<'_> {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        if self.stop.is_some() {
            return None;
        }
        match self.step() {
            Ok(r) => Some(r),
            Err(why) => {
                self.stop = Some(why);
                None
            }
        }
    }
}
