//! OS/2 2.x exception handling for 32-bit code: a guest exception walks
//! the registration chain at FS:[0] (the TIB), calling each handler as
//! `_System handler(report, registration, context, dispatcher)`.
//!
//! Decisions: the EXCEPTIONREPORTRECORD and CONTEXTRECORD (all of
//! integer, segment and control registers; the x87 part zero) are built
//! on the faulting thread's stack below ESP; a handler returning
//! XCPT_CONTINUE_EXECUTION (0xFFFFFFFF) resumes with the registers from
//! the context record as the handler left them; XCPT_CONTINUE_SEARCH (0)
//! goes to the next record; the end of the chain (0xFFFFFFFF) or a chain
//! that leaves readable memory ends the run with the original fault. A
//! handler that never returns (it longjmps or exits) simply runs on. At
//! most 64 handlers are tried. Handlers run without the trap hook, and
//! without TF (a guest single-stepping itself gets XCPT_SINGLE_STEP after
//! each instruction, not inside its handler); the context record holds
//! the EFLAGS of the exception, TF included, but only the status flags and
//! DF are taken back from it, so a handler's CONTINUE_EXECUTION ends the
//! stepping (it sets TF again in its own code to go on).

use emu::{Fault, Gpr, SegReg, vector};

use crate::error::Outcome;
use crate::layout::THUNK_BASE;
use crate::process::Process;
use crate::thunks::Slot;

/// XCPT_CONTINUE_EXECUTION.
const CONTINUE_EXECUTION: u32 = 0xFFFF_FFFF;
/// Size of CONTEXTRECORD.
const CONTEXT_SIZE: u32 = 176;
/// Size of EXCEPTIONREPORTRECORD.
const REPORT_SIZE: u32 = 36;
/// CONTEXT_CONTROL | CONTEXT_INTEGER | CONTEXT_SEGMENTS.
const CONTEXT_FLAGS: u32 = 0x7;

/// The OS/2 exception number and parameters of a CPU exception.
fn exception_number(f: Fault, cr2: u32) -> (u32, Vec<u32>) {
    match f.vector {
        vector::DE => (0xC000_009B, vec![]),
        vector::DB => (0x8000_000C, vec![]),
        vector::BP => (0x8000_000B, vec![]),
        vector::OF => (0xC000_009C, vec![]),
        vector::BR => (0xC000_0093, vec![]),
        vector::UD => (0xC000_001C, vec![]),
        vector::PF => {
            let write = f.error.unwrap_or(0) & 2 != 0;
            (0xC000_0005, vec![if write { 2 } else { 1 }, cr2])
        }
        _ => (0xC000_0005, vec![0, u32::MAX]),
    }
}

impl Process {
    /// Offer a 32-bit guest exception to the registered handlers:
    /// `Some(None)` when one handled it, `Some(Some(outcome))` when the
    /// run ended while a handler ran, `None` when nobody took it.
    pub(crate) fn dispatch_exception32(&mut self, fault: Fault) -> Option<Option<Outcome>> {
        let saved = self.machine.cpu().clone();
        let mut rec = self.read_u32(self.pcb.tib)?;
        let (num, info) = exception_number(fault, saved.cr2);
        let esp = saved.gpr[Gpr::Esp] & !3;
        let ctx = esp.wrapping_sub(0x100 + CONTEXT_SIZE);
        let report = ctx.wrapping_sub(REPORT_SIZE);
        let mut r = Vec::new();
        for v in [num, 0, 0, saved.eip, info.len() as u32] {
            r.extend(v.to_le_bytes());
        }
        for i in 0..4 {
            r.extend(info.get(i).copied().unwrap_or(0).to_le_bytes());
        }
        let mut c = vec![0u8; CONTEXT_SIZE as usize];
        let mut put = |off: usize, v: u32| c[off..off + 4].copy_from_slice(&v.to_le_bytes());
        put(0, CONTEXT_FLAGS);
        let s = |r: SegReg| u32::from(saved.seg[r as usize].selector);
        let g = &saved.gpr;
        for (i, v) in [
            s(SegReg::Gs),
            s(SegReg::Fs),
            s(SegReg::Es),
            s(SegReg::Ds),
            g[7],
            g[6],
            g[0],
            g[3],
            g[1],
            g[2],
            g[5],
            saved.eip,
            s(SegReg::Cs),
            saved.eflags,
            g[4],
            s(SegReg::Ss),
        ]
        .into_iter()
        .enumerate()
        {
            put(112 + 4 * i, v);
        }
        if !self.write_mem(report, &r) || !self.write_mem(ctx, &c) {
            return None;
        }
        let ret = THUNK_BASE + 4 * self.kernel.thunks.special(Slot::InitReturn);
        self.machine.add_host_call(ret);
        for _ in 0..64 {
            if rec == u32::MAX || rec == 0 {
                break;
            }
            let handler = self.read_u32(rec.wrapping_add(4))?;
            {
                let cpu = self.machine.cpu_mut_flush_tlb();
                *cpu = saved.clone();
                cpu.gpr[Gpr::Esp] = report.wrapping_sub(4);
                // As the CPU's own exception entry: the handler runs
                // without the guest's TF (its single steps would trap
                // inside the handler); the context record keeps it.
                cpu.eflags &= !(emu::flags::TF | emu::flags::RF);
            }
            let ok = [0, ctx, rec, report, ret]
                .into_iter()
                .all(|v| self.push32(v));
            if !ok {
                break;
            }
            self.machine.set_eip(handler);
            match self.run_loop(None) {
                Outcome::Returned(CONTINUE_EXECUTION) => {
                    if self.restore_context(ctx) {
                        return Some(None);
                    }
                    let why = "the exception context record is unreadable";
                    return Some(Some(Outcome::HostError(why.into())));
                }
                Outcome::Returned(_) => rec = self.read_u32(rec)?,
                other => return Some(Some(other)),
            }
        }
        *self.machine.cpu_mut_flush_tlb() = saved;
        None
    }

    fn read_u32(&mut self, lin: u32) -> Option<u32> {
        let b = self.read_mem(lin, 4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Load the registers from a CONTEXTRECORD.
    fn restore_context(&mut self, ctx: u32) -> bool {
        let Some(b) = self.read_mem(ctx + 112, 64) else {
            return false;
        };
        let v = |i: usize| u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
        let segs = [
            (SegReg::Gs, 0),
            (SegReg::Fs, 1),
            (SegReg::Es, 2),
            (SegReg::Ds, 3),
        ];
        let mut ok = true;
        for (s, i) in segs {
            ok &= self.kernel.desc.load(&mut self.machine, s, v(i) as u16);
        }
        ok &= self
            .kernel
            .desc
            .load(&mut self.machine, SegReg::Cs, v(12) as u16)
            && self
                .kernel
                .desc
                .load(&mut self.machine, SegReg::Ss, v(15) as u16);
        *self.machine.gpr_mut() = [v(6), v(8), v(9), v(7), v(14), v(10), v(5), v(4)];
        self.machine.set_eip(v(11));
        *self.machine.eflags_mut() = (v(13) & 0x0000_0CD5) | emu::flags::RESERVED1 | emu::flags::IF;
        ok
    }
}
