//! Shared memory: DosAllocSharedMem, DosGetNamedSharedMem,
//! DosGetSharedMem, DosGiveSharedMem (and DosFreeMem on a shared object),
//! and the 16-bit named shared segments DosAllocShrSeg / DosGetShrSeg
//! (and DosFreeSeg on one).
//!
//! Decisions: a shared object is a run of physical frames that the kernel
//! owns ([`SharedObjects`]) and maps at the same linear address, in the
//! DLL arena of the process that allocates it, into every process that
//! has access; no address space frees them, and they go back to the
//! allocator when the last process with access frees the object. Every
//! page is committed when the object is allocated (PAG_COMMIT or not).
//! A named object's name starts with `\SHAREMEM\` (case does not
//! matter; ERROR_INVALID_NAME otherwise) and may not also be giveable or
//! gettable (ERROR_INVALID_PARAMETER); a second object of the same name
//! is ERROR_ALREADY_EXISTS. Getting an object a process has access to
//! already counts once more (each get needs a DosFreeMem). A process
//! where the object's address is taken by something else gets
//! ERROR_NOT_ENOUGH_MEMORY. The protection flags are checked but not
//! kept (as for DosAllocMem). A process that ends gives up its access
//! ([`SharedObjects::process_ended`]): an object nobody else has access
//! to goes, its frames back to the allocator. A shared
//! segment is such a named object of at most 64 KB, readable, writable
//! and executable; its selector is its tile's, the same in every
//! process.

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::layout::{PAGE, round_up, tile_selector};
use crate::memory::RegionKind;
use crate::process::Process;
use crate::rc::*;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 35 "DosAllocShrSeg" Far16 [W, S, P] alloc_shr_seg),
    api!("DOSCALLS" 36 "DosGetShrSeg" Far16 [S, P] get_shr_seg),
    api!("DOSCALLS" 300 "DosAllocSharedMem" Sys32 [P, S, L, L] alloc),
    api!("DOSCALLS" 301 "DosGetNamedSharedMem" Sys32 [P, S, L] get_named),
    api!("DOSCALLS" 302 "DosGetSharedMem" Sys32 [P, L] get),
    api!("DOSCALLS" 303 "DosGiveSharedMem" Sys32 [P, L, L] give),
];

const PAG_ACCESS: u32 = 0x07;
const PAG_GUARD: u32 = 0x08;
const PAG_COMMIT: u32 = 0x10;
const OBJ_TILE: u32 = 0x40;
const OBJ_GETTABLE: u32 = 0x100;
const OBJ_GIVEABLE: u32 = 0x200;
/// The largest object (512 MB, the shared arena's size in OS/2).
const MAX_SIZE: u32 = 0x2000_0000;

/// One shared memory object.
#[derive(Debug)]
struct Shared {
    base: u32,
    size: u32,
    /// The name, upper case, when named.
    name: Option<Vec<u8>>,
    flags: u32,
    frames: Vec<u32>,
    /// (PID, gets not yet freed) of every process with access.
    users: Vec<(u16, u32)>,
}

/// Every shared memory object of the system (`Kernel::shared_mem`).
#[derive(Debug, Default)]
pub(crate) struct SharedObjects {
    objects: Vec<Shared>,
}

impl SharedObjects {
    /// Process `pid` ended: its access to every object goes; the frames
    /// of the objects nobody has access to now, to free.
    pub(crate) fn process_ended(&mut self, pid: u16) -> Vec<u32> {
        let mut frames = Vec::new();
        for o in &mut self.objects {
            o.users.retain(|u| u.0 != pid);
            if o.users.is_empty() {
                frames.append(&mut o.frames);
            }
        }
        self.objects.retain(|o| !o.users.is_empty());
        frames
    }

    fn at(&mut self, base: u32) -> Option<&mut Shared> {
        self.objects.iter_mut().find(|o| o.base == base)
    }

    /// The base of the object named `name` (upper case).
    fn named(&self, name: &[u8]) -> Option<u32> {
        self.objects
            .iter()
            .find(|o| o.name.as_deref() == Some(name))
            .map(|o| o.base)
    }
}

/// Check PAG_* access flags (with `extra` allowed too): at least one of
/// read, write, execute.
fn check_flags(flags: u32, extra: u32) -> ApiResult<()> {
    if flags & !(PAG_ACCESS | PAG_GUARD | extra) != 0 || flags & PAG_ACCESS == 0 {
        return Err(ERROR_INVALID_PARAMETER);
    }
    Ok(())
}

/// `\SHAREMEM\...`, upper case.
fn check_name(name: &[u8]) -> ApiResult<Vec<u8>> {
    let up = name.to_ascii_uppercase();
    if !up.starts_with(b"\\SHAREMEM\\") || up.len() == 10 || up.len() > 255 {
        return Err(ERROR_INVALID_NAME);
    }
    Ok(up)
}

/// DosAllocSharedMem(&base, name, size, flags).
fn alloc(p: &mut Process, c: &Call) -> ApiResult<()> {
    let (size, flags) = (c.l(2), c.l(3));
    check_flags(flags, PAG_COMMIT | OBJ_TILE | OBJ_GETTABLE | OBJ_GIVEABLE)?;
    if size == 0 {
        return Err(ERROR_INVALID_PARAMETER);
    }
    let name = match c.l(1) {
        0 => None,
        _ => {
            if flags & (OBJ_GETTABLE | OBJ_GIVEABLE) != 0 {
                return Err(ERROR_INVALID_PARAMETER);
            }
            Some(check_name(&p.arg_sz(c, 1)?)?)
        }
    };
    p.arg_bytes(c, 0, 4)?;
    let base = create(p, name, size, flags)?;
    p.put_u32(c, 0, base)
}

/// A new object for the running process; its base.
fn create(p: &mut Process, name: Option<Vec<u8>>, size: u32, flags: u32) -> ApiResult<u32> {
    if let Some(n) = &name
        && p.kernel.shared_mem.named(n).is_some()
    {
        return Err(ERROR_ALREADY_EXISTS);
    }
    if size > MAX_SIZE {
        return Err(ERROR_NOT_ENOUGH_MEMORY);
    }
    let base = p
        .pcb
        .mem
        .reserve(size, true, RegionKind::Mem)
        .map_err(|_| ERROR_NOT_ENOUGH_MEMORY)?;
    let pages = round_up(size, PAGE) / PAGE;
    let frames = match p.pcb.mem.alloc_frames(&mut p.machine, pages) {
        Ok(f) => f,
        Err(_) => {
            p.pcb.mem.regions.remove(&base);
            return Err(ERROR_NOT_ENOUGH_MEMORY);
        }
    };
    if p.pcb.mem.map_frames(&mut p.machine, base, &frames).is_err() {
        p.pcb.mem.release(&mut p.machine, base);
        p.pcb.mem.free_frames(frames);
        return Err(ERROR_NOT_ENOUGH_MEMORY);
    }
    p.kernel
        .desc
        .tile(&mut p.machine, base, size, crate::desc::DATA3);
    let pid = p.pcb.pid;
    p.kernel.shared_mem.objects.push(Shared {
        base,
        size,
        name,
        flags,
        frames,
        users: vec![(pid, 1)],
    });
    Ok(base)
}

/// DosAllocShrSeg(size, name, &sel): a named object of one segment
/// (size 0: 64 KB), addressed by its tile's selector.
fn alloc_shr_seg(p: &mut Process, c: &Call) -> ApiResult<()> {
    let size = match c.w(0) {
        0 => 0x1_0000,
        n => u32::from(n),
    };
    let name = check_name(&p.arg_sz(c, 1)?)?;
    p.arg_bytes(c, 2, 2)?;
    let base = create(p, Some(name), size, PAG_ACCESS | PAG_COMMIT)?;
    let sel = tile_selector(base).ok_or(ERROR_NOT_ENOUGH_MEMORY)?;
    p.put_u16(c, 2, sel)
}

/// DosGetShrSeg(name, &sel).
fn get_shr_seg(p: &mut Process, c: &Call) -> ApiResult<()> {
    let name = check_name(&p.arg_sz(c, 0)?)?;
    p.arg_bytes(c, 1, 2)?;
    let base = p
        .kernel
        .shared_mem
        .named(&name)
        .ok_or(ERROR_FILE_NOT_FOUND)?;
    let sel = tile_selector(base).ok_or(ERROR_NOT_ENOUGH_MEMORY)?;
    attach(p, base)?;
    p.put_u16(c, 1, sel)
}

/// Give the running process (one more) access to the object at `base`.
fn attach(p: &mut Process, base: u32) -> ApiResult<()> {
    let pid = p.pcb.pid;
    let obj = p.kernel.shared_mem.at(base).ok_or(ERROR_INVALID_ADDRESS)?;
    if let Some(u) = obj.users.iter_mut().find(|u| u.0 == pid) {
        u.1 = u.1.saturating_add(1);
        return Ok(());
    }
    let (size, frames) = (obj.size, obj.frames.clone());
    if p.pcb.mem.reserve_at(base, size, RegionKind::Mem).is_none() {
        return Err(ERROR_NOT_ENOUGH_MEMORY);
    }
    if p.pcb.mem.map_frames(&mut p.machine, base, &frames).is_err() {
        p.pcb.mem.release(&mut p.machine, base);
        return Err(ERROR_NOT_ENOUGH_MEMORY);
    }
    p.kernel
        .desc
        .tile(&mut p.machine, base, size, crate::desc::DATA3);
    if let Some(obj) = p.kernel.shared_mem.at(base) {
        obj.users.push((pid, 1));
    }
    Ok(())
}

/// DosGetNamedSharedMem(&base, name, flags).
fn get_named(p: &mut Process, c: &Call) -> ApiResult<()> {
    check_flags(c.l(2), 0)?;
    let name = check_name(&p.arg_sz(c, 1)?)?;
    p.arg_bytes(c, 0, 4)?;
    let base = p
        .kernel
        .shared_mem
        .named(&name)
        .ok_or(ERROR_FILE_NOT_FOUND)?;
    attach(p, base)?;
    p.put_u32(c, 0, base)
}

/// DosGetSharedMem(base, flags): a gettable object.
fn get(p: &mut Process, c: &Call) -> ApiResult<()> {
    check_flags(c.l(1), 0)?;
    let base = c.l(0);
    let obj = p.kernel.shared_mem.at(base).ok_or(ERROR_INVALID_ADDRESS)?;
    if obj.flags & OBJ_GETTABLE == 0 {
        return Err(ERROR_INVALID_ADDRESS);
    }
    attach(p, base)
}

/// DosGiveSharedMem(base, pid, flags): a giveable object the caller has
/// access to, to another process (mapped into its address space now).
fn give(p: &mut Process, c: &Call) -> ApiResult<()> {
    check_flags(c.l(2), 0)?;
    let (base, me) = (c.l(0), p.pcb.pid);
    let to = u16::try_from(c.l(1)).map_err(|_| ERROR_INVALID_PROCID)?;
    let obj = p.kernel.shared_mem.at(base).ok_or(ERROR_INVALID_ADDRESS)?;
    if obj.flags & OBJ_GIVEABLE == 0 || !obj.users.iter().any(|u| u.0 == me) {
        return Err(ERROR_INVALID_ADDRESS);
    }
    if to == me {
        return attach(p, base);
    }
    let (size, frames) = (obj.size, obj.frames.clone());
    let target = p
        .kernel
        .procs
        .iter_mut()
        .find(|q| q.pid == to && !q.dead)
        .ok_or(ERROR_INVALID_PROCID)?;
    if let Some(obj) = p.kernel.shared_mem.at(base)
        && let Some(u) = obj.users.iter_mut().find(|u| u.0 == to)
    {
        u.1 = u.1.saturating_add(1);
        return Ok(());
    }
    if target.mem.reserve_at(base, size, RegionKind::Mem).is_none() {
        return Err(ERROR_NOT_ENOUGH_MEMORY);
    }
    if target
        .mem
        .map_frames(&mut p.machine, base, &frames)
        .is_err()
    {
        target.mem.release(&mut p.machine, base);
        return Err(ERROR_NOT_ENOUGH_MEMORY);
    }
    if let Some(obj) = p.kernel.shared_mem.at(base) {
        obj.users.push((to, 1));
    }
    Ok(())
}

/// DosFreeMem on `base`: `Some` if it is a shared object the running
/// process has access to (the access is dropped; the last one frees it).
pub(crate) fn free(p: &mut Process, base: u32) -> Option<ApiResult<()>> {
    let pid = p.pcb.pid;
    let objs = &mut p.kernel.shared_mem.objects;
    let i = objs.iter().position(|o| o.base == base)?;
    let Some(u) = objs[i].users.iter().position(|u| u.0 == pid) else {
        return Some(Err(ERROR_INVALID_ADDRESS));
    };
    objs[i].users[u].1 -= 1;
    if objs[i].users[u].1 > 0 {
        return Some(Ok(()));
    }
    objs[i].users.remove(u);
    let size = objs[i].size;
    let gone = objs[i].users.is_empty().then(|| objs.remove(i));
    p.kernel.desc.untile(&mut p.machine, base, size);
    p.pcb.mem.release(&mut p.machine, base);
    if let Some(obj) = gone {
        p.pcb.mem.free_frames(obj.frames);
    }
    Some(Ok(()))
}
