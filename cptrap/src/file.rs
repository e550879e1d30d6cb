//! The CPTRAP file: its 4 KB records (blocks) and the logical records in them.
//!
//! The seed fixes only that the spool file is made of 4 KB records holding
//! data and nothing else. os2trace's layout, all little endian:
//!
//! ```text
//! A file is a sequence of 4096-byte blocks; its length is a multiple of 4096.
//!
//! Block header (16 bytes):
//! 0x00 6  "CPTRAP"
//! 0x06 1  format version, 1
//! 0x07 1  flags: bit 0 = the last block (written when CPTRAP stopped)
//! 0x08 4  block number, counting from 0 in file order
//! 0x0C 2  bytes used in the block, header included (16..=4096)
//! 0x0E 2  number of logical records in the block
//! 0x10    logical records, packed; the rest of the block is zero
//! ```
//!
//! A logical record never spans blocks. Every one starts with the 16-byte
//! frame of a trace table entry (typenum, flags, PID, TID, aux, time; see
//! [`crate::entry`]), and its typenum gives its length:
//!
//! * 01..1B: a trace table entry, 32 bytes in all.
//! * X'3C' data lost: 32 bytes; the frame's time is that of the first lost
//!   record, w0 the number of records lost, w1 their bytes, w2 and w3 zero.
//!   It stands where the lost records would have been.
//! * X'3E' / X'3F' interface data: the frame (aux 0), then the seed's 8-byte
//!   header ([`crate::iface`]) whose first byte repeats the typenum and
//!   whose total length (8..=272) counts header and data, then the data.

use crate::entry::{ENTRY_SIZE, Entry, FRAME_SIZE, Frame};
use crate::iface::{HEADER_SIZE, InterfaceRecord};
use crate::typenum::TypeNum;

/// Size of a CPTRAP file block (the seed's 4 KB spool record).
pub const BLOCK_SIZE: usize = 4096;
/// Size of a block header.
pub const BLOCK_HEADER_SIZE: usize = 16;
/// The block signature.
pub const MAGIC: &[u8; 6] = b"CPTRAP";
/// The format version this crate writes and reads.
pub const VERSION: u8 = 1;
/// Block flag: the last block of a closed file.
pub const BLOCK_LAST: u8 = 0x01;
/// Size of a data-lost record.
pub const DATA_LOST_SIZE: usize = ENTRY_SIZE;

/// One logical record of a CPTRAP file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// A trace table entry.
    Table(Entry),
    /// Interface data (X'3E' or X'3F'); the frame's typenum matches.
    Interface {
        /// Who and when.
        frame: Frame,
        /// Code and data.
        record: InterfaceRecord,
    },
    /// Records were lost here (X'3C').
    DataLost {
        /// The frame; its time is the first lost record's.
        frame: Frame,
        /// Number of records lost.
        records: u32,
        /// Their bytes in the file.
        bytes: u32,
    },
}

impl Record {
    /// An interface record made by `pid`/`tid` at `time`.
    pub fn interface(record: InterfaceRecord, pid: u16, tid: u16, time: u64) -> Record {
        Record::Interface {
            frame: Frame {
                typenum: record.interface.typenum().0,
                flags: 0,
                pid,
                tid,
                aux: 0,
                time,
            },
            record,
        }
    }

    /// The data-lost marker for `records` records of `bytes` bytes, the first
    /// lost at `time`.
    pub fn data_lost(records: u32, bytes: u32, time: u64) -> Record {
        Record::DataLost {
            frame: Frame {
                typenum: TypeNum::DATA_LOST.0,
                time,
                ..Frame::default()
            },
            records,
            bytes,
        }
    }

    /// The record's frame.
    pub fn frame(&self) -> &Frame {
        match self {
            Record::Table(e) => &e.frame,
            Record::Interface { frame, .. } | Record::DataLost { frame, .. } => frame,
        }
    }

    /// The record's type.
    pub fn typenum(&self) -> TypeNum {
        TypeNum(self.frame().typenum)
    }

    /// Size of the record in the file.
    pub fn encoded_len(&self) -> usize {
        match self {
            Record::Table(_) | Record::DataLost { .. } => ENTRY_SIZE,
            Record::Interface { record, .. } => FRAME_SIZE + usize::from(record.total_length()),
        }
    }

    /// Appends the record's bytes to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match self {
            Record::Table(e) => out.extend_from_slice(&e.to_bytes()),
            Record::DataLost {
                frame,
                records,
                bytes,
            } => {
                let entry = Entry {
                    frame: *frame,
                    words: [*records, *bytes, 0, 0],
                };
                out.extend_from_slice(&entry.to_bytes());
            }
            Record::Interface { frame, record } => {
                out.extend_from_slice(&frame.to_bytes());
                out.extend_from_slice(&record.header());
                out.extend_from_slice(record.data());
            }
        }
    }
}

/// The largest logical record: frame, header and 264 bytes of data.
pub const MAX_RECORD_SIZE: usize = FRAME_SIZE + HEADER_SIZE + crate::iface::MAX_DATA;

/// A block being filled.
#[derive(Clone, Debug)]
pub struct BlockWriter {
    bytes: Vec<u8>,
    records: u16,
}

impl BlockWriter {
    /// An empty block.
    pub fn new() -> BlockWriter {
        let mut bytes = Vec::with_capacity(BLOCK_SIZE);
        bytes.extend_from_slice(&[0u8; BLOCK_HEADER_SIZE]);
        BlockWriter { bytes, records: 0 }
    }

    /// Bytes still free.
    pub fn room(&self) -> usize {
        BLOCK_SIZE - self.bytes.len()
    }

    /// Whether the block holds no record.
    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    /// Adds `record` if it fits; returns whether it did.
    pub fn push(&mut self, record: &Record) -> bool {
        if record.encoded_len() > self.room() {
            return false;
        }
        record.encode_into(&mut self.bytes);
        self.records += 1;
        true
    }

    /// The finished 4096-byte block, numbered `number`.
    pub fn finish(mut self, number: u32, last: bool) -> Box<[u8; BLOCK_SIZE]> {
        let used = self.bytes.len() as u16; // <= 4096
        self.bytes.resize(BLOCK_SIZE, 0);
        self.bytes[..6].copy_from_slice(MAGIC);
        self.bytes[6] = VERSION;
        self.bytes[7] = if last { BLOCK_LAST } else { 0 };
        self.bytes[8..12].copy_from_slice(&number.to_le_bytes());
        self.bytes[12..14].copy_from_slice(&used.to_le_bytes());
        self.bytes[14..16].copy_from_slice(&self.records.to_le_bytes());
        let mut block = Box::new([0u8; BLOCK_SIZE]);
        block.copy_from_slice(&self.bytes);
        block
    }
}

impl Default for BlockWriter {
    fn default() -> Self {
        BlockWriter::new()
    }
}
