//! The one read error: the byte offset where the problem was found, the
//! structure that was being read there, and what was wrong, so a user
//! looking at a hex dump can find it. The message format
//! (`"{structure} at file offset {offset:#x}: {kind}"`) is `loader`'s, which
//! golden tests check.

use std::fmt;

/// What went wrong while reading a structure.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The structure runs past the end of the file (or of its enclosing table).
    Truncated,
    /// A signature did not match (`MZ`, `NE`, `LX`).
    BadSignature,
    /// The file uses a feature this reader does not support.
    Unsupported(&'static str),
    /// A count from the file is larger than what the file can hold.
    TooMany {
        /// The count read from the file.
        count: u64,
        /// The largest count the file has room for.
        limit: u64,
    },
    /// A number from the file is outside its valid range.
    OutOfRange {
        /// The value read from the file.
        value: u64,
        /// What the value must stay below (or the inclusive bound, see message).
        limit: u64,
    },
    /// Two tables claim the same bytes.
    Overlap(&'static str),
    /// A flag byte/word has bits set that have no defined meaning.
    UnknownFlags(u32),
    /// A type code (source type, bundle type, page kind) is not defined.
    UnknownType(u32),
    /// Anything else, described in words.
    Invalid(&'static str),
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Truncated => f.write_str("truncated"),
            ErrorKind::BadSignature => f.write_str("bad signature"),
            ErrorKind::Unsupported(what) => write!(f, "unsupported: {what}"),
            ErrorKind::TooMany { count, limit } => {
                write!(f, "count {count} is more than the {limit} that fit")
            }
            ErrorKind::OutOfRange { value, limit } => {
                write!(f, "value {value:#x} out of range (limit {limit:#x})")
            }
            ErrorKind::Overlap(other) => write!(f, "overlaps the {other}"),
            ErrorKind::UnknownFlags(bits) => write!(f, "unknown flag bits {bits:#x}"),
            ErrorKind::UnknownType(code) => write!(f, "unknown type code {code:#x}"),
            ErrorKind::Invalid(what) => f.write_str(what),
        }
    }
}

/// A read error: where, in which structure, and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{structure} at file offset {offset:#x}: {kind}")]
pub struct Error {
    /// Byte offset in the input where the problem is.
    pub offset: u64,
    /// The structure being read, e.g. "LX object table".
    pub structure: &'static str,
    /// What went wrong.
    pub kind: ErrorKind,
}

impl Error {
    /// Builds an error.
    pub fn new(offset: impl TryInto<u64>, structure: &'static str, kind: ErrorKind) -> Self {
        Error {
            offset: offset.try_into().unwrap_or(u64::MAX),
            structure,
            kind,
        }
    }
}

/// Result of a read.
pub type Result<T> = std::result::Result<T, Error>;

// Errors travel through every reader's `Result`; keep them small.
const _: () = assert!(size_of::<Error>() <= 48);
