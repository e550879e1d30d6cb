//! The machine: CPU state, physical memory, port bus, TLB, decoded
//! instruction cache and cycle clock, plus the host-facing API.
//!
//! The host drives the guest with [`Machine::run`], which executes until
//! an [`Exit`]: HLT, reaching a registered host-call address (checked before
//! the instruction there executes), an exception or software interrupt whose
//! vector the host intercepts, a triple fault, or a budget. At an
//! intercepted exit the registers are exactly what the CPU would push: the
//! faulting instruction for faults, the next instruction for traps, INT n,
//! INT3 and single-step #DB. The host may then deliver the event into the
//! guest with [`Machine::deliver_interrupt`] or handle it itself.
//! [`Machine::run_with`] also offers each intercepted INT3 to a
//! [`TrapHandler`] inside the loop, so a host's tracepoint hit needs no
//! exit.

use crate::bus::{NullBus, PortBus};
use crate::cpu::{CpuModel, CpuState, SegReg, Segment, flags};
use crate::fault::{Fault, vector};
use crate::icache::ICache;
use crate::mem::PhysMem;
use crate::paging::Tlb;
use std::collections::{HashMap, HashSet};

/// Why [`Machine::run`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// HLT executed (EIP is after the HLT).
    Halted,
    /// Execution reached a registered host-call linear address; the
    /// instruction there has not executed. Running again without moving EIP
    /// executes it (the host call is not re-reported for that first step).
    HostCall {
        /// The linear address.
        linear: u32,
    },
    /// An exception or software interrupt with an intercepted vector.
    Exception {
        /// The event.
        fault: Fault,
        /// True for INT n / INT3 / INTO (software interrupts).
        software: bool,
    },
    /// The instruction budget ran out.
    InstructionLimit,
    /// The cycle budget ran out.
    CycleLimit,
    /// Triple fault: the CPU shut down. Reset it with [`Machine::reset`].
    Shutdown,
}

// Size checks: every step returns an `Option<Exit>` and every memory access
// a `Result<_, Fault>`.
const _: () = assert!(size_of::<Exit>() == 16);
const _: () = assert!(size_of::<Fault>() == 12);

/// Budgets for one [`Machine::run`] call (`None` = unlimited).
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// Stop after this many more steps: retired instructions, plus
    /// faulting attempts (so a guest stuck re-faulting still stops).
    pub instructions: Option<u64>,
    /// Stop once this many more cycles have elapsed.
    pub cycles: Option<u64>,
}

/// Takes INT3 traps inside [`Machine::run_with`], where no exit is needed
/// (the host's tracepoints).
pub trait TrapHandler {
    /// The guest ran an INT3 at linear address `at` whose #BP the host
    /// intercepts: the machine is as at an [`Exit::Exception`] for it (EIP
    /// after the INT3, the INT3 counted). Return `true` when handled (the
    /// run resumes from the machine's state as the handler left it), or
    /// `false` to end the run with that exit: a handler that declines
    /// changes nothing; one that took the trap but wants the run to end (a
    /// system dump) tells its own caller, which must not offer the exit
    /// again.
    fn breakpoint(&mut self, machine: &mut Machine, at: u32) -> bool;
}

/// Construction parameters.
#[derive(Clone, Copy, Debug)]
pub struct MachineConfig {
    /// RAM size in bytes, mapped at physical 0.
    pub ram_size: usize,
    /// Processor generation.
    pub model: CpuModel,
}

impl Default for MachineConfig {
    fn default() -> Self {
        MachineConfig {
            ram_size: 16 << 20,
            model: CpuModel::I486,
        }
    }
}

/// What the executor tells the step loop.
pub(crate) enum Flow {
    Next,
    Halt,
    /// INT n / INT3 / INTO with the vector.
    SoftInt(u8),
}

/// The emulated PC: see the module docs.
pub struct Machine {
    pub(crate) cpu: CpuState,
    pub(crate) mem: PhysMem,
    pub(crate) bus: Box<dyn PortBus>,
    pub(crate) model: CpuModel,
    pub(crate) tlb: Tlb,
    pub(crate) icache: ICache,
    pub(crate) cycles: u64,
    pub(crate) instructions: u64,
    pub(crate) steps: u64,
    intercepts: [u64; 4],
    pub(crate) hostcalls: HashSet<u32>,
    pub(crate) skip_hostcall: Option<u32>,
    /// The host-call address of the last [`Exit::HostCall`], until the next run.
    reported_hostcall: Option<u32>,
    /// Tracepoints (`tracepoint.rs`): physical address to the byte the INT3
    /// replaced.
    pub(crate) tracepoints: HashMap<u32, u8>,
    /// The tracepoint whose original instruction the next step there runs.
    pub(crate) skip_tracepoint: Option<u32>,
    /// INT3, decoded once: what a step at a tracepoint runs.
    int3: iced_x86::Instruction,
    pub(crate) halted: bool,
    pub(crate) pending_irq: Option<u8>,
    /// Interrupts (and TF traps) are held off for one instruction.
    pub(crate) inhibit: bool,
    pub(crate) start_eip: u32,
    snap_gpr: [u32; 8],
    snap_flags: u32,
    /// The current instruction uses 32-bit addressing.
    pub(crate) addr32: bool,
    pub(crate) code32: bool,
    /// The native tier for hot register-only code.
    #[cfg(target_arch = "x86_64")]
    pub(crate) jit: crate::jit::Jit,
    /// The last step ran an instruction a block would take and go on
    /// after (`Decoded::in_block`): the run loop need not offer the next
    /// boundary to the native tier (see the jit module doc, "Where blocks
    /// start"). Cleared by a step that faults or traps. (0 or 1 in a word
    /// of its own: as a bool, its store in every step made TRCUST's runs
    /// about 10% slower in wall time, though not in instructions or in
    /// simulated cache misses; a u64 does not.)
    pub(crate) straight: u64,
}

/// What the native tier has done (all zero where it is absent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JitStats {
    /// Blocks translated to host code.
    pub translated: u64,
    /// Calls into translated blocks.
    pub entries: u64,
    /// Guest instructions retired in host code.
    pub instructions: u64,
    /// Of the entries, those made straight from the end of another block
    /// (chained, without going back to the run loop).
    pub chained: u64,
}

impl Machine {
    /// A machine at RESET with `config.ram_size` bytes of RAM and no devices.
    pub fn new(config: MachineConfig) -> Machine {
        Machine::with_bus(config, Box::new(NullBus))
    }

    /// Like [`Machine::new`] with an I/O port bus.
    pub fn with_bus(config: MachineConfig, bus: Box<dyn PortBus>) -> Machine {
        Machine {
            cpu: CpuState::reset(),
            mem: PhysMem::new(config.ram_size),
            bus,
            model: config.model,
            tlb: Tlb::default(),
            icache: ICache::default(),
            cycles: 0,
            instructions: 0,
            steps: 0,
            intercepts: [0; 4],
            hostcalls: HashSet::new(),
            skip_hostcall: None,
            reported_hostcall: None,
            tracepoints: HashMap::new(),
            skip_tracepoint: None,
            int3: {
                let mut d = iced_x86::Decoder::new(32, &[crate::tracepoint::INT3], 0);
                d.decode()
            },
            halted: false,
            pending_irq: None,
            inhibit: false,
            start_eip: 0,
            snap_gpr: [0; 8],
            snap_flags: 0,
            addr32: false,
            code32: false,
            #[cfg(target_arch = "x86_64")]
            jit: crate::jit::Jit::default(),
            straight: 0,
        }
    }

    /// RESET: registers to their power-on values (memory is kept).
    pub fn reset(&mut self) {
        self.cpu = CpuState::reset();
        self.halted = false;
        self.pending_irq = None;
        self.flush_caches();
    }

    /// The processor model.
    pub fn model(&self) -> CpuModel {
        self.model
    }
    /// The register file.
    pub fn cpu(&self) -> &CpuState {
        &self.cpu
    }
    /// The whole mutable register file, control registers included, so
    /// the TLB is flushed (the host may change CR0/CR3): a cost paid on
    /// every call. To move EIP, flags or a general register use
    /// [`Machine::set_eip`], [`Machine::eflags_mut`] or
    /// [`Machine::gpr_mut`], and segment registers through
    /// [`Machine::set_segment`]. The decoded-instruction cache stays valid
    /// (it is keyed by linear address and checked against the current
    /// translation).
    pub fn cpu_mut_flush_tlb(&mut self) -> &mut CpuState {
        self.tlb.flush();
        &mut self.cpu
    }
    /// Move EIP (no cache is affected).
    #[inline]
    pub fn set_eip(&mut self, eip: u32) {
        self.cpu.eip = eip;
    }
    /// EFLAGS, to flip TF or a status flag (no cache is affected; VM is
    /// the caller's business, as with a POPFD at CPL 0).
    #[inline]
    pub fn eflags_mut(&mut self) -> &mut u32 {
        &mut self.cpu.eflags
    }
    /// The eight general registers, indexed by [`crate::Gpr`] (no cache is
    /// affected).
    #[inline]
    pub fn gpr_mut(&mut self) -> &mut [u32; 8] {
        &mut self.cpu.gpr
    }
    /// DR0..DR7 (only stored: no breakpoint is modelled, so no cache is
    /// affected), e.g. to clear DR6's single-step bit after a #DB.
    #[inline]
    pub fn dr_mut(&mut self) -> &mut [u32; 8] {
        &mut self.cpu.dr
    }
    /// Drop every TLB entry, as after the host edits a page table.
    pub fn flush_tlb(&mut self) {
        self.tlb.flush();
    }
    /// Physical memory.
    pub fn mem(&self) -> &PhysMem {
        &self.mem
    }
    /// Mutable physical memory (writes invalidate cached code as usual).
    pub fn mem_mut(&mut self) -> &mut PhysMem {
        &mut self.mem
    }
    /// The I/O bus.
    pub fn bus_mut(&mut self) -> &mut dyn PortBus {
        self.bus.as_mut()
    }
    /// Replace the I/O bus, returning the old one.
    pub fn set_bus(&mut self, bus: Box<dyn PortBus>) -> Box<dyn PortBus> {
        std::mem::replace(&mut self.bus, bus)
    }
    /// Cycles elapsed on the machine clock.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }
    /// Instructions retired.
    pub fn instructions(&self) -> u64 {
        self.instructions
    }
    /// Is the CPU halted?
    pub fn halted(&self) -> bool {
        self.halted
    }
    /// Wake (or halt) the CPU without an interrupt.
    pub fn set_halted(&mut self, h: bool) {
        self.halted = h;
    }
    /// Switch the native tier for hot register-only code on (the default)
    /// or off (interpreter only). Results are the same either way; only
    /// speed differs. Where the tier is absent (hosts other than x86-64)
    /// this does nothing.
    pub fn set_jit(&mut self, on: bool) {
        #[cfg(target_arch = "x86_64")]
        {
            self.jit.enabled = on;
            self.jit.clear();
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = on;
    }
    /// How many times the native tier sees an address start an
    /// instruction before it translates the block there (32 by default;
    /// at least 1). Results are the same for any value; tests lower it so
    /// that short loops exercise the tier. Nothing where the tier is
    /// absent.
    pub fn set_jit_threshold(&mut self, n: u16) {
        #[cfg(target_arch = "x86_64")]
        self.jit.set_threshold(n);
        #[cfg(not(target_arch = "x86_64"))]
        let _ = n;
    }
    /// Is the native tier on (always false where it is absent)?
    pub fn jit_enabled(&self) -> bool {
        #[cfg(target_arch = "x86_64")]
        return self.jit.enabled;
        #[cfg(not(target_arch = "x86_64"))]
        false
    }
    /// Counters of the native tier.
    pub fn jit_stats(&self) -> JitStats {
        #[cfg(target_arch = "x86_64")]
        return self.jit.stats;
        #[cfg(not(target_arch = "x86_64"))]
        JitStats::default()
    }
    /// Translated blocks currently held by the native tier.
    pub fn jit_blocks(&self) -> usize {
        #[cfg(target_arch = "x86_64")]
        return self.jit.blocks();
        #[cfg(not(target_arch = "x86_64"))]
        0
    }

    /// Entries in the decoded-instruction cache (for tests and tuning).
    pub fn icache_len(&self) -> usize {
        self.icache.len()
    }

    /// Ask to see (`on`) or stop seeing vector `v` as an [`Exit::Exception`]
    /// instead of having it delivered through the IVT/IDT.
    pub fn intercept(&mut self, v: u8, on: bool) {
        let (w, b) = (usize::from(v >> 6), v & 63);
        if on {
            self.intercepts[w] |= 1 << b;
        } else {
            self.intercepts[w] &= !(1 << b);
        }
    }

    fn intercepted(&self, v: u8) -> bool {
        self.intercepts[usize::from(v >> 6)] & (1 << (v & 63)) != 0
    }

    /// Register a host-call linear address. The code caches are dropped
    /// only when the set changes (the kernel registers its return thunk at
    /// every exception it dispatches).
    pub fn add_host_call(&mut self, linear: u32) {
        if self.hostcalls.insert(linear) {
            self.clear_code_caches();
        }
    }
    /// Remove a host-call linear address.
    pub fn remove_host_call(&mut self, linear: u32) {
        if self.hostcalls.remove(&linear) {
            self.clear_code_caches();
        }
    }

    /// Queue an external (maskable) interrupt; it is taken before the next
    /// instruction once IF is set.
    pub fn raise_irq(&mut self, vector: u8) {
        self.pending_irq = Some(vector);
    }

    /// Deliver an interrupt or exception into the guest now, through the
    /// IVT (real mode) or IDT, as hardware would for an external event
    /// (no DPL check). `error` is pushed when given.
    pub fn deliver_interrupt(&mut self, vector: u8, error: Option<u32>) -> Result<(), Fault> {
        self.halted = false;
        let r = self.deliver(vector, error, crate::exec::intr::Kind::External);
        self.flush_dirty();
        r
    }

    /// Drop the TLB, the decoded-instruction cache and the native tier's
    /// translated blocks.
    pub fn flush_caches(&mut self) {
        self.tlb.flush();
        self.clear_code_caches();
        self.mem.clear_code_marks();
    }

    /// Drop decoded instructions and translated blocks.
    fn clear_code_caches(&mut self) {
        self.icache.clear();
        #[cfg(target_arch = "x86_64")]
        self.jit.clear();
    }

    /// Run until an [`Exit`].
    pub fn run(&mut self, limits: Limits) -> Exit {
        self.run_with(limits, None)
    }

    /// Run until an [`Exit`], handing each intercepted INT3 to `traps`
    /// first, inside the loop: a tracepoint hit the handler takes costs no
    /// exit, and the run goes on within the same budgets. What the handler
    /// declines leaves the run as the [`Exit::Exception`] [`Machine::run`]
    /// would return, with the machine exactly as it would be.
    pub fn run_with(&mut self, limits: Limits, traps: Option<&mut dyn TrapHandler>) -> Exit {
        #[cfg(target_arch = "x86_64")]
        if self.jit.enabled {
            return self.run_loop::<true>(limits, traps);
        }
        self.run_loop::<false>(limits, traps)
    }

    /// `run_with`, with the native tier (`JIT`) or without it.
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_assignments))]
    fn run_loop<const JIT: bool>(
        &mut self,
        limits: Limits,
        mut traps: Option<&mut dyn TrapHandler>,
    ) -> Exit {
        let istop = limits.instructions.map(|n| self.steps.saturating_add(n));
        let cstop = limits.cycles.map(|n| self.cycles.saturating_add(n));
        // Only a host call just reported at this very address is skipped:
        // a run resumed there after any other exit (a single-step #DB that
        // landed on a host-call address, say) must still report it.
        let here = self.cpu.seg[SegReg::Cs].base.wrapping_add(self.cpu.eip);
        self.skip_hostcall = self.reported_hostcall.take().filter(|&l| l == here);
        // The boundaries offered to the native tier (see the jit module
        // doc, "Where blocks start"): bit 0 this one, bit 1 the next one
        // at least. The host may have set anything since the last run.
        let mut offer: u8 = 1;
        loop {
            if let Some(s) = istop
                && self.steps >= s
            {
                return Exit::InstructionLimit;
            }
            if let Some(s) = cstop
                && self.cycles >= s
            {
                return Exit::CycleLimit;
            }
            #[cfg(target_arch = "x86_64")]
            if JIT && offer & 1 != 0 {
                match self.jit_run(istop, cstop) {
                    crate::jit::Offer::Miss => {}
                    crate::jit::Offer::Block => offer = 3,
                    crate::jit::Offer::Ran => {
                        offer = 3;
                        continue;
                    }
                }
            }
            match self.step() {
                None => offer = (offer >> 1) | u8::from(self.straight == 0),
                Some(Exit::Exception {
                    fault,
                    software: true,
                }) if fault.vector == vector::BP
                    && traps.as_mut().is_some_and(|h| {
                        let cs = self.cpu.seg[SegReg::Cs];
                        let at = cs.base.wrapping_add(self.cpu.eip.wrapping_sub(1));
                        h.breakpoint(self, at)
                    }) =>
                {
                    offer = 1;
                }
                Some(e) => return e,
            }
        }
    }

    /// Execute one instruction (or take one pending event).
    pub fn step(&mut self) -> Option<Exit> {
        // Host writes through `mem_mut` since the last step.
        self.flush_dirty();
        if let Some(v) = self.pending_irq
            && self.cpu.eflags & flags::IF != 0
            && !self.inhibit
        {
            self.pending_irq = None;
            self.halted = false;
            if let Err(f) = self.deliver(v, None, crate::exec::intr::Kind::External) {
                self.straight = 0;
                return self.raise_nested(f);
            }
        }
        if self.halted {
            return Some(Exit::Halted);
        }
        self.steps += 1;
        let inhibited = std::mem::take(&mut self.inhibit);
        let cs = self.cpu.seg[SegReg::Cs];
        let lin = cs.base.wrapping_add(self.cpu.eip);
        let slot = match self.fetch(lin, cs.big()) {
            Ok(i) => i,
            Err(f) => {
                self.straight = 0;
                return self.raise(f);
            }
        };
        let d = self.icache.at(slot);
        self.straight = u64::from(d.in_block);
        let (mut insn, hostcall, addr32, mut cycles) = (d.insn, d.hostcall, d.addr32, d.cycles);
        if d.tracepoint {
            // The INT3 the guest sees, unless the host resumed here to run
            // the original instruction (see tracepoint.rs).
            if self.skip_tracepoint == Some(lin) {
                self.skip_tracepoint = None;
            } else {
                insn = self.int3;
                cycles = crate::cycles::base_cycles(&insn, 0);
            }
        }
        if hostcall && self.skip_hostcall != Some(lin) {
            self.reported_hostcall = Some(lin);
            return Some(Exit::HostCall { linear: lin });
        }
        self.skip_hostcall = None;
        let tf = self.cpu.eflags & flags::TF != 0 && !inhibited;
        self.start_eip = self.cpu.eip;
        self.snap_gpr = self.cpu.gpr;
        self.snap_flags = self.cpu.eflags;
        self.addr32 = addr32;
        self.code32 = cs.big();
        let next = self.cpu.eip.wrapping_add(insn.len() as u32);
        self.cpu.eip = if self.code32 { next } else { next & 0xFFFF };
        self.cycles += u64::from(cycles);
        let r = self.exec(&insn);
        self.flush_dirty();
        match r {
            Ok(Flow::Next) => {}
            Ok(Flow::Halt) => {
                self.instructions += 1;
                if tf {
                    // The single-step trap is taken after HLT and wakes it.
                    self.cpu.dr[6] |= 0x4000;
                    return self.raise(Fault::new(vector::DB));
                }
                self.halted = true;
                return Some(Exit::Halted);
            }
            Ok(Flow::SoftInt(v)) => {
                self.instructions += 1;
                if self.intercepted(v) {
                    return Some(Exit::Exception {
                        fault: Fault::new(v),
                        software: true,
                    });
                }
                if let Err(f) = self.deliver(v, None, crate::exec::intr::Kind::Software) {
                    self.cpu.eip = self.start_eip;
                    return self.raise(f);
                }
                self.flush_dirty();
                return None;
            }
            Err(f) => {
                self.straight = 0;
                self.cpu.gpr = self.snap_gpr;
                self.cpu.eflags = self.snap_flags;
                self.cpu.eip = self.start_eip;
                return self.raise(f);
            }
        }
        self.instructions += 1;
        if tf {
            self.straight = 0;
            self.cpu.dr[6] |= 0x4000;
            return self.raise(Fault::new(vector::DB));
        }
        None
    }

    /// Refresh the restart point mid-instruction (REP string iterations).
    pub(crate) fn commit_progress(&mut self) {
        self.snap_gpr = self.cpu.gpr;
        self.snap_flags = self.cpu.eflags;
    }

    #[inline]
    pub(crate) fn flush_dirty(&mut self) {
        if !self.mem.dirty_code.is_empty() {
            let pages = std::mem::take(&mut self.mem.dirty_code);
            for p in pages {
                self.icache.invalidate_page(p);
            }
        }
    }

    /// Deliver (or hand to the host) an exception.
    pub(crate) fn raise(&mut self, f: Fault) -> Option<Exit> {
        self.halted = false;
        if self.intercepted(f.vector) {
            return Some(Exit::Exception {
                fault: f,
                software: false,
            });
        }
        let tr = self.cpu.tr.selector;
        match self.deliver(f.vector, f.error, crate::exec::intr::Kind::Exception) {
            Ok(()) => {
                self.flush_dirty();
                None
            }
            Err(f2) if self.cpu.tr.selector != tr => {
                // Past a task gate's commit point: `f` was delivered (to
                // the new task) and `f2` is that task's own exception.
                self.flush_dirty();
                self.raise(f2)
            }
            Err(f2) => {
                if f.vector == vector::DF {
                    return Some(Exit::Shutdown);
                }
                // Intel's double-fault table: contributory after
                // contributory, or anything but a benign one after #PF.
                let pf = |x: &Fault| x.vector == vector::PF;
                if (f.contributory() && f2.contributory())
                    || (pf(&f) && (pf(&f2) || f2.contributory()))
                {
                    return self.raise_nested(Fault::code(vector::DF, 0));
                }
                self.raise_nested(f2)
            }
        }
    }

    fn raise_nested(&mut self, f: Fault) -> Option<Exit> {
        if f.vector == vector::DF {
            if self.intercepted(vector::DF) {
                return Some(Exit::Exception {
                    fault: f,
                    software: false,
                });
            }
            return match self.deliver(vector::DF, Some(0), crate::exec::intr::Kind::Exception) {
                Ok(()) => None,
                Err(_) => Some(Exit::Shutdown),
            };
        }
        self.raise(f)
    }

    /// Install a segment cache directly (no checks), e.g. to start a guest
    /// in protected mode. Loading CS also sets CPL from its RPL (DPL for
    /// conforming segments is not considered).
    pub fn set_segment(&mut self, s: SegReg, seg: Segment) {
        self.cpu.seg[s] = seg;
        if s == SegReg::Cs && self.cpu.protected() {
            self.cpu.cpl = (seg.selector & 3) as u8;
        }
    }

    /// Load a segment register as a MOV would (descriptor read and checks in
    /// protected mode).
    pub fn load_segment(&mut self, s: SegReg, selector: u16) -> Result<(), Fault> {
        self.load_sreg(s, selector)
    }
}
