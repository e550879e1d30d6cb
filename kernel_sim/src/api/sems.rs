//! Semaphores and exit lists for a single-threaded process.
//!
//! Decisions: with one thread nothing else can post or release, so a wait
//! that would block returns ERROR_TIMEOUT at once (for any timeout,
//! including indefinite) instead of hanging the emulator; event and mutex
//! semaphores are handles to small records; 16-bit RAM semaphores are the
//! dword at the pointer (nonzero = set/owned). DosExitList records the
//! routines but they are not run at exit.

use crate::api::errors::*;
use crate::api::util::ApiResult;
use crate::api::{ApiDef, Arg, Call, Conv, Func};
use crate::process::Process;

/// Wait timed out.
const ERROR_TIMEOUT: u32 = 640;
/// Semaphore timed out (16-bit).
const ERROR_SEM_TIMEOUT: u32 = 121;
/// Not owner.
const ERROR_NOT_OWNER: u32 = 288;
/// Already posted.
const ERROR_ALREADY_POSTED: u32 = 299;
/// Already reset.
const ERROR_ALREADY_RESET: u32 = 300;

/// One semaphore: an event (post count) or a mutex (request count).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Sem {
    mutex: bool,
    count: u32,
}

macro_rules! api {
    ($o:literal $n:literal $conv:ident [$($a:ident),*] $f:expr) => {
        ApiDef { module: "DOSCALLS", ordinal: $o, name: $n, conv: Conv::$conv, args: &[$(Arg::$a),*], func: Some(Func::Code($f)) }
    };
}

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!(140 "DosSemRequest" Far16 [P, L] |p, c| ram_sem(p, c, true)),
    api!(141 "DosSemClear" Far16 [P] |p, c| p.put_u32(c, 0, 0)),
    api!(142 "DosSemWait" Far16 [P, L] |p, c| ram_sem(p, c, false)),
    api!(143 "DosSemSet" Far16 [P] |p, c| p.put_u32(c, 0, 1)),
    api!(296 "DosExitList" Sys32 [L, P] |p, c| {
        match c.l(0) & 0xFF {
            1 => p.exit_list.push(c.l(1)),
            2 => p.exit_list.retain(|&f| f != c.l(1)),
            3 => {}
            _ => return Err(ERROR_INVALID_FUNCTION),
        }
        Ok(())
    }),
    api!(324 "DosCreateEventSem" Sys32 [S, P, L, L] |p, c| create(p, c, false)),
    api!(326 "DosCloseEventSem" Sys32 [L] |p, c| close(p, c.l(0))),
    api!(327 "DosResetEventSem" Sys32 [L, P] |p, c| {
        let s = p.sem(c.l(0), false)?;
        let n = std::mem::take(&mut s.count);
        p.put_u32_opt(c, 1, n)?;
        if n == 0 { Err(ERROR_ALREADY_RESET) } else { Ok(()) }
    }),
    api!(328 "DosPostEventSem" Sys32 [L] |p, c| {
        let s = p.sem(c.l(0), false)?;
        s.count += 1;
        if s.count > 1 { Err(ERROR_ALREADY_POSTED) } else { Ok(()) }
    }),
    api!(329 "DosWaitEventSem" Sys32 [L, L] |p, c| {
        let s = p.sem(c.l(0), false)?;
        if s.count > 0 { Ok(()) } else { Err(ERROR_TIMEOUT) }
    }),
    api!(330 "DosQueryEventSem" Sys32 [L, P] |p, c| {
        let n = p.sem(c.l(0), false)?.count;
        p.put_u32(c, 1, n)
    }),
    api!(331 "DosCreateMutexSem" Sys32 [S, P, L, L] |p, c| create(p, c, true)),
    api!(333 "DosCloseMutexSem" Sys32 [L] |p, c| close(p, c.l(0))),
    api!(334 "DosRequestMutexSem" Sys32 [L, L] |p, c| {
        p.sem(c.l(0), true)?.count += 1;
        Ok(())
    }),
    api!(335 "DosReleaseMutexSem" Sys32 [L] |p, c| {
        let s = p.sem(c.l(0), true)?;
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

fn create(p: &mut Process, c: &Call, mutex: bool) -> ApiResult<()> {
    let initial = u32::from(c.l(3) != 0);
    p.sems.push(Some(Sem {
        mutex,
        count: initial,
    }));
    let h = 0x1000 + p.sems.len() as u32 - 1;
    p.put_u32(c, 1, h)
}

fn close(p: &mut Process, h: u32) -> ApiResult<()> {
    let slot = h
        .checked_sub(0x1000)
        .and_then(|i| p.sems.get_mut(i as usize))
        .ok_or(ERROR_INVALID_HANDLE)?;
    slot.take().map(|_| ()).ok_or(ERROR_INVALID_HANDLE)
}

impl Process {
    fn sem(&mut self, h: u32, mutex: bool) -> ApiResult<&mut Sem> {
        h.checked_sub(0x1000)
            .and_then(|i| self.sems.get_mut(i as usize))
            .and_then(Option::as_mut)
            .filter(|s| s.mutex == mutex)
            .ok_or(ERROR_INVALID_HANDLE)
    }
}
