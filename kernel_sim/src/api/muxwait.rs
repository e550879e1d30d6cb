//! Muxwait semaphores: a list of event semaphores or of mutex semaphores
//! waited on together (DosCreate/Open/Close/Add/Delete/Wait/
//! QueryMuxWaitSem). The list lives in the kernel's semaphore table
//! (`semaphores.rs`, which says what a list may hold); a wait that cannot
//! be satisfied blocks the thread (`threads.rs`, [`Wait::Mux`]).
//!
//! Decisions, where OS/2's documents leave room:
//! - **DCMW_WAIT_ANY** is satisfied by the first record, in list order,
//!   whose event is posted or whose mutex is free or already the
//!   caller's; **DCMW_WAIT_ALL** when every record is, all at once. The
//!   mutexes a satisfied wait names are then the caller's (one more
//!   request for one it owned). Events are not reset.
//! - The user value returned is that of the satisfying record; for
//!   DCMW_WAIT_ALL, of the last record.
//! - A mutex whose owner died is taken and the wait returns
//!   ERROR_SEM_OWNER_DIED (with the user value), as DosRequestMutexSem.

use crate::api::sems::{DC_SEM_SHARED, close, open, sem_name};
use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call, Stop};
use crate::process::Process;
use crate::rc::*;
use crate::semaphores::{MAX_MUX_RECORDS, MuxList, SemKind};
use crate::threads::Wait;

/// DCMW_WAIT_ANY.
const DCMW_WAIT_ANY: u32 = 2;
/// DCMW_WAIT_ALL.
const DCMW_WAIT_ALL: u32 = 4;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 337 "DosCreateMuxWaitSem" Sys32 [S, P, L, P, L] create),
    api!("DOSCALLS" 338 "DosOpenMuxWaitSem" Sys32 [S, P] |p, c| open(p, c, SemKind::Mux)),
    api!("DOSCALLS" 339 "DosCloseMuxWaitSem" Sys32 [L] |p, c| close(p, c.l(0), SemKind::Mux)),
    api!("DOSCALLS" 340 "DosWaitMuxWaitSem" Sys32 [L, L, P] raw wait),
    api!("DOSCALLS" 341 "DosAddMuxWaitSem" Sys32 [L, P] add),
    api!("DOSCALLS" 342 "DosDeleteMuxWaitSem" Sys32 [L, L] |p, c| {
        let s = p.kernel.sems.get_mut(c.l(0), SemKind::Mux)?;
        let i = s
            .mux
            .records
            .iter()
            .position(|r| r.0 == c.l(1))
            .ok_or(ERROR_INVALID_HANDLE)?;
        s.mux.records.remove(i);
        Ok(())
    }),
    api!("DOSCALLS" 343 "DosQueryMuxWaitSem" Sys32 [L, P, P, P] query),
];

/// `n` SEMRECORDs (HSEM, ULONG user) at pointer argument `i`.
fn records(p: &mut Process, c: &Call, i: usize, n: u32) -> ApiResult<Vec<(u32, u32)>> {
    let b = p.arg_bytes(c, i, n * 8)?;
    Ok(b.chunks_exact(8)
        .map(|r| {
            let d = |o: usize| u32::from_le_bytes([r[o], r[o + 1], r[o + 2], r[o + 3]]);
            (d(0), d(4))
        })
        .collect())
}

/// DosCreateMuxWaitSem(name, &hmux, cSemRec, pSemRec, flAttr).
fn create(p: &mut Process, c: &Call) -> ApiResult<()> {
    p.arg_ptr(c, 1, 4)?;
    let (n, attr) = (c.l(2), c.l(4));
    let wait = attr & (DCMW_WAIT_ANY | DCMW_WAIT_ALL);
    if attr & !(DC_SEM_SHARED | DCMW_WAIT_ANY | DCMW_WAIT_ALL) != 0
        || (wait != DCMW_WAIT_ANY && wait != DCMW_WAIT_ALL)
    {
        return Err(ERROR_INVALID_PARAMETER);
    }
    if n as usize > MAX_MUX_RECORDS {
        return Err(ERROR_TOO_MANY_SEMAPHORES);
    }
    let name = sem_name(p, c, 0)?;
    let shared = attr & DC_SEM_SHARED != 0 || name.is_some();
    let recs = if n == 0 {
        Vec::new()
    } else {
        records(p, c, 3, n)?
    };
    p.kernel.sems.check_records(&[], &recs, shared)?;
    let h = p
        .kernel
        .sems
        .create(p.pcb.pid, SemKind::Mux, 0, 0, name, shared)?;
    p.kernel.sems.get_mut(h, SemKind::Mux)?.mux = MuxList {
        records: recs,
        all: wait == DCMW_WAIT_ALL,
    };
    p.put_u32(c, 1, h)
}

/// DosAddMuxWaitSem(hmux, pSemRec).
fn add(p: &mut Process, c: &Call) -> ApiResult<()> {
    let h = c.l(0);
    let s = p.kernel.sems.get_mut(h, SemKind::Mux)?;
    let (list, shared) = (s.mux.records.clone(), s.shared);
    let rec = records(p, c, 1, 1)?;
    p.kernel.sems.check_records(&list, &rec, shared)?;
    p.kernel
        .sems
        .get_mut(h, SemKind::Mux)?
        .mux
        .records
        .extend(rec);
    Ok(())
}

/// DosWaitMuxWaitSem(hmux, ulTimeout, pulUser).
fn wait(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (handle, ms) = (c.l(0), c.l(1));
    if let Err(e) = p.kernel.sems.get_mut(handle, SemKind::Mux) {
        return Ok(e);
    }
    let out = match p.arg_ptr(c, 2, 4) {
        Ok(a) if p.read_mem(a, 4).is_some() => a,
        _ => return Ok(ERROR_INVALID_ADDRESS),
    };
    let tid = p.current_tid();
    let wait = Wait::Mux {
        handle,
        until: p.deadline(ms),
        out,
    };
    match p.wait_now(wait, tid) {
        Some(rc) => Ok(rc),
        None => Err(Stop::Block(wait)),
    }
}

/// DosQueryMuxWaitSem(hmux, &cSemRec, pSemRec, &flAttr).
fn query(p: &mut Process, c: &Call) -> ApiResult<()> {
    let s = p.kernel.sems.get_mut(c.l(0), SemKind::Mux)?;
    let (list, shared) = (s.mux.clone(), s.shared);
    let room = u32::from_le_bytes(p.arg_bytes(c, 1, 4)?.try_into().unwrap_or([0; 4]));
    let n = list.records.len() as u32;
    if room < n {
        p.put_u32(c, 1, n)?;
        return Err(ERROR_PARAM_TOO_SMALL);
    }
    let bytes: Vec<u8> = list
        .records
        .iter()
        .flat_map(|&(h, u)| h.to_le_bytes().into_iter().chain(u.to_le_bytes()))
        .collect();
    if !bytes.is_empty() {
        p.put_bytes(c, 2, &bytes)?;
    }
    let attr = if list.all {
        DCMW_WAIT_ALL
    } else {
        DCMW_WAIT_ANY
    } | u32::from(shared);
    p.put_u32(c, 3, attr)?;
    p.put_u32(c, 1, n)
}
