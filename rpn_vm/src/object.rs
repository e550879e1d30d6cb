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

use binread::Bytes;

use crate::source::{FileHeader, TraceProgramFile, Tracepoint};
use crate::verify::{Program, VerifyError};

/// Magic at the start of a compiled file.
pub const MAGIC: &[u8; 4] = b"RPNO";

/// Why a compiled file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ObjectError {
    /// The file ends inside a structure (the shared reader's error).
    #[error("byte offset {}: {}: {}", .0.offset, .0.structure, .0.kind)]
    Read(#[from] binread::Error),
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
    const HEADER: &str = "RPNO header";
    let b = Bytes::new(bytes);
    if b.slice(0, 16, HEADER)?[..4] != MAGIC[..] {
        return Err(ObjectError::BadHeader {
            offset: 0,
            what: "not a compiled trace program (magic RPNO)",
        });
    }
    let word = |offset: u64| b.u16(offset, HEADER);
    if word(4)? != 1 {
        return Err(ObjectError::BadHeader {
            offset: 4,
            what: "unknown version",
        });
    }
    let header_flags = word(14)?;
    if header_flags & !1 != 0 {
        return Err(ObjectError::BadHeader {
            offset: 14,
            what: "unknown header flags",
        });
    }
    if header_flags & 1 == 0 && word(12)? != 0 {
        return Err(ObjectError::BadHeader {
            offset: 12,
            what: "default major set without its flag",
        });
    }
    let vars = u32::from(word(8)?);
    let header = FileHeader {
        vars: Some(vars),
        logmax: Some(u32::from(word(10)?)),
        major: (header_flags & 1 != 0).then_some(word(12)?),
        ..FileHeader::default()
    };
    let each = Tracepoints {
        bytes,
        at: 16,
        left: word(6)?,
        vars,
    };
    Ok((header, each))
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
        const HEADER: &str = "tracepoint header";
        let (b, at) = (Bytes::new(self.bytes), self.at);
        // The fixed part: minor, major, object, offset, flags, opcode, length.
        let [
            m0,
            m1,
            j0,
            j1,
            o0,
            o1,
            o2,
            o3,
            f0,
            f1,
            f2,
            f3,
            flags,
            opcode,
            len,
        ] = b.array(at as u64, HEADER)?;
        let minor = u16::from_le_bytes([m0, m1]);
        let major = u16::from_le_bytes([j0, j1]);
        let object = u32::from_le_bytes([o0, o1, o2, o3]);
        let offset = u32::from_le_bytes([f0, f1, f2, f3]);
        let unused_is_zero = flags & !7 == 0
            && (flags & 1 != 0 || major == 0)
            && (flags & 2 != 0 || opcode == 0)
            && (flags & 4 != 0 || (object == 0 && offset == 0));
        if !unused_is_zero {
            return Err(ObjectError::BadHeader {
                offset: at + 12,
                what: "unknown tracepoint flags, or a value without its flag",
            });
        }
        let len = usize::from(len);
        let code = b.slice(at as u64 + 15, len as u64, "tracepoint program")?;
        let program = Program::load(code, self.vars).map_err(|error| ObjectError::Program {
            offset: at + 15,
            error,
        })?;
        let tp = Tracepoint {
            minor,
            major: (flags & 1 != 0).then_some(major),
            object: (flags & 4 != 0).then_some(object),
            offset: (flags & 4 != 0).then_some(offset),
            opcode: (flags & 2 != 0).then_some(opcode),
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
