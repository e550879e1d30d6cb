//! Reading a TNF file: the header checked, every block's records walked,
//! type records decoded from the file itself, references resolved with the
//! generation rule, and every error naming its byte offset.
//!
//! The rules (reference §1.5): the byte order comes from the magic word;
//! data starts `directory_size` bytes into the file; blocks whose header
//! word is zero were never used; within a block, a word whose type bits are
//! FULL is a forwarding cell or padding and is stepped over, a PAIR word
//! starts an event and a TAG word any other record; records take whole
//! multiples of 8 bytes. A reclaimable reference whose target block has
//! another generation than expected, or whose target lies past the block's
//! `bytes_valid`, was overwritten by the LRU wrap and reads as NULL.

mod records;
mod types;

use std::collections::BTreeMap;

use thiserror::Error;

use crate::bytes::{Endian, View};
use crate::layout::{self, BLOCK_SIZE};

pub use records::{Event, Record, RecordKind, Value};
pub use types::{Leaf, Slot, Type, TypeKind};

/// What is wrong at a place in a TNF file.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ReadErrorKind {
    /// The file ends before a value.
    #[error("the file ends inside a {need}-byte value")]
    PastEnd {
        /// Bytes wanted.
        need: usize,
    },
    /// Not a TNF file.
    #[error("magic 0x{0:08x} is not TNF's 0x544e4600 in either byte order")]
    BadMagic(u32),
    /// A file header field out of range.
    #[error("file header {field} = {value} is invalid")]
    BadHeader {
        /// The field.
        field: &'static str,
        /// Its value.
        value: u32,
    },
    /// A block's bytes_valid outside 16..=512.
    #[error("block bytes_valid {0} is outside 16..=512")]
    BadBytesValid(u16),
    /// A forwarding cell that holds no permanent reference.
    #[error("forwarding cell 0x{0:08x} is not a permanent reference")]
    BadForward(u32),
    /// A reference that must be permanent is not.
    #[error("reference 0x{0:08x} should be permanent")]
    NotPermanent(u32),
    /// A type reference is zero.
    #[error("a type reference is NULL")]
    NullType,
    /// A reference outside the file.
    #[error("reference 0x{0:08x} points outside the file")]
    OutOfFile(u32),
    /// Forwarding cells, derived types or records nest too deep or loop.
    #[error("references loop or nest deeper than 16")]
    Loop,
    /// A malformed type record.
    #[error("bad type record: {0}")]
    BadType(&'static str),
    /// A size field out of range.
    #[error("size {0} is out of range")]
    BadSize(u32),
    /// A record reaching past its block's valid bytes.
    #[error("record of {size} bytes runs past the block's valid bytes ({left} left)")]
    PastBlock {
        /// The record's size.
        size: u32,
        /// Valid bytes left in the block.
        left: u32,
    },
    /// A word with the reserved type bits 11.
    #[error("word 0x{0:08x} has the reserved reference type 11")]
    Reserved(u32),
    /// A record whose type is not a struct or array.
    #[error("record of type {0} is neither a struct nor an array")]
    NotARecord(String),
    /// An event whose tag16 or ref16 is malformed.
    #[error("event word 0x{0:08x} has a bad tag16 or ref16")]
    BadPair(u32),
}

/// An error reading a TNF file, at a byte offset.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("TNF file at byte offset {offset} (0x{offset:x}): {kind}")]
pub struct ReadError {
    /// Byte offset in the file.
    pub offset: usize,
    /// What is wrong there.
    pub kind: ReadErrorKind,
}

impl ReadError {
    pub(crate) fn at(offset: usize, kind: ReadErrorKind) -> Self {
        ReadError { offset, kind }
    }
}

/// The file header's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileHeader {
    /// The byte order.
    pub endian: Endian,
    /// file_version
    pub version: u32,
    /// file_header_size
    pub header_size: u32,
    /// file_log_size
    pub log_size: u32,
    /// block_header_size
    pub block_header_size: u32,
    /// block_size (512)
    pub block_size: u32,
    /// directory_size
    pub directory_size: u32,
    /// block_count
    pub block_count: u32,
    /// blocks_valid
    pub blocks_valid: u32,
}

/// A parsed TNF file.
#[derive(Clone, Debug)]
pub struct TnfFile<'a> {
    pub(crate) view: View<'a>,
    header: FileHeader,
    pub(crate) types: BTreeMap<u32, Type>,
    records: Vec<Record>,
}

impl<'a> TnfFile<'a> {
    /// Parses a whole file.
    pub fn parse(data: &'a [u8]) -> Result<Self, ReadError> {
        let magic_bytes = data
            .get(..4)
            .ok_or(ReadError::at(0, ReadErrorKind::PastEnd { need: 4 }))?;
        let magic = u32::from_be_bytes([
            magic_bytes[0],
            magic_bytes[1],
            magic_bytes[2],
            magic_bytes[3],
        ]);
        let endian = match magic {
            layout::MAGIC => Endian::Big,
            layout::MAGIC_SWAPPED => Endian::Little,
            other => return Err(ReadError::at(0, ReadErrorKind::BadMagic(other))),
        };
        let view = View { data, endian };
        use layout::header as h;
        let header = FileHeader {
            endian,
            version: view.u32(h::VERSION)?,
            header_size: view.u32(h::HEADER_SIZE)?,
            log_size: view.u32(h::LOG_SIZE)?,
            block_header_size: view.u32(h::BLOCK_HEADER_SIZE)?,
            block_size: view.u32(h::BLOCK_SIZE)?,
            directory_size: view.u32(h::DIRECTORY_SIZE)?,
            block_count: view.u32(h::BLOCK_COUNT)?,
            blocks_valid: view.u32(h::BLOCKS_VALID)?,
        };
        let check = |ok: bool, at: u32, field: &'static str, value: u32| {
            if ok {
                Ok(())
            } else {
                Err(ReadError::at(
                    at as usize,
                    ReadErrorKind::BadHeader { field, value },
                ))
            }
        };
        check(
            header.block_size == BLOCK_SIZE,
            h::BLOCK_SIZE,
            "block_size",
            header.block_size,
        )?;
        check(
            (4..=64).contains(&header.block_header_size)
                && header.block_header_size.is_multiple_of(4),
            h::BLOCK_HEADER_SIZE,
            "block_header_size",
            header.block_header_size,
        )?;
        check(
            header.directory_size >= 1024
                && header.directory_size.is_multiple_of(BLOCK_SIZE)
                && header.directory_size <= 1 << 20,
            h::DIRECTORY_SIZE,
            "directory_size",
            header.directory_size,
        )?;
        let file_blocks = (data.len() / BLOCK_SIZE as usize) as u64;
        check(
            u64::from(header.block_count) <= file_blocks
                && header.block_count * BLOCK_SIZE > header.directory_size,
            h::BLOCK_COUNT,
            "block_count",
            header.block_count,
        )?;
        let size = header.block_count * BLOCK_SIZE;
        check(
            (9..=30).contains(&header.log_size) && u64::from(size) <= 1u64 << header.log_size,
            h::LOG_SIZE,
            "file_log_size",
            header.log_size,
        )?;
        let mut file = TnfFile {
            view,
            header,
            types: BTreeMap::new(),
            records: Vec::new(),
        };
        file.read_records()?;
        Ok(file)
    }

    /// The header.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// Every record in physical order: the file header, then each used
    /// block's header and records.
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// Every decoded type record, by offset.
    pub fn types(&self) -> impl Iterator<Item = &Type> {
        self.types.values()
    }

    /// The generation in the header of the block holding `offset`, if the
    /// block is in the data area and used.
    pub(crate) fn block_generation(&self, offset: u32) -> Option<(u32, u32)> {
        let block = offset & !(BLOCK_SIZE - 1);
        if block < self.header.directory_size || block >= self.header.block_count * BLOCK_SIZE {
            return None;
        }
        let tag = self.view.u32(block).ok()?;
        if tag == 0 {
            return None;
        }
        let generation = self.view.u32(block + 4).ok()?;
        let valid = u32::from(self.view.u16(block + 8).ok()?);
        Some((generation, valid))
    }
}
