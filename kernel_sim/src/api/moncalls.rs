//! MONCALLS: device monitors (DosMonOpen, DosMonReg, DosMonRead,
//! DosMonWrite, DosMonClose) on the keyboard device `KBD$`.
//!
//! A monitor sees the device's packets before the device's readers: it
//! registers an input and an output buffer, reads packets from its input
//! and writes them (changed, dropped or added to) to its output, which
//! feeds the next monitor of the chain, or at the chain's end the device
//! (here the keyboard that KbdCharIn and KbdStringIn read).
//!
//! A keyboard packet (MONKEYPACKET, 14 bytes): `mnflags` (word), the
//! KBDKEYINFO (character, scan code, status 0x40 "final", NLS shift,
//! shift state word, time in milliseconds), `ddflags` (word).
//!
//! Decisions, where the system's documentation leaves room:
//! - Only `KBD$` has monitors; `MOUSE$` and the printers are
//!   ERROR_MONITORS_NOT_SUPPORTED, any other name
//!   ERROR_MON_INVALID_DEVNAME. Opening `KBD$` again gives the same
//!   handle.
//! - A buffer's first word is its length, at least [`MIN_BUFFER`]; the
//!   records waiting in a buffer use at most its length less 20 bytes
//!   (each record counts its length plus a 2-byte header). The records
//!   are kept by the kernel, bounded by that length.
//! - DosMonReg's index is the screen group, 0..=15.
//! - The keys come from standard input. DosMonRead on an empty buffer of
//!   the chain's first monitor takes the next key from it (with or
//!   without wait, as a key that was typed); when there is none, or the
//!   buffer belongs to a later monitor, the call returns
//!   ERROR_MON_BUFFER_EMPTY (without wait) and, with wait, also
//!   ERROR_MON_BUFFER_EMPTY, since in one deterministic run no other
//!   thread can fill it.
//! - A record is 1..=[`MAX_RECORD`] bytes (longer is
//!   ERROR_MON_DATA_TOO_LARGE); a write into a full next buffer is
//!   ERROR_MON_DATA_TOO_LARGE too (nothing could drain it). At the
//!   chain's end, a packet of at least 3 bytes gives the keyboard its
//!   character (byte 2), unless `mnflags` marks it as a flush
//!   (bit 0x0001) packet; those go nowhere.

use std::collections::VecDeque;

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::process::Process;
use crate::rc::*;

const ERROR_MONITORS_NOT_SUPPORTED: u32 = 165;
const ERROR_MON_INVALID_PARMS: u32 = 379;
const ERROR_MON_INVALID_DEVNAME: u32 = 380;
const ERROR_MON_INVALID_HANDLE: u32 = 381;
const ERROR_MON_BUFFER_TOO_SMALL: u32 = 382;
const ERROR_MON_BUFFER_EMPTY: u32 = 383;
const ERROR_MON_DATA_TOO_LARGE: u32 = 384;

/// Smallest monitor buffer (its length word included).
pub const MIN_BUFFER: usize = 64;
/// Longest record a monitor reads or writes.
pub const MAX_RECORD: usize = 64;
/// Bytes of a keyboard packet.
pub const KEY_PACKET: usize = 14;
/// The handle of `KBD$`.
const KBD_HANDLE: u16 = 1;
/// Characters the chain's end may hold for the keyboard.
const MAX_FED: usize = 4096;

/// One registered monitor.
#[derive(Clone, Debug)]
struct Monitor {
    input: u32,
    output: u32,
    in_room: usize,
    queue: VecDeque<Vec<u8>>,
}

impl Monitor {
    fn used(&self) -> usize {
        self.queue.iter().map(|r| r.len() + 2).sum()
    }
}

/// The process's monitors.
#[derive(Clone, Debug, Default)]
pub(crate) struct MonState {
    open: bool,
    /// The chain, first monitor first.
    chain: Vec<Monitor>,
    /// Characters that left the chain, for the keyboard.
    fed: VecDeque<u8>,
}

impl MonState {
    /// The next character a monitor chain gave the keyboard.
    pub(crate) fn take_key(&mut self) -> Option<u8> {
        self.fed.pop_front()
    }
}

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("MONCALLS" 1 "DosMonWrite" Far16 [P, P, W] mon_write),
    api!("MONCALLS" 2 "DosMonRead" Far16 [P, W, P, P] mon_read),
    api!("MONCALLS" 3 "DosMonClose" Far16 [W] mon_close),
    api!("MONCALLS" 4 "DosMonOpen" Far16 [P, P] mon_open),
    api!("MONCALLS" 5 "DosMonReg" Far16 [W, P, P, W, W] mon_reg),
];

/// DosMonOpen(device name, phmon).
fn mon_open(p: &mut Process, c: &Call) -> ApiResult<()> {
    let name = p.arg_sz(c, 0)?;
    let name = String::from_utf8_lossy(&name).to_ascii_uppercase();
    let name = name.strip_prefix("\\DEV\\").unwrap_or(&name);
    match name {
        "KBD$" => {}
        "MOUSE$" | "LPT1" | "LPT2" | "LPT3" | "PRN" => return Err(ERROR_MONITORS_NOT_SUPPORTED),
        _ => return Err(ERROR_MON_INVALID_DEVNAME),
    }
    p.put_u16(c, 1, KBD_HANDLE)?;
    p.pcb.mon.open = true;
    Ok(())
}

fn check_handle(p: &Process, h: u16) -> ApiResult<()> {
    if h == KBD_HANDLE && p.pcb.mon.open {
        Ok(())
    } else {
        Err(ERROR_MON_INVALID_HANDLE)
    }
}

/// DosMonClose(hmon): ends the process's monitors of the device.
fn mon_close(p: &mut Process, c: &Call) -> ApiResult<()> {
    check_handle(p, c.w(0))?;
    p.pcb.mon.open = false;
    p.pcb.mon.chain.clear();
    Ok(())
}

/// A monitor buffer's length word.
fn buffer_len(p: &mut Process, c: &Call, i: usize) -> ApiResult<(u32, usize)> {
    let lin = p.arg_ptr(c, i, 2)?;
    let b = p.read_mem(lin, 2).ok_or(ERROR_INVALID_ADDRESS)?;
    let len = usize::from(u16::from_le_bytes([b[0], b[1]]));
    if len < MIN_BUFFER {
        return Err(ERROR_MON_BUFFER_TOO_SMALL);
    }
    // The whole buffer must be the caller's.
    p.arg_ptr(c, i, len as u32)?;
    Ok((lin, len))
}

/// DosMonReg(hmon, input buffer, output buffer, position, index):
/// position 0 (no preference: the back), 1 (the front), 2 (the back).
fn mon_reg(p: &mut Process, c: &Call) -> ApiResult<()> {
    check_handle(p, c.w(0))?;
    let position = c.w(3);
    if position > 2 || c.w(4) > 15 {
        return Err(ERROR_MON_INVALID_PARMS);
    }
    let (input, in_len) = buffer_len(p, c, 1)?;
    let (output, _) = buffer_len(p, c, 2)?;
    let taken = |a: u32| {
        p.pcb
            .mon
            .chain
            .iter()
            .any(|m| m.input == a || m.output == a)
    };
    if input == output || taken(input) || taken(output) {
        return Err(ERROR_MON_INVALID_PARMS);
    }
    let m = Monitor {
        input,
        output,
        in_room: in_len - 20,
        queue: VecDeque::new(),
    };
    if position == 1 {
        p.pcb.mon.chain.insert(0, m);
    } else {
        p.pcb.mon.chain.push(m);
    }
    Ok(())
}

/// DosMonRead(input buffer, wait flag (0 wait, 1 no wait), data buffer,
/// pcbData (in: its size; out: the record's)).
fn mon_read(p: &mut Process, c: &Call) -> ApiResult<()> {
    let input = p.arg_ptr(c, 0, 2)?;
    let wait = c.w(1);
    if wait > 1 {
        return Err(ERROR_MON_INVALID_PARMS);
    }
    let at = p
        .pcb
        .mon
        .chain
        .iter()
        .position(|m| m.input == input)
        .ok_or(ERROR_MON_INVALID_PARMS)?;
    let size = p.arg_bytes(c, 3, 2)?;
    let size = usize::from(u16::from_le_bytes([size[0], size[1]]));
    if p.pcb.mon.chain[at].queue.is_empty()
        && at == 0
        && let Some(ch) = p.device_byte()
    {
        let packet = key_packet(ch, p.now_millis() as u32);
        p.pcb.mon.chain[0].queue.push_back(packet.to_vec());
    }
    let Some(rec) = p.pcb.mon.chain[at].queue.front().cloned() else {
        return Err(ERROR_MON_BUFFER_EMPTY);
    };
    if rec.len() > size {
        return Err(ERROR_MON_BUFFER_TOO_SMALL);
    }
    p.put_bytes(c, 2, &rec)?;
    p.put_u16(c, 3, rec.len() as u16)?;
    p.pcb.mon.chain[at].queue.pop_front();
    Ok(())
}

/// A MONKEYPACKET for the character `ch` typed at `ms`.
pub fn key_packet(ch: u8, ms: u32) -> [u8; KEY_PACKET] {
    let mut v = [0u8; KEY_PACKET];
    v[2] = ch;
    v[4] = 0x40;
    v[8..12].copy_from_slice(&ms.to_le_bytes());
    v
}

/// DosMonWrite(output buffer, data, cbData): the record goes to the
/// next monitor, or to the keyboard.
fn mon_write(p: &mut Process, c: &Call) -> ApiResult<()> {
    let output = p.arg_ptr(c, 0, 2)?;
    let at = p
        .pcb
        .mon
        .chain
        .iter()
        .position(|m| m.output == output)
        .ok_or(ERROR_MON_INVALID_PARMS)?;
    let n = usize::from(c.w(2));
    if n == 0 {
        return Err(ERROR_MON_INVALID_PARMS);
    }
    if n > MAX_RECORD {
        return Err(ERROR_MON_DATA_TOO_LARGE);
    }
    let rec = p.arg_bytes(c, 1, n as u32)?;
    let mon = &mut p.pcb.mon;
    if let Some(next) = mon.chain.get_mut(at + 1) {
        if next.used() + rec.len() + 2 > next.in_room {
            return Err(ERROR_MON_DATA_TOO_LARGE);
        }
        next.queue.push_back(rec);
        return Ok(());
    }
    let flush = rec[0] & 1 != 0;
    if rec.len() >= 3 && !flush {
        if mon.fed.len() >= MAX_FED {
            return Err(ERROR_MON_DATA_TOO_LARGE);
        }
        mon.fed.push_back(rec[2]);
    }
    Ok(())
}
