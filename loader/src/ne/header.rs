//! The NE header (64 bytes at the "new header" offset), field for field.

use scroll::{LE, Pread, Pwrite, SizeWith};

use crate::error::{Error, ErrorKind, Result};

/// `"NE"` as a little-endian word.
pub const NE_SIGNATURE: u16 = u16::from_le_bytes(*b"NE");

/// The NE header as stored. Table offsets are relative to the header except
/// `nonres_off`, a file offset.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pread, Pwrite, SizeWith)]
pub struct NeHeader {
    pub signature: u16,
    pub linker_version: u8,
    pub linker_revision: u8,
    pub entry_off: u16,
    pub entry_len: u16,
    pub crc: u32,
    pub flags: u16,
    pub autods: u16,
    pub heap: u16,
    pub stack: u16,
    pub ip: u16,
    pub cs: u16,
    pub sp: u16,
    pub ss: u16,
    pub nseg: u16,
    pub nmod: u16,
    pub nonres_len: u16,
    pub segtab: u16,
    pub rsrctab: u16,
    pub resname: u16,
    pub modref: u16,
    pub impnames: u16,
    pub nonres_off: u32,
    pub nmovable: u16,
    pub align: u16,
    pub nrsrc: u16,
    pub target_os: u8,
    pub tail: [u8; 9],
}

/// Size of the header.
pub const NE_HEADER_SIZE: usize = 0x40;

impl NeHeader {
    /// Reads and checks the header at `offset`.
    pub fn parse(data: &[u8], offset: u64) -> Result<Self> {
        const WHAT: &str = "NE header";
        let start =
            usize::try_from(offset).map_err(|_| Error::new(offset, WHAT, ErrorKind::Truncated))?;
        let h: NeHeader = data
            .get(start..)
            .and_then(|d| d.pread_with(0, LE).ok())
            .ok_or_else(|| Error::new(offset, WHAT, ErrorKind::Truncated))?;
        if h.signature != NE_SIGNATURE {
            return Err(Error::new(offset, WHAT, ErrorKind::BadSignature));
        }
        if h.align > 16 {
            return Err(Error::new(
                offset + 0x32,
                WHAT,
                ErrorKind::OutOfRange {
                    value: h.align.into(),
                    limit: 16,
                },
            ));
        }
        Ok(h)
    }

    /// The alignment shift in effect (0 means 9).
    pub fn shift(&self) -> u16 {
        if self.align == 0 { 9 } else { self.align }
    }

    /// The header's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut buf = vec![0u8; NE_HEADER_SIZE];
        // The buffer is exactly the header's size, so the write cannot fail.
        let _ = buf.pwrite_with(*self, 0, LE);
        buf
    }
}
