//! System instructions: LGDT/LIDT/SGDT/SIDT, LLDT/SLDT, LTR/STR,
//! LMSW/SMSW, CLTS, LAR/LSL/VERR/VERW, ARPL, INVLPG, INVD/WBINVD.
//!
//! Privileged ones raise #GP(0) above CPL 0; the 0F 00 group and ARPL,
//! LAR, LSL raise #UD in real and V86 mode. SGDT/SIDT with a 16-bit operand
//! store a 24-bit base and 0xFF (286) or 0x00 (386+) in the fourth byte.

use super::operand::Loc;
use crate::cpu::flags::*;
use crate::cpu::{CR0_PE, CR0_TS, CpuModel, Segment};
use crate::fault::{Fault, R};
use crate::machine::Machine;
use iced_x86::{Code, Instruction, Mnemonic as M, OpKind};

impl Machine {
    fn require_cpl0(&self) -> R<()> {
        if self.cpu.protected() && (self.cpu.cpl != 0 || self.cpu.v86()) {
            return Err(Fault::gp(0));
        }
        Ok(())
    }

    fn require_pm(&self) -> R<()> {
        if !self.cpu.protected() || self.cpu.v86() {
            return Err(Fault::ud());
        }
        Ok(())
    }

    /// Store a 16-bit system value to r/m (registers: zero-extended to the
    /// register size).
    fn store16(&mut self, insn: &Instruction, v: u32) -> R<()> {
        match self.loc(insn, 0) {
            Loc::Reg(r) => {
                self.set_reg(r, v);
                Ok(())
            }
            Loc::Mem(s, off) => self.write_mem(s, off, 2, v),
        }
    }

    /// Dispatch of the system group.
    #[inline(never)]
    pub(crate) fn system(&mut self, insn: &Instruction, m: M) -> R<()> {
        match m {
            M::Lgdt | M::Lidt => {
                self.require_cpl0()?;
                if insn.op0_kind() != OpKind::Memory {
                    return Err(Fault::ud());
                }
                let s = Self::mseg(insn);
                let ea = self.ea(insn);
                let limit = self.read_mem(s, ea, 2)? as u16;
                let mut base = self.read_mem(s, ea.wrapping_add(2), 4)?;
                if !matches!(
                    insn.code(),
                    Code::Lgdt_m1632 | Code::Lidt_m1632 | Code::Sgdt_m1632 | Code::Sidt_m1632
                ) {
                    base &= 0xFF_FFFF;
                }
                let t = if m == M::Lgdt {
                    &mut self.cpu.gdtr
                } else {
                    &mut self.cpu.idtr
                };
                t.base = base;
                t.limit = limit;
            }
            M::Sgdt | M::Sidt => {
                if insn.op0_kind() != OpKind::Memory {
                    return Err(Fault::ud());
                }
                let t = if m == M::Sgdt {
                    self.cpu.gdtr
                } else {
                    self.cpu.idtr
                };
                let s = Self::mseg(insn);
                let ea = self.ea(insn);
                let mut base = t.base;
                if !matches!(
                    insn.code(),
                    Code::Lgdt_m1632 | Code::Lidt_m1632 | Code::Sgdt_m1632 | Code::Sidt_m1632
                ) {
                    base &= 0xFF_FFFF;
                    if self.model == CpuModel::I286 {
                        base |= 0xFF00_0000;
                    }
                }
                self.seg_linear(s, ea, 6, true)?;
                self.write_mem(s, ea, 2, u32::from(t.limit))?;
                self.write_mem(s, ea.wrapping_add(2), 4, base)?;
            }
            M::Sldt | M::Str => {
                self.require_pm()?;
                let v = if m == M::Sldt {
                    self.cpu.ldtr.selector
                } else {
                    self.cpu.tr.selector
                };
                self.store16(insn, u32::from(v))?;
            }
            M::Lldt => {
                self.require_pm()?;
                self.require_cpl0()?;
                let sel = self.read_op(insn, 0)? as u16;
                if sel & !3 == 0 {
                    self.cpu.ldtr = Segment::null(sel);
                    return Ok(());
                }
                let err = u32::from(sel & !3);
                if sel & 4 != 0 {
                    return Err(Fault::gp(err));
                }
                let (d, _) = self.read_desc(sel)?;
                if d.is_segment() || d.sys_type() != 2 {
                    return Err(Fault::gp(err));
                }
                if !d.present() {
                    return Err(Fault::np(err));
                }
                self.cpu.ldtr = d.to_segment(sel);
            }
            M::Ltr => {
                self.require_pm()?;
                self.require_cpl0()?;
                let sel = self.read_op(insn, 0)? as u16;
                let err = u32::from(sel & !3);
                if sel & !3 == 0 || sel & 4 != 0 {
                    return Err(Fault::gp(err));
                }
                let (d, addr) = self.read_desc(sel)?;
                if d.is_segment() || !matches!(d.sys_type(), 1 | 9) {
                    return Err(Fault::gp(err));
                }
                if !d.present() {
                    return Err(Fault::np(err));
                }
                self.sys_write(addr.wrapping_add(5), 1, u32::from(d.access() | 2))?;
                let mut seg = d.to_segment(sel);
                seg.access |= 2;
                self.cpu.tr = seg;
            }
            M::Lmsw => {
                self.require_cpl0()?;
                let v = self.read_op(insn, 0)? & 0xF;
                let pe = (self.cpu.cr0 | v) & CR0_PE;
                self.cpu.cr0 = (self.cpu.cr0 & !0xF) | v | pe;
            }
            M::Smsw => {
                let v = self.cpu.cr0;
                let v = if self.model == CpuModel::I286 {
                    v | 0xFFF0
                } else {
                    v
                };
                let v = match self.loc(insn, 0) {
                    Loc::Reg(r) if super::operand::reg_size(r) == 4 => v,
                    _ => v & 0xFFFF,
                };
                self.store16(insn, v)?;
            }
            M::Clts => {
                self.require_cpl0()?;
                self.cpu.cr0 &= !CR0_TS;
            }
            M::Lar | M::Lsl => {
                self.require_pm()?;
                let sel = self.read_op(insn, 1)? as u16;
                match self.lar_lsl(sel, m == M::Lar)? {
                    Some(v) => {
                        let r = insn.op0_register();
                        let v = if super::operand::reg_size(r) == 2 {
                            v & 0xFFFF
                        } else {
                            v
                        };
                        self.set_reg(r, v);
                        self.set_status(ZF, ZF);
                    }
                    None => self.set_status(0, ZF),
                }
            }
            M::Verr | M::Verw => {
                self.require_pm()?;
                let sel = self.read_op(insn, 0)? as u16;
                let ok = self.verify(sel, m == M::Verw)?;
                self.set_status(if ok { ZF } else { 0 }, ZF);
            }
            M::Arpl => {
                self.require_pm()?;
                let l = self.loc(insn, 0);
                let d = self.read_loc(l, 2)?;
                let s = self.reg(insn.op1_register());
                if d & 3 < s & 3 {
                    self.write_loc(l, 2, (d & !3) | (s & 3))?;
                    self.set_status(ZF, ZF);
                } else {
                    self.set_status(0, ZF);
                }
            }
            M::Invlpg => {
                self.require_cpl0()?;
                let s = Self::mseg(insn);
                let lin = self.cpu.sreg(s).base.wrapping_add(self.ea(insn));
                self.tlb.flush_page(lin);
            }
            M::Invd | M::Wbinvd => self.require_cpl0()?,
            _ => return Err(Fault::ud()),
        }
        Ok(())
    }

    /// LAR/LSL result, or None (ZF=0) for an invisible/invalid selector.
    fn lar_lsl(&mut self, sel: u16, lar: bool) -> R<Option<u32>> {
        if sel & !3 == 0 {
            return Ok(None);
        }
        let Ok((d, _)) = self.read_desc(sel) else {
            return Ok(None);
        };
        let a = d.access();
        if d.is_segment() {
            let conforming_code = a & 0x0C == 0x0C;
            let cpl = self.cpu.cpl;
            if !conforming_code && (d.dpl() < cpl || d.dpl() < (sel & 3) as u8) {
                return Ok(None);
            }
        } else {
            let ok = if lar {
                matches!(d.sys_type(), 1 | 2 | 3 | 4 | 5 | 9 | 0xB | 0xC)
            } else {
                matches!(d.sys_type(), 1 | 2 | 3 | 9 | 0xB)
            };
            let cpl = self.cpu.cpl;
            if !ok || d.dpl() < cpl || d.dpl() < (sel & 3) as u8 {
                return Ok(None);
            }
        }
        Ok(Some(if lar {
            ((d.0 >> 32) as u32) & 0x00FF_FF00
        } else {
            d.limit()
        }))
    }

    fn verify(&mut self, sel: u16, write: bool) -> R<bool> {
        if sel & !3 == 0 {
            return Ok(false);
        }
        let Ok((d, _)) = self.read_desc(sel) else {
            return Ok(false);
        };
        if !d.is_segment() {
            return Ok(false);
        }
        let a = d.access();
        let code = a & 8 != 0;
        let conforming = code && a & 4 != 0;
        if !conforming && (d.dpl() < self.cpu.cpl || d.dpl() < (sel & 3) as u8) {
            return Ok(false);
        }
        Ok(if write {
            !code && a & 2 != 0
        } else {
            !code || a & 2 != 0
        })
    }
}
