//! What the native code calls back into Rust for: machine access (memory
//! reads, object lookups, CRMA), memory and string logs. Each callback is the interpreter's own helper,
//! applied to the frame, so the two tiers cannot drift apart.
//!
//! This module is safe code; `native.rs` turns the raw frame pointer the
//! native code passes into the references [`dispatch`] takes.

use super::frame::*;
use crate::interp::{ItemAt, LogBuffer, read_flat, read_segmented};
use crate::machine::{MemFault, TracedMachine};

/// Runs callback `op` (a `CB_*` number) with arguments `a`, `b`, `c`;
/// `log` is the interpreter's log buffer, of which `slow` says how much is
/// used, `logmax` the log limit. Updates the log length and cycles in
/// `slow`.
pub(crate) fn dispatch<M: TracedMachine + ?Sized>(
    slow: &mut Slow,
    logmax: u64,
    machine: &mut M,
    log: &mut [u8],
    op: u32,
    [a, b, c]: [u64; 3],
) -> u64 {
    let mut log = LogBuffer {
        bytes: log,
        len: slow.log_len as usize,
    };
    let logmax = logmax as usize;
    let mut cycles = slow.cycles;
    let fault = |log: &mut LogBuffer<&mut [u8]>, fault: MemFault| {
        log.log_fault(fault, logmax);
        FAIL
    };
    let result = match op {
        CB_OBJECT_SELECTOR => u64::from(machine.object_selector(a as u32)),
        CB_OBJECT_FLAT_BASE => u64::from(machine.object_flat_base(a as u32)),
        CB_READ_SEGMENTED_WORD => match read_segmented::<M, 2>(machine, a as u16, b as u32) {
            Ok(word) => u64::from(u16::from_le_bytes(word)),
            Err(f) => fault(&mut log, f),
        },
        CB_READ_SEGMENTED_DWORD => match read_segmented::<M, 4>(machine, a as u16, b as u32) {
            Ok(dword) => u64::from(u32::from_le_bytes(dword)),
            Err(f) => fault(&mut log, f),
        },
        CB_READ_FLAT_DWORD => match read_flat::<M, 4>(machine, a as u32) {
            Ok(dword) => u64::from(u32::from_le_bytes(dword)),
            Err(f) => fault(&mut log, f),
        },
        CB_FLAT_TO_SEGMENTED => match machine.flat_to_segmented(a as u32) {
            Some((selector, offset)) => (u64::from(selector) << 16) | u64::from(offset),
            None => FAIL,
        },
        CB_SEGMENTED_TO_FLAT => match machine.segmented_to_flat(a as u16, b as u16) {
            Some(address) => u64::from(address),
            None => FAIL,
        },
        CB_LOG_MRS | CB_LOG_ARS | CB_LOG_MRF | CB_LOG_ARF => {
            let at = match op {
                CB_LOG_MRS | CB_LOG_ARS => ItemAt::Segmented {
                    selector: b as u16,
                    offset: a as u32,
                },
                _ => ItemAt::Flat(a as u32),
            };
            let string = matches!(op, CB_LOG_ARS | CB_LOG_ARF);
            let logged = log.log_item(machine, at, c as u32, string, logmax, &mut cycles);
            if logged.is_ok() { 0 } else { FAIL }
        }
        _ => FAIL,
    };
    slow.log_len = log.len as u64;
    slow.cycles = cycles;
    result
}
