//! MUL/IMUL/DIV/IDIV (with #DE), sign extensions and the BCD adjusts.
//!
//! Division faults when the divisor is zero or the quotient does not fit;
//! as on the 286 and later, a signed quotient of exactly -2^(n-1) fits.
//! Undefined flags: MUL/IMUL set SF/ZF/PF from the low half and clear AF;
//! DIV/IDIV leave all flags unchanged. AAA/AAS use the 286+ forms
//! (AX += 0x106 / AX -= 6, AH -= 1).

use super::alu::szp;
use super::operand::{mask, sext};
use crate::cpu::Gpr;
use crate::cpu::flags::*;
use crate::fault::{Fault, R};
use crate::machine::Machine;
use iced_x86::{Instruction, Mnemonic};

impl Machine {
    fn acc(&self, n: u32) -> u64 {
        let g = &self.cpu.gpr;
        match n {
            1 => u64::from(g[0] & 0xFFFF),
            2 => (u64::from(g[2] & 0xFFFF) << 16) | u64::from(g[0] & 0xFFFF),
            _ => (u64::from(g[2]) << 32) | u64::from(g[0]),
        }
    }

    fn set_wide(&mut self, n: u32, lo: u32, hi: u32) {
        match n {
            1 => {
                self.cpu.gpr[Gpr::Eax] =
                    (self.cpu.gpr[Gpr::Eax] & 0xFFFF_0000) | (lo & 0xFF) | ((hi & 0xFF) << 8);
            }
            2 => {
                self.cpu.gpr[Gpr::Eax] = (self.cpu.gpr[Gpr::Eax] & 0xFFFF_0000) | (lo & 0xFFFF);
                self.cpu.gpr[Gpr::Edx] = (self.cpu.gpr[Gpr::Edx] & 0xFFFF_0000) | (hi & 0xFFFF);
            }
            _ => {
                self.cpu.gpr[Gpr::Eax] = lo;
                self.cpu.gpr[Gpr::Edx] = hi;
            }
        }
    }

    /// MUL / one-operand IMUL.
    #[inline(never)]
    pub(crate) fn mul1(&mut self, insn: &Instruction, signed: bool) -> R<()> {
        let n = Self::op_size(insn, 0);
        let src = self.read_op(insn, 0)? & mask(n);
        let a = self.cpu.gpr[Gpr::Eax] & mask(n);
        let bits = n * 8;
        let (lo, hi, over) = if signed {
            let p = i64::from(sext(a, n) as i32) * i64::from(sext(src, n) as i32);
            let lo = (p as u32) & mask(n);
            let hi = ((p >> bits) as u32) & mask(n);
            (lo, hi, p != i64::from(sext(lo, n) as i32))
        } else {
            let p = u64::from(a) * u64::from(src);
            let lo = (p as u32) & mask(n);
            let hi = ((p >> bits) as u32) & mask(n);
            (lo, hi, hi != 0)
        };
        self.set_wide(n, lo, hi);
        let f = szp(lo, n) | if over { CF | OF } else { 0 };
        self.set_status(f, STATUS);
        Ok(())
    }

    /// Two- and three-operand IMUL.
    #[inline(never)]
    pub(crate) fn imul_n(&mut self, insn: &Instruction) -> R<()> {
        let n = Self::op_size(insn, 0);
        let (a, b) = if insn.op_count() == 3 {
            (self.read_op(insn, 1)?, self.read_op(insn, 2)?)
        } else {
            (self.read_op(insn, 0)?, self.read_op(insn, 1)?)
        };
        let p = i64::from(sext(a & mask(n), n) as i32) * i64::from(sext(b & mask(n), n) as i32);
        let r = (p as u32) & mask(n);
        let over = p != i64::from(sext(r, n) as i32);
        self.set_reg(insn.op_register(0), r);
        self.set_status(szp(r, n) | if over { CF | OF } else { 0 }, STATUS);
        Ok(())
    }

    /// DIV / IDIV.
    #[inline(never)]
    pub(crate) fn div(&mut self, insn: &Instruction, signed: bool) -> R<()> {
        let n = Self::op_size(insn, 0);
        let src = self.read_op(insn, 0)? & mask(n);
        if src == 0 {
            return Err(Fault::de());
        }
        let bits = n * 8;
        let dividend = self.acc(n);
        if signed {
            let d = if n == 4 {
                i128::from(dividend as i64)
            } else {
                let w = dividend as u32;
                i128::from(if n == 1 {
                    w as u16 as i16 as i32
                } else {
                    w as i32
                })
            };
            let s = i128::from(sext(src, n) as i32);
            let q = d / s;
            let r = d % s;
            let lim = 1i128 << (bits - 1);
            if q >= lim || q < -lim {
                return Err(Fault::de());
            }
            self.set_wide(n, q as u32, r as u32);
        } else {
            let q = dividend / u64::from(src);
            let r = dividend % u64::from(src);
            if q > u64::from(mask(n)) {
                return Err(Fault::de());
            }
            self.set_wide(n, q as u32, r as u32);
        }
        Ok(())
    }

    /// Sign extensions: CBW/CWDE/CWD/CDQ.
    pub(crate) fn sign_ext(&mut self, m: Mnemonic) {
        let g = &mut self.cpu.gpr;
        match m {
            Mnemonic::Cbw => g[0] = (g[0] & 0xFFFF_0000) | (sext(g[0], 1) & 0xFFFF),
            Mnemonic::Cwde => g[0] = sext(g[0], 2),
            Mnemonic::Cwd => {
                let hi = if g[0] & 0x8000 != 0 { 0xFFFF } else { 0 };
                g[2] = (g[2] & 0xFFFF_0000) | hi;
            }
            _ => g[2] = if g[0] & 0x8000_0000 != 0 { u32::MAX } else { 0 },
        }
    }

    fn set_al(&mut self, v: u32) {
        self.cpu.gpr[Gpr::Eax] = (self.cpu.gpr[Gpr::Eax] & !0xFF) | (v & 0xFF);
    }

    /// DAA/DAS/AAA/AAS/AAM/AAD/SALC.
    #[inline(never)]
    pub(crate) fn bcd(&mut self, insn: &Instruction, m: Mnemonic) -> R<()> {
        let al = self.cpu.gpr[Gpr::Eax] & 0xFF;
        let fl = self.cpu.eflags;
        let (af, cf) = (fl & AF != 0, fl & CF != 0);
        match m {
            Mnemonic::Daa | Mnemonic::Das => {
                let mut r = al;
                let mut ncf = false;
                let mut naf = false;
                let up = m == Mnemonic::Daa;
                if (al & 0xF) > 9 || af {
                    r = if up { r + 6 } else { r.wrapping_sub(6) };
                    ncf = cf || if up { r > 0xFF } else { al < 6 };
                    naf = true;
                    r &= 0xFF;
                }
                if al > 0x99 || cf {
                    r = if up { r + 0x60 } else { r.wrapping_sub(0x60) } & 0xFF;
                    ncf = true;
                }
                self.set_al(r);
                let of = if up {
                    (!al & r & 0x80) != 0
                } else {
                    (al & !r & 0x80) != 0
                };
                let f = szp(r, 1)
                    | if ncf { CF } else { 0 }
                    | if naf { AF } else { 0 }
                    | if of { OF } else { 0 };
                self.set_status(f, STATUS);
            }
            Mnemonic::Aaa | Mnemonic::Aas => {
                let ax = self.cpu.gpr[Gpr::Eax] & 0xFFFF;
                let adj = (al & 0xF) > 9 || af;
                let nax = if !adj {
                    ax
                } else if m == Mnemonic::Aaa {
                    ax.wrapping_add(0x106)
                } else {
                    let t = ax.wrapping_sub(6);
                    (t & 0xFF) | ((t & 0xFF00).wrapping_sub(0x100) & 0xFF00)
                };
                let nax = nax & 0xFF0F;
                self.cpu.gpr[Gpr::Eax] = (self.cpu.gpr[Gpr::Eax] & 0xFFFF_0000) | nax;
                let f = szp(nax, 1) | if adj { AF | CF } else { 0 };
                self.set_status(f, STATUS);
            }
            Mnemonic::Aam => {
                let base = insn.immediate8() as u32;
                if base == 0 {
                    return Err(Fault::de());
                }
                let (q, r) = (al / base, al % base);
                self.cpu.gpr[Gpr::Eax] = (self.cpu.gpr[Gpr::Eax] & 0xFFFF_0000) | (q << 8) | r;
                self.set_status(szp(r, 1), STATUS);
            }
            Mnemonic::Aad => {
                let base = insn.immediate8() as u32;
                let ah = (self.cpu.gpr[Gpr::Eax] >> 8) & 0xFF;
                let (r, f) = super::alu::add(al, (ah * base) & 0xFF, 0, 1);
                self.cpu.gpr[Gpr::Eax] = (self.cpu.gpr[Gpr::Eax] & 0xFFFF_0000) | r;
                self.set_status(f, STATUS);
            }
            _ => {
                self.set_al(if cf { 0xFF } else { 0 });
            }
        }
        Ok(())
    }
}
