//! Bit instructions: BT/BTS/BTR/BTC (register offsets address memory
//! beyond the operand, signed), BSF/BSR (destination unchanged on zero
//! input), XADD and CMPXCHG (486).

use super::alu::{add, sub};
use super::operand::{Loc, mask, sext};
use crate::cpu::Gpr;
use crate::cpu::flags::*;
use crate::fault::R;
use crate::machine::Machine;
use iced_x86::{Instruction, Mnemonic, OpKind, Register};

impl Machine {
    /// BT/BTS/BTR/BTC.
    #[inline(never)]
    pub(crate) fn bit_test(&mut self, insn: &Instruction, m: Mnemonic) -> R<()> {
        let n = Self::op_size(insn, 0);
        let bits = n * 8;
        let off = self.read_op(insn, 1)?;
        let mut l = self.loc(insn, 0);
        if let (Loc::Mem(s, ea), OpKind::Register) = (l, insn.op1_kind()) {
            let so = sext(off, n) as i32;
            let delta = (so >> bits.trailing_zeros()).wrapping_mul(n as i32) as u32;
            let a = ea.wrapping_add(delta);
            l = Loc::Mem(s, if self.addr32 { a } else { a & 0xFFFF });
        }
        let bit = off & (bits - 1);
        let v = self.read_loc(l, n)?;
        let cf = (v >> bit) & 1;
        let nv = match m {
            Mnemonic::Bts => v | (1 << bit),
            Mnemonic::Btr => v & !(1 << bit),
            Mnemonic::Btc => v ^ (1 << bit),
            _ => v,
        };
        if m != Mnemonic::Bt {
            self.write_loc(l, n, nv)?;
        }
        self.set_status(cf, CF);
        Ok(())
    }

    /// BSF/BSR.
    #[inline(never)]
    pub(crate) fn bit_scan(&mut self, insn: &Instruction, forward: bool) -> R<()> {
        let n = Self::op_size(insn, 0);
        let v = self.read_op(insn, 1)? & mask(n);
        if v == 0 {
            self.set_status(ZF, ZF);
            return Ok(());
        }
        let idx = if forward {
            v.trailing_zeros()
        } else {
            31 - v.leading_zeros()
        };
        self.set_reg(insn.op0_register(), idx);
        self.set_status(0, ZF);
        Ok(())
    }

    /// XADD.
    #[inline(never)]
    pub(crate) fn xadd(&mut self, insn: &Instruction) -> R<()> {
        let n = Self::op_size(insn, 0);
        let d = self.loc(insn, 0);
        let a = self.read_loc(d, n)?;
        let src = insn.op1_register();
        let b = self.reg(src);
        let (r, f) = add(a, b, 0, n);
        // Source first: with the same register on both sides the sum wins
        // (a faulting memory write restores the registers).
        self.set_reg(src, a);
        self.write_loc(d, n, r)?;
        self.set_status(f, STATUS);
        Ok(())
    }

    /// CMPXCHG.
    #[inline(never)]
    pub(crate) fn cmpxchg(&mut self, insn: &Instruction) -> R<()> {
        let n = Self::op_size(insn, 0);
        let d = self.loc(insn, 0);
        let v = self.read_loc(d, n)?;
        let acc = self.cpu.gpr[Gpr::Eax] & mask(n);
        let (_, f) = sub(acc, v, 0, n);
        if f & ZF != 0 {
            let s = self.reg(insn.op1_register());
            self.write_loc(d, n, s)?;
        } else {
            self.write_loc(d, n, v)?;
            let r = match n {
                1 => Register::AL,
                2 => Register::AX,
                _ => Register::EAX,
            };
            self.set_reg(r, v);
        }
        self.set_status(f, STATUS);
        Ok(())
    }
}
