//! 16-bit system semaphores: DosCreateSem, DosOpenSem, DosCloseSem, and
//! DosSemSet / DosSemClear / DosSemWait / DosSemRequest on their handles
//! (on a RAM semaphore, a far pointer to a dword, those four are
//! `sems.rs`'s).
//!
//! Decisions: a system semaphore is named `\SEM\...` (case does not
//! matter; ERROR_INVALID_NAME otherwise, ERROR_ALREADY_EXISTS for a name
//! in use) and lives in the kernel's table ([`SysSems`]) until its last
//! open is closed; its handle is `0xFFFB0000 + index + 1`, a 16:16
//! pointer whose selector (GDT index 0x1FFF) is never valid, so the
//! calls can tell it from a RAM semaphore. It is set or clear. An
//! exclusive one (fNoExclusive 0) that DosSemRequest set is owned by that
//! thread: the owner may request it again (counted, at most 65535:
//! ERROR_TOO_MANY_SEM_REQUESTS) and each DosSemClear undoes one; anyone
//! else's DosSemSet or DosSemClear of it is ERROR_EXCL_SEM_ALREADY_OWNED,
//! and its owner may not close it while it is set (ERROR_SEM_IS_SET).
//! DosSemWait waits until it is clear, DosSemRequest until it is clear
//! and then sets it: both block the thread (`threads.rs`) for the
//! timeout in milliseconds (0: ERROR_SEM_TIMEOUT at once; negative:
//! forever). Opens are counted per process (`semaphores.rs`'s
//! [`crate::semaphores::Opens`]); a process that ends closes its opens
//! ([`SysSems::process_ended`]), and an exclusive semaphore one of its
//! threads owned is cleared, its next DosSemRequest told
//! ERROR_SEM_OWNER_DIED. While the process runs its exit list, the
//! semaphores its threads owned are the exit-list thread's
//! ([`SysSems::transfer`]), as OS/2 documents.

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call, Stop};
use crate::process::Process;
use crate::rc::*;
use crate::threads::Wait;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 23 "DosCloseSem" Far16 [L] close),
    api!("DOSCALLS" 24 "DosCreateSem" Far16 [W, P, S] create),
    api!("DOSCALLS" 25 "DosOpenSem" Far16 [P, S] open),
];

/// The handle of index 0.
const HANDLE_BASE: u32 = 0xFFFB_0001;
/// The most system semaphores at once.
const MAX_SEMS: usize = 0xFFFF;

/// One system semaphore.
#[derive(Clone, Debug)]
struct SysSem {
    /// Upper case, with its `\SEM\`.
    name: Vec<u8>,
    exclusive: bool,
    set: bool,
    /// The owning thread (PID << 16 | TID; 0: none) and its requests.
    owner: u32,
    requests: u32,
    opens: crate::semaphores::Opens,
    /// Its owner ended holding it: the next request is told so.
    owner_died: bool,
}

/// Every system semaphore (`Kernel::sys_sems`).
#[derive(Debug, Default)]
pub(crate) struct SysSems {
    sems: Vec<Option<SysSem>>,
}

impl SysSems {
    fn get(&mut self, h: u32) -> Option<&mut SysSem> {
        let i = h.checked_sub(HANDLE_BASE)? as usize;
        self.sems.get_mut(i)?.as_mut()
    }

    /// Is `h` a system semaphore's handle, open or not (selector
    /// 0xFFFB)? A closed one is then ERROR_INVALID_HANDLE.
    pub(crate) fn is_handle(&self, h: u32) -> bool {
        h >> 16 == HANDLE_BASE >> 16
    }

    /// Process `pid` ended: the exclusive semaphores its threads owned
    /// are cleared (their next request is told the owner died), its
    /// opens are closed, and semaphores nobody has open go.
    pub(crate) fn process_ended(&mut self, pid: u16) {
        for slot in &mut self.sems {
            let Some(s) = slot else {
                continue;
            };
            if s.owner != 0 && s.owner >> 16 == u32::from(pid) {
                s.owner = 0;
                s.requests = 0;
                s.set = false;
                s.owner_died = true;
            }
            s.opens.drop_process(pid);
            if s.opens.total() == 0 {
                *slot = None;
            }
        }
    }

    /// The semaphores owned by threads of process `pid` become thread
    /// `to`'s (PID << 16 | TID): exit-list processing.
    pub(crate) fn transfer(&mut self, pid: u16, to: u32) {
        for s in self.sems.iter_mut().flatten() {
            if s.owner != 0 && s.owner >> 16 == u32::from(pid) {
                s.owner = to;
            }
        }
    }
}

fn check_name(name: &[u8]) -> ApiResult<Vec<u8>> {
    let up = name.to_ascii_uppercase();
    if !up.starts_with(b"\\SEM\\") || up.len() == 5 || up.len() > 255 {
        return Err(ERROR_INVALID_NAME);
    }
    Ok(up)
}

/// DosCreateSem(fNoExclusive, &hsem, name).
fn create(p: &mut Process, c: &Call) -> ApiResult<()> {
    let exclusive = match c.w(0) {
        0 => true,
        1 => false,
        _ => return Err(ERROR_INVALID_PARAMETER),
    };
    let name = check_name(&p.arg_sz(c, 2)?)?;
    p.arg_bytes(c, 1, 4)?;
    let t = &mut p.kernel.sys_sems;
    if t.sems.iter().flatten().any(|s| s.name == name) {
        return Err(ERROR_ALREADY_EXISTS);
    }
    let sem = SysSem {
        name,
        exclusive,
        set: false,
        owner: 0,
        requests: 0,
        opens: crate::semaphores::Opens::one(p.pcb.pid),
        owner_died: false,
    };
    let i = match t.sems.iter().position(Option::is_none) {
        Some(i) => i,
        None if t.sems.len() < MAX_SEMS => {
            t.sems.push(None);
            t.sems.len() - 1
        }
        None => return Err(ERROR_TOO_MANY_SEMAPHORES),
    };
    t.sems[i] = Some(sem);
    let h = HANDLE_BASE + i as u32;
    if let Err(e) = p.put_u32(c, 1, h) {
        p.kernel.sys_sems.sems[i] = None;
        return Err(e);
    }
    Ok(())
}

/// DosOpenSem(&hsem, name).
fn open(p: &mut Process, c: &Call) -> ApiResult<()> {
    let name = check_name(&p.arg_sz(c, 1)?)?;
    p.arg_bytes(c, 0, 4)?;
    let t = &mut p.kernel.sys_sems;
    let i = t
        .sems
        .iter()
        .position(|s| s.as_ref().is_some_and(|s| s.name == name))
        .ok_or(ERROR_SEM_NOT_FOUND)?;
    if t.sems[i]
        .as_ref()
        .is_some_and(|s| s.opens.total() >= 0xFFFF)
    {
        return Err(ERROR_TOO_MANY_OPENS);
    }
    p.put_u32(c, 0, HANDLE_BASE + i as u32)?;
    let pid = p.pcb.pid;
    if let Some(s) = p.kernel.sys_sems.sems[i].as_mut() {
        s.opens.add(pid);
    }
    Ok(())
}

/// DosCloseSem(hsem).
fn close(p: &mut Process, c: &Call) -> ApiResult<()> {
    let h = c.l(0);
    let me = p.sem_owner(p.current_tid());
    let pid = p.pcb.pid;
    let s = p.kernel.sys_sems.get(h).ok_or(ERROR_INVALID_HANDLE)?;
    if !s.opens.has(pid) {
        return Err(ERROR_INVALID_HANDLE);
    }
    if s.exclusive && s.set && s.owner == me {
        return Err(ERROR_SEM_IS_SET);
    }
    s.opens.remove(pid);
    if s.opens.total() == 0 {
        let i = (h - HANDLE_BASE) as usize;
        p.kernel.sys_sems.sems[i] = None;
    }
    Ok(())
}

/// DosSemSet(hsem) on a system semaphore.
pub(crate) fn set(p: &mut Process, h: u32) -> u32 {
    let me = p.sem_owner(p.current_tid());
    let Some(s) = p.kernel.sys_sems.get(h) else {
        return ERROR_INVALID_HANDLE;
    };
    if s.exclusive && s.owner != 0 && s.owner != me {
        return ERROR_EXCL_SEM_ALREADY_OWNED;
    }
    s.set = true;
    NO_ERROR
}

/// DosSemClear(hsem) on a system semaphore.
pub(crate) fn clear(p: &mut Process, h: u32) -> u32 {
    let me = p.sem_owner(p.current_tid());
    let Some(s) = p.kernel.sys_sems.get(h) else {
        return ERROR_INVALID_HANDLE;
    };
    if s.exclusive && s.owner != 0 {
        if s.owner != me {
            return ERROR_EXCL_SEM_ALREADY_OWNED;
        }
        s.requests -= 1;
        if s.requests > 0 {
            return NO_ERROR;
        }
        s.owner = 0;
    }
    s.set = false;
    NO_ERROR
}

/// DosSemWait / DosSemRequest(hsem, timeout) on a system semaphore.
pub(crate) fn wait(p: &mut Process, h: u32, ms: u32, request: bool) -> Result<u32, Stop> {
    let me = p.sem_owner(p.current_tid());
    match try_wait(p, h, me, request) {
        Some(rc) => Ok(rc),
        None if ms == 0 => Ok(ERROR_SEM_TIMEOUT),
        None => {
            // Any negative LONG waits forever.
            let until = if (ms as i32) < 0 {
                None
            } else {
                p.deadline(ms)
            };
            Err(Stop::Block(Wait::Sem16 {
                handle: h,
                until,
                request,
            }))
        }
    }
}

/// A wait or request if it can finish now (for thread `me`, as
/// [`Process::sem_owner`] gives it): its code; `None` while the
/// semaphore is set by someone else.
pub(crate) fn try_wait(p: &mut Process, h: u32, me: u32, request: bool) -> Option<u32> {
    let Some(s) = p.kernel.sys_sems.get(h) else {
        return Some(ERROR_INVALID_HANDLE);
    };
    if request && s.exclusive && s.owner == me && s.set {
        if s.requests >= 0xFFFF {
            return Some(ERROR_TOO_MANY_SEM_REQUESTS);
        }
        s.requests += 1;
        return Some(NO_ERROR);
    }
    if s.set {
        return None;
    }
    if request {
        s.set = true;
        if s.exclusive {
            s.owner = me;
            s.requests = 1;
        }
        if std::mem::take(&mut s.owner_died) {
            return Some(ERROR_SEM_OWNER_DIED);
        }
    }
    Some(NO_ERROR)
}
