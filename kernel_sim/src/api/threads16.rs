//! DosCreateThread, 16-bit (DOSCALLS.145, OS/2 1.x):
//! `DosCreateThread(PFNTHREAD pfnFunction, PTID ptidThread, PBYTE
//! pbThrdStack)`, far pascal. The scheduler and its decisions are
//! `threads.rs`'s.
//!
//! Decisions where the 1.x reference leaves room:
//! - The caller gives the stack: the new thread starts at `pfnFunction`
//!   with SS:SP = `pbThrdStack` (the byte above the stack's top, as
//!   documented), and with the creator's other registers as they were at
//!   the call (DS and ES included, so the function reaches its data).
//! - A far return from the function ends the thread with AX as its code
//!   (its stack holds a far return address to the kernel), as
//!   DosExit(EXIT_THREAD, AX) would.
//! - The thread gets a TIB page of its own (tiled), as 32-bit threads do;
//!   its stack bounds there are the stack segment's base and SS:SP.
//! - A null or unusable function or stack pointer is
//!   ERROR_INVALID_ADDRESS; a table full of threads
//!   ERROR_MAX_THRDS_REACHED.

use emu::{Gpr, SegReg};

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::layout::*;
use crate::memory::RegionKind;
use crate::process::Process;
use crate::rc::*;
use crate::threads::{MAX_THREADS, State, TLM_DWORDS, Thread};

/// The entries.
pub static DEFS: &[ApiDef] =
    &[api!("DOSCALLS" 145 "DosCreateThread" Far16 [P, P, P] create_thread16)];

fn create_thread16(p: &mut Process, c: &Call) -> ApiResult<()> {
    let (function, stack) = (c.l(0), c.l(2));
    let (cs, ip) = ((function >> 16) as u16, function & 0xFFFF);
    let (ss, sp) = ((stack >> 16) as u16, stack & 0xFFFF);
    p.arg_ptr(c, 1, 2)?;
    let code = p.kernel.desc.segment(cs).ok_or(ERROR_INVALID_ADDRESS)?;
    if function == 0 || code.big() || cs & 4 == 0 {
        return Err(ERROR_INVALID_ADDRESS);
    }
    // Room for the far return address below SS:SP.
    let top = p
        .selector_to_linear(ss, sp.wrapping_sub(4), 4)
        .ok_or(ERROR_INVALID_ADDRESS)?;
    let tid = p.create_thread16(cs, ip, ss, sp, top + 4)?;
    p.put_u16(c, 1, tid as u16)
}

impl Process {
    /// A 16-bit thread at `cs:ip` on the caller's stack `ss:sp` (linear
    /// top `top`); its TID.
    fn create_thread16(&mut self, cs: u16, ip: u32, ss: u16, sp: u32, top: u32) -> ApiResult<u32> {
        if self
            .pcb
            .threads
            .iter()
            .filter(|t| !matches!(t.state, State::Ended(_)))
            .count()
            >= MAX_THREADS
        {
            return Err(ERROR_MAX_THRDS_REACHED);
        }
        let ret = 4 * self
            .kernel
            .thunks
            .special(crate::thunks::Slot::ThreadReturn);
        self.machine.add_host_call(THUNK_BASE + ret);
        // The far return address: THUNK_CS:slot.
        let frame: Vec<u8> = [ret as u16, THUNK_CS]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        if self.machine.write_linear(top - 4, &frame).is_err() {
            return Err(ERROR_INVALID_ADDRESS);
        }
        let tib = self
            .alloc_tiled(PAGE, RegionKind::Mem)
            .map_err(|_| ERROR_NOT_ENOUGH_MEMORY)?;
        let tid = self.take_free_tid();
        let stack_lo = self.selector_to_linear(ss, 0, 1).unwrap_or(top);
        let block = crate::threads::tib_bytes(tid, tib, (stack_lo, top));
        let _ = self.machine.write_linear(tib, &block);
        // The new thread's registers: the caller's, with CS:IP and SS:SP
        // loaded through the descriptor tables.
        let saved = self.machine.cpu().clone();
        let d = &self.kernel.desc;
        let ok =
            d.load(&mut self.machine, SegReg::Cs, cs) && d.load(&mut self.machine, SegReg::Ss, ss);
        self.machine.set_eip(ip);
        self.machine.gpr_mut()[Gpr::Esp] = (sp.wrapping_sub(4)) & 0xFFFF;
        *self.machine.eflags_mut() = 0x202;
        let cpu = self.machine.cpu().clone();
        *self.machine.cpu_mut_flush_tlb() = saved;
        if !ok {
            self.kernel.desc.untile(&mut self.machine, tib, PAGE);
            self.pcb.mem.release(&mut self.machine, tib);
            return Err(ERROR_INVALID_ADDRESS);
        }
        if self.pcb.threads.len() == 1 {
            self.pcb.slice_end = self.kernel.executed + crate::threads::QUANTUM;
        }
        self.pcb.threads.push(Thread {
            tid,
            state: State::Ready,
            cpu: Some(Box::new(cpu)),
            fresh: false,
            tib,
            region: tib,
            suspended: false,
            tlm: [0; TLM_DWORDS],
            priority: 0x200,
        });
        Ok(tid)
    }
}
