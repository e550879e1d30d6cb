//! A file handle's state: DosQueryFHState / DosSetFHState and their
//! 16-bit forms DosQFHandState / DosSetFHandState.
//!
//! The state is the open mode word: access (bits 0-2) and sharing (4-6)
//! as DosOpen was given them, OPEN_FLAGS_NOINHERIT (0x80), the locality
//! bits (0x700), OPEN_FLAGS_NO_CACHE, OPEN_FLAGS_FAIL_ON_ERROR,
//! OPEN_FLAGS_WRITE_THROUGH and OPEN_FLAGS_DASD. The standard handles
//! and devices are read-write and deny-none (0x0042). Only the flags
//! in [`crate::fs::SETTABLE_STATE`] can be set; a state with any other
//! bit is ERROR_INVALID_PARAMETER (callers mask what DosQueryFHState
//! returned). OPEN_FLAGS_NOINHERIT keeps a handle from a child process
//! (`children.rs`); the other flags are recorded and reported, and
//! change nothing in the sandbox's host files.

use crate::api::ApiDef;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 73 "DosQFHandState" Far16 [W, P] |p, c| {
        let s = p.pcb.files.state(c.w(0))?;
        p.put_u16(c, 1, s)
    }),
    api!("DOSCALLS" 82 "DosSetFHandState" Far16 [W, W] |p, c| {
        p.pcb.files.set_state(c.w(0), c.w(1))
    }),
    api!("DOSCALLS" 221 "DosSetFHState" Sys32 [L, L] |p, c| {
        let flags = u16::try_from(c.l(1)).map_err(|_| crate::rc::ERROR_INVALID_PARAMETER)?;
        let h = u16::try_from(c.l(0)).map_err(|_| crate::rc::ERROR_INVALID_HANDLE)?;
        p.pcb.files.set_state(h, flags)
    }),
    api!("DOSCALLS" 276 "DosQueryFHState" Sys32 [L, P] |p, c| {
        let h = u16::try_from(c.l(0)).map_err(|_| crate::rc::ERROR_INVALID_HANDLE)?;
        let s = p.pcb.files.state(h)?;
        p.put_u32(c, 1, u32::from(s))
    }),
];
