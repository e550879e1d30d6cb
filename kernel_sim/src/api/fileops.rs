//! DosMove (16/32), DosBufReset / DosResetBuffer and the 32-bit
//! DosError.
//!
//! Decisions: DosMove renames within the one drive (see
//! [`crate::fs::Files::rename`]); the sandbox does not track which paths
//! are open, so moving an open file succeeds (OS/2 would refuse it with
//! ERROR_SHARING_VIOLATION). Host files are written straight through, so
//! DosResetBuffer has nothing to flush: it checks the handle (0xFFFF, or
//! 0xFFFFFFFF in the 32-bit form, means all). DosError(FERR_*): there are
//! no hard-error or exception pop-ups here (the error goes back to the
//! caller either way), so only the flags are checked.

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::process::Process;
use crate::rc::*;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 56 "DosBufReset" Far16 [W] |p, c| reset_buffer(p, c.l(0) & 0xFFFF, 0xFFFF)),
    api!("DOSCALLS" 67 "DosMove" Far16 [S, S, L] rename),
    // FERR_ENABLEHARDERR (1) and FERR_DISABLEEXCEPTION (2) in any
    // combination.
    api!("DOSCALLS" 212 "DosError" Sys32 [L] |_, c| {
        if c.l(0) & !3 == 0 { Ok(()) } else { Err(ERROR_INVALID_PARAMETER) }
    }),
    api!("DOSCALLS" 254 "DosResetBuffer" Sys32 [L] |p, c| reset_buffer(p, c.l(0), u32::MAX)),
    api!("DOSCALLS" 271 "DosMove" Sys32 [S, S] rename),
];

fn rename(p: &mut Process, c: &Call) -> ApiResult<()> {
    let from = p.arg_sz(c, 0)?;
    let to = p.arg_sz(c, 1)?;
    p.files().rename(&from, &to)
}

fn reset_buffer(p: &mut Process, h: u32, all: u32) -> ApiResult<()> {
    if h == all {
        return Ok(());
    }
    let h = u16::try_from(h).map_err(|_| ERROR_INVALID_HANDLE)?;
    p.pcb.files.get(h).map(|_| ()).ok_or(ERROR_INVALID_HANDLE)
}
