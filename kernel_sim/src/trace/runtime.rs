//! The dynamic trace runtime: tracepoint insertion, TRAP3 dispatch, the
//! trace program run and logging.
//!
//! Applying a DTO reads the byte at each tracepoint's address (object flat
//! base + offset), checks it against `opcode=` and against the opcodes that
//! cannot be traced (PUSHF, INT3, INT n, INTO, BOUND, IMUL with immediate and
//! the F6/F7 group, as TRCUST rejects them), and has the CPU insert an INT3
//! there ([`Emu::insert_tracepoint`]): guest memory holds the INT3 and the
//! CPU keeps the original instruction, decoded once. The runtime then asks
//! the CPU to report #BP and #DB to the host.
//!
//! On a #BP at a known tracepoint (EIP is the INT3's address plus one) the
//! runtime runs the tracepoint's program against a [`GuestView`] of the
//! CPU as it stands (no copy: the program changes no register), logs the
//! record in the system trace and moves EIP back
//! onto the tracepoint ([`Emu::resume_at_tracepoint`]): the CPU runs the
//! original instruction out of line, with the guest's own TF. Nothing is
//! patched back, nothing invalidated. A #BP that is not a tracepoint, and
//! every #DB, are the guest's: [`Next::NotOurs`] tells the kernel to
//! deliver them.
//!
//! Cost: every hit adds to the emulated clock what it cost a 386 in
//! protected mode, approximately: the INT3 trap and the #DB trap with their
//! IRETs ([`TRAP_CYCLES`], [`IRET_CYCLES`], each twice, as when the original
//! instruction was single-stepped), the dispatch to the DTO
//! ([`DISPATCH_CYCLES`]) and the program's own cycles from the opcode
//! table. The INT3 and the original instruction are counted by the CPU. Each hit
//! returns its cost in [`Dispatch::cycles`]; the totals are kept per
//! tracepoint.
//!
//! Programs are compiled to native code when applied ([`rpn_vm::jit`]) and
//! run by the interpreter where they cannot be; both give the same outcome
//! and cycles, so the trace does not depend on which ran
//! ([`DynamicTrace::set_native`] turns the native tier off).

use std::collections::BTreeMap;

use emu::{Machine as Emu, SegReg, vector};
use rpn_vm::jit::Compiled;
use rpn_vm::{Hit, HitOutcome, Interpreter};
use stda::{RecordFlags, RecordIn, Timestamp, TraceBuffer};

use super::dto::{ActiveTracepoint, Dto, DtoSpec};
use super::event::{Dispatch, Next, TrapKind};
use super::guest::GuestView;

/// Cycles of an INT3 or #DB trap through a 386 interrupt gate at the same
/// privilege level.
pub const TRAP_CYCLES: u64 = 59;
/// Cycles of the IRET back to the same privilege level.
pub const IRET_CYCLES: u64 = 22;
/// Cycles to find the tracepoint and switch to its DTO.
pub const DISPATCH_CYCLES: u64 = 120;
/// The INT3 opcode.
pub const INT3: u8 = 0xCC;

/// Why a DTO could not be applied. Nothing is patched when applying fails.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    /// The object number is not one of the module's.
    #[error("minor 0x{minor:04X}: object {object} does not exist")]
    NoSuchObject {
        /// The tracepoint.
        minor: u16,
        /// Its object.
        object: u32,
    },
    /// The address cannot be read (not present, outside memory).
    #[error("minor 0x{minor:04X}: address 0x{linear:08X} cannot be read")]
    Unreadable {
        /// The tracepoint.
        minor: u16,
        /// Its linear address.
        linear: u32,
    },
    /// The byte at the address is not the one the definition expects.
    #[error(
        "minor 0x{minor:04X}: opcode mismatch at 0x{linear:08X}: found 0x{found:02X}, expected 0x{expected:02X}"
    )]
    OpcodeMismatch {
        /// The tracepoint.
        minor: u16,
        /// Its linear address.
        linear: u32,
        /// The byte in memory.
        found: u8,
        /// The byte of `opcode=`.
        expected: u8,
    },
    /// The instruction cannot be traced.
    #[error("minor 0x{minor:04X}: opcode 0x{opcode:02X} at 0x{linear:08X} cannot be traced")]
    Untraceable {
        /// The tracepoint.
        minor: u16,
        /// Its linear address.
        linear: u32,
        /// The byte there.
        opcode: u8,
    },
    /// Another tracepoint is already at the address.
    #[error("minor 0x{minor:04X}: a tracepoint is already at 0x{linear:08X}")]
    DuplicateAddress {
        /// The tracepoint.
        minor: u16,
        /// Its linear address.
        linear: u32,
    },
}

/// The runtime: applied DTOs, the address map, the step in flight.
#[derive(Debug)]
pub struct DynamicTrace {
    dtos: Vec<Dto>,
    /// Per DTO, per tracepoint: the program in native code, if it compiled.
    native: Vec<Vec<Option<Compiled>>>,
    /// Whether DTOs applied from now on get native code.
    native_enabled: bool,
    by_address: BTreeMap<u32, (usize, usize)>,
    interp: Interpreter,
    overhead_cycles: u64,
}

impl Default for DynamicTrace {
    fn default() -> Self {
        DynamicTrace {
            dtos: Vec::new(),
            native: Vec::new(),
            native_enabled: true,
            by_address: BTreeMap::new(),
            interp: Interpreter::new(),
            overhead_cycles: 0,
        }
    }
}

impl DynamicTrace {
    /// A runtime with nothing applied.
    pub fn new() -> DynamicTrace {
        DynamicTrace::default()
    }

    /// Whether DTOs applied from now on run their programs as native code
    /// where the host allows it (the default) or always interpreted. The
    /// records and cycles are the same either way.
    pub fn set_native(&mut self, enabled: bool) {
        self.native_enabled = enabled;
    }

    /// How many of DTO `index`'s tracepoints run as native code.
    pub fn native_tracepoints(&self, index: usize) -> usize {
        self.native
            .get(index)
            .map_or(0, |tps| tps.iter().flatten().count())
    }

    /// The applied DTOs.
    pub fn dtos(&self) -> &[Dto] {
        &self.dtos
    }

    /// Cycles all hits have cost so far (the sum of the
    /// [`Dispatch::cycles`] returned).
    pub fn overhead_cycles(&self) -> u64 {
        self.overhead_cycles
    }

    /// Whether an active tracepoint is at linear address `linear`.
    #[inline]
    pub fn is_tracepoint(&self, linear: u32) -> bool {
        self.by_address.contains_key(&linear)
    }

    /// Inserts the tracepoints of `spec` (DosDynamicTrace / DTRACE APPLY).
    /// Returns the DTO's index.
    ///
    /// # Errors
    /// [`ApplyError`] for the first tracepoint that cannot be inserted; then
    /// nothing is patched.
    pub fn apply(&mut self, emu: &mut Emu, spec: &DtoSpec) -> Result<usize, ApplyError> {
        let mut dto = Dto::new(spec);
        let mut planned: BTreeMap<u32, u16> = BTreeMap::new();
        for tp in &spec.tracepoints {
            let minor = tp.minor;
            let object = tp
                .object
                .checked_sub(1)
                .and_then(|i| spec.objects.get(i as usize))
                .ok_or(ApplyError::NoSuchObject {
                    minor,
                    object: tp.object,
                })?;
            let linear = object.flat_base.wrapping_add(tp.offset);
            if self.by_address.contains_key(&linear) || planned.insert(linear, minor).is_some() {
                return Err(ApplyError::DuplicateAddress { minor, linear });
            }
            let mut byte = [0u8];
            emu.read_linear(linear, &mut byte)
                .map_err(|_| ApplyError::Unreadable { minor, linear })?;
            let found = byte[0];
            if let Some(expected) = tp.opcode.filter(|&e| e != found) {
                return Err(ApplyError::OpcodeMismatch {
                    minor,
                    linear,
                    found,
                    expected,
                });
            }
            if tdf::compile::trace_untraceable(found) {
                return Err(ApplyError::Untraceable {
                    minor,
                    linear,
                    opcode: found,
                });
            }
            dto.tracepoints.push(ActiveTracepoint {
                spec: tp.clone(),
                linear,
                original: found,
                hits: 0,
                logged: 0,
                cycles: 0,
                active: true,
            });
        }
        for tp in &dto.tracepoints {
            // Checked readable above; inserting fails only on a page that
            // is not present, which read_linear would have reported.
            emu.insert_tracepoint(tp.linear)
                .map_err(|_| ApplyError::Unreadable {
                    minor: tp.spec.minor,
                    linear: tp.linear,
                })?;
        }
        let index = self.dtos.len();
        for (i, tp) in dto.tracepoints.iter().enumerate() {
            self.by_address.insert(tp.linear, (index, i));
        }
        let native = if self.native_enabled {
            Compiled::new_many(dto.tracepoints.iter().map(|tp| &tp.spec.program))
        } else {
            dto.tracepoints.iter().map(|_| None).collect()
        };
        self.native.push(native);
        self.dtos.push(dto);
        emu.intercept(vector::BP, true);
        emu.intercept(vector::DB, true);
        Ok(index)
    }

    /// Removes every tracepoint of DTO `index`, restoring the original bytes
    /// (DTRACE REMOVE). Its statistics and variables stay readable.
    pub fn remove(&mut self, emu: &mut Emu, index: usize) {
        let Some(dto) = self.dtos.get_mut(index) else {
            return;
        };
        for tp in dto.tracepoints.iter_mut().filter(|tp| tp.active) {
            remove_one(emu, &mut self.by_address, tp);
        }
    }

    /// Offers a trap of the guest to the runtime. `trace` receives the
    /// record when the tracepoint logs one, stamped `now`; `pid` goes into
    /// it. The answer carries the hit's cost for the kernel's clock.
    pub fn on_trap(
        &mut self,
        emu: &mut Emu,
        kind: TrapKind,
        trace: &mut TraceBuffer,
        now: Timestamp,
        pid: u16,
    ) -> Dispatch {
        match kind {
            TrapKind::Breakpoint => self.on_breakpoint(emu, trace, now, pid),
            TrapKind::SingleStep => self.on_single_step(emu),
        }
    }

    fn on_breakpoint(
        &mut self,
        emu: &mut Emu,
        trace: &mut TraceBuffer,
        now: Timestamp,
        pid: u16,
    ) -> Dispatch {
        let cpu = emu.cpu();
        let linear = cpu
            .sreg(SegReg::Cs)
            .base
            .wrapping_add(cpu.eip.wrapping_sub(1));
        let Some(&(d, t)) = self.by_address.get(&linear) else {
            return Dispatch::NOT_OURS;
        };
        // The trap frame is the CPU itself: the program reads registers
        // where it needs them, and changes none.
        let protected = cpu.protected();
        let dto = &mut self.dtos[d];
        let tp = &mut dto.tracepoints[t];
        let hit = Hit {
            major: tp.spec.major,
            minor: tp.spec.minor,
            logmax: dto.logmax,
        };
        let mut guest = GuestView::new(emu, &dto.objects);
        let result = match &self.native[d][t] {
            Some(native) => native.run(&mut self.interp, &mut guest, &mut dto.vars, hit),
            None => self
                .interp
                .run(&tp.spec.program, &mut guest, &mut dto.vars, hit),
        };
        let cost = 2 * (TRAP_CYCLES + IRET_CYCLES) + DISPATCH_CYCLES + result.cycles;
        tp.hits += 1;
        tp.cycles += cost;
        self.overhead_cycles += cost;
        let mut remove = false;
        let mut sysdump = false;
        match result.outcome {
            HitOutcome::Logged(record) => {
                // DosDynamicTrace records are API records (the handbook's
                // "created externally by use of the DosDynamicTrace API").
                let mut flags = RecordFlags::API | RecordFlags::DYNAMIC;
                if protected {
                    flags |= RecordFlags::PROTECT;
                }
                if record.incomplete {
                    flags |= RecordFlags::INCOMPLETE;
                }
                let rec = RecordIn {
                    major: record.major,
                    minor: record.minor,
                    pid,
                    flags,
                    data: record.data,
                };
                if trace.log(&rec, now).is_ok() {
                    tp.logged += 1;
                }
            }
            HitOutcome::Aborted => {}
            HitOutcome::Removed => remove = true,
            HitOutcome::SysDump => sysdump = true,
            HitOutcome::Error(_) => dto.errors += 1,
        }
        // Back onto the tracepoint, whose original instruction the CPU
        // runs next, out of line: nothing is patched or flushed.
        emu.resume_at_tracepoint();
        if remove {
            remove_one(emu, &mut self.by_address, tp);
            return Dispatch::resume(cost);
        }
        if sysdump {
            return Dispatch {
                next: Next::SysDump { linear },
                cycles: cost,
            };
        }
        Dispatch::resume(cost)
    }

    /// A #DB: never the runtime's since tracepoints no longer single-step
    /// (the guest's own TF steps are delivered as before).
    fn on_single_step(&mut self, _emu: &mut Emu) -> Dispatch {
        Dispatch::NOT_OURS
    }
}

fn remove_one(
    emu: &mut Emu,
    by_address: &mut BTreeMap<u32, (usize, usize)>,
    tp: &mut ActiveTracepoint,
) {
    let _ = emu.remove_tracepoint(tp.linear);
    by_address.remove(&tp.linear);
    tp.active = false;
}
