//! Memory suballocation: DosSubSetMem, DosSubAllocMem, DosSubFreeMem and
//! DosSubUnsetMem (32-bit).
//!
//! Decisions, where the Control Program reference leaves room:
//! - A pool's bookkeeping (its size and free list) is kept by the kernel,
//!   per process, keyed by the pool's address; nothing of it is in guest
//!   memory, so a program that scribbles over its pool cannot corrupt
//!   it. As in OS/2, the first [`HEADER`] bytes of a pool are the pool's
//!   own and never handed out, so a pool of `size` bytes serves at most
//!   `size - HEADER`.
//! - Sizes are rounded up to multiples of 8, and blocks are 8-byte
//!   aligned. Allocation is first fit from the lowest address; freeing
//!   merges with neighbouring free space.
//! - DOSSUB_SPARSE_OBJ: the pool may be uncommitted; each allocation
//!   commits the pages its block covers. Without it the pages are the
//!   program's to commit (an access to an uncommitted page faults).
//! - Without DOSSUB_INIT a call attaches to (or, with DOSSUB_GROW, grows)
//!   a pool set up before; there is one process, so attaching to a pool
//!   that was never set up is ERROR_INVALID_PARAMETER.
//! - DOSSUB_SERIALIZE is accepted and recorded: every kernel call is
//!   already atomic with respect to the process's threads.

use std::collections::BTreeMap;

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::layout::PAGE;
use crate::memory::RegionKind;
use crate::process::Process;
use crate::rc::*;

const DOSSUB_INIT: u32 = 0x01;
const DOSSUB_GROW: u32 = 0x02;
const DOSSUB_SPARSE_OBJ: u32 = 0x04;
const DOSSUB_SERIALIZE: u32 = 0x08;

/// Bytes at the start of a pool that are the pool's own.
pub const HEADER: u32 = 64;

/// One suballocation pool.
#[derive(Clone, Debug, Default)]
struct Pool {
    /// Bytes in the pool, header included.
    size: u32,
    /// Free ranges: offset in the pool to length.
    free: BTreeMap<u32, u32>,
    /// Commit pages as blocks are allocated.
    sparse: bool,
}

/// The suballocation pools of one process, by pool address.
#[derive(Clone, Debug, Default)]
pub(crate) struct Pools {
    pools: BTreeMap<u32, Pool>,
}

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 344 "DosSubSetMem" Sys32 [P, L, L] set_mem),
    api!("DOSCALLS" 345 "DosSubAllocMem" Sys32 [P, P, L] alloc_mem),
    api!("DOSCALLS" 346 "DosSubFreeMem" Sys32 [P, P, L] free_mem),
    api!("DOSCALLS" 347 "DosSubUnsetMem" Sys32 [P] |p, c| {
        p.pcb.sub.pools.remove(&c.l(0)).map(|_| ()).ok_or(ERROR_INVALID_PARAMETER)
    }),
];

fn round8(n: u32) -> Option<u32> {
    n.checked_add(7).map(|v| v & !7)
}

/// Is `[base, base+size)` inside one memory object of the process?
fn inside_object(p: &Process, base: u32, size: u32) -> bool {
    p.pcb
        .mem
        .regions
        .range(..=base)
        .next_back()
        .is_some_and(|(&b, r)| {
            matches!(
                r.kind,
                RegionKind::Mem | RegionKind::Module | RegionKind::Segment
            ) && u64::from(base) + u64::from(size) <= u64::from(b) + u64::from(r.size)
        })
}

fn set_mem(p: &mut Process, c: &Call) -> ApiResult<()> {
    let (base, flags, size) = (c.l(0), c.l(1), c.l(2));
    if flags & !(DOSSUB_INIT | DOSSUB_GROW | DOSSUB_SPARSE_OBJ | DOSSUB_SERIALIZE) != 0 {
        return Err(ERROR_DOSSUB_BADFLAG);
    }
    if base == 0 || base & 7 != 0 {
        return Err(ERROR_INVALID_ADDRESS);
    }
    let size = size & !7;
    if flags & DOSSUB_INIT != 0 || flags & DOSSUB_GROW != 0 {
        if size <= HEADER {
            return Err(ERROR_DOSSUB_BADSIZE);
        }
        if !inside_object(p, base, size) {
            return Err(ERROR_INVALID_ADDRESS);
        }
    }
    let sparse = flags & DOSSUB_SPARSE_OBJ != 0;
    if flags & DOSSUB_INIT != 0 {
        if flags & DOSSUB_GROW != 0 {
            return Err(ERROR_DOSSUB_BADFLAG);
        }
        let overlaps = p.pcb.sub.pools.iter().any(|(&b, q)| {
            u64::from(b) < u64::from(base) + u64::from(size)
                && u64::from(base) < u64::from(b) + u64::from(q.size)
        });
        if overlaps {
            return Err(ERROR_DOSSUB_OVERLAP);
        }
        let mut free = BTreeMap::new();
        free.insert(HEADER, size - HEADER);
        if sparse {
            commit(p, base, HEADER)?;
        }
        p.pcb.sub.pools.insert(base, Pool { size, free, sparse });
        return Ok(());
    }
    let pool = p
        .pcb
        .sub
        .pools
        .get_mut(&base)
        .ok_or(ERROR_INVALID_PARAMETER)?;
    if flags & DOSSUB_GROW == 0 {
        // Attach: the pool is already there.
        return Ok(());
    }
    if size < pool.size {
        return Err(ERROR_DOSSUB_SHRINK);
    }
    let (old, grow) = (pool.size, size - pool.size);
    pool.size = size;
    if grow > 0 {
        add_free(pool, old, grow);
    }
    Ok(())
}

/// Put `[off, off+len)` back on the free list, merged with its neighbours.
fn add_free(pool: &mut Pool, mut off: u32, mut len: u32) {
    if let Some((&o, &l)) = pool.free.range(..off).next_back()
        && o + l == off
    {
        pool.free.remove(&o);
        off = o;
        len += l;
    }
    if let Some(l) = pool.free.remove(&(off + len)) {
        len += l;
    }
    pool.free.insert(off, len);
}

/// Commit the pages of `[lin, lin+len)`.
fn commit(p: &mut Process, lin: u32, len: u32) -> ApiResult<()> {
    let first = lin & !(PAGE - 1);
    let end = u64::from(lin) + u64::from(len);
    let mut pg = u64::from(first);
    while pg < end {
        if !p.pcb.mem.set_present(&mut p.machine, pg as u32, true) {
            return Err(ERROR_INVALID_ADDRESS);
        }
        pg += u64::from(PAGE);
    }
    Ok(())
}

fn alloc_mem(p: &mut Process, c: &Call) -> ApiResult<()> {
    let base = c.l(0);
    let pool = p.pcb.sub.pools.get(&base).ok_or(ERROR_INVALID_PARAMETER)?;
    let want = round8(c.l(2)).ok_or(ERROR_DOSSUB_BADSIZE)?;
    if want == 0 || want > pool.size - HEADER {
        return Err(ERROR_DOSSUB_BADSIZE);
    }
    let (off, len) = pool
        .free
        .iter()
        .find(|&(_, &l)| l >= want)
        .map(|(&o, &l)| (o, l))
        .ok_or(ERROR_DOSSUB_NOMEM)?;
    let sparse = pool.sparse;
    let block = base + off;
    p.arg_ptr(c, 1, 4)?;
    if sparse {
        commit(p, block, want)?;
    }
    p.put_u32(c, 1, block)?;
    let pool = p
        .pcb
        .sub
        .pools
        .get_mut(&base)
        .ok_or(ERROR_INVALID_PARAMETER)?;
    pool.free.remove(&off);
    if len > want {
        pool.free.insert(off + want, len - want);
    }
    Ok(())
}

fn free_mem(p: &mut Process, c: &Call) -> ApiResult<()> {
    let (base, block) = (c.l(0), c.l(1));
    let pool = p
        .pcb
        .sub
        .pools
        .get_mut(&base)
        .ok_or(ERROR_INVALID_PARAMETER)?;
    let len = round8(c.l(2)).ok_or(ERROR_DOSSUB_BADSIZE)?;
    if len == 0 {
        return Err(ERROR_DOSSUB_BADSIZE);
    }
    let off = block.wrapping_sub(base);
    if block < base || off < HEADER || off & 7 != 0 {
        return Err(ERROR_INVALID_ADDRESS);
    }
    if u64::from(off) + u64::from(len) > u64::from(pool.size) {
        return Err(ERROR_DOSSUB_BADSIZE);
    }
    // The range must not overlap free space: freeing twice is an error.
    let end = off + len;
    let before = pool.free.range(..end).next_back();
    if before.is_some_and(|(&o, &l)| o + l > off) {
        return Err(ERROR_DOSSUB_OVERLAP);
    }
    add_free(pool, off, len);
    Ok(())
}
