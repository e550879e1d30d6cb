//! The compiled trace program file that `os2trace rpn asm -o` writes and
//! `os2trace rpn disasm` reads: the assembled programs with the numbers
//! DosDynamicTrace needs, and nothing of the source text.
//!
//! An os2trace format (DTRACE passed its programs to the kernel in memory,
//! never in a file). All values little-endian:
//!
//! ```text
//! header, 16 bytes
//!   +0  4  "RPNO"
//!   +4  2  version, 1
//!   +6  2  number of tracepoints
//!   +8  2  vars
//!   +A  2  logmax
//!   +C  2  default major (valid when flags bit 0 is set)
//!   +E  2  flags: bit 0 default major present
//! tracepoint, 15 bytes + program
//!   +0  2  minor
//!   +2  2  major override (valid when flags bit 0 is set)
//!   +4  4  object (0: none)
//!   +8  4  offset
//!   +C  1  flags: bit 0 major, bit 1 opcode, bit 2 object/offset present
//!   +D  1  opcode
//!   +E  1  program length n
//!   +F  n  program
//! ```

use crate::source::{FileHeader, TraceProgramFile, Tracepoint};
use crate::verify::{Program, VerifyError};

/// Magic at the start of a compiled file.
pub const MAGIC: &[u8; 4] = b"RPNO";

/// Why a compiled file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ObjectError {
    /// The file ends inside a structure.
    #[error("byte offset {offset}: truncated {what}")]
    Truncated {
        /// Where the structure starts.
        offset: usize,
        /// The structure.
        what: &'static str,
    },
    /// Not an RPNO file, or an unknown version.
    #[error("byte offset {offset}: {what}")]
    BadHeader {
        /// Offset of the bad field.
        offset: usize,
        /// What is wrong.
        what: &'static str,
    },
    /// A program fails verification.
    #[error("byte offset {offset}: tracepoint program: {error}")]
    Program {
        /// Offset of the program in the file.
        offset: usize,
        /// The verifier's finding.
        error: VerifyError,
    },
    /// Bytes after the last tracepoint.
    #[error("byte offset {offset}: trailing bytes after the last tracepoint")]
    Trailing {
        /// Offset of the first extra byte.
        offset: usize,
    },
}

/// Writes the compiled form of a trace program file.
pub fn write(file: &TraceProgramFile) -> Vec<u8> {
    let h = &file.header;
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&(file.tracepoints.len() as u16).to_le_bytes());
    out.extend_from_slice(&(h.vars() as u16).to_le_bytes());
    out.extend_from_slice(&(h.logmax() as u16).to_le_bytes());
    out.extend_from_slice(&h.major.unwrap_or(0).to_le_bytes());
    out.extend_from_slice(&u16::from(h.major.is_some()).to_le_bytes());
    for tp in &file.tracepoints {
        out.extend_from_slice(&tp.minor.to_le_bytes());
        out.extend_from_slice(&tp.major.unwrap_or(0).to_le_bytes());
        out.extend_from_slice(&tp.object.unwrap_or(0).to_le_bytes());
        out.extend_from_slice(&tp.offset.unwrap_or(0).to_le_bytes());
        let flags = u8::from(tp.major.is_some())
            | (u8::from(tp.opcode.is_some()) << 1)
            | (u8::from(tp.object.is_some() || tp.offset.is_some()) << 2);
        out.push(flags);
        out.push(tp.opcode.unwrap_or(0));
        out.push(tp.program.bytes().len() as u8);
        out.extend_from_slice(tp.program.bytes());
    }
    out
}

/// Reads a compiled file; every program is verified.
///
/// # Errors
/// An [`ObjectError`] naming the byte offset.
pub fn read(bytes: &[u8]) -> Result<TraceProgramFile, ObjectError> {
    let (header, each) = read_each(bytes)?;
    Ok(TraceProgramFile {
        header,
        tracepoints: each.collect::<Result<_, _>>()?,
    })
}

/// Reads a compiled file's header, and gives its tracepoints one at a time,
/// each read and verified as it comes (the last item is an error when
/// bytes follow the last tracepoint): for tools that stream a large file,
/// whose memory then stays that of the file, not of every verified program.
///
/// # Errors
/// An [`ObjectError`] naming the byte offset of a bad header.
pub fn read_each(bytes: &[u8]) -> Result<(FileHeader, Tracepoints<'_>), ObjectError> {
    let field = |offset: usize, len: usize| field(bytes, offset, len, "header");
    if field(0, 16)?[..4] != MAGIC[..] {
        return Err(ObjectError::BadHeader {
            offset: 0,
            what: "not a compiled trace program (magic RPNO)",
        });
    }
    let u16_at = |offset: usize| field(offset, 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    if u16_at(4)? != 1 {
        return Err(ObjectError::BadHeader {
            offset: 4,
            what: "unknown version",
        });
    }
    let header_flags = u16_at(14)?;
    if header_flags & !1 != 0 {
        return Err(ObjectError::BadHeader {
            offset: 14,
            what: "unknown header flags",
        });
    }
    if header_flags & 1 == 0 && u16_at(12)? != 0 {
        return Err(ObjectError::BadHeader {
            offset: 12,
            what: "default major set without its flag",
        });
    }
    let vars = u32::from(u16_at(8)?);
    let header = FileHeader {
        vars: Some(vars),
        logmax: Some(u32::from(u16_at(10)?)),
        major: (header_flags & 1 != 0).then_some(u16_at(12)?),
        ..FileHeader::default()
    };
    let each = Tracepoints {
        bytes,
        at: 16,
        left: u16_at(6)?,
        vars,
    };
    Ok((header, each))
}

/// `len` bytes of `bytes` at `offset`, or where `what` is truncated.
fn field<'a>(
    bytes: &'a [u8],
    offset: usize,
    len: usize,
    what: &'static str,
) -> Result<&'a [u8], ObjectError> {
    bytes
        .get(offset..offset + len)
        .ok_or(ObjectError::Truncated { offset, what })
}

/// The tracepoints of a compiled file, read one at a time ([`read_each`]).
#[derive(Debug)]
pub struct Tracepoints<'a> {
    bytes: &'a [u8],
    /// Offset of the next tracepoint.
    at: usize,
    /// Tracepoints the header announces that are still to come.
    left: u16,
    /// The header's vars, which every program is verified against.
    vars: u32,
}

impl Tracepoints<'_> {
    fn next_tracepoint(&mut self) -> Result<Tracepoint, ObjectError> {
        let (bytes, at) = (self.bytes, self.at);
        let what = "tracepoint header";
        let u16_at =
            |offset: usize| field(bytes, offset, 2, what).map(|b| u16::from_le_bytes([b[0], b[1]]));
        let u32_at = |offset: usize| {
            field(bytes, offset, 4, what).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let byte_at = |offset: usize| field(bytes, offset, 1, what).map(|b| b[0]);
        let flags = byte_at(at + 12)?;
        let unused_is_zero = flags & !7 == 0
            && (flags & 1 != 0 || u16_at(at + 2)? == 0)
            && (flags & 2 != 0 || byte_at(at + 13)? == 0)
            && (flags & 4 != 0 || (u32_at(at + 4)? == 0 && u32_at(at + 8)? == 0));
        if !unused_is_zero {
            return Err(ObjectError::BadHeader {
                offset: at + 12,
                what: "unknown tracepoint flags, or a value without its flag",
            });
        }
        let len = usize::from(byte_at(at + 14)?);
        let code = field(bytes, at + 15, len, "tracepoint program")?;
        let program = Program::load(code, self.vars).map_err(|error| ObjectError::Program {
            offset: at + 15,
            error,
        })?;
        let tp = Tracepoint {
            minor: u16_at(at)?,
            major: (flags & 1 != 0).then_some(u16_at(at + 2)?),
            object: (flags & 4 != 0).then_some(u32_at(at + 4)?),
            offset: (flags & 4 != 0).then_some(u32_at(at + 8)?),
            opcode: (flags & 2 != 0).then_some(byte_at(at + 13)?),
            types: Vec::new(),
            group: None,
            line: 0,
            program,
            listing: Vec::new(),
        };
        self.at = at + 15 + len;
        Ok(tp)
    }
}

impl Iterator for Tracepoints<'_> {
    type Item = Result<Tracepoint, ObjectError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            if self.at != self.bytes.len() {
                let offset = self.at;
                // Reported once.
                self.at = self.bytes.len();
                return Some(Err(ObjectError::Trailing { offset }));
            }
            return None;
        }
        let tp = self.next_tracepoint();
        // After an error, nothing more.
        self.left = if tp.is_ok() { self.left - 1 } else { 0 };
        if tp.is_err() {
            self.at = self.bytes.len();
        }
        Some(tp)
    }
}
