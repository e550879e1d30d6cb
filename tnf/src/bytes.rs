//! Byte order and bounds-checked reads: every read names its byte offset
//! when it fails. This is the one place the reader touches raw bytes, so a
//! shared byte-reader crate can replace it without touching the rest.

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

impl<'a> View<'a> {
    /// `len` bytes at `offset`, or an error naming the offset.
    pub fn bytes(&self, offset: u32, len: usize) -> Result<&'a [u8], ReadError> {
        let start = offset as usize;
        start
            .checked_add(len)
            .and_then(|end| self.data.get(start..end))
            .ok_or(ReadError {
                // Past the end, the error is where the file ends.
                offset: start.min(self.data.len()),
                kind: ReadErrorKind::PastEnd { need: len },
            })
    }

    /// A u8.
    pub fn u8(&self, offset: u32) -> Result<u8, ReadError> {
        Ok(self.bytes(offset, 1)?[0])
    }

    /// A u16 in the file's order.
    pub fn u16(&self, offset: u32) -> Result<u16, ReadError> {
        let b: [u8; 2] = self.bytes(offset, 2)?.try_into().unwrap_or([0; 2]);
        Ok(match self.endian {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        })
    }

    /// A u32 in the file's order.
    pub fn u32(&self, offset: u32) -> Result<u32, ReadError> {
        let b: [u8; 4] = self.bytes(offset, 4)?.try_into().unwrap_or([0; 4]);
        Ok(match self.endian {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        })
    }

    /// A u64 in the file's order.
    pub fn u64(&self, offset: u32) -> Result<u64, ReadError> {
        let b: [u8; 8] = self.bytes(offset, 8)?.try_into().unwrap_or([0; 8]);
        Ok(match self.endian {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        })
    }
}
