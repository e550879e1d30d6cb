//! The TMI file TRCUST writes beside a TDF whose tracepoints use ORBIT=
//! (TRCUST-FORMATS.md §4.3): it maps each coverage bit to the MAP symbol
//! that contains the tracepoint.
//!
//! ```text
//! 0x000  "TMI\0"
//! 0x004  u16  major
//! 0x006  u16  number of records
//! 0x008  256  module name (as in the TDF)
//! 0x108  u16  TDFID
//! 0x10A  30   zero
//! 0x128  records: u32 ORBIT id (variable*32 + highest mask bit, 16-bit),
//!                 u32 object, u32 symbol offset, u32 symbol size
//!                 (0xFFFFFFFF for the last symbol), u16 name length with
//!                 its NUL, name, NUL
//! ```

use thiserror::Error;

use binread::Bytes;

use crate::definition::{module_name_field, until_nul};

/// `"TMI\0"`.
pub const TMI_MAGIC: &[u8; 4] = b"TMI\0";
/// Size of the header.
pub const TMI_HEADER_SIZE: usize = 0x128;
/// Fixed part of a record.
pub const TMI_RECORD_SIZE: usize = 0x12;
/// Structure names in read errors.
const HEADER: &str = "TMI header";
const RECORD: &str = "TMI record";

/// One coverage bit's routine.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TmiRecord {
    /// `variable * 32 + bit`, computed in 16 bits as TRCUST does.
    pub orbit_id: u32,
    /// Object of the symbol.
    pub object: u32,
    /// Offset of the symbol.
    pub offset: u32,
    /// Distance to the next symbol, or 0xFFFFFFFF.
    pub size: u32,
    /// Symbol name, without its NUL.
    pub name: Vec<u8>,
}

/// A TMI file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tmi {
    /// Major code.
    pub major: u16,
    /// Module name.
    pub module: Vec<u8>,
    /// TDFID.
    pub tdf_id: u16,
    /// +0x10A..+0x128, zero in every TRCUST file.
    pub reserved: [u8; 30],
    /// Records in file order (TRCUST sorts them by ORBIT id).
    pub records: Vec<TmiRecord>,
}

/// A malformed TMI file.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TmiError {
    /// A structure that runs past the end of the file (the shared
    /// reader's error: offset and structure).
    #[error("{0}")]
    Read(#[from] binread::Error),
    /// The file does not start with `"TMI\0"`.
    #[error("TMI header at offset 0x0000: magic is not \"TMI\\0\"")]
    BadMagic,
    /// A field holds an impossible value.
    #[error("TMI {what} at offset {offset:#06x}: {problem}")]
    Invalid {
        /// Offset of the field.
        offset: usize,
        /// The structure.
        what: &'static str,
        /// What is wrong.
        problem: String,
    },
}

/// The ORBIT id TRCUST records for `mask` in `variable`: the variable times
/// 32 plus the index of the mask's highest set bit, kept to 16 bits.
pub fn orbit_id(mask: u32, variable: u32) -> u32 {
    let bit = 31 - mask.max(1).leading_zeros();
    (variable.wrapping_mul(32).wrapping_add(bit)) & 0xFFFF
}

impl Tmi {
    /// The file's bytes, records in the order held.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(TMI_HEADER_SIZE + 32 * self.records.len());
        out.extend_from_slice(TMI_MAGIC);
        out.extend_from_slice(&self.major.to_le_bytes());
        out.extend_from_slice(&(self.records.len() as u16).to_le_bytes());
        out.extend_from_slice(&module_name_field(&self.module));
        out.extend_from_slice(&self.tdf_id.to_le_bytes());
        out.extend_from_slice(&self.reserved);
        for r in &self.records {
            out.extend_from_slice(&r.orbit_id.to_le_bytes());
            out.extend_from_slice(&r.object.to_le_bytes());
            out.extend_from_slice(&r.offset.to_le_bytes());
            out.extend_from_slice(&r.size.to_le_bytes());
            out.extend_from_slice(&((r.name.len() + 1) as u16).to_le_bytes());
            out.extend_from_slice(&r.name);
            out.push(0);
        }
        out
    }

    /// Parses a TMI file.
    ///
    /// # Errors
    /// [`TmiError`] naming the offset and the structure.
    pub fn parse(bytes: &[u8]) -> Result<Self, TmiError> {
        let b = Bytes::new(bytes);
        let h = b.slice(0, TMI_HEADER_SIZE as u64, HEADER)?;
        if &h[..4] != TMI_MAGIC {
            return Err(TmiError::BadMagic);
        }
        let count = usize::from(b.u16(6, HEADER)?);
        if count > bytes.len().saturating_sub(TMI_HEADER_SIZE) / (TMI_RECORD_SIZE + 1) {
            return Err(TmiError::Invalid {
                offset: 6,
                what: "header",
                problem: format!("{count} records cannot fit in the file"),
            });
        }
        let mut records = Vec::with_capacity(count);
        let mut at = TMI_HEADER_SIZE;
        for _ in 0..count {
            b.slice(at as u64, TMI_RECORD_SIZE as u64, RECORD)?;
            let mut f = b.cursor_at(at as u64);
            let orbit_id = f.u32(RECORD)?;
            let object = f.u32(RECORD)?;
            let offset = f.u32(RECORD)?;
            let size = f.u32(RECORD)?;
            let name_len = usize::from(f.u16(RECORD)?);
            let name = f.take(name_len as u64, "TMI symbol name")?;
            if name_len == 0 || name[name_len - 1] != 0 || name[..name_len - 1].contains(&0) {
                return Err(TmiError::Invalid {
                    offset: at + 0x10,
                    what: "TMI record",
                    problem: "symbol name is not one NUL-terminated string".into(),
                });
            }
            records.push(TmiRecord {
                orbit_id,
                object,
                offset,
                size,
                name: name[..name_len - 1].to_vec(),
            });
            at += TMI_RECORD_SIZE + name_len;
        }
        if at != bytes.len() {
            return Err(TmiError::Invalid {
                offset: at,
                what: "file",
                problem: format!("{} bytes after the last record", bytes.len() - at),
            });
        }
        Ok(Tmi {
            major: b.u16(4, HEADER)?,
            module: until_nul(&h[8..0x108]),
            tdf_id: b.u16(0x108, HEADER)?,
            reserved: b.array(0x10A, HEADER)?,
            records,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orbit_ids_as_observed() {
        assert_eq!(orbit_id(1, 2), 0x40);
        assert_eq!(orbit_id(3, 5), 0xA1);
        assert_eq!(orbit_id(31, 0), 4);
        assert_eq!(orbit_id(32, 0), 5);
        assert_eq!(orbit_id(0x8000_0000, 0), 0x1F);
        assert_eq!(orbit_id(1, 1000), 0x7D00);
        assert_eq!(orbit_id(1, 2046), 0xFFC0);
        assert_eq!(orbit_id(1, 2048), 0);
    }

    #[test]
    fn round_trip() {
        let t = Tmi {
            major: 0xC6,
            module: b"HELLO.EXE".to_vec(),
            tdf_id: 0x55AA,
            reserved: [0; 30],
            records: vec![TmiRecord {
                orbit_id: 0x40,
                object: 2,
                offset: 0,
                size: 5,
                name: b"startup".to_vec(),
            }],
        };
        let b = t.to_bytes();
        assert_eq!(b.len(), 0x128 + 0x12 + 8);
        assert_eq!(Tmi::parse(&b).unwrap(), t);
        for cut in 0..b.len() {
            assert!(Tmi::parse(&b[..cut]).is_err());
        }
    }
}
