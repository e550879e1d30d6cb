//! malloc, calloc, realloc and free on guest memory: the heap's
//! bookkeeping is [`super::heap`]'s; its arenas are private regions
//! mapped as the heap grows.

use super::{EINVAL, ENOMEM, map_region, rt, set_errno, zero};
use crate::api::uconv::{read, write};
use crate::api::{Call, Stop};
use crate::process::Process;

/// malloc: a guest block of `size` bytes, or 0 (errno ENOMEM).
pub(crate) fn malloc(p: &mut Process, size: u32) -> Result<u32, Stop> {
    if let Some(a) = rt(p).heap.alloc(size) {
        return Ok(a);
    }
    let Some(grow) = rt(p).heap.growth_for(size) else {
        set_errno(p, ENOMEM)?;
        return Ok(0);
    };
    let Some(base) = map_region(p, grow) else {
        set_errno(p, ENOMEM)?;
        return Ok(0);
    };
    let r = rt(p);
    r.heap.add_arena(base, grow);
    Ok(r.heap.alloc(size).unwrap_or(0))
}

/// free.
pub(crate) fn free(p: &mut Process, addr: u32) {
    if addr != 0 {
        rt(p).heap.free(addr);
    }
}

pub(super) fn calloc(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let Some(n) = c.l(0).checked_mul(c.l(1)) else {
        set_errno(p, ENOMEM)?;
        return Ok(0);
    };
    let a = malloc(p, n)?;
    if a != 0 {
        zero(p, a, n)?;
    }
    Ok(a)
}

pub(super) fn realloc(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (old, size) = (c.l(0), c.l(1));
    if old == 0 {
        return malloc(p, size);
    }
    if size == 0 {
        free(p, old);
        return Ok(0);
    }
    let Some(had) = rt(p).heap.size_of(old) else {
        // Not a block: as the real runtime's result is undefined, this
        // one fails without touching it.
        set_errno(p, EINVAL)?;
        return Ok(0);
    };
    if rt(p).heap.resize_in_place(old, size) {
        return Ok(old);
    }
    let new = malloc(p, size)?;
    if new != 0 {
        let bytes = read(p, old, had.min(size))?;
        write(p, new, &bytes)?;
        free(p, old);
    }
    Ok(new)
}
