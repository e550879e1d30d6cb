//! Process entries of DOSCALLS: DosExecPgm, DosWaitChild (DosCwait),
//! DosKillProcess and DosGetPPID, 16-bit and 32-bit. What they do to the
//! system, and the decisions, are in `children.rs`.
//!
//! Decisions on codes the reference leaves open: a bad pointer (the
//! program name, the argument or environment strings, RESULTCODES, the
//! object buffer when its length is not 0) is ERROR_INVALID_ADDRESS; an
//! execFlag above EXEC_ASYNCRESULTDB is ERROR_INVALID_FUNCTION; an
//! action or wait option DosWaitChild or DosKillProcess does not have is
//! ERROR_INVALID_DATA; DosWaitChild on a PID that is neither alive nor
//! an uncollected child is ERROR_INVALID_PROCID, on a live process that
//! is not the caller's child ERROR_NO_CHILD_PROCESS. A program name is
//! taken as given (no `.EXE` is added, PATH is not searched: the current
//! directory is, as documented).

use crate::api::{ApiDef, Call, Stop};
use crate::children::{EXEC_ASYNCRESULTDB, EXEC_SYNC, ExecError, ExecRequest};
use crate::process::Process;
use crate::rc::*;
use crate::threads::Wait;

const DCWA_PROCESSTREE: u32 = 1;
const DCWW_NOWAIT: u32 = 1;
const DKP_PROCESSTREE: u32 = 0;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 2 "DosCwait" Far16 [W, W, P, P, W] raw wait_child),
    api!("DOSCALLS" 10 "DosKillProcess" Far16 [W, W] |p, c| {
        kill(p, u32::from(c.w(0)), u32::from(c.w(1)))
    }),
    api!("DOSCALLS" 144 "DosExecPgm" Far16 [P, W, W, S, S, P, S] raw exec_pgm),
    api!("DOSCALLS" 156 "DosGetPPID" Far16 [W, P] |p, c| {
        let pid = c.w(0);
        let parent = if p.process_alive(pid) {
            p.processes().find(|q| q.pid == pid).map_or(0, |q| q.parent)
        } else {
            return Err(ERROR_INVALID_PROCID);
        };
        p.put_u16(c, 1, parent)
    }),
    api!("DOSCALLS" 235 "DosKillProcess" Sys32 [L, L] |p, c| kill(p, c.l(0), c.l(1))),
    api!("DOSCALLS" 280 "DosWaitChild" Sys32 [L, L, P, P, L] raw wait_child),
    api!("DOSCALLS" 283 "DosExecPgm" Sys32 [P, L, L, S, S, P, S] raw exec_pgm),
];

/// Linear address of pointer argument `i` whose `len` bytes are all
/// mapped (a 32-bit pointer is checked too, not only for null).
fn out_ptr(p: &mut Process, c: &Call, i: usize, len: u32) -> Result<u32, u32> {
    let lin = p.arg_ptr(c, i, len)?;
    p.read_mem(lin, len).ok_or(ERROR_INVALID_ADDRESS)?;
    Ok(lin)
}

/// Argument `i`: a word in 16-bit calls, a dword in 32-bit ones.
fn num(c: &Call, i: usize) -> u32 {
    if c.far16 { u32::from(c.w(i)) } else { c.l(i) }
}

/// The strings at `raw` up to and with the NUL that ends an empty one
/// (the environment's and the arguments' layout): `None` if they leave
/// their segment or 64 KB.
pub(crate) fn strings_block(p: &mut Process, raw: u32, far16: bool) -> Option<Vec<u8>> {
    let start = p.ptr(raw, far16, 1)?;
    let limit = if far16 {
        let d = p.kernel.desc.get((raw >> 16) as u16)?;
        d.limit()
            .saturating_sub(raw & 0xFFFF)
            .saturating_add(1)
            .min(0x1_0000)
    } else {
        0x1_0000
    };
    let mut out = Vec::new();
    let mut prev_nul = true;
    for i in 0..limit {
        let mut b = [0u8];
        p.machine.read_linear(start.wrapping_add(i), &mut b).ok()?;
        out.push(b[0]);
        if b[0] == 0 && prev_nul {
            return Some(out);
        }
        prev_nul = b[0] == 0;
    }
    None
}

/// The running process's environment strings and their extra NUL.
pub(crate) fn own_environment(p: &mut Process) -> Vec<u8> {
    let base = p.pcb.env_base;
    let mut out = Vec::new();
    let mut prev_nul = true;
    for i in 0..0x1_0000u32 {
        let mut b = [0u8];
        if p.machine.read_linear(base.wrapping_add(i), &mut b).is_err() {
            break;
        }
        out.push(b[0]);
        if b[0] == 0 && prev_nul {
            break;
        }
        prev_nul = b[0] == 0;
    }
    out
}

fn exec_pgm(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    match exec_checked(p, c) {
        Ok(None) => Ok(NO_ERROR),
        Ok(Some(wait)) => Err(Stop::Block(wait)),
        Err(ExecError::Code(rc, object)) => {
            fail_name(p, c, &object);
            Ok(rc)
        }
        Err(ExecError::Run(o)) => Err(Stop::Outcome(o)),
    }
}

/// The object buffer gets the failing object's name, cut to fit with
/// its NUL.
fn fail_name(p: &mut Process, c: &Call, object: &str) {
    let cb = object_len(c);
    if c.l(0) == 0 || cb == 0 {
        return;
    }
    let mut name = crate::process::latin1(object);
    name.truncate(cb as usize - 1);
    name.push(0);
    let _ = p.put_bytes(c, 0, &name);
}

/// The object buffer's length (a negative one is none).
fn object_len(c: &Call) -> u32 {
    if c.far16 {
        (c.w(1) as i16).max(0) as u32
    } else {
        (c.l(1) as i32).max(0) as u32
    }
}

fn exec_checked(p: &mut Process, c: &Call) -> Result<Option<Wait>, ExecError> {
    let code = |rc: u32| ExecError::Code(rc, String::new());
    let flag = num(c, 2);
    let wide = !c.far16;
    if c.l(0) != 0 && object_len(c) > 0 {
        out_ptr(p, c, 0, object_len(c)).map_err(code)?;
    }
    let pres = out_ptr(p, c, 5, if wide { 8 } else { 4 }).map_err(code)?;
    let name = p.arg_sz(c, 6).map_err(code)?;
    let shown: String = name.iter().map(|&b| char::from(b)).collect();
    if flag > EXEC_ASYNCRESULTDB {
        return Err(ExecError::Code(ERROR_INVALID_FUNCTION, String::new()));
    }
    let args = if c.l(3) == 0 {
        vec![0, 0]
    } else {
        strings_block(p, c.l(3), c.far16).ok_or(code(ERROR_INVALID_ADDRESS))?
    };
    let mut env = if c.l(4) == 0 {
        own_environment(p)
    } else {
        strings_block(p, c.l(4), c.far16).ok_or(code(ERROR_INVALID_ADDRESS))?
    };
    if env == [0] {
        env.push(0);
    }
    let r = p
        .files()
        .resolve(&name)
        .map_err(|rc| ExecError::Code(rc, shown.clone()))?;
    match r.exists {
        None => return Err(ExecError::Code(ERROR_FILE_NOT_FOUND, shown)),
        Some(true) => return Err(ExecError::Code(ERROR_ACCESS_DENIED, shown)),
        Some(false) => {}
    }
    if env.len() + r.os2.len() + 1 + args.len() > 0xFFFF {
        return Err(ExecError::Code(ERROR_BAD_ENVIRONMENT, shown));
    }
    let pid = p.exec(ExecRequest {
        host: r.host,
        os2: r.os2,
        env,
        args,
        flag,
    })?;
    if flag == EXEC_SYNC {
        return Ok(Some(Wait::Child {
            pid,
            tree: false,
            pres,
            ppid: 0,
            wide,
        }));
    }
    let id = u32::from(pid).to_le_bytes();
    let _ = p.write_mem(pres, &id[..if wide { 4 } else { 2 }]);
    Ok(None)
}

fn wait_child(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (action, option, pid) = (num(c, 0), num(c, 1), num(c, 4));
    let wide = !c.far16;
    if action > DCWA_PROCESSTREE || option > DCWW_NOWAIT {
        return Ok(ERROR_INVALID_DATA);
    }
    let (pres, ppid) = match (
        out_ptr(p, c, 2, if wide { 8 } else { 4 }),
        out_ptr(p, c, 3, if wide { 4 } else { 2 }),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        _ => return Ok(ERROR_INVALID_ADDRESS),
    };
    let Ok(pid) = u16::try_from(pid) else {
        return Ok(ERROR_INVALID_PROCID);
    };
    let me = p.pcb.pid;
    if pid != 0 {
        let pending = p
            .kernel
            .results
            .iter()
            .any(|r| r.pid == pid && r.parent == me);
        let alive = p.process_alive(pid);
        if !alive && !pending {
            return Ok(ERROR_INVALID_PROCID);
        }
        if alive && p.kernel.lineage.get(&pid) != Some(&me) {
            return Ok(ERROR_NO_CHILD_PROCESS);
        }
    }
    let wait = Wait::Child {
        pid,
        tree: action == DCWA_PROCESSTREE,
        pres,
        ppid,
        wide,
    };
    let tid = p.current_tid();
    if let Some(rc) = p.wait_now(wait, tid) {
        return Ok(rc);
    }
    if option == DCWW_NOWAIT {
        return Ok(ERROR_CHILD_NOT_COMPLETE);
    }
    Err(Stop::Block(wait))
}

fn kill(p: &mut Process, action: u32, pid: u32) -> Result<(), u32> {
    if action > 1 {
        return Err(ERROR_INVALID_DATA);
    }
    let pid = u16::try_from(pid).map_err(|_| ERROR_INVALID_PROCID)?;
    p.kill_process(pid, action == DKP_PROCESSTREE)
}
