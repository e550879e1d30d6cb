//! PMWIN, the part a command-line tool uses without windows: the anchor
//! block (WinInitialize, WinTerminate) and string resources
//! (WinLoadString). IPFC calls these. Windows, message queues and the
//! rest of Presentation Manager are not here.
//!
//! Decisions: a thread's anchor block handle is `0x0001_0000 | TID`
//! (OS/2 gives each thread one; a second WinInitialize on a thread fails
//! with NULLHANDLE, as PMERR_ALREADY_INITIALIZED). WinLoadString reads
//! the module's RT_STRING bundles in memory: bundle `id / 16 + 1` holds
//! strings `id & !15` onward, after the code page word, each as a length
//! byte (with the NUL), the characters and a NUL.

use crate::api::{ApiDef, Call, Stop};
use crate::process::Process;

/// The resource type of string bundles.
const RT_STRING: u16 = 5;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("PMWIN" 763 "WinInitialize" Sys32 [L] raw |p, _| {
        let tid = p.current_tid();
        if p.pcb.anchor_blocks.contains(&tid) {
            return Ok(0);
        }
        p.pcb.anchor_blocks.push(tid);
        Ok(hab(tid))
    }),
    api!("PMWIN" 781 "WinLoadString" Sys32 [L, L, L, L, P] raw load_string),
    api!("PMWIN" 888 "WinTerminate" Sys32 [L] raw |p, c| {
        let before = p.pcb.anchor_blocks.len();
        p.pcb.anchor_blocks.retain(|&t| hab(t) != c.l(0));
        Ok(u32::from(p.pcb.anchor_blocks.len() != before))
    }),
];

fn hab(tid: u32) -> u32 {
    0x0001_0000 | tid
}

/// WinLoadString(hab, hmod, id, cchMax, buffer): the string's length
/// (without the NUL) as copied, cut to `cchMax - 1`; 0 when there is no
/// such string or no room.
fn load_string(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (hmod, id, max, buf) = (c.l(1), c.l(2), c.l(3) as i32, c.l(4));
    if max <= 0 || buf == 0 {
        return Ok(0);
    }
    let Some(text) = string_resource(p, hmod, id) else {
        return Ok(0);
    };
    let n = text.len().min(max as usize - 1);
    let mut out = text[..n].to_vec();
    out.push(0);
    if !p.write_mem(buf, &out) {
        return Ok(0);
    }
    Ok(n as u32)
}

/// String `id` of module `hmod` (0: the program).
fn string_resource(p: &mut Process, hmod: u32, id: u32) -> Option<Vec<u8>> {
    let m = if hmod == 0 {
        p.pcb.modules.get(p.pcb.exe)?
    } else {
        p.pcb.modules.iter().find(|m| u32::from(m.handle) == hmod)?
    };
    let bundle = u16::try_from(id / 16 + 1).ok()?;
    let r = m
        .module
        .resources
        .iter()
        .find(|r| r.type_id == RT_STRING && r.name_id == bundle)?;
    let base = m.object(r.object)?.base.checked_add(r.offset)?;
    let size = r.size.min(0x1_0000);
    let data = p.read_mem(base, size)?;
    let mut at = 2;
    for i in 0..16 {
        let len = usize::from(*data.get(at)?);
        let s = data.get(at + 1..at + 1 + len)?;
        if i == id % 16 {
            let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
            return Some(s[..end].to_vec());
        }
        at += 1 + len;
    }
    None
}
