//! The translation of a verified program into x86-64 code.
//!
//! One pass in program order (jumps only go forward). The top-of-stack
//! index is a compile-time constant at every instruction: the hit starts
//! at 0 and every instruction pops and pushes a fixed number of entries, so
//! each push or pop is a load or store at a fixed offset of the frame's
//! 16-slot stack. Where two paths meet (a jump target) with different
//! indices the program is refused; code no path reaches is not emitted.
//!
//! Registers while the code runs: RBX the frame, RBP the log buffer, R12
//! the log length, R13 the cycles, R14 and R15 the variables' address and
//! count; EAX, ECX, EDX, ESI, EDI, R8 scratch. Fixed cycles are summed at
//! compile time and added to R13 where a straight-line run ends (a jump, a
//! jump target, an exit), so every way out carries exactly the fixed cycles
//! of the instructions run; per-unit cycles are added where the interpreter
//! adds them (`Pop N` and complete `Log WN/DN` at compile time, the rest by
//! the callbacks). Rare paths (errors, faults, logs that overrun the limit)
//! are emitted after the main line.

use iced_x86::IcedError;
use iced_x86::code_asm::*;
use std::mem::offset_of;

use super::frame::*;
use crate::machine::Reg;
use crate::opcode::Op;
use crate::verify::Program;

/// A compiled program: its machine code, and the registers it reads from
/// the frame (which `run` must snapshot).
pub(crate) struct Output {
    pub(crate) code: Vec<u8>,
    pub(crate) regs: Vec<Reg>,
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

const STACK: i32 = offset_of!(Frame, stack) as i32;
const REGS: i32 = offset_of!(Frame, regs) as i32;
const LOG: i32 = offset_of!(Frame, log) as i32;
const LOG_LEN: i32 = offset_of!(Frame, log_len) as i32;
const LOGMAX: i32 = offset_of!(Frame, logmax) as i32;
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
    dword_ptr(rbx + (STACK + 4 * i32::from(t & 15)))
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
    let regs = Reg::ALL
        .into_iter()
        .filter(|&r| g.regs & (1 << r as usize) != 0)
        .collect();
    Some(Output { code, regs })
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
        self.a.mov(qword_ptr(rbx + LOG_LEN), r12)?;
        self.a.mov(qword_ptr(rbx + CYCLES), r13)?;
        self.a.add(rsp, 8)?;
        for reg in [r15, r14, r13, r12, rbx, rbp] {
            self.a.pop(reg)?;
        }
        self.a.ret()?;
        Ok(())
    }

    fn prologue(&mut self) -> Result {
        for reg in [rbp, rbx, r12, r13, r14, r15] {
            self.a.push(reg)?;
        }
        // Six pushes after the return address: realign to 16 for calls.
        self.a.sub(rsp, 8)?;
        self.a.mov(rbx, rdi)?;
        self.a.mov(rbp, qword_ptr(rbx + LOG))?;
        self.a.mov(r12, qword_ptr(rbx + LOG_LEN))?;
        self.a.mov(r13, qword_ptr(rbx + CYCLES))?;
        self.a.mov(r14, qword_ptr(rbx + VARS))?;
        self.a.mov(r15, qword_ptr(rbx + VARS_LEN))?;
        Ok(())
    }

    /// Adds the pending fixed cycles to R13.
    fn flush(&mut self) -> Result {
        if self.pending != 0 {
            self.a.add(r13, self.pending as i32)?;
            self.pending = 0;
        }
        Ok(())
    }

    /// Ends the hit here with `status`, the stack index `tos`.
    fn exit(&mut self, tos: u8, status: u32) -> Result {
        self.a.mov(qword_ptr(rbx + TOS), i32::from(tos & 15))?;
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
                    Some(Index::Imm(i)) => self.a.mov(dword_ptr(rbx + ERR_INDEX), i as i32)?,
                    Some(Index::Eax) => self.a.mov(dword_ptr(rbx + ERR_INDEX), eax)?,
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
                self.a.mov(edx, u32::from(tos & 15))?;
                self.a.mov(ecx, n)?;
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

    /// Calls the callback with `op`; the arguments are in RDX, RCX, R8.
    fn call(&mut self, op: u32) -> Result {
        self.a.mov(qword_ptr(rbx + LOG_LEN), r12)?;
        self.a.mov(qword_ptr(rbx + CYCLES), r13)?;
        self.a.mov(rdi, rbx)?;
        self.a.mov(esi, op)?;
        self.a.call(qword_ptr(rbx + CALLBACK))?;
        self.a.mov(r12, qword_ptr(rbx + LOG_LEN))?;
        self.a.mov(r13, qword_ptr(rbx + CYCLES))?;
        Ok(())
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
        self.a.cmp(r15, index as i32)?;
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
        self.a.cmp(rax, r15)?;
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
        self.a.lea(rax, qword_ptr(r12 + (w * n) as i32))?;
        self.a.cmp(rax, qword_ptr(rbx + LOGMAX))?;
        self.a.ja(partial)?;
        for k in 0..n {
            let item = t.wrapping_sub(k as u8);
            self.a.mov(eax, slot(item))?;
            let at = (w * k) as i32;
            if dn {
                self.a.mov(dword_ptr(rbp + r12 + at), eax)?;
            } else {
                self.a.mov(word_ptr(rbp + r12 + at), ax)?;
            }
        }
        self.a.add(r12, (w * n) as i32)?;
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
        self.a.mov(ecx, eax)?;
        self.a.shr(ecx, 16)?;
        self.a.mov(slot(t.wrapping_add(1)), ecx)?;
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
            a.mov(eax, dword_ptr(rbx + (REGS + 4 * reg as i32)))?;
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
                a.mov(edx, arg)?;
                self.call(if op == Op::PushOxs {
                    CB_OBJECT_SELECTOR
                } else {
                    CB_OBJECT_FLAT_BASE
                })?;
                return self.push_eax(t);
            }
            Op::PushV => {
                self.check_var(arg, t)?;
                self.a.mov(eax, dword_ptr(r14 + 4 * arg as i32))?;
                return self.push_eax(t);
            }
            Op::PushVii => {
                self.check_var_on_top(t)?;
                self.a.mov(eax, dword_ptr(r14 + rax * 4))?;
                return self.push_eax(t);
            }
            Op::PushWis | Op::PushSis => {
                a.mov(edx, slot(below))?;
                a.mov(ecx, slot(t))?;
                let t = t.wrapping_sub(2);
                if op == Op::PushWis {
                    self.call_or_stop(CB_READ_SEGMENTED_WORD, t)?;
                    return self.push_eax(t);
                }
                self.call_or_stop(CB_READ_SEGMENTED_DWORD, t)?;
                return self.push_split(t);
            }
            Op::PushFif => {
                a.mov(edx, slot(t))?;
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
                a.mov(ecx, slot(below))?;
                a.mov(slot(t), ecx)?;
                a.mov(slot(below), eax)?;
            }
            Op::CnvrtDxs => {
                a.mov(eax, slot(t))?;
                return self.push_split(below);
            }
            Op::CnvrtSxd => {
                a.mov(eax, slot(below))?;
                a.shl(eax, 16)?;
                a.movzx(ecx, word_ptr(rbx + (STACK + 4 * i32::from(t & 15))))?;
                a.or(eax, ecx)?;
                a.mov(slot(below), eax)?;
                return Ok(Some(below));
            }
            Op::CnvrtFxs => {
                a.mov(edx, slot(t))?;
                self.call_or_stop(CB_FLAT_TO_SEGMENTED, below)?;
                return self.push_split(below);
            }
            Op::CnvrtSxf => {
                a.mov(edx, slot(t))?;
                a.mov(ecx, slot(below))?;
                let t = t.wrapping_sub(2);
                self.call_or_stop(CB_SEGMENTED_TO_FLAT, t)?;
                return self.push_eax(t);
            }
            Op::MoveV | Op::IncV | Op::OrV => {
                self.check_var(arg, t)?;
                let var = dword_ptr(r14 + 4 * arg as i32);
                match op {
                    Op::MoveV => {
                        self.a.mov(ecx, slot(t))?;
                        self.a.mov(var, ecx)?;
                    }
                    Op::IncV => self.a.add(var, 1)?,
                    _ => {
                        self.a.mov(ecx, slot(t))?;
                        self.a.or(var, ecx)?;
                    }
                }
            }
            Op::MoveVii => {
                self.check_var_on_top(t)?;
                self.a.mov(ecx, slot(below))?;
                self.a.mov(dword_ptr(r14 + rax * 4), ecx)?;
            }
            Op::IncVii => {
                self.check_var_on_top(t)?;
                self.a.add(dword_ptr(r14 + rax * 4), 1)?;
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
                a.mov(edx, slot(t))?;
                a.mov(ecx, slot(below))?;
                a.mov(r8d, slot(t.wrapping_sub(2)))?;
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
                a.mov(edx, slot(t))?;
                a.mov(r8d, slot(below))?;
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
                a.mov(word_ptr(rbx + at), ax)?;
            }
            Op::SetMin | Op::SetMaj => {
                let at = if op == Op::SetMin { MINOR } else { MAJOR };
                a.mov(eax, slot(t))?;
                a.mov(word_ptr(rbx + at), ax)?;
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
