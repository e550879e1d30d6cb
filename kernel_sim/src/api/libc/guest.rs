//! Guest memory as the runtime reads and writes it: C strings (narrow
//! and UCS-2), NUL-terminated stores, stack arguments beyond the
//! registers, and the printf and scanf families' argument sources. A
//! bad pointer is the guest's access violation ([`fault`]).

use super::format;
use crate::api::Stop;
use crate::api::uconv::{fault, rd32, write};
use crate::layout::PAGE;
use crate::process::Process;

/// Longest string read from the guest.
pub(crate) const MAX_STR: u32 = 0x100_0000;

/// The NUL-terminated string at `addr` (without the NUL).
pub(crate) fn cstr(p: &mut Process, addr: u32) -> Result<Vec<u8>, Stop> {
    cstr_max(p, addr, MAX_STR)
}

/// The string at `addr`, at most `max` bytes.
pub(crate) fn cstr_max(p: &mut Process, addr: u32, max: u32) -> Result<Vec<u8>, Stop> {
    let mut out = Vec::new();
    let mut at = addr;
    loop {
        if out.len() as u32 >= max {
            return Ok(out);
        }
        let room = (PAGE - (at & (PAGE - 1))).min(max - out.len() as u32);
        let chunk = match p.read_mem(at, room) {
            Some(c) if at != 0 => c,
            _ => return Err(fault(p, at, false)),
        };
        match chunk.iter().position(|&b| b == 0) {
            Some(n) => {
                out.extend_from_slice(&chunk[..n]);
                return Ok(out);
            }
            None => out.extend_from_slice(&chunk),
        }
        at = at.wrapping_add(room);
    }
}

/// The NUL-terminated UCS-2 string at `addr` (at most `max` units).
pub(crate) fn wstr_max(p: &mut Process, addr: u32, max: u32) -> Result<Vec<u16>, Stop> {
    if addr == 0 {
        return Err(fault(p, 0, false));
    }
    crate::api::uconv::read_ustr(p, addr, max)
}

/// Stores `s` and a NUL at `addr`.
pub(crate) fn put_sz(p: &mut Process, addr: u32, s: &[u8]) -> Result<(), Stop> {
    let mut v = Vec::with_capacity(s.len() + 1);
    v.extend_from_slice(s);
    v.push(0);
    write(p, addr, &v)
}

/// Zeroes `n` guest bytes at `addr` (in pieces: `n` is the guest's).
pub(crate) fn zero(p: &mut Process, addr: u32, n: u32) -> Result<(), Stop> {
    let mut at = 0;
    while at < n {
        let k = (n - at).min(PAGE);
        write(p, addr.wrapping_add(at), &vec![0; k as usize])?;
        at += k;
    }
    Ok(())
}

/// The dword at `ESP + off` (arguments beyond the registers).
pub(crate) fn stack_arg(p: &mut Process, off: u32) -> Result<u32, Stop> {
    let esp = p.machine.cpu().gpr[emu::Gpr::Esp];
    rd32(p, esp.wrapping_add(off))
}

/// Arguments of a formatted call: the guest's stack (or a va_list)
/// from `at`.
pub(crate) struct GuestArgs<'a> {
    pub(crate) p: &'a mut Process,
    pub(crate) at: u32,
}

impl format::ArgSource for GuestArgs<'_> {
    type Err = Stop;
    fn next_u32(&mut self) -> Result<u32, Stop> {
        let v = rd32(self.p, self.at)?;
        self.at = self.at.wrapping_add(4);
        Ok(v)
    }
    fn string(&mut self, addr: u32, max: usize) -> Result<Vec<u8>, Stop> {
        cstr_max(self.p, addr, max.min(MAX_STR as usize) as u32)
    }
    fn wstring(&mut self, addr: u32, max: usize) -> Result<Vec<u16>, Stop> {
        wstr_max(self.p, addr, max.min(MAX_STR as usize) as u32)
    }
    fn store(&mut self, addr: u32, value: u64, size: u32) -> Result<(), Stop> {
        write(self.p, addr, &value.to_le_bytes()[..size as usize])
    }
    fn too_long(&mut self) -> Stop {
        Stop::Outcome(crate::error::Outcome::HostError(format!(
            "a printf-family call made more than {} bytes",
            format::MAX_OUT
        )))
    }
}

/// Where scanf's pointers come from and what it stores.
pub(crate) struct GuestSink<'a> {
    pub(crate) p: &'a mut Process,
    pub(crate) at: u32,
}

impl format::Sink for GuestSink<'_> {
    type Err = Stop;
    fn next_ptr(&mut self) -> Result<u32, Stop> {
        let v = rd32(self.p, self.at)?;
        self.at = self.at.wrapping_add(4);
        Ok(v)
    }
    fn put(&mut self, addr: u32, bytes: &[u8]) -> Result<(), Stop> {
        write(self.p, addr, bytes)
    }
}

/// The printf family: `fmt` at `fmt_addr`, arguments from `args_at`.
pub(crate) fn format_at(p: &mut Process, fmt_addr: u32, args_at: u32) -> Result<Vec<u8>, Stop> {
    let fmt = cstr(p, fmt_addr)?;
    format::printf(&fmt, &mut GuestArgs { p, at: args_at })
}
