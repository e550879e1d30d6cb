//! The LX header (176 bytes at the "new header" offset), field for field.

use scroll::{LE, Pread, Pwrite, SizeWith};

use crate::error::{Error, ErrorKind, Result};

/// `"LX"` as a little-endian word.
pub const LX_SIGNATURE: u16 = u16::from_le_bytes(*b"LX");

/// The LX header as stored. Offsets named `*_off` are relative to the header
/// except `datapages`, `itermap_off`, `nonres_off` and `debug_off`, which are
/// file offsets.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pread, Pwrite, SizeWith)]
pub struct LxHeader {
    pub signature: u16,
    pub byte_order: u8,
    pub word_order: u8,
    pub level: u32,
    pub cpu: u16,
    pub os: u16,
    pub version: u32,
    pub mflags: u32,
    pub npages: u32,
    pub eip_obj: u32,
    pub eip: u32,
    pub esp_obj: u32,
    pub esp: u32,
    pub page_size: u32,
    pub page_shift: u32,
    pub fixup_size: u32,
    pub fixup_cksum: u32,
    pub loader_size: u32,
    pub loader_cksum: u32,
    pub objtab_off: u32,
    pub nobj: u32,
    pub objmap_off: u32,
    pub itermap_off: u32,
    pub rsrc_off: u32,
    pub nrsrc: u32,
    pub resname_off: u32,
    pub entry_off: u32,
    pub dir_off: u32,
    pub ndir: u32,
    pub fixpage_off: u32,
    pub fixrec_off: u32,
    pub impmod_off: u32,
    pub nimpmod: u32,
    pub impproc_off: u32,
    pub pagesum_off: u32,
    pub datapages: u32,
    pub npreload: u32,
    pub nonres_off: u32,
    pub nonres_len: u32,
    pub nonres_cksum: u32,
    pub autods: u32,
    pub debug_off: u32,
    pub debug_len: u32,
    pub ninst_preload: u32,
    pub ninst_demand: u32,
    pub heapsize: u32,
    pub stacksize: u32,
}

/// Size of the header fields.
pub const LX_HEADER_SIZE: u64 = 0xB0;

impl LxHeader {
    /// Reads and checks the header at `offset`.
    pub fn parse(data: &[u8], offset: u64) -> Result<Self> {
        const WHAT: &str = "LX header";
        let start =
            usize::try_from(offset).map_err(|_| Error::new(offset, WHAT, ErrorKind::Truncated))?;
        let h: LxHeader = data
            .get(start..)
            .and_then(|d| d.pread_with(0, LE).ok())
            .ok_or_else(|| Error::new(offset, WHAT, ErrorKind::Truncated))?;
        if h.signature != LX_SIGNATURE {
            return Err(Error::new(offset, WHAT, ErrorKind::BadSignature));
        }
        if h.byte_order != 0 || h.word_order != 0 {
            return Err(Error::new(
                offset + 2,
                WHAT,
                ErrorKind::Unsupported("big-endian LX"),
            ));
        }
        if h.level != 0 {
            return Err(Error::new(
                offset + 4,
                WHAT,
                ErrorKind::Unsupported("LX format level other than 0"),
            ));
        }
        if !h.page_size.is_power_of_two() || h.page_size > 0x10000 {
            let kind = ErrorKind::OutOfRange {
                value: h.page_size.into(),
                limit: 0x10000,
            };
            return Err(Error::new(offset + 0x28, WHAT, kind));
        }
        if h.page_shift >= 32 {
            let kind = ErrorKind::OutOfRange {
                value: h.page_shift.into(),
                limit: 31,
            };
            return Err(Error::new(offset + 0x2C, WHAT, kind));
        }
        Ok(h)
    }

    /// The header's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut buf = vec![0u8; LX_HEADER_SIZE as usize];
        // The buffer is exactly the header's size, so the write cannot fail.
        let _ = buf.pwrite_with(*self, 0, LE);
        buf
    }
}
