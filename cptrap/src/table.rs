//! The always-on wrapping trace table.
//!
//! Like VM/SP's CP trace table, it is allocated once (at "IPL", the start of
//! a run), always records, and wraps: the newest entry overwrites the oldest.
//! It keeps a running count per typenum, so a dump or a test knows how many
//! entries of each type were made even after the table wrapped. Recording an
//! entry is a 32-byte copy into a preallocated slot and one counter
//! increment: no allocation, no branch on who is listening. Whether the
//! entry also goes to a CPTRAP file is the [`crate::Recorder`]'s business.

use crate::entry::{ENTRY_SIZE, Entry};
use crate::typenum::TypeNum;

/// The default number of entries (64 KB of table, like a few VM/SP pages).
pub const DEFAULT_ENTRIES: usize = 2048;

/// The trace table.
#[derive(Clone, Debug)]
pub struct TraceTable {
    slots: Box<[[u8; ENTRY_SIZE]]>,
    next: usize,
    total: u64,
    per_type: [u64; 64],
    stopped: bool,
}

impl TraceTable {
    /// A table of `entries` slots (at least 1).
    pub fn new(entries: usize) -> TraceTable {
        TraceTable {
            slots: vec![[0u8; ENTRY_SIZE]; entries.max(1)].into_boxed_slice(),
            next: 0,
            total: 0,
            per_type: [0; 64],
            stopped: false,
        }
    }

    /// Records `entry`, overwriting the oldest one when the table is full.
    /// Does nothing while recording is stopped ([`TraceTable::set_stopped`]).
    #[inline]
    pub fn record(&mut self, entry: &Entry) {
        if self.stopped {
            return;
        }
        self.slots[self.next] = entry.to_bytes();
        self.next += 1;
        if self.next == self.slots.len() {
            self.next = 0;
        }
        self.total += 1;
        self.per_type[usize::from(entry.frame.typenum & 63)] += 1;
    }

    /// VM/SP's MONITOR STOP / MONITOR START: suppresses or resumes recording.
    pub fn set_stopped(&mut self, stopped: bool) {
        self.stopped = stopped;
    }

    /// Number of slots.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Entries recorded since the table was made (including overwritten ones).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Entries of type `t` recorded since the table was made.
    pub fn count(&self, t: TypeNum) -> u64 {
        self.per_type[usize::from(t.0 & 63)]
    }

    /// The entries still in the table, oldest first.
    pub fn entries(&self) -> impl Iterator<Item = Entry> + '_ {
        let held = usize::try_from(self.total)
            .unwrap_or(usize::MAX)
            .min(self.slots.len());
        let start = (self.next + self.slots.len() - held) % self.slots.len();
        (0..held).map(move |i| Entry::from_bytes(&self.slots[(start + i) % self.slots.len()]))
    }

    /// The most recent entry, if any (VM/SP: TRACCURR minus one entry).
    pub fn last(&self) -> Option<Entry> {
        (self.total > 0).then(|| {
            let i = (self.next + self.slots.len() - 1) % self.slots.len();
            Entry::from_bytes(&self.slots[i])
        })
    }
}

impl Default for TraceTable {
    fn default() -> Self {
        TraceTable::new(DEFAULT_ENTRIES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(t: TypeNum, time: u64) -> Entry {
        let mut e = Entry::new(t);
        e.frame.time = time;
        e
    }

    #[test]
    fn wraps_keeping_the_newest_and_counting_all() {
        let mut table = TraceTable::new(3);
        for time in 0..5 {
            table.record(&entry(TypeNum::API, time));
        }
        table.record(&entry(TypeNum::ALLOC, 5));
        let times: Vec<u64> = table.entries().map(|e| e.frame.time).collect();
        assert_eq!(times, [3, 4, 5]);
        assert_eq!(table.total(), 6);
        assert_eq!(table.count(TypeNum::API), 5);
        assert_eq!(table.count(TypeNum::ALLOC), 1);
        assert_eq!(table.last().unwrap().frame.time, 5);
    }

    #[test]
    fn partly_filled_table_lists_what_it_holds() {
        let mut table = TraceTable::new(8);
        assert!(table.last().is_none());
        table.record(&entry(TypeNum::IRQ, 7));
        assert_eq!(table.entries().count(), 1);
    }

    #[test]
    fn stopped_table_records_nothing() {
        let mut table = TraceTable::new(4);
        table.set_stopped(true);
        table.record(&entry(TypeNum::IRQ, 1));
        assert_eq!(table.total(), 0);
        table.set_stopped(false);
        table.record(&entry(TypeNum::IRQ, 2));
        assert_eq!(table.total(), 1);
    }
}
