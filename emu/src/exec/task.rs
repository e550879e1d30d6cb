//! Hardware task switches: far JMP/CALL to a TSS descriptor or a task gate,
//! IDT task gates, and IRET with NT set (return to the back-linked task),
//! for 386 (32-bit) and 286 (16-bit) TSS formats.
//!
//! The switch saves the outgoing state into the current TSS (EIP is the
//! resume point: the next instruction, or the faulting one for an
//! exception), updates busy bits, back link and NT as the Intel manuals
//! describe, sets CR0.TS, loads CR3 (386 TSS, paging on) and the incoming
//! registers, LDTR and segment registers. Checks raise #TS/#NP/#GP with
//! the selector. Loading the incoming segment registers is done in the new
//! task's context (a fault there is delivered in the new task, as on
//! hardware). The I/O bitmap and the T (debug trap) bit are not acted on at
//! the switch.

use crate::cpu::flags::*;
use crate::cpu::{CR0_TS, SegReg, Segment};
use crate::fault::{Fault, R};
use crate::machine::Machine;
use crate::seg::Descriptor;

/// Why a task switch happens (decides busy/NT/back-link handling).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Switch {
    Jmp,
    Call,
    Iret,
    /// An interrupt or exception through a task gate.
    Int,
}

impl Machine {
    /// Switch to the task whose TSS selector is `sel`.
    #[inline(never)]
    pub(crate) fn task_switch(&mut self, sel: u16, how: Switch) -> R<()> {
        let err = u32::from(sel & !3);
        if sel & 4 != 0 {
            return Err(Fault::ts(err));
        }
        let (d, daddr) = self.read_desc(sel).map_err(|_| Fault::ts(err))?;
        let ty = d.sys_type();
        if d.is_segment() || !matches!(ty, 1 | 3 | 9 | 0xB) {
            return Err(Fault::gp(err));
        }
        let busy = ty & 2 != 0;
        if how == Switch::Iret && !busy || how != Switch::Iret && busy {
            return Err(Fault::gp(err));
        }
        if !d.present() {
            return Err(Fault::np(err));
        }
        let new32 = ty & 8 != 0;
        if d.limit() < if new32 { 0x67 } else { 0x2B } {
            return Err(Fault::ts(err));
        }
        // Save the outgoing task.
        let old = self.cpu.tr;
        let old32 = old.access & 8 != 0;
        let mut fl = self.cpu.eflags;
        if how == Switch::Iret {
            fl &= !NT;
        }
        let b = old.base;
        if old32 {
            self.sys_write(b.wrapping_add(0x20), 4, self.cpu.eip)?;
            self.sys_write(b.wrapping_add(0x24), 4, fl)?;
            for i in 0..8 {
                self.sys_write(b.wrapping_add(0x28 + 4 * i), 4, self.cpu.gpr[i as usize])?;
            }
            for (i, s) in SegReg::ALL.iter().enumerate() {
                let v = u32::from(self.cpu.seg[*s as usize].selector);
                self.sys_write(b.wrapping_add(0x48 + 4 * i as u32), 2, v)?;
            }
        } else {
            self.sys_write(b.wrapping_add(0x0E), 2, self.cpu.eip)?;
            self.sys_write(b.wrapping_add(0x10), 2, fl)?;
            for i in 0..8 {
                self.sys_write(b.wrapping_add(0x12 + 2 * i), 2, self.cpu.gpr[i as usize])?;
            }
            for (i, s) in SegReg::ALL[..4].iter().enumerate() {
                let v = u32::from(self.cpu.seg[*s as usize].selector);
                self.sys_write(b.wrapping_add(0x22 + 2 * i as u32), 2, v)?;
            }
        }
        if matches!(how, Switch::Jmp | Switch::Iret) && old.selector & !3 != 0 {
            let (od, oaddr) = self.read_desc(old.selector)?;
            self.sys_write(oaddr.wrapping_add(5), 1, u32::from(od.access() & !2))?;
        }
        let nb = d.base();
        if matches!(how, Switch::Call | Switch::Int) {
            self.sys_write(nb, 2, u32::from(old.selector))?;
        }
        if how != Switch::Iret {
            self.sys_write(daddr.wrapping_add(5), 1, u32::from(d.access() | 2))?;
        }
        // Read the incoming state.
        let rd = |m: &mut Machine, off: u32, n: u32| m.sys_read(nb.wrapping_add(off), n);
        let (eip, mut nfl, gprs, sels, ldt, cr3) = if new32 {
            let mut g = [0u32; 8];
            for (i, v) in g.iter_mut().enumerate() {
                *v = rd(self, 0x28 + 4 * i as u32, 4)?;
            }
            let mut s = [0u16; 6];
            for (i, v) in s.iter_mut().enumerate() {
                *v = rd(self, 0x48 + 4 * i as u32, 2)? as u16;
            }
            let cr3 = rd(self, 0x1C, 4)?;
            (
                rd(self, 0x20, 4)?,
                rd(self, 0x24, 4)?,
                g,
                s,
                rd(self, 0x60, 2)? as u16,
                Some(cr3),
            )
        } else {
            // A 386 loading a 16-bit TSS sets the upper register halves
            // to ones (observed by test386.asm on hardware).
            let mut g = [0u32; 8];
            for (i, v) in g.iter_mut().enumerate() {
                *v = 0xFFFF_0000 | rd(self, 0x12 + 2 * i as u32, 2)?;
            }
            let mut s = [0u16; 6];
            for (i, v) in s.iter_mut().take(4).enumerate() {
                *v = rd(self, 0x22 + 2 * i as u32, 2)? as u16;
            }
            let fl = rd(self, 0x10, 2)?;
            (
                rd(self, 0x0E, 2)?,
                fl,
                g,
                s,
                rd(self, 0x2A, 2)? as u16,
                None,
            )
        };
        if matches!(how, Switch::Call | Switch::Int) {
            nfl |= NT;
        }
        // Commit: from here on faults belong to the new task.
        let mut tr = d.to_segment(sel);
        tr.access |= 2;
        self.cpu.tr = tr;
        self.cpu.cr0 |= CR0_TS;
        if let Some(cr3) = cr3
            && self.cpu.paging()
        {
            self.cpu.cr3 = cr3;
            self.tlb.flush();
        }
        self.cpu.eip = eip;
        self.cpu.eflags = (nfl & 0x003F_7FD7) | RESERVED1;
        self.cpu.gpr = gprs;
        for s in SegReg::ALL {
            self.cpu.seg[s] = Segment::null(sels[s as usize]);
        }
        self.cpu.ldtr = Segment::null(ldt);
        // A fault from here on restarts in the new task.
        self.start_eip = eip;
        self.commit_progress();
        if self.cpu.v86() {
            self.cpu.cpl = 3;
            for s in SegReg::ALL {
                self.cpu.seg[s] = Segment::real(sels[s as usize], s == SegReg::Cs);
                self.cpu.seg[s].access |= 0x60;
            }
            return Ok(());
        }
        self.load_task_segments(&sels, ldt)
    }

    fn load_task_segments(&mut self, sels: &[u16; 6], ldt: u16) -> R<()> {
        if ldt & !3 != 0 {
            let e = u32::from(ldt & !3);
            if ldt & 4 != 0 {
                return Err(Fault::ts(e));
            }
            let (d, _) = self.read_desc(ldt).map_err(|_| Fault::ts(e))?;
            if d.is_segment() || d.sys_type() != 2 {
                return Err(Fault::ts(e));
            }
            if !d.present() {
                return Err(Fault::np(e));
            }
            self.cpu.ldtr = d.to_segment(ldt);
        }
        let cs = sels[SegReg::Cs as usize];
        let cpl = (cs & 3) as u8;
        let ce = u32::from(cs & !3);
        let (cd, caddr) = self.code_desc(cs).map_err(|_| Fault::ts(ce))?;
        let conforming = cd.access() & 4 != 0;
        if (conforming && cd.dpl() > cpl) || (!conforming && cd.dpl() != cpl) {
            return Err(Fault::ts(ce));
        }
        if !cd.present() {
            return Err(Fault::np(ce));
        }
        self.set_cs(cd, caddr, cs, cpl)?;
        let ss = self.check_stack_sel(sels[SegReg::Ss as usize], cpl)?;
        self.cpu.seg[SegReg::Ss as usize] = ss;
        for s in [SegReg::Es, SegReg::Ds, SegReg::Fs, SegReg::Gs] {
            let sel = sels[s as usize];
            self.load_sreg(s, sel).map_err(|f| match f.vector {
                crate::fault::vector::GP => Fault::ts(u32::from(sel & !3)),
                _ => f,
            })?;
        }
        Ok(())
    }

    /// The TSS selector a task gate descriptor names.
    pub(crate) fn task_gate_target(d: Descriptor) -> u16 {
        d.gate_selector()
    }
}
