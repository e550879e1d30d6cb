//! The translation of a verified program into x86-64 code: the driver,
//! its state, exits and callbacks (`ops.rs` translates each instruction).
//!
//! One pass in program order (jumps only go forward). The top-of-stack
//! index is a compile-time constant at every instruction: the hit starts
//! at 0 and every instruction pops and pushes a fixed number of entries, so
//! each push or pop is a load or store at a fixed offset of the 16-slot
//! stack. Where two paths meet (a jump target) with different indices the
//! program is refused; code no path reaches is not emitted.
//!
//! Registers while the code runs, all caller-saved, so that a hit needs no
//! prologue: RDI the frame (the registers alone for the lean entry), RSI
//! the interpreter, RDX the log buffer, RCX the variables (those four
//! passed in), R8 the cycles and R9 the log length (both set by the code
//! where first needed); EAX, R10, R11 and XMM0 scratch. Around
//! a callback the log length and cycles go to the frame's [`Slow`] block,
//! RDI to the machine
//! stack, and all are reloaded after.
//!
//! Within a straight-line run the compiler remembers which stack slot EAX
//! holds, which slots hold a known constant (`Push W/D`) and which hold a
//! guest register (`Push EAX`: the registers do not change during a hit),
//! and uses them instead of reloading. A slot so known is not stored when
//! it is written (it is *dirty*): it is stored before a jump, a jump
//! target, a callback and every exit (out-of-line exits store what was
//! dirty where they branch off), and a value written again before then is
//! never stored at all. Before EAX takes a new value, the slot it held is
//! stored if EAX was its only copy. So the stack is exact in memory
//! wherever the code can leave the straight line, except at jumps to a
//! target where every way in agrees on what is known of the slots (a
//! conditional jump over code that leaves the stack alone, say): there
//! nothing is stored, and the target keeps what is known. A first pass
//! finds those targets (it assumes all of them agree), the second trusts
//! what the first found and checks it, and a third, if the second found a
//! disagreement after all, stores at every jump; any other jump target
//! forgets all of it. The log length is known at
//! compile time until a memory or string log (or a join of two lengths):
//! there `Log WN/DN` compares the limit with a constant and writes at
//! constant offsets, and R9 is set only where it is read (before jumps,
//! callbacks and exits).
//!
//! Fixed cycles are summed at compile time and added to R8 where a
//! straight-line run ends (a jump, a jump target, an exit), so every way out
//! carries exactly the fixed cycles of the instructions run; per-unit
//! cycles are added where the interpreter adds them (`Pop N` and complete
//! `Log WN/DN` at compile time, the rest by the callbacks). Rare paths
//! (errors, faults, logs that overrun the limit) follow the main line.
//!
//! Immediate variable indices (`Push V`, `Move V`, `Inc V`, `Or V`) are not
//! checked here: `Compiled::run` runs the interpreter instead when the
//! variables are fewer than [`Output::vars`]. Indices from the stack
//! (`VIi`) are checked where they are used.

use iced_x86::IcedError;
use iced_x86::code_asm::*;
use std::mem::offset_of;

use super::frame::*;
use crate::interp::{Interpreter, LOG_CAPACITY};
use crate::opcode::Op;
use crate::verify::Program;

/// A compiled program.
pub(crate) struct Output {
    /// The machine code.
    pub(crate) code: Vec<u8>,
    /// One more than the largest immediate variable index: the code
    /// assumes at least this many variables.
    pub(crate) vars: usize,
    /// Whether the code reads the frame's [`Slow`] block (it calls back or
    /// checks a variable index).
    pub(crate) slow: bool,
    /// The same program for the lean entry, when it has one: code that
    /// reads nothing of the frame but the registers (so it is entered with
    /// RDI pointing at the sixteen registers alone) and checks no log
    /// limit, for hits whose log limit is at least [`Output::bound`].
    pub(crate) lean: Option<Vec<u8>>,
    /// The most any run can log: every `Log WN/DN` of the program once
    /// (jumps only go forward, so no instruction runs twice).
    pub(crate) bound: u32,
    /// Whether the program pushes no register past the eight general ones
    /// (its lean code reads only those).
    pub(crate) gprs_only: bool,
}

/// Why a program was not compiled.
#[derive(Debug)]
pub(super) enum Error {
    /// Two paths reach an instruction with different stack indices.
    Join,
    /// The lean entry was asked for and the program needs the frame (a
    /// callback, a variable index check, SetMaj or SetMin).
    Frame,
    /// The assembler refused (never expected).
    Asm,
}

impl From<IcedError> for Error {
    fn from(_: IcedError) -> Error {
        Error::Asm
    }
}

pub(super) type Result<T = ()> = std::result::Result<T, Error>;

pub(super) const REGS: i32 = offset_of!(Frame, regs) as i32;
pub(super) const LOGMAX: i32 = offset_of!(Frame, logmax) as i32;
pub(super) const MAJOR: i32 = offset_of!(Frame, major) as i32;
pub(super) const MINOR: i32 = offset_of!(Frame, minor) as i32;
pub(super) const SLOW: i32 = offset_of!(Frame, slow) as i32;
/// `Interpreter::stack`, from the interpreter's address (RSI).
pub(super) const STACK: i32 = offset_of!(Interpreter, stack) as i32;
/// `Interpreter::tos`, from the interpreter's address (RSI).
const TOS: i32 = offset_of!(Interpreter, tos) as i32;
/// The interpreter's log length, from its address (RSI).
const DATA_LEN: i32 = offset_of!(Interpreter, data.len) as i32;
// In the `Slow` block.
const LOG: i32 = offset_of!(Slow, log) as i32;
const LOG_LEN: i32 = offset_of!(Slow, log_len) as i32;
const INTERP: i32 = offset_of!(Slow, interp) as i32;
const VARS: i32 = offset_of!(Slow, vars) as i32;
pub(super) const VARS_LEN: i32 = offset_of!(Slow, vars_len) as i32;
const CYCLES: i32 = offset_of!(Slow, cycles) as i32;
const CALLBACK: i32 = offset_of!(Slow, callback) as i32;

/// Stack slot `t` (mod 16).
pub(super) fn slot(t: u8) -> AsmMemoryOperand {
    dword_ptr(slot_addr(t))
}

/// The address of stack slot `t` (mod 16).
pub(super) fn slot_addr(t: u8) -> AsmMemoryOperand {
    rsi + (STACK + 4 * i32::from(t & 15))
}

/// The address of guest register `r` (RDI: the frame, which starts with
/// them, or the registers alone).
pub(super) fn guest_addr(r: u8) -> AsmMemoryOperand {
    rdi + (REGS + 4 * i32::from(r))
}

/// Guest register `r`.
pub(super) fn guest_reg(r: u8) -> AsmMemoryOperand {
    dword_ptr(guest_addr(r))
}

/// Where a slot's value is.
#[derive(Clone, Copy)]
pub(super) enum Val {
    Eax,
    Imm(u32),
    /// An address (of the slot or of a guest register).
    Mem(AsmMemoryOperand),
}

/// An out-of-line path.
#[derive(Clone, Copy)]
pub(super) enum Cold {
    /// End the hit with `status` and stack index `tos`; a variable error
    /// has its index in EAX. `log`: the log length to put in R9 first.
    Exit {
        tos: u8,
        status: u32,
        pending: u32,
        log: Option<u32>,
        r8_zero: bool,
        slots: Slots,
    },
    /// `Log WN/DN,n` past the log limit: the hit ends with the stack index
    /// and log length before it, and `Compiled::run` logs what fits.
    Partial {
        tos: u8,
        n: u32,
        dn: bool,
        pending: u32,
        log: Option<u32>,
        r8_zero: bool,
        slots: Slots,
    },
}

/// What the compiler knows of the stack slots at a point: what an
/// out-of-line exit must store first, and what a jump brings to a target.
#[derive(Clone, Copy)]
pub(super) struct Slots {
    eax: Option<u8>,
    konst: [Option<u32>; 16],
    guest: [Option<u8>; 16],
    dirty: u16,
    /// Which write each slot holds (a number unique to each write), so
    /// that two points that agree on it hold the same values.
    writes: [u32; 16],
}

impl Slots {
    /// What holds on both of two ways into a point, if they agree: the same
    /// writes, known the same way, with memory stale where it is on either.
    fn merge(self, other: Slots) -> Option<Slots> {
        let same = self.eax == other.eax
            && self.konst == other.konst
            && self.guest == other.guest
            && self.writes == other.writes;
        same.then_some(Slots {
            dirty: self.dirty | other.dirty,
            ..self
        })
    }
}

pub(super) struct Gen {
    pub(super) a: CodeAssembler,
    /// Instructions in the program.
    pub(super) n: usize,
    /// The label of every jump target.
    pub(super) labels: Vec<Option<CodeLabel>>,
    /// The stack index jumps bring to each instruction.
    entry: Vec<Option<u8>>,
    cold: Vec<(CodeLabel, Cold)>,
    /// Fixed cycles of the current straight-line run not yet in R8.
    pub(super) pending: u32,
    /// Whether R8 is still unset (the code is entered with it undefined):
    /// the cycles so far are `pending` alone.
    pub(super) r8_zero: bool,
    /// Instruction count when the last label was set.
    last_label: Option<usize>,
    /// The stack slot (mod 16) whose value EAX holds, if any.
    pub(super) eax: Option<u8>,
    /// Slots (mod 16) known to hold a constant.
    pub(super) konst: [Option<u32>; 16],
    /// Slots (mod 16) known to hold a guest register (its `Reg` number).
    pub(super) guest: [Option<u8>; 16],
    /// Slots (mod 16) whose memory is stale (bit `s`): EAX, `konst` or
    /// `guest` has the value.
    pub(super) dirty: u16,
    /// The log length, when known at compile time on this path.
    pub(super) log: Option<u32>,
    /// Whether R9 holds the log length (always so when `log` is `None`).
    pub(super) log_exact: bool,
    /// The log length jumps bring to each instruction: `None` before any
    /// jump, `Some(None)` when not known.
    entry_log: Vec<Option<Option<u32>>>,
    /// The log length at each jump target, when every way in brings the
    /// same one.
    label_log: Vec<Option<u32>>,
    /// `label_log` of an earlier pass: jumps to these targets, and the
    /// fall-through into them, leave R9 unset.
    pub(super) known: Vec<Option<u32>>,
    /// Whether the code reads the [`Slow`] block.
    pub(super) slow: bool,
    /// Jump targets whose ways in are taken to agree on the slots (jumps
    /// there store nothing): all of them in a first pass.
    keep: Vec<bool>,
    /// What the jumps to each kept target bring.
    entry_slots: Vec<Option<Slots>>,
    /// Kept targets whose ways in did not agree after all.
    disagree: Vec<bool>,
    /// See [`Slots::writes`].
    pub(super) writes: [u32; 16],
    next_gen: u32,
    /// Code for the lean entry: RDI points at the registers alone, and no
    /// `Log WN/DN` checks the log limit (the caller checked the program's
    /// bound against it).
    pub(super) lean: bool,
}

/// The program's instructions, jump operands as target instruction indices
/// (the instruction count for the end).
fn plain(program: &Program) -> Vec<(Op, u32)> {
    let list: Vec<_> = program.instructions().collect();
    let offsets: Vec<usize> = list.iter().map(|(o, _)| *o).collect();
    list.iter()
        .map(|&(offset, instr)| {
            let mut arg = instr.operand;
            if instr.op.is_jump() {
                let target = offset + instr.len() + instr.operand as usize;
                arg = offsets.partition_point(|&o| o < target) as u32;
            }
            (instr.op, arg)
        })
        .collect()
}

/// Compiles `program`; `None` when a join has two stack indices.
pub(crate) fn compile(program: &Program) -> Option<Output> {
    let ops = plain(program);
    let vars = ops
        .iter()
        .filter(|(op, _)| matches!(op, Op::PushV | Op::MoveV | Op::IncV | Op::OrV))
        .map(|&(_, index)| index as usize + 1)
        .max()
        .unwrap_or(0);
    let bound: u32 = ops
        .iter()
        .map(|&(op, n)| match op {
            Op::LogDn => 4 * n,
            Op::LogWn => 2 * n,
            _ => 0,
        })
        .sum();
    let (code, slow) = generate(&ops, false).ok()?;
    let lean = if bound as usize <= LOG_CAPACITY {
        generate(&ops, true).ok().map(|(code, _)| code)
    } else {
        None
    };
    let gprs_only = ops
        .iter()
        .filter_map(|&(op, _)| op.pushed_register())
        .all(|reg| (reg as usize) < 8);
    Some(Output {
        code,
        vars,
        slow,
        lean,
        bound,
        gprs_only,
    })
}

/// The code of `ops` for the frame entry, or for the lean one (`lean`);
/// and whether it reads the [`Slow`] block.
fn generate(ops: &[(Op, u32)], lean: bool) -> Result<(Vec<u8>, bool)> {
    let n = ops.len();
    let mut g = Gen::new(ops, vec![None; n], vec![true; n], lean)?;
    g.program(ops)?;
    if g.label_log.iter().any(Option::is_some) || g.disagree.contains(&true) {
        // Again, knowing which jump targets have a known log length (jumps
        // there need not set R9) and which ones the ways in agree on.
        let known = std::mem::take(&mut g.label_log);
        let keep: Vec<bool> = g.disagree.iter().map(|&d| !d).collect();
        g = Gen::new(ops, known.clone(), keep, lean)?;
        g.program(ops)?;
        if g.disagree.contains(&true) {
            // Storing the slots at every jump, as the targets disagree.
            g = Gen::new(ops, known, vec![false; n], lean)?;
            g.program(ops)?;
        }
    }
    let slow = g.slow;
    Ok((g.a.assemble(0)?, slow))
}

impl Gen {
    fn new(ops: &[(Op, u32)], known: Vec<Option<u32>>, keep: Vec<bool>, lean: bool) -> Result<Gen> {
        let mut a = CodeAssembler::new(64)?;
        let mut labels = vec![None; ops.len()];
        for &(op, arg) in ops {
            if op.is_jump() && (arg as usize) < ops.len() {
                labels[arg as usize] = Some(a.create_label());
            }
        }
        Ok(Gen {
            a,
            n: ops.len(),
            labels,
            entry: vec![None; ops.len()],
            cold: Vec::new(),
            pending: 0,
            r8_zero: true,
            last_label: None,
            eax: None,
            // Every slot starts at zero: `Compiled::run` zeroes the stack
            // before calling the frame entry; the lean code stores the
            // zeros itself, where no other value replaces them first.
            konst: [Some(0); 16],
            guest: [None; 16],
            dirty: if lean { 0xFFFF } else { 0 },
            // R9 is set where it is first read.
            log: Some(0),
            log_exact: false,
            entry_log: vec![None; ops.len()],
            label_log: vec![None; ops.len()],
            known,
            slow: false,
            keep,
            entry_slots: vec![None; ops.len()],
            disagree: vec![false; ops.len()],
            writes: [0; 16],
            next_gen: 1,
            lean,
        })
    }

    /// Places `label` here, forgetting what is known of the slots (every
    /// way in stored them).
    fn set_label(&mut self, label: &mut CodeLabel) -> Result {
        if self.dirty != 0 {
            return Err(Error::Asm);
        }
        self.place_label(label)?;
        self.eax = None;
        self.konst = [None; 16];
        self.guest = [None; 16];
        Ok(())
    }

    /// Places `label` here.
    fn place_label(&mut self, label: &mut CodeLabel) -> Result {
        // One label per instruction: two in a row get a NOP between them.
        if self.last_label == Some(self.a.instructions().len()) {
            self.a.nop()?;
        }
        self.a.set_label(label)?;
        self.last_label = Some(self.a.instructions().len());
        Ok(())
    }

    /// Whether jumps to instruction `target` keep what is known of the
    /// slots (the end: the out-of-line exit stores it).
    pub(super) fn keeps(&self, target: usize) -> bool {
        self.keep.get(target).is_none_or(|&keep| keep)
    }

    /// Before a jump to `target`: stores the slots, or, for a kept target,
    /// records what the jump brings.
    pub(super) fn leave_for(&mut self, target: usize) -> Result {
        if !self.keeps(target) {
            return self.flush_slots();
        }
        if target < self.n {
            let here = self.slots();
            self.entry_slots[target] = match self.entry_slots[target] {
                None => Some(here),
                Some(there) => match there.merge(here) {
                    Some(both) => Some(both),
                    None => {
                        self.disagree[target] = true;
                        Some(there)
                    }
                },
            };
        }
        Ok(())
    }

    /// Takes what is known of the slots from `slots`.
    fn restore(&mut self, slots: Slots) {
        self.eax = slots.eax;
        self.konst = slots.konst;
        self.guest = slots.guest;
        self.dirty = slots.dirty;
        self.writes = slots.writes;
    }

    fn program(&mut self, ops: &[(Op, u32)]) -> Result {
        let mut cur = Some(0u8);
        for (i, &(op, arg)) in ops.iter().enumerate() {
            if let Some(mut label) = self.labels[i] {
                let jumped = self.entry_log[i];
                let (tos, log) = match (cur, self.entry[i]) {
                    (Some(t), Some(e)) if t != e => return Err(Error::Join),
                    (Some(t), _) => {
                        if self.keep[i] {
                            let here = self.slots();
                            let merged = match self.entry_slots[i] {
                                None => Some(here),
                                Some(there) => there.merge(here),
                            };
                            match merged {
                                Some(both) => self.restore(both),
                                None => self.disagree[i] = true,
                            }
                        } else {
                            self.flush_slots()?;
                        }
                        self.flush()?;
                        if self.known[i].is_none() {
                            self.sync_log()?;
                        }
                        let log = match jumped {
                            Some(l) if l != self.log => None,
                            _ => self.log,
                        };
                        (Some(t), log)
                    }
                    (None, e) => {
                        if self.keep[i] {
                            // What the jumps brought (nothing is known where
                            // none came: the code is not reached).
                            let nothing = Slots {
                                eax: None,
                                konst: [None; 16],
                                guest: [None; 16],
                                dirty: 0,
                                writes: self.writes,
                            };
                            self.restore(self.entry_slots[i].unwrap_or(nothing));
                        }
                        (e, jumped.flatten())
                    }
                };
                cur = tos;
                if self.keep[i] {
                    self.place_label(&mut label)?;
                } else {
                    self.set_label(&mut label)?;
                }
                self.label_log[i] = log;
                self.log = log;
                match self.known[i] {
                    // Every way in set R9.
                    None => self.log_exact = true,
                    // The same length on every way in, as the earlier pass
                    // found (the log lengths do not depend on where R9 is
                    // set); R9 is not set.
                    Some(len) if log == Some(len) => self.log_exact = false,
                    Some(_) => return Err(Error::Asm),
                }
            }
            if let Some(t) = cur {
                cur = self.instr(op, arg, t)?;
            }
        }
        if let Some(t) = cur {
            self.exit(t, STATUS_LOGGED)?;
        }
        for (mut label, cold) in std::mem::take(&mut self.cold) {
            self.set_label(&mut label)?;
            self.cold_path(cold)?;
        }
        // A label on unreachable code at the end needs an instruction.
        if self.last_label == Some(self.a.instructions().len()) {
            self.a.int3()?;
        }
        Ok(())
    }

    /// Reloads the working registers from the frame (in RDI) and its
    /// [`Slow`] block.
    fn load_state(&mut self) -> Result {
        self.a.mov(r10, qword_ptr(rdi + SLOW))?;
        self.a.mov(rsi, qword_ptr(r10 + INTERP))?;
        self.a.mov(rdx, qword_ptr(r10 + LOG))?;
        self.a.mov(rcx, qword_ptr(r10 + VARS))?;
        self.a.mov(r8, qword_ptr(r10 + CYCLES))?;
        self.a.mov(r9, qword_ptr(r10 + LOG_LEN))?;
        Ok(())
    }

    /// Adds the pending fixed cycles to R8 (sets R8 to them if it is
    /// unset); R8 is set after it.
    pub(super) fn flush(&mut self) -> Result {
        if self.r8_zero {
            self.a.mov(r8d, self.pending)?;
            self.r8_zero = false;
        } else if self.pending != 0 {
            self.a.add(r8, self.pending as i32)?;
        }
        self.pending = 0;
        Ok(())
    }

    /// Puts the log length in R9 if only the compiler knows it.
    pub(super) fn sync_log(&mut self) -> Result {
        if let (Some(len), false) = (self.log, self.log_exact) {
            self.a.mov(r9d, len)?;
            self.log_exact = true;
        }
        Ok(())
    }

    /// The log length an out-of-line path must put in R9 first.
    pub(super) fn log_to_sync(&self) -> Option<u32> {
        if self.log_exact { None } else { self.log }
    }

    /// Ends the hit here: stores the stack index `tos` and the log length
    /// in the interpreter and returns the `NativeExit` of `status` (with
    /// R10 in its high half when `r10_high`), the cycles in RDX.
    pub(super) fn exit_with(&mut self, tos: u8, status: u64, r10_high: bool) -> Result {
        self.flush_slots()?;
        if self.r8_zero {
            self.a.mov(edx, self.pending)?;
            self.pending = 0;
        } else if self.pending != 0 {
            self.a.lea(rdx, qword_ptr(r8 + self.pending as i32))?;
            self.pending = 0;
        } else {
            self.a.mov(rdx, r8)?;
        }
        self.a.mov(qword_ptr(rsi + TOS), i32::from(tos & 15))?;
        match self.log {
            Some(len) => self.a.mov(qword_ptr(rsi + DATA_LEN), len as i32)?,
            None => self.a.mov(qword_ptr(rsi + DATA_LEN), r9)?,
        }
        if r10_high {
            self.a.shl(r10, 32)?;
            self.a.lea(rax, qword_ptr(r10 + status as i32))?;
        } else if status > u64::from(u32::MAX) {
            self.a.mov(rax, status)?;
        } else if status == 0 {
            self.a.xor(eax, eax)?;
        } else {
            self.a.mov(eax, status as u32)?;
        }
        self.a.ret()?;
        Ok(())
    }

    /// Ends the hit here with `status`, the stack index `tos`.
    pub(super) fn exit(&mut self, tos: u8, status: u32) -> Result {
        self.exit_with(tos, u64::from(status), false)
    }

    /// A label for an out-of-line path.
    pub(super) fn cold(&mut self, cold: Cold) -> CodeLabel {
        let label = self.a.create_label();
        self.cold.push((label, cold));
        label
    }

    /// An out-of-line exit that ends the hit with `status`, with the
    /// pending cycles of this point.
    pub(super) fn cold_exit(&mut self, tos: u8, status: u32) -> CodeLabel {
        self.cold(Cold::Exit {
            tos,
            status,
            pending: self.pending,
            log: self.log_to_sync(),
            r8_zero: self.r8_zero,
            slots: self.slots(),
        })
    }

    /// What is known of the slots here, for an out-of-line path.
    pub(super) fn slots(&self) -> Slots {
        Slots {
            eax: self.eax,
            konst: self.konst,
            guest: self.guest,
            dirty: self.dirty,
            writes: self.writes,
        }
    }

    fn cold_path(&mut self, cold: Cold) -> Result {
        // The log length: known here when the main line had it, else in R9.
        let (Cold::Exit {
            log,
            r8_zero,
            slots,
            ..
        }
        | Cold::Partial {
            log,
            r8_zero,
            slots,
            ..
        }) = cold;
        // The slots as they were where the main line branched here (its
        // registers too): the exit stores what was dirty.
        self.restore(slots);
        self.log = log;
        self.log_exact = log.is_none();
        self.r8_zero = r8_zero;
        match cold {
            Cold::Exit {
                tos,
                status,
                pending,
                ..
            } => {
                self.pending = pending;
                if status == STATUS_VAR_ERROR {
                    // The index, zero-extended, into the high half.
                    self.a.mov(r10d, eax)?;
                    return self.exit_with(tos, u64::from(status), true);
                }
                self.exit(tos, status)
            }
            Cold::Partial {
                tos,
                n,
                dn,
                pending,
                ..
            } => {
                // `Compiled::run` logs what fits.
                self.pending = pending;
                let status = if dn {
                    STATUS_PARTIAL_DN
                } else {
                    STATUS_PARTIAL_WN
                };
                self.exit_with(tos, u64::from(status) | (u64::from(n) << 32), false)
            }
        }
    }

    /// Calls the callback with `op`; the arguments `a`, `b`, `c` are in
    /// R10D, R11D and EAX. The result is in RAX.
    pub(super) fn call(&mut self, op: u32) -> Result {
        self.needs_frame()?;
        // The caller stored the slots before loading the arguments (a
        // store may need R11).
        if self.dirty != 0 {
            return Err(Error::Asm);
        }
        self.slow = true;
        self.flush()?;
        self.sync_log()?;
        self.a.mov(edx, r10d)?;
        self.a.mov(ecx, r11d)?;
        self.a.mov(r10, qword_ptr(rdi + SLOW))?;
        self.a.mov(qword_ptr(r10 + LOG_LEN), r9)?;
        self.a.mov(qword_ptr(r10 + CYCLES), r8)?;
        // The return address and this push: RSP is 16-aligned at the call.
        self.a.push(rdi)?;
        self.a.mov(r8d, eax)?;
        self.a.mov(esi, op)?;
        self.a.call(qword_ptr(r10 + CALLBACK))?;
        self.a.pop(rdi)?;
        self.eax = None;
        self.load_state()
    }

    /// Stores slot `s` if it is dirty (through R11 for a guest register).
    pub(super) fn flush_slot(&mut self, s: u8) -> Result {
        let s = s & 15;
        let i = usize::from(s);
        if self.dirty & (1 << s) == 0 {
            return Ok(());
        }
        if self.eax == Some(s) {
            self.a.mov(slot(s), eax)?;
        } else if let Some(v) = self.konst[i] {
            self.a.mov(slot(s), v as i32)?;
        } else if let Some(r) = self.guest[i] {
            self.a.mov(r11d, guest_reg(r))?;
            self.a.mov(slot(s), r11d)?;
        } else {
            return Err(Error::Asm);
        }
        self.dirty &= !(1 << s);
        Ok(())
    }

    /// Stores every dirty slot: the stack is exact in memory after it.
    /// Runs of zeros go out sixteen or eight bytes at a time.
    pub(super) fn flush_slots(&mut self) -> Result {
        let zeros: u16 = (0..16)
            .filter(|&s| self.konst[s] == Some(0))
            .fold(0, |m, s| m | (1 << s));
        let mut zero_xmm = false;
        for group in 0..4u8 {
            let bits = 0xFu16 << (4 * group);
            if self.dirty & zeros & bits == bits {
                if !zero_xmm {
                    self.a.xorps(xmm0, xmm0)?;
                    zero_xmm = true;
                }
                self.a.movups(xmmword_ptr(slot_addr(4 * group)), xmm0)?;
                self.dirty &= !bits;
            }
        }
        for pair in 0..8u8 {
            let bits = 0x3u16 << (2 * pair);
            if self.dirty & zeros & bits == bits {
                self.a.mov(qword_ptr(slot_addr(2 * pair)), 0)?;
                self.dirty &= !bits;
            }
        }
        for s in 0..16 {
            self.flush_slot(s)?;
        }
        Ok(())
    }

    /// Before EAX takes a value that is not the slot it holds: stores that
    /// slot if EAX is its only copy. EAX holds no slot after it.
    pub(super) fn spill_eax(&mut self) -> Result {
        if let Some(s) = self.eax {
            let i = usize::from(s);
            if self.konst[i].is_none() && self.guest[i].is_none() {
                self.flush_slot(s)?;
            }
        }
        self.eax = None;
        Ok(())
    }

    /// Before EAX takes the new value of slot `s`: as [`Gen::spill_eax`],
    /// except that the old value of `s` itself is not stored.
    pub(super) fn spill_eax_for(&mut self, s: u8) -> Result {
        if self.eax == Some(s & 15) {
            self.eax = None;
            return Ok(());
        }
        self.spill_eax()
    }

    /// Where slot `s`'s value can be read without code: EAX, a constant,
    /// or memory (the slot, or the guest register it holds).
    pub(super) fn read(&self, s: u8) -> Val {
        let s = s & 15;
        let i = usize::from(s);
        if self.eax == Some(s) {
            Val::Eax
        } else if let Some(v) = self.konst[i] {
            Val::Imm(v)
        } else if let Some(r) = self.guest[i] {
            Val::Mem(guest_addr(r))
        } else {
            Val::Mem(slot_addr(s))
        }
    }

    /// Puts slot `s`'s value in the 32-bit register `reg` (not EAX).
    pub(super) fn read_into(&mut self, reg: AsmRegister32, s: u8) -> Result {
        match self.read(s) {
            Val::Eax => self.a.mov(reg, eax)?,
            Val::Imm(v) => self.a.mov(reg, v)?,
            Val::Mem(at) => self.a.mov(reg, dword_ptr(at))?,
        }
        Ok(())
    }

    /// Notes that EAX holds the new value of slot `s` (the caller spilled
    /// what EAX held before, or it held the slot being overwritten).
    pub(super) fn set_eax_slot(&mut self, s: u8) {
        let s = s & 15;
        self.wrote(s);
        self.konst[usize::from(s)] = None;
        self.guest[usize::from(s)] = None;
        self.dirty |= 1 << s;
        self.eax = Some(s);
    }

    /// Gives slot `s` a new write number.
    fn wrote(&mut self, s: u8) {
        self.writes[usize::from(s)] = self.next_gen;
        self.next_gen += 1;
    }

    /// Notes that slot `s` now holds constant `v`, not stored yet.
    pub(super) fn set_const(&mut self, s: u8, v: u32) {
        let s = s & 15;
        self.wrote(s);
        self.konst[usize::from(s)] = Some(v);
        self.guest[usize::from(s)] = None;
        self.dirty |= 1 << s;
        if self.eax == Some(s) {
            self.eax = None;
        }
    }

    /// Notes that slot `s` now holds guest register `r`, not stored yet.
    pub(super) fn set_guest(&mut self, s: u8, r: u8) {
        let s = s & 15;
        self.wrote(s);
        self.konst[usize::from(s)] = None;
        self.guest[usize::from(s)] = Some(r);
        self.dirty |= 1 << s;
        if self.eax == Some(s) {
            self.eax = None;
        }
    }

    /// Notes that slot `s` was stored in memory with a new value.
    pub(super) fn stored(&mut self, s: u8) {
        let s = s & 15;
        self.wrote(s);
        self.konst[usize::from(s)] = None;
        self.guest[usize::from(s)] = None;
        self.dirty &= !(1 << s);
        if self.eax == Some(s) {
            self.eax = None;
        }
    }

    /// Loads slot `s` into EAX unless EAX holds it, storing what EAX held
    /// first if needed.
    pub(super) fn load_eax(&mut self, s: u8) -> Result {
        let s = s & 15;
        if self.eax == Some(s) {
            return Ok(());
        }
        self.spill_eax()?;
        match self.read(s) {
            Val::Eax => {}
            Val::Imm(v) => self.a.mov(eax, v)?,
            Val::Mem(at) => self.a.mov(eax, dword_ptr(at))?,
        }
        self.eax = Some(s);
        Ok(())
    }

    /// Notes that the code reads the frame beyond the registers: an error
    /// for the lean entry.
    pub(super) fn needs_frame(&mut self) -> Result {
        if self.lean { Err(Error::Frame) } else { Ok(()) }
    }

    /// Calls the callback; if it fails, the hit ends incomplete with the
    /// stack index `tos`.
    pub(super) fn call_or_stop(&mut self, op: u32, tos: u8) -> Result {
        self.call(op)?;
        let stop = self.cold_exit(tos, STATUS_INCOMPLETE);
        self.a.bt(rax, 32)?;
        self.a.jc(stop)?;
        Ok(())
    }

    /// Before a jump to `target` (the end: `n`): puts the log length in R9
    /// unless the target has a known one.
    pub(super) fn sync_log_for(&mut self, target: usize) -> Result {
        if self.known.get(target).is_some_and(Option::is_some) {
            return Ok(());
        }
        self.sync_log()
    }

    /// Records that a jump brings stack index `tos` and the current log
    /// length to instruction `target`; the caller has synced R9.
    pub(super) fn reach(&mut self, target: usize, tos: u8) -> Result {
        match self.entry[target] {
            Some(e) if e != tos => Err(Error::Join),
            _ => {
                self.entry[target] = Some(tos);
                self.entry_log[target] = Some(match self.entry_log[target] {
                    Some(l) if l != self.log => None,
                    _ => self.log,
                });
                Ok(())
            }
        }
    }
}
