//! Bounds-checked little-endian reads and writes over the whole file.
//!
//! Readers index the file with absolute offsets; every read checks its bounds
//! and returns an [`Error`] naming the offset and the structure. Counts read
//! from the file go through [`Input::check_count`] before anything is sized by
//! them.

use crate::error::{Error, ErrorKind, Result};

/// The whole input file, read with absolute offsets.
#[derive(Clone, Copy)]
pub(crate) struct Input<'a> {
    pub data: &'a [u8],
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input { data }
    }

    pub fn len(&self) -> u64 {
        self.data.len() as u64
    }

    /// `len` bytes at `offset`.
    pub fn slice(&self, offset: u64, len: u64, structure: &'static str) -> Result<&'a [u8]> {
        let end = offset.checked_add(len);
        match end {
            Some(end) if end <= self.len() => Ok(&self.data[offset as usize..end as usize]),
            _ => Err(Error::new(offset, structure, ErrorKind::Truncated)),
        }
    }

    pub fn u8(&self, offset: u64, structure: &'static str) -> Result<u8> {
        Ok(self.slice(offset, 1, structure)?[0])
    }

    pub fn u16(&self, offset: u64, structure: &'static str) -> Result<u16> {
        let b = self.slice(offset, 2, structure)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub fn u32(&self, offset: u64, structure: &'static str) -> Result<u32> {
        let b = self.slice(offset, 4, structure)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Checks that `count` elements of `size` bytes starting at `offset` fit
    /// in the file, before the count is used for anything.
    pub fn check_count(
        &self,
        offset: u64,
        count: u64,
        size: u64,
        structure: &'static str,
    ) -> Result<()> {
        let room = self.len().saturating_sub(offset) / size.max(1);
        if count > room {
            return Err(Error::new(
                offset,
                structure,
                ErrorKind::TooMany { count, limit: room },
            ));
        }
        Ok(())
    }

    /// A length-prefixed string at `offset` (one length byte, then the bytes).
    /// Returns the string (Latin-1) and the offset after it.
    pub fn pstring(&self, offset: u64, structure: &'static str) -> Result<(String, u64)> {
        let len = u64::from(self.u8(offset, structure)?);
        let bytes = self.slice(offset + 1, len, structure)?;
        Ok((latin1(bytes), offset + 1 + len))
    }
}

/// Decodes bytes as Latin-1: every byte is one `char`, so names round-trip.
pub(crate) fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// Encodes a name as Latin-1 bytes, or `None` when a char is above U+00FF.
pub(crate) fn to_latin1(s: &str) -> Option<Vec<u8>> {
    s.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect()
}

/// A growing output buffer with little-endian writes and back-patching.
#[derive(Default)]
pub(crate) struct Output {
    pub buf: Vec<u8>,
}

impl Output {
    pub fn pos(&self) -> usize {
        self.buf.len()
    }
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    pub fn zeros(&mut self, n: usize) {
        self.buf.resize(self.buf.len() + n, 0);
    }
    /// Pads with zeros up to a multiple of `align` (a power of two).
    pub fn align(&mut self, align: usize) {
        let rem = self.buf.len() % align.max(1);
        if rem != 0 {
            self.zeros(align - rem);
        }
    }
    pub fn put_u16(&mut self, at: usize, v: u16) {
        self.buf[at..at + 2].copy_from_slice(&v.to_le_bytes());
    }
    pub fn put_u32(&mut self, at: usize, v: u32) {
        self.buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
}
