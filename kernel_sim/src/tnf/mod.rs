//! TNF probes in guest programs: how an OS/2 module carries them, how the
//! kernel finds them, and the runtime behind the TNFPROBE system DLL.
//!
//! # How a module carries probes
//!
//! A probe is a static **descriptor** in the module's data and a **site**:
//! one `call` to the TNFPROBE system DLL (`TNFPROBE.1 TNF_PROBE`, near
//! `_System`, from 32-bit code; `TNFPROBE.2 TNF_PROBE16`, far, from 16-bit
//! code) with nothing pushed. The DLL knows which probe fired from the
//! return address, which the descriptor names (`site`), and reads the
//! argument values where the descriptor says they are (a register, a
//! frame slot `[EBP+disp]`, a data address, or a constant). So a site costs
//! the guest one call whatever its arguments, and a disabled probe returns
//! at once: the host call is a table lookup and no guest instruction runs
//! in the DLL (the return is made by the host, not by a `ret`).
//!
//! The descriptor keeps TNF_PROBE_n's model (reference §1.1): name, keys,
//! detail (with `sunw%debug` and vendor attributes), file, line, a debug
//! flag (the `_DEBUG` variants) and up to five typed, named arguments.
//! Layout (little-endian; "ptr" is a flat address in an LX module and a
//! 16:16 far pointer in an NE module, 4 bytes either way):
//!
//! ```text
//! +0  u32 magic 'TNFD' (0x44464E54)
//! +4  ptr site: the address right after the site's call instruction
//! +8  ptr name, +12 ptr keys, +16 ptr detail, +20 ptr file (ASCIIZ, <= 255)
//! +24 u32 line
//! +28 u8 nargs (0..=5), u8 flags (bit 0: debug probe), u16 0
//! +32 five arguments of 12 bytes:
//!     u8 type (tnf::ArgType code: 0 tnf_int .. 9 tnf_opaque)
//!     u8 where: 1 register, 2 frame [EBP/BP+disp] (SS), 3 data [disp] (DS),
//!               4 the constant disp
//!     u8 register (0..7 = EAX ECX EDX EBX ESP EBP ESI EDI), u8 0
//!     i32 disp
//!     ptr argument name
//! ```
//!
//! Flags bit 1 says five more ptrs follow at +92, one per argument: the
//! record type of an argument of type 10 (a user record,
//! TNF_DECLARE_RECORD), 0 for the others. The argument's location holds a
//! pointer to the guest's structure; its type is described by
//!
//! ```text
//! +0  u32 magic 'TNFR' (0x52464E54)
//! +4  ptr type name (the tnf_type, e.g. node_tnf)
//! +8  u8 members (1..=5), u8 0, u16 0
//! +12 five members of 12 bytes:
//!     u8 type (0..9: the predefined types; records do not nest), u8 0, u16 0
//!     u32 the member's byte offset in the structure
//!     ptr member name
//! ```
//!
//! In a 16-bit module `tnf_int`/`tnf_uint` are 16-bit (C's `int` on OS/2
//! 1.x), `tnf_long`, `tnf_float`, pointers and strings 32-bit; a string
//! argument is a pointer to ASCIIZ text.
//!
//! # How the kernel finds them, and why
//!
//! Each module exports, by name, `TNF_PROBE_LIST`: `u32 'TNFL'`, `u32
//! count`, then `count` ptrs to descriptors. The kernel reads the table of
//! every loaded module ([`crate::Process::tnf_discover`]) before the program
//! runs, so prex can list and enable probes while the target is stopped,
//! as prex does on Solaris (where libtnfctl finds probes through the ELF
//! symbol tables). Registration at DLL initialization was the other choice;
//! it would need guest code to run before prex could see a probe, and the
//! EXE has no initialization routine. A site the tables do not name (a DLL
//! loaded later by DosLoadModule) makes the kernel read the tables of
//! modules it has not read yet; a site still unknown stops the program with
//! an error naming its address. What a probe found that way does is asked
//! of the [`ProbePolicy`] (prex replays its history of enable/trace
//! commands on it, as Solaris prex does for objects dlopen'ed later).
//!
//! os2trace's own probes (`prex -k`: API calls, module loads, thread
//! switches) are in [`system`].
//!
//! # How TNF maps to OS/2's trace concepts
//!
//! - TNF keys are groups, like the major codes of OS/2's system trace
//!   (`TRACE ON name(major)`): one probe may be in several groups, and a
//!   group enables all its probes. TNF has no numbers: a probe's identity
//!   is its name, where OS/2 has (major, minor) codes.
//! - Selection by name and by regular expression (`enable name=/loop/`)
//!   plays the part of OS/2's minor-code lists; `$sets` are saved
//!   selections, re-evaluated at each use.
//! - A probe's typed, named arguments replace the TFF format strings
//!   (`%D %W %F`): the TNF file describes itself, so tnfdump needs no format
//!   file.
//! - TNF's 512-byte blocks reused in LRU order correspond to the circular
//!   STDA; TNF drops whole blocks where STDA overwrites record by record.
//! - Probes are compiled in (like a TRCUST static trace point in the
//!   module), but cost one call while disabled, where OS/2's dynamic trace
//!   patches INT3 into code that has no probe. Both can be active in the
//!   same run: they record into separate files.

mod descriptor;
pub mod system;

use std::collections::HashMap;

pub use descriptor::{
    ArgLocation, DESC_MAGIC, DESC_SIZE, GuestProbe, LIST_MAGIC, MAX_PROBES, PROBE_LIST_EXPORT,
    TnfError,
};
use emu::{Gpr, SegReg};
pub use system::{
    KernelControl, MODULE_LOAD, SYSCALL_END, SYSCALL_START, SYSTEM_OBJECT, SYSTEM_PROBES,
    THREAD_SWITCH, system_probes,
};
use tnf::{ArgType, ArgValue, TnfWriter};

use crate::process::Process;

/// What each probe does when it fires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProbeAction {
    /// Write a trace record (enabled and traced).
    pub record: bool,
    /// Call &debug (enabled and connected).
    pub debug: bool,
}

/// Decides what a newly found probe does (prex replays its history on
/// probes that appear later, e.g. in a DLL loaded by DosLoadModule).
pub type ProbePolicy = Box<dyn FnMut(&GuestProbe) -> ProbeAction>;

/// The TNF state of a process.
#[derive(Default)]
pub(crate) struct TnfRuntime {
    probes: Vec<GuestProbe>,
    actions: Vec<ProbeAction>,
    by_site: HashMap<u32, usize>,
    scanned: usize,
    writer: Option<TnfWriter>,
    /// Events the writer refused (the first error kept).
    dropped: u64,
    first_error: Option<String>,
    /// Probe hits, enabled or not.
    hits: u64,
    /// What new probes do; without one they start disabled.
    policy: Option<ProbePolicy>,
    /// The system probes (`prex -k`).
    pub(crate) system: system::SystemTnf,
}

impl Process {
    /// Reads the probe tables of the modules not read yet; returns the
    /// index of the first new probe.
    pub fn tnf_discover(&mut self) -> Result<usize, TnfError> {
        let first = self.kernel.tnf.probes.len();
        while self.kernel.tnf.scanned < self.pcb.modules.len() {
            let index = self.kernel.tnf.scanned;
            self.kernel.tnf.scanned += 1;
            for probe in descriptor::read_module(self, index)? {
                if self.kernel.tnf.by_site.contains_key(&probe.site) {
                    return Err(TnfError::new(
                        &probe.object,
                        probe.address,
                        "two probes name the same site",
                    ));
                }
                self.kernel
                    .tnf
                    .by_site
                    .insert(probe.site, self.kernel.tnf.probes.len());
                let action = self
                    .kernel
                    .tnf
                    .policy
                    .as_mut()
                    .map_or_else(ProbeAction::default, |f| f(&probe));
                self.kernel.tnf.probes.push(probe);
                self.kernel.tnf.actions.push(action);
            }
        }
        Ok(first)
    }

    /// Sets what probes found from now on do (prex's history, replayed).
    pub fn tnf_set_policy(&mut self, policy: ProbePolicy) {
        self.kernel.tnf.policy = Some(policy);
    }

    /// The probes found so far.
    pub fn tnf_probes(&self) -> &[GuestProbe] {
        &self.kernel.tnf.probes
    }

    /// Sets what probe `index` does when it fires.
    pub fn tnf_set_action(&mut self, index: usize, action: ProbeAction) {
        if let Some(a) = self.kernel.tnf.actions.get_mut(index) {
            *a = action;
        }
    }

    /// The process ID TNF records (the PIB's), for `trace-<pid>`.
    pub fn tnf_pid(&self) -> u32 {
        u32::from(self.pcb.pid)
    }

    /// Starts recording into `writer`.
    pub fn tnf_start(&mut self, writer: TnfWriter) {
        self.kernel.tnf.writer = Some(writer);
    }

    /// Stops recording and gives the writer back.
    pub fn tnf_finish(&mut self) -> Option<TnfWriter> {
        self.kernel.tnf.writer.take()
    }

    /// Probe hits so far, and events the writer refused (with the first
    /// reason).
    pub fn tnf_counts(&self) -> (u64, u64, Option<&str>) {
        (
            self.kernel.tnf.hits,
            self.kernel.tnf.dropped,
            self.kernel.tnf.first_error.as_deref(),
        )
    }

    /// The emulated time in ns.
    fn tnf_now(&self) -> i64 {
        let cycles = u128::from(self.kernel.clock.cycles(self.machine.cycles()));
        (cycles * 1_000_000_000 / u128::from(self.kernel.clock.hz.max(1))) as i64
    }

    /// The (pid, lwpid, tid) events are recorded under: the process's one
    /// thread.
    fn tnf_thread(&self) -> (u32, u32, u32) {
        let tid = self.current_tid();
        (u32::from(self.pcb.pid), tid, tid)
    }

    /// A probe site called TNF_PROBE; `ret` is the linear return address.
    pub(crate) fn tnf_fire(&mut self, ret: u32) -> Result<(), String> {
        self.kernel.tnf.hits += 1;
        let index = match self.kernel.tnf.by_site.get(&ret) {
            Some(i) => *i,
            None => {
                self.tnf_discover().map_err(|e| e.to_string())?;
                *self.kernel.tnf.by_site.get(&ret).ok_or_else(|| {
                    format!("TNF_PROBE called from {ret:#010x}, a site no probe descriptor names")
                })?
            }
        };
        let action = self.kernel.tnf.actions[index];
        if !action.record && !action.debug {
            return Ok(());
        }
        // No clone of the probe on the hot path: argument by argument.
        let (count, bits16) = {
            let p = &self.kernel.tnf.probes[index];
            (p.locations.len(), p.bits16)
        };
        let mut values = Vec::with_capacity(count);
        let mut record = 0;
        for i in 0..count {
            let p = &self.kernel.tnf.probes[index];
            let (ty, loc) = (p.desc.args[i].0, p.locations[i]);
            let value = self.tnf_arg(ty, loc, bits16);
            if ty != ArgType::Record {
                values.push(value);
                continue;
            }
            let ptr = match value {
                ArgValue::UInt(v) => v as u32,
                _ => 0,
            };
            values.push(self.tnf_record(index, record, ptr, bits16));
            record += 1;
        }
        if action.debug {
            let line = tnf::probe::debug_line(&self.kernel.tnf.probes[index].desc, &values);
            let _ = writeln!(self.host.stderr, "{line}");
        }
        if action.record {
            let now = self.tnf_now();
            let thread = self.tnf_thread();
            let tnf = &mut self.kernel.tnf;
            if let Some(w) = tnf.writer.as_mut()
                && let Err(e) = w.event(index as u64, &tnf.probes[index].desc, thread, now, &values)
            {
                tnf.dropped += 1;
                tnf.first_error.get_or_insert_with(|| e.to_string());
            }
        }
        Ok(())
    }

    /// One argument's value, read where its location says; unreadable
    /// memory reads as 0 (or an empty string).
    fn tnf_arg(&mut self, ty: ArgType, loc: ArgLocation, bits16: bool) -> ArgValue {
        let size = match ty {
            ArgType::Int | ArgType::UInt if bits16 => 2,
            ArgType::LongLong | ArgType::ULongLong | ArgType::Double => 8,
            _ => 4,
        };
        let raw = self.tnf_raw(loc, size, bits16);
        self.tnf_decode(ty, raw, size, bits16)
    }

    /// A value of type `ty` from its `size` raw bytes; a string's are a
    /// pointer to its text, a record's a pointer to the structure (given
    /// back as `UInt` for [`Self::tnf_record`]).
    fn tnf_decode(&mut self, ty: ArgType, raw: u64, size: u32, bits16: bool) -> ArgValue {
        let signed = |bits: u64| match size {
            2 => i64::from(bits as u16 as i16),
            4 => i64::from(bits as u32 as i32),
            _ => bits as i64,
        };
        match ty {
            ArgType::Int | ArgType::Long | ArgType::LongLong => ArgValue::Int(signed(raw)),
            ArgType::UInt | ArgType::ULong | ArgType::ULongLong | ArgType::Record => {
                ArgValue::UInt(raw)
            }
            ArgType::Float => ArgValue::Float(f64::from(f32::from_bits(raw as u32))),
            ArgType::Double => ArgValue::Float(f64::from_bits(raw)),
            ArgType::Opaque => ArgValue::Opaque(raw),
            ArgType::String => ArgValue::Str(self.tnf_text(raw as u32, bits16)),
        }
    }

    /// A string argument's text: up to its NUL, cut at 255 characters as
    /// the TNF writer cuts it (TNF_STRING_LIMIT), and at the end of its
    /// segment in a 16-bit module. A NULL or unreadable pointer gives an
    /// empty string; memory that ends before the NUL ends the text.
    fn tnf_text(&mut self, ptr: u32, bits16: bool) -> Vec<u8> {
        let Some(start) = self.ptr(ptr, bits16, 1) else {
            return Vec::new();
        };
        let mut limit = tnf::layout::STRING_LIMIT as u32;
        if bits16 {
            let Some(d) = self.kernel.desc.get((ptr >> 16) as u16) else {
                return Vec::new();
            };
            limit = limit.min(d.limit().saturating_sub(ptr & 0xFFFF).saturating_add(1));
        }
        let mut out = Vec::new();
        for i in 0..limit {
            let mut b = [0u8];
            if self
                .machine
                .read_linear(start.wrapping_add(i), &mut b)
                .is_err()
                || b[0] == 0
            {
                break;
            }
            out.push(b[0]);
        }
        out
    }

    /// Record `record` of probe `index`, its structure at the guest
    /// pointer `ptr` (flat, or 16:16 in a 16-bit module); a member that
    /// cannot be read is 0 (an empty string).
    fn tnf_record(&mut self, index: usize, record: usize, ptr: u32, bits16: bool) -> ArgValue {
        let (members, offsets) = {
            let p = &self.kernel.tnf.probes[index];
            match (p.desc.records.get(record), p.member_offsets.get(record)) {
                (Some(r), Some(o)) => (r.members.clone(), o.clone()),
                _ => return ArgValue::Record(Vec::new()),
            }
        };
        let mut values = Vec::with_capacity(members.len());
        for ((ty, _), offset) in members.iter().zip(offsets) {
            // The member as a Data location: a pointer plus the offset
            // (a 16:16 pointer's offset part; it does not carry).
            let linear = if bits16 {
                self.selector_to_linear((ptr >> 16) as u16, (ptr & 0xFFFF) + offset, 1)
            } else {
                Some(ptr.wrapping_add(offset))
            };
            let value = match linear {
                Some(at) if ptr != 0 => self.tnf_member(*ty, at, bits16),
                _ => self.tnf_arg(*ty, ArgLocation::Constant(0), bits16),
            };
            values.push(value);
        }
        ArgValue::Record(values)
    }

    /// A member of the predefined type `ty` at linear address `at`.
    fn tnf_member(&mut self, ty: ArgType, at: u32, bits16: bool) -> ArgValue {
        let size = match ty {
            ArgType::Int | ArgType::UInt if bits16 => 2,
            ArgType::LongLong | ArgType::ULongLong | ArgType::Double => 8,
            _ => 4,
        };
        let mut b = [0u8; 8];
        if self
            .machine
            .read_linear(at, &mut b[..size as usize])
            .is_err()
        {
            b = [0; 8];
        }
        let raw = u64::from_le_bytes(b);
        self.tnf_decode(ty, raw, size, bits16)
    }

    fn tnf_raw(&mut self, loc: ArgLocation, size: u32, bits16: bool) -> u64 {
        let cpu = self.machine.cpu();
        let mask = |v: u64| {
            if size >= 8 {
                v
            } else {
                v & ((1u64 << (size * 8)) - 1)
            }
        };
        let linear = match loc {
            ArgLocation::Constant(v) => return mask(v as i64 as u64),
            ArgLocation::Register(r) => return mask(u64::from(cpu.gpr[usize::from(r & 7)])),
            ArgLocation::Frame(disp) => {
                let ss = cpu.seg[SegReg::Ss];
                let bp = cpu.gpr[Gpr::Ebp];
                let off = if bits16 {
                    (bp.wrapping_add(disp as u32)) & 0xFFFF
                } else {
                    bp.wrapping_add(disp as u32)
                };
                ss.base.wrapping_add(off)
            }
            ArgLocation::Data(disp) => cpu.seg[SegReg::Ds].base.wrapping_add(disp as u32),
        };
        let mut b = [0u8; 8];
        if self
            .machine
            .read_linear(linear, &mut b[..size as usize])
            .is_err()
        {
            return 0;
        }
        u64::from_le_bytes(b)
    }
}

use std::io::Write as _;
