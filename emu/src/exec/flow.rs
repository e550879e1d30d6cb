//! Control transfer: near and far JMP/CALL/RET, Jcc, LOOPcc, JCXZ,
//! ENTER/LEAVE, and protected-mode far transfers through code segments and
//! call gates (with the inner-stack switch from the TSS and parameter
//! copying). A TSS descriptor or task gate as the target switches tasks
//! (see `task`).

use crate::cpu::{Gpr, SegReg};
use crate::cpu::{Segment, flags::*};
use crate::fault::{Fault, R};
use crate::machine::Machine;
use iced_x86::{Code, ConditionCode, Instruction, OpKind};

impl Machine {
    /// Evaluate a condition code against EFLAGS.
    #[inline]
    pub(crate) fn cond(&self, cc: ConditionCode) -> bool {
        let f = self.cpu.eflags;
        let (cf, zf, sf, of, pf) = (
            f & CF != 0,
            f & ZF != 0,
            f & SF != 0,
            f & OF != 0,
            f & PF != 0,
        );
        match cc {
            ConditionCode::o => of,
            ConditionCode::no => !of,
            ConditionCode::b => cf,
            ConditionCode::ae => !cf,
            ConditionCode::e => zf,
            ConditionCode::ne => !zf,
            ConditionCode::be => cf || zf,
            ConditionCode::a => !cf && !zf,
            ConditionCode::s => sf,
            ConditionCode::ns => !sf,
            ConditionCode::p => pf,
            ConditionCode::np => !pf,
            ConditionCode::l => sf != of,
            ConditionCode::ge => sf == of,
            ConditionCode::le => zf || sf != of,
            ConditionCode::g => !zf && sf == of,
            _ => true,
        }
    }

    /// Set EIP to a near target, checking the CS limit.
    #[inline]
    pub(crate) fn jump_near(&mut self, target: u32) -> R<()> {
        if target > self.cpu.seg[SegReg::Cs].limit {
            return Err(Fault::gp(0));
        }
        self.cpu.eip = target;
        Ok(())
    }

    /// Target of a relative branch (decoded at IP 0).
    #[inline]
    pub(crate) fn rel_target(&self, insn: &Instruction) -> u32 {
        let t = self
            .start_eip
            .wrapping_add(insn.near_branch_target() as u32);
        match insn.op0_kind() {
            OpKind::NearBranch16 => t & 0xFFFF,
            _ => t,
        }
    }

    /// Jcc, JMP rel/rm, LOOPcc, JCXZ.
    pub(crate) fn branch(&mut self, insn: &Instruction, taken: bool) -> R<()> {
        if taken {
            let t = self.rel_target(insn);
            self.jump_near(t)?;
            self.cycles += 4;
        }
        Ok(())
    }

    /// LOOP/LOOPE/LOOPNE: counter by address size.
    #[inline(never)]
    pub(crate) fn loop_op(&mut self, insn: &Instruction, cond: Option<bool>) -> R<()> {
        let c = if self.addr32 {
            self.cpu.gpr[Gpr::Ecx] = self.cpu.gpr[Gpr::Ecx].wrapping_sub(1);
            self.cpu.gpr[Gpr::Ecx]
        } else {
            let v = (self.cpu.gpr[Gpr::Ecx].wrapping_sub(1)) & 0xFFFF;
            self.cpu.gpr[Gpr::Ecx] = (self.cpu.gpr[Gpr::Ecx] & 0xFFFF_0000) | v;
            v
        };
        let zf = self.cpu.eflags & ZF != 0;
        let take = c != 0 && cond.is_none_or(|want| zf == want);
        self.branch(insn, take)
    }

    /// Near CALL (relative or indirect).
    #[inline(never)]
    pub(crate) fn call_near(&mut self, insn: &Instruction) -> R<()> {
        let (target, n) = match insn.op0_kind() {
            OpKind::NearBranch16 => (self.rel_target(insn), 2),
            OpKind::NearBranch32 => (self.rel_target(insn), 4),
            _ => {
                let n = Self::op_size(insn, 0);
                (self.read_op(insn, 0)?, n)
            }
        };
        if target > self.cpu.seg[SegReg::Cs].limit {
            return Err(Fault::gp(0));
        }
        self.push(self.cpu.eip, n)?;
        self.cpu.eip = target;
        Ok(())
    }

    /// Near JMP indirect.
    pub(crate) fn jmp_indirect(&mut self, insn: &Instruction) -> R<()> {
        let t = self.read_op(insn, 0)?;
        self.jump_near(t)
    }

    /// Near RET [imm16].
    #[inline(never)]
    pub(crate) fn ret_near(&mut self, insn: &Instruction) -> R<()> {
        let n = if matches!(insn.code(), Code::Retnd | Code::Retnd_imm16) {
            4
        } else {
            2
        };
        let t = self.pop(n)?;
        if t > self.cpu.seg[SegReg::Cs].limit {
            return Err(Fault::gp(0));
        }
        let imm = if insn.op_count() > 0 {
            u32::from(insn.immediate16())
        } else {
            0
        };
        self.set_sp(self.sp().wrapping_add(imm));
        self.cpu.eip = t;
        Ok(())
    }

    /// Far JMP/CALL: operands are ptr16:16/32 or m16:16/32.
    #[inline(never)]
    pub(crate) fn far_jmp_call(&mut self, insn: &Instruction, call: bool) -> R<()> {
        let n = match insn.code() {
            Code::Call_ptr1632 | Code::Call_m1632 | Code::Jmp_ptr1632 | Code::Jmp_m1632 => 4,
            _ => 2,
        };
        let (sel, off) = match insn.op0_kind() {
            OpKind::FarBranch16 => (insn.far_branch_selector(), u32::from(insn.far_branch16())),
            OpKind::FarBranch32 => (insn.far_branch_selector(), insn.far_branch32()),
            _ => {
                let s = Self::mseg(insn);
                let ea = self.ea(insn);
                let off = self.read_mem(s, ea, n)?;
                let sel = self.read_mem(s, ea.wrapping_add(n), 2)? as u16;
                (sel, off)
            }
        };
        self.far_transfer(sel, off, n, call)
    }

    /// Far transfer to sel:off (JMP or CALL), any mode.
    #[inline(never)]
    pub(crate) fn far_transfer(&mut self, sel: u16, off: u32, n: u32, call: bool) -> R<()> {
        if !self.cpu.protected() || self.cpu.v86() {
            if call {
                let cs = u32::from(self.cpu.seg[SegReg::Cs].selector);
                let sp0 = self.sp();
                self.push(cs, n)?;
                if let Err(f) = self.push(self.cpu.eip, n) {
                    self.set_sp(sp0);
                    return Err(f);
                }
            }
            let limit = self.cpu.seg[SegReg::Cs].limit;
            if off > limit {
                return Err(Fault::gp(0));
            }
            self.load_sreg(SegReg::Cs, sel)?;
            self.cpu.eip = off;
            return Ok(());
        }
        let cpl = self.cpu.cpl;
        let rpl = (sel & 3) as u8;
        let err = u32::from(sel & !3);
        if sel & !3 == 0 {
            return Err(Fault::gp(0));
        }
        let (d, addr) = self.read_desc(sel)?;
        if d.is_segment() {
            if d.access() & 8 == 0 {
                return Err(Fault::gp(err));
            }
            let conforming = d.access() & 4 != 0;
            if (conforming && d.dpl() > cpl) || (!conforming && (rpl > cpl || d.dpl() != cpl)) {
                return Err(Fault::gp(err));
            }
            if !d.present() {
                return Err(Fault::np(err));
            }
            if off > d.limit() {
                return Err(Fault::gp(0));
            }
            if call {
                self.push_return(n)?;
            }
            self.set_cs(d, addr, sel, cpl)?;
            self.cpu.eip = off;
            return Ok(());
        }
        match d.sys_type() {
            4 | 0xC => {}
            1 | 9 | 5 => {
                if d.dpl() < cpl || d.dpl() < rpl {
                    return Err(Fault::gp(err));
                }
                if !d.present() {
                    return Err(Fault::np(err));
                }
                let how = if call {
                    super::task::Switch::Call
                } else {
                    super::task::Switch::Jmp
                };
                let target = if d.sys_type() == 5 {
                    Self::task_gate_target(d)
                } else {
                    sel
                };
                return self.task_switch(target, how);
            }
            _ => return Err(Fault::gp(err)),
        }
        if d.dpl() < cpl || d.dpl() < rpl {
            return Err(Fault::gp(err));
        }
        if !d.present() {
            return Err(Fault::np(err));
        }
        let tsel = d.gate_selector();
        let terr = u32::from(tsel & !3);
        let (td, taddr) = self.code_desc(tsel)?;
        let conforming = td.access() & 4 != 0;
        if td.dpl() > cpl || (!call && !conforming && td.dpl() != cpl) {
            return Err(Fault::gp(terr));
        }
        if !td.present() {
            return Err(Fault::np(terr));
        }
        let gsize = if d.sys_type() & 8 != 0 { 4 } else { 2 };
        let off = d.gate_offset();
        if off > td.limit() {
            return Err(Fault::gp(0));
        }
        if call && !conforming && td.dpl() < cpl {
            let pl = td.dpl();
            let (nss, nesp) = self.tss_stack(pl)?;
            let ss_seg = self.check_stack_sel(nss, pl)?;
            let old_ss = self.cpu.seg[SegReg::Ss];
            let old_esp = self.cpu.gpr[Gpr::Esp];
            let old_sp = self.sp();
            let count = d.gate_params();
            let mut params = Vec::with_capacity(count as usize);
            for i in 0..count {
                let o = old_sp.wrapping_add(i * gsize);
                let o = if old_ss.big() { o } else { o & 0xFFFF };
                params.push(self.read_mem(SegReg::Ss, o, gsize)?);
            }
            let old_cs = self.cpu.seg[SegReg::Cs].selector;
            let old_eip = self.cpu.eip;
            self.cpu.seg[SegReg::Ss] = ss_seg;
            self.cpu.gpr[Gpr::Esp] = nesp;
            let r = (|| -> R<()> {
                self.push(u32::from(old_ss.selector), gsize)?;
                self.push(
                    if gsize == 4 {
                        old_esp
                    } else {
                        old_esp & 0xFFFF
                    },
                    gsize,
                )?;
                for p in params.iter().rev() {
                    self.push(*p, gsize)?;
                }
                self.push(u32::from(old_cs), gsize)?;
                self.push(old_eip, gsize)
            })();
            if let Err(f) = r {
                self.cpu.seg[SegReg::Ss] = old_ss;
                self.cpu.gpr[Gpr::Esp] = old_esp;
                return Err(f);
            }
            self.set_cs(td, taddr, tsel, pl)?;
        } else {
            if call {
                self.push_return(gsize)?;
            }
            self.set_cs(td, taddr, tsel, cpl)?;
        }
        self.cpu.eip = off;
        Ok(())
    }

    fn push_return(&mut self, n: u32) -> R<()> {
        let sp0 = self.sp();
        let cs = u32::from(self.cpu.seg[SegReg::Cs].selector);
        self.push(cs, n)?;
        if let Err(f) = self.push(self.cpu.eip, n) {
            self.set_sp(sp0);
            return Err(f);
        }
        Ok(())
    }

    /// Far RET [imm16].
    #[inline(never)]
    pub(crate) fn ret_far(&mut self, insn: &Instruction) -> R<()> {
        let n = if matches!(insn.code(), Code::Retfd | Code::Retfd_imm16) {
            4
        } else {
            2
        };
        let imm = if insn.op_count() > 0 {
            u32::from(insn.immediate16())
        } else {
            0
        };
        let sp = self.sp();
        let big = self.cpu.seg[SegReg::Ss].big();
        let at = |k: u32| {
            let o = sp.wrapping_add(k);
            if big { o } else { o & 0xFFFF }
        };
        let off = self.read_mem(SegReg::Ss, at(0), n)?;
        let sel = self.read_mem(SegReg::Ss, at(n), 2)? as u16;
        if !self.cpu.protected() || self.cpu.v86() {
            if off > self.cpu.seg[SegReg::Cs].limit {
                return Err(Fault::gp(0));
            }
            self.load_sreg(SegReg::Cs, sel)?;
            self.cpu.eip = off;
            self.set_sp(at(2 * n + imm));
            return Ok(());
        }
        self.far_return(sel, off, n, at(2 * n + imm), imm, false)
    }

    /// Protected-mode return to sel:off with the stack at `sp` (the
    /// outer SS:ESP follow there if the privilege level changes).
    #[inline(never)]
    pub(crate) fn far_return(
        &mut self,
        sel: u16,
        off: u32,
        n: u32,
        sp: u32,
        imm: u32,
        _iret: bool,
    ) -> R<()> {
        let cpl = self.cpu.cpl;
        let rpl = (sel & 3) as u8;
        let err = u32::from(sel & !3);
        if rpl < cpl {
            return Err(Fault::gp(err));
        }
        let (d, addr) = self.code_desc(sel)?;
        let conforming = d.access() & 4 != 0;
        if (conforming && d.dpl() > rpl) || (!conforming && d.dpl() != rpl) {
            return Err(Fault::gp(err));
        }
        if !d.present() {
            return Err(Fault::np(err));
        }
        if off > d.limit() {
            return Err(Fault::gp(0));
        }
        if rpl == cpl {
            self.set_cs(d, addr, sel, cpl)?;
            self.cpu.eip = off;
            self.set_sp(sp);
            return Ok(());
        }
        let big = self.cpu.seg[SegReg::Ss].big();
        let nesp = self.read_mem(SegReg::Ss, sp, n)?;
        let o = sp.wrapping_add(n);
        let nss = self.read_mem(SegReg::Ss, if big { o } else { o & 0xFFFF }, 2)? as u16;
        let ss_seg = self.check_stack_sel(nss, rpl).map_err(|f| {
            if f.vector == crate::fault::vector::TS {
                Fault::gp(f.error.unwrap_or(0))
            } else {
                f
            }
        })?;
        self.set_cs(d, addr, sel, rpl)?;
        self.cpu.seg[SegReg::Ss] = ss_seg;
        let nesp = nesp.wrapping_add(imm);
        if ss_seg.big() {
            self.cpu.gpr[Gpr::Esp] = nesp;
        } else {
            self.cpu.gpr[Gpr::Esp] = (self.cpu.gpr[Gpr::Esp] & 0xFFFF_0000) | (nesp & 0xFFFF);
        }
        self.cpu.eip = off;
        self.scrub_data_segs();
        Ok(())
    }

    /// ENTER imm16, imm8.
    #[inline(never)]
    pub(crate) fn enter(&mut self, insn: &Instruction) -> R<()> {
        let n = if insn.code() == Code::Enterd_imm16_imm8 {
            4
        } else {
            2
        };
        let size = u32::from(insn.immediate16());
        let level = u32::from(insn.immediate8_2nd()) & 31;
        let big = self.cpu.seg[SegReg::Ss].big();
        let bp_reg = if big {
            self.cpu.gpr[Gpr::Ebp]
        } else {
            self.cpu.gpr[Gpr::Ebp] & 0xFFFF
        };
        self.push(self.cpu.gpr[Gpr::Ebp], n)?;
        // FrameTemp is the whole ESP (a 386 keeps ESP's upper half with a
        // 16-bit stack, and ENTER with a 32-bit operand copies it to EBP).
        let frame = self.cpu.gpr[Gpr::Esp];
        let mut bp = bp_reg;
        if level > 0 {
            for _ in 1..level {
                bp = bp.wrapping_sub(n);
                let b = if big { bp } else { bp & 0xFFFF };
                let v = self.read_mem(SegReg::Ss, b, n)?;
                self.push(v, n)?;
            }
            self.push(frame, n)?;
        }
        let nsp = self.sp().wrapping_sub(size);
        let nsp = if big { nsp } else { nsp & 0xFFFF };
        // The 386 probes the final stack top for writing (segment and page).
        let lin = self.seg_linear(SegReg::Ss, nsp, 1, true)?;
        let user = self.cpu.cpl == 3;
        self.translate(lin, crate::paging::PageAccess { write: true, user })?;
        if n == 4 {
            self.cpu.gpr[Gpr::Ebp] = frame;
        } else {
            self.cpu.gpr[Gpr::Ebp] = (self.cpu.gpr[Gpr::Ebp] & 0xFFFF_0000) | (frame & 0xFFFF);
        }
        self.set_sp(nsp);
        Ok(())
    }

    /// LEAVE.
    #[inline(never)]
    pub(crate) fn leave(&mut self, insn: &Instruction) -> R<()> {
        let n = if insn.code() == Code::Leaved { 4 } else { 2 };
        let bp = self.cpu.gpr[Gpr::Ebp];
        self.set_sp(bp);
        let v = self.pop(n)?;
        if n == 4 {
            self.cpu.gpr[Gpr::Ebp] = v;
        } else {
            self.cpu.gpr[Gpr::Ebp] = (self.cpu.gpr[Gpr::Ebp] & 0xFFFF_0000) | (v & 0xFFFF);
        }
        Ok(())
    }

    /// Load CS in real/V86 mode (used by far transfers and IRET).
    pub(crate) fn real_cs(&mut self, sel: u16) {
        let seg = &mut self.cpu.seg[SegReg::Cs];
        *seg = Segment {
            selector: sel,
            base: u32::from(sel) << 4,
            ..*seg
        };
    }
}
