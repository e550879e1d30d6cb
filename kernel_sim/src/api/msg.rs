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

use binread::{Bytes, ErrorKind};

use crate::api::sysmsg;
use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call};
use crate::process::Process;
use crate::rc::*;

/// The most insertion strings a message takes.
const MAX_INSERTS: u32 = 9;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("MSG" 2 "DosTrueGetMessage" Far16 [P, W, P, W, W, S, P, P] |p, c| get_message(p, c, &FAR16)),
    api!("MSG" 3 "DosInsMessage" Far16 [P, W, P, W, P, W, P] insert),
    api!("MSG" 4 "DosInsertMessage" Sys32 [P, L, P, L, P, L, P] insert),
    api!("MSG" 6 "DosTrueGetMessage" Sys32 [P, P, L, P, L, L, S, P] raw true_get_message32),
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
pub fn expand(msg: &[u8], inserts: &[Vec<u8>], cap: usize) -> Option<Vec<u8>> {
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

/// The largest message file read (MKMSGF files are far smaller).
const MAX_MSG_FILE: u64 = 4 << 20;

/// The file's host path: a name with a drive or directory as it is,
/// a bare name along DPATH.
fn find_msg_file(p: &mut Process, name: &[u8]) -> Option<std::path::PathBuf> {
    let direct = name.iter().any(|&b| b == b'\\' || b == b'/' || b == b':');
    let mut tries: Vec<Vec<u8>> = Vec::new();
    if direct {
        tries.push(name.to_vec());
    } else {
        let dpath = p
            .cfg
            .env
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("DPATH"))
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        for dir in dpath.split(';').filter(|d| !d.is_empty()) {
            let mut t = crate::process::latin1(dir);
            if !t.ends_with(b"\\") {
                t.push(b'\\');
            }
            t.extend_from_slice(name);
            tries.push(t);
        }
    }
    tries.into_iter().find_map(|t| {
        let r = p.files().resolve(&t).ok()?;
        (r.exists == Some(false)).then_some(r.host)
    })
}

/// A message of an MKMSGF file: its component, type letter and text.
pub fn message(file: &[u8], number: u32) -> ApiResult<(String, u8, Vec<u8>)> {
    read_message(Bytes::new(file), number)
        .map_err(|_| ERROR_MR_INV_MSGF_FORMAT)?
        .ok_or(ERROR_MR_MID_NOT_FOUND)
}

/// [`message`] through the shared reader: `None` when the file has no
/// message `number`.
fn read_message(b: Bytes<'_>, number: u32) -> binread::Result<Option<(String, u8, Vec<u8>)>> {
    const HEADER: &str = "MKMSGF header";
    const INDEX: &str = "MKMSGF message index";
    const MESSAGE: &str = "MKMSGF message";
    let header = b.slice(0, 0x1F, HEADER)?;
    if &header[..8] != b"\xFFMKMSGF\0" {
        return Err(binread::Error::new(0, HEADER, ErrorKind::BadSignature));
    }
    let comp = binread::latin1(&header[8..11]);
    let count = u32::from(b.u16(0x0B, HEADER)?);
    let first = u32::from(b.u16(0x0D, HEADER)?);
    let small = b.u8(0x0F, HEADER)? != 0;
    let index = u64::from(b.u16(0x12, HEADER)?);
    if number < first || number >= first + count {
        return Ok(None);
    }
    let entry = |i: u32| -> binread::Result<u64> {
        if small {
            b.u16(index + 2 * u64::from(i), INDEX).map(u64::from)
        } else {
            b.u32(index + 4 * u64::from(i), INDEX).map(u64::from)
        }
    };
    let i = number - first;
    let start = entry(i)?;
    let end = if i + 1 < count {
        entry(i + 1)?
    } else {
        b.len()
    };
    if end <= start {
        return Err(binread::Error::new(
            start,
            MESSAGE,
            ErrorKind::Invalid("empty"),
        ));
    }
    let body = b.slice(start, end - start, MESSAGE)?;
    Ok(Some((comp, body[0], body[1..].to_vec())))
}

/// Where each argument of DosTrueGetMessage is.
struct Layout {
    table: usize,
    count: usize,
    buf: usize,
    cap: usize,
    number: usize,
    file: usize,
    len: usize,
    seg: usize,
}

/// MSG.2, the 16-bit entry DOSGETMESSAGE's stub calls (far pascal): the
/// DosGetMessage arguments, then the program's message segment.
const FAR16: Layout = Layout {
    table: 0,
    count: 1,
    buf: 2,
    cap: 3,
    number: 4,
    file: 5,
    len: 6,
    seg: 7,
};

/// MSG.6, the 32-bit entry: OS2386.LIB's DosGetMessage stub (in the
/// program's MSGSEG32 object) puts the address of that object in front
/// of the DosGetMessage arguments (and jumps, leaving its caller's
/// return address on top), so the caller pops only its seven arguments:
/// MSG.6 removes the eighth itself ([`true_get_message32`]).
const SYS32: Layout = Layout {
    seg: 0,
    table: 1,
    count: 2,
    buf: 3,
    cap: 4,
    number: 5,
    file: 6,
    len: 7,
};

/// MSG.6: [`get_message`], then the return over the message segment
/// argument the stub added (ESP ends 8 bytes up, as after `ret 4`).
fn true_get_message32(p: &mut Process, c: &Call) -> Result<u32, crate::api::Stop> {
    let rc = get_message(p, c, &SYS32).err().unwrap_or(NO_ERROR);
    let esp = p.machine.cpu().gpr[emu::Gpr::Esp];
    let ret = crate::api::uconv::rd32(p, esp)?;
    let gpr = p.machine.gpr_mut();
    gpr[emu::Gpr::Esp] = esp.wrapping_add(8);
    gpr[emu::Gpr::Eax] = rc;
    p.machine.set_eip(ret);
    Err(crate::api::Stop::Resumed)
}

/// DosTrueGetMessage (16-bit, MSG.2) and Dos32TrueGetMessage (MSG.6):
/// a message from those MSGBIND bound into the program (32-bit), else
/// from the `.MSG` file along DPATH (OSO001.MSG, when none is there,
/// from the system's own: `sysmsg.rs`). E and W messages get the
/// `COMPnnnn: ` prefix; `%0` ends the text (no line end).
///
/// When the message cannot be had (ERROR_MR_MID_NOT_FOUND,
/// ERROR_MR_UN_ACC_MSGF, ERROR_MR_INV_MSGF_FORMAT, ERROR_MR_INV_IVCOUNT)
/// the buffer receives the system's message for that error (as much as
/// fits) and its length, and the call returns the error, as OS/2
/// documents; a message longer than the buffer is returned as far as it
/// fits, with ERROR_MR_MSG_TOO_LONG.
fn get_message(p: &mut Process, c: &Call, at: &Layout) -> ApiResult<()> {
    match get_message_text(p, c, at) {
        Ok(out) => put_message(p, c, at, &out).map(|_| ()),
        Err((rc, Some(text))) => {
            put_message(p, c, at, &text)?;
            Err(rc)
        }
        Err((rc, None)) => Err(rc),
    }
}

/// Store a message's text (as much as the buffer holds) and its length.
fn put_message(p: &mut Process, c: &Call, at: &Layout, text: &[u8]) -> ApiResult<()> {
    let cap = if c.far16 {
        u32::from(c.w(at.cap))
    } else {
        c.l(at.cap)
    };
    let text = &text[..text.len().min(cap as usize)];
    if c.far16 {
        p.put_u16(c, at.len, text.len() as u16)?;
    } else {
        p.put_u32(c, at.len, text.len() as u32)?;
    }
    if text.is_empty() {
        return Ok(());
    }
    p.put_bytes(c, at.buf, text)
}

/// The message DosGetMessage returns, or the error with the text to put
/// in the buffer for it.
fn get_message_text(
    p: &mut Process,
    c: &Call,
    at: &Layout,
) -> Result<Vec<u8>, (u32, Option<Vec<u8>>)> {
    let word = |i: usize| if c.far16 { u32::from(c.w(i)) } else { c.l(i) };
    let count = word(at.count);
    let cap = word(at.cap);
    let number = word(at.number);
    let plain = |rc: u32| (rc, None);
    let name = p.arg_sz(c, at.file).map_err(plain)?;
    let failed = |rc: u32| (rc, sysmsg::failure_text(rc, number, &name));
    if count > MAX_INSERTS {
        return Err(failed(ERROR_MR_INV_IVCOUNT));
    }
    let table = p.arg_bytes(c, at.table, 4 * count).map_err(plain)?;
    let mut inserts = Vec::with_capacity(count as usize);
    for e in table.chunks_exact(4) {
        let raw = u32::from_le_bytes([e[0], e[1], e[2], e[3]]);
        let s = p
            .read_sz(raw, c.far16, 0x1_0000)
            .ok_or(plain(ERROR_INVALID_ADDRESS))?;
        inserts.push(s);
    }
    let bound = bound_message(p, c.l(at.seg), c.far16, &name, number);
    let (comp, kind, mut text) = match bound {
        Some(m) => m,
        None => file_message(p, &name, number).map_err(failed)?,
    };
    if let Some(z) = text.windows(2).position(|w| w == b"%0") {
        text.truncate(z);
    }
    let mut full = Vec::new();
    if matches!(kind, b'E' | b'W') {
        full.extend(format!("{comp}{number:04}: ").bytes());
    }
    full.extend(text);
    match expand(&full, &inserts, cap as usize) {
        Some(out) => Ok(out),
        // As much as fits, with the error.
        None => {
            let out = expand(&full, &inserts, usize::MAX).unwrap_or_default();
            Err((ERROR_MR_MSG_TOO_LONG, Some(out)))
        }
    }
}

/// Bytes of a MSGSEG32 object read at most.
const MAX_MSGSEG: u32 = 0x10_0000;

/// A message MSGBIND bound into the program's message segment at `seg`
/// (16:16 for the 16-bit entry, flat for the 32-bit one) for the message
/// file `name`: its component, type and text.
///
/// The segment, as OS2286.LIB and OS2386.LIB lay it out and MSGBIND
/// fills it: `FF "MKMSGSEG" 00` (16-bit) or `FF "MSGSEG32" 00`
/// (32-bit), a word of flags, at 0x0E the offset of the bound-file
/// table: a word count, then the offsets of the files' names, then the
/// offsets of their indexes (all offsets from the start of the segment or
/// object holding the message segment). An index is the 3-letter
/// component, a word count and a word offset per message; a message is
/// its number (word), length (word), type letter and text. (Read from
/// IBM's PACK2, which binds OSO001.MSG and PACK.MSG: names first, then
/// indexes.)
fn bound_message(
    p: &mut Process,
    seg: u32,
    far16: bool,
    name: &[u8],
    number: u32,
) -> Option<(String, u8, Vec<u8>)> {
    let (lin, signature) = if far16 {
        (p.ptr(seg, true, 0x12)?, b"\xFFMKMSGSEG\0")
    } else {
        (seg, b"\xFFMSGSEG32\0")
    };
    let head = p.read_mem(lin, 0x12)?;
    if &head[..10] != signature {
        return None;
    }
    // Offsets are from the start of the segment (16-bit) or of the
    // object holding the message segment (32-bit: the linker leaves them
    // unrelocated).
    let base = if far16 {
        p.selector_to_linear((seg >> 16) as u16, 0, 1)?
    } else {
        p.pcb
            .modules
            .iter()
            .flat_map(|m| &m.objects)
            .find(|o| o.base <= seg && seg - o.base < o.size)
            .map_or(seg, |o| o.base)
    };
    // A word in the 16-bit segment, a dword in the 32-bit one.
    let table = if far16 {
        u32::from(u16::from_le_bytes([head[0x0E], head[0x0F]]))
    } else {
        u32::from_le_bytes([head[0x0E], head[0x0F], head[0x10], head[0x11]])
    };
    let files = base + table;
    let u16_at = |p: &mut Process, at: u32| -> Option<u32> {
        let b = p.read_mem(at, 2)?;
        Some(u32::from(u16::from_le_bytes([b[0], b[1]])))
    };
    let n = u16_at(p, files)?;
    let base_name = tdf::module::file_name_bytes(name);
    let n = n.min(64);
    for f in 0..n {
        let name_off = u16_at(p, files + 2 + 2 * f)?;
        let index = base + u16_at(p, files + 2 + 2 * n + 2 * f)?;
        let bound_name = p.read_sz(base + name_off, false, 260)?;
        if !bound_name.eq_ignore_ascii_case(base_name) {
            continue;
        }
        let comp = p.read_mem(index, 3)?;
        let count = u16_at(p, index + 3)?;
        for i in 0..count {
            let at = u16_at(p, index + 5 + 2 * i)?;
            if at >= MAX_MSGSEG {
                return None;
            }
            let rec = base + at;
            if u16_at(p, rec)? != number {
                continue;
            }
            let len = u16_at(p, rec + 2)?;
            let body = p.read_mem(rec + 4, len)?;
            let (&kind, text) = body.split_first()?;
            return Some((binread::latin1(&comp), kind, text.to_vec()));
        }
        return None;
    }
    None
}

/// A message of the `.MSG` file `name` (along DPATH).
fn file_message(p: &mut Process, name: &[u8], number: u32) -> ApiResult<(String, u8, Vec<u8>)> {
    let Some(host) = find_msg_file(p, name) else {
        if sysmsg::is_system_file(name) {
            let (kind, text) = sysmsg::message(number).ok_or(ERROR_MR_MID_NOT_FOUND)?;
            return Ok(("SYS".into(), kind, text.to_vec()));
        }
        return Err(ERROR_MR_UN_ACC_MSGF);
    };
    let size = std::fs::metadata(&host)
        .map_err(|_| ERROR_MR_UN_ACC_MSGF)?
        .len();
    if size > MAX_MSG_FILE {
        return Err(ERROR_MR_INV_MSGF_FORMAT);
    }
    let file = std::fs::read(&host).map_err(|_| ERROR_MR_UN_ACC_MSGF)?;
    message(&file, number)
}
