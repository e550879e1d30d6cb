//! Thread entries of DOSCALLS (32-bit): DosCreateThread, DosWaitThread,
//! DosKillThread, DosSuspendThread/DosResumeThread, DosEnterCritSec/
//! DosExitCritSec, DosSetPriority, DosAllocThreadLocalMemory and
//! DosFreeThreadLocalMemory. The scheduler and the decisions are in
//! `threads.rs`.
//!
//! Decisions on codes the reference leaves open: a thread cannot wait
//! for, kill or suspend itself (ERROR_INVALID_THREADID); DosCreateThread
//! with a stack size of 0 or unknown flag bits is
//! ERROR_INVALID_PARAMETER.

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call, Stop};
use crate::process::Process;
use crate::rc::*;
use crate::threads::{State, TLM_DWORDS, TLM_OFFSET, Wait};

const CREATE_SUSPENDED: u32 = 1;
const STACK_COMMITTED: u32 = 2;
const DCWW_WAIT: u32 = 0;
const DCWW_NOWAIT: u32 = 1;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 111 "DosKillThread" Sys32 [L] |p, c| {
        let i = other_thread(p, c.l(0))?;
        p.end_thread(i, 0);
        Ok(())
    }),
    api!("DOSCALLS" 232 "DosEnterCritSec" Sys32 [] |p, _| {
        if p.pcb.critsec == u32::from(u16::MAX) {
            return Err(ERROR_CRITSEC_OVERFLOW);
        }
        p.pcb.critsec += 1;
        Ok(())
    }),
    api!("DOSCALLS" 233 "DosExitCritSec" Sys32 [] |p, _| {
        p.pcb.critsec = p.pcb.critsec.checked_sub(1).ok_or(ERROR_CRITSEC_UNDERFLOW)?;
        Ok(())
    }),
    api!("DOSCALLS" 9 "DosGetPrty" Far16 [W, P, W] get_prty),
    api!("DOSCALLS" 11 "DosSetPrty" Far16 [W, W, W, W] set_priority),
    api!("DOSCALLS" 236 "DosSetPriority" Sys32 [L, L, L, L] set_priority),
    api!("DOSCALLS" 237 "DosResumeThread" Sys32 [L] |p, c| {
        let i = other_thread(p, c.l(0))?;
        let t = &mut p.pcb.threads[i];
        if !t.suspended {
            return Err(ERROR_NOT_FROZEN);
        }
        t.suspended = false;
        Ok(())
    }),
    api!("DOSCALLS" 238 "DosSuspendThread" Sys32 [L] |p, c| {
        let i = other_thread(p, c.l(0))?;
        p.pcb.threads[i].suspended = true;
        Ok(())
    }),
    api!("DOSCALLS" 311 "DosCreateThread" Sys32 [P, P, L, L, L] |p, c| {
        let (entry, param, flags, stack) = (c.l(1), c.l(2), c.l(3), c.l(4));
        if flags & !(CREATE_SUSPENDED | STACK_COMMITTED) != 0 || stack == 0 || entry == 0 {
            return Err(ERROR_INVALID_PARAMETER);
        }
        p.arg_ptr(c, 0, 4)?;
        let tid = p.create_thread(entry, param, stack, flags & CREATE_SUSPENDED != 0)?;
        p.put_u32(c, 0, tid)
    }),
    api!("DOSCALLS" 349 "DosWaitThread" Sys32 [P, L] raw wait_thread),
    api!("DOSCALLS" 454 "DosAllocThreadLocalMemory" Sys32 [L, P] |p, c| {
        let n = c.l(0) as usize;
        if !(1..=8).contains(&n) {
            return Err(ERROR_INVALID_PARAMETER);
        }
        p.arg_ptr(c, 1, 4)?;
        let at = p.pcb.tlm.alloc(n).ok_or(ERROR_NOT_ENOUGH_MEMORY)?;
        // Every thread's copy starts at zero.
        for t in &mut p.pcb.threads {
            t.tlm[at..at + n].fill(0);
        }
        let lin = p.pcb.tib_page + TLM_OFFSET + 4 * at as u32;
        if !p.write_mem(lin, &vec![0; 4 * n]) {
            return Err(ERROR_NOT_ENOUGH_MEMORY);
        }
        p.put_u32(c, 1, lin)
    }),
    api!("DOSCALLS" 455 "DosFreeThreadLocalMemory" Sys32 [P] |p, c| {
        let off = c.l(0).wrapping_sub(p.pcb.tib_page + TLM_OFFSET);
        let index = (off / 4) as usize;
        if off % 4 != 0 || index >= TLM_DWORDS || p.pcb.tlm.blocks.remove(&index).is_none() {
            return Err(ERROR_INVALID_PARAMETER);
        }
        Ok(())
    }),
];

/// The index of live thread `tid`, which is not the caller.
fn other_thread(p: &Process, tid: u32) -> ApiResult<usize> {
    match p.thread_index(tid) {
        Some(i) if i != p.pcb.current && p.pcb.threads[i].state_live() => Ok(i),
        _ => Err(ERROR_INVALID_THREADID),
    }
}

fn wait_thread(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let option = c.l(1);
    let lin = match p.arg_ptr(c, 0, 4) {
        Ok(l) => l,
        Err(e) => return Ok(e),
    };
    if option != DCWW_WAIT && option != DCWW_NOWAIT {
        return Ok(ERROR_INVALID_PARAMETER);
    }
    let Some(b) = p.read_mem(lin, 4) else {
        return Ok(ERROR_INVALID_ADDRESS);
    };
    let tid = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    if tid != 0 {
        match p.thread_index(tid) {
            Some(i) if i != p.pcb.current => {}
            _ => return Ok(ERROR_INVALID_THREADID),
        }
    }
    let wait = Wait::Thread { tid, out: lin };
    let me = p.current_tid();
    if let Some(rc) = p.wait_now(wait, me) {
        return Ok(rc);
    }
    if option == DCWW_NOWAIT {
        return Ok(ERROR_THREAD_NOT_TERMINATED);
    }
    Err(Stop::Block(wait))
}

/// DosSetPrty (16-bit: the delta is a SHORT) / DosSetPriority.
fn set_priority(p: &mut Process, c: &Call) -> ApiResult<()> {
    let delta = if c.far16 {
        i32::from(c.w(2) as i16)
    } else {
        c.l(2) as i32
    };
    let (scope, class, id) = (c.l(0), c.l(1), c.l(3));
    if scope > 2 {
        return Err(ERROR_INVALID_SCOPE);
    }
    if class > 4 {
        return Err(ERROR_INVALID_PCLASS);
    }
    if !(-31..=31).contains(&delta) {
        return Err(ERROR_INVALID_PDELTA);
    }
    let apply = |prio: u32| {
        let cls = if class == 0 { prio >> 8 } else { class };
        let level = ((prio & 0xFF) as i32 + delta).clamp(0, 31) as u32;
        (cls << 8) | level
    };
    if scope == 2 {
        let i = if id == 0 {
            p.pcb.current
        } else {
            p.thread_index(id)
                .filter(|&i| p.pcb.threads[i].state_live())
                .ok_or(ERROR_INVALID_THREADID)?
        };
        let t = &mut p.pcb.threads[i];
        t.priority = apply(t.priority);
        return Ok(());
    }
    if id != 0 && id != u32::from(p.pcb.pid) {
        return Err(ERROR_INVALID_PROCID);
    }
    for t in &mut p.pcb.threads {
        t.priority = apply(t.priority);
    }
    Ok(())
}

/// DosGetPrty(scope, &priority, id): PRTYS_PROCESS (0) gives the
/// priority of the process's first thread (`id` 0 or its PID),
/// PRTYS_THREAD (2) the thread's (`id` 0: the caller); class in the high
/// byte, level in the low one.
fn get_prty(p: &mut Process, c: &Call) -> ApiResult<()> {
    let id = u32::from(c.w(2));
    let i = match c.w(0) {
        0 => {
            if id != 0 && id != u32::from(p.pcb.pid) {
                return Err(ERROR_INVALID_PROCID);
            }
            p.pcb
                .threads
                .iter()
                .position(|t| t.state_live())
                .unwrap_or(p.pcb.current)
        }
        2 if id == 0 => p.pcb.current,
        2 => p
            .thread_index(id)
            .filter(|&i| p.pcb.threads[i].state_live())
            .ok_or(ERROR_INVALID_THREADID)?,
        _ => return Err(ERROR_INVALID_SCOPE),
    };
    let prio = p.pcb.threads.get(i).map_or(0x0200, |t| t.priority);
    p.put_u16(c, 1, prio as u16)
}

impl crate::threads::Thread {
    fn state_live(&self) -> bool {
        !matches!(self.state, State::Ended(_))
    }
}
