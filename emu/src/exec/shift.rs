//! Shifts and rotates: ROL/ROR/RCL/RCR/SHL/SAL/SHR/SAR and SHLD/SHRD.
//!
//! The count is masked to 5 bits (286 and later). A masked count of zero
//! changes nothing, not even flags. RCL/RCR rotate through CF over n+1
//! bits. OF is computed with the one-bit formula whatever the count (Intel:
//! undefined for counts above 1); AF is left unchanged (undefined).

use super::alu::szp;
use super::operand::{mask, sext, sign};
use crate::cpu::flags::*;
use crate::fault::R;
use crate::machine::Machine;
use iced_x86::{Instruction, Mnemonic};

#[inline]
fn b(x: bool) -> u32 {
    u32::from(x)
}

impl Machine {
    /// ROL/ROR/RCL/RCR/SHL/SAL/SHR/SAR.
    pub(crate) fn shift(&mut self, insn: &Instruction, m: Mnemonic) -> R<()> {
        let n = Self::op_size(insn, 0);
        let dst = self.loc(insn, 0);
        let a = self.read_loc(dst, n)? & mask(n);
        let cnt = self.read_op(insn, 1)? & 0x1F;
        if cnt == 0 {
            return Ok(());
        }
        let bits = n * 8;
        let sb = sign(n);
        let mk = mask(n);
        let msb = |v: u32| b(v & sb != 0);
        let (r, f, which) = match m {
            Mnemonic::Rol => {
                let c = cnt % bits;
                let r = if c == 0 {
                    a
                } else {
                    ((a << c) | (a >> (bits - c))) & mk
                };
                let cf = r & 1;
                (r, cf | ((msb(r) ^ cf) << 11), CF | OF)
            }
            Mnemonic::Ror => {
                let c = cnt % bits;
                let r = if c == 0 {
                    a
                } else {
                    ((a >> c) | (a << (bits - c))) & mk
                };
                let cf = msb(r);
                let of = msb(r) ^ b(r & (sb >> 1) != 0);
                (r, cf | (of << 11), CF | OF)
            }
            Mnemonic::Rcl => {
                let c = if n == 4 { cnt } else { cnt % (bits + 1) };
                let mut r = a;
                let mut carry = self.cf();
                for _ in 0..c {
                    let out = msb(r);
                    r = ((r << 1) | carry) & mk;
                    carry = out;
                }
                (r, carry | ((msb(r) ^ carry) << 11), CF | OF)
            }
            Mnemonic::Rcr => {
                let c = if n == 4 { cnt } else { cnt % (bits + 1) };
                let mut r = a;
                let mut carry = self.cf();
                for _ in 0..c {
                    let out = r & 1;
                    r = (r >> 1) | if carry != 0 { sb } else { 0 };
                    carry = out;
                }
                let of = msb(r) ^ b(r & (sb >> 1) != 0);
                (r, carry | (of << 11), CF | OF)
            }
            Mnemonic::Shl | Mnemonic::Sal => {
                let wide = u64::from(a) << cnt;
                let r = (wide as u32) & mk;
                let cf = ((wide >> bits) & 1) as u32;
                (r, szp(r, n) | cf | ((msb(r) ^ cf) << 11), STATUS & !AF)
            }
            Mnemonic::Shr => {
                let cf = ((u64::from(a) >> (cnt - 1)) & 1) as u32;
                let r = ((u64::from(a) >> cnt) as u32) & mk;
                (
                    r,
                    szp(r, n) | cf | (msb(a >> (cnt - 1)) << 11),
                    STATUS & !AF,
                )
            }
            _ => {
                let s = i64::from(sext(a, n) as i32);
                let cf = ((s >> (cnt - 1)) & 1) as u32;
                let r = ((s >> cnt) as u32) & mk;
                (r, szp(r, n) | cf, STATUS & !AF)
            }
        };
        self.write_loc(dst, n, r)?;
        self.set_status(f, which);
        Ok(())
    }

    /// SHLD/SHRD.
    #[inline(never)]
    pub(crate) fn shift_double(&mut self, insn: &Instruction, left: bool) -> R<()> {
        let n = Self::op_size(insn, 0);
        let dst = self.loc(insn, 0);
        let a = self.read_loc(dst, n)? & mask(n);
        let src = self.reg(insn.op_register(1)) & mask(n);
        let cnt = self.read_op(insn, 2)? & 0x1F;
        if cnt == 0 {
            return Ok(());
        }
        let bits = n * 8;
        let (r, cf) = if left {
            let wide = (u128::from(a) << bits) | u128::from(src);
            let w = wide << cnt;
            (
                ((w >> bits) as u32) & mask(n),
                ((w >> (2 * bits)) & 1) as u32,
            )
        } else {
            let wide = (u64::from(src) << bits) | u64::from(a);
            (
                ((wide >> cnt) as u32) & mask(n),
                ((wide >> (cnt - 1)) & 1) as u32,
            )
        };
        let of = u32::from((r ^ a) & sign(n) != 0);
        self.write_loc(dst, n, r)?;
        self.set_status(szp(r, n) | cf | (of << 11), STATUS & !AF);
        Ok(())
    }
}
