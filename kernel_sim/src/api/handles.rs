//! DosDupHandle (16- and 32-bit), DosSelectDisk / DosSetDefaultDisk and
//! DosEnumAttribute.
//!
//! Decisions: a duplicate shares the file and its position with the
//! original and has its state (DosQueryFHState); the new handle is the
//! lowest free one when the caller asks for a new one (0xFFFF, or
//! 0xFFFFFFFF in the 32-bit form), else the one it names, closed first
//! if open. The system has one drive, C: (3): selecting another, or a
//! number outside 1..=26, is ERROR_INVALID_DRIVE. The sandbox keeps no
//! extended attributes, so DosEnumAttribute finds none (count 0) on any
//! existing file or directory and open handle.

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::process::Process;
use crate::rc::*;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 61 "DosDupHandle" Far16 [W, P] dup),
    api!("DOSCALLS" 81 "DosSelectDisk" Far16 [W] |_, c| select_disk(u32::from(c.w(0)))),
    api!("DOSCALLS" 220 "DosSetDefaultDisk" Sys32 [L] |_, c| select_disk(c.l(0))),
    api!("DOSCALLS" 260 "DosDupHandle" Sys32 [L, P] dup),
    api!("DOSCALLS" 372 "DosEnumAttribute" Sys32 [L, P, L, P, L, P, L] enum_attribute),
];

fn select_disk(drive: u32) -> ApiResult<()> {
    if drive == 3 {
        Ok(())
    } else {
        Err(ERROR_INVALID_DRIVE)
    }
}

fn dup(p: &mut Process, c: &Call) -> ApiResult<()> {
    let size = if c.far16 { 2 } else { 4 };
    let raw = p.arg_bytes(c, 1, size)?;
    let want = raw.iter().rev().fold(0u32, |v, &b| (v << 8) | u32::from(b));
    let target = match want {
        0xFFFF if c.far16 => None,
        0xFFFF_FFFF => None,
        t => Some(u16::try_from(t).map_err(|_| ERROR_INVALID_TARGET_HANDLE)?),
    };
    let h = u16::try_from(c.l(0)).map_err(|_| ERROR_INVALID_HANDLE)?;
    let new = p.pcb.files.dup(h, target)?;
    if c.far16 {
        p.put_u16(c, 1, new)
    } else {
        p.put_u32(c, 1, u32::from(new))
    }
}

/// ENUMEA_REFTYPE_FHANDLE / ENUMEA_REFTYPE_PATH, ENUMEA_LEVEL_NO_VALUE.
const REF_HANDLE: u32 = 0;
const REF_PATH: u32 = 1;
const LEVEL_NO_VALUE: u32 = 1;

/// DosEnumAttribute(refType, pvFile, ulEntry, pvBuf, cbBuf, pulCount,
/// level): no extended attributes anywhere.
fn enum_attribute(p: &mut Process, c: &Call) -> ApiResult<()> {
    if c.l(6) != LEVEL_NO_VALUE {
        return Err(ERROR_INVALID_LEVEL);
    }
    if c.l(2) == 0 {
        return Err(ERROR_INVALID_PARAMETER);
    }
    match c.l(0) {
        REF_HANDLE => {
            let b = p.arg_bytes(c, 1, 4)?;
            let h = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            let h = u16::try_from(h).map_err(|_| ERROR_INVALID_HANDLE)?;
            p.pcb.files.get(h).ok_or(ERROR_INVALID_HANDLE)?;
        }
        REF_PATH => {
            let path = p.arg_sz(c, 1)?;
            p.files().file_mode(&path)?;
        }
        _ => return Err(ERROR_INVALID_PARAMETER),
    }
    p.arg_bytes(c, 5, 4)?;
    p.put_u32(c, 5, 0)
}
