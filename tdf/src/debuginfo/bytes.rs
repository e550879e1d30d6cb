//! A bounds-checked little-endian cursor over the debug information, whose
//! errors name the byte offset (from the start of the debug information,
//! the `NBxx` signature) and the structure being read.

use super::DebugError;

/// A position in the debug information.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    /// Offset of the next byte to read.
    pub(crate) at: usize,
    /// What is being read, for errors.
    what: &'static str,
}

impl<'a> Cursor<'a> {
    /// A cursor at `at` reading `what`.
    pub(crate) fn new(bytes: &'a [u8], at: usize, what: &'static str) -> Self {
        Cursor { bytes, at, what }
    }

    /// The error for a structure that does not fit.
    pub(crate) fn truncated(&self, need: usize) -> DebugError {
        DebugError::Truncated {
            at: self.at,
            what: self.what,
            need,
        }
    }

    /// `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], DebugError> {
        let end = self.at.checked_add(n).ok_or_else(|| self.truncated(n))?;
        let s = self
            .bytes
            .get(self.at..end)
            .ok_or_else(|| self.truncated(n))?;
        self.at = end;
        Ok(s)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, DebugError> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u16(&mut self) -> Result<u16, DebugError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub(crate) fn u32(&mut self) -> Result<u32, DebugError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A length-prefixed name (one length byte), decoded as Latin-1.
    pub(crate) fn name(&mut self) -> Result<String, DebugError> {
        let n = usize::from(self.u8()?);
        Ok(self.take(n)?.iter().map(|&b| char::from(b)).collect())
    }

    /// Checks that `count` items of `size` bytes each fit in what is left,
    /// before anything is allocated for them.
    pub(crate) fn check_count(&self, count: usize, size: usize) -> Result<(), DebugError> {
        let need = count.saturating_mul(size);
        if self.bytes.len().saturating_sub(self.at) < need {
            return Err(DebugError::BadCount {
                at: self.at,
                what: self.what,
                count,
            });
        }
        Ok(())
    }
}
