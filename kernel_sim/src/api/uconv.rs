//! UCONV: the Unicode conversion objects of OS/2's Unicode API
//! (`uconv.h`), between a code page and UCS-2. LIBUNI (`libuni.rs`)
//! shares the per-process object table and the guest helpers here.
//!
//! Decisions, where the toolkit's header leaves room:
//! - **Objects** are handles into the process's table ([`UniObjects`]),
//!   never reused within a run; a handle of the wrong kind or a freed one
//!   is UCONV_EBADF (ULS_BADOBJECT).
//! - **Code set names** are those of [`super::codepage`], optionally
//!   followed by `@` and comma-separated modifiers: `map=data|display|
//!   crlf|lf|cdra`, `sub=yes|no|to-ucs|from-ucs`, `subchar=\xNN`,
//!   `subuni=\xNNNN`, `path=yes|no`. An unknown page or modifier is
//!   UCONV_EINVAL.
//! - **Defaults:** data mode (the display mask `DSPMASK_DATA`, 0x7F a
//!   control), substitution in both directions, substitute byte 0x1A
//!   (the PC's SUB) and substitute UniChar U+FFFD. With substitution off
//!   an unmappable character stops the conversion with UCONV_EILSEQ,
//!   the pointers left at it.
//! - **The `subst` argument** of UniUconvToUcs/FromUcs receives the
//!   number of substitutions this call made (it may be NULL).
//! - **Bad pointers.** These functions have no error code for an
//!   unreadable or unwritable argument: where the real DLL's code would
//!   take an access violation, the run ends with the same report as an
//!   unhandled page fault, at the caller's return address. The guest's
//!   exception handlers are not called.
//! - **UCS-2 endianness** is always the system's (little endian):
//!   `endian` is stored and reported, but both fields must be
//!   ENDIAN_SYSTEM or ENDIAN_LITTLE.

use emu::{Gpr, SegReg};

use super::codepage::{self, CodePage, Controls, Decoded, PROCESS_CP};
use super::{ApiDef, Call, Stop};
use crate::error::Outcome;
use crate::process::Process;

/// ULS_SUCCESS.
pub(crate) const ULS_SUCCESS: u32 = 0;
/// ULS_ILLEGALSEQUENCE (UCONV_EILSEQ).
pub(crate) const UCONV_EILSEQ: u32 = 0x0002_0402;
/// ULS_NOMEMORY.
pub(crate) const ULS_NOMEMORY: u32 = 0x0002_040D;
/// ULS_INVALID (UCONV_EINVAL).
pub(crate) const ULS_INVALID: u32 = 0x0002_040E;
/// ULS_BADOBJECT (UCONV_EBADF).
pub(crate) const ULS_BADOBJECT: u32 = 0x0002_040F;
/// ULS_BUFFERFULL (UCONV_E2BIG).
pub(crate) const UCONV_E2BIG: u32 = 0x0002_0412;
/// ULS_RANGE.
pub(crate) const ULS_RANGE: u32 = 0x0002_0413;
/// ULS_UNSUPPORTED.
pub(crate) const ULS_UNSUPPORTED: u32 = 0x0002_0414;
/// ULS_BADATTR (UCONV_BADATTR).
pub(crate) const UCONV_BADATTR: u32 = 0x0002_0415;

/// The first object handle (an opaque pointer-sized value to the guest).
const FIRST_HANDLE: u32 = 0x5500_0001;

/// Objects a process holds at most (ULS_NOMEMORY beyond).
const MAX_OBJECTS: usize = 4096;

/// Bytes of `uconv_attribute_t`.
const ATTR_SIZE: usize = 60;

/// UCONV's entries.
pub static DEFS: &[ApiDef] = &[
    api!("UCONV" 1 "UniCreateUconvObject" Sys32 [P, P] raw create),
    api!("UCONV" 2 "UniUconvToUcs" Sys32 [L, P, P, P, P, P] raw to_ucs),
    api!("UCONV" 3 "UniUconvFromUcs" Sys32 [L, P, P, P, P, P] raw from_ucs),
    api!("UCONV" 4 "UniFreeUconvObject" Sys32 [L] raw free),
    api!("UCONV" 7 "UniQueryUconvObject" Sys32 [L, P, L, P, P, P] raw query),
    api!("UCONV" 8 "UniSetUconvObject" Sys32 [L, P] raw set),
    api!("UCONV" 10 "UniMapCpToUcsCp" Sys32 [L, P, L] raw map_cp),
    api!("UCONV" 11 "UniStrFromUcs" Sys32 [L, P, P, L] raw str_from_ucs),
    api!("UCONV" 12 "UniStrToUcs" Sys32 [L, P, P, L] raw str_to_ucs),
];

/// A conversion object.
#[derive(Clone, Debug)]
pub(crate) struct Uconv {
    cp: CodePage,
    ctl: Controls,
    /// Substitute unmappable characters from Unicode / to Unicode.
    sub_from: bool,
    sub_to: bool,
    subchar: Vec<u8>,
    subuni: u16,
    converttype: u32,
    endian: (u16, u16),
}

impl Uconv {
    fn new(cp: CodePage) -> Uconv {
        let subchar = match cp.scheme {
            codepage::Scheme::Ucs2 => 0xFFFDu16.to_le_bytes().to_vec(),
            codepage::Scheme::Utf8 => "\u{FFFD}".as_bytes().to_vec(),
            codepage::Scheme::Sbcs { .. } => vec![0x1A],
        };
        Uconv {
            cp,
            ctl: Controls {
                displaymask: u32::MAX,
                ctrl7f: true,
            },
            sub_from: true,
            sub_to: true,
            subchar,
            subuni: 0xFFFD,
            converttype: 1,
            endian: (0, 0),
        }
    }

    /// Parse a code set name with its modifiers.
    fn from_name(name: &str) -> Option<Uconv> {
        let (page, mods) = name.split_once('@').unwrap_or((name, ""));
        let mut u = Uconv::new(CodePage::by_name(page)?);
        for m in mods.split(',').filter(|m| !m.is_empty()) {
            let (k, v) = m.split_once('=')?;
            match (
                k.to_ascii_lowercase().as_str(),
                v.to_ascii_lowercase().as_str(),
            ) {
                ("map", "data") => u.ctl.displaymask = u32::MAX,
                ("map", "display") => u.ctl.displaymask = 0,
                ("map", "crlf") => u.ctl.displaymask = 0x2400,
                ("map", "lf") => u.ctl.displaymask = 0x0400,
                ("map", "cdra") => u.converttype |= 2,
                ("sub", "yes") => (u.sub_from, u.sub_to) = (true, true),
                ("sub", "no") => (u.sub_from, u.sub_to) = (false, false),
                ("sub", "to-ucs") => (u.sub_from, u.sub_to) = (false, true),
                ("sub", "from-ucs") => (u.sub_from, u.sub_to) = (true, false),
                ("path", "yes") => u.converttype |= 4,
                ("path", "no") => u.converttype &= !4,
                ("subchar", v) => {
                    let b = u8::from_str_radix(v.strip_prefix("\\x")?, 16).ok()?;
                    u.subchar = vec![b];
                }
                ("subuni", v) => {
                    u.subuni = u16::from_str_radix(v.strip_prefix("\\x")?, 16).ok()?;
                }
                _ => return None,
            }
        }
        Some(u)
    }
}

/// A locale object of LIBUNI: its name (`en_US`, `C`).
#[derive(Clone, Debug)]
pub(crate) struct Locale {
    pub(crate) name: String,
}

#[derive(Clone, Debug)]
enum Object {
    Uconv(Uconv),
    Locale(Locale),
}

/// A process's Unicode API objects.
#[derive(Debug, Default)]
pub(crate) struct UniObjects {
    slots: Vec<Option<Object>>,
}

impl UniObjects {
    fn add(&mut self, o: Object) -> Option<u32> {
        if self.slots.len() >= MAX_OBJECTS {
            return None;
        }
        self.slots.push(Some(o));
        Some(FIRST_HANDLE + self.slots.len() as u32 - 1)
    }

    fn slot(&mut self, h: u32) -> Option<&mut Option<Object>> {
        let i = h.checked_sub(FIRST_HANDLE)?;
        self.slots.get_mut(i as usize)
    }

    fn uconv(&mut self, h: u32) -> Option<Uconv> {
        match self.slot(h)? {
            Some(Object::Uconv(u)) => Some(u.clone()),
            _ => None,
        }
    }

    /// A new locale object's handle (`None`: too many).
    pub(crate) fn add_locale(&mut self, l: Locale) -> Option<u32> {
        self.add(Object::Locale(l))
    }

    /// The locale object `h`.
    pub(crate) fn locale(&mut self, h: u32) -> Option<&Locale> {
        match self.slot(h)? {
            Some(Object::Locale(l)) => Some(l),
            _ => None,
        }
    }

    /// Free locale object `h`; false if it is none.
    pub(crate) fn free_locale(&mut self, h: u32) -> bool {
        match self.slot(h) {
            Some(s @ Some(Object::Locale(_))) => {
                *s = None;
                true
            }
            _ => false,
        }
    }
}

// ---- guest memory, as the real DLL's code would touch it ----

/// The stop for an access the real DLL would fault on: an unhandled
/// page fault at the caller's return address.
pub(crate) fn fault(p: &mut Process, addr: u32, write: bool) -> Stop {
    let cpu = p.machine.cpu();
    let (cs, ss, esp) = (
        cpu.sreg(SegReg::Cs).selector,
        cpu.seg[SegReg::Ss].base,
        cpu.gpr[Gpr::Esp],
    );
    let mut b = [0u8; 4];
    let eip = p
        .machine
        .read_linear(ss.wrapping_add(esp), &mut b)
        .map_or(0, |_| u32::from_le_bytes(b));
    Stop::Outcome(Outcome::GuestFault {
        vector: emu::vector::PF,
        error: Some(if write { 6 } else { 4 }),
        cs,
        eip,
        cr2: Some(addr),
    })
}

/// Read `n` bytes at `addr`.
pub(crate) fn read(p: &mut Process, addr: u32, n: u32) -> Result<Vec<u8>, Stop> {
    if n == 0 {
        return Ok(Vec::new());
    }
    match p.read_mem(addr, n) {
        Some(v) if addr != 0 => Ok(v),
        _ => Err(fault(p, addr, false)),
    }
}

/// Write `data` at `addr`.
pub(crate) fn write(p: &mut Process, addr: u32, data: &[u8]) -> Result<(), Stop> {
    if data.is_empty() || (addr != 0 && p.write_mem(addr, data)) {
        Ok(())
    } else {
        Err(fault(p, addr, true))
    }
}

/// The dword at `addr`.
pub(crate) fn rd32(p: &mut Process, addr: u32) -> Result<u32, Stop> {
    let b = read(p, addr, 4)?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Store a dword at `addr`.
pub(crate) fn wr32(p: &mut Process, addr: u32, v: u32) -> Result<(), Stop> {
    write(p, addr, &v.to_le_bytes())
}

/// The UniChars at `addr` up to (not including) the NUL, at most `max`.
pub(crate) fn read_ustr(p: &mut Process, addr: u32, max: u32) -> Result<Vec<u16>, Stop> {
    let mut out = Vec::new();
    let mut at = addr;
    while (out.len() as u32) < max {
        // Up to the end of the page, so a string ending before an
        // unmapped page reads.
        let room = ((0x1000 - (at & 0xFFF)) / 2).clamp(1, 256);
        let Some(b) = p.read_mem(at, room * 2).filter(|_| at != 0) else {
            let b = read(p, at, 2)?;
            let u = u16::from_le_bytes([b[0], b[1]]);
            if u == 0 {
                return Ok(out);
            }
            out.push(u);
            at = at.wrapping_add(2);
            continue;
        };
        for c in b.chunks_exact(2) {
            let u = u16::from_le_bytes([c[0], c[1]]);
            if u == 0 || out.len() as u32 >= max {
                return Ok(out);
            }
            out.push(u);
        }
        at = at.wrapping_add(room * 2);
    }
    Ok(out)
}

/// Store UniChars at `addr`.
pub(crate) fn write_units(p: &mut Process, addr: u32, units: &[u16]) -> Result<(), Stop> {
    let bytes: Vec<u8> = units.iter().flat_map(|u| u.to_le_bytes()).collect();
    write(p, addr, &bytes)
}

/// A UniChar string as a Rust string (unpaired surrogates become U+FFFD).
pub(crate) fn ustr_text(units: &[u16]) -> String {
    char::decode_utf16(units.iter().copied())
        .map(|c| c.unwrap_or('\u{FFFD}'))
        .collect()
}

// ---- the entries ----

fn create(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let name = read_ustr(p, c.l(0), 256)?;
    let out = c.l(1);
    rd32(p, out)?;
    let Some(u) = Uconv::from_name(&ustr_text(&name)) else {
        return Ok(ULS_INVALID);
    };
    let Some(h) = p.pcb.uni.add(Object::Uconv(u)) else {
        return Ok(ULS_NOMEMORY);
    };
    wr32(p, out, h)?;
    Ok(ULS_SUCCESS)
}

fn free(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    Ok(match p.pcb.uni.slot(c.l(0)) {
        Some(s @ Some(Object::Uconv(_))) => {
            *s = None;
            ULS_SUCCESS
        }
        _ => ULS_BADOBJECT,
    })
}

/// What one conversion call did.
struct Converted {
    consumed: u32,
    produced: Vec<u8>,
    units: u32,
    substitutions: u32,
    rc: u32,
}

impl Converted {
    /// Nothing converted yet, no error.
    fn empty() -> Self {
        Converted {
            consumed: 0,
            produced: Vec::new(),
            units: 0,
            substitutions: 0,
            rc: ULS_SUCCESS,
        }
    }
}

/// The buffers of UniUconvToUcs and UniUconvFromUcs (uconv, &in,
/// &inleft, &out, &outleft, &subst): where their pointers and counts
/// are, and what they were at the call.
struct Buffers {
    pin: u32,
    pinlen: u32,
    pout: u32,
    poutlen: u32,
    psubst: u32,
    inp: u32,
    inlen: u32,
    outp: u32,
    outlen: u32,
}

impl Buffers {
    fn of(p: &mut Process, c: &Call) -> Result<Buffers, Stop> {
        let (pin, pinlen, pout, poutlen) = (c.l(1), c.l(2), c.l(3), c.l(4));
        Ok(Buffers {
            pin,
            pinlen,
            pout,
            poutlen,
            psubst: c.l(5),
            inp: rd32(p, pin)?,
            inlen: rd32(p, pinlen)?,
            outp: rd32(p, pout)?,
            outlen: rd32(p, poutlen)?,
        })
    }

    /// Stores what `r` produced and moves both buffers on past it:
    /// `in_size` and `out_size` are the bytes of one input and one
    /// output unit, `made` the output units.
    fn finish(
        &self,
        p: &mut Process,
        r: &Converted,
        (in_size, out_size): (u32, u32),
        made: u32,
    ) -> Result<u32, Stop> {
        write(p, self.outp, &r.produced)?;
        wr32(p, self.pin, self.inp.wrapping_add(r.consumed * in_size))?;
        wr32(p, self.pinlen, self.inlen - r.consumed)?;
        wr32(p, self.pout, self.outp.wrapping_add(made * out_size))?;
        wr32(p, self.poutlen, self.outlen - made)?;
        if self.psubst != 0 {
            wr32(p, self.psubst, r.substitutions)?;
        }
        Ok(r.rc)
    }
}

fn to_ucs(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let Some(u) = p.pcb.uni.uconv(c.l(0)) else {
        return Ok(ULS_BADOBJECT);
    };
    let b = Buffers::of(p, c)?;
    let input = read(p, b.inp, b.inlen)?;
    let r = decode_into(&u, &input, b.outlen);
    b.finish(p, &r, (1, 2), r.units)
}

/// Convert `input` to at most `room` UniChars.
fn decode_into(u: &Uconv, input: &[u8], room: u32) -> Converted {
    let mut r = Converted::empty();
    let mut at = 0usize;
    while at < input.len() {
        if r.units == room {
            r.rc = UCONV_E2BIG;
            break;
        }
        let (unit, used) = match codepage::decode(u.cp, u.ctl, &input[at..]) {
            Decoded::Char(unit, n) => (unit, n),
            Decoded::Illegal(n) if u.sub_to => {
                r.substitutions += 1;
                (u.subuni, n)
            }
            Decoded::Illegal(_) => {
                r.rc = UCONV_EILSEQ;
                break;
            }
            Decoded::Incomplete => {
                r.rc = ULS_INVALID;
                break;
            }
        };
        r.produced.extend_from_slice(&unit.to_le_bytes());
        r.units += 1;
        at += used;
    }
    r.consumed = at as u32;
    r
}

fn from_ucs(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let Some(u) = p.pcb.uni.uconv(c.l(0)) else {
        return Ok(ULS_BADOBJECT);
    };
    let b = Buffers::of(p, c)?;
    let Some(nbytes) = b.inlen.checked_mul(2) else {
        return Err(fault(p, b.inp, false));
    };
    let bytes = read(p, b.inp, nbytes)?;
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect();
    let r = encode_into(&u, &units, b.outlen);
    b.finish(p, &r, (2, 1), r.produced.len() as u32)
}

/// Convert `units` to at most `room` bytes.
fn encode_into(u: &Uconv, units: &[u16], room: u32) -> Converted {
    let mut r = Converted::empty();
    let mut one = Vec::new();
    for &unit in units {
        one.clear();
        let mut substituted = false;
        if codepage::encode(u.cp, u.ctl, unit, &mut one).is_none() {
            if !u.sub_from {
                r.rc = UCONV_EILSEQ;
                break;
            }
            one.extend_from_slice(&u.subchar);
            substituted = true;
        }
        if r.produced.len() + one.len() > room as usize {
            r.rc = UCONV_E2BIG;
            break;
        }
        r.produced.extend_from_slice(&one);
        r.substitutions += u32::from(substituted);
        r.consumed += 1;
    }
    r
}

fn str_to_ucs(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let Some(u) = p.pcb.uni.uconv(c.l(0)) else {
        return Ok(ULS_BADOBJECT);
    };
    let (target, source, len) = (c.l(1), c.l(2), c.l(3) as i32);
    let src = match p.read_sz(source, false, 0x10_0000) {
        Some(s) => s,
        None => return Err(fault(p, source, false)),
    };
    if len <= 0 {
        return Ok(UCONV_E2BIG);
    }
    let r = decode_into(&u, &src, len as u32 - 1);
    let mut out = r.produced;
    out.extend_from_slice(&[0, 0]);
    write(p, target, &out)?;
    Ok(r.rc)
}

fn str_from_ucs(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let Some(u) = p.pcb.uni.uconv(c.l(0)) else {
        return Ok(ULS_BADOBJECT);
    };
    let (target, source, len) = (c.l(1), c.l(2), c.l(3) as i32);
    let src = read_ustr(p, source, 0x8_0000)?;
    if len <= 0 {
        return Ok(UCONV_E2BIG);
    }
    // Room for the NUL (two bytes in UCS-2).
    let nul: &[u8] = if u.cp.scheme == codepage::Scheme::Ucs2 {
        &[0, 0]
    } else {
        &[0]
    };
    let room = (len as u32).saturating_sub(nul.len() as u32);
    let r = encode_into(&u, &src, room);
    let mut out = r.produced;
    out.extend_from_slice(nul);
    write(p, target, &out)?;
    Ok(r.rc)
}

fn map_cp(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let cp = match c.l(0) {
        0 => PROCESS_CP,
        n => n,
    };
    let name: Vec<u16> = format!("IBM-{cp}").encode_utf16().chain([0]).collect();
    if (c.l(2) as usize) < name.len() {
        return Ok(UCONV_E2BIG);
    }
    write_units(p, c.l(1), &name)?;
    Ok(ULS_SUCCESS)
}

fn attr_bytes(u: &Uconv) -> [u8; ATTR_SIZE] {
    let mut a = [0u8; ATTR_SIZE];
    let (mn, mx) = u.cp.byte_lengths();
    a[4] = mn;
    a[5] = mx;
    a[6] = 2;
    a[7] = 2;
    a[8..10].copy_from_slice(&u.cp.esid().to_le_bytes());
    a[10] = u8::from(u.sub_from) | (u8::from(u.sub_to) << 1);
    a[12..14].copy_from_slice(&u.endian.0.to_le_bytes());
    a[14..16].copy_from_slice(&u.endian.1.to_le_bytes());
    a[16..20].copy_from_slice(&u.ctl.displaymask.to_le_bytes());
    a[20..24].copy_from_slice(&u.converttype.to_le_bytes());
    a[24..26].copy_from_slice(&(u.subchar.len() as u16).to_le_bytes());
    a[26..28].copy_from_slice(&1u16.to_le_bytes());
    a[28..28 + u.subchar.len()].copy_from_slice(&u.subchar);
    a[44..46].copy_from_slice(&u.subuni.to_le_bytes());
    a
}

fn query(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let Some(u) = p.pcb.uni.uconv(c.l(0)) else {
        return Ok(ULS_BADOBJECT);
    };
    let (attr, size, first, other, udc) = (c.l(1), c.l(2), c.l(3), c.l(4), c.l(5));
    if attr != 0 {
        let a = attr_bytes(&u);
        write(p, attr, &a[..(size as usize).min(ATTR_SIZE)])?;
    }
    let mut f = [0u8; 256];
    let mut o = [0u8; 256];
    for b in 0..256usize {
        (f[b], o[b]) = match u.cp.scheme {
            codepage::Scheme::Sbcs { .. } => (1, 0),
            codepage::Scheme::Ucs2 => (2, 1),
            codepage::Scheme::Utf8 => match b {
                0..=0x7F => (1, 0),
                0x80..=0xBF => (0, 1),
                0xC2..=0xDF => (2, 0),
                0xE0..=0xEF => (3, 0),
                _ => (0, 0),
            },
        };
    }
    if first != 0 {
        write(p, first, &f)?;
    }
    if other != 0 {
        write(p, other, &o)?;
    }
    if udc != 0 {
        write(p, udc, &[0; 32 * 4])?;
    }
    Ok(ULS_SUCCESS)
}

fn set(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let h = c.l(0);
    let Some(mut u) = p.pcb.uni.uconv(h) else {
        return Ok(ULS_BADOBJECT);
    };
    let a = read(p, c.l(1), ATTR_SIZE as u32)?;
    let w = |i: usize| u16::from_le_bytes([a[i], a[i + 1]]);
    let l = |i: usize| u32::from_le_bytes([a[i], a[i + 1], a[i + 2], a[i + 3]]);
    let endian_ok = |e: u16| e == 0 || e == 0xFFFE;
    let (subchar_len, subuni_len) = (usize::from(w(24)), usize::from(w(26)));
    let max_char = usize::from(u.cp.byte_lengths().1);
    if l(0) != 0
        || a[10] > 3
        || !endian_ok(w(12))
        || !endian_ok(w(14))
        || l(20) & !7 != 0
        || subchar_len > max_char
        || subuni_len > 1
    {
        return Ok(UCONV_BADATTR);
    }
    u.sub_from = a[10] & 1 != 0;
    u.sub_to = a[10] & 2 != 0;
    u.endian = (w(12), w(14));
    u.ctl.displaymask = l(16);
    u.converttype = l(20);
    u.ctl.ctrl7f = u.converttype & 1 != 0;
    if subchar_len > 0 {
        u.subchar = a[28..28 + subchar_len].to_vec();
    }
    if subuni_len > 0 {
        u.subuni = w(44);
    }
    if let Some(s) = p.pcb.uni.slot(h) {
        *s = Some(Object::Uconv(u));
    }
    Ok(ULS_SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_modifiers() {
        let u = Uconv::from_name("IBM-850@sub=no,map=display").unwrap();
        assert_eq!(u.cp.cp, 850);
        assert!(!u.sub_from && !u.sub_to);
        assert_eq!(u.ctl.displaymask, 0);
        assert!(Uconv::from_name("IBM-850@colour=red").is_none());
        assert!(Uconv::from_name("IBM-850@subchar=\\x3F").is_some_and(|u| u.subchar == [0x3F]));
    }

    #[test]
    fn conversions_stop_where_the_docs_say() {
        let u = Uconv::from_name("IBM-1208@sub=no").unwrap();
        let r = decode_into(&u, "aé€".as_bytes(), 2);
        assert_eq!((r.rc, r.consumed, r.units), (UCONV_E2BIG, 3, 2));
        let r = decode_into(&u, &[b'a', 0xFF, b'b'], 10);
        assert_eq!((r.rc, r.consumed), (UCONV_EILSEQ, 1));
        let r = decode_into(&u, &[b'a', 0xE2, 0x82], 10);
        assert_eq!((r.rc, r.consumed), (ULS_INVALID, 1));
        let sub = Uconv::from_name("IBM-437").unwrap();
        let r = encode_into(&sub, &[0x41, 0x20AC, 0xE9], 10);
        assert_eq!((r.rc, r.substitutions), (ULS_SUCCESS, 1));
        assert_eq!(r.produced, [0x41, 0x1A, 0x82]);
        let r = encode_into(&sub, &[0x41, 0xE9], 1);
        assert_eq!((r.rc, r.consumed, r.produced), (UCONV_E2BIG, 1, vec![0x41]));
    }
}
