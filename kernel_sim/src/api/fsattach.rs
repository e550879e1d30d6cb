//! DosQFSAttach (16-bit) and DosQueryFSAttach (32-bit): which file system
//! a drive or device is attached to.
//!
//! Decisions: the system has one drive, `C:` (drive 3), a local drive
//! (FSAT_LOCALDRV) whose file system is `HPFS` (long names, as the
//! sandbox has), and the character devices `CON` and `NUL`
//! (FSAT_CHARDEV, no file system driver). Levels: FSAIL_QUERYNAME (1) by
//! name (`C:`, `CON`, `\DEV\NUL`; any other drive letter is
//! ERROR_INVALID_DRIVE, any other name ERROR_INVALID_PARAMETER);
//! FSAIL_DEVNUMBER (2) enumerates the two devices by ordinal from 1,
//! FSAIL_DRVNUMBER (3) the drives by drive number (only 3), both with
//! ERROR_NO_MORE_ITEMS past the end (drive numbers above 26 too, and 0);
//! another level is ERROR_INVALID_LEVEL. The name argument is read only
//! at level 1. No FSD attach data. A buffer too small for the record is
//! ERROR_BUFFER_OVERFLOW with nothing written; on success the buffer
//! length receives the record's size. The 16-bit record (FSQBUFFER)
//! puts each length before its field, the 32-bit one (FSQBUFFER2) the
//! four lengths first.

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::process::Process;
use crate::rc::*;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 182 "DosQFSAttach" Far16 [S, W, W, P, P, L] |p, c| query(p, c, true)),
    api!("DOSCALLS" 277 "DosQueryFSAttach" Sys32 [S, L, L, P, P] |p, c| query(p, c, false)),
];

/// ERROR_NO_MORE_ITEMS.
const ERROR_NO_MORE_ITEMS: u32 = 259;
/// FSAT_CHARDEV / FSAT_LOCALDRV.
const FSAT_CHARDEV: u16 = 1;
const FSAT_LOCALDRV: u16 = 3;

/// (type, name, file system driver name).
type Attached = (u16, &'static str, &'static str);

const DRIVE_C: Attached = (FSAT_LOCALDRV, "C:", "HPFS");
const DEVICES: [Attached; 2] = [(FSAT_CHARDEV, "CON", ""), (FSAT_CHARDEV, "NUL", "")];

fn by_name(name: &[u8]) -> ApiResult<Attached> {
    let up = name.to_ascii_uppercase();
    match up.as_slice() {
        b"C:" => return Ok(DRIVE_C),
        [l, b':'] if l.is_ascii_uppercase() => return Err(ERROR_INVALID_DRIVE),
        _ => {}
    }
    let dev = up.strip_prefix(b"\\DEV\\").unwrap_or(&up);
    DEVICES
        .iter()
        .find(|d| d.1.as_bytes() == dev)
        .copied()
        .ok_or(ERROR_INVALID_PARAMETER)
}

fn query(p: &mut Process, c: &Call, far16: bool) -> ApiResult<()> {
    let (ordinal, level) = if far16 {
        (u32::from(c.w(1)), u32::from(c.w(2)))
    } else {
        (c.l(1), c.l(2))
    };
    let found = match level {
        1 => by_name(&p.arg_sz(c, 0)?)?,
        2 => *DEVICES
            .get((ordinal as usize).wrapping_sub(1))
            .ok_or(ERROR_NO_MORE_ITEMS)?,
        3 if ordinal == 3 => DRIVE_C,
        3 => return Err(ERROR_NO_MORE_ITEMS),
        _ => return Err(ERROR_INVALID_LEVEL),
    };
    let record = record(found, far16);
    let cb_size = if far16 { 2 } else { 4 };
    let cb = p.arg_bytes(c, 4, cb_size)?;
    let room = cb.iter().rev().fold(0u32, |v, &b| (v << 8) | u32::from(b));
    if (room as usize) < record.len() {
        return Err(ERROR_BUFFER_OVERFLOW);
    }
    p.put_bytes(c, 3, &record)?;
    if far16 {
        p.put_u16(c, 4, record.len() as u16)
    } else {
        p.put_u32(c, 4, record.len() as u32)
    }
}

/// The FSQBUFFER (16-bit) or FSQBUFFER2 (32-bit) of `a`.
fn record((kind, name, fsd): Attached, far16: bool) -> Vec<u8> {
    let w = |v: usize| (v as u16).to_le_bytes();
    let mut r = kind.to_le_bytes().to_vec();
    if far16 {
        r.extend(w(name.len()));
        r.extend(name.bytes().chain([0]));
        r.extend(w(fsd.len()));
        r.extend(fsd.bytes().chain([0]));
        r.extend(w(0));
    } else {
        r.extend(w(name.len()));
        r.extend(w(fsd.len()));
        r.extend(w(0));
        r.extend(name.bytes().chain([0]));
        r.extend(fsd.bytes().chain([0]));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_of_both_layouts() {
        assert_eq!(
            record(DRIVE_C, false),
            b"\x03\x00\x02\x00\x04\x00\x00\x00C:\0HPFS\0".to_vec()
        );
        assert_eq!(
            record(DRIVE_C, true),
            b"\x03\x00\x02\x00C:\0\x04\x00HPFS\0\x00\x00".to_vec()
        );
        assert_eq!(by_name(b"c:"), Ok(DRIVE_C));
        assert_eq!(by_name(b"D:"), Err(ERROR_INVALID_DRIVE));
        assert_eq!(by_name(b"\\dev\\nul").map(|d| d.1), Ok("NUL"));
        assert_eq!(by_name(b"LPT1"), Err(ERROR_INVALID_PARAMETER));
    }
}
