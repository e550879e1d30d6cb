//! The runtime's start-up and its own messages: `_CRT_init` (the data
//! block and `_environ`), `_PrintErrMsg`, and LIBCM's per-thread
//! `__cppstore` block.

use super::{D_ENVIRON, cstr_max, data, malloc, rt, zero};
use crate::api::uconv::{wr32, write};
use crate::api::{Call, Stop};
use crate::process::Process;

/// _CRT_init: the data block, `_environ` from the environment segment.
pub(super) fn crt_init(p: &mut Process, _c: &Call) -> Result<u32, Stop> {
    let Ok(d) = data(p) else {
        return Ok(u32::MAX);
    };
    let env = p.pcb.env_base;
    let mut ptrs = Vec::new();
    let mut at = env;
    if env != 0 {
        loop {
            let s = cstr_max(p, at, 0x1_0000)?;
            if s.is_empty() {
                break;
            }
            ptrs.push(at);
            at += s.len() as u32 + 1;
        }
    }
    let arr = malloc(p, 4 * (ptrs.len() as u32 + 1))?;
    if arr == 0 {
        return Ok(u32::MAX);
    }
    ptrs.push(0);
    let bytes: Vec<u8> = ptrs.iter().flat_map(|v| v.to_le_bytes()).collect();
    write(p, arr, &bytes)?;
    wr32(p, d + D_ENVIRON, arr)?;
    Ok(0)
}

/// _PrintErrMsg(number, ...): the runtime's own error message on
/// stderr (DDE4.MSG's text is IBM's; this names the message).
pub(super) fn print_err_msg(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let text = format!(
        "DDE4{:04}: C runtime error {}.\r\n",
        c.l(0) & 0xFF,
        c.l(0) & 0xFF
    );
    let _ = p.write_handle(2, text.as_bytes());
    Ok(0)
}

/// __cppstore: the calling thread's C++ runtime block (256 zeroed bytes,
/// made on first use).
pub(super) fn cppstore(p: &mut Process, _c: &Call) -> Result<u32, Stop> {
    let tid = p.current_tid();
    if let Some(&a) = rt(p).cppstore.get(&tid) {
        return Ok(a);
    }
    let a = malloc(p, 256)?;
    if a != 0 {
        zero(p, a, 256)?;
        rt(p).cppstore.insert(tid, a);
    }
    Ok(a)
}
