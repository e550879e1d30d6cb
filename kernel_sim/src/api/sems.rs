//! Semaphores and exit lists for a single-threaded process.
//!
//! Decisions: with one thread nothing else can post or release, so a wait
//! that would block returns ERROR_TIMEOUT at once (for any timeout,
//! including indefinite) instead of hanging the emulator; event and mutex
//! semaphores are handles into the kernel's table (`semaphores.rs`);
//! 16-bit RAM semaphores are the dword at the pointer (nonzero =
//! set/owned). DosExitList records the routines but they are not run at
//! exit.

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::process::Process;
use crate::rc::*;
use crate::semaphores::SemKind;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 140 "DosSemRequest" Far16 [P, L] |p, c| ram_sem(p, c, true)),
    api!("DOSCALLS" 141 "DosSemClear" Far16 [P] |p, c| p.put_u32(c, 0, 0)),
    api!("DOSCALLS" 142 "DosSemWait" Far16 [P, L] |p, c| ram_sem(p, c, false)),
    api!("DOSCALLS" 143 "DosSemSet" Far16 [P] |p, c| p.put_u32(c, 0, 1)),
    api!("DOSCALLS" 296 "DosExitList" Sys32 [L, P] |p, c| {
        match c.l(0) & 0xFF {
            1 => p.pcb.exit_list.push(c.l(1)),
            2 => p.pcb.exit_list.retain(|&f| f != c.l(1)),
            3 => {}
            _ => return Err(ERROR_INVALID_FUNCTION),
        }
        Ok(())
    }),
    api!("DOSCALLS" 324 "DosCreateEventSem" Sys32 [S, P, L, L] |p, c| create(p, c, SemKind::Event)),
    api!("DOSCALLS" 326 "DosCloseEventSem" Sys32 [L] |p, c| p.kernel.sems.close(c.l(0))),
    api!("DOSCALLS" 327 "DosResetEventSem" Sys32 [L, P] |p, c| {
        let s = p.kernel.sems.get_mut(c.l(0), SemKind::Event)?;
        let n = std::mem::take(&mut s.count);
        p.put_u32_opt(c, 1, n)?;
        if n == 0 { Err(ERROR_ALREADY_RESET) } else { Ok(()) }
    }),
    api!("DOSCALLS" 328 "DosPostEventSem" Sys32 [L] |p, c| {
        let s = p.kernel.sems.get_mut(c.l(0), SemKind::Event)?;
        s.count += 1;
        if s.count > 1 { Err(ERROR_ALREADY_POSTED) } else { Ok(()) }
    }),
    api!("DOSCALLS" 329 "DosWaitEventSem" Sys32 [L, L] |p, c| {
        let s = p.kernel.sems.get_mut(c.l(0), SemKind::Event)?;
        if s.count > 0 { Ok(()) } else { Err(ERROR_TIMEOUT) }
    }),
    api!("DOSCALLS" 330 "DosQueryEventSem" Sys32 [L, P] |p, c| {
        let n = p.kernel.sems.get_mut(c.l(0), SemKind::Event)?.count;
        p.put_u32(c, 1, n)
    }),
    api!("DOSCALLS" 331 "DosCreateMutexSem" Sys32 [S, P, L, L] |p, c| create(p, c, SemKind::Mutex)),
    api!("DOSCALLS" 333 "DosCloseMutexSem" Sys32 [L] |p, c| p.kernel.sems.close(c.l(0))),
    api!("DOSCALLS" 334 "DosRequestMutexSem" Sys32 [L, L] |p, c| {
        p.kernel.sems.get_mut(c.l(0), SemKind::Mutex)?.count += 1;
        Ok(())
    }),
    api!("DOSCALLS" 335 "DosReleaseMutexSem" Sys32 [L] |p, c| {
        let s = p.kernel.sems.get_mut(c.l(0), SemKind::Mutex)?;
        if s.count == 0 {
            return Err(ERROR_NOT_OWNER);
        }
        s.count -= 1;
        Ok(())
    }),
];

fn ram_sem(p: &mut Process, c: &Call, take: bool) -> ApiResult<()> {
    let lin = p.arg_ptr(c, 0, 4)?;
    let b = p.read_mem(lin, 4).ok_or(ERROR_INVALID_ADDRESS)?;
    if b != [0; 4] {
        return Err(ERROR_SEM_TIMEOUT);
    }
    if take {
        p.put_u32(c, 0, 1)?;
    }
    Ok(())
}

fn create(p: &mut Process, c: &Call, kind: SemKind) -> ApiResult<()> {
    let h = p.kernel.sems.create(kind, u32::from(c.l(3) != 0));
    p.put_u32(c, 1, h)
}
