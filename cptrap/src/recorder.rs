//! CPTRAP: copies selected records into 4 KB blocks, through a bounded
//! transfer buffer, to the file.
//!
//! As on VM/SP, the system fills blocks as fast as events come, while the
//! spool takes full blocks only as fast as it can. The blocks waiting in
//! between are the transfer buffer, of a fixed number of blocks. When a
//! block is full and the transfer buffer has no room for it, every record
//! that comes is lost and counted, until the spool makes room. The first
//! record written after that is preceded by a data-lost record (X'3C')
//! holding the number and bytes of the records lost and the time of the
//! first, so the file shows where the hole is. Who calls
//! [`Recorder::spool`], and how often, is the system's choice: it is the
//! speed of the spool.

use std::collections::VecDeque;
use std::io::{self, Write};

use crate::entry::Entry;
use crate::file::{BLOCK_SIZE, BlockWriter, DATA_LOST_SIZE, Record};
use crate::iface::InterfaceRecord;
use crate::selection::Selection;
use crate::typenum::TypeNum;

/// The default transfer buffer, in blocks.
pub const DEFAULT_TRANSFER_BLOCKS: usize = 16;

/// What a recorder did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecorderStats {
    /// Records written to blocks (data-lost markers not included).
    pub records: u64,
    /// Records lost because the transfer buffer was full.
    pub lost_records: u64,
    /// Bytes of the records lost.
    pub lost_bytes: u64,
    /// Data-lost records written.
    pub loss_marks: u64,
    /// Blocks handed to the file.
    pub blocks: u64,
}

#[derive(Clone, Copy, Debug)]
struct Loss {
    records: u32,
    bytes: u32,
    first_time: u64,
}

/// The CPTRAP recorder of one run.
#[derive(Debug)]
pub struct Recorder {
    selection: Selection,
    table_types: u64,
    current: BlockWriter,
    transfer: VecDeque<Box<[u8; BLOCK_SIZE]>>,
    capacity: usize,
    next_block: u32,
    loss: Option<Loss>,
    stats: RecorderStats,
}

impl Recorder {
    /// A recorder of the records `selection` selects, with a transfer buffer
    /// of `transfer_blocks` blocks (at least 1).
    pub fn new(selection: Selection, transfer_blocks: usize) -> Recorder {
        let table_types = selection.types.bits() & ((1u64 << (TypeNum::TABLE_MAX + 1)) - 1);
        Recorder {
            selection,
            table_types,
            current: BlockWriter::new(),
            transfer: VecDeque::new(),
            capacity: transfer_blocks.max(1),
            next_block: 0,
            loss: None,
            stats: RecorderStats::default(),
        }
    }

    /// The selection.
    pub fn selection(&self) -> &Selection {
        &self.selection
    }

    /// Whether table entries of type `t` are selected: the producers' cheap
    /// test before they build an entry for the file.
    #[inline]
    pub fn wants(&self, t: TypeNum) -> bool {
        t.0 < 64 && self.table_types & (1u64 << t.0) != 0
    }

    /// Copies a trace table entry to the file if it is selected.
    pub fn record_entry(&mut self, entry: &Entry) {
        let record = Record::Table(*entry);
        if self.selection.matches(&record) {
            self.put(record);
        }
    }

    /// Copies interface data to the file if it is selected.
    pub fn record_interface(&mut self, data: InterfaceRecord, pid: u16, tid: u16, time: u64) {
        let record = Record::interface(data, pid, tid, time);
        if self.selection.matches(&record) {
            self.put(record);
        }
    }

    fn put(&mut self, record: Record) {
        let mark = self
            .loss
            .map(|l| Record::data_lost(l.records, l.bytes, l.first_time));
        let need = record.encoded_len() + mark.as_ref().map_or(0, |_| DATA_LOST_SIZE);
        if self.current.room() < need {
            if self.transfer.len() >= self.capacity {
                self.lose(&record);
                return;
            }
            self.close_current(false);
        }
        if let Some(mark) = mark {
            self.current.push(&mark);
            self.stats.loss_marks += 1;
            self.loss = None;
        }
        self.current.push(&record);
        self.stats.records += 1;
    }

    fn lose(&mut self, record: &Record) {
        let bytes = record.encoded_len() as u32;
        let loss = self.loss.get_or_insert(Loss {
            records: 0,
            bytes: 0,
            first_time: record.frame().time,
        });
        loss.records = loss.records.saturating_add(1);
        loss.bytes = loss.bytes.saturating_add(bytes);
        self.stats.lost_records += 1;
        self.stats.lost_bytes += u64::from(bytes);
    }

    fn close_current(&mut self, last: bool) {
        let block = std::mem::take(&mut self.current).finish(self.next_block, last);
        self.next_block = self.next_block.wrapping_add(1);
        self.transfer.push_back(block);
    }

    /// Full blocks waiting in the transfer buffer.
    pub fn waiting_blocks(&self) -> usize {
        self.transfer.len()
    }

    /// Whether records are being lost now (a loss not yet marked).
    pub fn losing(&self) -> bool {
        self.loss.is_some()
    }

    /// The spool takes up to `max_blocks` waiting blocks into `sink`, oldest
    /// first; returns how many it took.
    pub fn spool(&mut self, sink: &mut impl Write, max_blocks: usize) -> io::Result<usize> {
        let mut taken = 0;
        while taken < max_blocks {
            let Some(block) = self.transfer.pop_front() else {
                break;
            };
            sink.write_all(&block[..])?;
            self.stats.blocks += 1;
            taken += 1;
        }
        Ok(taken)
    }

    /// Stops recording: writes every waiting block and the current one,
    /// marked last, with the mark of a loss not yet marked. A file always
    /// gets at least one block.
    pub fn finish(mut self, sink: &mut impl Write) -> io::Result<RecorderStats> {
        self.spool(sink, usize::MAX)?;
        if let Some(l) = self.loss.take() {
            let mark = Record::data_lost(l.records, l.bytes, l.first_time);
            if self.current.room() < DATA_LOST_SIZE {
                self.close_current(false);
            }
            self.current.push(&mark);
            self.stats.loss_marks += 1;
        }
        self.close_current(true);
        self.spool(sink, usize::MAX)?;
        sink.flush()?;
        Ok(self.stats)
    }

    /// What the recorder did so far.
    pub fn stats(&self) -> RecorderStats {
        self.stats
    }
}
