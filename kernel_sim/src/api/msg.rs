//! MSG: DosInsMessage (16-bit, MSG.3) and DosInsertMessage (32-bit,
//! MSG.4): variable text insertion into a message.
//!
//! Decisions: `%1`..`%9` take the NUL-terminated strings of the table in
//! order; more than 9 strings is ERROR_MR_INV_IVCOUNT. A `%` followed by
//! anything else (`%0`, a digit past the table's count, another
//! character) is copied as it is. The result is not NUL-terminated; its
//! length goes to the last argument. When it would not fit the buffer,
//! nothing is written and the call fails with ERROR_MR_MSG_TOO_LONG.
//! Each insertion string is read up to 64 KB, and the result is bounded
//! by the buffer the guest gave, so a guest cannot make the host build
//! more than that.

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::process::Process;
use crate::rc::*;

/// ERROR_MR_MSG_TOO_LONG.
const ERROR_MR_MSG_TOO_LONG: u32 = 316;
/// ERROR_MR_INV_IVCOUNT.
const ERROR_MR_INV_IVCOUNT: u32 = 320;
/// The most insertion strings a message takes.
const MAX_INSERTS: u32 = 9;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("MSG" 3 "DosInsMessage" Far16 [P, W, P, W, P, W, P] insert),
    api!("MSG" 4 "DosInsertMessage" Sys32 [P, L, P, L, P, L, P] insert),
];

/// (table, count, message, message length, buffer, buffer size, &length).
fn insert(p: &mut Process, c: &Call) -> ApiResult<()> {
    let count = if c.far16 { u32::from(c.w(1)) } else { c.l(1) };
    let msg_len = if c.far16 { u32::from(c.w(3)) } else { c.l(3) };
    let cap = if c.far16 { u32::from(c.w(5)) } else { c.l(5) };
    if count > MAX_INSERTS {
        return Err(ERROR_MR_INV_IVCOUNT);
    }
    let table = p.arg_bytes(c, 0, 4 * count)?;
    let mut inserts = Vec::with_capacity(count as usize);
    for e in table.chunks_exact(4) {
        let raw = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
        let s = p
            .read_sz(raw, c.far16, 0x1_0000)
            .ok_or(ERROR_INVALID_ADDRESS)?;
        inserts.push(s);
    }
    let msg = p.arg_bytes(c, 2, msg_len)?;
    let out = expand(&msg, &inserts, cap as usize).ok_or(ERROR_MR_MSG_TOO_LONG)?;
    // The length first: a bad length pointer leaves the buffer as it was.
    if c.far16 {
        p.put_u16(c, 6, out.len() as u16)?;
    } else {
        p.put_u32(c, 6, out.len() as u32)?;
    }
    if out.is_empty() {
        return Ok(());
    }
    p.put_bytes(c, 4, &out)
}

/// The message with `%1`..`%9` replaced, or `None` past `cap` bytes.
pub(crate) fn expand(msg: &[u8], inserts: &[Vec<u8>], cap: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < msg.len() {
        let b = msg[i];
        let n = msg.get(i + 1).and_then(|d| match d {
            b'1'..=b'9' => Some(usize::from(d - b'1')),
            _ => None,
        });
        match n.and_then(|n| inserts.get(n)) {
            Some(s) if b == b'%' => {
                out.extend_from_slice(s);
                i += 2;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
        if out.len() > cap {
            return None;
        }
    }
    Some(out)
}
