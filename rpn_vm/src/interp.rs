//! The cycle-counted interpreter.
//!
//! One tracepoint hit runs one verified [`Program`] against the interrupted
//! [`TracedMachine`] and the DTO's variables, and ends in a [`HitOutcome`]. The
//! semantics are those of warp-debug-dtrace.txt §1.6 with the decisions of
//! DESIGN.md:
//!
//! * The stack is 16 u32 slots, zeroed at each hit. Push is
//!   `tos = (tos+1) & 15; slot[tos] = v`, pop is `v = slot[tos];
//!   tos = (tos-1) & 15`; popping past what was pushed reads older slots.
//! * Two-operand ops pop `a`, then `b`, and push `b op a`, wrapping.
//! * Jumps are relative to the next instruction; conditional ones peek TOS,
//!   `NN`/`PN` reading it as a signed i32. Falling off the end is Exit.
//! * `Log WN/DN` log whole items until the log limit; the rest is dropped,
//!   the record is marked incomplete and the hit ends. A memory or string
//!   item (3-byte prefix plus data) that does not fit is not logged at all.
//! * A failed memory reference logs a fault item (token 0xFF, 0xFE or 0xFD,
//!   length 4, the fault address), marks the record incomplete and ends the
//!   hit. If even the fault item does not fit, it is dropped.
//! * `Cnvrt FXS/SXF` outside the compatibility region end the hit as Exit
//!   with the incomplete flag.
//! * `Cnvrt SXF` pops the selector first, then the offset, as §1.6 says; so
//!   to undo `Cnvrt FXS` (which leaves the offset on top) put an `Xchg`
//!   between them.
//! * A variable index out of range (`Move VIi`, `Inc VIi`, `Push VIi`) ends
//!   the hit with [`HitOutcome::Error`]; variable changes made so far remain, as
//!   they do after Abort.
//!
//! Costs come from the opcode table: each instruction's fixed cycles plus
//! its per-unit cycles times the bytes or items it handled.
//!
//! The loop runs the program's steps (see `fuse.rs`): mostly one per
//! instruction, some standing for a fused run of them, with the same
//! effect on the stack, variables and log. Fixed cycles are not added step
//! by step: a hit that stops after step `i` has spent the prefix sum of the
//! steps up to `i`, less what its taken jumps skipped. Memory reads and
//! memory logs are kept out of line, so that the loop stays small.

mod log;
mod stack;

pub(crate) use log::{ItemAt, LOG_CAPACITY, LogBuffer};
pub(crate) use stack::Stack;

use crate::fuse::Kind;
use crate::machine::{MemFault, Reg, TracedMachine};
use crate::opcode::Op;
use crate::verify::{Program, STACK_SLOTS};

/// The default log limit, in bytes of data per record (logmax=).
pub const DEFAULT_LOGMAX: usize = 512;

/// Token of a logged memory item.
pub const TOKEN_MEMORY: u8 = 0;
/// Token of a logged string item.
pub const TOKEN_STRING: u8 = 1;

/// What a hit is run with besides the program: the tracepoint's codes and
/// the DTO's log limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// Major code of the tracepoint.
    pub major: u16,
    /// Minor code of the tracepoint.
    pub minor: u16,
    /// Most bytes of data a record may hold.
    pub logmax: usize,
}

/// A record to log in the system trace buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// Major code, after any SetMaj. Only the low byte reaches the trailer.
    pub major: u16,
    /// Minor code, after any SetMin.
    pub minor: u16,
    /// The logged bytes.
    pub data: &'a [u8],
    /// Whether logging stopped early (limit reached, fault, CRMA failure).
    pub incomplete: bool,
}

// Returned by every hit (interpreter and native tier).
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(size_of::<Record<'static>>() == 24);
    assert!(size_of::<RunResult<'static>>() == 32);
};

/// Why a hit ended in error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// A variable index at or beyond the DTO's variables.
    #[error("variable index {index} out of range ({vars} variables)")]
    VariableOutOfRange {
        /// The index used.
        index: u32,
        /// Variables the DTO has.
        vars: usize,
    },
}

/// How a hit ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HitOutcome<'a> {
    /// Exit, or the end of the program: log this record.
    Logged(Record<'a>),
    /// Abort: nothing is logged; variable changes remain.
    Aborted,
    /// Remove: nothing is logged and the tracepoint is to be removed.
    Removed,
    /// SysDump: nothing is logged; a system dump is requested.
    SysDump,
    /// The hit failed; nothing is logged and an error counts against the DTO.
    Error(RunError),
}

impl HitOutcome<'_> {
    /// The outcome's name as `os2trace rpn run --json` prints it.
    pub fn name(&self) -> &'static str {
        match self {
            HitOutcome::Logged(_) => "logged",
            HitOutcome::Aborted => "aborted",
            HitOutcome::Removed => "removed",
            HitOutcome::SysDump => "sysdump",
            HitOutcome::Error(_) => "error",
        }
    }
}

/// The result of one hit: its outcome and the cycles it consumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunResult<'a> {
    /// How the hit ended.
    pub outcome: HitOutcome<'a>,
    /// Cycles spent interpreting.
    pub cycles: u64,
}

/// Why the loop stopped early.
pub(crate) enum Stop {
    /// End the hit and log what there is, marked incomplete.
    Incomplete,
    /// Abort, Remove, SysDump or Error.
    Outcome(HitOutcome<'static>),
}

/// The interpreter: the circular stack and the log buffer, reused across
/// hits so that a hit allocates nothing.
///
/// The native tier is handed the interpreter's address and reaches its
/// stack, stack index and log length at the offsets `offset_of!` gives
/// (`jit/compile.rs`).
#[derive(Debug, Clone)]
pub struct Interpreter {
    pub(crate) stack: [u32; STACK_SLOTS],
    pub(crate) tos: usize,
    pub(crate) data: LogBuffer,
}

impl Default for Interpreter {
    fn default() -> Self {
        Interpreter::new()
    }
}

impl Interpreter {
    /// A fresh interpreter.
    pub fn new() -> Interpreter {
        Interpreter {
            stack: [0; STACK_SLOTS],
            tos: 0,
            data: LogBuffer::new(),
        }
    }

    /// The stack slots and top-of-stack index after the last hit.
    pub fn stack(&self) -> (&[u32; STACK_SLOTS], usize) {
        (&self.stack, self.tos)
    }

    /// Runs one hit.
    pub fn run<'s, M: TracedMachine + ?Sized>(
        &'s mut self,
        program: &Program,
        machine: &mut M,
        vars: &mut [u32],
        hit: Hit,
    ) -> RunResult<'s> {
        let mut st = Stack {
            slots: [0; STACK_SLOTS],
            tos: 0,
        };
        self.data.clear();
        let mut major = hit.major;
        let mut minor = hit.minor;
        // Per-unit costs; fixed costs are added at the end.
        let mut cycles: u64 = 0;
        let mut skipped: u64 = 0;
        // The length field of a logged item is a word.
        let logmax = hit.logmax.min(0xFFFF);
        let steps = &program.steps;
        let regs = &program.regs;
        let mut pc = 0;
        let stop = loop {
            let Some(step) = steps.get(pc) else {
                break None;
            };
            pc += 1;
            let arg = step.arg;
            match step.kind {
                Kind::PushReg => st.push(reg_of(machine, regs, arg)),
                Kind::PushW | Kind::PushD => st.push(arg),
                Kind::PushOxs => st.push(object_selector(machine, arg)),
                Kind::PushOxf => st.push(object_flat_base(machine, arg)),
                Kind::PushV => match vars.get(arg as usize) {
                    Some(&v) => st.push(v),
                    None => break Some(var_error(arg, vars)),
                },
                Kind::PushVii => {
                    let index = st.peek();
                    match vars.get(index as usize) {
                        Some(&v) => st.push(v),
                        None => break Some(var_error(index, vars)),
                    }
                }
                Kind::PushWis => {
                    let offset = st.pop();
                    let selector = st.pop() as u16;
                    match read_segmented::<M, 2>(machine, selector, offset) {
                        Ok(word) => st.push(u32::from(u16::from_le_bytes(word))),
                        Err(fault) => break Some(self.data.log_fault(fault, logmax)),
                    }
                }
                Kind::PushSis => {
                    let offset = st.pop();
                    let selector = st.pop() as u16;
                    let value = match read_segmented::<M, 4>(machine, selector, offset) {
                        Ok(dword) => u32::from_le_bytes(dword),
                        Err(fault) => break Some(self.data.log_fault(fault, logmax)),
                    };
                    st.push(value >> 16);
                    st.push(value & 0xFFFF);
                }
                Kind::PushFif => {
                    let address = st.pop();
                    match read_flat::<M, 4>(machine, address) {
                        Ok(dword) => st.push(u32::from_le_bytes(dword)),
                        Err(fault) => break Some(self.data.log_fault(fault, logmax)),
                    }
                }
                Kind::Add => st.binary(u32::wrapping_add),
                Kind::Sub => st.binary(u32::wrapping_sub),
                Kind::Mul => st.binary(u32::wrapping_mul),
                Kind::And => st.binary(|b, a| b & a),
                Kind::Or => st.binary(|b, a| b | a),
                Kind::Xor => st.binary(|b, a| b ^ a),
                Kind::Neg => st.slots[st.tos] = !st.slots[st.tos],
                Kind::Xchg => {
                    let below = st.below();
                    st.slots.swap(st.tos, below);
                }
                Kind::CnvrtDxs => {
                    let value = st.pop();
                    st.push(value >> 16);
                    st.push(value & 0xFFFF);
                }
                Kind::CnvrtSxd => {
                    let low = st.pop() & 0xFFFF;
                    let high = st.pop() & 0xFFFF;
                    st.push((high << 16) | low);
                }
                Kind::CnvrtFxs => {
                    let address = st.pop();
                    match machine.flat_to_segmented(address) {
                        Some((selector, offset)) => {
                            st.push(u32::from(selector));
                            st.push(u32::from(offset));
                        }
                        None => break Some(Stop::Incomplete),
                    }
                }
                Kind::CnvrtSxf => {
                    let selector = st.pop() as u16;
                    let offset = st.pop() as u16;
                    match machine.segmented_to_flat(selector, offset) {
                        Some(address) => st.push(address),
                        None => break Some(Stop::Incomplete),
                    }
                }
                Kind::MoveV => match vars.get_mut(arg as usize) {
                    Some(v) => *v = st.peek(),
                    None => break Some(var_error(arg, vars)),
                },
                Kind::MoveVii => {
                    let index = st.peek();
                    let value = st.slots[st.below()];
                    match vars.get_mut(index as usize) {
                        Some(v) => *v = value,
                        None => break Some(var_error(index, vars)),
                    }
                }
                Kind::IncV => match vars.get_mut(arg as usize) {
                    Some(v) => *v = v.wrapping_add(1),
                    None => break Some(var_error(arg, vars)),
                },
                Kind::IncVii => {
                    let index = st.peek();
                    match vars.get_mut(index as usize) {
                        Some(v) => *v = v.wrapping_add(1),
                        None => break Some(var_error(index, vars)),
                    }
                }
                Kind::OrV => match vars.get_mut(arg as usize) {
                    Some(v) => *v |= st.peek(),
                    None => break Some(var_error(arg, vars)),
                },
                Kind::JmpN => {
                    pc = arg as usize;
                    skipped += u64::from(step.skip);
                }
                Kind::JmpNn => {
                    if (st.peek() as i32) < 0 {
                        pc = arg as usize;
                        skipped += u64::from(step.skip);
                    }
                }
                Kind::JmpPn => {
                    if (st.peek() as i32) > 0 {
                        pc = arg as usize;
                        skipped += u64::from(step.skip);
                    }
                }
                Kind::JmpZn => {
                    if st.peek() == 0 {
                        pc = arg as usize;
                        skipped += u64::from(step.skip);
                    }
                }
                Kind::PopN => {
                    st.tos = st.tos.wrapping_sub(arg as usize) & (STACK_SLOTS - 1);
                    cycles += u64::from(Op::PopN.info().cycles_per_unit * arg);
                }
                Kind::LogWn => {
                    if let Err(stop) = self.data.log_items::<2>(&mut st, arg, logmax, &mut cycles) {
                        break Some(stop);
                    }
                }
                Kind::LogDn => {
                    if let Err(stop) = self.data.log_items::<4>(&mut st, arg, logmax, &mut cycles) {
                        break Some(stop);
                    }
                }
                Kind::PushRegs => {
                    for &reg in run(regs, arg, step.n) {
                        st.push(machine.reg(reg));
                    }
                }
                Kind::PushRegsLogDn => {
                    let pushed = run(regs, arg, step.n);
                    if let Err(stop) = self.push_log::<M, 4>(
                        &mut st,
                        machine,
                        pushed,
                        arg >> 16,
                        logmax,
                        &mut cycles,
                    ) {
                        break Some(stop);
                    }
                }
                Kind::PushRegsLogWn => {
                    let pushed = run(regs, arg, step.n);
                    if let Err(stop) = self.push_log::<M, 2>(
                        &mut st,
                        machine,
                        pushed,
                        arg >> 16,
                        logmax,
                        &mut cycles,
                    ) {
                        break Some(stop);
                    }
                }
                Kind::PushImmAdd => st.push_binary(arg, u32::wrapping_add),
                Kind::PushImmSub => st.push_binary(arg, u32::wrapping_sub),
                Kind::PushImmMul => st.push_binary(arg, u32::wrapping_mul),
                Kind::PushImmAnd => st.push_binary(arg, |b, a| b & a),
                Kind::PushImmOr => st.push_binary(arg, |b, a| b | a),
                Kind::PushImmXor => st.push_binary(arg, |b, a| b ^ a),
                Kind::PushRegAdd => st.push_binary(reg_of(machine, regs, arg), u32::wrapping_add),
                Kind::PushRegSub => st.push_binary(reg_of(machine, regs, arg), u32::wrapping_sub),
                Kind::PushRegMul => st.push_binary(reg_of(machine, regs, arg), u32::wrapping_mul),
                Kind::PushRegAnd => st.push_binary(reg_of(machine, regs, arg), |b, a| b & a),
                Kind::PushRegOr => st.push_binary(reg_of(machine, regs, arg), |b, a| b | a),
                Kind::PushRegXor => st.push_binary(reg_of(machine, regs, arg), |b, a| b ^ a),
                Kind::PushRegImmAdd => {
                    let reg = reg_of(machine, regs, u32::from(step.n));
                    st.push_pair_binary(reg, arg, u32::wrapping_add);
                }
                Kind::PushRegImmSub => {
                    let reg = reg_of(machine, regs, u32::from(step.n));
                    st.push_pair_binary(reg, arg, u32::wrapping_sub);
                }
                Kind::PushRegImmMul => {
                    let reg = reg_of(machine, regs, u32::from(step.n));
                    st.push_pair_binary(reg, arg, u32::wrapping_mul);
                }
                Kind::PushRegImmAnd => {
                    let reg = reg_of(machine, regs, u32::from(step.n));
                    st.push_pair_binary(reg, arg, |b, a| b & a);
                }
                Kind::PushRegImmOr => {
                    let reg = reg_of(machine, regs, u32::from(step.n));
                    st.push_pair_binary(reg, arg, |b, a| b | a);
                }
                Kind::PushRegImmXor => {
                    let reg = reg_of(machine, regs, u32::from(step.n));
                    st.push_pair_binary(reg, arg, |b, a| b ^ a);
                }
                Kind::LogMrs | Kind::LogArs => {
                    let offset = st.pop();
                    let selector = st.pop() as u16;
                    let length = st.pop();
                    let at = ItemAt::Segmented { selector, offset };
                    let string = matches!(step.kind, Kind::LogArs);
                    let logged =
                        self.data
                            .log_item(machine, at, length, string, logmax, &mut cycles);
                    if let Err(stop) = logged {
                        break Some(stop);
                    }
                }
                Kind::LogMrf | Kind::LogArf => {
                    let at = ItemAt::Flat(st.pop());
                    let length = st.pop();
                    let string = matches!(step.kind, Kind::LogArf);
                    let logged =
                        self.data
                            .log_item(machine, at, length, string, logmax, &mut cycles);
                    if let Err(stop) = logged {
                        break Some(stop);
                    }
                }
                Kind::SetMinW => minor = arg as u16,
                Kind::SetMin => minor = st.peek() as u16,
                Kind::SetMajW => major = arg as u16,
                Kind::SetMaj => major = st.peek() as u16,
                Kind::Exit => break None,
                Kind::Abort => break Some(Stop::Outcome(HitOutcome::Aborted)),
                Kind::Remove => break Some(Stop::Outcome(HitOutcome::Removed)),
                Kind::SysDump => break Some(Stop::Outcome(HitOutcome::SysDump)),
            }
        };
        self.stack = st.slots;
        self.tos = st.tos;
        // Fixed costs of the steps run: all up to `pc`, less those jumped.
        let fixed = program.prefix.get(pc).map_or(0, |&c| u64::from(c));
        let cycles = (cycles + fixed).saturating_sub(skipped);
        let outcome = match stop {
            None => HitOutcome::Logged(Record {
                major,
                minor,
                data: self.data.as_slice(),
                incomplete: false,
            }),
            Some(Stop::Incomplete) => HitOutcome::Logged(Record {
                major,
                minor,
                data: self.data.as_slice(),
                incomplete: true,
            }),
            Some(Stop::Outcome(outcome)) => outcome,
        };
        RunResult { outcome, cycles }
    }

    /// Pushes the registers of `pushed`, then logs `count` entries as
    /// dwords (`W` = 4, `Log DN`) or words (`W` = 2, `Log WN`). When the log
    /// takes exactly the pushed entries and they all fit, the registers go
    /// straight to their slots and to the log (at most 16 of them).
    #[inline(always)]
    fn push_log<M: TracedMachine + ?Sized, const W: usize>(
        &mut self,
        st: &mut Stack,
        machine: &M,
        pushed: &[Reg],
        count: u32,
        logmax: usize,
        cycles: &mut u64,
    ) -> Result<(), Stop> {
        let (op, start, len) = match W {
            4 => (Op::LogDn, self.data.len(), 4 * pushed.len()),
            _ => (Op::LogWn, self.data.len(), 2 * pushed.len()),
        };
        // Straight to slots and log only when no push overwrites another:
        // past 16 pushes the circular stack wraps and the log must read the
        // slots as they then are.
        if count as usize == pushed.len() && pushed.len() <= STACK_SLOTS && start + len <= logmax {
            let out = self.data.extend(len);
            // The last pushed is popped, and logged, first.
            for (i, (&reg, item)) in pushed.iter().zip(out.rchunks_exact_mut(W)).enumerate() {
                let value = machine.reg(reg);
                st.slots[(st.tos + 1 + i) & (STACK_SLOTS - 1)] = value;
                item.copy_from_slice(&value.to_le_bytes()[..W]);
            }
            *cycles += u64::from(op.info().cycles_per_unit) * u64::from(count);
            return Ok(());
        }
        for &reg in pushed {
            st.push(machine.reg(reg));
        }
        self.data.log_items::<W>(st, count, logmax, cycles)
    }
}

/// The registers of a fused push run: `n` entries of the program's
/// register table from `arg & 0xFFFF` (empty if the table is shorter, which
/// a program from the loader never is).
#[inline(always)]
fn run(regs: &[Reg], arg: u32, n: u8) -> &[Reg] {
    let start = (arg & 0xFFFF) as usize;
    regs.get(start..start + usize::from(n)).unwrap_or_default()
}

/// The register at `regs[arg]`, read from the machine.
#[inline(always)]
fn reg_of<M: TracedMachine + ?Sized>(machine: &M, regs: &[Reg], arg: u32) -> u32 {
    regs.get(arg as usize).map_or(0, |&reg| machine.reg(reg))
}

/// `N` bytes at `selector:offset`, out of line (see `log_item`).
#[inline(never)]
pub(crate) fn read_segmented<M: TracedMachine + ?Sized, const N: usize>(
    machine: &mut M,
    selector: u16,
    offset: u32,
) -> Result<[u8; N], MemFault> {
    let mut bytes = [0; N];
    machine.read_segmented(selector, offset, &mut bytes)?;
    Ok(bytes)
}

/// `N` bytes at a flat address, out of line (see `log_item`).
#[inline(never)]
pub(crate) fn read_flat<M: TracedMachine + ?Sized, const N: usize>(
    machine: &mut M,
    address: u32,
) -> Result<[u8; N], MemFault> {
    let mut bytes = [0; N];
    machine.read_flat(address, &mut bytes)?;
    Ok(bytes)
}

/// The selector of an object of the traced module, out of line: a table
/// lookup the loop rarely needs.
#[inline(never)]
fn object_selector<M: TracedMachine + ?Sized>(machine: &M, object: u32) -> u32 {
    u32::from(machine.object_selector(object))
}

/// The flat base of an object of the traced module, out of line.
#[inline(never)]
fn object_flat_base<M: TracedMachine + ?Sized>(machine: &M, object: u32) -> u32 {
    machine.object_flat_base(object)
}

fn var_error(index: u32, vars: &[u32]) -> Stop {
    Stop::Outcome(HitOutcome::Error(RunError::VariableOutOfRange {
        index,
        vars: vars.len(),
    }))
}
