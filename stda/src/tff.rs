//! The TFF binary format (`TRC%04X.TFF`), read and written byte for byte as
//! TRCUST 3.05A does (TRCUST-FORMATS.md §4.1).
//!
//! ```text
//! 0x00  "TFF\0"
//! 0x04  u16  major
//! 0x06  u16  number of records
//! 0x08  u32  offset of the directory (0x3E)
//! 0x0C  50   "Reserved -" and NULs
//! 0x3E  directory: per record u16 minor, u16 length, u32 offset
//!       records back to back: DESC 00 (FMT 0D 0A)* 00
//! ```
//!
//! FMT text is kept as stored: format controls are byte 0x01 and a letter
//! (see [`crate::fmt`] for turning TSF text into that and for reading it).
//! Text is bytes, not `String`: TFFs hold code-page text.
//!
//! [`Tff::to_bytes`] writes the directory sorted by minor (stable, so
//! duplicate minors keep their order), as TRCUST does; [`Tff::parse`]
//! keeps the file's order.

use thiserror::Error;

/// `"TFF\0"`.
pub const TFF_MAGIC: &[u8; 4] = b"TFF\0";
/// Offset of the directory, and size of the header.
pub const DIRECTORY_OFFSET: usize = 0x3E;
/// The text at 0x0C of every TFF.
pub const RESERVED_TEXT: &[u8] = b"Reserved -";

/// One tracepoint's formatting rule.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TffRecord {
    /// Minor code.
    pub minor: u16,
    /// The DESC text (no NUL).
    pub desc: Vec<u8>,
    /// The FMT strings as stored (controls as 0x01 + letter), without the
    /// CR LF each gets in the file.
    pub fmts: Vec<Vec<u8>>,
}

impl TffRecord {
    /// The record's bytes: `DESC 00 (FMT 0D 0A)* 00`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.desc.len() + 2 + self.fmts.len() * 32);
        v.extend_from_slice(&self.desc);
        v.push(0);
        for f in &self.fmts {
            v.extend_from_slice(f);
            v.extend_from_slice(b"\r\n");
        }
        v.push(0);
        v
    }
}

/// A trace format file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tff {
    /// Major code.
    pub major: u16,
    /// The records.
    pub records: Vec<TffRecord>,
}

/// A malformed TFF. Offsets are from the start of the file.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TffError {
    /// Fewer bytes than the structure needs.
    #[error(
        "TFF truncated at offset {offset:#06x}: {what} needs {needed} bytes, {available} present"
    )]
    Truncated {
        /// Where the structure starts.
        offset: usize,
        /// The structure.
        what: &'static str,
        /// Bytes it needs.
        needed: usize,
        /// Bytes present.
        available: usize,
    },
    /// A read past the end (the checks above it make this unreachable in
    /// practice; the shared reader reports it with offset and structure).
    #[error("{0}")]
    Read(#[from] binread::Error),
    /// The file does not start with `"TFF\0"`.
    #[error("TFF header at offset 0x0000: magic is not \"TFF\\0\"")]
    BadMagic,
    /// A record lies outside the file.
    #[error(
        "TFF directory entry {index} at offset {offset:#06x}: record {start:#x}+{len} lies outside the file of {file_len} bytes"
    )]
    RecordOutside {
        /// Directory index.
        index: usize,
        /// Offset of the directory entry.
        offset: usize,
        /// Record offset it gives.
        start: usize,
        /// Record length it gives.
        len: usize,
        /// File length.
        file_len: usize,
    },
    /// A record is not `DESC 00 (FMT 0D 0A)* 00`.
    #[error("TFF record for minor {minor:#06x} at offset {offset:#06x}: {what}")]
    BadRecord {
        /// Minor code.
        minor: u16,
        /// Offset of the fault.
        offset: usize,
        /// What is wrong.
        what: &'static str,
    },
    /// The header's layout is impossible.
    #[error("TFF at offset {offset:#06x}: {what}")]
    Layout {
        /// Offset of the fault.
        offset: usize,
        /// What is wrong.
        what: &'static str,
    },
}

impl Tff {
    /// The file name TRACEFMT looks for: `TRC%04X.TFF`.
    pub fn file_name(major: u16) -> String {
        format!("TRC{major:04X}.TFF")
    }

    /// The record for `minor` (the first, if the file has duplicates).
    pub fn record(&self, minor: u16) -> Option<&TffRecord> {
        self.records.iter().find(|r| r.minor == minor)
    }

    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut order: Vec<&TffRecord> = self.records.iter().collect();
        order.sort_by_key(|r| r.minor);
        let bodies: Vec<Vec<u8>> = order.iter().map(|r| r.to_bytes()).collect();
        let n = order.len();
        let mut out = Vec::with_capacity(
            DIRECTORY_OFFSET + 8 * n + bodies.iter().map(Vec::len).sum::<usize>(),
        );
        out.extend_from_slice(TFF_MAGIC);
        out.extend_from_slice(&self.major.to_le_bytes());
        out.extend_from_slice(&(n as u16).to_le_bytes());
        out.extend_from_slice(&(DIRECTORY_OFFSET as u32).to_le_bytes());
        out.extend_from_slice(RESERVED_TEXT);
        out.resize(DIRECTORY_OFFSET, 0);
        let mut at = DIRECTORY_OFFSET + 8 * n;
        for (r, body) in order.iter().zip(&bodies) {
            out.extend_from_slice(&r.minor.to_le_bytes());
            out.extend_from_slice(&(body.len() as u16).to_le_bytes());
            out.extend_from_slice(&(at as u32).to_le_bytes());
            at += body.len();
        }
        for body in &bodies {
            out.extend_from_slice(body);
        }
        out
    }

    /// Parses a TFF. Records are read through the directory wherever they
    /// lie, and the reserved area is not checked, so TFFs from other
    /// writers read too; files TRCUST wrote come back byte for byte from
    /// [`Tff::to_bytes`].
    ///
    /// # Errors
    /// [`TffError`] naming the offset and the structure.
    pub fn parse(bytes: &[u8]) -> Result<Self, TffError> {
        if bytes.len() < 0x0C {
            return Err(TffError::Truncated {
                offset: 0,
                what: "TFF header",
                needed: 0x0C,
                available: bytes.len(),
            });
        }
        if &bytes[..4] != TFF_MAGIC {
            return Err(TffError::BadMagic);
        }
        let b = binread::Bytes::new(bytes);
        let major = b.u16(4, "TFF header")?;
        let n = usize::from(b.u16(6, "TFF header")?);
        let dir = b.u32(8, "TFF header")? as usize;
        if dir < 0x0C {
            return Err(TffError::Layout {
                offset: 8,
                what: "directory offset lies inside the header",
            });
        }
        let available = bytes.len().saturating_sub(dir);
        if available < 8 * n {
            return Err(TffError::Truncated {
                offset: dir,
                what: "TFF directory",
                needed: 8 * n,
                available,
            });
        }
        let mut records = Vec::with_capacity(n);
        for index in 0..n {
            let e = dir + 8 * index;
            let at = e as u64;
            let minor = b.u16(at, "TFF directory")?;
            let len = usize::from(b.u16(at + 2, "TFF directory")?);
            let start = b.u32(at + 4, "TFF directory")? as usize;
            if start.checked_add(len).is_none_or(|end| end > bytes.len()) {
                return Err(TffError::RecordOutside {
                    index,
                    offset: e,
                    start,
                    len,
                    file_len: bytes.len(),
                });
            }
            records.push(parse_record(minor, &bytes[start..start + len], start)?);
        }
        Ok(Self { major, records })
    }
}

fn parse_record(minor: u16, body: &[u8], base: usize) -> Result<TffRecord, TffError> {
    let bad = |offset: usize, what| TffError::BadRecord {
        minor,
        offset: base + offset,
        what,
    };
    let nul = body
        .iter()
        .position(|&b| b == 0)
        .ok_or_else(|| bad(0, "DESC has no terminating NUL"))?;
    let desc = body[..nul].to_vec();
    let rest = &body[nul + 1..];
    let Some((&0, fmts_area)) = rest.split_last() else {
        return Err(bad(body.len(), "record does not end with NUL"));
    };
    let mut fmts = Vec::new();
    let mut at = 0;
    while at < fmts_area.len() {
        let line = &fmts_area[at..];
        let end = line
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or_else(|| bad(nul + 1 + at, "FMT has no CR LF"))?;
        if line[..end].contains(&0) {
            return Err(bad(nul + 1 + at, "NUL inside FMT"));
        }
        fmts.push(line[..end].to_vec());
        at += end + 2;
    }
    Ok(TffRecord { minor, desc, fmts })
}
