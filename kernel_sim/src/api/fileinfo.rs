//! File and path information, 16- and 32-bit: DosQFileInfo/
//! DosQueryFileInfo, DosQPathInfo/DosQueryPathInfo, DosSetFileInfo and
//! DosSetPathInfo (levels 1, 2, 3 and, for paths, 5).
//!
//! Decisions: the sandbox keeps no extended attributes, so a file's EA
//! list is empty: level 2 reports an EA size of 4 (an empty FEA2LIST), a
//! level 3 query returns an empty list, and setting EAs (level 2) is
//! ERROR_EAS_NOT_SUPPORTED. Level 1 sets the three stamps (a zero date
//! and time keep one) and, for the 32-bit calls, the read-only attribute
//! (hidden, system and archive have no host form and are dropped). The
//! 16-bit DosSetFileInfo sets stamps only, as OS/2 1.x does.

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::fs::{NewStamps, Stamps};
use crate::process::Process;
use crate::rc::*;

const FIL_STANDARD: u32 = 1;
const FIL_QUERYEASIZE: u32 = 2;
const FIL_QUERYEASFROMLIST: u32 = 3;
const FIL_QUERYFULLNAME: u32 = 5;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 74 "DosQFileInfo" Far16 [W, W, P, W] |p, c| {
        let info = p.files().file_info(c.w(0))?;
        query(p, c, u32::from(c.w(1)), info)
    }),
    api!("DOSCALLS" 83 "DosSetFileInfo" Far16 [W, W, P, W] |p, c| {
        let (stamps, _) = set_args(p, c, u32::from(c.w(1)), c.l(3))?;
        p.files().set_file_info(c.w(0), stamps, None)
    }),
    api!("DOSCALLS" 98 "DosQPathInfo" Far16 [S, W, P, W, L] |p, c| {
        let path = p.arg_sz(c, 0)?;
        query_path(p, c, &path)
    }),
    api!("DOSCALLS" 104 "DosSetPathInfo" Far16 [S, W, P, W, W, L] |p, c| {
        let path = p.arg_sz(c, 0)?;
        let (stamps, attr) = set_args(p, c, u32::from(c.w(1)), c.l(3))?;
        p.files().set_path_info(&path, stamps, attr)
    }),
    api!("DOSCALLS" 218 "DosSetFileInfo" Sys32 [L, L, P, L] |p, c| {
        let (stamps, attr) = set_args(p, c, c.l(1), c.l(3))?;
        p.files().set_file_info(c.l(0) as u16, stamps, attr)
    }),
    api!("DOSCALLS" 219 "DosSetPathInfo" Sys32 [S, L, P, L, L] |p, c| {
        let path = p.arg_sz(c, 0)?;
        let (stamps, attr) = set_args(p, c, c.l(1), c.l(3))?;
        p.files().set_path_info(&path, stamps, attr)
    }),
    api!("DOSCALLS" 223 "DosQueryPathInfo" Sys32 [S, L, P, L] |p, c| {
        let path = p.arg_sz(c, 0)?;
        query_path(p, c, &path)
    }),
    api!("DOSCALLS" 279 "DosQueryFileInfo" Sys32 [L, L, P, L] |p, c| {
        let info = p.files().file_info(c.l(0) as u16)?;
        query(p, c, c.l(1), info)
    }),
];

/// The buffer's size argument.
fn buf_len(c: &Call) -> u32 {
    if c.far16 { u32::from(c.w(3)) } else { c.l(3) }
}

fn query_path(p: &mut Process, c: &Call, path: &[u8]) -> ApiResult<()> {
    let level = if c.far16 { u32::from(c.w(1)) } else { c.l(1) };
    if level == FIL_QUERYFULLNAME {
        let r = p.files().resolve(path)?;
        let mut v = crate::process::latin1(&r.os2);
        v.push(0);
        if v.len() > buf_len(c) as usize {
            return Err(ERROR_BUFFER_OVERFLOW);
        }
        return p.put_bytes(c, 2, &v);
    }
    let info = p.files().path_info(path)?;
    query(p, c, level, info)
}

/// A query at `level` of a file whose size, attributes and stamps are
/// `info`.
fn query(
    p: &mut Process,
    c: &Call,
    level: u32,
    (size, attr, stamps): (u64, u16, Stamps),
) -> ApiResult<()> {
    let mut v = crate::api::doscalls16::file_status(size, attr, &stamps, !c.far16);
    match level {
        FIL_STANDARD => {}
        FIL_QUERYEASIZE => v.extend(4u32.to_le_bytes()),
        FIL_QUERYEASFROMLIST => {
            // EAOP2 { fpGEA2List, fpFEA2List, oError }: the FEA2LIST the
            // caller points to gets an empty list (its cbList is 4).
            let eaop = p.arg_bytes(c, 2, 12)?;
            let fea = u32::from_le_bytes([eaop[4], eaop[5], eaop[6], eaop[7]]);
            let lin = p.ptr(fea, c.far16, 4).ok_or(ERROR_INVALID_ADDRESS)?;
            if !p.write_mem(lin, &4u32.to_le_bytes()) {
                return Err(ERROR_INVALID_ADDRESS);
            }
            return Ok(());
        }
        _ => return Err(ERROR_INVALID_LEVEL),
    }
    if v.len() > buf_len(c) as usize {
        return Err(ERROR_BUFFER_OVERFLOW);
    }
    p.put_bytes(c, 2, &v)
}

/// A set call's level-1 buffer: the stamps to change and, for 32-bit
/// calls, the attributes.
fn set_args(
    p: &mut Process,
    c: &Call,
    level: u32,
    len: u32,
) -> ApiResult<(NewStamps, Option<u16>)> {
    match level {
        FIL_STANDARD => {}
        FIL_QUERYEASIZE => return Err(ERROR_EAS_NOT_SUPPORTED),
        _ => return Err(ERROR_INVALID_LEVEL),
    }
    let need = if c.far16 { 22 } else { 24 };
    if len < need {
        return Err(ERROR_INSUFFICIENT_BUFFER);
    }
    let b = p.arg_bytes(c, 2, need)?;
    let word = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
    let stamp = |i: usize| {
        let (d, t) = (word(i), word(i + 2));
        (d != 0 || t != 0).then_some((d, t))
    };
    let stamps = [stamp(0), stamp(4), stamp(8)];
    let attr = (!c.far16).then(|| word(20));
    Ok((stamps, attr))
}
