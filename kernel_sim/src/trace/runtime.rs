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
//! Instances: a DTO is the module's, and each copy of the module a process
//! loads is an instance of it ([`super::Instance`]), with the tracepoints
//! inserted at that copy's addresses ([`DynamicTrace::attach`], which the
//! kernel calls at every load of a traced module and at TRACE ON for the
//! copies already loaded). Tracepoints are found by the physical address
//! of their byte, as the CPU keeps them ([`Emu::insert_tracepoint_phys`]):
//! the same linear address in two processes is two tracepoints, of two
//! instances, and a hit's record carries the PID of the process that hit
//! it. When a process ends, its instances go ([`DynamicTrace::detach`]).
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

use super::dto::{Dto, DtoSpec, Instance, Site, TracepointSpec};
use super::event::{Dispatch, Next, TrapKind};
use super::guest::GuestView;
use super::guest::ObjectMapping;

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

/// Where a tracepoint is: its DTO, its index there, and the copy (an
/// index into [`DynamicTrace::copies`]).
type SiteKey = (usize, usize, usize);

/// The runtime: applied DTOs, the address map, the step in flight.
#[derive(Debug)]
pub struct DynamicTrace {
    dtos: Vec<Dto>,
    /// Per DTO, per tracepoint: the program in native code, if it compiled.
    native: Vec<Vec<Option<Compiled>>>,
    /// Whether DTOs applied from now on get native code.
    native_enabled: bool,
    /// Physical address of each inserted INT3: whose it is.
    by_phys: BTreeMap<u32, SiteKey>,
    /// The objects of every instance ever inserted, in order (what a hit
    /// of that copy shows its program); never shrinks, so a
    /// [`SiteKey`] stays valid.
    copies: Vec<Vec<ObjectMapping>>,
    interp: Interpreter,
    overhead_cycles: u64,
}

impl Default for DynamicTrace {
    fn default() -> Self {
        DynamicTrace {
            dtos: Vec::new(),
            native: Vec::new(),
            native_enabled: true,
            by_phys: BTreeMap::new(),
            copies: Vec::new(),
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

    /// Whether an active tracepoint is at linear address `linear` of the
    /// address space on the CPU (at a trap there: the page is in the TLB).
    #[inline]
    pub fn is_tracepoint(&self, emu: &mut Emu, linear: u32) -> bool {
        !self.by_phys.is_empty()
            && emu
                .code_phys(linear)
                .is_some_and(|p| self.by_phys.contains_key(&p))
    }

    /// Inserts the tracepoints of `spec` (DosDynamicTrace / DTRACE APPLY)
    /// into the address space on the CPU, at `spec.objects`. Returns the
    /// DTO's index. The instance's PID is 0; the kernel uses
    /// [`DynamicTrace::define`] and [`DynamicTrace::attach`] instead.
    ///
    /// # Errors
    /// [`ApplyError`] for the first tracepoint that cannot be inserted; then
    /// nothing is patched and no DTO is added.
    pub fn apply(&mut self, emu: &mut Emu, spec: &DtoSpec) -> Result<usize, ApplyError> {
        let specs = spec.tracepoints.iter().map(|tp| (tp, true));
        let sites = self.plan(emu, specs, &spec.objects, &|l| emu.phys_of(l))?;
        let index = self.define(spec, tdf::module::module_name(&spec.module));
        self.commit(emu, index, 0, spec.objects.clone(), sites);
        Ok(index)
    }

    /// Adds the DTO of `spec` for the module called `target` with its
    /// first instance: the copy process `pid` loaded, at `objects`, with
    /// `phys` giving the physical address of a linear one there. Returns
    /// the DTO's index.
    ///
    /// # Errors
    /// [`ApplyError`] for the first tracepoint that cannot be inserted; then
    /// nothing is patched and no DTO is added.
    pub fn apply_in(
        &mut self,
        emu: &mut Emu,
        spec: &DtoSpec,
        target: &str,
        (pid, objects): (u16, Vec<ObjectMapping>),
        phys: &dyn Fn(u32) -> Option<u32>,
    ) -> Result<usize, ApplyError> {
        let specs = spec.tracepoints.iter().map(|tp| (tp, true));
        let sites = self.plan(emu, specs, &objects, phys)?;
        let index = self.define(spec, target);
        self.commit(emu, index, pid, objects, sites);
        Ok(index)
    }

    /// Adds the DTO of `spec` with no instance yet: its tracepoints go into
    /// each copy of the module called `target` that [`DynamicTrace::attach`]
    /// is given. Returns its index.
    pub fn define(&mut self, spec: &DtoSpec, target: &str) -> usize {
        let dto = Dto::new(spec, target);
        let native = if self.native_enabled {
            Compiled::new_many(dto.tracepoints.iter().map(|tp| &tp.spec.program))
        } else {
            dto.tracepoints.iter().map(|_| None).collect()
        };
        self.native.push(native);
        self.dtos.push(dto);
        self.dtos.len() - 1
    }

    /// Inserts DTO `index`'s active tracepoints into a copy of its module
    /// that process `pid` has loaded with `objects`; `phys` gives the
    /// physical address of a linear one in that process (which need not
    /// be the one on the CPU). A copy that has them already is left alone,
    /// and so is every copy once none of the DTO's tracepoints is active
    /// (TRACE OFF, Remove).
    ///
    /// # Errors
    /// [`ApplyError`] for the first tracepoint that cannot be inserted
    /// there; then nothing is patched in that copy.
    pub fn attach(
        &mut self,
        emu: &mut Emu,
        index: usize,
        pid: u16,
        objects: Vec<ObjectMapping>,
        phys: &dyn Fn(u32) -> Option<u32>,
    ) -> Result<(), ApplyError> {
        let Some(dto) = self.dtos.get(index) else {
            return Ok(());
        };
        let key = (pid, objects.first().map_or(0, |o| o.flat_base));
        if dto.instances.contains_key(&key) || !dto.tracepoints.iter().any(|t| t.active) {
            return Ok(());
        }
        let specs = dto.tracepoints.iter().map(|tp| (&tp.spec, tp.active));
        let sites = self.plan(emu, specs, &objects, phys)?;
        self.commit(emu, index, pid, objects, sites);
        Ok(())
    }

    /// Records that process `pid` loaded DTO `index`'s module but the
    /// tracepoints could not go into that copy, and why.
    pub fn refuse(&mut self, index: usize, pid: u16, why: ApplyError) {
        if let Some(dto) = self.dtos.get_mut(index) {
            dto.refused.push((pid, why));
        }
    }

    /// Process `pid` ended: its instances go, their bytes written back
    /// (their frames are about to be freed and may hold other code next).
    pub fn detach(&mut self, emu: &mut Emu, pid: u16) {
        for dto in &mut self.dtos {
            let gone: Vec<(u16, u32)> = dto
                .instances
                .range((pid, 0)..=(pid, u32::MAX))
                .map(|(k, _)| *k)
                .collect();
            for key in gone {
                if let Some(instance) = dto.instances.remove(&key) {
                    for site in instance.sites.iter().filter(|s| s.inserted) {
                        emu.remove_tracepoint_phys(site.phys);
                        self.by_phys.remove(&site.phys);
                    }
                }
            }
        }
    }

    /// Process `pid`'s copy of a module whose first object is at
    /// `first_base` was unloaded (DosFreeModule): its instances go, their
    /// bytes written back.
    pub fn detach_copy(&mut self, emu: &mut Emu, pid: u16, first_base: u32) {
        for dto in &mut self.dtos {
            if let Some(instance) = dto.instances.remove(&(pid, first_base)) {
                for site in instance.sites.iter().filter(|s| s.inserted) {
                    emu.remove_tracepoint_phys(site.phys);
                    self.by_phys.remove(&site.phys);
                }
            }
        }
    }

    /// Where `specs` go in a copy with `objects`, checked: nothing is
    /// changed.
    fn plan<'s>(
        &self,
        emu: &Emu,
        specs: impl Iterator<Item = (&'s TracepointSpec, bool)>,
        objects: &[ObjectMapping],
        phys: &dyn Fn(u32) -> Option<u32>,
    ) -> Result<Vec<Site>, ApplyError> {
        let mut planned: BTreeMap<u32, u16> = BTreeMap::new();
        let mut sites = Vec::new();
        for (tp, active) in specs {
            let minor = tp.minor;
            let object = tp
                .object
                .checked_sub(1)
                .and_then(|i| objects.get(i as usize))
                .ok_or(ApplyError::NoSuchObject {
                    minor,
                    object: tp.object,
                })?;
            let linear = object.flat_base.wrapping_add(tp.offset);
            if !active {
                sites.push(Site {
                    linear,
                    phys: 0,
                    original: 0,
                    inserted: false,
                });
                continue;
            }
            let at = phys(linear).ok_or(ApplyError::Unreadable { minor, linear })?;
            if self.by_phys.contains_key(&at) || planned.insert(at, minor).is_some() {
                return Err(ApplyError::DuplicateAddress { minor, linear });
            }
            let mut byte = [0u8];
            emu.read_phys(at, &mut byte);
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
            sites.push(Site {
                linear,
                phys: at,
                original: found,
                inserted: true,
            });
        }
        Ok(sites)
    }

    /// Inserts planned `sites` as an instance of DTO `index`.
    fn commit(
        &mut self,
        emu: &mut Emu,
        index: usize,
        pid: u16,
        objects: Vec<ObjectMapping>,
        sites: Vec<Site>,
    ) {
        let key = (pid, objects.first().map_or(0, |o| o.flat_base));
        let copy = self.copies.len();
        self.copies.push(objects.clone());
        for (t, site) in sites.iter().enumerate().filter(|(_, s)| s.inserted) {
            emu.insert_tracepoint_phys(site.phys);
            self.by_phys.insert(site.phys, (index, t, copy));
        }
        let dto = &mut self.dtos[index];
        if dto.pids.is_empty() {
            dto.objects = objects.clone();
            for (tp, site) in dto.tracepoints.iter_mut().zip(&sites) {
                tp.linear = site.linear;
                tp.original = site.original;
            }
        }
        if !dto.pids.contains(&pid) {
            dto.pids.push(pid);
        }
        dto.instances.insert(
            key,
            Instance {
                pid,
                objects,
                sites,
            },
        );
        emu.intercept(vector::BP, true);
        emu.intercept(vector::DB, true);
    }

    /// Removes every tracepoint of DTO `index` from every instance,
    /// restoring the original bytes (DTRACE REMOVE, TRACE OFF). Its
    /// statistics and variables stay readable.
    pub fn remove(&mut self, emu: &mut Emu, index: usize) {
        let Some(n) = self.dtos.get(index).map(|d| d.tracepoints.len()) else {
            return;
        };
        for t in 0..n {
            self.remove_one(emu, index, t);
        }
    }

    /// Takes tracepoint `t` of DTO `d` out of every instance.
    fn remove_one(&mut self, emu: &mut Emu, d: usize, t: usize) {
        let dto = &mut self.dtos[d];
        for instance in dto.instances.values_mut() {
            if let Some(site) = instance.sites.get_mut(t).filter(|s| s.inserted) {
                emu.remove_tracepoint_phys(site.phys);
                self.by_phys.remove(&site.phys);
                site.inserted = false;
            }
        }
        dto.tracepoints[t].active = false;
    }

    /// Offers a trap of the guest to the runtime. `trace` receives the
    /// record when the tracepoint logs one, stamped `now`; `pid` (the
    /// process that hit it) goes into it. The answer carries the hit's
    /// cost for the kernel's clock.
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
        let Some(&(d, t, copy)) = emu.code_phys(linear).and_then(|p| self.by_phys.get(&p)) else {
            return Dispatch::NOT_OURS;
        };
        // The trap frame is the CPU itself: the program reads registers
        // where it needs them, and changes none.
        let protected = emu.cpu().protected();
        let dto = &mut self.dtos[d];
        let tp = &mut dto.tracepoints[t];
        let hit = Hit {
            major: tp.spec.major,
            minor: tp.spec.minor,
            logmax: dto.logmax,
        };
        let mut guest = GuestView::new(emu, &self.copies[copy]);
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
            // The tracepoint is the module's: it leaves every instance.
            self.remove_one(emu, d, t);
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
