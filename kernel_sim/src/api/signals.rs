//! Signal focus and must-complete sections (DOSCALLS 378, 380, 381), and
//! DosForceDelete (110).
//!
//! Decisions: both counters are per process (the Control Program Guide
//! keeps the focus counter "in the per-task data area of the process";
//! one thread runs here, so must-complete nesting is the process's too).
//! A count past 65535 is ERROR_NESTING_TOO_DEEP, a decrement at 0 is
//! ERROR_ALREADY_RESET; neither changes the counter. The output pointer
//! is checked before the counter moves, so a bad pointer
//! (ERROR_INVALID_ADDRESS) changes nothing; a null one is allowed and
//! receives nothing. No signal is ever delivered in this kernel, so the
//! counters only have to be kept and reported.

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call, shared};
use crate::process::Process;
use crate::rc::*;

/// The largest count either counter reaches.
const MAX_NESTING: u32 = 65535;

/// SIG_UNSETFOCUS / SIG_SETFOCUS.
const SIG_UNSETFOCUS: u32 = 0;
const SIG_SETFOCUS: u32 = 1;

/// ERROR_INVALID_SIGNAL_NUMBER.
const ERROR_INVALID_SIGNAL_NUMBER: u32 = 209;

/// The process's signal focus and must-complete counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SignalState {
    /// DosSetSignalExceptionFocus(SIG_SETFOCUS) calls not yet undone.
    pub focus: u32,
    /// DosEnterMustComplete calls not yet undone.
    pub must_complete: u32,
}

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 110 "DosForceDelete" Sys32 [S] shared::delete),
    // XCPT_SIGNAL_INTR, XCPT_SIGNAL_KILLPROC, XCPT_SIGNAL_BREAK: with no
    // signal ever delivered there is nothing pending to acknowledge.
    api!("DOSCALLS" 418 "DosAcknowledgeSignalException" Sys32 [L] |_, c| {
        match c.l(0) {
            1 | 3 | 4 => Ok(()),
            _ => Err(ERROR_INVALID_SIGNAL_NUMBER),
        }
    }),
    api!("DOSCALLS" 378 "DosSetSignalExceptionFocus" Sys32 [L, P] |p, c| {
        let up = match c.l(0) {
            SIG_SETFOCUS => true,
            SIG_UNSETFOCUS => false,
            _ => return Err(ERROR_INVALID_PARAMETER),
        };
        let n = step(p.pcb.signals.focus, up)?;
        report(p, c, 1, n)?;
        p.pcb.signals.focus = n;
        Ok(())
    }),
    api!("DOSCALLS" 380 "DosEnterMustComplete" Sys32 [P] |p, c| {
        let n = step(p.pcb.signals.must_complete, true)?;
        report(p, c, 0, n)?;
        p.pcb.signals.must_complete = n;
        Ok(())
    }),
    api!("DOSCALLS" 381 "DosExitMustComplete" Sys32 [P] |p, c| {
        let n = step(p.pcb.signals.must_complete, false)?;
        report(p, c, 0, n)?;
        p.pcb.signals.must_complete = n;
        Ok(())
    }),
];

/// The counter after one increment (`up`) or decrement.
fn step(n: u32, up: bool) -> ApiResult<u32> {
    if up {
        if n >= MAX_NESTING {
            return Err(ERROR_NESTING_TOO_DEEP);
        }
        Ok(n + 1)
    } else {
        n.checked_sub(1).ok_or(ERROR_ALREADY_RESET)
    }
}

/// Store the new count at pointer argument `i` unless it is null.
fn report(p: &mut Process, c: &Call, i: usize, n: u32) -> ApiResult<()> {
    p.put_u32_opt(c, i, n)
}
