//! DosDevIOCtl (16-bit DOSCALLS.53, its length-checked twin
//! DosDevIOCtl2, DOSCALLS.99, and the 32-bit DOSCALLS.284): device
//! control for the devices this system has.
//!
//! The devices and what they take:
//! - the **console** (handles 0, 1 and 2 and `CON`: the keyboard KBD$
//!   and the screen): category 4 (IOCTL_KEYBOARD) KBD_SETINPUTMODE
//!   (0x51), KBD_SETINTERIMFLAG (0x52), KBD_SETSHIFTSTATE (0x53),
//!   KBD_SETTYPAMATICRATE (0x54: accepted, nothing repeats here),
//!   KBD_GETINPUTMODE (0x71), KBD_GETINTERIMFLAG (0x72),
//!   KBD_GETSHIFTSTATE (0x73), KBD_GETKEYBDTYPE (0x77: an enhanced
//!   keyboard) and KBD_GETCODEPAGEID (0x78: 437), sharing the state
//!   KbdGetStatus / KbdSetStatus see (`kbd.rs`); category 0x0B
//!   (IOCTL_GENERAL) DEV_FLUSHINPUT (0x01: a key read ahead is dropped),
//!   DEV_FLUSHOUTPUT (0x02) and DEV_QUERYMONSUPPORT (0x60:
//!   ERROR_MONITORS_NOT_SUPPORTED, there are no device monitors);
//! - `NUL`: category 0x0B functions 0x01, 0x02 and 0x60 as the console;
//! - the **disk** (drive C:, the sandbox), with the handle -1 (0xFFFF
//!   from 16-bit callers) and the drive in the parameters (command byte,
//!   drive number 0 = A:): category 8 (IOCTL_DISK) DSK_BLOCKREMOVABLE
//!   (0x20: fixed), DSK_GETLOGICALMAP (0x21: 0, one letter per drive)
//!   and DSK_GETDEVICEPARAMS (0x63: a BIOS parameter block of a fixed
//!   disk of [`DISK_SECTORS`] 512-byte sectors, 8 per cluster, 63 per
//!   track, 255 heads, and its cylinders, device type 5 (fixed disk) and
//!   attributes 1 (not removable)). Other drives are
//!   ERROR_INVALID_DRIVE.
//!
//! Errors: a handle that is not open (other than -1 for the disk) is
//! ERROR_INVALID_HANDLE; a category the device does not have, and any
//! category on a file or a pipe, ERROR_INVALID_CATEGORY; a function the
//! category does not have, ERROR_INVALID_FUNCTION; a bad parameter
//! value, ERROR_INVALID_PARAMETER. The 32-bit call and DosDevIOCtl2 check
//! the lengths: a parameter area shorter than the function's is
//! ERROR_INVALID_PARAMETER, a data area shorter than what it returns
//! ERROR_BUFFER_OVERFLOW (with the length needed in `*pcbDataLen`). The
//! 32-bit call returns the lengths used in `*pcbParmLen` and
//! `*pcbDataLen` (either pointer may be null).

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::fs::Handle;
use crate::process::Process;
use crate::rc::*;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 53 "DosDevIOCtl" Far16 [P, P, W, W, W] ioctl16),
    api!("DOSCALLS" 99 "DosDevIOCtl2" Far16 [P, W, P, W, W, W, W] ioctl2),
    api!("DOSCALLS" 284 "DosDevIOCtl" Sys32 [L, L, L, P, L, P, P, L, P] ioctl32),
];

/// ERROR_INVALID_CATEGORY, ERROR_MONITORS_NOT_SUPPORTED.
const ERROR_INVALID_CATEGORY: u32 = 117;
const ERROR_MONITORS_NOT_SUPPORTED: u32 = 165;

/// Categories.
const IOCTL_DISK: u32 = 0x08;
const IOCTL_KEYBOARD: u32 = 0x04;
const IOCTL_GENERAL: u32 = 0x0B;

/// Sectors of the disk DSK_GETDEVICEPARAMS describes (2 GB).
pub const DISK_SECTORS: u32 = 0x40_0000;

/// The drive number of C: (0 = A:).
const DRIVE_C: u8 = 2;

/// The device a handle is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Device {
    Console,
    Nul,
    Disk,
    /// A file or a pipe: no device.
    Other,
}

fn device(p: &mut Process, h: u32) -> ApiResult<Device> {
    if h == u32::MAX || h == 0xFFFF {
        return Ok(Device::Disk);
    }
    let h = u16::try_from(h).map_err(|_| ERROR_INVALID_HANDLE)?;
    match p.pcb.files.get(h) {
        Some(Handle::Std(4)) => Ok(Device::Nul),
        Some(Handle::Std(_)) => Ok(Device::Console),
        Some(_) => Ok(Device::Other),
        None => Err(ERROR_INVALID_HANDLE),
    }
}

/// What a function takes and gives: the parameter bytes it reads and
/// the data bytes it returns.
fn shape(dev: Device, cat: u32, func: u32) -> ApiResult<(u32, u32)> {
    match (dev, cat) {
        (Device::Console | Device::Nul, IOCTL_GENERAL) => match func {
            0x01 | 0x02 | 0x60 => Ok((1, 0)),
            _ => Err(ERROR_INVALID_FUNCTION),
        },
        (Device::Console, IOCTL_KEYBOARD) => match func {
            0x51 | 0x52 => Ok((1, 0)),
            0x53 => Ok((3, 0)),
            0x54 => Ok((4, 0)),
            0x71 | 0x72 => Ok((0, 1)),
            0x73 => Ok((0, 3)),
            0x77 => Ok((0, 6)),
            0x78 => Ok((0, 4)),
            _ => Err(ERROR_INVALID_FUNCTION),
        },
        (Device::Disk, IOCTL_DISK) => match func {
            0x20 | 0x21 => Ok((2, 1)),
            0x63 => Ok((2, 36)),
            _ => Err(ERROR_INVALID_FUNCTION),
        },
        (Device::Disk, _) => Err(ERROR_INVALID_HANDLE),
        _ => Err(ERROR_INVALID_CATEGORY),
    }
}

/// Run function `func` of category `cat` with its parameters: the data
/// it returns.
fn run(p: &mut Process, cat: u32, func: u32, parm: &[u8]) -> ApiResult<Vec<u8>> {
    let kbd = &mut p.pcb.kbd;
    let disk_drive = || -> ApiResult<u8> {
        match parm.get(1) {
            Some(&DRIVE_C) => Ok(DRIVE_C),
            _ => Err(ERROR_INVALID_DRIVE),
        }
    };
    Ok(match (cat, func) {
        (IOCTL_GENERAL, 0x01) => {
            kbd.flush();
            Vec::new()
        }
        (IOCTL_GENERAL, 0x02) => Vec::new(),
        (IOCTL_GENERAL, _) => return Err(ERROR_MONITORS_NOT_SUPPORTED),
        (IOCTL_KEYBOARD, 0x51) => match parm[0] & 0x7F {
            0 => {
                kbd.set_binary(parm[0] & 0x80 != 0);
                Vec::new()
            }
            _ => return Err(ERROR_INVALID_PARAMETER),
        },
        (IOCTL_KEYBOARD, 0x52) => {
            kbd.set_interim(u16::from(parm[0]));
            Vec::new()
        }
        (IOCTL_KEYBOARD, 0x53) => {
            kbd.set_shift(u16::from_le_bytes([parm[0], parm[1]]));
            Vec::new()
        }
        (IOCTL_KEYBOARD, 0x54) => Vec::new(),
        (IOCTL_KEYBOARD, 0x71) => vec![if kbd.binary() { 0x80 } else { 0 }],
        (IOCTL_KEYBOARD, 0x72) => vec![kbd.interim() as u8],
        (IOCTL_KEYBOARD, 0x73) => {
            let mut v = kbd.shift().to_le_bytes().to_vec();
            v.push(0);
            v
        }
        // KBDTYPE: an enhanced (101/102-key) keyboard.
        (IOCTL_KEYBOARD, 0x77) => vec![1, 0, 0, 0, 0, 0],
        (IOCTL_KEYBOARD, 0x78) => vec![0xB5, 0x01, 0, 0],
        (IOCTL_DISK, 0x20) => {
            disk_drive()?;
            vec![1]
        }
        (IOCTL_DISK, 0x21) => {
            disk_drive()?;
            vec![0]
        }
        (IOCTL_DISK, _) => {
            disk_drive()?;
            device_params().to_vec()
        }
        _ => return Err(ERROR_INVALID_FUNCTION),
    })
}

/// DSK_GETDEVICEPARAMS's data: the BIOS parameter block of drive C:,
/// its cylinders, device type and attributes.
fn device_params() -> [u8; 36] {
    let (heads, per_track) = (255u32, 63u32);
    let cylinders = DISK_SECTORS / (heads * per_track);
    let mut b = [0u8; 36];
    b[0..2].copy_from_slice(&512u16.to_le_bytes());
    b[2] = 8; // sectors per cluster
    b[3..5].copy_from_slice(&1u16.to_le_bytes()); // reserved sectors
    b[5] = 2; // FATs
    b[6..8].copy_from_slice(&512u16.to_le_bytes()); // root entries
    // b[8..10]: sector count 0, the large count is used.
    b[10] = 0xF8; // media: fixed disk
    b[11..13].copy_from_slice(&256u16.to_le_bytes()); // sectors per FAT
    b[13..15].copy_from_slice(&(per_track as u16).to_le_bytes());
    b[15..17].copy_from_slice(&(heads as u16).to_le_bytes());
    b[17..21].copy_from_slice(&per_track.to_le_bytes()); // hidden sectors
    b[21..25].copy_from_slice(&DISK_SECTORS.to_le_bytes());
    // b[25..31]: reserved.
    b[31..33].copy_from_slice(&(cylinders as u16).to_le_bytes());
    b[33] = 5; // DEVTYPE_FIXED
    b[34..36].copy_from_slice(&1u16.to_le_bytes()); // not removable
    b
}

/// The call's work: `parm` is read with `parm_max` bytes at most
/// (`None`: unchecked), the data returned must fit `data_max`.
fn dev_ioctl(
    p: &mut Process,
    c: &Call,
    (h, cat, func): (u32, u32, u32),
    (parm_at, parm_max): (usize, Option<u32>),
    data_max: Option<u32>,
) -> ApiResult<(u32, Vec<u8>)> {
    let dev = device(p, h)?;
    let (parm_len, data_len) = shape(dev, cat, func)?;
    if parm_max.is_some_and(|m| m < parm_len) {
        return Err(ERROR_INVALID_PARAMETER);
    }
    if data_max.is_some_and(|m| m < data_len) {
        return Err(ERROR_BUFFER_OVERFLOW);
    }
    let parm = p.arg_bytes(c, parm_at, parm_len)?;
    let data = run(p, cat, func, &parm)?;
    Ok((parm_len, data))
}

/// DosDevIOCtl(pData, pParms, function, category, hDevice).
fn ioctl16(p: &mut Process, c: &Call) -> ApiResult<()> {
    let (_, data) = dev_ioctl(p, c, (c.l(4), c.l(3), c.l(2)), (1, None), None)?;
    if data.is_empty() {
        return Ok(());
    }
    p.put_bytes(c, 0, &data)
}

/// DosDevIOCtl2(pData, cbData, pParms, cbParms, function, category,
/// hDevice).
fn ioctl2(p: &mut Process, c: &Call) -> ApiResult<()> {
    let ids = (c.l(6), c.l(5), c.l(4));
    let (_, data) = dev_ioctl(p, c, ids, (2, Some(c.l(3))), Some(c.l(1)))?;
    if data.is_empty() {
        return Ok(());
    }
    p.put_bytes(c, 0, &data)
}

/// DosDevIOCtl(hDevice, category, function, pParams, cbParmLenMax,
/// pcbParmLen, pData, cbDataLenMax, pcbDataLen).
fn ioctl32(p: &mut Process, c: &Call) -> ApiResult<()> {
    let ids = (c.l(0), c.l(1), c.l(2));
    match dev_ioctl(p, c, ids, (3, Some(c.l(4))), Some(c.l(7))) {
        Ok((parm_len, data)) => {
            if !data.is_empty() {
                p.put_bytes(c, 6, &data)?;
            }
            p.put_u32_opt(c, 5, parm_len)?;
            p.put_u32_opt(c, 8, data.len() as u32)
        }
        Err(ERROR_BUFFER_OVERFLOW) => {
            // The length it needs.
            let dev = device(p, c.l(0))?;
            let (_, need) = shape(dev, c.l(1), c.l(2))?;
            p.put_u32_opt(c, 8, need)?;
            Err(ERROR_BUFFER_OVERFLOW)
        }
        Err(e) => Err(e),
    }
}
