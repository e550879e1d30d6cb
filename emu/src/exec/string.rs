//! String instructions MOVS/CMPS/STOS/LODS/SCAS/INS/OUTS with REP, REPE and
//! REPNE. The address size picks SI/DI/CX or ESI/EDI/ECX; a fault in the
//! middle of a REP leaves the registers at the faulting iteration so the
//! instruction restarts where it stopped, as on hardware. A REP runs at
//! most 4096 iterations per step (each such chunk counts as one retired
//! instruction), then resumes at the next step.

use super::alu::sub;
use super::operand::mask;
use crate::cpu::flags::*;
use crate::cpu::{CpuModel, Gpr, SegReg};
use crate::fault::{Fault, R};
use crate::machine::Machine;
use iced_x86::{Instruction, Mnemonic};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Movs,
    Cmps,
    Stos,
    Lods,
    Scas,
    Ins,
    Outs,
}

fn classify(m: Mnemonic) -> Option<(Op, u32)> {
    use Mnemonic::*;
    Some(match m {
        Movsb => (Op::Movs, 1),
        Movsw => (Op::Movs, 2),
        Movsd => (Op::Movs, 4),
        Cmpsb => (Op::Cmps, 1),
        Cmpsw => (Op::Cmps, 2),
        Cmpsd => (Op::Cmps, 4),
        Stosb => (Op::Stos, 1),
        Stosw => (Op::Stos, 2),
        Stosd => (Op::Stos, 4),
        Lodsb => (Op::Lods, 1),
        Lodsw => (Op::Lods, 2),
        Lodsd => (Op::Lods, 4),
        Scasb => (Op::Scas, 1),
        Scasw => (Op::Scas, 2),
        Scasd => (Op::Scas, 4),
        Insb => (Op::Ins, 1),
        Insw => (Op::Ins, 2),
        Insd => (Op::Ins, 4),
        Outsb => (Op::Outs, 1),
        Outsw => (Op::Outs, 2),
        Outsd => (Op::Outs, 4),
        _ => return None,
    })
}

/// Iterations of a REP string instruction run per step; the instruction
/// restarts for the rest, so budgets, interrupts and host exits are never
/// held off by a huge count.
pub(crate) const REP_CHUNK: u32 = 4096;

/// Is `m` a string instruction?
pub(crate) fn is_string(m: Mnemonic) -> bool {
    classify(m).is_some()
}

impl Machine {
    /// A string access faulted. The 286 first finishes the iteration's
    /// pointer (and REP count) updates for the operands it has touched, and
    /// the restart point keeps them (observed on hardware); later CPUs
    /// leave the registers as they were.
    fn str_fault(&mut self, f: Fault, regs: &[usize], delta: u32, rep: bool) -> Fault {
        if self.model == CpuModel::I286 {
            for r in regs {
                self.bump(*r, delta);
            }
            if rep {
                self.bump(1, u32::MAX);
            }
            self.commit_progress();
        }
        f
    }

    fn idx(&self, r: usize) -> u32 {
        if self.addr32 {
            self.cpu.gpr[r]
        } else {
            self.cpu.gpr[r] & 0xFFFF
        }
    }

    fn bump(&mut self, r: usize, delta: u32) {
        let g = &mut self.cpu.gpr[r];
        if self.addr32 {
            *g = g.wrapping_add(delta);
        } else {
            *g = (*g & 0xFFFF_0000) | (g.wrapping_add(delta) & 0xFFFF);
        }
    }

    /// Execute a string instruction (all REP iterations).
    #[inline(never)]
    pub(crate) fn string_op(&mut self, insn: &Instruction, m: Mnemonic) -> R<()> {
        let Some((op, n)) = classify(m) else {
            return Ok(());
        };
        let rep = insn.has_rep_prefix() || insn.has_repne_prefix();
        let repne = insn.has_repne_prefix();
        let delta = if self.cpu.eflags & DF != 0 {
            n.wrapping_neg()
        } else {
            n
        };
        let src = Self::mseg(insn);
        let port = (self.cpu.gpr[Gpr::Edx] & 0xFFFF) as u16;
        if matches!(op, Op::Ins | Op::Outs) {
            self.io_check(port, n)?;
        }
        let mut budget = REP_CHUNK;
        loop {
            if rep && self.idx(1) == 0 {
                break;
            }
            if budget == 0 {
                // Leave the rest for the next step, as hardware lets
                // interrupts in between iterations.
                self.cpu.eip = self.start_eip;
                break;
            }
            budget -= 1;
            match op {
                Op::Movs => {
                    let v = self
                        .read_mem(src, self.idx(6), n)
                        .map_err(|f| self.str_fault(f, &[6], delta, rep))?;
                    let r = self.write_mem(SegReg::Es, self.idx(7), n, v);
                    r.map_err(|f| self.str_fault(f, &[6, 7], delta, rep))?;
                    self.bump(6, delta);
                    self.bump(7, delta);
                }
                Op::Cmps => {
                    let b = self.read_mem(SegReg::Es, self.idx(7), n);
                    let b = b.map_err(|f| self.str_fault(f, &[7], delta, rep))?;
                    let a = self.read_mem(src, self.idx(6), n);
                    let a = a.map_err(|f| self.str_fault(f, &[7, 6], delta, rep))?;
                    let (_, f) = sub(a, b, 0, n);
                    self.set_status(f, STATUS);
                    self.bump(6, delta);
                    self.bump(7, delta);
                }
                Op::Stos => {
                    let v = self.cpu.gpr[Gpr::Eax] & mask(n);
                    let r = self.write_mem(SegReg::Es, self.idx(7), n, v);
                    r.map_err(|f| self.str_fault(f, &[7], delta, rep))?;
                    self.bump(7, delta);
                }
                Op::Lods => {
                    let v = self.read_mem(src, self.idx(6), n);
                    let v = v.map_err(|f| self.str_fault(f, &[6], delta, rep))?;
                    let r = match n {
                        1 => iced_x86::Register::AL,
                        2 => iced_x86::Register::AX,
                        _ => iced_x86::Register::EAX,
                    };
                    self.set_reg(r, v);
                    self.bump(6, delta);
                }
                Op::Scas => {
                    let b = self.read_mem(SegReg::Es, self.idx(7), n);
                    let b = b.map_err(|f| self.str_fault(f, &[7], delta, rep))?;
                    let (_, f) = sub(self.cpu.gpr[Gpr::Eax], b, 0, n);
                    self.set_status(f, STATUS);
                    self.bump(7, delta);
                }
                Op::Ins => {
                    let off = self.idx(7);
                    if let Err(f) = self.seg_linear(SegReg::Es, off, n, true) {
                        return Err(self.str_fault(f, &[7], delta, rep));
                    }
                    let v = self.bus.read(port, n as u8);
                    self.write_mem(SegReg::Es, off, n, v & mask(n))?;
                    self.bump(7, delta);
                }
                Op::Outs => {
                    let v = self.read_mem(src, self.idx(6), n);
                    let v = v.map_err(|f| self.str_fault(f, &[6], delta, rep))?;
                    self.bus.write(port, n as u8, v);
                    self.bump(6, delta);
                }
            }
            if !rep {
                break;
            }
            self.bump(1, u32::MAX);
            self.cycles += 4;
            self.commit_progress();
            if matches!(op, Op::Cmps | Op::Scas) {
                let zf = self.cpu.eflags & ZF != 0;
                if zf == repne {
                    break;
                }
            }
        }
        Ok(())
    }
}
