//! The TDF binary format (trace definition file), read and written byte for
//! byte as TRCUST 3.05A does (TRCUST-FORMATS.md §4.2).
//!
//! ```text
//! 0x000  "TDF\0"
//! 0x004  u32  2 (format version, constant)
//! 0x008  u32  total bytes of all tracepoint records
//! 0x00C  u32  number of tracepoint records
//! 0x010  u32  offset of the first record = 0x144 + 12*entries + 4*vars
//! 0x014  u32  number of DTO variables
//! 0x018  u16  MAXDATALENGTH
//! 0x01A  u16  0
//! 0x01C  u16  major code
//! 0x01E  256  module name, NUL-padded
//! 0x11E  u16  number of TYPELIST + GROUPLIST entries
//! 0x120  u16  TDFID
//! 0x122  34   zero
//! 0x144  entries: 8 name, u8 0, u8 kind (2 TYPE, 1 GROUP), u16 id
//!        vars:    u32 each
//!        records: u16 len, u16 type mask, u16 group, u32 object, u32 offset,
//!                 u16 minor, u16 major, u16 rpn len, u8 opcode, u8 0, rpn
//! ```
//!
//! The fields whose meaning is unknown (+0x04, +0x1A, the reserved tail,
//! byte +8 of an entry, byte +0x15 of a record) are kept as read, so a file
//! reads and writes back identically. Names are kept up to their first NUL;
//! non-zero padding after it is not preserved.

use binread::Bytes;
use thiserror::Error;

/// `"TDF\0"`.
pub const TDF_MAGIC: &[u8; 4] = b"TDF\0";
/// Size of the header.
pub const HEADER_SIZE: usize = 0x144;
/// Size of a tracepoint record before its RPN program.
pub const RECORD_HEADER_SIZE: usize = 0x16;
/// Size of a TYPELIST/GROUPLIST entry.
pub const ENTRY_SIZE: usize = 12;
/// The value TRCUST writes at +0x04.
pub const TDF_VERSION: u32 = 2;
/// Structure names in read errors.
const HEADER: &str = "TDF header";
const RECORD: &str = "TDF tracepoint record";
/// Default MAXDATALENGTH.
pub const DEFAULT_MAX_DATA_LEN: u16 = 0x200;
/// Size of the module name field.
pub const MODULE_NAME_SIZE: usize = 256;

/// Whether a table entry is a TYPELIST or GROUPLIST name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A GROUPLIST name (kind byte 1).
    Group,
    /// A TYPELIST name (kind byte 2).
    Type,
    /// Any other kind byte, kept as read.
    Other(u8),
}

impl EntryKind {
    /// The kind byte.
    pub fn byte(self) -> u8 {
        match self {
            EntryKind::Group => 1,
            EntryKind::Type => 2,
            EntryKind::Other(b) => b,
        }
    }

    fn from_byte(b: u8) -> Self {
        match b {
            1 => EntryKind::Group,
            2 => EntryKind::Type,
            b => EntryKind::Other(b),
        }
    }
}

/// One TYPELIST or GROUPLIST name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NameEntry {
    /// The name, at most 8 bytes.
    pub name: Vec<u8>,
    /// TYPE or GROUP.
    pub kind: EntryKind,
    /// The ID value.
    pub id: u16,
    /// Byte +8 (0 in every TRCUST file).
    pub pad: u8,
}

/// One tracepoint.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TdfRecord {
    /// OR of the TYPE ids.
    pub type_mask: u16,
    /// GROUP id.
    pub group: u16,
    /// LX object or NE segment number.
    pub object: u32,
    /// Offset within the object.
    pub offset: u32,
    /// Minor code.
    pub minor: u16,
    /// Major code.
    pub major: u16,
    /// The opcode byte found in the module at the tracepoint.
    pub opcode: u8,
    /// Byte +0x15 (0 in every TRCUST file).
    pub pad: u8,
    /// The RPN program.
    pub rpn: Vec<u8>,
}

impl TdfRecord {
    /// Bytes this record takes in the file.
    pub fn len(&self) -> usize {
        RECORD_HEADER_SIZE + self.rpn.len()
    }

    /// Always false: a record has at least its fixed part.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// A trace definition file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tdf {
    /// +0x04, 2 in every TRCUST file.
    pub version: u32,
    /// MAXDATALENGTH.
    pub max_data_len: u16,
    /// +0x1A, 0 in every TRCUST file.
    pub reserved_1a: u16,
    /// Major code.
    pub major: u16,
    /// Module name (bytes up to the first NUL; at most 255).
    pub module: Vec<u8>,
    /// TDFID.
    pub tdf_id: u16,
    /// +0x122..+0x144, zero in every TRCUST file.
    pub reserved: [u8; 34],
    /// TYPELIST and GROUPLIST entries in definition order.
    pub entries: Vec<NameEntry>,
    /// Initial values of the DTO variables.
    pub vars: Vec<u32>,
    /// Tracepoint records in file order.
    pub records: Vec<TdfRecord>,
}

/// A malformed TDF. Offsets are from the start of the file.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TdfError {
    /// A structure that runs past the end of the file (the shared
    /// reader's error: offset and structure).
    #[error("{0}")]
    Read(#[from] binread::Error),
    /// The file does not start with `"TDF\0"`.
    #[error("TDF header at offset 0x0000: magic is not \"TDF\\0\"")]
    BadMagic,
    /// A field holds an impossible value.
    #[error("TDF {what} at offset {offset:#06x}: {problem}")]
    Invalid {
        /// Offset of the field.
        offset: usize,
        /// The structure.
        what: &'static str,
        /// What is wrong.
        problem: String,
    },
}

/// The module-name field of a TDF or TMI header: `module` cut to 255
/// bytes, NUL-padded to [`MODULE_NAME_SIZE`].
pub(crate) fn module_name_field(module: &[u8]) -> [u8; MODULE_NAME_SIZE] {
    let mut name = [0u8; MODULE_NAME_SIZE];
    let n = module.len().min(MODULE_NAME_SIZE - 1);
    name[..n].copy_from_slice(&module[..n]);
    name
}

/// The bytes of `field` up to its first NUL.
pub(crate) fn until_nul(field: &[u8]) -> Vec<u8> {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    field[..end].to_vec()
}

impl Default for Tdf {
    fn default() -> Self {
        Tdf {
            version: TDF_VERSION,
            max_data_len: DEFAULT_MAX_DATA_LEN,
            reserved_1a: 0,
            major: 1,
            module: Vec::new(),
            tdf_id: 0,
            reserved: [0; 34],
            entries: Vec::new(),
            vars: Vec::new(),
            records: Vec::new(),
        }
    }
}

impl Tdf {
    /// Offset of the first record.
    pub fn first_record_offset(&self) -> usize {
        HEADER_SIZE + ENTRY_SIZE * self.entries.len() + 4 * self.vars.len()
    }

    /// The names of the RPN opcodes in this file whose bytes are
    /// os2trace's assignments rather than OS/2's (TRCUST-FORMATS.md §5.1a):
    /// a TDF that uses them is an os2trace TDF. Undecodable programs are
    /// skipped.
    pub fn os2trace_opcodes(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for r in &self.records {
            let Ok(instrs) = rpn_vm::instr::decode_all(&r.rpn) else {
                continue;
            };
            for (_, i) in instrs {
                let info = i.op.info();
                if info.origin == rpn_vm::opcode::Origin::Os2Trace && !names.contains(&info.name())
                {
                    names.push(info.name());
                }
            }
        }
        names
    }

    /// The file's bytes. Records are written in the order they are held;
    /// the compiler sorts them by (object, offset) as TRCUST does.
    pub fn to_bytes(&self) -> Vec<u8> {
        let total: usize = self.records.iter().map(TdfRecord::len).sum();
        let first = self.first_record_offset();
        let mut out = Vec::with_capacity(first + total);
        out.extend_from_slice(TDF_MAGIC);
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&(total as u32).to_le_bytes());
        out.extend_from_slice(&(self.records.len() as u32).to_le_bytes());
        out.extend_from_slice(&(first as u32).to_le_bytes());
        out.extend_from_slice(&(self.vars.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.max_data_len.to_le_bytes());
        out.extend_from_slice(&self.reserved_1a.to_le_bytes());
        out.extend_from_slice(&self.major.to_le_bytes());
        out.extend_from_slice(&module_name_field(&self.module));
        out.extend_from_slice(&(self.entries.len() as u16).to_le_bytes());
        out.extend_from_slice(&self.tdf_id.to_le_bytes());
        out.extend_from_slice(&self.reserved);
        debug_assert_eq!(out.len(), HEADER_SIZE);
        for e in &self.entries {
            let mut name = [0u8; 8];
            let n = e.name.len().min(8);
            name[..n].copy_from_slice(&e.name[..n]);
            out.extend_from_slice(&name);
            out.push(e.pad);
            out.push(e.kind.byte());
            out.extend_from_slice(&e.id.to_le_bytes());
        }
        for v in &self.vars {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for r in &self.records {
            out.extend_from_slice(&(r.len() as u16).to_le_bytes());
            out.extend_from_slice(&r.type_mask.to_le_bytes());
            out.extend_from_slice(&r.group.to_le_bytes());
            out.extend_from_slice(&r.object.to_le_bytes());
            out.extend_from_slice(&r.offset.to_le_bytes());
            out.extend_from_slice(&r.minor.to_le_bytes());
            out.extend_from_slice(&r.major.to_le_bytes());
            out.extend_from_slice(&(r.rpn.len() as u16).to_le_bytes());
            out.push(r.opcode);
            out.push(r.pad);
            out.extend_from_slice(&r.rpn);
        }
        out
    }

    /// Parses a TDF.
    ///
    /// # Errors
    /// [`TdfError`] naming the offset and the structure.
    pub fn parse(bytes: &[u8]) -> Result<Self, TdfError> {
        let b = Bytes::new(bytes);
        let h = b.slice(0, HEADER_SIZE as u64, HEADER)?;
        if &h[..4] != TDF_MAGIC {
            return Err(TdfError::BadMagic);
        }
        let total = b.u32(0x08, HEADER)? as usize;
        let count = b.u32(0x0C, HEADER)? as usize;
        let first = b.u32(0x10, HEADER)? as usize;
        let nvars = b.u32(0x14, HEADER)? as usize;
        let nentries = usize::from(b.u16(0x11E, HEADER)?);
        let tables_end = HEADER_SIZE + ENTRY_SIZE * nentries;
        // Bound the variable count by the file before allocating.
        let var_bytes = (nvars as u64).saturating_mul(4);
        b.slice(tables_end as u64, var_bytes, "TDF DTO variables")?;
        if first != tables_end + 4 * nvars {
            return Err(TdfError::Invalid {
                offset: 0x10,
                what: "header",
                problem: format!(
                    "first record offset {first:#x} is not 0x144 + 12*{nentries} + 4*{nvars} = {:#x}",
                    tables_end + 4 * nvars
                ),
            });
        }
        let mut entries = Vec::with_capacity(nentries);
        for i in 0..nentries {
            let at = (HEADER_SIZE + ENTRY_SIZE * i) as u64;
            let e: [u8; ENTRY_SIZE] = b.array(at, "TDF type/group entry")?;
            entries.push(NameEntry {
                name: until_nul(&e[..8]),
                pad: e[8],
                kind: EntryKind::from_byte(e[9]),
                id: u16::from_le_bytes([e[10], e[11]]),
            });
        }
        let mut vars = Vec::with_capacity(nvars);
        let mut v = b.cursor_at(tables_end as u64);
        for _ in 0..nvars {
            vars.push(v.u32("TDF DTO variables")?);
        }
        // Each record takes at least 0x16 bytes: bound the count by the file.
        if count > bytes.len().saturating_sub(first) / RECORD_HEADER_SIZE {
            return Err(TdfError::Invalid {
                offset: 0x0C,
                what: "header",
                problem: format!(
                    "{count} records cannot fit in the {} bytes after offset {first:#x}",
                    bytes.len().saturating_sub(first)
                ),
            });
        }
        let mut records = Vec::with_capacity(count);
        let mut at = first;
        for _ in 0..count {
            b.slice(at as u64, RECORD_HEADER_SIZE as u64, RECORD)?;
            let mut f = b.cursor_at(at as u64);
            let len = usize::from(f.u16(RECORD)?);
            let type_mask = f.u16(RECORD)?;
            let group = f.u16(RECORD)?;
            let object = f.u32(RECORD)?;
            let offset = f.u32(RECORD)?;
            let minor = f.u16(RECORD)?;
            let major = f.u16(RECORD)?;
            let rpn_len = usize::from(f.u16(RECORD)?);
            let [opcode, pad] = f.array(RECORD)?;
            if len != RECORD_HEADER_SIZE + rpn_len {
                return Err(TdfError::Invalid {
                    offset: at,
                    what: "tracepoint record",
                    problem: format!("length {len} is not 0x16 + RPN length {rpn_len}"),
                });
            }
            let rpn = f.take(rpn_len as u64, "TDF RPN program")?.to_vec();
            records.push(TdfRecord {
                type_mask,
                group,
                object,
                offset,
                minor,
                major,
                opcode,
                pad,
                rpn,
            });
            at += len;
        }
        let sum = at - first;
        if sum != total {
            return Err(TdfError::Invalid {
                offset: 0x08,
                what: "header",
                problem: format!("record bytes {total} do not match the records' {sum}"),
            });
        }
        if at != bytes.len() {
            return Err(TdfError::Invalid {
                offset: at,
                what: "file",
                problem: format!("{} bytes after the last record", bytes.len() - at),
            });
        }
        Ok(Tdf {
            version: b.u32(4, HEADER)?,
            max_data_len: b.u16(0x18, HEADER)?,
            reserved_1a: b.u16(0x1A, HEADER)?,
            major: b.u16(0x1C, HEADER)?,
            module: until_nul(&h[0x1E..0x11E]),
            tdf_id: b.u16(0x120, HEADER)?,
            reserved: b.array(0x122, HEADER)?,
            entries,
            vars,
            records,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Tdf {
        Tdf {
            module: b"HELLO.EXE".to_vec(),
            major: 0xC6,
            entries: vec![NameEntry {
                name: b"ABCDEFGH".to_vec(),
                kind: EntryKind::Type,
                id: 8,
                pad: 0,
            }],
            vars: vec![0, 0],
            records: vec![TdfRecord {
                type_mask: 8,
                group: 0,
                object: 2,
                offset: 5,
                minor: 1,
                major: 0xC6,
                opcode: 0x6A,
                pad: 0,
                rpn: vec![0x00, 0x21, 0x01],
            }],
            ..Tdf::default()
        }
    }

    #[test]
    fn round_trip_and_layout() {
        let t = sample();
        let b = t.to_bytes();
        assert_eq!(b.len(), HEADER_SIZE + 12 + 8 + 0x16 + 3);
        assert_eq!(&b[0x10..0x14], &(HEADER_SIZE as u32 + 12 + 8).to_le_bytes());
        assert_eq!(&b[0x144..0x14C], b"ABCDEFGH");
        assert_eq!(b[0x14D], 2);
        assert_eq!(Tdf::parse(&b).unwrap(), t);
    }

    #[test]
    fn os2trace_opcodes_are_named() {
        let mut t = sample();
        assert!(t.os2trace_opcodes().is_empty());
        let mut rpn = Vec::new();
        for op in [rpn_vm::Op::PushEax, rpn_vm::Op::PushEdi, rpn_vm::Op::Sub] {
            rpn_vm::Instr::new(op).encode(&mut rpn);
        }
        t.records[0].rpn = rpn;
        assert_eq!(t.os2trace_opcodes(), ["Sub"]);
    }

    /// Regression (found by the mutation test): an entry count that puts the
    /// variables past the end of the file, with no variables, used to slice
    /// out of range.
    #[test]
    fn entry_table_past_the_end_is_an_error() {
        let mut b = sample().to_bytes();
        b[0x11E..0x120].copy_from_slice(&0xFFFFu16.to_le_bytes());
        b[0x14..0x18].copy_from_slice(&0u32.to_le_bytes());
        let Err(TdfError::Read(e)) = Tdf::parse(&b) else {
            panic!("not a read error")
        };
        assert_eq!(e.kind, binread::ErrorKind::Truncated);
    }

    #[test]
    fn truncation_is_an_error_with_offset() {
        let b = sample().to_bytes();
        for cut in 0..b.len() {
            let e = Tdf::parse(&b[..cut]).unwrap_err();
            assert!(e.to_string().contains(" at "), "{e}");
        }
        assert_eq!(
            Tdf::parse(&b[..0x100]).unwrap_err().to_string(),
            "TDF header at file offset 0x0: truncated"
        );
        assert_eq!(
            Tdf::parse(&b[..b.len() - 1]).unwrap_err().to_string(),
            "TDF RPN program at file offset 0x16e: truncated"
        );
    }
}
