//! Interrupts and exceptions: delivery through the real-mode IVT or the
//! protected-mode IDT (286 and 386 interrupt and trap gates, with the
//! inner-stack switch from the TSS, and from V86 mode), IRET, and the
//! EFLAGS write rules shared by POPF and IRET.
//!
//! Task gates in the IDT and IRET with NT set switch tasks (see `task`).

use crate::cpu::flags::*;
use crate::cpu::{CpuModel, Gpr, SegReg, Segment};
use crate::fault::{Fault, R};
use crate::machine::Machine;
use crate::seg::Descriptor;
use iced_x86::{Code, Instruction};

/// The source of an event, for privilege checks and error codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// INT n, INT3, INTO: gate DPL must be >= CPL.
    Software,
    /// A CPU exception.
    Exception,
    /// An external interrupt (EXT bit set in error codes).
    External,
}

impl Machine {
    /// Deliver vector `v`. Registers are restored if delivery faults before
    /// a task gate's switch commits.
    #[inline(never)]
    pub(crate) fn deliver(&mut self, v: u8, error: Option<u32>, kind: Kind) -> R<()> {
        let saved_gpr4 = self.cpu.gpr[Gpr::Esp];
        let saved_seg = self.cpu.seg;
        let saved_cpl = self.cpu.cpl;
        let saved_flags = self.cpu.eflags;
        let saved_tr = self.cpu.tr.selector;
        let r = if !self.cpu.protected() {
            self.deliver_real(v)
        } else {
            self.deliver_prot(v, error, kind)
        };
        // A fault after a task gate's switch committed belongs to the new
        // task: its state stays (see task.rs).
        if r.is_err() && self.cpu.tr.selector == saved_tr {
            self.cpu.gpr[Gpr::Esp] = saved_gpr4;
            self.cpu.seg = saved_seg;
            self.cpu.cpl = saved_cpl;
            self.cpu.eflags = saved_flags;
        } else {
            self.cycles += 37;
        }
        r
    }

    fn deliver_real(&mut self, v: u8) -> R<()> {
        let off = u32::from(v) * 4;
        if off + 3 > u32::from(self.cpu.idtr.limit) {
            return Err(Fault::gp(off * 2 + 2));
        }
        let base = self.cpu.idtr.base;
        let ip = self.sys_read(base.wrapping_add(off), 2)?;
        let cs = self.sys_read(base.wrapping_add(off + 2), 2)?;
        let fl = self.flags_image();
        self.push(fl & 0xFFFF, 2)?;
        self.push(u32::from(self.cpu.seg[SegReg::Cs].selector), 2)?;
        self.push(self.cpu.eip & 0xFFFF, 2)?;
        self.cpu.eflags &= !(IF | TF | AC | RF);
        self.real_cs(cs as u16);
        self.cpu.eip = ip;
        Ok(())
    }

    fn deliver_prot(&mut self, v: u8, error: Option<u32>, kind: Kind) -> R<()> {
        if kind == Kind::Software && self.cpu.v86() && self.cpu.iopl() < 3 {
            return Err(Fault::gp(0));
        }
        let ext = u32::from(kind == Kind::External);
        let gerr = u32::from(v) * 8 + 2 + ext;
        let off = u32::from(v) * 8;
        if off + 7 > u32::from(self.cpu.idtr.limit) {
            return Err(Fault::gp(gerr));
        }
        let base = self.cpu.idtr.base;
        let lo = self.sys_read(base.wrapping_add(off), 4)?;
        let hi = self.sys_read(base.wrapping_add(off + 4), 4)?;
        let gate = Descriptor(u64::from(lo) | (u64::from(hi) << 32));
        let ty = gate.sys_type();
        if gate.is_segment() || !matches!(ty, 5 | 6 | 7 | 0xE | 0xF) {
            return Err(Fault::gp(gerr));
        }
        let cpl = self.cpu.cpl;
        if kind == Kind::Software && gate.dpl() < cpl {
            return Err(Fault::gp(u32::from(v) * 8 + 2));
        }
        if !gate.present() {
            return Err(Fault::np(gerr));
        }
        if ty == 5 {
            self.task_switch(Self::task_gate_target(gate), super::task::Switch::Int)?;
            if let Some(e) = error {
                let n = if self.cpu.tr.access & 8 != 0 { 4 } else { 2 };
                self.push(e, n)?;
            }
            return Ok(());
        }
        let tsel = gate.gate_selector();
        let terr = u32::from(tsel & !3) + ext;
        if tsel & !3 == 0 {
            return Err(Fault::gp(ext));
        }
        let (td, taddr) = self.read_desc(tsel).map_err(|_| Fault::gp(terr))?;
        if !td.is_segment() || td.access() & 8 == 0 || td.dpl() > cpl {
            return Err(Fault::gp(terr));
        }
        if !td.present() {
            return Err(Fault::np(terr));
        }
        let n = if ty & 8 != 0 { 4 } else { 2 };
        let fl = self.flags_image();
        let v86 = self.cpu.v86();
        let conforming = td.access() & 4 != 0;
        let new_cpl = if conforming { cpl } else { td.dpl() };
        if new_cpl < cpl || v86 {
            if v86 && new_cpl != 0 {
                return Err(Fault::gp(terr));
            }
            let (nss, nesp) = self.tss_stack(new_cpl)?;
            let ss_seg = self.check_stack_sel(nss, new_cpl)?;
            let old_ss = u32::from(self.cpu.seg[SegReg::Ss].selector);
            let old_esp = self.cpu.gpr[Gpr::Esp];
            self.cpu.seg[SegReg::Ss] = ss_seg;
            self.cpu.gpr[Gpr::Esp] = nesp;
            self.cpu.cpl = new_cpl;
            if v86 {
                for s in [SegReg::Gs, SegReg::Fs, SegReg::Ds, SegReg::Es] {
                    self.push(u32::from(self.cpu.seg[s].selector), n)?;
                }
            }
            self.push(old_ss, n)?;
            self.push(old_esp, n)?;
            if v86 {
                for s in [SegReg::Gs, SegReg::Fs, SegReg::Ds, SegReg::Es] {
                    self.cpu.seg[s] = Segment::null(0);
                }
            }
        }
        self.push(fl, n)?;
        self.push(u32::from(self.cpu.seg[SegReg::Cs].selector), n)?;
        self.push(self.cpu.eip, n)?;
        if let Some(e) = error {
            self.push(e, n)?;
        }
        let target = if n == 4 {
            gate.gate_offset()
        } else {
            gate.gate_offset() & 0xFFFF
        };
        if target > td.limit() {
            return Err(Fault::gp(0));
        }
        self.set_cs(td, taddr, tsel, new_cpl)?;
        self.cpu.eip = target;
        self.cpu.eflags &= !(TF | NT | RF | VM);
        if ty & 1 == 0 {
            self.cpu.eflags &= !IF;
        }
        Ok(())
    }

    /// EFLAGS as PUSHF stores it.
    pub(crate) fn flags_image(&self) -> u32 {
        let f = self.cpu.eflags;
        if self.model == CpuModel::I286 && !self.cpu.protected() {
            f & 0x0FFF
        } else {
            f & !(RF | VM) | (f & VM)
        }
    }

    /// Write EFLAGS as POPF/IRET do at the current CPL/IOPL: `n` = 2 writes
    /// only the low word. (A single-step trap follows the instruction iff TF
    /// was set when it started, so a POPF that sets TF is not trapped.)
    pub(crate) fn write_flags(&mut self, v: u32, n: u32, iret: bool) {
        let old = self.cpu.eflags;
        let mut writable = CF | PF | AF | ZF | SF | TF | DF | OF | NT;
        let cpl = self.cpu.cpl;
        if !self.cpu.protected() || cpl == 0 {
            writable |= IOPL;
        }
        if !self.cpu.protected() || cpl <= self.cpu.iopl() {
            writable |= IF;
        }
        if self.cpu.v86() {
            writable &= !IOPL;
        }
        if n == 4 {
            match self.model {
                CpuModel::I486 => writable |= AC | ID,
                CpuModel::I386 => {}
                CpuModel::I286 => {}
            }
            if iret {
                writable |= RF;
            }
        } else {
            writable &= 0xFFFF;
        }
        if self.model == CpuModel::I286 {
            writable &= 0x0FFF | if self.cpu.protected() { IOPL | NT } else { 0 };
        }
        self.cpu.eflags = ((old & !writable) | (v & writable)) | RESERVED1;
    }

    /// IRET / IRETD.
    #[inline(never)]
    pub(crate) fn iret(&mut self, insn: &Instruction) -> R<()> {
        let n = if insn.code() == Code::Iretd { 4 } else { 2 };
        if !self.cpu.protected() {
            let ip = self.pop(n)?;
            let cs = self.pop(n)?;
            let fl = self.pop(n)?;
            if ip > self.cpu.seg[SegReg::Cs].limit {
                return Err(Fault::gp(0));
            }
            self.real_cs(cs as u16);
            self.cpu.eip = ip;
            self.write_flags(fl, n, true);
            return Ok(());
        }
        if self.cpu.v86() {
            if self.cpu.iopl() < 3 {
                return Err(Fault::gp(0));
            }
            let ip = self.pop(n)?;
            let cs = self.pop(n)?;
            let fl = self.pop(n)?;
            self.real_cs(cs as u16);
            self.cpu.eip = ip;
            self.write_flags(fl, n, true);
            return Ok(());
        }
        if self.cpu.eflags & NT != 0 {
            let tr = self.cpu.tr;
            let link = self.sys_read(tr.base, 2)? as u16;
            return self.task_switch(link, super::task::Switch::Iret);
        }
        let sp = self.sp();
        let big = self.cpu.seg[SegReg::Ss].big();
        let at = |k: u32| {
            let o = sp.wrapping_add(k);
            if big { o } else { o & 0xFFFF }
        };
        let off = self.read_mem(SegReg::Ss, at(0), n)?;
        let sel = self.read_mem(SegReg::Ss, at(n), 2)? as u16;
        let fl = self.read_mem(SegReg::Ss, at(2 * n), n)?;
        if n == 4 && fl & VM != 0 && self.cpu.cpl == 0 {
            return self.iret_to_v86(off, sel, fl, at(12));
        }
        let old_cpl = self.cpu.cpl;
        self.far_return(sel, off, n, at(3 * n), 0, true)?;
        let new_cpl = self.cpu.cpl;
        self.cpu.cpl = old_cpl;
        self.write_flags(fl, n, true);
        self.cpu.cpl = new_cpl;
        Ok(())
    }

    fn iret_to_v86(&mut self, ip: u32, cs: u16, fl: u32, sp: u32) -> R<()> {
        let mut vals = [0u32; 6];
        for (i, v) in vals.iter_mut().enumerate() {
            *v = self.read_mem(SegReg::Ss, sp.wrapping_add(4 * i as u32), 4)?;
        }
        self.cpu.eflags = (fl & 0x003F_7FD5) | RESERVED1 | VM;
        self.cpu.cpl = 3;
        let ss = vals[1] as u16;
        self.cpu.gpr[Gpr::Esp] = vals[0];
        for (s, sel) in [
            (SegReg::Ss, ss),
            (SegReg::Es, vals[2] as u16),
            (SegReg::Ds, vals[3] as u16),
            (SegReg::Fs, vals[4] as u16),
            (SegReg::Gs, vals[5] as u16),
            (SegReg::Cs, cs),
        ] {
            self.load_sreg(s, sel)?;
        }
        self.cpu.eip = ip & 0xFFFF;
        Ok(())
    }
}
