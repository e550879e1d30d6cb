//! Reading a CPTRAP file: every block checked, every logical record
//! decoded, errors naming the byte offset in the file.

use binread::Bytes;
use thiserror::Error;

use crate::entry::{ENTRY_SIZE, Entry, FRAME_SIZE, Frame};
use crate::file::{BLOCK_HEADER_SIZE, BLOCK_LAST, BLOCK_SIZE, MAGIC, Record, VERSION};
use crate::iface::{HEADER_SIZE, Interface, InterfaceRecord, MAX_DATA};
use crate::typenum::TypeNum;

/// What is wrong at a place in a CPTRAP file.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ReadErrorKind {
    /// The file holds no block.
    #[error("the file is empty (a CPTRAP file has at least one 4096-byte block)")]
    Empty,
    /// The file ends inside a block.
    #[error("the file ends inside a block ({0} bytes of 4096)")]
    PartialBlock(usize),
    /// A block does not start with "CPTRAP".
    #[error("block signature is not \"CPTRAP\"")]
    BadMagic,
    /// A block of another format version.
    #[error("format version {0} (this reader knows version 1)")]
    BadVersion(u8),
    /// Blocks out of order.
    #[error("block number {found}, expected {expected}")]
    BlockNumber {
        /// The block's position in the file.
        expected: u32,
        /// The number in its header.
        found: u32,
    },
    /// A used-bytes count outside 16..=4096.
    #[error("bytes used {0} is outside 16..=4096")]
    BadUsed(u16),
    /// A logical record reaching past the used part of its block.
    #[error("record of {need} bytes runs past the block's used bytes ({left} left)")]
    Truncated {
        /// The record's length.
        need: usize,
        /// Bytes left in the block.
        left: usize,
    },
    /// A typenum that is neither a table type nor a CPTRAP record type.
    #[error("unknown record type X'{0:02X}'")]
    UnknownType(u8),
    /// An interface header whose first byte is not the frame's typenum.
    #[error("interface header type X'{header:02X}' differs from the record type X'{frame:02X}'")]
    HeaderType {
        /// The frame's typenum.
        frame: u8,
        /// The header's first byte.
        header: u8,
    },
    /// An interface header total length outside 8..=272.
    #[error("interface total length {0} is outside 8..=272")]
    BadTotalLength(u16),
    /// A read past the end of the file. The checks before each read make
    /// this unreachable; the shared reader reports it with its structure.
    #[error("{structure}: {kind}")]
    Read {
        /// The structure being read.
        structure: &'static str,
        /// What went wrong.
        kind: binread::ErrorKind,
    },
    /// A record count that differs from the records found.
    #[error("block header counts {header} records, the block holds {found}")]
    RecordCount {
        /// The header's count.
        header: u16,
        /// The records decoded.
        found: u16,
    },
}

/// An error reading a CPTRAP file, at a byte offset.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("CPTRAP file at byte offset {offset} (0x{offset:X}): {kind}")]
pub struct ReadError {
    /// Byte offset in the file.
    pub offset: usize,
    /// What is wrong there.
    pub kind: ReadErrorKind,
}

impl From<binread::Error> for ReadError {
    fn from(e: binread::Error) -> ReadError {
        ReadError {
            offset: usize::try_from(e.offset).unwrap_or(usize::MAX),
            kind: ReadErrorKind::Read {
                structure: e.structure,
                kind: e.kind,
            },
        }
    }
}

/// One logical record and where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileRecord {
    /// Record number, from 1 in file order.
    pub number: usize,
    /// Byte offset of the record in the file.
    pub offset: usize,
    /// The record.
    pub record: Record,
}

/// A CPTRAP file, read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CptrapFile {
    records: Vec<FileRecord>,
    blocks: usize,
    closed: bool,
}

impl CptrapFile {
    /// Reads the file in `bytes`.
    pub fn parse(bytes: &[u8]) -> Result<CptrapFile, ReadError> {
        if bytes.is_empty() {
            return Err(ReadError {
                offset: 0,
                kind: ReadErrorKind::Empty,
            });
        }
        let whole = bytes.len() / BLOCK_SIZE * BLOCK_SIZE;
        if whole != bytes.len() {
            return Err(ReadError {
                offset: whole,
                kind: ReadErrorKind::PartialBlock(bytes.len() - whole),
            });
        }
        let mut file = CptrapFile::default();
        let input = Bytes::new(bytes);
        for index in 0..bytes.len() / BLOCK_SIZE {
            file.closed = read_block(input, index, &mut file.records)?;
            file.blocks += 1;
        }
        Ok(file)
    }

    /// The records, in file order.
    pub fn records(&self) -> &[FileRecord] {
        &self.records
    }

    /// Number of 4 KB blocks.
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// Whether the last block carries the "last block" flag (CPTRAP was
    /// stopped and the file closed, rather than cut short).
    pub fn closed(&self) -> bool {
        self.closed
    }
}

/// Structure names in read errors.
const BLOCK_HEADER: &str = "CPTRAP block header";
const INTERFACE_HEADER: &str = "CPTRAP interface header";

/// Reads block `index` of the file; returns its "last" flag.
fn read_block(
    input: Bytes<'_>,
    index: usize,
    out: &mut Vec<FileRecord>,
) -> Result<bool, ReadError> {
    let base = index * BLOCK_SIZE;
    let at_block = |at: usize| (base + at) as u64;
    let block = input.slice(at_block(0), BLOCK_SIZE as u64, "CPTRAP block")?;
    let err = |at: usize, kind| ReadError {
        offset: base + at,
        kind,
    };
    if &block[..6] != MAGIC {
        return Err(err(0, ReadErrorKind::BadMagic));
    }
    if block[6] != VERSION {
        return Err(err(6, ReadErrorKind::BadVersion(block[6])));
    }
    let number = input.u32(at_block(8), BLOCK_HEADER)?;
    let expected = u32::try_from(index).unwrap_or(u32::MAX);
    if number != expected {
        return Err(err(
            8,
            ReadErrorKind::BlockNumber {
                expected,
                found: number,
            },
        ));
    }
    let used = input.u16(at_block(12), BLOCK_HEADER)?;
    if !(BLOCK_HEADER_SIZE..=BLOCK_SIZE).contains(&usize::from(used)) {
        return Err(err(12, ReadErrorKind::BadUsed(used)));
    }
    let count = input.u16(at_block(14), BLOCK_HEADER)?;
    let used = usize::from(used);
    let mut at = BLOCK_HEADER_SIZE;
    let mut found: u16 = 0;
    while at < used {
        let left = used - at;
        let need_frame = |need: usize| {
            if need > left {
                Err(err(at, ReadErrorKind::Truncated { need, left }))
            } else {
                Ok(())
            }
        };
        need_frame(FRAME_SIZE)?;
        let typenum = TypeNum(block[at]);
        let (record, len) = if typenum.is_table() || typenum == TypeNum::DATA_LOST {
            need_frame(ENTRY_SIZE)?;
            let mut raw = [0u8; ENTRY_SIZE];
            raw.copy_from_slice(&block[at..at + ENTRY_SIZE]);
            let entry = Entry::from_bytes(&raw);
            let record = if typenum.is_table() {
                Record::Table(entry)
            } else {
                Record::DataLost {
                    frame: entry.frame,
                    records: entry.words[0],
                    bytes: entry.words[1],
                }
            };
            (record, ENTRY_SIZE)
        } else if let Some(interface) = Interface::from_typenum(typenum) {
            need_frame(FRAME_SIZE + HEADER_SIZE)?;
            let mut raw = [0u8; FRAME_SIZE];
            raw.copy_from_slice(&block[at..at + FRAME_SIZE]);
            let frame = Frame::from_bytes(&raw);
            let h = at + FRAME_SIZE;
            if block[h] != typenum.0 {
                return Err(err(
                    h,
                    ReadErrorKind::HeaderType {
                        frame: typenum.0,
                        header: block[h],
                    },
                ));
            }
            let code = input.u16(at_block(h + 2), INTERFACE_HEADER)?;
            let total = input.u16(at_block(h + 4), INTERFACE_HEADER)?;
            if !(HEADER_SIZE..=HEADER_SIZE + MAX_DATA).contains(&usize::from(total)) {
                return Err(err(h + 4, ReadErrorKind::BadTotalLength(total)));
            }
            let len = FRAME_SIZE + usize::from(total);
            need_frame(len)?;
            let data = &block[h + HEADER_SIZE..at + len];
            let record = InterfaceRecord::new(interface, code, data);
            (Record::Interface { frame, record }, len)
        } else {
            return Err(err(at, ReadErrorKind::UnknownType(typenum.0)));
        };
        out.push(FileRecord {
            number: out.len() + 1,
            offset: base + at,
            record,
        });
        found = found.saturating_add(1);
        at += len;
    }
    if found != count {
        return Err(err(
            14,
            ReadErrorKind::RecordCount {
                header: count,
                found,
            },
        ));
    }
    Ok(block[7] & BLOCK_LAST != 0)
}
