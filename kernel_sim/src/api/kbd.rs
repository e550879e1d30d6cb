//! KBDCALLS beyond reading keys: KbdGetStatus / KbdSetStatus (the input
//! mode, echo, turnaround character, interim and shift state),
//! KbdFlushBuffer and KbdPeek.
//!
//! Decisions: the keyboard is the process's standard input, a stream,
//! and only the default keyboard (handle 0) exists (another handle is
//! ERROR_KBD_INVALID_HANDLE). KbdPeek reads one byte ahead from standard
//! input (standard input cannot be polled, so this waits for a byte as
//! KbdCharIn does), reports it as a final character and keeps it for the
//! next KbdCharIn or KbdStringIn; at the end of input it reports no key
//! (status 0). KbdFlushBuffer drops a byte read ahead. The status is
//! recorded and reported; the other calls read bytes as they are in
//! either mode (there is no echo to a screen here).

use std::io::Read;

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::process::Process;

/// KEYBOARD_ECHO_ON, _ECHO_OFF, _BINARY_MODE, _ASCII_MODE,
/// _MODIFY_STATE, _MODIFY_INTERIM, _MODIFY_TURNAROUND, _2B_TURNAROUND,
/// _SHIFT_REPORT.
const ECHO_ON: u16 = 0x0001;
const ECHO_OFF: u16 = 0x0002;
const BINARY: u16 = 0x0004;
const ASCII: u16 = 0x0008;
const MODIFY_STATE: u16 = 0x0010;
const MODIFY_INTERIM: u16 = 0x0020;
const MODIFY_TURNAROUND: u16 = 0x0040;
const TWO_BYTE_TURNAROUND: u16 = 0x0080;
const SHIFT_REPORT: u16 = 0x0100;

/// ERROR_KBD_INVALID_LENGTH, _INVALID_ECHO_MASK, _INVALID_INPUT_MASK,
/// _INVALID_HANDLE.
const ERROR_KBD_INVALID_LENGTH: u32 = 376;
const ERROR_KBD_INVALID_ECHO_MASK: u32 = 377;
const ERROR_KBD_INVALID_INPUT_MASK: u32 = 378;
const ERROR_KBD_INVALID_HANDLE: u32 = 439;

/// Bytes of a KBDINFO.
const KBDINFO_SIZE: usize = 10;

/// The process's keyboard state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KbdState {
    /// Echo, input mode, turnaround width and shift report bits.
    mask: u16,
    turnaround: u16,
    interim: u16,
    shift: u16,
    /// A byte KbdPeek read ahead (`Some(None)`: it found the end).
    ahead: Option<Option<u8>>,
}

impl Default for KbdState {
    /// Echo on, ASCII (cooked) mode, CR as the turnaround character.
    fn default() -> KbdState {
        KbdState {
            mask: ECHO_ON | ASCII,
            turnaround: 0x0D,
            interim: 0,
            shift: 0,
            ahead: None,
        }
    }
}

/// What DosDevIOCtl's keyboard category sees of the state (`ioctl.rs`).
impl KbdState {
    /// DEV_FLUSHINPUT: a byte read ahead goes.
    pub(crate) fn flush(&mut self) {
        self.ahead = None;
    }

    /// Binary (raw) input mode, else ASCII (cooked).
    pub(crate) fn binary(&self) -> bool {
        self.mask & BINARY != 0
    }

    pub(crate) fn set_binary(&mut self, binary: bool) {
        self.mask &= !(BINARY | ASCII);
        self.mask |= if binary { BINARY } else { ASCII };
    }

    pub(crate) fn interim(&self) -> u16 {
        self.interim
    }

    pub(crate) fn set_interim(&mut self, v: u16) {
        self.interim = v;
    }

    pub(crate) fn shift(&self) -> u16 {
        self.shift
    }

    pub(crate) fn set_shift(&mut self, v: u16) {
        self.shift = v;
    }
}

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("KBDCALLS" 10 "KbdGetStatus" Far16 [P, W] get_status),
    api!("KBDCALLS" 11 "KbdSetStatus" Far16 [P, W] set_status),
    api!("KBDCALLS" 13 "KbdFlushBuffer" Far16 [W] |p, c| {
        handle(c.w(0))?;
        p.pcb.kbd.ahead = None;
        Ok(())
    }),
    api!("KBDCALLS" 22 "KbdPeek" Far16 [P, W] peek),
];

fn handle(h: u16) -> ApiResult<()> {
    if h == 0 {
        Ok(())
    } else {
        Err(ERROR_KBD_INVALID_HANDLE)
    }
}

impl Process {
    /// The next byte of keyboard input: one a monitor chain passed on
    /// (`moncalls.rs`), one KbdPeek read ahead, else one from standard
    /// input; `None` at its end.
    pub(crate) fn kbd_byte(&mut self) -> Option<u8> {
        if let Some(b) = self.pcb.mon.take_key() {
            return Some(b);
        }
        if let Some(b) = self.pcb.kbd.ahead.take() {
            return b;
        }
        self.device_byte()
    }

    /// The next key the device has (standard input), before monitors.
    pub(crate) fn device_byte(&mut self) -> Option<u8> {
        let mut b = [0u8];
        match self.host.stdin.read(&mut b) {
            Ok(1) => Some(b[0]),
            _ => None,
        }
    }
}

/// The KBDINFO's `cb` at argument 0 must be 10.
fn check_length(p: &mut Process, c: &Call) -> ApiResult<()> {
    let cb = p.arg_bytes(c, 0, 2)?;
    if usize::from(u16::from_le_bytes([cb[0], cb[1]])) < KBDINFO_SIZE {
        return Err(ERROR_KBD_INVALID_LENGTH);
    }
    Ok(())
}

fn get_status(p: &mut Process, c: &Call) -> ApiResult<()> {
    handle(c.w(1))?;
    check_length(p, c)?;
    let k = p.pcb.kbd;
    let mut v = Vec::with_capacity(KBDINFO_SIZE);
    for w in [
        KBDINFO_SIZE as u16,
        k.mask,
        k.turnaround,
        k.interim,
        k.shift,
    ] {
        v.extend(w.to_le_bytes());
    }
    p.put_bytes(c, 0, &v)
}

fn set_status(p: &mut Process, c: &Call) -> ApiResult<()> {
    handle(c.w(1))?;
    check_length(p, c)?;
    let b = p.arg_bytes(c, 0, KBDINFO_SIZE as u32)?;
    let w = |i: usize| u16::from_le_bytes([b[2 * i], b[2 * i + 1]]);
    let (mask, turnaround, interim, shift) = (w(1), w(2), w(3), w(4));
    if mask & (ECHO_ON | ECHO_OFF) == ECHO_ON | ECHO_OFF {
        return Err(ERROR_KBD_INVALID_ECHO_MASK);
    }
    if mask & (BINARY | ASCII) == BINARY | ASCII {
        return Err(ERROR_KBD_INVALID_INPUT_MASK);
    }
    let k = &mut p.pcb.kbd;
    if mask & (ECHO_ON | ECHO_OFF) != 0 {
        k.mask = (k.mask & !(ECHO_ON | ECHO_OFF)) | (mask & (ECHO_ON | ECHO_OFF));
    }
    if mask & (BINARY | ASCII) != 0 {
        k.mask = (k.mask & !(BINARY | ASCII)) | (mask & (BINARY | ASCII));
    }
    if mask & MODIFY_STATE != 0 {
        k.shift = shift;
    }
    if mask & MODIFY_INTERIM != 0 {
        k.interim = interim;
    }
    if mask & MODIFY_TURNAROUND != 0 {
        k.mask = (k.mask & !TWO_BYTE_TURNAROUND) | (mask & TWO_BYTE_TURNAROUND);
        k.turnaround = if mask & TWO_BYTE_TURNAROUND != 0 {
            turnaround
        } else {
            turnaround & 0xFF
        };
    }
    k.mask = (k.mask & !SHIFT_REPORT) | (mask & SHIFT_REPORT);
    Ok(())
}

fn peek(p: &mut Process, c: &Call) -> ApiResult<()> {
    handle(c.w(1))?;
    p.arg_ptr(c, 0, 10)?;
    let b = p.kbd_byte();
    p.pcb.kbd.ahead = Some(b);
    let ms = p.now_millis() as u32;
    let mut v = match b {
        Some(ch) => vec![ch, 0, 0x40, 0],
        None => vec![0, 0, 0, 0],
    };
    v.extend(p.pcb.kbd.shift.to_le_bytes());
    v.extend(ms.to_le_bytes());
    p.put_bytes(c, 0, &v)
}
