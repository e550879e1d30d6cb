//! Sessions (SESMGR): DosStartSession, DosStopSession, DosSelectSession
//! and DosSetSession, 16-bit and 32-bit.
//!
//! A session here is a process started in the one machine, as
//! DosExecPgm's asynchronous form starts one (`children.rs`), with the
//! same console: there is one screen and one keyboard, so foreground and
//! background differ in nothing but what DosSelectSession records.
//!
//! DosStartSession reads the STARTDATA (Length 24, 30, 32, 50 or 60,
//! else ERROR_SMG_INVALID_DATA_LENGTH; a 16-bit caller's pointers are
//! 16:16) and honours:
//! - **Related**: SSF_RELATED_CHILD (1) makes a child session the caller
//!   may stop, select and bind, and returns its session ID and PID;
//!   SSF_RELATED_INDEPENDENT (0) returns neither. Either way the process
//!   is nobody's child process (DosWaitChild does not see it), as
//!   documented. Other values: ERROR_SMG_INVALID_RELATED_OPT.
//! - **FgBg** (0 foreground, 1 background; else
//!   ERROR_SMG_INVALID_START_MODE), **TraceOpt** (0..2, else
//!   ERROR_SMG_INVALID_TRACE_OPTION; no debugger is modelled, so a traced
//!   session runs as any other), **InheritOpt** (0 the shell's, 1 the
//!   caller's: both are the caller's environment and current directory
//!   here; else ERROR_SMG_INVALID_INHERIT_OPT).
//! - **PgmName**: the program, found as DosExecPgm finds it, or with
//!   NULL the command processor (`C:\OS2\CMD.EXE`); **PgmInputs** its
//!   argument string (NULL: none), passed as OS/2 passes arguments (the
//!   program name, NUL, the inputs, NUL, NUL); **Environment** its
//!   environment strings (NULL: the caller's).
//! - **SessionType**: 0 (default), 1 (full screen), 2 (windowed) and 3
//!   (PM) run the program; the DOS types (4, 7) and unknown ones are
//!   ERROR_SMG_INVALID_PROGRAM_TYPE. **PgmControl** takes the documented
//!   bits only (else ERROR_SMG_INVALID_PGM_CONTROL); window positions,
//!   sizes, the title and the icon do not matter here.
//! - **TermQ**: checked as a string; no termination element is written
//!   to it (the queues of `queues.rs` do not receive session ends yet).
//! - **ObjectBuffer** (Length 60) receives the failing module's name
//!   when the program cannot be loaded.
//!
//! Session IDs count up from 1 and are never reused in a run. A session
//! whose process has ended is gone (ERROR_SMG_INVALID_SESSION_ID).
//! DosStopSession ends a child session's process and its descendants
//! (STOP_SESSION_ALL: every child session the caller started);
//! DosSelectSession of 0 or a child session is NO_ERROR; DosSetSession
//! records the selectable and bond indicators.

use crate::api::exec::{own_environment, strings_block};
use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::children::{EXEC_BACKGROUND, ExecError, ExecRequest};
use crate::process::Process;
use crate::rc::*;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("SESMGR" 8 "DosStopSession" Far16 [W, W, L] |p, c| {
        if c.l(2) != 0 {
            return Err(ERROR_SMG_BAD_RESERVE);
        }
        stop(p, u32::from(c.w(0)), u32::from(c.w(1)), ERROR_SMG_SESSION_NOT_PARENT)
    }),
    api!("SESMGR" 9 "DosSelectSession" Far16 [W, L] |p, c| {
        if c.l(1) != 0 {
            return Err(ERROR_SMG_BAD_RESERVE);
        }
        select(p, u32::from(c.w(0)), ERROR_SMG_SESSION_NOT_PARENT)
    }),
    api!("SESMGR" 14 "DosSetSession" Far16 [W, P] |p, c| {
        set(p, c, u32::from(c.w(0)), ERROR_SMG_SESSION_NOT_PARENT)
    }),
    api!("SESMGR" 17 "DosStartSession" Far16 [P, P, P] start),
    api!("SESMGR" 37 "DosStartSession" Sys32 [P, P, P] start),
    api!("SESMGR" 38 "DosSelectSession" Sys32 [L] |p, c| {
        select(p, c.l(0), ERROR_SMG_PROCESS_NOT_PARENT)
    }),
    api!("SESMGR" 39 "DosSetSession" Sys32 [L, P] |p, c| {
        set(p, c, c.l(0), ERROR_SMG_PROCESS_NOT_PARENT)
    }),
    api!("SESMGR" 40 "DosStopSession" Sys32 [L, L] |p, c| {
        stop(p, c.l(0), c.l(1), ERROR_SMG_PROCESS_NOT_PARENT)
    }),
];

const ERROR_SMG_INVALID_SESSION_ID: u32 = 369;
const ERROR_SMG_SESSION_NOT_PARENT: u32 = 452;
const ERROR_SMG_INVALID_START_MODE: u32 = 453;
const ERROR_SMG_INVALID_RELATED_OPT: u32 = 454;
const ERROR_SMG_INVALID_BOND_OPTION: u32 = 455;
const ERROR_SMG_INVALID_SELECT_OPT: u32 = 456;
const ERROR_SMG_INVALID_STOP_OPTION: u32 = 458;
const ERROR_SMG_BAD_RESERVE: u32 = 459;
const ERROR_SMG_PROCESS_NOT_PARENT: u32 = 460;
const ERROR_SMG_INVALID_DATA_LENGTH: u32 = 461;
const ERROR_SMG_INVALID_TRACE_OPTION: u32 = 478;
const ERROR_SMG_INVALID_PROGRAM_TYPE: u32 = 491;
const ERROR_SMG_INVALID_PGM_CONTROL: u32 = 492;
const ERROR_SMG_INVALID_INHERIT_OPT: u32 = 493;

/// The PgmControl bits: SSF_CONTROL_INVISIBLE, _MAXIMIZE, _MINIMIZE,
/// _NOAUTOCLOSE, _SETPOS.
const PGM_CONTROL_BITS: u16 = 0x0001 | 0x0002 | 0x0004 | 0x0008 | 0x8000;

/// The command processor a session without PgmName runs.
const SHELL: &str = "C:\\OS2\\CMD.EXE";

/// One started session.
#[derive(Clone, Debug)]
struct Session {
    id: u32,
    /// Its process.
    pid: u16,
    /// The process that started it.
    starter: u16,
    /// SSF_RELATED_CHILD.
    child: bool,
    /// DosSetSession's indicators.
    selectable: bool,
    bound: bool,
}

/// Every session started in the run (`Kernel::sessions`).
#[derive(Debug, Default)]
pub(crate) struct Sessions {
    list: Vec<Session>,
    next: u32,
}

/// The child session `id` of the running process, if its process lives:
/// ERROR_SMG_INVALID_SESSION_ID, or `not_parent` for a session another
/// process started or an independent one.
fn child_session(p: &Process, id: u32, not_parent: u32) -> ApiResult<usize> {
    let i = p
        .kernel
        .sessions
        .list
        .iter()
        .position(|s| s.id == id && p.process_alive(s.pid))
        .ok_or(ERROR_SMG_INVALID_SESSION_ID)?;
    let s = &p.kernel.sessions.list[i];
    if !s.child || s.starter != p.pcb.pid {
        return Err(not_parent);
    }
    Ok(i)
}

/// A STARTDATA field: a word at `off` (0 past `len`).
fn word(sd: &[u8], off: usize) -> u16 {
    sd.get(off..off + 2)
        .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]))
}

/// A STARTDATA pointer at `off` (0 past `len`).
fn dword(sd: &[u8], off: usize) -> u32 {
    sd.get(off..off + 4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// DosStartSession(&startdata, &idSession, &pid).
fn start(p: &mut Process, c: &Call) -> ApiResult<()> {
    let len = u32::from(u16::from_le_bytes(
        p.arg_bytes(c, 0, 2)?.try_into().unwrap_or([0; 2]),
    ));
    if ![24, 30, 32, 50, 60].contains(&len) {
        return Err(ERROR_SMG_INVALID_DATA_LENGTH);
    }
    let sd = p.arg_bytes(c, 0, len)?;
    let related = word(&sd, 2);
    if related > 1 {
        return Err(ERROR_SMG_INVALID_RELATED_OPT);
    }
    if word(&sd, 4) > 1 {
        return Err(ERROR_SMG_INVALID_START_MODE);
    }
    if word(&sd, 6) > 2 {
        return Err(ERROR_SMG_INVALID_TRACE_OPTION);
    }
    if word(&sd, 28) > 1 {
        return Err(ERROR_SMG_INVALID_INHERIT_OPT);
    }
    if word(&sd, 30) > 3 {
        return Err(ERROR_SMG_INVALID_PROGRAM_TYPE);
    }
    if word(&sd, 40) & !PGM_CONTROL_BITS != 0 {
        return Err(ERROR_SMG_INVALID_PGM_CONTROL);
    }
    let far16 = c.far16;
    let string = |p: &mut Process, raw: u32| -> ApiResult<Option<Vec<u8>>> {
        if raw == 0 {
            return Ok(None);
        }
        p.read_sz(raw, far16, 0x1_0000)
            .map(Some)
            .ok_or(ERROR_INVALID_ADDRESS)
    };
    let name = string(p, dword(&sd, 12))?.unwrap_or_else(|| SHELL.as_bytes().to_vec());
    let inputs = string(p, dword(&sd, 16))?.unwrap_or_default();
    string(p, dword(&sd, 20))?;
    string(p, dword(&sd, 8))?;
    let env = match dword(&sd, 24) {
        0 => own_environment(p),
        raw => strings_block(p, raw, far16).ok_or(ERROR_INVALID_ADDRESS)?,
    };
    let word_out = if far16 { 2 } else { 4 };
    if related == 1 {
        p.arg_ptr(c, 1, word_out)?;
        p.arg_ptr(c, 2, word_out)?;
    }
    let shown: String = name.iter().map(|&b| char::from(b)).collect();
    let r = p.files().resolve(&name)?;
    match r.exists {
        None => return Err(ERROR_FILE_NOT_FOUND),
        Some(true) => return Err(ERROR_ACCESS_DENIED),
        Some(false) => {}
    }
    let base = shown.rsplit(['\\', '/', ':']).next().unwrap_or(&shown);
    let mut args = base.as_bytes().to_vec();
    args.push(0);
    args.extend(inputs);
    args.extend([0, 0]);
    if env.len() + r.os2.len() + 1 + args.len() > 0xFFFF {
        return Err(ERROR_BAD_ENVIRONMENT);
    }
    let pid = match p.exec(ExecRequest {
        host: r.host,
        os2: r.os2,
        env,
        args,
        flag: EXEC_BACKGROUND,
    }) {
        Ok(pid) => pid,
        Err(ExecError::Code(rc, object)) => {
            // Length 60: the object buffer gets the failing module's name.
            let (buf, cap) = (dword(&sd, 52), dword(&sd, 56));
            if cap > 0
                && let Some(lin) = p.ptr(buf, far16, cap)
            {
                let mut n = crate::process::latin1(&object);
                n.truncate(cap as usize - 1);
                n.push(0);
                p.write_mem(lin, &n);
            }
            return Err(rc);
        }
        Err(ExecError::Run(_)) => return Err(ERROR_NOT_ENOUGH_MEMORY),
    };
    let sessions = &mut p.kernel.sessions;
    sessions.next += 1;
    let id = sessions.next;
    sessions.list.push(Session {
        id,
        pid,
        starter: p.pcb.pid,
        child: related == 1,
        selectable: true,
        bound: false,
    });
    if related == 1 {
        p.put_word(c, 1, id)?;
        p.put_word(c, 2, u32::from(pid))?;
    }
    Ok(())
}

/// DosStopSession(scope, idSession): STOP_SESSION_SPECIFIED (0) or
/// STOP_SESSION_ALL (1).
fn stop(p: &mut Process, scope: u32, id: u32, not_parent: u32) -> ApiResult<()> {
    let targets: Vec<u16> = match scope {
        0 => {
            let i = child_session(p, id, not_parent)?;
            vec![p.kernel.sessions.list[i].pid]
        }
        1 => p
            .kernel
            .sessions
            .list
            .iter()
            .filter(|s| s.child && s.starter == p.pcb.pid && p.process_alive(s.pid))
            .map(|s| s.pid)
            .collect(),
        _ => return Err(ERROR_SMG_INVALID_STOP_OPTION),
    };
    for pid in targets {
        p.end_processes(pid, true);
    }
    Ok(())
}

/// DosSelectSession(idSession): 0 is the caller's own.
fn select(p: &mut Process, id: u32, not_parent: u32) -> ApiResult<()> {
    if id == 0 {
        return Ok(());
    }
    let i = child_session(p, id, not_parent)?;
    if !p.kernel.sessions.list[i].selectable {
        return Err(ERROR_SMG_INVALID_SELECT_OPT);
    }
    Ok(())
}

/// DosSetSession(idSession, &statusdata): STATUSDATA is Length (6),
/// SelectInd and BondInd (0 no change, 1 set, 2 clear).
fn set(p: &mut Process, c: &Call, id: u32, not_parent: u32) -> ApiResult<()> {
    let st = p.arg_bytes(c, 1, 2)?;
    if u16::from_le_bytes([st[0], st[1]]) != 6 {
        return Err(ERROR_SMG_INVALID_DATA_LENGTH);
    }
    let st = p.arg_bytes(c, 1, 6)?;
    let (select, bond) = (word(&st, 2), word(&st, 4));
    if select > 2 {
        return Err(ERROR_SMG_INVALID_SELECT_OPT);
    }
    if bond > 2 {
        return Err(ERROR_SMG_INVALID_BOND_OPTION);
    }
    let i = child_session(p, id, not_parent)?;
    let s = &mut p.kernel.sessions.list[i];
    match select {
        1 => s.selectable = true,
        2 => s.selectable = false,
        _ => {}
    }
    match bond {
        1 => s.bound = true,
        2 => s.bound = false,
        _ => {}
    }
    Ok(())
}
