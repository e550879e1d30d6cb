//! The translation of each instruction (see `compile.rs` for the state it
//! works on: the static stack index, the EAX and constant caches, the
//! pending cycles).

use iced_x86::code_asm::*;

use super::compile::{
    Cold, Error, Gen, LOGMAX, MAJOR, MINOR, REGS, Result, SLOW, STACK, VARS_LEN, slot,
};
use super::frame::*;
use crate::opcode::Op;

/// The two-operand ops, as the compiler emits them.
#[derive(Clone, Copy, PartialEq)]
enum Binary {
    Add,
    Sub,
    Mul,
    And,
    Or,
    Xor,
}

impl Binary {
    fn of(op: Op) -> Option<Binary> {
        Some(match op {
            Op::Add => Binary::Add,
            Op::Sub => Binary::Sub,
            Op::Mul => Binary::Mul,
            Op::And => Binary::And,
            Op::Or => Binary::Or,
            Op::Xor => Binary::Xor,
            _ => return None,
        })
    }
}

/// The right operand of a two-operand op.
#[derive(Clone, Copy)]
enum Operand {
    Imm(u32),
    Mem(AsmMemoryOperand),
}

impl Gen {
    /// `EAX op= rhs`.
    fn binary(&mut self, op: Binary, rhs: Operand) -> Result {
        let a = &mut self.a;
        match rhs {
            Operand::Imm(v) => {
                let v = v as i32;
                match op {
                    Binary::Add => a.add(eax, v)?,
                    Binary::Sub => a.sub(eax, v)?,
                    Binary::Mul => a.imul_3(eax, eax, v)?,
                    Binary::And => a.and(eax, v)?,
                    Binary::Or => a.or(eax, v)?,
                    Binary::Xor => a.xor(eax, v)?,
                }
            }
            Operand::Mem(m) => match op {
                Binary::Add => a.add(eax, m)?,
                Binary::Sub => a.sub(eax, m)?,
                Binary::Mul => a.imul_2(eax, m)?,
                Binary::And => a.and(eax, m)?,
                Binary::Or => a.or(eax, m)?,
                Binary::Xor => a.xor(eax, m)?,
            },
        }
        Ok(())
    }

    /// Stores EAX in slot `t`, which EAX then stands for.
    fn store_eax(&mut self, t: u8) -> Result {
        self.a.mov(slot(t), eax)?;
        self.konst[usize::from(t & 15)] = None;
        self.eax = Some(t & 15);
        Ok(())
    }

    /// Notes that slot `t` was written other than by [`Gen::store_eax`].
    fn clobbered(&mut self, t: u8) {
        self.konst[usize::from(t & 15)] = None;
        if self.eax == Some(t & 15) {
            self.eax = None;
        }
    }

    /// Loads slot `t` into EAX unless EAX holds it (`cached`).
    fn load_eax(&mut self, t: u8, cached: Option<u8>) -> Result {
        if cached != Some(t & 15) {
            self.a.mov(eax, slot(t))?;
        }
        self.eax = Some(t & 15);
        Ok(())
    }

    /// Pushes EAX.
    fn push_eax(&mut self, t: u8) -> Result<Option<u8>> {
        let t = t.wrapping_add(1);
        self.store_eax(t)?;
        Ok(Some(t))
    }

    /// Pushes EAX as two words: the high word, then the low word.
    fn push_split(&mut self, t: u8) -> Result<Option<u8>> {
        self.a.mov(r10d, eax)?;
        self.a.shr(r10d, 16)?;
        self.a.mov(slot(t.wrapping_add(1)), r10d)?;
        self.clobbered(t.wrapping_add(1));
        self.a.and(eax, 0xFFFF)?;
        self.push_eax(t.wrapping_add(1))
    }

    /// Loads the variable index on top of the stack into EAX (RAX) and
    /// jumps to the error exit unless it exists.
    fn check_var_on_top(&mut self, t: u8, cached: Option<u8>) -> Result {
        self.needs_frame()?;
        let error = self.cold_exit(t, STATUS_VAR_ERROR);
        self.load_eax(t, cached)?;
        self.slow = true;
        self.a.mov(r10, qword_ptr(rdi + SLOW))?;
        self.a.cmp(rax, qword_ptr(r10 + VARS_LEN))?;
        self.a.jae(error)?;
        Ok(())
    }

    /// A conditional jump on the top of the stack.
    fn branch(&mut self, op: Op, target: usize, t: u8, cached: Option<u8>) -> Result {
        self.flush()?;
        self.sync_log_for(target)?;
        if cached == Some(t & 15) {
            self.a.test(eax, eax)?;
        } else {
            self.a.cmp(slot(t), 0)?;
        }
        let label = if target == self.n {
            self.cold(Cold::Exit {
                tos: t,
                status: STATUS_LOGGED,
                pending: 0,
                log: None,
                r8_zero: false,
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

    /// `Log WN,n` or `Log DN,n`, when all `n` items fit; otherwise the hit
    /// ends and `Compiled::run` logs what fits.
    fn log_items(&mut self, n: u32, dn: bool, t: u8, cached: Option<u8>) -> Result {
        if n == 0 {
            return Ok(());
        }
        let w: u32 = if dn { 4 } else { 2 };
        if self.lean {
            // The caller checked that everything the program can log fits.
            let (base, known) = match self.log {
                Some(len) => (rdx + len as i32, true),
                None => (rdx + r9, false),
            };
            return self.log_items_at(n, dn, t, cached, base, known);
        }
        let partial = self.cold(Cold::Partial {
            tos: t,
            n,
            dn,
            pending: self.pending,
            log: self.log_to_sync(),
            r8_zero: self.r8_zero,
        });
        // Where the items go: after a log length known here, or after R9.
        let (base, known) = match self.log {
            Some(len) => {
                self.a.cmp(qword_ptr(rdi + LOGMAX), (len + w * n) as i32)?;
                self.a.jb(partial)?;
                (rdx + len as i32, true)
            }
            None => {
                self.a.lea(rax, qword_ptr(r9 + (w * n) as i32))?;
                self.a.cmp(rax, qword_ptr(rdi + LOGMAX))?;
                self.a.ja(partial)?;
                (rdx + r9, false)
            }
        };
        // EAX: the slot it holds, unless the check above used it.
        let eax_holds = if known { cached } else { None };
        self.log_items_at(n, dn, t, eax_holds, base, known)
    }

    /// Writes the `n` items of `Log WN/DN,n` at `base`, the log length
    /// `known` at compile time or in R9; `eax_holds` the slot EAX holds.
    fn log_items_at(
        &mut self,
        n: u32,
        dn: bool,
        t: u8,
        mut eax_holds: Option<u8>,
        base: AsmMemoryOperand,
        known: bool,
    ) -> Result {
        let w: u32 = if dn { 4 } else { 2 };
        for k in 0..n {
            let item = t.wrapping_sub(k as u8);
            let at = base + (w * k) as i32;
            match self.konst[usize::from(item & 15)] {
                Some(v) if dn => self.a.mov(dword_ptr(at), v as i32)?,
                _ => {
                    if eax_holds != Some(item & 15) {
                        self.a.mov(eax, slot(item))?;
                        eax_holds = Some(item & 15);
                    }
                    if dn {
                        self.a.mov(dword_ptr(at), eax)?;
                    } else {
                        self.a.mov(word_ptr(at), ax)?;
                    }
                }
            }
        }
        if known {
            self.log = self.log.map(|len| len + w * n);
            self.log_exact = false;
        } else {
            self.a.add(r9, (w * n) as i32)?;
        }
        // The items stay in their slots, popped.
        self.eax = eax_holds;
        Ok(())
    }

    /// One instruction at stack index `t`; returns the index after it, or
    /// `None` when it does not fall through.
    pub(super) fn instr(&mut self, op: Op, arg: u32, t: u8) -> Result<Option<u8>> {
        self.pending += op.info().cycles;
        // Unknown unless an instruction keeps it.
        let cached = self.eax.take();
        let below = t.wrapping_sub(1);
        if let Some(reg) = op.pushed_register() {
            self.a.mov(eax, dword_ptr(rdi + (REGS + 4 * reg as i32)))?;
            return self.push_eax(t);
        }
        if let Some(bin) = Binary::of(op) {
            let top = self.konst[usize::from(t & 15)];
            if cached == Some(below & 15) {
                let rhs = top.map_or(Operand::Mem(slot(t)), Operand::Imm);
                self.binary(bin, rhs)?;
            } else if cached == Some(t & 15) && bin != Binary::Sub {
                self.binary(bin, Operand::Mem(slot(below)))?;
            } else if cached == Some(t & 15) {
                // below - top = -top + below.
                self.a.neg(eax)?;
                self.a.add(eax, slot(below))?;
            } else {
                self.a.mov(eax, slot(below))?;
                let rhs = top.map_or(Operand::Mem(slot(t)), Operand::Imm);
                self.binary(bin, rhs)?;
            }
            self.store_eax(below)?;
            return Ok(Some(below));
        }
        match op {
            Op::PushW | Op::PushD => {
                let t = t.wrapping_add(1);
                self.a.mov(slot(t), arg as i32)?;
                self.clobbered(t);
                self.konst[usize::from(t & 15)] = Some(arg);
                self.eax = cached.filter(|&s| s != t & 15);
                return Ok(Some(t));
            }
            Op::PushOxs | Op::PushOxf => {
                self.a.mov(r10d, arg)?;
                self.call(if op == Op::PushOxs {
                    CB_OBJECT_SELECTOR
                } else {
                    CB_OBJECT_FLAT_BASE
                })?;
                return self.push_eax(t);
            }
            Op::PushV => {
                self.a.mov(eax, dword_ptr(rcx + 4 * arg as i32))?;
                return self.push_eax(t);
            }
            Op::PushVii => {
                self.check_var_on_top(t, cached)?;
                self.a.mov(eax, dword_ptr(rcx + rax * 4))?;
                return self.push_eax(t);
            }
            Op::PushWis | Op::PushSis => {
                self.a.mov(r10d, slot(below))?;
                self.a.mov(r11d, slot(t))?;
                let t = t.wrapping_sub(2);
                if op == Op::PushWis {
                    self.call_or_stop(CB_READ_SEGMENTED_WORD, t)?;
                    return self.push_eax(t);
                }
                self.call_or_stop(CB_READ_SEGMENTED_DWORD, t)?;
                return self.push_split(t);
            }
            Op::PushFif => {
                self.a.mov(r10d, slot(t))?;
                self.call_or_stop(CB_READ_FLAT_DWORD, below)?;
                return self.push_eax(below);
            }
            Op::Neg => {
                self.load_eax(t, cached)?;
                self.a.not(eax)?;
                self.store_eax(t)?;
            }
            Op::Xchg => {
                self.load_eax(t, cached)?;
                self.a.mov(r10d, slot(below))?;
                self.a.mov(slot(t), r10d)?;
                self.a.mov(slot(below), eax)?;
                let (kt, kb) = (usize::from(t & 15), usize::from(below & 15));
                self.konst.swap(kt, kb);
                self.eax = Some(below & 15);
            }
            Op::CnvrtDxs => {
                self.load_eax(t, cached)?;
                return self.push_split(below);
            }
            Op::CnvrtSxd => {
                self.a
                    .movzx(r10d, word_ptr(rsi + (STACK + 4 * i32::from(t & 15))))?;
                self.load_eax(below, cached)?;
                self.a.shl(eax, 16)?;
                self.a.or(eax, r10d)?;
                self.store_eax(below)?;
                return Ok(Some(below));
            }
            Op::CnvrtFxs => {
                self.a.mov(r10d, slot(t))?;
                self.call_or_stop(CB_FLAT_TO_SEGMENTED, below)?;
                return self.push_split(below);
            }
            Op::CnvrtSxf => {
                self.a.mov(r10d, slot(t))?;
                self.a.mov(r11d, slot(below))?;
                let t = t.wrapping_sub(2);
                self.call_or_stop(CB_SEGMENTED_TO_FLAT, t)?;
                return self.push_eax(t);
            }
            Op::MoveV | Op::OrV => {
                let var = dword_ptr(rcx + 4 * arg as i32);
                let value = if cached == Some(t & 15) {
                    eax
                } else {
                    self.a.mov(r10d, slot(t))?;
                    r10d
                };
                if op == Op::MoveV {
                    self.a.mov(var, value)?;
                } else {
                    self.a.or(var, value)?;
                }
                self.eax = cached;
            }
            Op::IncV => {
                self.a.add(dword_ptr(rcx + 4 * arg as i32), 1)?;
                self.eax = cached;
            }
            Op::MoveVii => {
                self.check_var_on_top(t, cached)?;
                self.a.mov(r10d, slot(below))?;
                self.a.mov(dword_ptr(rcx + rax * 4), r10d)?;
            }
            Op::IncVii => {
                self.check_var_on_top(t, cached)?;
                self.a.add(dword_ptr(rcx + rax * 4), 1)?;
            }
            Op::JmpN => {
                let target = arg as usize;
                self.flush()?;
                self.sync_log_for(target)?;
                if target == self.n {
                    self.exit(t, STATUS_LOGGED)?;
                } else {
                    self.reach(target, t)?;
                    let label = self.labels[target].ok_or(Error::Asm)?;
                    self.a.jmp(label)?;
                }
                return Ok(None);
            }
            Op::JmpNn | Op::JmpPn | Op::JmpZn => {
                self.branch(op, arg as usize, t, cached)?;
                self.eax = cached;
            }
            Op::PopN => {
                self.pending += Op::PopN.info().cycles_per_unit * arg;
                self.eax = cached;
                return Ok(Some(t.wrapping_sub(arg as u8)));
            }
            Op::LogWn | Op::LogDn => {
                self.log_items(arg, op == Op::LogDn, t, cached)?;
                self.pending += op.info().cycles_per_unit * arg;
                return Ok(Some(t.wrapping_sub(arg as u8)));
            }
            Op::LogMrs | Op::LogArs => {
                self.a.mov(r10d, slot(t))?;
                self.a.mov(r11d, slot(below))?;
                self.a.mov(eax, slot(t.wrapping_sub(2)))?;
                let t = t.wrapping_sub(3);
                let cb = if op == Op::LogMrs {
                    CB_LOG_MRS
                } else {
                    CB_LOG_ARS
                };
                self.call_or_stop(cb, t)?;
                // The callback logged a length only the frame knows.
                self.log = None;
                return Ok(Some(t));
            }
            Op::LogMrf | Op::LogArf => {
                self.a.mov(r10d, slot(t))?;
                self.a.mov(eax, slot(below))?;
                let t = t.wrapping_sub(2);
                let cb = if op == Op::LogMrf {
                    CB_LOG_MRF
                } else {
                    CB_LOG_ARF
                };
                self.call_or_stop(cb, t)?;
                // The callback logged a length only the frame knows.
                self.log = None;
                return Ok(Some(t));
            }
            Op::SetMinW | Op::SetMajW => {
                self.needs_frame()?;
                let at = if op == Op::SetMinW { MINOR } else { MAJOR };
                self.a.mov(r10d, arg)?;
                self.a.mov(word_ptr(rdi + at), r10w)?;
                self.eax = cached;
            }
            Op::SetMin | Op::SetMaj => {
                self.needs_frame()?;
                let at = if op == Op::SetMin { MINOR } else { MAJOR };
                self.load_eax(t, cached)?;
                self.a.mov(word_ptr(rdi + at), ax)?;
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
