//! Resources bound into a module by RC: DosGetResource,
//! DosQueryResourceSize and DosFreeResource (32-bit).
//!
//! Decisions: the module is the process's EXE for handle 0, else the
//! loaded module of that handle (ERROR_INVALID_HANDLE for none); type and
//! name IDs are 16-bit (ERROR_INVALID_PARAMETER above 0xFFFF), and a
//! resource the module does not have is ERROR_INVALID_PARAMETER too (the
//! only other code OS/2 documents). The resource is where the loader put
//! its object: DosGetResource returns that flat address and nothing is
//! copied, so DosFreeResource only checks that the address is one it
//! returned for a loaded module (ERROR_INVALID_ADDRESS otherwise).

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::process::Process;
use crate::rc::*;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 352 "DosGetResource" Sys32 [L, L, L, P] |p, c| {
        let (at, _) = find(p, c)?;
        p.put_u32(c, 3, at)
    }),
    api!("DOSCALLS" 353 "DosFreeResource" Sys32 [P] |p, c| {
        let at = c.l(0);
        let known = p.pcb.modules.iter().any(|m| {
            m.module
                .resources
                .iter()
                .any(|r| m.flat(r.object, r.offset) == Some(at))
        });
        if known { Ok(()) } else { Err(ERROR_INVALID_ADDRESS) }
    }),
    api!("DOSCALLS" 572 "DosQueryResourceSize" Sys32 [L, L, L, P] |p, c| {
        let (_, size) = find(p, c)?;
        p.put_u32(c, 3, size)
    }),
];

/// (flat address, size) of resource (type, name) = arguments 1 and 2 of
/// module argument 0.
fn find(p: &mut Process, c: &Call) -> ApiResult<(u32, u32)> {
    let m = match c.l(0) {
        0 => p.pcb.modules.get(p.pcb.exe),
        h => u16::try_from(h)
            .ok()
            .and_then(|h| p.pcb.modules.iter().find(|m| m.handle == h)),
    }
    .ok_or(ERROR_INVALID_HANDLE)?;
    let (ty, name) = (c.l(1), c.l(2));
    if ty > 0xFFFF || name > 0xFFFF {
        return Err(ERROR_INVALID_PARAMETER);
    }
    let r = m
        .module
        .resources
        .iter()
        .find(|r| u32::from(r.type_id) == ty && u32::from(r.name_id) == name)
        .ok_or(ERROR_INVALID_PARAMETER)?;
    let at = m.flat(r.object, r.offset).ok_or(ERROR_INVALID_PARAMETER)?;
    Ok((at, r.size))
}
