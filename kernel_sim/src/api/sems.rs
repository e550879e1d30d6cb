//! Semaphores and exit lists.
//!
//! Decisions: event and mutex semaphores are handles into the kernel's
//! table (`semaphores.rs`, which also says how names, sharing and opens
//! work; muxwait semaphores are `muxwait.rs`'s); a wait that cannot be satisfied blocks the
//! thread (`threads.rs`) until a post, a release, the timeout or the
//! owner's end; with one thread, waiting forever is a deadlock that ends
//! the run. 16-bit RAM semaphores are the dword at the pointer (nonzero =
//! set/owned) and do not block: a wait on a set one returns
//! ERROR_SEM_TIMEOUT; the same four calls on a 16-bit system semaphore's
//! handle are `syssem.rs`'s. DosExitList keeps the list that `exitlist.rs`
//! runs when the process ends.

use crate::api::syssem;
use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call, Stop};
use crate::process::Process;
use crate::rc::*;
use crate::semaphores::{SemKind, check_name};
use crate::threads::Wait;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 140 "DosSemRequest" Far16 [P, L] raw |p, c| sem16_wait(p, c, true)),
    api!("DOSCALLS" 141 "DosSemClear" Far16 [P] raw |p, c| {
        if p.kernel.sys_sems.is_handle(c.l(0)) {
            return Ok(syssem::clear(p, c.l(0)));
        }
        Ok(p.put_u32(c, 0, 0).err().unwrap_or(NO_ERROR))
    }),
    api!("DOSCALLS" 142 "DosSemWait" Far16 [P, L] raw |p, c| sem16_wait(p, c, false)),
    api!("DOSCALLS" 143 "DosSemSet" Far16 [P] raw |p, c| {
        if p.kernel.sys_sems.is_handle(c.l(0)) {
            return Ok(syssem::set(p, c.l(0)));
        }
        Ok(p.put_u32(c, 0, 1).err().unwrap_or(NO_ERROR))
    }),
    api!("DOSCALLS" 7 "DosExitList" Far16 [W, P] raw exit_list),
    api!("DOSCALLS" 296 "DosExitList" Sys32 [L, P] raw exit_list),
    api!("DOSCALLS" 324 "DosCreateEventSem" Sys32 [S, P, L, L] |p, c| {
        create(p, c, SemKind::Event, u32::from(c.l(3) != 0), 0)
    }),
    api!("DOSCALLS" 325 "DosOpenEventSem" Sys32 [S, P] |p, c| open(p, c, SemKind::Event)),
    api!("DOSCALLS" 326 "DosCloseEventSem" Sys32 [L] |p, c| close(p, c.l(0), SemKind::Event)),
    api!("DOSCALLS" 327 "DosResetEventSem" Sys32 [L, P] |p, c| {
        let s = p.kernel.sems.get_mut(c.l(0), SemKind::Event)?;
        let n = std::mem::take(&mut s.count);
        p.put_u32_opt(c, 1, n)?;
        if n == 0 { Err(ERROR_ALREADY_RESET) } else { Ok(()) }
    }),
    api!("DOSCALLS" 328 "DosPostEventSem" Sys32 [L] |p, c| {
        let s = p.kernel.sems.get_mut(c.l(0), SemKind::Event)?;
        if s.count >= MAX_POSTS {
            return Err(ERROR_TOO_MANY_POSTS);
        }
        s.count += 1;
        if s.count > 1 { Err(ERROR_ALREADY_POSTED) } else { Ok(()) }
    }),
    api!("DOSCALLS" 329 "DosWaitEventSem" Sys32 [L, L] raw |p, c| {
        let (handle, ms) = (c.l(0), c.l(1));
        match p.kernel.sems.get_mut(handle, SemKind::Event) {
            Err(e) => Ok(e),
            Ok(s) if s.count > 0 => Ok(NO_ERROR),
            Ok(_) if ms == 0 => Ok(ERROR_TIMEOUT),
            Ok(_) => Err(Stop::Block(Wait::Event { handle, until: p.deadline(ms) })),
        }
    }),
    api!("DOSCALLS" 330 "DosQueryEventSem" Sys32 [L, P] |p, c| {
        let n = p.kernel.sems.get_mut(c.l(0), SemKind::Event)?.count;
        p.put_u32(c, 1, n)
    }),
    api!("DOSCALLS" 331 "DosCreateMutexSem" Sys32 [S, P, L, L] |p, c| {
        let owned = c.l(3) != 0;
        let owner = if owned { p.sem_owner(p.current_tid()) } else { 0 };
        create(p, c, SemKind::Mutex, u32::from(owned), owner)
    }),
    api!("DOSCALLS" 332 "DosOpenMutexSem" Sys32 [S, P] |p, c| open(p, c, SemKind::Mutex)),
    api!("DOSCALLS" 333 "DosCloseMutexSem" Sys32 [L] |p, c| close(p, c.l(0), SemKind::Mutex)),
    api!("DOSCALLS" 334 "DosRequestMutexSem" Sys32 [L, L] raw |p, c| {
        let (handle, ms) = (c.l(0), c.l(1));
        let tid = p.sem_owner(p.current_tid());
        match p.kernel.sems.get_mut(handle, SemKind::Mutex) {
            Err(e) => Ok(e),
            Ok(s) if s.owner == 0 => {
                s.owner = tid;
                s.count = 1;
                Ok(std::mem::take(&mut s.owner_died_rc))
            }
            Ok(s) if s.owner == tid => {
                if s.count == u32::from(u16::MAX) {
                    return Ok(ERROR_TOO_MANY_SEM_REQUESTS);
                }
                s.count += 1;
                Ok(NO_ERROR)
            }
            Ok(_) if ms == 0 => Ok(ERROR_TIMEOUT),
            Ok(_) => Err(Stop::Block(Wait::Mutex { handle, until: p.deadline(ms) })),
        }
    }),
    api!("DOSCALLS" 335 "DosReleaseMutexSem" Sys32 [L] |p, c| {
        let tid = p.sem_owner(p.current_tid());
        let s = p.kernel.sems.get_mut(c.l(0), SemKind::Mutex)?;
        if s.owner != tid || s.count == 0 {
            return Err(ERROR_NOT_OWNER);
        }
        s.count -= 1;
        if s.count == 0 {
            s.owner = 0;
        }
        Ok(())
    }),
    api!("DOSCALLS" 336 "DosQueryMutexSem" Sys32 [L, P, P, P] |p, c| {
        let s = p.kernel.sems.get_mut(c.l(0), SemKind::Mutex)?.clone();
        // The owner is a process's thread (`Process::sem_owner`).
        p.put_u32(c, 1, s.owner >> 16)?;
        p.put_u32(c, 2, s.owner & 0xFFFF)?;
        p.put_u32(c, 3, s.count)?;
        if s.owner_died_rc != 0 { Err(ERROR_SEM_OWNER_DIED) } else { Ok(()) }
    }),
];

/// DosSemWait / DosSemRequest: a system semaphore's (`syssem.rs`) or a
/// RAM semaphore's.
fn sem16_wait(p: &mut Process, c: &Call, take: bool) -> Result<u32, Stop> {
    if p.kernel.sys_sems.is_handle(c.l(0)) {
        return syssem::wait(p, c.l(0), c.l(1), take);
    }
    Ok(ram_sem(p, c, take).err().unwrap_or(NO_ERROR))
}

/// DosExitList(fnCode, routine), 16-bit (a 16:16 routine) or 32-bit
/// (a flat one): EXLST_ADD, EXLST_REMOVE, EXLST_EXIT (`exitlist.rs`).
fn exit_list(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    use crate::exitlist::{EXLST_ADD, EXLST_EXIT, EXLST_REMOVE, ExitRoutine};
    let code = c.l(0);
    let (action, order) = (code & 0xFF, ((code >> 8) & 0xFF) as u8);
    if !(EXLST_ADD..=EXLST_EXIT).contains(&action) {
        return Ok(ERROR_INVALID_FUNCTION);
    }
    if code >> 16 != 0 || (action != EXLST_ADD && order != 0) {
        return Ok(ERROR_INVALID_DATA);
    }
    let far16 = c.far16;
    let list = &mut p.pcb.exit_list;
    Ok(match action {
        EXLST_ADD => {
            let r = ExitRoutine {
                addr: c.l(1),
                order,
                far16,
            };
            crate::exitlist::add(list, r).err().unwrap_or(NO_ERROR)
        }
        EXLST_REMOVE => match list
            .iter()
            .position(|r| r.addr == c.l(1) && r.far16 == far16)
        {
            Some(i) => {
                list.remove(i);
                NO_ERROR
            }
            None => ERROR_INVALID_FUNCTION,
        },
        // The routine is done: the next one runs (`process_ends`).
        _ if p.pcb.exiting.as_ref().is_some_and(|e| !e.in_dll_term) => {
            return Err(Stop::Exit(0));
        }
        _ => ERROR_INVALID_FUNCTION,
    })
}

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

/// Posts an event semaphore holds at most.
const MAX_POSTS: u32 = 0xFFFF;

/// DC_SEM_SHARED: the one attribute flag of DosCreateEventSem and
/// DosCreateMutexSem.
pub(crate) const DC_SEM_SHARED: u32 = 1;

/// DosCreate*Sem(name, &h, attr, ...) for arguments 0, 1 and 2: `name`
/// NULL or `\SEM32\...`, `attr` only DC_SEM_SHARED (besides `extra`
/// flags the caller checks).
fn create(p: &mut Process, c: &Call, kind: SemKind, count: u32, owner: u32) -> ApiResult<()> {
    p.arg_ptr(c, 1, 4)?;
    if c.l(2) & !DC_SEM_SHARED != 0 {
        return Err(ERROR_INVALID_PARAMETER);
    }
    let name = sem_name(p, c, 0)?;
    let h = p.kernel.sems.create(
        p.pcb.pid,
        kind,
        count,
        owner,
        name,
        c.l(2) & DC_SEM_SHARED != 0,
    )?;
    p.put_u32(c, 1, h)
}

/// The semaphore name at pointer argument `i` (`None` for NULL).
pub(crate) fn sem_name(p: &mut Process, c: &Call, i: usize) -> ApiResult<Option<String>> {
    if c.l(i) == 0 {
        return Ok(None);
    }
    let raw = p.arg_sz(c, i)?;
    check_name(&raw).map(Some)
}

/// DosOpen*Sem(name, &h): by name, or by the handle in `*h` when the
/// name is NULL.
pub(crate) fn open(p: &mut Process, c: &Call, kind: SemKind) -> ApiResult<()> {
    let at = p.arg_ptr(c, 1, 4)?;
    let name = match c.l(0) {
        0 => None,
        _ => Some(p.arg_sz(c, 0)?),
    };
    let name = name.map(|n| check_name(&n)).transpose()?;
    let h = match &name {
        Some(_) => 0,
        None => {
            let b = p.read_mem(at, 4).ok_or(ERROR_INVALID_ADDRESS)?;
            u32::from_le_bytes([b[0], b[1], b[2], b[3]])
        }
    };
    let h = p.kernel.sems.open(p.pcb.pid, kind, name.as_deref(), h)?;
    p.put_u32(c, 1, h)
}

/// Close a semaphore nobody waits on (nor owns, for a mutex).
pub(crate) fn close(p: &mut Process, h: u32, kind: SemKind) -> ApiResult<()> {
    let owner = p.kernel.sems.get_mut(h, kind)?.owner;
    if owner != 0 || p.sem_waited(h) {
        return Err(ERROR_SEM_BUSY);
    }
    p.kernel.sems.close(p.pcb.pid, h)
}
