//! Sequential reads: a position over [`Bytes`] that moves past what it
//! reads. A failed read leaves the position where it was, and its error
//! names that position.

use crate::{Bytes, Result};

/// A read position in the input.
#[derive(Clone, Copy, Debug)]
pub struct Cursor<'a> {
    bytes: Bytes<'a>,
    pos: u64,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Cursor::at(data, 0)
    }

    /// A cursor at `pos` in `data` (past the end reads nothing).
    pub fn at(data: &'a [u8], pos: u64) -> Self {
        Cursor {
            bytes: Bytes::new(data),
            pos,
        }
    }

    /// The offset of the next byte to read.
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// Move to `pos`.
    pub fn seek(&mut self, pos: u64) {
        self.pos = pos;
    }

    /// The whole input.
    pub fn bytes(&self) -> Bytes<'a> {
        self.bytes
    }

    /// Bytes left to read.
    pub fn remaining(&self) -> u64 {
        self.bytes.len().saturating_sub(self.pos)
    }

    /// Nothing left to read.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: u64, structure: &'static str) -> Result<&'a [u8]> {
        let s = self.bytes.slice(self.pos, n, structure)?;
        self.pos += n;
        Ok(s)
    }

    /// Skip `n` bytes (they must be there).
    pub fn skip(&mut self, n: u64, structure: &'static str) -> Result<()> {
        self.take(n, structure).map(|_| ())
    }

    /// The next `N` bytes.
    pub fn array<const N: usize>(&mut self, structure: &'static str) -> Result<[u8; N]> {
        let a = self.bytes.array(self.pos, structure)?;
        self.pos += N as u64;
        Ok(a)
    }

    /// The next byte.
    pub fn u8(&mut self, structure: &'static str) -> Result<u8> {
        self.array(structure).map(|[b]| b)
    }

    /// The next little-endian u16.
    pub fn u16(&mut self, structure: &'static str) -> Result<u16> {
        self.array(structure).map(u16::from_le_bytes)
    }

    /// The next little-endian u32.
    pub fn u32(&mut self, structure: &'static str) -> Result<u32> {
        self.array(structure).map(u32::from_le_bytes)
    }

    /// The next little-endian u64.
    pub fn u64(&mut self, structure: &'static str) -> Result<u64> {
        self.array(structure).map(u64::from_le_bytes)
    }

    /// The next big-endian u16.
    pub fn u16_be(&mut self, structure: &'static str) -> Result<u16> {
        self.array(structure).map(u16::from_be_bytes)
    }

    /// The next big-endian u32.
    pub fn u32_be(&mut self, structure: &'static str) -> Result<u32> {
        self.array(structure).map(u32::from_be_bytes)
    }

    /// The next big-endian u64.
    pub fn u64_be(&mut self, structure: &'static str) -> Result<u64> {
        self.array(structure).map(u64::from_be_bytes)
    }

    /// A length-prefixed string (one length byte), decoded as Latin-1.
    pub fn pstring(&mut self, structure: &'static str) -> Result<String> {
        let (s, next) = self.bytes.pstring(self.pos, structure)?;
        self.pos = next;
        Ok(s)
    }

    /// Checks that `count` items of `size` bytes each fit in what is left,
    /// before anything is allocated for them.
    pub fn check_count(&self, count: u64, size: u64, structure: &'static str) -> Result<()> {
        self.bytes.check_count(self.pos, count, size, structure)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn reads_move_on_and_failures_stay() {
        let mut c = Cursor::new(&[1, 0, 2, 0, 0, 0, 7]);
        assert_eq!(c.u16("h"), Ok(1));
        assert_eq!(c.u32("h"), Ok(2));
        assert_eq!(c.pos(), 6);
        let e = c.u16("record").unwrap_err();
        assert_eq!((e.offset, e.kind), (6, ErrorKind::Truncated));
        assert_eq!(c.pos(), 6);
        assert_eq!(c.u8("h"), Ok(7));
        assert!(c.is_empty());
        assert!(c.check_count(1, 1, "t").is_err());
    }
}
