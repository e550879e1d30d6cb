//! Bounds-checked reading of binary formats, shared by the format crates
//! (`loader`; `tdf`'s TDF, TMI and debug information; `stda`'s TFF, STDA,
//! sidecar and FMT engine; `tnf`; `cptrap`; `rpn_vm`'s compiled RPNO
//! files; `kernel_sim`'s MKMSGF message files), the way the `object` crate
//! has one `Bytes`: one reader and one error style, so every format's
//! errors say where (the byte offset) and what (the structure being read).
//!
//! - [`Bytes`] reads at absolute offsets, for formats whose tables point
//!   at each other (executables, TDF, TNF).
//! - [`Cursor`] reads in sequence, for streams of records.
//! - [`Error`] carries the offset, the structure and an [`ErrorKind`];
//!   a format crate either returns it as is (`loader` re-exports it as
//!   its own error) or wraps it in its own error enum.
//!
//! Counts read from a file go through [`Bytes::check_count`] /
//! [`Cursor::check_count`] before anything is sized by them, so a corrupt
//! count cannot make the host allocate. Nothing here panics on any input.
//!
//! Decision (issue 21): a record decoded from an array of exactly its own
//! size (`cptrap`'s 32-byte trace table entry, a 16-byte frame) is
//! decoded with `from_le_bytes` on that array: there is nothing to bound
//! and nothing can fail, so it does not go through this crate. Everything
//! read at an offset into input of unknown size does.
//!
//! Decision (issue 21): this is a leaf crate with no sibling dependencies,
//! so the dependency graph keeps pointing one way (`rpn_vm`, `loader`,
//! `emu`, `stda` depended on no sibling before, and only `binread` is
//! added under them). The model is `loader`'s former `bytes::Input` and its
//! error type, whose messages (`"LX object table at file offset 0x80:
//! truncated"`) the golden tests check and which stay as they were.

mod cursor;
mod error;

pub use cursor::Cursor;
pub use error::{Error, ErrorKind, Result};

/// The whole input, read with absolute offsets. Cheap to copy.
#[derive(Clone, Copy, Debug)]
pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    /// A reader over `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Bytes { data }
    }

    /// All the bytes.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Length in bytes.
    pub fn len(&self) -> u64 {
        self.data.len() as u64
    }

    /// No bytes at all.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// `len` bytes at `offset`.
    pub fn slice(&self, offset: u64, len: u64, structure: &'static str) -> Result<&'a [u8]> {
        match offset.checked_add(len) {
            Some(end) if end <= self.len() => Ok(&self.data[offset as usize..end as usize]),
            _ => Err(Error::new(offset, structure, ErrorKind::Truncated)),
        }
    }

    /// The `N` bytes at `offset`.
    pub fn array<const N: usize>(&self, offset: u64, structure: &'static str) -> Result<[u8; N]> {
        let b = self.slice(offset, N as u64, structure)?;
        let mut a = [0; N];
        a.copy_from_slice(b);
        Ok(a)
    }

    /// The byte at `offset`.
    pub fn u8(&self, offset: u64, structure: &'static str) -> Result<u8> {
        Ok(self.slice(offset, 1, structure)?[0])
    }

    /// The little-endian u16 at `offset`.
    pub fn u16(&self, offset: u64, structure: &'static str) -> Result<u16> {
        self.array(offset, structure).map(u16::from_le_bytes)
    }

    /// The little-endian u32 at `offset`.
    pub fn u32(&self, offset: u64, structure: &'static str) -> Result<u32> {
        self.array(offset, structure).map(u32::from_le_bytes)
    }

    /// The little-endian u64 at `offset`.
    pub fn u64(&self, offset: u64, structure: &'static str) -> Result<u64> {
        self.array(offset, structure).map(u64::from_le_bytes)
    }

    /// The big-endian u16 at `offset`.
    pub fn u16_be(&self, offset: u64, structure: &'static str) -> Result<u16> {
        self.array(offset, structure).map(u16::from_be_bytes)
    }

    /// The big-endian u32 at `offset`.
    pub fn u32_be(&self, offset: u64, structure: &'static str) -> Result<u32> {
        self.array(offset, structure).map(u32::from_be_bytes)
    }

    /// The big-endian u64 at `offset`.
    pub fn u64_be(&self, offset: u64, structure: &'static str) -> Result<u64> {
        self.array(offset, structure).map(u64::from_be_bytes)
    }

    /// Checks that `count` elements of `size` bytes starting at `offset` fit
    /// in the input, before the count is used for anything.
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

    /// A length-prefixed string at `offset` (one length byte, then the
    /// bytes), decoded as Latin-1, and the offset after it.
    pub fn pstring(&self, offset: u64, structure: &'static str) -> Result<(String, u64)> {
        let len = u64::from(self.u8(offset, structure)?);
        let bytes = self.slice(offset + 1, len, structure)?;
        Ok((latin1(bytes), offset + 1 + len))
    }

    /// A cursor reading from `offset` on.
    pub fn cursor_at(&self, offset: u64) -> Cursor<'a> {
        Cursor::at(self.data, offset)
    }
}

/// Decodes bytes as Latin-1: every byte is one `char`, so names round-trip.
pub fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// Encodes a name as Latin-1 bytes, or `None` when a char is above U+00FF.
pub fn to_latin1(s: &str) -> Option<Vec<u8>> {
    s.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_say_where_and_what() {
        let b = Bytes::new(&[1, 2, 3, 4, 5]);
        assert_eq!(b.u16(0, "x"), Ok(0x0201));
        assert_eq!(b.u32(1, "x"), Ok(0x0504_0302));
        assert_eq!(b.u32_be(1, "x"), Ok(0x0203_0405));
        let e = b.u32(2, "LX object table").unwrap_err();
        assert_eq!(e.offset, 2);
        assert_eq!(
            e.to_string(),
            "LX object table at file offset 0x2: truncated"
        );
        assert!(b.slice(u64::MAX, 2, "x").is_err());
        assert!(b.u8(5, "x").is_err());
    }

    #[test]
    fn counts_are_checked_against_the_room_left() {
        let b = Bytes::new(&[0; 16]);
        assert!(b.check_count(8, 2, 4, "t").is_ok());
        let e = b.check_count(8, 3, 4, "table").unwrap_err();
        assert_eq!(e.kind, ErrorKind::TooMany { count: 3, limit: 2 });
        assert!(b.check_count(100, 1, 0, "t").is_err());
    }

    #[test]
    fn pstrings_are_latin1() {
        let b = Bytes::new(&[3, b'A', 0xE9, b'Z', 9]);
        assert_eq!(b.pstring(0, "n"), Ok(("A\u{e9}Z".to_string(), 4)));
        assert!(b.pstring(4, "n").is_err());
        assert_eq!(to_latin1("A\u{e9}"), Some(vec![b'A', 0xE9]));
        assert_eq!(to_latin1("\u{100}"), None);
    }

    proptest::proptest! {
        /// No offset, length or count makes a read panic, and a failed read
        /// names the offset it was asked for.
        #[test]
        fn never_panics(data: Vec<u8>, offset: u64, len: u64, count: u64) {
            let b = Bytes::new(&data);
            if let Err(e) = b.slice(offset, len, "s") {
                proptest::prop_assert_eq!(e.offset, offset);
            }
            let _ = b.u64(offset, "s");
            let _ = b.u16_be(offset, "s");
            let _ = b.pstring(offset, "s");
            let _ = b.check_count(offset, count, len, "s");
            let mut c = b.cursor_at(offset);
            let _ = c.take(len, "s");
            let _ = c.u32("s");
        }
    }
}
