//! The translation of a verified program into x86-64 code.
//!
//! One pass in program order (jumps only go forward). The top-of-stack
//! index is a compile-time constant at every instruction: the hit starts
//! at 0 and every instruction pops and pushes a fixed number of entries, so
//! each push or pop is a load or store at a fixed offset of the frame's
//! 16-slot stack. Where two paths meet (a jump target) with different
//! indices the program is refused; code no path reaches is not emitted.
//!
//! Registers while the code runs, all caller-saved so that a hit needs no
//! prologue: RDI the frame, RSI the stack, RDX the log buffer, RCX the log
//! length, R8 the cycles, R9 the variables; EAX, R10, R11 scratch. Around
//! a callback the log length and cycles go to the frame, RDI to the machine
//! stack, and all are reloaded after. Fixed cycles are summed at
//! compile time and added to R8 where a straight-line run ends (a jump, a
//! jump target, an exit), so every way out carries exactly the fixed cycles
//! of the instructions run; per-unit cycles are added where the interpreter
//! adds them (`Pop N` and complete `Log WN/DN` at compile time, the rest by
//! the callbacks). Rare paths (errors, faults, logs that overrun the limit)
//! are emitted after the main line.

use iced_x86::IcedError;
use iced_x86::code_asm::*;
use std::mem::offset_of;

use super::frame::*;
use crate::opcode::Op;
use crate::verify::Program;

/// A compiled program: its machine code, and the registers it reads from
/// the frame (which `run` must snapshot), bit `Reg as usize`.
pub(crate) struct Output {
    pub(crate) code: Vec<u8>,
    pub(crate) regs: u16,
}

/// Why a program was not compiled.
#[derive(Debug)]
enum Error {
    /// Two paths reach an instruction with different stack indices.
    Join,
    /// The assembler refused (never expected).
    Asm,
}

impl From<IcedError> for Error {
    fn from(_: IcedError) -> Error {
        Error::Asm
    }
}

type Result<T = ()> = std::result::Result<T, Error>;

const REGS: i32 = offset_of!(Frame, regs) as i32;
const LOG: i32 = offset_of!(Frame, log) as i32;
const LOG_LEN: i32 = offset_of!(Frame, log_len) as i32;
const LOGMAX: i32 = offset_of!(Frame, logmax) as i32;
const STACK: i32 = offset_of!(Frame, stack) as i32;
const VARS: i32 = offset_of!(Frame, vars) as i32;
const VARS_LEN: i32 = offset_of!(Frame, vars_len) as i32;
const CYCLES: i32 = offset_of!(Frame, cycles) as i32;
const TOS: i32 = offset_of!(Frame, tos) as i32;
const ERR_INDEX: i32 = offset_of!(Frame, err_index) as i32;
const MAJOR: i32 = offset_of!(Frame, major) as i32;
const MINOR: i32 = offset_of!(Frame, minor) as i32;
const CALLBACK: i32 = offset_of!(Frame, callback) as i32;

/// Stack slot `t` (mod 16).
fn slot(t: u8) -> AsmMemoryOperand {
    dword_ptr(rsi + 4 * i32::from(t & 15))
}

/// The variable index a variable error reports.
#[derive(Clone, Copy)]
enum Index {
    /// An immediate.
    Imm(u32),
    /// In EAX when the error path is taken.
    Eax,
}

/// An out-of-line path.
#[derive(Clone, Copy)]
enum Cold {
    /// End the hit with `status`; `tos` is stored unless a callback set it.
    Exit {
        tos: u8,
        status: u32,
        pending: u32,
        index: Option<Index>,
    },
    /// `Log WN/DN,n` past the log limit: the callback logs what fits.
    Partial {
        tos: u8,
        n: u32,
        dn: bool,
        pending: u32,
    },
}

struct Gen {
    a: CodeAssembler,
    /// Instructions in the program.
    n: usize,
    /// The label of every jump target.
    labels: Vec<Option<CodeLabel>>,
    /// The stack index jumps bring to each instruction.
    entry: Vec<Option<u8>>,
    epilogue: CodeLabel,
    cold: Vec<(CodeLabel, Cold)>,
    /// Fixed cycles of the current straight-line run not yet in R13.
    pending: u32,
    /// Instruction count when the last label was set.
    last_label: Option<usize>,
    /// Registers read, bit `Reg as usize`.
    regs: u16,
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
    let mut g = Gen::new(&ops).ok()?;
    g.program(&ops).ok()?;
    let code = g.a.assemble(0).ok()?;
    Some(Output { code, regs: g.regs })
}

impl Gen {
    fn new(ops: &[(Op, u32)]) -> Result<Gen> {
        let mut a = CodeAssembler::new(64)?;
        let mut labels = vec![None; ops.len()];
        for &(op, arg) in ops {
            if op.is_jump() && (arg as usize) < ops.len() {
                labels[arg as usize] = Some(a.create_label());
            }
        }
        let epilogue = a.create_label();
        Ok(Gen {
            a,
            n: ops.len(),
            labels,
            entry: vec![None; ops.len()],
            epilogue,
            cold: Vec::new(),
            pending: 0,
            last_label: None,
            regs: 0,
        })
    }

    fn set_label(&mut self, label: &mut CodeLabel) -> Result {
        // One label per instruction: two in a row get a NOP between them.
        if self.last_label == Some(self.a.instructions().len()) {
            self.a.nop()?;
        }
        self.a.set_label(label)?;
        self.last_label = Some(self.a.instructions().len());
        Ok(())
    }

    fn program(&mut self, ops: &[(Op, u32)]) -> Result {
        self.prologue()?;
        let mut cur = Some(0u8);
        for (i, &(op, arg)) in ops.iter().enumerate() {
            if let Some(mut label) = self.labels[i] {
                cur = match (cur, self.entry[i]) {
                    (Some(t), Some(e)) if t != e => return Err(Error::Join),
                    (Some(t), _) => {
                        self.flush()?;
                        Some(t)
                    }
                    (None, e) => e,
                };
                self.set_label(&mut label)?;
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
        let mut epilogue = self.epilogue;
        self.set_label(&mut epilogue)?;
        self.a.mov(qword_ptr(rdi + LOG_LEN), rcx)?;
        self.a.mov(qword_ptr(rdi + CYCLES), r8)?;
        self.a.ret()?;
        Ok(())
    }

    fn prologue(&mut self) -> Result {
        self.load_state(true)
    }

    /// Loads the working registers from the frame (in RDI); at the start
    /// of the hit, the log length and cycles are zero.
    fn load_state(&mut self, start: bool) -> Result {
        self.a.mov(rsi, qword_ptr(rdi + STACK))?;
        self.a.mov(rdx, qword_ptr(rdi + LOG))?;
        if start {
            self.a.xor(ecx, ecx)?;
            self.a.xor(r8d, r8d)?;
        } else {
            self.a.mov(rcx, qword_ptr(rdi + LOG_LEN))?;
            self.a.mov(r8, qword_ptr(rdi + CYCLES))?;
        }
        self.a.mov(r9, qword_ptr(rdi + VARS))?;
        Ok(())
    }

    /// Adds the pending fixed cycles to R8.
    fn flush(&mut self) -> Result {
        if self.pending != 0 {
            self.a.add(r8, self.pending as i32)?;
            self.pending = 0;
        }
        Ok(())
    }

    /// Ends the hit here with `status`, the stack index `tos`.
    fn exit(&mut self, tos: u8, status: u32) -> Result {
        self.a.mov(qword_ptr(rdi + TOS), i32::from(tos & 15))?;
        self.flush()?;
        self.a.mov(eax, status)?;
        self.a.jmp(self.epilogue)?;
        Ok(())
    }

    /// A label for an out-of-line path.
    fn cold(&mut self, cold: Cold) -> CodeLabel {
        let label = self.a.create_label();
        self.cold.push((label, cold));
        label
    }

    /// An out-of-line exit that ends the hit incomplete, with the pending
    /// cycles of this point.
    fn incomplete(&mut self, tos: u8) -> CodeLabel {
        self.cold(Cold::Exit {
            tos,
            status: STATUS_INCOMPLETE,
            pending: self.pending,
            index: None,
        })
    }

    fn cold_path(&mut self, cold: Cold) -> Result {
        match cold {
            Cold::Exit {
                tos,
                status,
                pending,
                index,
            } => {
                match index {
                    Some(Index::Imm(i)) => self.a.mov(dword_ptr(rdi + ERR_INDEX), i as i32)?,
                    Some(Index::Eax) => self.a.mov(dword_ptr(rdi + ERR_INDEX), eax)?,
                    None => {}
                }
                self.pending = pending;
                self.exit(tos, status)
            }
            Cold::Partial {
                tos,
                n,
                dn,
                pending,
            } => {
                self.a.mov(r10d, u32::from(tos & 15))?;
                self.a.mov(r11d, n)?;
                self.call(if dn {
                    CB_LOG_DN_PARTIAL
                } else {
                    CB_LOG_WN_PARTIAL
                })?;
                // The callback set the stack index.
                self.pending = pending;
                self.flush()?;
                self.a.mov(eax, STATUS_INCOMPLETE)?;
                self.a.jmp(self.epilogue)?;
                Ok(())
            }
        }
    }

    /// Calls the callback with `op`; the arguments `a`, `b`, `c` are in
    /// R10D, R11D and EAX. The result is in RAX.
    fn call(&mut self, op: u32) -> Result {
        self.a.mov(qword_ptr(rdi + LOG_LEN), rcx)?;
        self.a.mov(qword_ptr(rdi + CYCLES), r8)?;
        // The return address and this push: RSP is 16-aligned at the call.
        self.a.push(rdi)?;
        self.a.mov(edx, r10d)?;
        self.a.mov(ecx, r11d)?;
        self.a.mov(r8d, eax)?;
        self.a.mov(esi, op)?;
        self.a.call(qword_ptr(rdi + CALLBACK))?;
        self.a.pop(rdi)?;
        self.load_state(false)
    }

    /// Calls the callback; if it fails, the hit ends incomplete with the
    /// stack index `tos`.
    fn call_or_stop(&mut self, op: u32, tos: u8) -> Result {
        self.call(op)?;
        let stop = self.incomplete(tos);
        self.a.bt(rax, 32)?;
        self.a.jc(stop)?;
        Ok(())
    }

    /// Jumps to the error exit unless variable `index` exists.
    fn check_var(&mut self, index: u32, tos: u8) -> Result {
        let error = self.cold(Cold::Exit {
            tos,
            status: STATUS_VAR_ERROR,
            pending: self.pending,
            index: Some(Index::Imm(index)),
        });
        self.a.cmp(qword_ptr(rdi + VARS_LEN), index as i32)?;
        self.a.jbe(error)?;
        Ok(())
    }

    /// Loads the variable index on top of the stack into EAX (RAX) and
    /// jumps to the error exit unless it exists.
    fn check_var_on_top(&mut self, tos: u8) -> Result {
        let error = self.cold(Cold::Exit {
            tos,
            status: STATUS_VAR_ERROR,
            pending: self.pending,
            index: Some(Index::Eax),
        });
        self.a.mov(eax, slot(tos))?;
        self.a.cmp(rax, qword_ptr(rdi + VARS_LEN))?;
        self.a.jae(error)?;
        Ok(())
    }

    /// Records that a jump brings stack index `tos` to instruction `target`.
    fn reach(&mut self, target: usize, tos: u8) -> Result {
        match self.entry[target] {
            Some(e) if e != tos => Err(Error::Join),
            _ => {
                self.entry[target] = Some(tos);
                Ok(())
            }
        }
    }

    /// A conditional jump on the top of the stack.
    fn branch(&mut self, op: Op, target: usize, t: u8) -> Result {
        self.flush()?;
        self.a.cmp(slot(t), 0)?;
        let label = if target == self.n {
            self.cold(Cold::Exit {
                tos: t,
                status: STATUS_LOGGED,
                pending: 0,
                index: None,
            })
        } else {
            self.reach(target, t)?;
            self.labels[target].ok_or(Error::Asm)?
        };
        match op {
            Op::JmpNn => self.a.jl(label)?,
            Op::JmpPn => self.a.jg(label)?,
            _ => self.a.je(label)?,
        }
        Ok(())
    }

    /// `Log WN,n` or `Log DN,n`.
    fn log_items(&mut self, n: u32, dn: bool, t: u8) -> Result {
        if n == 0 {
            return Ok(());
        }
        let w: u32 = if dn { 4 } else { 2 };
        let partial = self.cold(Cold::Partial {
            tos: t,
            n,
            dn,
            pending: self.pending,
        });
        self.a.lea(rax, qword_ptr(rcx + (w * n) as i32))?;
        self.a.cmp(rax, qword_ptr(rdi + LOGMAX))?;
        self.a.ja(partial)?;
        for k in 0..n {
            let item = t.wrapping_sub(k as u8);
            self.a.mov(eax, slot(item))?;
            let at = (w * k) as i32;
            if dn {
                self.a.mov(dword_ptr(rdx + rcx + at), eax)?;
            } else {
                self.a.mov(word_ptr(rdx + rcx + at), ax)?;
            }
        }
        self.a.add(rcx, (w * n) as i32)?;
        Ok(())
    }

    /// Pushes EAX.
    fn push_eax(&mut self, t: u8) -> Result<Option<u8>> {
        let t = t.wrapping_add(1);
        self.a.mov(slot(t), eax)?;
        Ok(Some(t))
    }

    /// Pushes EAX as two words: the high word, then the low word.
    fn push_split(&mut self, t: u8) -> Result<Option<u8>> {
        self.a.mov(r10d, eax)?;
        self.a.shr(r10d, 16)?;
        self.a.mov(slot(t.wrapping_add(1)), r10d)?;
        self.a.and(eax, 0xFFFF)?;
        self.a.mov(slot(t.wrapping_add(2)), eax)?;
        Ok(Some(t.wrapping_add(2)))
    }

    /// One instruction at stack index `t`; returns the index after it, or
    /// `None` when it does not fall through.
    fn instr(&mut self, op: Op, arg: u32, t: u8) -> Result<Option<u8>> {
        self.pending += op.info().cycles;
        let a = &mut self.a;
        if let Some(reg) = op.pushed_register() {
            self.regs |= 1 << reg as usize;
            a.mov(eax, dword_ptr(rdi + (REGS + 4 * reg as i32)))?;
            return self.push_eax(t);
        }
        let below = t.wrapping_sub(1);
        match op {
            Op::PushW | Op::PushD => {
                let t = t.wrapping_add(1);
                a.mov(slot(t), arg as i32)?;
                return Ok(Some(t));
            }
            Op::PushOxs | Op::PushOxf => {
                a.mov(r10d, arg)?;
                self.call(if op == Op::PushOxs {
                    CB_OBJECT_SELECTOR
                } else {
                    CB_OBJECT_FLAT_BASE
                })?;
                return self.push_eax(t);
            }
            Op::PushV => {
                self.check_var(arg, t)?;
                self.a.mov(eax, dword_ptr(r9 + 4 * arg as i32))?;
                return self.push_eax(t);
            }
            Op::PushVii => {
                self.check_var_on_top(t)?;
                self.a.mov(eax, dword_ptr(r9 + rax * 4))?;
                return self.push_eax(t);
            }
            Op::PushWis | Op::PushSis => {
                a.mov(r10d, slot(below))?;
                a.mov(r11d, slot(t))?;
                let t = t.wrapping_sub(2);
                if op == Op::PushWis {
                    self.call_or_stop(CB_READ_SEGMENTED_WORD, t)?;
                    return self.push_eax(t);
                }
                self.call_or_stop(CB_READ_SEGMENTED_DWORD, t)?;
                return self.push_split(t);
            }
            Op::PushFif => {
                a.mov(r10d, slot(t))?;
                self.call_or_stop(CB_READ_FLAT_DWORD, below)?;
                return self.push_eax(below);
            }
            Op::Add | Op::Sub | Op::Mul | Op::And | Op::Or | Op::Xor => {
                a.mov(eax, slot(below))?;
                match op {
                    Op::Add => a.add(eax, slot(t))?,
                    Op::Sub => a.sub(eax, slot(t))?,
                    Op::Mul => a.imul_2(eax, slot(t))?,
                    Op::And => a.and(eax, slot(t))?,
                    Op::Or => a.or(eax, slot(t))?,
                    _ => a.xor(eax, slot(t))?,
                }
                a.mov(slot(below), eax)?;
                return Ok(Some(below));
            }
            Op::Neg => a.not(slot(t))?,
            Op::Xchg => {
                a.mov(eax, slot(t))?;
                a.mov(r10d, slot(below))?;
                a.mov(slot(t), r10d)?;
                a.mov(slot(below), eax)?;
            }
            Op::CnvrtDxs => {
                a.mov(eax, slot(t))?;
                return self.push_split(below);
            }
            Op::CnvrtSxd => {
                a.mov(eax, slot(below))?;
                a.shl(eax, 16)?;
                a.movzx(r10d, word_ptr(rsi + 4 * i32::from(t & 15)))?;
                a.or(eax, r10d)?;
                a.mov(slot(below), eax)?;
                return Ok(Some(below));
            }
            Op::CnvrtFxs => {
                a.mov(r10d, slot(t))?;
                self.call_or_stop(CB_FLAT_TO_SEGMENTED, below)?;
                return self.push_split(below);
            }
            Op::CnvrtSxf => {
                a.mov(r10d, slot(t))?;
                a.mov(r11d, slot(below))?;
                let t = t.wrapping_sub(2);
                self.call_or_stop(CB_SEGMENTED_TO_FLAT, t)?;
                return self.push_eax(t);
            }
            Op::MoveV | Op::IncV | Op::OrV => {
                self.check_var(arg, t)?;
                let var = dword_ptr(r9 + 4 * arg as i32);
                match op {
                    Op::MoveV => {
                        self.a.mov(r10d, slot(t))?;
                        self.a.mov(var, r10d)?;
                    }
                    Op::IncV => self.a.add(var, 1)?,
                    _ => {
                        self.a.mov(r10d, slot(t))?;
                        self.a.or(var, r10d)?;
                    }
                }
            }
            Op::MoveVii => {
                self.check_var_on_top(t)?;
                self.a.mov(r10d, slot(below))?;
                self.a.mov(dword_ptr(r9 + rax * 4), r10d)?;
            }
            Op::IncVii => {
                self.check_var_on_top(t)?;
                self.a.add(dword_ptr(r9 + rax * 4), 1)?;
            }
            Op::JmpN => {
                let target = arg as usize;
                self.flush()?;
                if target == self.n {
                    self.exit(t, STATUS_LOGGED)?;
                } else {
                    self.reach(target, t)?;
                    let label = self.labels[target].ok_or(Error::Asm)?;
                    self.a.jmp(label)?;
                }
                return Ok(None);
            }
            Op::JmpNn | Op::JmpPn | Op::JmpZn => self.branch(op, arg as usize, t)?,
            Op::PopN => {
                self.pending += Op::PopN.info().cycles_per_unit * arg;
                return Ok(Some(t.wrapping_sub(arg as u8)));
            }
            Op::LogWn | Op::LogDn => {
                let dn = op == Op::LogDn;
                self.log_items(arg, dn, t)?;
                self.pending += op.info().cycles_per_unit * arg;
                return Ok(Some(t.wrapping_sub(arg as u8)));
            }
            Op::LogMrs | Op::LogArs => {
                a.mov(r10d, slot(t))?;
                a.mov(r11d, slot(below))?;
                a.mov(eax, slot(t.wrapping_sub(2)))?;
                let t = t.wrapping_sub(3);
                let cb = if op == Op::LogMrs {
                    CB_LOG_MRS
                } else {
                    CB_LOG_ARS
                };
                self.call_or_stop(cb, t)?;
                return Ok(Some(t));
            }
            Op::LogMrf | Op::LogArf => {
                a.mov(r10d, slot(t))?;
                a.mov(eax, slot(below))?;
                let t = t.wrapping_sub(2);
                let cb = if op == Op::LogMrf {
                    CB_LOG_MRF
                } else {
                    CB_LOG_ARF
                };
                self.call_or_stop(cb, t)?;
                return Ok(Some(t));
            }
            Op::SetMinW | Op::SetMajW => {
                let at = if op == Op::SetMinW { MINOR } else { MAJOR };
                a.mov(eax, arg)?;
                a.mov(word_ptr(rdi + at), ax)?;
            }
            Op::SetMin | Op::SetMaj => {
                let at = if op == Op::SetMin { MINOR } else { MAJOR };
                a.mov(eax, slot(t))?;
                a.mov(word_ptr(rdi + at), ax)?;
            }
            Op::Exit | Op::Abort | Op::Remove | Op::SysDump => {
                let status = match op {
                    Op::Exit => STATUS_LOGGED,
                    Op::Abort => STATUS_ABORTED,
                    Op::Remove => STATUS_REMOVED,
                    _ => STATUS_SYSDUMP,
                };
                self.exit(t, status)?;
                return Ok(None);
            }
            _ => return Err(Error::Asm),
        }
        Ok(Some(t))
    }
}
