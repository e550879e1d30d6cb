//! The system's own trace table, always on, and CPTRAP, VM/SP's trace table
//! recording facility, as the kernel owns them.
//!
//! Every process keeps a wrapping [`cptrap::TraceTable`] of its kernel's
//! events, whether anyone records them or not, as VM/SP's CP did. The
//! producers, and what each entry holds (the layout is in `cptrap::entry`):
//!
//! | typenum | produced by | where |
//! |---|---|---|
//! | 02 API call | every system DLL call: module, ordinal, return code, the caller's return address | `run.rs`, after the call |
//! | 03 exception | every guest exception the trace runtime did not take: vector, EIP, error code, CR2, CS | `run.rs`, before handlers run |
//! | 0B start I/O, 05 I/O done | DosRead and DosWrite (16- and 32-bit): handle, operation, length, buffer; then bytes moved and return code | before and after the call |
//! | 06 allocate, 07 free | DosAllocMem/DosFreeMem, DosAllocSeg/DosFreeSeg: address, size, flags, return code | after the call |
//! | 0A run user | the dispatch of the process's thread when the run starts | the run loop |
//! | 08 enter scheduler | DosSleep (16- and 32-bit): the thread gives up the CPU; reason 1, the milliseconds | after the call |
//! | 12 lock spin | semaphore waits: DosSemWait/DosSemRequest (16-bit), DosWaitEventSem/DosRequestMutexSem (32-bit): the semaphore, the timeout, the return code | after the call |
//!
//! Hardware interrupts (01) and queue drops (09) have no producer: the
//! emulated OS/2 has no device interrupts, and with one thread per process
//! no wait takes a thread off the run queue. Port I/O is not emulated for
//! ring 3 (an IN or OUT faults, which is a 03 entry).
//!
//! What an always-on table costs when nobody records: one 32-byte store
//! into a ring and two counters per event (API call, exception). The
//! `kernel_sim` bench's API call rate measures it.
//!
//! CPTRAP ([`CptrapConfig`], `os2trace run --cptrap FILE`) copies the
//! selected entries and the interface records into a file of 4 KB blocks
//! through the recorder's bounded transfer buffer. The spool takes blocks
//! at a fixed rate of the emulated clock ([`CptrapConfig::blocks_per_second`]),
//! so a guest that makes records faster than that loses some, counted and
//! marked in the file, as on VM/SP. The file is kept in memory up to
//! [`CptrapConfig::max_bytes`] and handed over at the end
//! ([`crate::Process::cptrap_finish`]), so a failed run leaves no
//! half-written file.
//!
//! The two interfaces:
//! - the virtual machine interface (X'3E'): the guest calls `CPTRAP.1`
//!   (`CPTRAPVM`, 32-bit, near) with EBX pointing at the seed's 8-byte
//!   parameter list (`LLLL CODE DATAADDR`, little endian, DATAADDR flat), or
//!   `CPTRAP.2` (`CPTRAPVM16`, 16-bit, far) with ES:BX pointing at it
//!   (DATAADDR a 16:16 far pointer). Every register and flag is preserved,
//!   as MONITOR CALL preserved the condition code; when CPTRAP is off the
//!   call returns at once.
//! - the CP interface (X'3F'): a zap ([`Zap`], `run --cptrap-zap`) at a
//!   guest address. It uses the tracepoint machinery of the emulator: an
//!   INT3 the emulator keeps, so the original instruction runs out of line
//!   after the record is taken. The data is LEN bytes at REG+DISP (DS-based
//!   in 16-bit code, flat in 32-bit code), cut to 264.

use std::collections::BTreeMap;

use cptrap::{
    Entry, Interface, InterfaceRecord, IoOp, Recorder, RecorderStats, Selection, TraceTable,
    TypeNum,
};
use emu::Gpr;

mod hooks;

/// Slots of the always-on table.
pub const TABLE_ENTRIES: usize = 4096;

/// How CPTRAP records a run.
#[derive(Clone, Debug)]
pub struct CptrapConfig {
    /// What is recorded.
    pub selection: Selection,
    /// Blocks of the transfer buffer between the recorder and the spool.
    pub transfer_blocks: usize,
    /// How many 4 KB blocks the spool takes per emulated second.
    pub blocks_per_second: u64,
    /// The largest file kept (bytes); records past it are lost and counted.
    pub max_bytes: usize,
    /// CP interface zaps.
    pub zaps: Vec<Zap>,
}

impl CptrapConfig {
    /// Everything selected, a 16-block transfer buffer, a spool of 1,000
    /// blocks (4 MB) per emulated second, at most 64 MB, no zaps.
    pub fn new(selection: Selection) -> CptrapConfig {
        CptrapConfig {
            selection,
            transfer_blocks: cptrap::recorder::DEFAULT_TRANSFER_BLOCKS,
            blocks_per_second: 1000,
            max_bytes: 64 << 20,
            zaps: Vec::new(),
        }
    }
}

/// A CP interface zap: where, the code, and the data it passes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Zap {
    /// Module name (as loaded, upper case).
    pub module: String,
    /// Object (segment) number, from 1.
    pub object: u32,
    /// Offset in the object.
    pub offset: u32,
    /// Individualizing code.
    pub code: u16,
    /// The register the data address is relative to.
    pub reg: Gpr,
    /// Displacement from the register.
    pub disp: i32,
    /// Bytes of data (cut to 264 when recorded).
    pub len: u16,
}

impl Zap {
    /// Parses `MODULE:OBJ:OFFSET,CODE,REG+DISP,LEN` (numbers decimal or
    /// 0x hex, DISP may be negative: `EBP-8`).
    ///
    /// # Errors
    /// A message naming the part that does not parse.
    pub fn parse(spec: &str) -> Result<Zap, String> {
        let bad = |what: &str| {
            format!("--cptrap-zap {spec:?}: {what} (want MODULE:OBJ:OFFSET,CODE,REG+DISP,LEN)")
        };
        let parts: Vec<&str> = spec.split(',').collect();
        let [place, code, address, len] = parts.as_slice() else {
            return Err(bad("four comma-separated parts"));
        };
        let num = |s: &str, what: &str| -> Result<u64, String> {
            let s = s.trim();
            let v = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                Some(h) => u64::from_str_radix(h, 16),
                None => s.parse(),
            };
            v.map_err(|_| bad(&format!("{what} {s:?} is not a number")))
        };
        let mut place = place.split(':');
        let (Some(module), Some(object), Some(offset), None) =
            (place.next(), place.next(), place.next(), place.next())
        else {
            return Err(bad("the place is MODULE:OBJ:OFFSET"));
        };
        let (reg_name, sign, disp) = match address.find(['+', '-']) {
            Some(i) => (
                &address[..i],
                &address[i..i + 1],
                num(&address[i + 1..], "displacement")?,
            ),
            None => (*address, "+", 0),
        };
        let reg = match reg_name.trim().to_ascii_uppercase().as_str() {
            "EAX" | "AX" => Gpr::Eax,
            "ECX" | "CX" => Gpr::Ecx,
            "EDX" | "DX" => Gpr::Edx,
            "EBX" | "BX" => Gpr::Ebx,
            "ESP" | "SP" => Gpr::Esp,
            "EBP" | "BP" => Gpr::Ebp,
            "ESI" | "SI" => Gpr::Esi,
            "EDI" | "DI" => Gpr::Edi,
            other => return Err(bad(&format!("{other:?} is not a general register"))),
        };
        let disp = i32::try_from(disp).map_err(|_| bad("displacement too large"))?;
        Ok(Zap {
            module: module.trim().to_ascii_uppercase(),
            object: u32::try_from(num(object, "object")?).map_err(|_| bad("object too large"))?,
            offset: u32::try_from(num(offset, "offset")?).map_err(|_| bad("offset too large"))?,
            code: u16::try_from(num(code, "code")?).map_err(|_| bad("code over 65535"))?,
            reg,
            disp: if sign == "-" { -disp } else { disp },
            len: u16::try_from(num(len, "length")?).map_err(|_| bad("length over 65535"))?,
        })
    }
}

/// A CPTRAP recording in progress.
#[derive(Debug)]
struct Cptrap {
    recorder: Recorder,
    file: Vec<u8>,
    max_bytes: usize,
    blocks_per_second: u64,
    /// Emulated cycles at the last spool, and the clock rate.
    last_spool: u64,
    /// Blocks dropped because the file reached `max_bytes`.
    truncated_blocks: u64,
}

/// The trace table and, when it runs, CPTRAP.
#[derive(Debug)]
pub struct SystemTable {
    table: TraceTable,
    cptrap: Option<Cptrap>,
    /// Zaps by linear address.
    zaps: BTreeMap<u32, Zap>,
    /// Whether the run's dispatch entry was made.
    pub(crate) dispatched: bool,
}

impl Default for SystemTable {
    fn default() -> Self {
        SystemTable {
            table: TraceTable::new(TABLE_ENTRIES),
            cptrap: None,
            zaps: BTreeMap::new(),
            dispatched: false,
        }
    }
}

/// What CPTRAP wrote.
#[derive(Debug)]
pub struct CptrapResult {
    /// The CPTRAP file.
    pub file: Vec<u8>,
    /// The recorder's counts.
    pub stats: RecorderStats,
    /// Blocks dropped at the file size cap.
    pub truncated_blocks: u64,
}

impl SystemTable {
    /// The always-on table.
    pub fn table(&self) -> &TraceTable {
        &self.table
    }

    /// Starts CPTRAP (zaps are placed by the caller, which knows the
    /// modules).
    pub(crate) fn start(&mut self, cfg: &CptrapConfig, now_cycles: u64) {
        self.cptrap = Some(Cptrap {
            recorder: Recorder::new(cfg.selection.clone(), cfg.transfer_blocks),
            file: Vec::new(),
            max_bytes: cfg.max_bytes,
            blocks_per_second: cfg.blocks_per_second.max(1),
            last_spool: now_cycles,
            truncated_blocks: 0,
        });
    }

    /// Whether CPTRAP runs.
    pub fn recording(&self) -> bool {
        self.cptrap.is_some()
    }

    pub(crate) fn add_zap(&mut self, linear: u32, zap: Zap) {
        self.zaps.insert(linear, zap);
    }

    pub(crate) fn zap_at(&self, linear: u32) -> Option<&Zap> {
        self.zaps.get(&linear)
    }

    /// Records an event in the table, and in the file if selected.
    #[inline]
    pub(crate) fn record(&mut self, entry: &Entry, now: u64, hz: u64) {
        self.table.record(entry);
        if let Some(c) = self.cptrap.as_mut()
            && c.recorder.wants(entry.typenum())
        {
            c.recorder.record_entry(entry);
            c.spool(now, hz);
        }
    }

    /// Whether an interface record would be kept (before reading its data).
    pub(crate) fn wants_interface(&self, typenum: TypeNum, code: u16, pid: u16) -> bool {
        self.cptrap
            .as_ref()
            .is_some_and(|c| c.recorder.selection().wants_interface(typenum, code, pid))
    }

    /// Records interface data.
    pub(crate) fn record_interface(&mut self, data: InterfaceRecord, pid: u16, now: u64, hz: u64) {
        if let Some(c) = self.cptrap.as_mut() {
            c.recorder.record_interface(data, pid, 1, now);
            c.spool(now, hz);
        }
    }

    /// Ends CPTRAP: the last blocks go to the file.
    pub(crate) fn finish(&mut self) -> Option<CptrapResult> {
        let mut c = self.cptrap.take()?;
        let mut tail = Vec::new();
        let stats = c.recorder.finish(&mut tail).ok()?;
        let room = c.max_bytes.saturating_sub(c.file.len());
        let keep = room - room % cptrap::file::BLOCK_SIZE;
        if tail.len() > keep {
            c.truncated_blocks += ((tail.len() - keep) / cptrap::file::BLOCK_SIZE) as u64;
            tail.truncate(keep);
        }
        c.file.extend_from_slice(&tail);
        Some(CptrapResult {
            file: c.file,
            stats,
            truncated_blocks: c.truncated_blocks,
        })
    }
}

impl Cptrap {
    /// The spool takes the blocks the emulated time since the last spool
    /// allows.
    fn spool(&mut self, now: u64, hz: u64) {
        let elapsed = now.saturating_sub(self.last_spool);
        let blocks = elapsed.saturating_mul(self.blocks_per_second) / hz.max(1);
        if blocks == 0 {
            return;
        }
        // Advance by the time those blocks took, so fractions carry over.
        self.last_spool += blocks.saturating_mul(hz) / self.blocks_per_second;
        let mut sink = Vec::new();
        if self.recorder.spool(&mut sink, blocks as usize).is_err() {
            return;
        }
        let room = self.max_bytes.saturating_sub(self.file.len());
        if sink.len() > room {
            self.truncated_blocks += ((sink.len() - room) / cptrap::file::BLOCK_SIZE) as u64;
            sink.truncate(room - room % cptrap::file::BLOCK_SIZE);
        }
        self.file.extend_from_slice(&sink);
    }
}

/// The reason of a scheduler entry (08) made by DosSleep.
pub const SCHEDULE_SLEEP: u32 = 1;

/// The table entries an API call makes before it runs (start I/O).
pub(crate) fn before_call(name: &str, vals: &[u32], far16: bool) -> Option<Entry> {
    let io = match name {
        "DosRead" => IoOp::FileRead,
        "DosWrite" => IoOp::FileWrite,
        _ => return None,
    };
    let mut e = Entry::new(TypeNum::IO_START);
    e.frame.aux = *vals.first()? as u16;
    e.words = [
        io as u32,
        *vals.get(2)?,
        *vals.get(1)?,
        if far16 { 2 } else { 4 },
    ];
    Some(e)
}

/// The table entries an API call makes after it returned `rc`: I/O done,
/// allocate, free. `read_u32` reads a guest pointer argument's target
/// (the bytes moved, the address allocated).
pub(crate) fn after_call(
    name: &str,
    vals: &[u32],
    rc: u32,
    mut read_target: impl FnMut(u32, u32) -> Option<u32>,
) -> Option<Entry> {
    let arg = |i: usize| vals.get(i).copied().unwrap_or(0);
    match name {
        "DosRead" | "DosWrite" => {
            let io = if name == "DosRead" {
                IoOp::FileRead
            } else {
                IoOp::FileWrite
            };
            let mut e = Entry::new(TypeNum::IO_DONE);
            e.frame.aux = arg(0) as u16;
            let moved = if rc == 0 {
                read_target(arg(3), 4).unwrap_or(0)
            } else {
                0
            };
            e.words = [io as u32, moved, rc, 0];
            Some(e)
        }
        "DosAllocMem" => {
            let mut e = Entry::new(TypeNum::ALLOC);
            let address = if rc == 0 {
                read_target(arg(0), 4).unwrap_or(0)
            } else {
                0
            };
            e.words = [address, arg(1), arg(2), rc];
            Some(e)
        }
        "DosAllocSeg" => {
            let mut e = Entry::new(TypeNum::ALLOC);
            let selector = if rc == 0 {
                read_target(arg(1), 2).unwrap_or(0)
            } else {
                0
            };
            let size = if arg(0) == 0 { 0x10000 } else { arg(0) };
            e.words = [selector, size, arg(2), rc];
            Some(e)
        }
        "DosFreeMem" => {
            let mut e = Entry::new(TypeNum::FREE);
            e.words = [arg(0), 0, 0, rc];
            Some(e)
        }
        "DosSleep" => {
            let mut e = Entry::new(TypeNum::SCHEDULE);
            e.words = [SCHEDULE_SLEEP, arg(0), 0, 0];
            Some(e)
        }
        "DosSemWait" | "DosSemRequest" | "DosWaitEventSem" | "DosRequestMutexSem" => {
            let mut e = Entry::new(TypeNum::SEM_WAIT);
            e.words = [arg(0), arg(1), rc, 0];
            Some(e)
        }
        "DosFreeSeg" => {
            let mut e = Entry::new(TypeNum::FREE);
            e.words = [arg(0), 0, 0, rc];
            Some(e)
        }
        _ => None,
    }
}

/// The interface record of a parameter list `LLLL CODE DATAADDR` already
/// read, with the data read by `read` (at most 264 bytes are asked for).
pub(crate) fn interface_record(
    interface: Interface,
    list: [u8; 8],
    read: impl FnOnce(u32, usize) -> Option<Vec<u8>>,
) -> Option<InterfaceRecord> {
    let list = cptrap::ParamList::from_bytes(list);
    let data = read(list.data_address, list.taken_length())?;
    Some(InterfaceRecord::new(interface, list.code, &data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zap_specs_parse_and_bad_ones_say_what() {
        let z = Zap::parse("TPDLL32:1:0x10,7,EBP-8,24").unwrap();
        assert_eq!(
            z,
            Zap {
                module: "TPDLL32".into(),
                object: 1,
                offset: 0x10,
                code: 7,
                reg: Gpr::Ebp,
                disp: -8,
                len: 24
            }
        );
        assert_eq!(Zap::parse("m:2:5,1,esp,4").unwrap().reg, Gpr::Esp);
        assert!(
            Zap::parse("m:1:5,1,EQX+1,4")
                .unwrap_err()
                .contains("general register")
        );
        assert!(
            Zap::parse("m:1,1,EAX,4")
                .unwrap_err()
                .contains("MODULE:OBJ:OFFSET")
        );
        assert!(
            Zap::parse("m:1:5,70000,EAX,4")
                .unwrap_err()
                .contains("code")
        );
        assert!(Zap::parse("m:1:5,1,EAX").unwrap_err().contains("four"));
    }

    #[test]
    fn the_spool_takes_blocks_at_its_rate_and_loses_past_the_buffer() {
        let mut t = SystemTable::default();
        let mut cfg = CptrapConfig::new(Selection::all());
        cfg.transfer_blocks = 1;
        cfg.blocks_per_second = 1;
        t.start(&cfg, 0);
        // 1 Hz clock: no time passes, so the spool takes nothing and the
        // one-block transfer buffer fills, then records are lost.
        for i in 0..1000u32 {
            let e = Entry::api_call("DOSCALLS", 1, i, 0);
            t.record(&e, 0, 1_000_000);
        }
        let r = t.finish().unwrap();
        assert!(r.stats.lost_records > 0, "{:?}", r.stats);
        assert_eq!(t.table().count(TypeNum::API), 1000);
        let file = cptrap::CptrapFile::parse(&r.file).unwrap();
        assert!(
            file.records()
                .iter()
                .any(|rec| rec.record.typenum() == TypeNum::DATA_LOST)
        );
    }
}
