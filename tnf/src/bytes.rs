//! Byte order and bounds-checked reads: every read names its byte offset
//! when it fails. This is the one place the reader touches raw bytes; the
//! reads are the workspace's shared `binread` reader's, their errors made
//! the TNF reader's own.

use crate::reader::{ReadError, ReadErrorKind};

/// The byte order a TNF file was written in (the writer's native order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endian {
    /// Least significant byte first (x86, the order OS/2 runs in).
    Little,
    /// Most significant byte first (SPARC, the order Solaris wrote on Suns).
    Big,
}

impl Endian {
    /// Encodes a u16.
    pub fn u16_bytes(self, v: u16) -> [u8; 2] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }

    /// Encodes a u32.
    pub fn u32_bytes(self, v: u32) -> [u8; 4] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }

    /// Encodes a u64.
    pub fn u64_bytes(self, v: u64) -> [u8; 8] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }
}

/// A file image seen through its byte order.
#[derive(Clone, Copy, Debug)]
pub struct View<'a> {
    /// The whole file.
    pub data: &'a [u8],
    /// Its byte order.
    pub endian: Endian,
}

/// What a TNF read is called in binread's errors.
const STRUCTURE: &str = "TNF file";

impl<'a> View<'a> {
    fn input(&self) -> binread::Bytes<'a> {
        binread::Bytes::new(self.data)
    }

    /// binread's error as the reader's: past the end, the error is where
    /// the file ends.
    fn error(&self, e: binread::Error, need: usize) -> ReadError {
        ReadError {
            offset: (e.offset as usize).min(self.data.len()),
            kind: ReadErrorKind::PastEnd { need },
        }
    }

    /// `len` bytes at `offset`, or an error naming the offset.
    pub fn bytes(&self, offset: u32, len: usize) -> Result<&'a [u8], ReadError> {
        self.input()
            .slice(u64::from(offset), len as u64, STRUCTURE)
            .map_err(|e| self.error(e, len))
    }

    /// A u8.
    pub fn u8(&self, offset: u32) -> Result<u8, ReadError> {
        self.input()
            .u8(u64::from(offset), STRUCTURE)
            .map_err(|e| self.error(e, 1))
    }

    /// A u16 in the file's order.
    pub fn u16(&self, offset: u32) -> Result<u16, ReadError> {
        let (b, o) = (self.input(), u64::from(offset));
        match self.endian {
            Endian::Little => b.u16(o, STRUCTURE),
            Endian::Big => b.u16_be(o, STRUCTURE),
        }
        .map_err(|e| self.error(e, 2))
    }

    /// A u32 in the file's order.
    pub fn u32(&self, offset: u32) -> Result<u32, ReadError> {
        let (b, o) = (self.input(), u64::from(offset));
        match self.endian {
            Endian::Little => b.u32(o, STRUCTURE),
            Endian::Big => b.u32_be(o, STRUCTURE),
        }
        .map_err(|e| self.error(e, 4))
    }

    /// A u64 in the file's order.
    pub fn u64(&self, offset: u32) -> Result<u64, ReadError> {
        let (b, o) = (self.input(), u64::from(offset));
        match self.endian {
            Endian::Little => b.u64(o, STRUCTURE),
            Endian::Big => b.u64_be(o, STRUCTURE),
        }
        .map_err(|e| self.error(e, 8))
    }
}
