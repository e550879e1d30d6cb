//! Little-endian writes with back-patching. Reading goes through the
//! shared `binread` crate ([`Bytes`]: bounds-checked reads at absolute
//! offsets whose errors name the offset and the structure); counts read
//! from the file go through [`Bytes::check_count`] before anything is
//! sized by them.

pub(crate) use binread::{Bytes, latin1, to_latin1};

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
