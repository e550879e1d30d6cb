//! DosQueryMem: the attributes of a run of pages.
//!
//! Decisions: the pages of a reserved range (an allocation, a module's
//! object, a segment, the system's data) are committed when present and
//! only reserved when not (DosAllocMem without PAG_COMMIT, DosSetMem's
//! PAG_DECOMMIT). This machine maps every page readable, writable and
//! executable (the protection DosAllocMem was given is not kept), so
//! that is what a page reports: PAG_READ | PAG_WRITE | PAG_EXECUTE, with
//! PAG_COMMIT when committed and PAG_BASE on the first page of a range.
//! An address in no range, or in the unused pages at the end of a
//! range's 64 KB, is PAG_FREE, for the free run up to the next range or
//! page in use. The size returned is the run, from the page of the address,
//! of pages with the same attributes, at most the size asked
//! (rounded up to pages).

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::layout::PAGE;
use crate::process::Process;
use crate::rc::*;

const PAG_READ: u32 = 0x0001;
const PAG_WRITE: u32 = 0x0002;
const PAG_EXECUTE: u32 = 0x0004;
const PAG_COMMIT: u32 = 0x0010;
const PAG_FREE: u32 = 0x4000;
const PAG_BASE: u32 = 0x0001_0000;

/// The entry.
pub static DEFS: &[ApiDef] = &[api!("DOSCALLS" 306 "DosQueryMem" Sys32 [P, P, P] query)];

fn query(p: &mut Process, c: &Call) -> ApiResult<()> {
    let cb = p.arg_bytes(c, 1, 4)?;
    let asked = u32::from_le_bytes([cb[0], cb[1], cb[2], cb[3]]);
    // Both outputs must be writable before anything is worked out.
    p.arg_bytes(c, 2, 4)?;
    if asked == 0 {
        return Err(ERROR_INVALID_PARAMETER);
    }
    let first = c.l(0) & !(PAGE - 1);
    let limit = u64::from(first) + u64::from(asked.div_ceil(PAGE)) * u64::from(PAGE);
    let limit = limit.min(1 << 32);
    let region = p
        .pcb
        .mem
        .regions
        .range(..=first)
        .next_back()
        .map(|(&b, r)| (b, r.size))
        .filter(|&(b, size)| u64::from(first) < u64::from(b) + u64::from(size));
    let (flags, end) = match region {
        None => {
            let next = p
                .pcb
                .mem
                .regions
                .range(first..)
                .next()
                .map_or(1 << 32, |(&b, _)| u64::from(b));
            (PAG_FREE, next.min(limit))
        }
        Some((base, size)) => {
            let end = (u64::from(base) + u64::from(size)).min(limit);
            // Pages of the range's last 64 KB past what was asked for
            // are not mapped: free.
            let attrs = |p: &Process, at: u32| -> u32 {
                match p.pcb.mem.is_present(&p.machine, at) {
                    None => PAG_FREE,
                    Some(true) => PAG_READ | PAG_WRITE | PAG_EXECUTE | PAG_COMMIT,
                    Some(false) => PAG_READ | PAG_WRITE | PAG_EXECUTE,
                }
            };
            let want = attrs(p, first);
            let mut at = u64::from(first) + u64::from(PAGE);
            while at < end && attrs(p, at as u32) == want {
                at += u64::from(PAGE);
            }
            let base_flag = if first == base && want != PAG_FREE {
                PAG_BASE
            } else {
                0
            };
            (want | base_flag, at)
        }
    };
    let run = (end - u64::from(first)).min(u64::from(u32::MAX)) as u32;
    p.put_u32(c, 1, run)?;
    p.put_u32(c, 2, flags)
}
