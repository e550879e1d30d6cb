//! Integer ALU: ADD/ADC/SUB/SBB/CMP/AND/OR/XOR/TEST/INC/DEC/NEG/NOT and the
//! exact flag computations they share. Logic ops clear AF (undefined by
//! Intel; the 286 and 386 clear it).

use super::operand::{mask, sign};
use crate::cpu::flags::*;
use crate::fault::R;
use crate::machine::Machine;
use iced_x86::{Instruction, Mnemonic};

/// PF for the low byte of `v`.
#[inline]
pub(crate) fn parity(v: u32) -> u32 {
    if (v as u8).count_ones() & 1 == 0 {
        PF
    } else {
        0
    }
}

/// SF, ZF, PF of a result of `n` bytes.
#[inline]
pub(crate) fn szp(r: u32, n: u32) -> u32 {
    let r = r & mask(n);
    let mut f = parity(r);
    if r == 0 {
        f |= ZF;
    }
    if r & sign(n) != 0 {
        f |= SF;
    }
    f
}

/// a + b + c with flags.
#[inline]
pub(crate) fn add(a: u32, b: u32, c: u32, n: u32) -> (u32, u32) {
    let m = mask(n);
    let wide = u64::from(a & m) + u64::from(b & m) + u64::from(c);
    let r = (wide as u32) & m;
    let mut f = szp(r, n) | ((a ^ b ^ r) & AF);
    if wide > u64::from(m) {
        f |= CF;
    }
    if (a ^ r) & (b ^ r) & sign(n) != 0 {
        f |= OF;
    }
    (r, f)
}

/// a - b - c with flags.
#[inline]
pub(crate) fn sub(a: u32, b: u32, c: u32, n: u32) -> (u32, u32) {
    let m = mask(n);
    let (a, b) = (a & m, b & m);
    let r = a.wrapping_sub(b).wrapping_sub(c) & m;
    let mut f = szp(r, n) | ((a ^ b ^ r) & AF);
    if u64::from(a) < u64::from(b) + u64::from(c) {
        f |= CF;
    }
    if (a ^ b) & (a ^ r) & sign(n) != 0 {
        f |= OF;
    }
    (r, f)
}

impl Machine {
    /// Replace the status flags in `which` with `f`.
    #[inline]
    pub(crate) fn set_status(&mut self, f: u32, which: u32) {
        self.cpu.eflags = (self.cpu.eflags & !which) | (f & which);
    }

    #[inline]
    pub(crate) fn cf(&self) -> u32 {
        self.cpu.eflags & CF
    }

    /// Two-operand ALU forms.
    pub(crate) fn alu2(&mut self, insn: &Instruction, m: Mnemonic) -> R<()> {
        let n = Self::op_size(insn, 0);
        let dst = self.loc(insn, 0);
        let a = self.read_loc(dst, n)?;
        let b = self.read_op(insn, 1)?;
        let (r, f, write) = match m {
            Mnemonic::Add => {
                let (r, f) = add(a, b, 0, n);
                (r, f, true)
            }
            Mnemonic::Adc => {
                let (r, f) = add(a, b, self.cf(), n);
                (r, f, true)
            }
            Mnemonic::Sub => {
                let (r, f) = sub(a, b, 0, n);
                (r, f, true)
            }
            Mnemonic::Sbb => {
                let (r, f) = sub(a, b, self.cf(), n);
                (r, f, true)
            }
            Mnemonic::Cmp => {
                let (r, f) = sub(a, b, 0, n);
                (r, f, false)
            }
            Mnemonic::And => {
                let r = a & b & mask(n);
                (r, szp(r, n), true)
            }
            Mnemonic::Or => {
                let r = (a | b) & mask(n);
                (r, szp(r, n), true)
            }
            Mnemonic::Xor => {
                let r = (a ^ b) & mask(n);
                (r, szp(r, n), true)
            }
            _ => {
                let r = a & b & mask(n);
                (r, szp(r, n), false)
            }
        };
        if write {
            self.write_loc(dst, n, r)?;
        }
        self.set_status(f, STATUS);
        Ok(())
    }

    /// INC/DEC/NEG/NOT.
    pub(crate) fn alu1(&mut self, insn: &Instruction, m: Mnemonic) -> R<()> {
        let n = Self::op_size(insn, 0);
        let dst = self.loc(insn, 0);
        let a = self.read_loc(dst, n)?;
        match m {
            Mnemonic::Inc => {
                let (r, f) = add(a, 1, 0, n);
                self.write_loc(dst, n, r)?;
                self.set_status(f, STATUS & !CF);
            }
            Mnemonic::Dec => {
                let (r, f) = sub(a, 1, 0, n);
                self.write_loc(dst, n, r)?;
                self.set_status(f, STATUS & !CF);
            }
            Mnemonic::Neg => {
                let (r, f) = sub(0, a, 0, n);
                self.write_loc(dst, n, r)?;
                self.set_status(f, STATUS);
            }
            _ => {
                self.write_loc(dst, n, !a & mask(n))?;
            }
        }
        Ok(())
    }
}
