//! A second backend on unicorn-engine (QEMU's TCG), behind the cargo
//! feature `unicorn`: the reference the differential test runs the
//! interpreter against, and the yardstick of the benchmarks.
//!
//! [`UnicornMachine`] has the host-facing shape of [`crate::Machine`]:
//! [`UnicornMachine::run`] to an [`Exit`], registers through
//! [`UnicornMachine::cpu`] / [`UnicornMachine::set_cpu`], guest memory
//! through [`UnicornMachine::read_linear`] / [`UnicornMachine::write_linear`]
//! and [`UnicornMachine::patch_code`], host calls and intercepts.
//!
//! How each exit is made, and what unicorn cannot express:
//! - HLT: unicorn stops emulation on HLT (EIP after it), reported as
//!   [`Exit::Halted`]; the machine stays halted until
//!   [`UnicornMachine::set_halted`]`(false)`.
//! - Host calls: one code hook per registered linear address; it stops the
//!   emulation before the instruction executes (same skip rule as
//!   [`crate::Machine::run`] when resuming there).
//! - Exceptions and software interrupts: an interrupt hook stops the
//!   emulation and reports [`Exit::Exception`]. Unicorn never delivers an
//!   event through the IDT, so in protected mode every vector is reported
//!   whether or not it is intercepted; in real mode a vector that is not
//!   intercepted is delivered through the IVT here, as the CPU would.
//!   Unicorn does not expose the error code: [`Fault::error`] is `None`.
//!   Whether the event was a software interrupt is inferred: during a
//!   budgeted run a fault is recognised by EIP still being at the start of
//!   the instruction the counting hook saw; otherwise (and for that test's
//!   negatives) from the bytes before the return EIP (`CD n`, `CC`, `CE`).
//!   Without a budget, a fault right after an `INT n` of the same vector
//!   is misreported as software.
//! - QEMU keeps a contributory exception or #PF "in flight" until it is
//!   delivered, which unicorn never does, so the next one would turn into
//!   #DF and then a triple fault. After reporting one, the backend restores
//!   the CPU context saved at creation and writes the registers back (x87
//!   data registers and MSRs are lost at that point).
//! - #UD: unicorn reports invalid opcodes through its own hook, mapped to
//!   vector 6 like any other exception.
//! - Instruction budget: a code hook on every address counts steps while a
//!   budget is set (which slows unicorn several times). Steps include a
//!   faulting attempt, as in the interpreter, but QEMU runs a REP string
//!   instruction as one step per one or two iterations (see `on_count`:
//!   QEMU restarts an instruction that writes into its own code page, and
//!   the hook does not count an immediate repeat). Cycle budgets have no
//!   meaning here and are ignored.
//! - No triple fault ([`Exit::Shutdown`]) can occur, no port bus (IN/OUT
//!   read QEMU's defaults), no external interrupts.
//! - CPU: QEMU's "486" model (CPUID and instruction set checks); a 286
//!   model is not available.
//!
//! Memory outside RAM is unmapped in unicorn: a guest access there ends
//! the run with [`UnicornError`] (the interpreter reads open bus instead).

mod ffi;
mod regs;

use crate::cpu::{CpuModel, CpuState, flags};
use crate::fault::{Fault, vector};
use crate::machine::{Exit, Limits, MachineConfig};
use std::collections::HashMap;
use std::fmt;
use unicorn_engine::unicorn_const::{Arch, Mode, Prot, X86CpuModel, uc_error};
use unicorn_engine::{Context, RegisterX86, UcHookId, Unicorn};

/// The unicorn instance with our hook state.
type Uc<'a> = Unicorn<'a, HookState>;

/// A unicorn call failed (or the guest touched memory unicorn has no
/// mapping for).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unicorn {op}: {err:?}")]
pub struct UnicornError {
    /// The operation.
    pub op: &'static str,
    /// Unicorn's error code.
    pub err: uc_error,
}

impl UnicornError {
    fn new(op: &'static str, err: uc_error) -> UnicornError {
        UnicornError { op, err }
    }
}

/// What the hooks share with [`UnicornMachine::run`].
#[derive(Default)]
struct HookState {
    /// Vectors the host intercepts (bit per vector).
    intercepts: [u64; 4],
    /// Host-call linear addresses and their hooks.
    hostcalls: HashMap<u32, UcHookId>,
    /// The host call not to report on the first instruction of this run.
    skip_hostcall: Option<u32>,
    /// Why the current run stopped (None: HLT or an error).
    exit: Option<Exit>,
    /// Steps begun in this run while a budget is set.
    seen: u64,
    /// The budget of this run.
    budget: u64,
    /// The address the counting hook saw last, and whether it was a
    /// repeat it let through uncounted.
    last: Option<u64>,
    repeated: bool,
}

impl HookState {
    fn intercepted(&self, v: u8) -> bool {
        self.intercepts[usize::from(v >> 6)] & (1 << (v & 63)) != 0
    }
}

/// The unicorn-backed machine: see the module docs.
pub struct UnicornMachine {
    uc: Uc<'static>,
    ram_size: u64,
    halted: bool,
    steps: u64,
    reported_hostcall: Option<u32>,
    /// Unicorn's CPU context as created (no exception in flight).
    clean: Context,
    /// The instruction-counting hook, while installed.
    counter: Option<UcHookId>,
}

impl fmt::Debug for UnicornMachine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnicornMachine")
            .field("ram_size", &self.ram_size)
            .field("halted", &self.halted)
            .finish_non_exhaustive()
    }
}

fn linear_pc(uc: &Uc<'_>) -> u32 {
    let r = |x| uc.reg_read(x).unwrap_or(0) as u32;
    let (cs, eip, cr0, eflags) = (
        r(RegisterX86::CS) as u16,
        r(RegisterX86::EIP),
        r(RegisterX86::CR0),
        r(RegisterX86::EFLAGS),
    );
    if cr0 & 1 == 0 || eflags & flags::VM != 0 {
        (u32::from(cs) << 4).wrapping_add(eip)
    } else {
        regs::segment_base(uc, cs).wrapping_add(eip)
    }
}

fn stop(uc: &mut Uc<'_>, exit: Exit) {
    if uc.get_data().exit.is_none() {
        uc.get_data_mut().exit = Some(exit);
    }
    // Stopping only fails on a dead handle; the exit is recorded anyway.
    let _ = uc.emu_stop();
}

/// Code hook at a host-call address.
fn on_hostcall(uc: &mut Uc<'_>, addr: u64, _size: u32) {
    let d = uc.get_data_mut();
    if d.exit.is_some() {
        return;
    }
    let lin = addr as u32;
    if d.skip_hostcall.take() == Some(lin) {
        return;
    }
    // The budget is checked first, as the interpreter does (the counting
    // hook may run after this one).
    if d.seen >= d.budget {
        stop(uc, Exit::InstructionLimit);
        return;
    }
    stop(uc, Exit::HostCall { linear: lin });
}

/// Code hook on every address while a budget is set. QEMU restarts an
/// instruction that writes into its own translated code page, so the hook
/// sees it twice in a row: a repeat at the same address is not counted,
/// once (a jump to itself is then counted every other time, so a budget
/// still ends it).
fn on_count(uc: &mut Uc<'_>, addr: u64, _size: u32) {
    let d = uc.get_data_mut();
    if d.exit.is_some() {
        return;
    }
    if d.last == Some(addr) && !d.repeated {
        d.repeated = true;
        return;
    }
    d.repeated = false;
    d.last = Some(addr);
    d.seen += 1;
    if d.seen > d.budget {
        d.seen -= 1;
        stop(uc, Exit::InstructionLimit);
    }
}

/// Was the event that left EIP at `eip` the software interrupt `v`?
fn software_int(uc: &Uc<'_>, v: u32) -> bool {
    let lin = linear_pc(uc);
    let mut b = [0u8; 2];
    if uc.mem_read(u64::from(lin.wrapping_sub(2)), &mut b).is_err() {
        return false;
    }
    (b[0] == 0xCD && u32::from(b[1]) == v) || (v == 3 && b[1] == 0xCC) || (v == 4 && b[1] == 0xCE)
}

/// Interrupt hook: report, or deliver through the real-mode IVT.
fn on_interrupt(uc: &mut Uc<'_>, intno: u32) {
    let v = intno as u8;
    // With a budget the counting hook saw where the last instruction
    // began: a fault leaves EIP there, a software interrupt after it.
    let at_start = uc.get_data().last == Some(u64::from(linear_pc(uc)));
    let software = intno < 256 && !at_start && software_int(uc, intno);
    let real = uc.reg_read(RegisterX86::CR0).unwrap_or(0) & 1 == 0;
    if real && !uc.get_data().intercepted(v) && deliver_real(uc, v).is_ok() {
        return;
    }
    stop(
        uc,
        Exit::Exception {
            fault: Fault::new(v),
            software,
        },
    );
}

/// Real-mode delivery: push FLAGS, CS, IP; clear IF, TF and AC; CS:IP from
/// the IVT.
fn deliver_real(uc: &mut Uc<'_>, v: u8) -> Result<(), uc_error> {
    let r = |uc: &Uc<'_>, x| uc.reg_read(x).map(|v| v as u32);
    let fl = r(uc, RegisterX86::EFLAGS)?;
    let cs = r(uc, RegisterX86::CS)?;
    let ip = r(uc, RegisterX86::EIP)?;
    let ss = r(uc, RegisterX86::SS)?;
    let mut sp = r(uc, RegisterX86::ESP)?;
    let mut vec = [0u8; 4];
    uc.mem_read(u64::from(v) * 4, &mut vec)?;
    for w in [fl, cs, ip] {
        sp = (sp & 0xFFFF_0000) | (sp.wrapping_sub(2) & 0xFFFF);
        let lin = (ss << 4) + (sp & 0xFFFF);
        uc.mem_write(u64::from(lin), &(w as u16).to_le_bytes())?;
    }
    uc.reg_write(RegisterX86::ESP, u64::from(sp))?;
    uc.reg_write(
        RegisterX86::EFLAGS,
        u64::from(fl & !(flags::IF | flags::TF | flags::AC)),
    )?;
    uc.reg_write(
        RegisterX86::CS,
        u64::from(u16::from_le_bytes([vec[2], vec[3]])),
    )?;
    uc.reg_write(
        RegisterX86::EIP,
        u64::from(u16::from_le_bytes([vec[0], vec[1]])),
    )?;
    Ok(())
}

/// The length of the instruction at CS:EIP if it is INT 6 (`CD 06` after
/// prefixes).
fn int6_len(uc: &Uc<'_>) -> Option<u64> {
    let mut b = [0u8; 15];
    uc.mem_read(u64::from(linear_pc(uc)), &mut b).ok()?;
    let n = b.iter().position(|x| {
        !matches!(
            x,
            0x26 | 0x2E | 0x36 | 0x3E | 0x64 | 0x65 | 0x66 | 0x67 | 0xF0 | 0xF2 | 0xF3
        )
    })?;
    (b.get(n..n + 2) == Some(&[0xCD, 0x06][..])).then_some(n as u64 + 2)
}

/// Vectors QEMU tracks for double-fault promotion (contributory, #PF, #DF).
fn nests(v: u8) -> bool {
    matches!(v, 0 | 8 | 10..=14)
}

/// Invalid-opcode hook. Unicorn routes every vector-6 event here, INT 6
/// included, with EIP still at the INT: that one is recognised by its
/// bytes and EIP moved past it, as for any software interrupt.
fn on_invalid(uc: &mut Uc<'_>) -> bool {
    let software = match int6_len(uc) {
        Some(len) => {
            let eip = uc.reg_read(RegisterX86::EIP).unwrap_or(0);
            let _ = uc.reg_write(RegisterX86::EIP, eip + len);
            true
        }
        None => false,
    };
    stop(
        uc,
        Exit::Exception {
            fault: Fault::new(vector::UD),
            software,
        },
    );
    true
}

impl UnicornMachine {
    /// A machine with `config.ram_size` bytes of RAM at physical 0 (rounded
    /// up to 4 KB), in real mode with all segments 0 and EIP 0.
    ///
    /// # Errors
    /// A 286 model (QEMU has none), or unicorn failing to start.
    pub fn new(config: MachineConfig) -> Result<UnicornMachine, UnicornError> {
        if config.model == CpuModel::I286 {
            return Err(UnicornError::new("new (no 286 model)", uc_error::MODE));
        }
        let mut uc = Unicorn::new_with_data(Arch::X86, Mode::MODE_32, HookState::default())
            .map_err(|e| UnicornError::new("new", e))?;
        uc.ctl_set_cpu_model(X86CpuModel::Model_486 as i32)
            .map_err(|e| UnicornError::new("ctl_set_cpu_model", e))?;
        let ram_size = (config.ram_size as u64)
            .max(0x1000)
            .next_multiple_of(0x1000);
        uc.mem_map(0, ram_size, Prot::ALL)
            .map_err(|e| UnicornError::new("mem_map", e))?;
        uc.add_intr_hook(on_interrupt)
            .map_err(|e| UnicornError::new("add_intr_hook", e))?;
        uc.add_insn_invalid_hook(on_invalid)
            .map_err(|e| UnicornError::new("add_insn_invalid_hook", e))?;
        let clean = uc
            .context_init()
            .map_err(|e| UnicornError::new("context_init", e))?;
        let mut m = UnicornMachine {
            counter: None,
            clean,
            uc,
            ram_size,
            halted: false,
            steps: 0,
            reported_hostcall: None,
        };
        let mut s = CpuState::reset();
        for seg in &mut s.seg {
            *seg = crate::cpu::Segment::real(0, false);
        }
        s.eip = 0;
        m.set_cpu(&s)?;
        Ok(m)
    }

    /// The register file (segment caches rebuilt as the [`regs`] module
    /// docs say).
    ///
    /// # Errors
    /// A unicorn register read failing.
    pub fn cpu(&self) -> Result<CpuState, UnicornError> {
        regs::read_state(&self.uc)
    }

    /// Write the register file. Segment registers are loaded by selector
    /// (protected mode: from the descriptor tables, so write the GDT
    /// first); the caches in `s` are not used. Only CPL 0 in protected mode.
    ///
    /// # Errors
    /// Unicorn refusing a value (e.g. a selector its pre-check rejects).
    pub fn set_cpu(&mut self, s: &CpuState) -> Result<(), UnicornError> {
        regs::write_state(&mut self.uc, s)
    }

    /// Steps begun (retired instructions plus faulting attempts) while
    /// budgets were set; unbudgeted runs are not counted.
    pub fn instructions(&self) -> u64 {
        self.steps
    }

    /// Is the CPU halted?
    pub fn halted(&self) -> bool {
        self.halted
    }

    /// Wake (or halt) the CPU.
    pub fn set_halted(&mut self, h: bool) {
        self.halted = h;
    }

    /// Ask to see (`on`) or stop seeing vector `v` as an [`Exit::Exception`]
    /// (in protected mode every vector is reported: see the module docs).
    pub fn intercept(&mut self, v: u8, on: bool) {
        let d = self.uc.get_data_mut();
        let (w, b) = (usize::from(v >> 6), v & 63);
        if on {
            d.intercepts[w] |= 1 << b;
        } else {
            d.intercepts[w] &= !(1 << b);
        }
    }

    /// Register a host-call linear address.
    ///
    /// # Errors
    /// Unicorn failing to add the hook.
    pub fn add_host_call(&mut self, linear: u32) -> Result<(), UnicornError> {
        if self.uc.get_data().hostcalls.contains_key(&linear) {
            return Ok(());
        }
        let a = u64::from(linear);
        let id = self
            .uc
            .add_code_hook(a, a, on_hostcall)
            .map_err(|e| UnicornError::new("add_code_hook", e))?;
        self.uc.get_data_mut().hostcalls.insert(linear, id);
        Ok(())
    }

    /// Remove a host-call linear address.
    ///
    /// # Errors
    /// Unicorn failing to remove the hook.
    pub fn remove_host_call(&mut self, linear: u32) -> Result<(), UnicornError> {
        if let Some(id) = self.uc.get_data_mut().hostcalls.remove(&linear) {
            self.uc
                .remove_hook(id)
                .map_err(|e| UnicornError::new("remove_hook", e))?;
        }
        Ok(())
    }

    /// Run until an [`Exit`] (see the module docs for what each means
    /// here).
    ///
    /// # Errors
    /// The guest touched memory outside RAM, or unicorn failed.
    pub fn run(&mut self, limits: Limits) -> Result<Exit, UnicornError> {
        if self.halted {
            return Ok(Exit::Halted);
        }
        if limits.instructions == Some(0) {
            return Ok(Exit::InstructionLimit);
        }
        let here = linear_pc(&self.uc);
        {
            let d = self.uc.get_data_mut();
            d.exit = None;
            d.seen = 0;
            d.last = None;
            d.repeated = false;
            d.budget = limits.instructions.unwrap_or(u64::MAX);
            d.skip_hostcall = self.reported_hostcall.take().filter(|&l| l == here);
        }
        // The counting hook stays installed across budgeted runs (adding
        // or removing a hook drops unicorn's translated code) and is
        // removed for an unbudgeted run, which then runs hook-free.
        match (limits.instructions, self.counter) {
            (Some(_), None) => {
                let id = self
                    .uc
                    .add_code_hook(1, 0, on_count)
                    .map_err(|e| UnicornError::new("add_code_hook", e))?;
                self.counter = Some(id);
            }
            (None, Some(id)) => {
                self.counter = None;
                self.uc
                    .remove_hook(id)
                    .map_err(|e| UnicornError::new("remove_hook", e))?;
            }
            _ => {}
        }
        let eip = self
            .uc
            .reg_read(RegisterX86::EIP)
            .map_err(|e| UnicornError::new("reg_read", e))?;
        let r = self.uc.emu_start(eip, u64::MAX, 0, 0);
        let d = self.uc.get_data_mut();
        self.steps += d.seen;
        let exit = d.exit.take();
        match (exit, r) {
            (Some(e), _) => {
                match e {
                    Exit::HostCall { linear } => self.reported_hostcall = Some(linear),
                    Exit::Exception { fault, .. } if nests(fault.vector) => {
                        self.forget_exception()?;
                    }
                    _ => {}
                }
                Ok(e)
            }
            (None, Ok(())) => {
                self.halted = true;
                Ok(Exit::Halted)
            }
            (None, Err(e)) => Err(UnicornError::new("emu_start", e)),
        }
    }

    /// Execute one instruction: `None` when it retired without an exit.
    ///
    /// # Errors
    /// As [`UnicornMachine::run`].
    pub fn step(&mut self) -> Result<Option<Exit>, UnicornError> {
        match self.run(Limits {
            instructions: Some(1),
            cycles: None,
        })? {
            Exit::InstructionLimit => Ok(None),
            e => Ok(Some(e)),
        }
    }

    /// QEMU remembers a contributory exception or #PF as "in flight" until
    /// it is delivered, which under unicorn never happens: the next one
    /// would become #DF, then a triple fault. Reset the CPU context to the
    /// clean one and put the registers back (x87 data registers and MSRs
    /// are not kept).
    fn forget_exception(&mut self) -> Result<(), UnicornError> {
        let s = self.cpu()?;
        self.uc
            .context_restore(&self.clean)
            .map_err(|e| UnicornError::new("context_restore", e))?;
        self.set_cpu(&s)
    }

    /// EIP alone (cheaper than [`UnicornMachine::cpu`]).
    pub fn eip(&self) -> u32 {
        self.uc.reg_read(RegisterX86::EIP).unwrap_or(0) as u32
    }

    fn paging(&self) -> bool {
        let cr0 = self.uc.reg_read(RegisterX86::CR0).unwrap_or(0);
        cr0 & 0x8000_0001 == 0x8000_0001
    }

    fn phys(&mut self, lin: u32, prot: Prot) -> Result<u64, UnicornError> {
        if self.paging() {
            self.uc
                .vmem_translate(u64::from(lin), prot)
                .map_err(|e| UnicornError::new("vmem_translate", e))
        } else {
            Ok(u64::from(lin))
        }
    }

    /// Read guest memory at a linear address.
    ///
    /// # Errors
    /// Not-present pages or memory outside RAM.
    pub fn read_linear(&mut self, lin: u32, out: &mut [u8]) -> Result<(), UnicornError> {
        for (i, b) in out.iter_mut().enumerate() {
            let p = self.phys(lin.wrapping_add(i as u32), Prot::READ)?;
            let mut x = [0u8];
            self.uc
                .mem_read(p, &mut x)
                .map_err(|e| UnicornError::new("mem_read", e))?;
            *b = x[0];
        }
        Ok(())
    }

    /// Write guest memory at a linear address.
    ///
    /// # Errors
    /// Not-present pages or memory outside RAM.
    pub fn write_linear(&mut self, lin: u32, data: &[u8]) -> Result<(), UnicornError> {
        for (i, b) in data.iter().enumerate() {
            let p = self.phys(lin.wrapping_add(i as u32), Prot::WRITE)?;
            self.uc
                .mem_write(p, &[*b])
                .map_err(|e| UnicornError::new("mem_write", e))?;
        }
        Ok(())
    }

    /// Patch code bytes at a linear address; translated blocks covering
    /// them are dropped.
    ///
    /// # Errors
    /// As [`UnicornMachine::write_linear`].
    pub fn patch_code(&mut self, lin: u32, data: &[u8]) -> Result<(), UnicornError> {
        self.write_linear(lin, data)?;
        let a = u64::from(lin);
        self.uc
            .ctl_remove_cache(a, a + data.len() as u64)
            .map_err(|e| UnicornError::new("ctl_remove_cache", e))
    }

    /// Read physical memory.
    ///
    /// # Errors
    /// Memory outside RAM.
    pub fn read_phys(&self, addr: u32, out: &mut [u8]) -> Result<(), UnicornError> {
        self.uc
            .mem_read(u64::from(addr), out)
            .map_err(|e| UnicornError::new("mem_read", e))
    }

    /// Write physical memory (translated code there is dropped).
    ///
    /// # Errors
    /// Memory outside RAM.
    pub fn write_phys(&mut self, addr: u32, data: &[u8]) -> Result<(), UnicornError> {
        let a = u64::from(addr);
        self.uc
            .mem_write(a, data)
            .map_err(|e| UnicornError::new("mem_write", e))?;
        self.uc
            .ctl_remove_cache(a, a + data.len() as u64)
            .map_err(|e| UnicornError::new("ctl_remove_cache", e))
    }
}
