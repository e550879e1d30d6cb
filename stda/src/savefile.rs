//! TRACEFMT save files, and TRACEGET's capture.
//!
//! ```text
//! 0x00  u32   STDA LN: length of the STDA (LAST + 1)
//! 0x04  11    DATETIME when the file was made (DosGetDateTime)
//! 0x0F  11    check key: DATETIME XOR "TRCFMTBUFF$"
//! 0x1A  ...   the STDA as DosGetSTDA returned it
//! ```
//!
//! Decisions where the documents are silent:
//!
//! * The reader insists on the check key and on STDA LN matching both the
//!   bytes present and the STDA's own LAST + 1; bytes after the STDA are an
//!   error (a TRACEFMT file holds exactly one buffer).
//! * TRACEGET (`TRACEGET file`) writes this same format: the documents say
//!   only that it "saves the buffer in a file", and TRACEFMT opens its
//!   files, so it uses the one format TRACEFMT reads. [`traceget`] takes
//!   the buffer with `DosGetSTDA`, so the live buffer is reset.

use thiserror::Error;

use crate::buffer::TraceBuffer;
use crate::reader::{Stda, StdaError};
use crate::time::DosDateTime;

/// The string the DATETIME is XORed with to make the check key.
pub const CHECK_STRING: &[u8; 11] = b"TRCFMTBUFF$";
/// Size of the save-file header before the STDA.
pub const HEADER_SIZE: usize = 0x1A;

/// A malformed save file. Offsets are from the start of the file.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SaveFileError {
    /// The file is shorter than its header.
    #[error("save file truncated at offset 0x0000: header needs 26 bytes, {0} present")]
    Truncated(usize),
    /// A check-key byte does not match DATETIME XOR "TRCFMTBUFF$".
    #[error("save file check key wrong at offset {offset:#06x}")]
    BadCheckKey {
        /// Offset of the first wrong byte.
        offset: usize,
    },
    /// STDA LN disagrees with the bytes present.
    #[error(
        "save file STDA LN at offset 0x0000 is {declared}, but {present} STDA bytes follow the header"
    )]
    LengthMismatch {
        /// STDA LN.
        declared: u32,
        /// Bytes after the header.
        present: usize,
    },
    /// STDA LN disagrees with the STDA's LAST + 1.
    #[error(
        "save file STDA LN at offset 0x0000 is {declared}, but the STDA's LAST + 1 is {stda_len}"
    )]
    LastMismatch {
        /// STDA LN.
        declared: u32,
        /// LAST + 1 from the STDA header.
        stda_len: usize,
    },
    /// The STDA inside is malformed.
    #[error("STDA at file offset {base:#06x}: {source}")]
    Stda {
        /// File offset where the STDA starts (0x1A).
        base: usize,
        /// What is wrong, with offsets inside the STDA.
        source: StdaError,
    },
}

/// A TRACEFMT save file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveFile {
    /// When the file was made.
    pub datetime: DosDateTime,
    /// The STDA.
    pub stda: Vec<u8>,
}

fn check_key(dt: &[u8; 11]) -> [u8; 11] {
    let mut k = [0u8; 11];
    for (i, b) in k.iter_mut().enumerate() {
        *b = dt[i] ^ CHECK_STRING[i];
    }
    k
}

impl SaveFile {
    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_SIZE + self.stda.len());
        let len = u32::try_from(self.stda.len()).unwrap_or(u32::MAX);
        out.extend_from_slice(&len.to_le_bytes());
        let dt = self.datetime.to_bytes();
        out.extend_from_slice(&dt);
        out.extend_from_slice(&check_key(&dt));
        out.extend_from_slice(&self.stda);
        out
    }

    /// Parses and checks a save file.
    ///
    /// # Errors
    /// [`SaveFileError`] with the file offset of the fault.
    pub fn parse(bytes: &[u8]) -> Result<Self, SaveFileError> {
        if bytes.len() < HEADER_SIZE {
            return Err(SaveFileError::Truncated(bytes.len()));
        }
        let declared = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let mut dt = [0u8; 11];
        dt.copy_from_slice(&bytes[4..15]);
        let key = check_key(&dt);
        if let Some(i) = (0..11).find(|&i| bytes[15 + i] != key[i]) {
            return Err(SaveFileError::BadCheckKey { offset: 15 + i });
        }
        let stda = &bytes[HEADER_SIZE..];
        if usize::try_from(declared).ok() != Some(stda.len()) {
            return Err(SaveFileError::LengthMismatch {
                declared,
                present: stda.len(),
            });
        }
        let parsed = Stda::parse(stda).map_err(|source| SaveFileError::Stda {
            base: HEADER_SIZE,
            source,
        })?;
        let stda_len = usize::from(parsed.last()) + 1;
        if stda_len != stda.len() {
            return Err(SaveFileError::LastMismatch { declared, stda_len });
        }
        Ok(Self {
            datetime: DosDateTime::from_bytes(dt),
            stda: stda.to_vec(),
        })
    }

    /// The STDA, parsed (it was checked by [`SaveFile::parse`]).
    ///
    /// # Errors
    /// [`StdaError`] for a hand-built `SaveFile` holding a bad STDA.
    pub fn view(&self) -> Result<Stda<'_>, StdaError> {
        Stda::parse(&self.stda)
    }
}

/// TRACEGET: takes the buffer with `DosGetSTDA` (resetting it) and returns
/// the save file to write, stamped `now`.
pub fn traceget(buffer: &mut TraceBuffer, now: DosDateTime) -> SaveFile {
    SaveFile {
        datetime: now,
        stda: buffer.get_stda().stda,
    }
}
