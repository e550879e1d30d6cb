//! The translation of each instruction (see `compile.rs` for the state it
//! works on: the static stack index, what is known of each slot and which
//! are stored, the pending cycles).
//!
//! The rules each translation keeps: read a slot through `read`/`load_eax`
//! (never its memory directly, which may be stale); before EAX takes a
//! value other than a new value of the slot it holds, `spill_eax`; note
//! every slot written (`set_eax_slot`, `set_const`, `set_guest`, `stored`);
//! store every slot (`flush_slots`) before loading a callback's arguments
//! and before a jump.

use iced_x86::code_asm::*;

use super::compile::{Cold, Error, Gen, LOGMAX, MAJOR, MINOR, Result, SLOW, VARS_LEN, Val, slot};
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

impl Gen {
    /// `EAX op= rhs` (`rhs` not EAX).
    fn binary(&mut self, op: Binary, rhs: Val) -> Result {
        let a = &mut self.a;
        match rhs {
            Val::Imm(v) => {
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
            Val::Mem(at) => {
                let m = dword_ptr(at);
                match op {
                    Binary::Add => a.add(eax, m)?,
                    Binary::Sub => a.sub(eax, m)?,
                    Binary::Mul => a.imul_2(eax, m)?,
                    Binary::And => a.and(eax, m)?,
                    Binary::Or => a.or(eax, m)?,
                    Binary::Xor => a.xor(eax, m)?,
                }
            }
            Val::Eax => return Err(Error::Asm),
        }
        Ok(())
    }

    /// Pushes EAX, a value that is no slot's (a callback's result); the
    /// caller spilled EAX before it changed.
    fn push_eax(&mut self, t: u8) -> Result<Option<u8>> {
        let t = t.wrapping_add(1);
        self.set_eax_slot(t);
        Ok(Some(t))
    }

    /// Pushes EAX as two words: the high word, then the low word. EAX holds
    /// no slot that outlives this (a callback's result, or the slot the
    /// high word replaces).
    fn push_split(&mut self, t: u8) -> Result<Option<u8>> {
        self.a.mov(r10d, eax)?;
        self.a.shr(r10d, 16)?;
        self.a.mov(slot(t.wrapping_add(1)), r10d)?;
        self.stored(t.wrapping_add(1));
        self.a.and(eax, 0xFFFF)?;
        self.push_eax(t.wrapping_add(1))
    }

    /// Loads the variable index on top of the stack into EAX (RAX) and
    /// jumps to the error exit unless it exists.
    fn check_var_on_top(&mut self, t: u8) -> Result {
        self.needs_frame()?;
        self.load_eax(t)?;
        let error = self.cold_exit(t, STATUS_VAR_ERROR);
        self.slow = true;
        self.a.mov(r10, qword_ptr(rdi + SLOW))?;
        self.a.cmp(rax, qword_ptr(r10 + VARS_LEN))?;
        self.a.jae(error)?;
        Ok(())
    }

    /// A conditional jump on the top of the stack.
    fn branch(&mut self, op: Op, target: usize, t: u8) -> Result {
        self.leave_for(target)?;
        self.flush()?;
        self.sync_log_for(target)?;
        match self.read(t) {
            Val::Eax => self.a.test(eax, eax)?,
            Val::Imm(v) => {
                self.a.mov(r10d, v)?;
                self.a.test(r10d, r10d)?;
            }
            Val::Mem(at) => self.a.cmp(dword_ptr(at), 0)?,
        }
        let label = if target == self.n {
            self.cold(Cold::Exit {
                tos: t,
                status: STATUS_LOGGED,
                pending: 0,
                log: None,
                r8_zero: false,
                slots: self.slots(),
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
    fn log_items(&mut self, n: u32, dn: bool, t: u8) -> Result {
        if n == 0 {
            return Ok(());
        }
        let w: u32 = if dn { 4 } else { 2 };
        if !self.lean {
            // The lean entry's caller checked that everything the program
            // can log fits.
            let partial = self.cold(Cold::Partial {
                tos: t,
                n,
                dn,
                pending: self.pending,
                log: self.log_to_sync(),
                r8_zero: self.r8_zero,
                slots: self.slots(),
            });
            match self.log {
                Some(len) => {
                    self.a.cmp(qword_ptr(rdi + LOGMAX), (len + w * n) as i32)?;
                    self.a.jb(partial)?;
                }
                None => {
                    self.a.lea(r10, qword_ptr(r9 + (w * n) as i32))?;
                    self.a.cmp(r10, qword_ptr(rdi + LOGMAX))?;
                    self.a.ja(partial)?;
                }
            }
        }
        // Where the items go: after a log length known here, or after R9.
        let (base, known) = match self.log {
            Some(len) => (rdx + len as i32, true),
            None => (rdx + r9, false),
        };
        for k in 0..n {
            let item = t.wrapping_sub(k as u8);
            let at = base + (w * k) as i32;
            let value = self.read(item);
            match (value, dn) {
                (Val::Imm(v), true) => self.a.mov(dword_ptr(at), v as i32)?,
                (Val::Imm(v), false) => self.a.mov(word_ptr(at), (v & 0xFFFF) as i32)?,
                (Val::Eax, true) => self.a.mov(dword_ptr(at), eax)?,
                (Val::Eax, false) => self.a.mov(word_ptr(at), ax)?,
                (Val::Mem(from), _) => {
                    self.a.mov(r10d, dword_ptr(from))?;
                    if dn {
                        self.a.mov(dword_ptr(at), r10d)?;
                    } else {
                        self.a.mov(word_ptr(at), r10w)?;
                    }
                    // A guest register not stored yet: stored now that it
                    // is loaded.
                    if self.dirty & (1 << (item & 15)) != 0 {
                        self.a.mov(slot(item), r10d)?;
                        self.dirty &= !(1 << (item & 15));
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
        Ok(())
    }

    /// One instruction at stack index `t`; returns the index after it, or
    /// `None` when it does not fall through.
    pub(super) fn instr(&mut self, op: Op, arg: u32, t: u8) -> Result<Option<u8>> {
        self.pending += op.info().cycles;
        let below = t.wrapping_sub(1);
        if let Some(reg) = op.pushed_register() {
            let t = t.wrapping_add(1);
            self.set_guest(t, reg as u8);
            return Ok(Some(t));
        }
        if let Some(bin) = Binary::of(op) {
            // `below op top` into `below`.
            if self.eax == Some(below & 15) {
                // EAX holds the slot the result replaces.
                let rhs = self.read(t);
                self.binary(bin, rhs)?;
            } else if self.eax == Some(t & 15) && bin != Binary::Sub {
                let rhs = self.read(below);
                // The top stays in its slot, popped.
                self.spill_eax()?;
                self.binary(bin, rhs)?;
            } else if self.eax == Some(t & 15) {
                // below - top = -top + below.
                let rhs = self.read(below);
                self.spill_eax()?;
                self.a.neg(eax)?;
                self.binary(Binary::Add, rhs)?;
            } else {
                self.load_eax(below)?;
                let rhs = self.read(t);
                self.binary(bin, rhs)?;
            }
            self.set_eax_slot(below);
            return Ok(Some(below));
        }
        match op {
            Op::PushW | Op::PushD => {
                let t = t.wrapping_add(1);
                self.set_const(t, arg);
                return Ok(Some(t));
            }
            Op::PushOxs | Op::PushOxf => {
                self.flush_slots()?;
                self.a.mov(r10d, arg)?;
                self.call(if op == Op::PushOxs {
                    CB_OBJECT_SELECTOR
                } else {
                    CB_OBJECT_FLAT_BASE
                })?;
                return self.push_eax(t);
            }
            Op::PushV => {
                self.spill_eax_for(t.wrapping_add(1))?;
                self.a.mov(eax, dword_ptr(rcx + 4 * arg as i32))?;
                return self.push_eax(t);
            }
            Op::PushVii => {
                self.check_var_on_top(t)?;
                // The index stays in its slot.
                self.spill_eax_for(t.wrapping_add(1))?;
                self.a.mov(eax, dword_ptr(rcx + rax * 4))?;
                return self.push_eax(t);
            }
            Op::PushWis | Op::PushSis => {
                self.flush_slots()?;
                self.read_into(r10d, below)?;
                self.read_into(r11d, t)?;
                let t = t.wrapping_sub(2);
                if op == Op::PushWis {
                    self.call_or_stop(CB_READ_SEGMENTED_WORD, t)?;
                    return self.push_eax(t);
                }
                self.call_or_stop(CB_READ_SEGMENTED_DWORD, t)?;
                return self.push_split(t);
            }
            Op::PushFif => {
                self.flush_slots()?;
                self.read_into(r10d, t)?;
                self.call_or_stop(CB_READ_FLAT_DWORD, below)?;
                return self.push_eax(below);
            }
            Op::Neg => {
                // EAX then holds the slot being replaced.
                self.load_eax(t)?;
                self.a.not(eax)?;
                self.set_eax_slot(t);
            }
            Op::Xchg => {
                // Rare: both slots stored, swapped in memory.
                self.flush_slot(t)?;
                self.flush_slot(below)?;
                self.load_eax(t)?;
                self.a.mov(r10d, slot(below))?;
                self.a.mov(slot(t), r10d)?;
                self.a.mov(slot(below), eax)?;
                self.stored(t);
                self.stored(below);
                self.eax = Some(below & 15);
            }
            Op::CnvrtDxs => {
                // The high word replaces the slot EAX holds.
                self.load_eax(t)?;
                return self.push_split(below);
            }
            Op::CnvrtSxd => {
                match self.read(t) {
                    Val::Eax => self.a.movzx(r10d, ax)?,
                    Val::Imm(v) => self.a.mov(r10d, v & 0xFFFF)?,
                    Val::Mem(at) => self.a.movzx(r10d, word_ptr(at))?,
                }
                // The top stays in its slot, popped (stored if EAX was its
                // only copy).
                self.load_eax(below)?;
                self.a.shl(eax, 16)?;
                self.a.or(eax, r10d)?;
                self.set_eax_slot(below);
                return Ok(Some(below));
            }
            Op::CnvrtFxs => {
                self.flush_slots()?;
                self.read_into(r10d, t)?;
                self.call_or_stop(CB_FLAT_TO_SEGMENTED, below)?;
                return self.push_split(below);
            }
            Op::CnvrtSxf => {
                self.flush_slots()?;
                self.read_into(r10d, t)?;
                self.read_into(r11d, below)?;
                let t = t.wrapping_sub(2);
                self.call_or_stop(CB_SEGMENTED_TO_FLAT, t)?;
                return self.push_eax(t);
            }
            Op::MoveV | Op::OrV => {
                let var = dword_ptr(rcx + 4 * arg as i32);
                match (self.read(t), op == Op::MoveV) {
                    (Val::Eax, true) => self.a.mov(var, eax)?,
                    (Val::Eax, false) => self.a.or(var, eax)?,
                    (Val::Imm(v), true) => self.a.mov(var, v as i32)?,
                    (Val::Imm(v), false) => self.a.or(var, v as i32)?,
                    (Val::Mem(at), mov) => {
                        self.a.mov(r10d, dword_ptr(at))?;
                        if mov {
                            self.a.mov(var, r10d)?;
                        } else {
                            self.a.or(var, r10d)?;
                        }
                    }
                }
            }
            Op::IncV => {
                self.a.add(dword_ptr(rcx + 4 * arg as i32), 1)?;
            }
            Op::MoveVii => {
                self.check_var_on_top(t)?;
                self.read_into(r10d, below)?;
                self.a.mov(dword_ptr(rcx + rax * 4), r10d)?;
            }
            Op::IncVii => {
                self.check_var_on_top(t)?;
                self.a.add(dword_ptr(rcx + rax * 4), 1)?;
            }
            Op::JmpN => {
                let target = arg as usize;
                if target == self.n {
                    self.exit(t, STATUS_LOGGED)?;
                } else {
                    self.leave_for(target)?;
                    self.flush()?;
                    self.sync_log_for(target)?;
                    self.reach(target, t)?;
                    let label = self.labels[target].ok_or(Error::Asm)?;
                    self.a.jmp(label)?;
                }
                return Ok(None);
            }
            Op::JmpNn | Op::JmpPn | Op::JmpZn => {
                self.branch(op, arg as usize, t)?;
            }
            Op::PopN => {
                self.pending += Op::PopN.info().cycles_per_unit * arg;
                return Ok(Some(t.wrapping_sub(arg as u8)));
            }
            Op::LogWn | Op::LogDn => {
                self.log_items(arg, op == Op::LogDn, t)?;
                self.pending += op.info().cycles_per_unit * arg;
                return Ok(Some(t.wrapping_sub(arg as u8)));
            }
            Op::LogMrs | Op::LogArs => {
                self.flush_slots()?;
                self.read_into(r10d, t)?;
                self.read_into(r11d, below)?;
                self.load_eax(t.wrapping_sub(2))?;
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
                self.flush_slots()?;
                self.read_into(r10d, t)?;
                self.load_eax(below)?;
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
                self.a.mov(word_ptr(rdi + at), (arg & 0xFFFF) as i32)?;
            }
            Op::SetMin | Op::SetMaj => {
                self.needs_frame()?;
                let at = if op == Op::SetMin { MINOR } else { MAJOR };
                self.load_eax(t)?;
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
