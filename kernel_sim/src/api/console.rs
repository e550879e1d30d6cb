//! MSG, VIOCALLS and KBDCALLS: what console programs use. Output goes to
//! the process's stdout; the screen is a teletype 80 columns by 25 rows.

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::process::Process;
use crate::rc::*;

/// The console entries.
pub static DEFS: &[ApiDef] = &[
    api!("MSG" 1 "DosPutMessage" Far16 [W, W, P] put_message),
    api!("MSG" 5 "DosPutMessage" Sys32 [L, L, P] put_message),
    api!("VIOCALLS" 19 "VioWrtTTY" Far16 [P, W, W] |p, c| {
        let data = p.arg_bytes(c, 0, u32::from(c.w(1)))?;
        p.console(1, &data);
        Ok(())
    }),
    api!("VIOCALLS" 9 "VioGetCurPos" Far16 [P, P, W] |p, c| {
        p.put_u16(c, 0, 0)?;
        p.put_u16(c, 1, 0)
    }),
    api!("VIOCALLS" 15 "VioSetCurPos" Far16 [W, W, W] |_, _| Ok(())),
    api!("VIOCALLS" 21 "VioGetMode" Far16 [P, W] vio_get_mode),
    api!("VIOCALLS" 27 "VioGetCurType" Far16 [P, W] |p, c| p.put_bytes(c, 0, &[14, 0, 15, 0, 1, 0, 0, 0])),
    api!("VIOCALLS" 32 "VioSetCurType" Far16 [P, W] |_, _| Ok(())),
    api!("VIOCALLS" 46 "VioGetConfig" Far16 [W, P, W] vio_get_config),
    api!("KBDCALLS" 4 "KbdCharIn" Far16 [P, W, W] kbd_char_in),
    api!("KBDCALLS" 9 "KbdStringIn" Far16 [P, P, W, W] kbd_string_in),
];

/// VioGetConfig(configuration id, VIOCONFIGINFO, hvio): the screen is
/// one VGA adapter with an 8513 colour display (256 KB of video memory,
/// an 80x25 text buffer of 4000 bytes). The caller's `cb` says how much
/// of the 32-byte structure to fill; it gets the bytes filled.
fn vio_get_config(p: &mut Process, c: &Call) -> ApiResult<()> {
    const DISPLAY_VGA: u16 = 3;
    const MONITOR_851X_COLOR: u16 = 4;
    if c.w(2) != 0 {
        return Err(ERROR_VIO_INVALID_HANDLE);
    }
    // Current or primary: the one display; there is no secondary.
    if c.w(0) > 1 {
        return Err(ERROR_VIO_INVALID_PARMS);
    }
    let lin = p.arg_ptr(c, 1, 2)?;
    let cb = p.read_mem(lin, 2).ok_or(ERROR_INVALID_ADDRESS)?;
    let cb = usize::from(u16::from_le_bytes([cb[0], cb[1]]));
    if cb < 2 {
        return Err(ERROR_VIO_INVALID_LENGTH);
    }
    let mut info = Vec::with_capacity(32);
    info.extend(0u16.to_le_bytes()); // cb, set below
    info.extend(DISPLAY_VGA.to_le_bytes());
    info.extend(MONITOR_851X_COLOR.to_le_bytes());
    info.extend(0x4_0000u32.to_le_bytes()); // cbMemory
    info.extend([0u8; 6]); // Configuration, VDHVersion, Flags
    info.extend(0x4_0000u32.to_le_bytes()); // HWBufferSize
    info.extend(0x4_0000u32.to_le_bytes()); // FullSaveSize
    info.extend(4000u32.to_le_bytes()); // PartSaveSize
    info.extend([0u8; 4]); // EMAdaptersOFF, EMDisplaysOFF
    let n = cb.min(info.len());
    info[..2].copy_from_slice(&(n as u16).to_le_bytes());
    p.put_bytes(c, 1, &info[..n])
}

/// KbdCharIn: one byte of standard input as a KBDKEYINFO (character,
/// scan code 0, status 0x40 "final character"); end of input gives 0x1A.
fn kbd_char_in(p: &mut Process, c: &Call) -> ApiResult<()> {
    let ch = p.kbd_byte().unwrap_or(0x1A);
    let ms = p.now_millis() as u32;
    let mut v = vec![ch, 0, 0x40, 0, 0, 0];
    v.extend(ms.to_le_bytes());
    p.put_bytes(c, 0, &v)
}

/// KbdStringIn: a line of standard input (without its CR/LF) into the
/// buffer, at most the STRINGINBUF's `cb` bytes; `cchIn` gets the count.
fn kbd_string_in(p: &mut Process, c: &Call) -> ApiResult<()> {
    let lin = p.arg_ptr(c, 1, 4)?;
    let sb = p.read_mem(lin, 4).ok_or(ERROR_INVALID_ADDRESS)?;
    let cb = usize::from(u16::from_le_bytes([sb[0], sb[1]]));
    let mut line = Vec::new();
    while line.len() < cb {
        match p.kbd_byte() {
            Some(b'\n') => break,
            Some(b'\r') => {}
            Some(b) => line.push(b),
            None => break,
        }
    }
    p.put_bytes(c, 0, &line)?;
    if !p.write_mem(lin + 2, &(line.len() as u16).to_le_bytes()) {
        return Err(ERROR_INVALID_ADDRESS);
    }
    Ok(())
}

/// DosPutMessage(handle, length, buffer), both conventions.
fn put_message(p: &mut Process, c: &Call) -> ApiResult<()> {
    let h = (c.l(0) & 0xFFFF) as u16;
    let n = if c.far16 { u32::from(c.w(1)) } else { c.l(1) };
    let data = p.arg_bytes(c, 2, n)?;
    p.write_handle(h, &data).map(|_| ())
}

/// VIOMODEINFO of an 80x25 colour text mode, cut to the caller's length.
fn vio_get_mode(p: &mut Process, c: &Call) -> ApiResult<()> {
    let lin = p.arg_ptr(c, 0, 2)?;
    let cb = p
        .read_mem(lin, 2)
        .map_or(0, |b| usize::from(u16::from_le_bytes([b[0], b[1]])));
    let mut v = Vec::new();
    v.extend(12u16.to_le_bytes());
    v.extend([1, 4]);
    v.extend(80u16.to_le_bytes());
    v.extend(25u16.to_le_bytes());
    v.extend(720u16.to_le_bytes());
    v.extend(400u16.to_le_bytes());
    if cb < 2 {
        return Err(ERROR_INVALID_PARAMETER);
    }
    let n = cb.min(v.len());
    v[0..2].copy_from_slice(&(n as u16).to_le_bytes());
    v.truncate(n);
    p.put_bytes(c, 0, &v)
}
