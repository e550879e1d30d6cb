//! Writing a TNF file: the image of a user trace file kept in memory and
//! always consistent, so it can be saved at any moment.
//!
//! Data blocks are handed out in increasing block number from the first
//! data block, generation 1; past the last one the allocator wraps to the
//! first and the generation goes up. Each thread (pid, tid) writes into a
//! block of its own; another thread's current block is skipped (it is
//! locked). So the oldest blocks are overwritten, whole: the LRU circular
//! buffer of the man pages.
//!
//! Every event references a schedule record in its own block: one is
//! written when the thread's event is the first in a block, or when the
//! time since the record's `time_base` no longer fits the event's 32-bit
//! `time_delta`. A string argument is a record of its own, allocated just
//! before the event (possibly in the previous block) and referenced by a
//! reclaimable reference, which reads as NULL once that block is reused.

mod tags;

use std::collections::BTreeMap;

use thiserror::Error;

use crate::bytes::Endian;
use crate::layout::{self, BLOCK_HEADER_SIZE, BLOCK_SIZE, DATA_START, FILE_HEADER_SIZE, round8};
use crate::probe::{ArgType, ArgValue, ProbeDesc, ProbeError, RecordType};
use crate::refs::{self, FULL, PAIR, TAG};
use crate::types::struct_size;

/// Why the writer refuses something.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum WriteError {
    /// The file size is below 128 KB or above the maximum.
    #[error("trace file size {0} bytes is outside {min}..={max}", min = layout::MIN_FILE_SIZE, max = layout::MAX_FILE_SIZE)]
    BadSize(u64),
    /// The tag blocks are full (too many probe types).
    #[error("the tag blocks are full (32 KB of type records)")]
    TagAreaFull,
    /// The directory has no free forwarding cell.
    #[error("the directory has no free forwarding cell")]
    DirectoryFull,
    /// A record larger than a block.
    #[error("a record of {0} bytes does not fit a 512-byte block")]
    RecordTooLarge(u32),
    /// A type the writer never wrote.
    #[error("no type record named {0}")]
    UnknownType(String),
    /// Every data block is some thread's current block.
    #[error("every data block is in use by another thread")]
    NoFreeBlock,
    /// The probe is malformed.
    #[error("bad probe: {0}")]
    Probe(#[from] ProbeError),
    /// The arguments do not match the probe's slots.
    #[error("probe {probe}: argument {index} is not a {expected}")]
    ArgMismatch {
        /// The probe.
        probe: String,
        /// Which argument.
        index: usize,
        /// The slot's type.
        expected: &'static str,
    },
}

/// A thread's writing position.
#[derive(Clone, Copy, Debug)]
struct Thread {
    /// Offset of its current block.
    block: u32,
    /// That block's generation.
    generation: u32,
    /// Bytes used in it (header included).
    used: u32,
    /// Its schedule record in this block: offset and time_base.
    sched: Option<(u32, i64)>,
}

/// Counters of a writer's life.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriterStats {
    /// Events written.
    pub events: u64,
    /// Data blocks handed out.
    pub blocks: u64,
    /// Of those, blocks that overwrote older data.
    pub blocks_reused: u64,
}

/// A probe's event layout, worked out at its first event: its directory
/// cell, the event's size and each argument slot's (offset, size).
#[derive(Clone, Debug)]
struct ProbeLayout {
    cell: u32,
    event_size: u32,
    slots: Vec<(u32, u32)>,
}

/// Identity of a thread: (pid, lwpid, tid).
pub type ThreadKey = (u32, u32, u32);

/// A TNF trace file being written.
#[derive(Clone, Debug)]
pub struct TnfWriter {
    image: Vec<u8>,
    endian: Endian,
    log: u32,
    data_blocks: u32,
    generation: u32,
    next_block: u32,
    blocks_valid: u32,
    tag_next: u32,
    fw_next: u32,
    types: BTreeMap<String, u32>,
    probes: BTreeMap<u64, ProbeLayout>,
    string_tag: u32,
    sched_tag: u32,
    threads: BTreeMap<ThreadKey, Thread>,
    stats: WriterStats,
    /// User record types written so far, by name.
    records: BTreeMap<String, RecordType>,
}

impl TnfWriter {
    /// A new file of `size` bytes (rounded down to whole blocks), in the
    /// byte order `endian`, with the header, directory and built-in types.
    pub fn new(size: u64, endian: Endian) -> Result<Self, WriteError> {
        if size < u64::from(layout::MIN_FILE_SIZE) || size > u64::from(layout::MAX_FILE_SIZE) {
            return Err(WriteError::BadSize(size));
        }
        let size = (size as u32) & !(BLOCK_SIZE - 1);
        let mut w = TnfWriter {
            image: vec![0; size as usize],
            endian,
            log: layout::log_size(size),
            data_blocks: (size - DATA_START) / BLOCK_SIZE,
            generation: 1,
            next_block: 0,
            blocks_valid: DATA_START / BLOCK_SIZE,
            tag_next: layout::DIRECTORY_SIZE,
            fw_next: layout::FW_FIRST_PROBE,
            types: BTreeMap::new(),
            probes: BTreeMap::new(),
            string_tag: 0,
            sched_tag: 0,
            threads: BTreeMap::new(),
            stats: WriterStats::default(),
            records: BTreeMap::new(),
        };
        w.image[..4].copy_from_slice(&layout::MAGIC.to_be_bytes());
        if endian == Endian::Little {
            w.image[..4].reverse();
        }
        use layout::header as h;
        w.put_u32(
            layout::FILE_HEADER,
            refs::permanent(layout::FW_FILE_HEADER, TAG),
        );
        w.put_u32(h::VERSION, layout::FILE_VERSION);
        w.put_u32(h::HEADER_SIZE, FILE_HEADER_SIZE);
        w.put_u32(h::LOG_SIZE, w.log);
        w.put_u32(h::BLOCK_HEADER_SIZE, BLOCK_HEADER_SIZE);
        w.put_u32(h::BLOCK_SIZE, BLOCK_SIZE);
        w.put_u32(h::DIRECTORY_SIZE, layout::DIRECTORY_SIZE);
        w.put_u32(h::BLOCK_COUNT, size / BLOCK_SIZE);
        w.put_u32(h::NEXT_ALLOC_GEN, w.generation);
        w.put_u32(h::NEXT_FW_ALLOC, w.fw_next);
        w.write_builtins()?;
        w.string_tag = w.tag_of("tnf_string")?;
        w.sched_tag = w.tag_of("tnf_sched_rec")?;
        w.put_u32(h::BLOCKS_VALID, w.blocks_valid);
        Ok(w)
    }

    /// The file as it stands.
    pub fn bytes(&self) -> &[u8] {
        &self.image
    }

    /// The file, consumed.
    pub fn into_bytes(self) -> Vec<u8> {
        self.image
    }

    /// What the writer has done so far.
    pub fn stats(&self) -> WriterStats {
        self.stats
    }

    /// The number of data blocks (what wraps).
    pub fn data_blocks(&self) -> u32 {
        self.data_blocks
    }

    pub(crate) fn put_u16(&mut self, at: u32, v: u16) {
        let b = self.endian.u16_bytes(v);
        self.image[at as usize..at as usize + 2].copy_from_slice(&b);
    }

    pub(crate) fn put_u32(&mut self, at: u32, v: u32) {
        let b = self.endian.u32_bytes(v);
        self.image[at as usize..at as usize + 4].copy_from_slice(&b);
    }

    fn put_u64(&mut self, at: u32, v: u64) {
        let b = self.endian.u64_bytes(v);
        self.image[at as usize..at as usize + 8].copy_from_slice(&b);
    }

    /// A fresh block header (the rest of the block cleared).
    fn block_header(&mut self, block: u32, generation: u32) {
        self.image[block as usize..(block + BLOCK_SIZE) as usize].fill(0);
        self.put_u32(block, refs::permanent(layout::FW_BLOCK_HEADER, TAG));
        self.put_u32(block + 4, generation);
        self.put_u16(block + 8, BLOCK_HEADER_SIZE as u16);
    }

    /// Gives `key` a new current block: the next one in LRU order that no
    /// other thread is writing.
    fn take_block(&mut self, key: ThreadKey) -> Result<(), WriteError> {
        for _ in 0..self.data_blocks {
            let index = self.next_block;
            let generation = self.generation;
            self.next_block += 1;
            if self.next_block == self.data_blocks {
                self.next_block = 0;
                self.generation += 1;
            }
            let block = DATA_START + index * BLOCK_SIZE;
            if self
                .threads
                .iter()
                .any(|(k, t)| *k != key && t.block == block)
            {
                continue;
            }
            if generation > 1 {
                self.stats.blocks_reused += 1;
            }
            self.stats.blocks += 1;
            self.block_header(block, generation);
            self.threads.insert(
                key,
                Thread {
                    block,
                    generation,
                    used: BLOCK_HEADER_SIZE,
                    sched: None,
                },
            );
            let used_blocks = if generation > 1 {
                self.data_blocks
            } else {
                index + 1
            };
            self.blocks_valid = self.blocks_valid.max(DATA_START / BLOCK_SIZE + used_blocks);
            use layout::header as h;
            self.put_u32(h::BLOCKS_VALID, self.blocks_valid);
            self.put_u32(h::NEXT_ALLOC_GEN, self.generation);
            self.put_u32(h::NEXT_ALLOC_BLOCK, self.next_block);
            return Ok(());
        }
        Err(WriteError::NoFreeBlock)
    }

    /// `size` bytes (8-aligned) in the thread's block, taking a new block
    /// when they do not fit. Returns (offset, generation, new block?).
    fn data_alloc(&mut self, key: ThreadKey, size: u32) -> Result<(u32, u32, bool), WriteError> {
        let size = round8(size);
        if size > BLOCK_SIZE - BLOCK_HEADER_SIZE {
            return Err(WriteError::RecordTooLarge(size));
        }
        let fits = self
            .threads
            .get(&key)
            .is_some_and(|t| t.used + size <= BLOCK_SIZE);
        if !fits {
            self.take_block(key)?;
        }
        let t = self.threads.get_mut(&key).ok_or(WriteError::NoFreeBlock)?;
        let at = t.block + t.used;
        t.used += size;
        let (block, used, generation) = (t.block, t.used, t.generation);
        self.put_u16(block + 8, used as u16);
        Ok((at, generation, !fits))
    }

    /// Writes one event of `desc` (registered under `probe_id`) for the
    /// thread `key` at `time` ns. The probe's type record is written on its
    /// first event.
    pub fn event(
        &mut self,
        probe_id: u64,
        desc: &ProbeDesc,
        key: ThreadKey,
        time: i64,
        args: &[ArgValue],
    ) -> Result<(), WriteError> {
        if !self.probes.contains_key(&probe_id) {
            desc.validate()?;
            for r in &desc.records {
                self.record_type(r)?;
            }
            let cell = self.write_probe_type(desc)?;
            let arg_types = desc.tnf_types();
            let types = ["tnf_probe_event", "tnf_time_delta"]
                .into_iter()
                .chain(arg_types.iter().copied());
            let event_size = round8(struct_size(types));
            let mut slots = Vec::with_capacity(desc.args.len());
            let mut offset = 8u32;
            for ty in &arg_types {
                let (size, align) = crate::types::slot_layout(ty);
                offset = offset.next_multiple_of(align);
                slots.push((offset, size));
                offset += size;
            }
            self.probes.insert(
                probe_id,
                ProbeLayout {
                    cell,
                    event_size,
                    slots,
                },
            );
        }
        let (cell, event_size) = match self.probes.get(&probe_id) {
            Some(l) if l.slots.len() == desc.args.len() => (l.cell, l.event_size),
            // The same probe id with another argument list.
            _ => {
                return Err(WriteError::ArgMismatch {
                    probe: desc.name.clone(),
                    index: desc.args.len(),
                    expected: "argument the probe's first event had",
                });
            }
        };
        // String and record arguments first: each a record of its own.
        let mut strings = Vec::new();
        for (i, (ty, _)) in desc.args.iter().enumerate() {
            let mismatch = |expected| WriteError::ArgMismatch {
                probe: desc.name.clone(),
                index: i,
                expected,
            };
            match (ty, args.get(i)) {
                (ArgType::String, Some(ArgValue::Str(s))) => {
                    strings.push(self.data_string(key, s)?);
                }
                (ArgType::String, _) => return Err(mismatch("string")),
                (ArgType::Record, Some(ArgValue::Record(values))) => {
                    let rt = desc.record_of(i).ok_or_else(|| mismatch("record"))?;
                    strings.push(self.data_record(key, rt, values, &desc.name, i)?);
                }
                (ArgType::Record, _) => return Err(mismatch("record")),
                _ => {}
            }
        }
        // Event and its forwarding cell; a schedule record first if needed.
        let need = event_size + 8;
        let room = self
            .threads
            .get(&key)
            .map(|t| BLOCK_SIZE - t.used)
            .unwrap_or(0);
        let sched_ok = |t: &Thread| {
            t.sched
                .is_some_and(|(_, base)| time >= base && time - base <= i64::from(u32::MAX))
        };
        let has_sched = self.threads.get(&key).is_some_and(sched_ok);
        if room < need || (!has_sched && room < need + 24) {
            self.take_block(key)?;
        }
        if !self.threads.get(&key).is_some_and(sched_ok) {
            let (at, _, _) = self.data_alloc(key, 24)?;
            self.put_u32(at, self.sched_tag);
            self.put_u32(at + 4, key.2);
            self.put_u32(at + 8, key.1);
            self.put_u32(at + 12, key.0);
            self.put_u64(at + 16, time as u64);
            if let Some(t) = self.threads.get_mut(&key) {
                t.sched = Some((at, time));
            }
        }
        let (at, generation, _) = self.data_alloc(key, need)?;
        let (sched_at, base) = self
            .threads
            .get(&key)
            .and_then(|t| t.sched)
            .ok_or(WriteError::NoFreeBlock)?;
        let fw = at + event_size;
        let tag16 = (cell & !3) | PAIR;
        let ref16 = (fw - at) | PAIR;
        self.put_u32(at, (tag16 << 16) | ref16);
        debug_assert_eq!(refs::ref_type(tag16 << 16 | ref16), refs::RefType::Pair);
        self.put_u32(at + 4, (time - base) as u32);
        let sched_ref =
            refs::reclaimable(fw, sched_at, 0, self.log, FULL).ok_or(WriteError::NoFreeBlock)?;
        self.put_u32(fw, sched_ref);
        let mut strings = strings.into_iter();
        for (i, (ty, _)) in desc.args.iter().enumerate() {
            let (offset, size) = self
                .probes
                .get(&probe_id)
                .and_then(|l| l.slots.get(i).copied())
                .unwrap_or((8, 4));
            let slot = at + offset;
            let mismatch = || WriteError::ArgMismatch {
                probe: desc.name.clone(),
                index: i,
                expected: ty.c_name(),
            };
            let value = args.get(i).ok_or_else(mismatch)?;
            match ty {
                ArgType::String | ArgType::Record => {
                    let (target, tgen) = strings.next().ok_or_else(mismatch)?;
                    let gen_delta = tgen.wrapping_sub(generation) as i32;
                    let r = refs::reclaimable(slot, target, gen_delta, self.log, FULL).unwrap_or(0);
                    self.put_u32(slot, r);
                }
                _ => {
                    let bits = scalar_bits(*ty, value).ok_or_else(mismatch)?;
                    if size == 8 {
                        self.put_u64(slot, bits);
                    } else {
                        self.put_u32(slot, bits as u32);
                    }
                }
            }
        }
        self.stats.events += 1;
        Ok(())
    }
}

impl TnfWriter {
    /// A string record in the thread's data: (offset, generation).
    fn data_string(&mut self, key: ThreadKey, s: &[u8]) -> Result<(u32, u32), WriteError> {
        let s = &s[..s.len().min(layout::STRING_LIMIT)];
        let self_size = 8 + s.len() as u32 + 1;
        let (at, generation, _) = self.data_alloc(key, self_size)?;
        self.put_u32(at, self.string_tag);
        self.put_u32(at + 4, self_size);
        self.image[(at + 8) as usize..(at + 8) as usize + s.len()].copy_from_slice(s);
        Ok((at, generation))
    }

    /// Writes record type `r` into the tag area once; a second type of the
    /// same name must be the same type.
    fn record_type(&mut self, r: &RecordType) -> Result<(), WriteError> {
        match self.records.get(&r.name) {
            Some(known) if known == r => return Ok(()),
            Some(_) => {
                return Err(ProbeError::BadRecord(format!(
                    "{} is declared twice with different members",
                    r.name
                ))
                .into());
            }
            None => {}
        }
        if self.types.contains_key(&r.name) {
            return Err(ProbeError::BadRecord(format!("{} is a built-in type", r.name)).into());
        }
        self.write_record_type(r)?;
        self.records.insert(r.name.clone(), r.clone());
        Ok(())
    }

    /// A user record (its string members first) in the thread's data:
    /// (offset, generation).
    fn data_record(
        &mut self,
        key: ThreadKey,
        rt: &RecordType,
        values: &[ArgValue],
        probe: &str,
        index: usize,
    ) -> Result<(u32, u32), WriteError> {
        let mismatch = |expected| WriteError::ArgMismatch {
            probe: probe.to_string(),
            index,
            expected,
        };
        if values.len() != rt.members.len() {
            return Err(mismatch("record of its type's members"));
        }
        let mut strings = Vec::new();
        for ((ty, _), v) in rt.members.iter().zip(values) {
            match (ty, v) {
                (ArgType::String, ArgValue::Str(s)) => strings.push(self.data_string(key, s)?),
                (ArgType::String, _) => return Err(mismatch("string member")),
                _ => {}
            }
        }
        let types: Vec<&str> = std::iter::once("tnf_tag")
            .chain(rt.members.iter().map(|(t, _)| t.tnf_type()))
            .collect();
        let (at, generation, _) = self.data_alloc(key, struct_size(types.iter().copied()))?;
        self.put_u32(at, self.tag_of(&rt.name)?);
        let mut strings = strings.into_iter();
        let mut offset = 4u32;
        for ((ty, _), v) in rt.members.iter().zip(values) {
            let (size, align) = crate::types::slot_layout(ty.tnf_type());
            offset = offset.next_multiple_of(align);
            let slot = at + offset;
            offset += size;
            if *ty == ArgType::String {
                let (target, tgen) = strings.next().ok_or(mismatch("string member"))?;
                let gen_delta = tgen.wrapping_sub(generation) as i32;
                let r = refs::reclaimable(slot, target, gen_delta, self.log, FULL).unwrap_or(0);
                self.put_u32(slot, r);
                continue;
            }
            let bits = scalar_bits(*ty, v).ok_or(mismatch("number member"))?;
            if size == 8 {
                self.put_u64(slot, bits);
            } else {
                self.put_u32(slot, bits as u32);
            }
        }
        Ok((at, generation))
    }
}

/// The bits a scalar slot holds; numbers convert between each other as C
/// would, a string is not a number.
fn scalar_bits(ty: ArgType, value: &ArgValue) -> Option<u64> {
    let (i, f) = match value {
        ArgValue::Int(v) => (*v as u64, *v as f64),
        ArgValue::UInt(v) | ArgValue::Opaque(v) => (*v, *v as f64),
        ArgValue::Float(v) => (*v as i64 as u64, *v),
        ArgValue::Str(_) | ArgValue::Record(_) => return None,
    };
    Some(match ty {
        ArgType::Float => u64::from((f as f32).to_bits()),
        ArgType::Double => f.to_bits(),
        _ => i,
    })
}
