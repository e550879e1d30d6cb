//! The fine-time sidecar: os2trace's own file beside a TRACEFMT save file,
//! `FILE.idx` for `FILE`, that keeps for every record of the save file's
//! STDA what OS/2's 1/100-second timestamps cannot: the emulated cycle
//! count and nanosecond of the hit, the hit's cost, the tracepoint's linear
//! address and the thread. The STDA and the save file are not changed by
//! it; a reader that does not know the sidecar loses nothing.
//!
//! ```text
//! 0x00  "OS2TIDX\0"
//! 0x08  u32  version (1)
//! 0x0C  u32  N, the number of entries
//! 0x10  u64  records logged since the buffer was last reset (or TRACE ON)
//! 0x18  u64  records lost: logged but overwritten by wraps before capture
//! 0x20  N entries of 40 bytes, oldest first, one per record of the STDA:
//!       +0   u64  emulated cycle count at the hit
//!       +8   u64  emulated nanoseconds since the run started, at the hit
//!       +16  u64  the hit's cost in emulated nanoseconds (trap, RPN, step)
//!       +24  u32  the hit's cost in cycles
//!       +28  u32  the tracepoint's linear address (of the INT3)
//!       +32  u16  PID   +34 u16 TID   +36 u16 minor   +38 u16 major
//! ```
//!
//! All fields are little endian. Entry `i` belongs to the STDA's `i`-th
//! record in time order; PID, minor and major repeat the trailer's so a
//! reader can tell a sidecar that does not belong to the file
//! ([`Sidecar::matches`]).
//!
//! The runtime keeps the entries in a [`Recorder`] as records are logged
//! and writes [`Recorder::sidecar`] beside each save file (TRACEGET) and
//! each TRSPOOL file.

use thiserror::Error;

use crate::record::Record;

/// The magic bytes.
pub const SIDECAR_MAGIC: &[u8; 8] = b"OS2TIDX\0";
/// The version this module writes and reads.
pub const SIDECAR_VERSION: u32 = 1;
/// Bytes before the entries.
pub const SIDECAR_HEADER_SIZE: usize = 0x20;
/// Bytes of one entry.
pub const ENTRY_SIZE: usize = 40;

/// What the runtime knows about one record's hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HitTime {
    /// Emulated cycle count at the hit.
    pub cycle: u64,
    /// Emulated nanoseconds since the run started, at the hit.
    pub ns: u64,
    /// The hit's cost in emulated nanoseconds.
    pub cost_ns: u64,
    /// The hit's cost in cycles.
    pub cost_cycles: u32,
    /// Linear address of the tracepoint.
    pub address: u32,
    /// Process.
    pub pid: u16,
    /// Thread.
    pub tid: u16,
    /// Minor code.
    pub minor: u16,
    /// Major code.
    pub major: u16,
}

/// A sidecar file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sidecar {
    /// Records logged since the buffer was last reset.
    pub logged: u64,
    /// Records lost to wraps before the capture.
    pub lost: u64,
    /// One entry per record of the STDA, oldest first.
    pub entries: Vec<HitTime>,
}

/// A malformed sidecar.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SidecarError {
    /// A read past the end (the checks before it make this unreachable in
    /// practice; the shared reader reports it with offset and structure).
    #[error("{0}")]
    Read(#[from] binread::Error),
    /// The file is shorter than its header says.
    #[error("sidecar truncated at offset {offset:#x}: {what}")]
    Truncated {
        /// Where the missing bytes start.
        offset: usize,
        /// What is missing.
        what: String,
    },
    /// Not a sidecar.
    #[error("sidecar at offset 0x0: magic is not \"OS2TIDX\\0\"")]
    BadMagic,
    /// A version this reader does not know.
    #[error("sidecar at offset 0x8: version {0} is not 1")]
    BadVersion(u32),
    /// Bytes after the last entry.
    #[error("sidecar at offset {0:#x}: bytes after the last entry")]
    Trailing(usize),
}

impl Sidecar {
    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(SIDECAR_HEADER_SIZE + ENTRY_SIZE * self.entries.len());
        out.extend_from_slice(SIDECAR_MAGIC);
        out.extend_from_slice(&SIDECAR_VERSION.to_le_bytes());
        let n = u32::try_from(self.entries.len()).unwrap_or(u32::MAX);
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&self.logged.to_le_bytes());
        out.extend_from_slice(&self.lost.to_le_bytes());
        for e in self.entries.iter().take(n as usize) {
            out.extend_from_slice(&e.cycle.to_le_bytes());
            out.extend_from_slice(&e.ns.to_le_bytes());
            out.extend_from_slice(&e.cost_ns.to_le_bytes());
            out.extend_from_slice(&e.cost_cycles.to_le_bytes());
            out.extend_from_slice(&e.address.to_le_bytes());
            for v in [e.pid, e.tid, e.minor, e.major] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        out
    }

    /// Reads a sidecar.
    ///
    /// # Errors
    /// The offset and what is wrong.
    pub fn parse(bytes: &[u8]) -> Result<Self, SidecarError> {
        if bytes.len() < 8 || &bytes[..8] != SIDECAR_MAGIC {
            return Err(SidecarError::BadMagic);
        }
        if bytes.len() < SIDECAR_HEADER_SIZE {
            return Err(SidecarError::Truncated {
                offset: bytes.len(),
                what: format!("the header needs {SIDECAR_HEADER_SIZE} bytes"),
            });
        }
        let b = binread::Bytes::new(bytes);
        let version = b.u32(8, "sidecar header")?;
        if version != SIDECAR_VERSION {
            return Err(SidecarError::BadVersion(version));
        }
        let n = b.u32(12, "sidecar header")? as usize;
        let body = bytes.len() - SIDECAR_HEADER_SIZE;
        if body / ENTRY_SIZE < n {
            let whole = body / ENTRY_SIZE;
            return Err(SidecarError::Truncated {
                offset: SIDECAR_HEADER_SIZE + whole * ENTRY_SIZE,
                what: format!("entry {whole} of {n}"),
            });
        }
        if body > n * ENTRY_SIZE {
            return Err(SidecarError::Trailing(SIDECAR_HEADER_SIZE + n * ENTRY_SIZE));
        }
        let mut entries = Vec::with_capacity(n);
        let mut c = b.cursor_at(SIDECAR_HEADER_SIZE as u64);
        const E: &str = "sidecar entry";
        for _ in 0..n {
            entries.push(HitTime {
                cycle: c.u64(E)?,
                ns: c.u64(E)?,
                cost_ns: c.u64(E)?,
                cost_cycles: c.u32(E)?,
                address: c.u32(E)?,
                pid: c.u16(E)?,
                tid: c.u16(E)?,
                minor: c.u16(E)?,
                major: c.u16(E)?,
            });
        }
        Ok(Sidecar {
            logged: b.u64(16, "sidecar header")?,
            lost: b.u64(24, "sidecar header")?,
            entries,
        })
    }

    /// Whether the entries belong to these records (time order): the same
    /// count, and each entry's PID, minor and major byte match the
    /// trailer's.
    pub fn matches(&self, records: &[Record]) -> bool {
        self.entries.len() == records.len()
            && self
                .entries
                .iter()
                .zip(records)
                .all(|(e, r)| e.pid == r.pid && e.minor == r.minor && e.major as u8 == r.major)
    }

    /// The sidecar's path for a save file: `FILE.idx`.
    pub fn path_for(save: &std::path::Path) -> std::path::PathBuf {
        let mut s = save.as_os_str().to_os_string();
        s.push(".idx");
        s.into()
    }
}

/// The runtime's side: the fine times of the records the buffer may still
/// hold, bounded by the most records a buffer of that size can hold (a
/// record takes at least its trailer), so a guest that logs without end
/// costs no more host memory than its buffer.
#[derive(Debug, Clone)]
pub struct Recorder {
    entries: std::collections::VecDeque<HitTime>,
    limit: usize,
}

impl Recorder {
    /// A recorder for a buffer of `capacity` bytes.
    pub fn new(capacity: usize) -> Self {
        Recorder {
            entries: std::collections::VecDeque::new(),
            limit: capacity / crate::record::TRAILER_SIZE + 1,
        }
    }

    /// One record was logged.
    pub fn push(&mut self, hit: HitTime) {
        if self.entries.len() == self.limit {
            self.entries.pop_front();
        }
        self.entries.push_back(hit);
    }

    /// The buffer was reset (`DosGetSTDA`, a TRSPOOL poll).
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// The sidecar of a capture: `records` are the captured STDA's records
    /// in time order, `logged` the records logged since the last reset.
    /// The newest entries belong to the records; an empty sidecar (that
    /// matches nothing) when fewer entries are known than records.
    pub fn sidecar(&self, records: &[Record], logged: u64) -> Sidecar {
        let n = records.len();
        let entries = if self.entries.len() >= n {
            self.entries
                .iter()
                .skip(self.entries.len() - n)
                .copied()
                .collect()
        } else {
            Vec::new()
        };
        Sidecar {
            logged,
            lost: logged.saturating_sub(n as u64),
            entries,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorder_keeps_what_the_buffer_can_hold() {
        use crate::{RecordFlags, RecordIn, Stda, StdaFormat, Timestamp, TraceBuffer};
        let mut buf = TraceBuffer::new(StdaFormat::New, 1).unwrap();
        let mut rec = Recorder::new(buf.capacity());
        for i in 0..1000u16 {
            let data = [0u8; 20];
            buf.log(
                &RecordIn {
                    major: 0xC2,
                    minor: i,
                    pid: 1,
                    flags: RecordFlags::API,
                    data: &data,
                },
                Timestamp::new(12, 0, 0, 0),
            )
            .unwrap();
            rec.push(HitTime {
                ns: u64::from(i),
                pid: 1,
                minor: i,
                major: 0xC2,
                ..HitTime::default()
            });
        }
        assert!(rec.entries.len() <= buf.capacity() / 8 + 1);
        let records = Stda::parse(buf.as_bytes()).unwrap().records();
        let side = rec.sidecar(&records, buf.records_logged());
        assert!(side.matches(&records));
        assert_eq!(side.lost, 1000 - records.len() as u64);
        assert_eq!(side.entries.last().unwrap().ns, 999);
        rec.clear();
        assert!(!rec.sidecar(&records, 0).matches(&records));
    }

    #[test]
    fn round_trip_and_errors() {
        let s = Sidecar {
            logged: 7,
            lost: 5,
            entries: vec![
                HitTime {
                    cycle: 1 << 40,
                    ns: 123_456_789,
                    cost_ns: 900,
                    cost_cycles: 30,
                    address: 0x1BFF_0012,
                    pid: 3,
                    tid: 1,
                    minor: 2,
                    major: 0xC2,
                },
                HitTime::default(),
            ],
        };
        let b = s.to_bytes();
        assert_eq!(b.len(), SIDECAR_HEADER_SIZE + 2 * ENTRY_SIZE);
        assert_eq!(Sidecar::parse(&b).unwrap(), s);
        assert_eq!(Sidecar::parse(b"nope"), Err(SidecarError::BadMagic));
        assert!(matches!(
            Sidecar::parse(&b[..b.len() - 1]),
            Err(SidecarError::Truncated { offset: 0x48, .. })
        ));
        let mut long = b.clone();
        long.push(0);
        assert_eq!(Sidecar::parse(&long), Err(SidecarError::Trailing(0x70)));
        let mut v2 = b;
        v2[8] = 2;
        assert_eq!(Sidecar::parse(&v2), Err(SidecarError::BadVersion(2)));
    }
}
