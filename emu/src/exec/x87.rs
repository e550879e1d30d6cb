//! The x87 subset: what programs use to probe for a coprocessor. FNINIT,
//! FNCLEX, FNSTSW (AX or m16), FNSTCW, FLDCW, FNOP, FSETPM/FNENI/FNDISI (no
//! operation, as on a 387) and WAIT/FWAIT are executed. With CR0.EM or
//! CR0.TS set every ESC opcode raises #NM (so a kernel can emulate or
//! switch context); WAIT raises #NM when CR0.MP and CR0.TS are both set.
//! Any other x87 instruction raises #UD.

use crate::cpu::CR0_TS;
use crate::fault::{Fault, R, vector};
use crate::machine::Machine;
use iced_x86::{Instruction, Mnemonic as M, OpKind};

const CR0_MP: u32 = 2;
const CR0_EM: u32 = 4;

impl Machine {
    /// WAIT / FWAIT.
    pub(crate) fn fwait(&mut self) -> R<()> {
        if self.cpu.cr0 & (CR0_MP | CR0_TS) == (CR0_MP | CR0_TS) {
            return Err(Fault::new(vector::NM));
        }
        Ok(())
    }

    /// An ESC instruction.
    #[inline(never)]
    pub(crate) fn x87(&mut self, insn: &Instruction, m: M) -> R<()> {
        if self.cpu.cr0 & (CR0_EM | CR0_TS) != 0 {
            return Err(Fault::new(vector::NM));
        }
        match m {
            M::Fninit => {
                self.cpu.fpu_cw = 0x037F;
                self.cpu.fpu_sw = 0;
                self.cpu.fpu_tags = 0;
            }
            M::Fnclex => self.cpu.fpu_sw &= 0x7F00,
            M::Fnstsw => {
                let v = u32::from(self.cpu.fpu_sw);
                if insn.op0_kind() == OpKind::Register {
                    self.set_reg(iced_x86::Register::AX, v);
                } else {
                    let (s, ea) = (Self::mseg(insn), self.ea(insn));
                    self.write_mem(s, ea, 2, v)?;
                }
            }
            M::Fnstcw => {
                let (s, ea) = (Self::mseg(insn), self.ea(insn));
                self.write_mem(s, ea, 2, u32::from(self.cpu.fpu_cw))?;
            }
            M::Fldcw => {
                let (s, ea) = (Self::mseg(insn), self.ea(insn));
                self.cpu.fpu_cw = self.read_mem(s, ea, 2)? as u16 | 0x40;
            }
            M::Fnop | M::Fsetpm | M::Fneni | M::Fndisi => {}
            _ => return Err(Fault::ud()),
        }
        Ok(())
    }
}
