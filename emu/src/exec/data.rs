//! Data movement and stack instructions: MOV (general, segment, control and
//! debug registers), PUSH/POP (incl. segment registers), PUSHA/POPA,
//! PUSHF/POPF, XCHG, LDS/LES/LSS/LFS/LGS, MOVZX/MOVSX, BOUND, CLI/STI,
//! IN/OUT with the IOPL and TSS I/O-bitmap rules, and CPUID.

use super::operand::{Loc, reg_size, sext};
use crate::cpu::flags::*;
use crate::cpu::{CR0_PE, CR0_PG, CR0_WP, CpuModel, Gpr, SegReg};
use crate::fault::{Fault, R, vector};
use crate::machine::Machine;
use iced_x86::{Instruction, Mnemonic, OpKind, Register};

impl Machine {
    /// MOV in all its forms.
    pub(crate) fn mov(&mut self, insn: &Instruction) -> R<()> {
        let r0 = if insn.op0_kind() == OpKind::Register {
            insn.op0_register()
        } else {
            Register::None
        };
        let r1 = if insn.op1_kind() == OpKind::Register {
            insn.op1_register()
        } else {
            Register::None
        };
        if let Some(s) = SegReg::from_iced(r0) {
            if s == SegReg::Cs {
                return Err(Fault::ud());
            }
            let v = self.read_op(insn, 1)? as u16;
            self.load_sreg(s, v)?;
            if s == SegReg::Ss {
                self.inhibit = true;
            }
            return Ok(());
        }
        if r0.is_cr() || r0.is_dr() || r1.is_cr() || r1.is_dr() {
            return self.mov_crdr(r0, r1);
        }
        if SegReg::from_iced(r1).is_some() {
            let v = self.reg(r1);
            return match self.loc(insn, 0) {
                Loc::Reg(r) => {
                    self.set_reg(r, v);
                    Ok(())
                }
                Loc::Mem(s, off) => self.write_mem(s, off, 2, v),
            };
        }
        let v = self.read_op(insn, 1)?;
        let n = Self::op_size(insn, 0);
        let l = self.loc(insn, 0);
        self.write_loc(l, n, v)
    }

    #[inline(never)]
    fn mov_crdr(&mut self, dst: Register, src: Register) -> R<()> {
        if self.cpu.protected() && (self.cpu.cpl != 0 || self.cpu.v86()) {
            return Err(Fault::gp(0));
        }
        let cr0 = Register::CR0 as u32;
        let dr0 = Register::DR0 as u32;
        if src.is_cr() {
            let v = match src as u32 - cr0 {
                0 => self.cpu.cr0,
                2 => self.cpu.cr2,
                3 => self.cpu.cr3,
                4 if self.model == CpuModel::I486 => self.cpu.cr4,
                _ => return Err(Fault::ud()),
            };
            self.set_reg(dst, v);
        } else if src.is_dr() {
            let i = (src as u32 - dr0) as usize;
            let i = if i == 4 || i == 5 { i + 2 } else { i };
            let v = self.cpu.dr.get(i).copied().ok_or(Fault::ud())?;
            self.set_reg(dst, v);
        } else if dst.is_cr() {
            let v = self.reg(src);
            match dst as u32 - cr0 {
                0 => {
                    if v & CR0_PG != 0 && v & CR0_PE == 0 {
                        return Err(Fault::gp(0));
                    }
                    let old = self.cpu.cr0;
                    self.cpu.cr0 = v | 0x10;
                    if (old ^ self.cpu.cr0) & (CR0_PG | CR0_PE | CR0_WP) != 0 {
                        self.tlb.flush();
                    }
                    if !self.cpu.protected() {
                        self.cpu.cpl = 0;
                    }
                }
                2 => self.cpu.cr2 = v,
                3 => {
                    self.cpu.cr3 = v;
                    self.tlb.flush();
                }
                4 if self.model == CpuModel::I486 => self.cpu.cr4 = v,
                _ => return Err(Fault::ud()),
            }
        } else {
            let i = (dst as u32 - dr0) as usize;
            let i = if i == 4 || i == 5 { i + 2 } else { i };
            let v = self.reg(src);
            *self.cpu.dr.get_mut(i).ok_or(Fault::ud())? = v;
        }
        Ok(())
    }

    /// PUSH r/m/imm/sreg.
    pub(crate) fn push_op(&mut self, insn: &Instruction) -> R<()> {
        let n = Self::stack_size(insn);
        let v = self.read_op(insn, 0)?;
        self.push(v, n)
    }

    /// POP r/m/sreg.
    pub(crate) fn pop_op(&mut self, insn: &Instruction) -> R<()> {
        let n = Self::stack_size(insn);
        if insn.op0_kind() == OpKind::Register {
            let r = insn.op0_register();
            if let Some(s) = SegReg::from_iced(r) {
                let sp = self.sp();
                let v = self.read_mem(SegReg::Ss, sp, n)? as u16;
                let old_big = self.cpu.seg[SegReg::Ss].big();
                self.load_sreg(s, v)?;
                // ESP advances by the stack size in force before the load.
                let g = &mut self.cpu.gpr[Gpr::Esp];
                *g = if old_big {
                    g.wrapping_add(n)
                } else {
                    (*g & 0xFFFF_0000) | (sp.wrapping_add(n) & 0xFFFF)
                };
                if s == SegReg::Ss {
                    self.inhibit = true;
                }
                return Ok(());
            }
            let v = self.pop(n)?;
            self.set_reg(r, v);
            return Ok(());
        }
        let v = self.pop(n)?;
        let l = self.loc(insn, 0);
        self.write_loc(l, n, v)
    }

    /// PUSHA/PUSHAD.
    #[inline(never)]
    pub(crate) fn pusha(&mut self, d: bool) -> R<()> {
        let n = if d { 4 } else { 2 };
        let sp = self.cpu.gpr[Gpr::Esp];
        let regs = self.cpu.gpr;
        for (i, v) in regs.iter().enumerate() {
            self.push(if i == 4 { sp } else { *v }, n)?;
        }
        Ok(())
    }

    /// POPA/POPAD.
    #[inline(never)]
    pub(crate) fn popa(&mut self, d: bool) -> R<()> {
        let n = if d { 4 } else { 2 };
        for i in (0..8).rev() {
            let v = self.pop(n)?;
            if i != 4 {
                let g = &mut self.cpu.gpr[i];
                *g = if d {
                    v
                } else {
                    (*g & 0xFFFF_0000) | (v & 0xFFFF)
                };
            }
        }
        Ok(())
    }

    /// PUSHF/PUSHFD.
    #[inline(never)]
    pub(crate) fn pushf(&mut self, d: bool) -> R<()> {
        if self.cpu.v86() && self.cpu.iopl() < 3 {
            return Err(Fault::gp(0));
        }
        let v = self.flags_image() & !(RF | VM);
        self.push(v, if d { 4 } else { 2 })
    }

    /// POPF/POPFD.
    #[inline(never)]
    pub(crate) fn popf(&mut self, d: bool) -> R<()> {
        if self.cpu.v86() && self.cpu.iopl() < 3 {
            return Err(Fault::gp(0));
        }
        let n = if d { 4 } else { 2 };
        let v = self.pop(n)?;
        self.write_flags(v, n, false);
        Ok(())
    }

    /// XCHG.
    #[inline(never)]
    pub(crate) fn xchg(&mut self, insn: &Instruction) -> R<()> {
        let n = Self::op_size(insn, 0);
        let a = self.loc(insn, 0);
        let b = self.loc(insn, 1);
        let va = self.read_loc(a, n)?;
        let vb = self.read_loc(b, n)?;
        if let Loc::Mem(..) = b {
            self.write_loc(b, n, va)?;
            self.write_loc(a, n, vb)
        } else {
            self.write_loc(a, n, vb)?;
            self.write_loc(b, n, va)
        }
    }

    /// LDS/LES/LSS/LFS/LGS.
    #[inline(never)]
    pub(crate) fn load_far_ptr(&mut self, insn: &Instruction, m: Mnemonic) -> R<()> {
        if insn.op1_kind() != OpKind::Memory {
            return Err(Fault::ud());
        }
        let r = insn.op0_register();
        let n = reg_size(r);
        let s = Self::mseg(insn);
        let ea = self.ea(insn);
        let off = self.read_mem(s, ea, n)?;
        let sel = self.read_mem(s, ea.wrapping_add(n), 2)? as u16;
        let sr = match m {
            Mnemonic::Lds => SegReg::Ds,
            Mnemonic::Les => SegReg::Es,
            Mnemonic::Lss => SegReg::Ss,
            Mnemonic::Lfs => SegReg::Fs,
            _ => SegReg::Gs,
        };
        self.load_sreg(sr, sel)?;
        self.set_reg(r, off);
        Ok(())
    }

    /// MOVZX/MOVSX.
    pub(crate) fn movx(&mut self, insn: &Instruction, signed: bool) -> R<()> {
        let sn = Self::op_size(insn, 1);
        let v = self.read_op(insn, 1)?;
        let v = if signed { sext(v, sn) } else { v };
        self.set_reg(insn.op0_register(), v);
        Ok(())
    }

    /// BOUND.
    #[inline(never)]
    pub(crate) fn bound(&mut self, insn: &Instruction) -> R<()> {
        if insn.op1_kind() != OpKind::Memory {
            return Err(Fault::ud());
        }
        let r = insn.op0_register();
        let n = reg_size(r);
        let s = Self::mseg(insn);
        let ea = self.ea(insn);
        let lo = sext(self.read_mem(s, ea, n)?, n) as i32;
        let hi = sext(self.read_mem(s, ea.wrapping_add(n), n)?, n) as i32;
        let v = sext(self.reg(r), n) as i32;
        if v < lo || v > hi {
            return Err(Fault::new(vector::BR));
        }
        Ok(())
    }

    /// CLI/STI under the IOPL rule.
    pub(crate) fn cli_sti(&mut self, set: bool) -> R<()> {
        if self.cpu.protected() && self.cpu.cpl > self.cpu.iopl() {
            return Err(Fault::gp(0));
        }
        if set {
            if self.cpu.eflags & IF == 0 {
                self.inhibit = true;
            }
            self.cpu.eflags |= IF;
        } else {
            self.cpu.eflags &= !IF;
        }
        Ok(())
    }

    /// I/O permission: IOPL, then the 386 TSS I/O bitmap.
    pub(crate) fn io_check(&mut self, port: u16, n: u32) -> R<()> {
        if !self.cpu.protected() || (self.cpu.cpl <= self.cpu.iopl() && !self.cpu.v86()) {
            return Ok(());
        }
        let tr = self.cpu.tr;
        if tr.access & 0xD != 9 || tr.limit < 0x67 {
            return Err(Fault::gp(0));
        }
        let base = self.sys_read(tr.base.wrapping_add(0x66), 2)?;
        let byte = base + u32::from(port) / 8;
        if byte + 1 > tr.limit {
            return Err(Fault::gp(0));
        }
        let bits = self.sys_read(tr.base.wrapping_add(byte), 2)?;
        let m = ((1u32 << n) - 1) << (port % 8);
        if bits & m != 0 {
            return Err(Fault::gp(0));
        }
        Ok(())
    }

    /// IN/OUT with immediate or DX port.
    #[inline(never)]
    pub(crate) fn in_out(&mut self, insn: &Instruction, is_in: bool) -> R<()> {
        let (data, port_op) = if is_in { (0, 1) } else { (1, 0) };
        let port = match insn.op_kind(port_op) {
            OpKind::Register => (self.cpu.gpr[Gpr::Edx] & 0xFFFF) as u16,
            _ => u16::from(insn.immediate8()),
        };
        let r = insn.op_register(data);
        let n = reg_size(r);
        self.io_check(port, n)?;
        if is_in {
            let v = self.bus.read(port, n as u8);
            self.set_reg(r, v);
        } else {
            let v = self.reg(r);
            self.bus.write(port, n as u8, v);
        }
        Ok(())
    }

    /// CPUID: a 486DX (family 4, model 1) with an FPU, "GenuineIntel".
    #[inline(never)]
    pub(crate) fn cpuid(&mut self) {
        let g = &mut self.cpu.gpr;
        match g[0] {
            0 => {
                g[0] = 1;
                g[3] = u32::from_le_bytes(*b"Genu");
                g[2] = u32::from_le_bytes(*b"ineI");
                g[1] = u32::from_le_bytes(*b"ntel");
            }
            _ => {
                g[0] = 0x0410;
                g[3] = 0;
                g[1] = 0;
                g[2] = 1;
            }
        }
    }
}
