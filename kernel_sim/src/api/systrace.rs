//! DosSysTrace (DOSCALLS.90): a program logs its own record, a static
//! tracepoint, into the system trace buffer (see [`crate::trace::statics`]).
//!
//! `APIRET16 Dos16SysTrace(USHORT major, USHORT cBuffer, USHORT minor,
//! PCHAR pBuffer)`, far pascal. It is a 16-bit entry: 32-bit programs call
//! it through a 16-bit thunk, as IBM's compilers generate for
//! `Dos16SysTrace`. The record has the major and minor codes, the PID and
//! the caller's data; its flags are API and PROTECT (a record the program
//! made, in protected mode), not DYNAMIC.
//!
//! Results: NO_ERROR; ERROR_SYSTEM_TRACE (150) when no trace buffer is
//! configured or TRACE ON did not select the major (and minor);
//! ERROR_INVALID_PARAMETER for a major over 255 or a buffer over 4099
//! bytes (the limit since Warp 4 FP 10); ERROR_INVALID_ADDRESS when the
//! buffer cannot be read. A record longer than the buffer can hold is not
//! logged (ERROR_SYSTEM_TRACE).

use super::{ApiDef, Call};
use crate::process::Process;
use crate::rc::{ERROR_INVALID_ADDRESS, ERROR_INVALID_PARAMETER, ERROR_SYSTEM_TRACE};

/// The largest buffer DosSysTrace takes.
pub const MAX_BUFFER: u16 = 4099;

/// DosSysTrace's entry.
pub static DEFS: &[ApiDef] = &[api!("DOSCALLS" 90 "DosSysTrace" Far16 [W, W, W, P] sys_trace)];

fn sys_trace(p: &mut Process, c: &Call) -> Result<(), u32> {
    let (major, len, minor, buffer) = (c.w(0), c.w(1), c.w(2), c.l(3));
    if major > 255 || len > MAX_BUFFER {
        return Err(ERROR_INVALID_PARAMETER);
    }
    let selected = p
        .kernel
        .trace
        .as_ref()
        .is_some_and(|t| t.static_selected(major, minor));
    if !selected {
        return Err(ERROR_SYSTEM_TRACE);
    }
    let data = if len == 0 {
        Vec::new()
    } else {
        let lin = p
            .ptr(buffer, true, u32::from(len))
            .ok_or(ERROR_INVALID_ADDRESS)?;
        p.read_mem(lin, u32::from(len))
            .ok_or(ERROR_INVALID_ADDRESS)?
    };
    let now = p.now().into();
    let at = crate::trace::fine::HitClock {
        cycle: p.kernel.clock.cycles(p.machine.cycles()),
        hz: p.kernel.clock.hz,
        tid: 1,
    };
    let cpu = p.machine.cpu();
    let address = cpu.sreg(emu::SegReg::Cs).base.wrapping_add(cpu.eip);
    let (pid, ms, when) = (p.pcb.pid, p.now_millis(), p.now());
    let Some(trace) = p.kernel.trace.as_mut() else {
        return Err(ERROR_SYSTEM_TRACE);
    };
    trace
        .log_static(major, minor, pid, &data, now, Some((at, address)))
        .map_err(|_| ERROR_SYSTEM_TRACE)?;
    trace.after_hit(ms, when);
    Ok(())
}
