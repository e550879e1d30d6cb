//! Strings, memory, characters, numbers, the environment, wide strings
//! (wchar_t is UCS-2) and iconv. The multibyte code set is the
//! process's code page (437); iconv converts between the code pages
//! [`crate::api::codepage`] knows.

use super::{
    Call, Process, Stop, cstr, cstr_max, data, format, malloc, put_sz, rt, set_errno, stack_arg,
    wstr_max,
};
use crate::api::codepage::{self, CodePage, Controls, Decoded, PROCESS_CP};
use crate::api::uconv::{rd32, read, wr32, write, write_units};

use super::{E2BIG, EILSEQ};
const MAX_W: u32 = 0x80_0000;

/// Controls as controls.
const CTL: Controls = Controls {
    displaymask: u32::MAX,
    ctrl7f: true,
};

/// Is `c` (an int, EOF is -1) in the class (C locale: ASCII only)?
pub(super) fn ctype(c: u32, f: impl Fn(&u8) -> bool) -> bool {
    u8::try_from(c).is_ok_and(|b| f(&b))
}

/// Is the wide character `c` in the class?
pub(super) fn wctype(c: u32, f: impl Fn(char) -> bool) -> bool {
    char::from_u32(c & 0xFFFF).is_some_and(f)
}

pub(super) fn to_case(c: u32, upper: bool) -> u32 {
    match u8::try_from(c) {
        Ok(b) if upper => u32::from(b.to_ascii_uppercase()),
        Ok(b) => u32::from(b.to_ascii_lowercase()),
        Err(_) => c,
    }
}

pub(super) fn to_wcase(c: u32, upper: bool) -> u32 {
    let Some(ch) = char::from_u32(c & 0xFFFF) else {
        return c;
    };
    let mut m = if upper {
        ch.to_uppercase().collect::<Vec<_>>()
    } else {
        ch.to_lowercase().collect::<Vec<_>>()
    };
    match (m.len(), m.pop()) {
        (1, Some(x)) if (x as u32) < 0x1_0000 => x as u32,
        _ => c,
    }
}

pub(super) fn atoi(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let s = cstr(p, c.l(0))?;
    let t: Vec<u8> = s.iter().copied().skip_while(|b| is_space(*b)).collect();
    Ok(format::scan_int(&t, 10).map_or(0, |(v, _)| v as u32))
}

fn is_space(b: u8) -> bool {
    b.is_ascii_whitespace() || b == 0x0B
}

/// strtol/strtoul(s, &end, base): with errno ERANGE and the limit on
/// overflow.
pub(super) fn strtol(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let s = cstr(p, c.l(0))?;
    let base = c.l(2);
    let skip = s.iter().take_while(|b| is_space(**b)).count();
    let (v, used) = if base == 1 || base > 36 {
        (0, None)
    } else {
        match format::scan_int(&s[skip..], base) {
            Some((v, n)) => (v, Some(skip + n)),
            None => (0, None),
        }
    };
    if c.l(1) != 0 {
        wr32(p, c.l(1), c.l(0).wrapping_add(used.unwrap_or(0) as u32))?;
    }
    if i32::try_from(v).is_err() && u32::try_from(v).is_err() && v > -(1 << 32) {
        set_errno(p, super::ERANGE)?;
        return Ok(if v < 0 { 0x8000_0000 } else { 0x7FFF_FFFF });
    }
    Ok(v as u32)
}

pub(super) fn itoa(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (v, buf, radix) = (c.l(0) as i32, c.l(1), c.l(2));
    let text = if radix == 10 && v < 0 {
        format!("-{}", radix_text(v.unsigned_abs(), 10))
    } else {
        radix_text(v as u32, radix)
    };
    put_sz(p, buf, text.as_bytes())?;
    Ok(buf)
}

pub(super) fn itoa_unsigned(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    put_sz(p, c.l(1), radix_text(c.l(0), c.l(2)).as_bytes())?;
    Ok(c.l(1))
}

/// `v` in `radix` (2..=36, lower-case letters); another radix gives "".
fn radix_text(mut v: u32, radix: u32) -> String {
    if !(2..=36).contains(&radix) {
        return String::new();
    }
    let mut d = Vec::new();
    loop {
        d.push(char::from_digit(v % radix, radix).unwrap_or('?'));
        v /= radix;
        if v == 0 {
            break;
        }
    }
    d.iter().rev().collect()
}

// ---- memory ----

pub(super) fn memchr(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (s, ch, n) = (c.l(0), c.l(1) as u8, c.l(2));
    let mut at = 0u32;
    while at < n {
        let k = (n - at).min(0x1000);
        let b = read(p, s.wrapping_add(at), k)?;
        if let Some(i) = b.iter().position(|&x| x == ch) {
            return Ok(s.wrapping_add(at + i as u32));
        }
        at += k;
    }
    Ok(0)
}

pub(super) fn memcmp(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let n = c.l(2);
    let mut at = 0u32;
    while at < n {
        let k = (n - at).min(0x1000);
        let a = read(p, c.l(0).wrapping_add(at), k)?;
        let b = read(p, c.l(1).wrapping_add(at), k)?;
        if let Some((x, y)) = a.iter().zip(&b).find(|(x, y)| x != y) {
            return Ok((i32::from(*x) - i32::from(*y)) as u32);
        }
        at += k;
    }
    Ok(0)
}

/// memcpy and memmove (both copy as memmove: the source is read first).
pub(super) fn memcpy(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (d, s, n) = (c.l(0), c.l(1), c.l(2));
    if n > 0x1000 && !d.wrapping_sub(s) < n {
        // Overlapping, the destination above: copy from the end.
        let mut left = n;
        while left > 0 {
            let k = left.min(0x1000);
            let b = read(p, s.wrapping_add(left - k), k)?;
            write(p, d.wrapping_add(left - k), &b)?;
            left -= k;
        }
        return Ok(d);
    }
    if n > 0x1000 {
        let mut at = 0;
        while at < n {
            let k = (n - at).min(0x1000);
            let b = read(p, s.wrapping_add(at), k)?;
            write(p, d.wrapping_add(at), &b)?;
            at += k;
        }
        return Ok(d);
    }
    let b = read(p, s, n)?;
    write(p, d, &b)?;
    Ok(d)
}

pub(super) fn memset(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (d, v, n) = (c.l(0), c.l(1) as u8, c.l(2));
    let mut at = 0;
    while at < n {
        let k = (n - at).min(0x1000);
        write(p, d.wrapping_add(at), &vec![v; k as usize])?;
        at += k;
    }
    Ok(d)
}

// ---- strings ----

pub(super) fn strcat(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let d = cstr(p, c.l(0))?;
    let s = cstr(p, c.l(1))?;
    put_sz(p, c.l(0).wrapping_add(d.len() as u32), &s)?;
    Ok(c.l(0))
}

pub(super) fn strncat(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let d = cstr(p, c.l(0))?;
    let s = cstr_max(p, c.l(1), c.l(2))?;
    put_sz(p, c.l(0).wrapping_add(d.len() as u32), &s)?;
    Ok(c.l(0))
}

pub(super) fn strcpy(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let s = cstr(p, c.l(1))?;
    put_sz(p, c.l(0), &s)?;
    Ok(c.l(0))
}

pub(super) fn strncpy(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let n = c.l(2);
    let mut s = cstr_max(p, c.l(1), n)?;
    if n as usize > s.len() {
        // Zero-filled to n, written in pieces for a large n.
        write(p, c.l(0), &s)?;
        let pad = super::Call {
            vals: vec![c.l(0).wrapping_add(s.len() as u32), 0, n - s.len() as u32],
            far16: false,
        };
        memset(p, &pad)?;
        return Ok(c.l(0));
    }
    s.truncate(n as usize);
    write(p, c.l(0), &s)?;
    Ok(c.l(0))
}

pub(super) fn strdup(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let s = cstr(p, c.l(0))?;
    let a = malloc(p, s.len() as u32 + 1)?;
    if a != 0 {
        put_sz(p, a, &s)?;
    }
    Ok(a)
}

fn cmp_bytes(a: &[u8], b: &[u8], n: usize, fold: bool) -> u32 {
    let f = |x: u8| if fold { x.to_ascii_lowercase() } else { x };
    for i in 0..n {
        let (x, y) = (
            a.get(i).copied().unwrap_or(0),
            b.get(i).copied().unwrap_or(0),
        );
        if f(x) != f(y) {
            return (i32::from(f(x)) - i32::from(f(y))) as u32;
        }
        if x == 0 {
            break;
        }
    }
    0
}

pub(super) fn strcmp(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (a, b) = (cstr(p, c.l(0))?, cstr(p, c.l(1))?);
    Ok(cmp_bytes(&a, &b, a.len().max(b.len()) + 1, false))
}

pub(super) fn stricmp(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (a, b) = (cstr(p, c.l(0))?, cstr(p, c.l(1))?);
    Ok(cmp_bytes(&a, &b, a.len().max(b.len()) + 1, true))
}

pub(super) fn strncmp(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let n = c.l(2);
    let (a, b) = (cstr_max(p, c.l(0), n)?, cstr_max(p, c.l(1), n)?);
    Ok(cmp_bytes(&a, &b, n as usize, false))
}

pub(super) fn strnicmp(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let n = c.l(2);
    let (a, b) = (cstr_max(p, c.l(0), n)?, cstr_max(p, c.l(1), n)?);
    Ok(cmp_bytes(&a, &b, n as usize, true))
}

pub(super) fn strchr(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let s = cstr(p, c.l(0))?;
    let ch = c.l(1) as u8;
    if ch == 0 {
        return Ok(c.l(0).wrapping_add(s.len() as u32));
    }
    Ok(s.iter()
        .position(|&b| b == ch)
        .map_or(0, |i| c.l(0).wrapping_add(i as u32)))
}

pub(super) fn strrchr(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let s = cstr(p, c.l(0))?;
    let ch = c.l(1) as u8;
    if ch == 0 {
        return Ok(c.l(0).wrapping_add(s.len() as u32));
    }
    Ok(s.iter()
        .rposition(|&b| b == ch)
        .map_or(0, |i| c.l(0).wrapping_add(i as u32)))
}

pub(super) fn strspn(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (s, set) = (cstr(p, c.l(0))?, cstr(p, c.l(1))?);
    Ok(s.iter().take_while(|b| set.contains(b)).count() as u32)
}

pub(super) fn strcspn(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (s, set) = (cstr(p, c.l(0))?, cstr(p, c.l(1))?);
    Ok(s.iter().take_while(|b| !set.contains(b)).count() as u32)
}

pub(super) fn strpbrk(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (s, set) = (cstr(p, c.l(0))?, cstr(p, c.l(1))?);
    Ok(s.iter()
        .position(|b| set.contains(b))
        .map_or(0, |i| c.l(0).wrapping_add(i as u32)))
}

pub(super) fn strstr(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (s, t) = (cstr(p, c.l(0))?, cstr(p, c.l(1))?);
    if t.is_empty() {
        return Ok(c.l(0));
    }
    Ok(s.windows(t.len())
        .position(|w| w == t.as_slice())
        .map_or(0, |i| c.l(0).wrapping_add(i as u32)))
}

/// strupr/strlwr in place.
pub(super) fn map_case(p: &mut Process, addr: u32, upper: bool) -> Result<u32, Stop> {
    let mut s = cstr(p, addr)?;
    for b in &mut s {
        *b = to_case(u32::from(*b), upper) as u8;
    }
    write(p, addr, &s)?;
    Ok(addr)
}

/// strtok(s, delims): the position is kept per thread.
pub(super) fn strtok(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let tid = p.current_tid();
    let start = if c.l(0) != 0 {
        c.l(0)
    } else {
        rt(p).strtok.get(&tid).copied().unwrap_or(0)
    };
    if start == 0 {
        return Ok(0);
    }
    let set = cstr(p, c.l(1))?;
    let s = cstr(p, start)?;
    let skip = s.iter().take_while(|b| set.contains(b)).count();
    if skip == s.len() {
        rt(p).strtok.insert(tid, 0);
        return Ok(0);
    }
    let tok = start + skip as u32;
    let len = s[skip..].iter().take_while(|b| !set.contains(b)).count();
    let end = tok + len as u32;
    let next = if skip + len < s.len() {
        write(p, end, &[0])?;
        end + 1
    } else {
        0
    };
    rt(p).strtok.insert(tid, next);
    Ok(tok)
}

/// strerror's text.
pub(super) fn strerror_text(e: u32) -> String {
    let t = match e {
        0 => "No error",
        1 => "Domain error",
        2 => "Result out of range",
        10 => "The file does not exist",
        13 => "Not enough memory",
        16 => "The file exists",
        19 => "The file cannot be repositioned",
        23 => "No such file or directory",
        24 => "Permission denied",
        25 => "Too many open files",
        35 => "Interrupted",
        36 => "Invalid argument",
        43 => "Bad file handle",
        45 => "No space left on the device",
        52 => "Illegal multibyte sequence",
        53 => "Argument list or output too long",
        60 => "OS/2 error",
        _ => return format!("Unknown error {e}"),
    };
    t.to_string()
}

// ---- environment ----

/// The value of `name` in `_environ`.
pub(crate) fn env_value(p: &mut Process, name: &[u8]) -> Result<Option<Vec<u8>>, Stop> {
    Ok(env_find(p, name)?.map(|(_, v)| v))
}

/// (address of the value, value) of `name` in `_environ`.
fn env_find(p: &mut Process, name: &[u8]) -> Result<Option<(u32, Vec<u8>)>, Stop> {
    let Ok(d) = data(p) else {
        return Ok(None);
    };
    let arr = rd32(p, d + super::D_ENVIRON)?;
    if arr == 0 {
        return Ok(None);
    }
    for i in 0..0x4000u32 {
        let e = rd32(p, arr + 4 * i)?;
        if e == 0 {
            break;
        }
        let s = cstr_max(p, e, 0x1_0000)?;
        if let Some(eq) = s.iter().position(|&b| b == b'=')
            && s[..eq].eq_ignore_ascii_case(name)
        {
            return Ok(Some((e + eq as u32 + 1, s[eq + 1..].to_vec())));
        }
    }
    Ok(None)
}

pub(super) fn getenv(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let name = cstr(p, c.l(0))?;
    Ok(env_find(p, &name)?.map_or(0, |(a, _)| a))
}

/// _putenv("NAME=value"): the string itself goes into `_environ` (as C
/// says); "NAME=" removes NAME. A new array is made each time.
pub(super) fn putenv(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let s = cstr(p, c.l(0))?;
    let Some(eq) = s.iter().position(|&b| b == b'=') else {
        set_errno(p, super::EINVAL)?;
        return Ok(u32::MAX);
    };
    let name = &s[..eq];
    let d = data(p).map_err(|e| Stop::Outcome(crate::error::Outcome::HostError(e)))?;
    let arr = rd32(p, d + super::D_ENVIRON)?;
    let mut entries = Vec::new();
    if arr != 0 {
        for i in 0..0x4000u32 {
            let e = rd32(p, arr + 4 * i)?;
            if e == 0 {
                break;
            }
            let t = cstr_max(p, e, 0x1_0000)?;
            let same = t
                .iter()
                .position(|&b| b == b'=')
                .is_some_and(|q| t[..q].eq_ignore_ascii_case(name));
            if !same {
                entries.push(e);
            }
        }
    }
    if eq + 1 < s.len() {
        entries.push(c.l(0));
    }
    let new = malloc(p, 4 * (entries.len() as u32 + 1))?;
    if new == 0 {
        return Ok(u32::MAX);
    }
    entries.push(0);
    let bytes: Vec<u8> = entries.iter().flat_map(|v| v.to_le_bytes()).collect();
    write(p, new, &bytes)?;
    wr32(p, d + super::D_ENVIRON, new)?;
    if arr != 0 && rt(p).heap.size_of(arr).is_some() {
        super::free(p, arr);
    }
    Ok(0)
}

// ---- paths ----

/// _splitpath(path, drive, dir, fname, ext): NULL outputs are skipped.
pub(super) fn splitpath(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let path = cstr(p, c.l(0))?;
    let (drive, dir, name, ext) = split(&path);
    let ext_out = c.l(4);
    for (addr, part) in [
        (c.l(1), drive),
        (c.l(2), dir),
        (c.l(3), name),
        (ext_out, ext),
    ] {
        if addr != 0 {
            put_sz(p, addr, part)?;
        }
    }
    Ok(0)
}

/// (drive, directory, name, extension) of a path.
pub(super) fn split(path: &[u8]) -> (&[u8], &[u8], &[u8], &[u8]) {
    let (drive, rest) = if path.len() >= 2 && path[1] == b':' {
        path.split_at(2)
    } else {
        path.split_at(0)
    };
    let cut = rest
        .iter()
        .rposition(|&b| b == b'\\' || b == b'/')
        .map_or(0, |i| i + 1);
    let (dir, file) = rest.split_at(cut);
    let dot = file.iter().rposition(|&b| b == b'.').unwrap_or(file.len());
    let (name, ext) = file.split_at(dot);
    (drive, dir, name, ext)
}

/// _makepath(path, drive, dir, fname, ext).
pub(super) fn makepath(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let ext_in = c.l(4);
    let mut out = Vec::new();
    let part = |p: &mut Process, a: u32| -> Result<Vec<u8>, Stop> {
        if a == 0 { Ok(Vec::new()) } else { cstr(p, a) }
    };
    let drive = part(p, c.l(1))?;
    if let Some(&d) = drive.first() {
        out.push(d);
        out.push(b':');
    }
    let dir = part(p, c.l(2))?;
    out.extend_from_slice(&dir);
    if !dir.is_empty() && !matches!(dir.last(), Some(b'\\' | b'/')) {
        out.push(b'\\');
    }
    out.extend_from_slice(&part(p, c.l(3))?);
    let ext = part(p, ext_in)?;
    if !ext.is_empty() && ext[0] != b'.' {
        out.push(b'.');
    }
    out.extend_from_slice(&ext);
    put_sz(p, c.l(0), &out)?;
    Ok(0)
}

// ---- multibyte and wide ----

fn process_cp() -> Option<CodePage> {
    CodePage::get(PROCESS_CP)
}

/// The UniChar of a multibyte byte string's first character.
fn mb_decode(s: &[u8]) -> Option<(u16, usize)> {
    match codepage::decode(process_cp()?, CTL, s) {
        Decoded::Char(u, n) => Some((u, n)),
        _ => None,
    }
}

pub(super) fn mbtowc(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    if c.l(1) == 0 {
        return Ok(0);
    }
    let n = c.l(2);
    if n == 0 {
        return Ok(u32::MAX);
    }
    let b = read(p, c.l(1), 1)?;
    let Some((u, len)) = mb_decode(&b) else {
        set_errno(p, EILSEQ)?;
        return Ok(u32::MAX);
    };
    if c.l(0) != 0 {
        write(p, c.l(0), &u.to_le_bytes())?;
    }
    Ok(if u == 0 { 0 } else { len as u32 })
}

pub(super) fn mbstowcs(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let s = cstr(p, c.l(1))?;
    let mut out = Vec::new();
    for &b in &s {
        match mb_decode(&[b]) {
            Some((u, _)) => out.push(u),
            None => {
                set_errno(p, EILSEQ)?;
                return Ok(u32::MAX);
            }
        }
    }
    let n = c.l(2) as usize;
    if c.l(0) == 0 {
        return Ok(out.len() as u32);
    }
    let count = out.len().min(n);
    if out.len() < n {
        out.push(0);
    } else {
        out.truncate(n);
    }
    write_units(p, c.l(0), &out)?;
    Ok(count as u32)
}

pub(super) fn wcstombs(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let w = wstr_max(p, c.l(1), MAX_W)?;
    let Some(cp) = process_cp() else {
        return Ok(u32::MAX);
    };
    let mut out = Vec::new();
    for &u in &w {
        if codepage::encode(cp, CTL, u, &mut out).is_none() {
            set_errno(p, EILSEQ)?;
            return Ok(u32::MAX);
        }
    }
    let n = c.l(2) as usize;
    if c.l(0) == 0 {
        return Ok(out.len() as u32);
    }
    let count = out.len().min(n);
    if out.len() < n {
        out.push(0);
    } else {
        out.truncate(n);
    }
    write(p, c.l(0), &out)?;
    Ok(count as u32)
}

fn wstr(p: &mut Process, a: u32) -> Result<Vec<u16>, Stop> {
    wstr_max(p, a, MAX_W)
}

fn put_wsz(p: &mut Process, a: u32, s: &[u16]) -> Result<(), Stop> {
    let mut v = s.to_vec();
    v.push(0);
    write_units(p, a, &v)
}

pub(super) fn wcscat(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (d, s) = (wstr(p, c.l(0))?, wstr(p, c.l(1))?);
    put_wsz(p, c.l(0).wrapping_add(2 * d.len() as u32), &s)?;
    Ok(c.l(0))
}

pub(super) fn wcscpy(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let s = wstr(p, c.l(1))?;
    put_wsz(p, c.l(0), &s)?;
    Ok(c.l(0))
}

pub(super) fn wcsncpy(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let n = c.l(2);
    let mut s = wstr_max(p, c.l(1), n)?;
    s.resize(n as usize, 0);
    write_units(p, c.l(0), &s)?;
    Ok(c.l(0))
}

fn wcmp(a: &[u16], b: &[u16], n: usize) -> u32 {
    for i in 0..n {
        let (x, y) = (
            a.get(i).copied().unwrap_or(0),
            b.get(i).copied().unwrap_or(0),
        );
        if x != y {
            return (i32::from(x) - i32::from(y)) as u32;
        }
        if x == 0 {
            break;
        }
    }
    0
}

pub(super) fn wcscmp(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (a, b) = (wstr(p, c.l(0))?, wstr(p, c.l(1))?);
    Ok(wcmp(&a, &b, a.len().max(b.len()) + 1))
}

pub(super) fn wcsncmp(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let n = c.l(2);
    let (a, b) = (wstr_max(p, c.l(0), n)?, wstr_max(p, c.l(1), n)?);
    Ok(wcmp(&a, &b, n as usize))
}

pub(super) fn wcschr(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let s = wstr(p, c.l(0))?;
    let ch = c.l(1) as u16;
    if ch == 0 {
        return Ok(c.l(0).wrapping_add(2 * s.len() as u32));
    }
    Ok(s.iter()
        .position(|&u| u == ch)
        .map_or(0, |i| c.l(0).wrapping_add(2 * i as u32)))
}

pub(super) fn wcsrchr(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let s = wstr(p, c.l(0))?;
    let ch = c.l(1) as u16;
    if ch == 0 {
        return Ok(c.l(0).wrapping_add(2 * s.len() as u32));
    }
    Ok(s.iter()
        .rposition(|&u| u == ch)
        .map_or(0, |i| c.l(0).wrapping_add(2 * i as u32)))
}

pub(super) fn wcsspn(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (s, set) = (wstr(p, c.l(0))?, wstr(p, c.l(1))?);
    Ok(s.iter().take_while(|u| set.contains(u)).count() as u32)
}

pub(super) fn wcscspn(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (s, set) = (wstr(p, c.l(0))?, wstr(p, c.l(1))?);
    Ok(s.iter().take_while(|u| !set.contains(u)).count() as u32)
}

pub(super) fn wcspbrk(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (s, set) = (wstr(p, c.l(0))?, wstr(p, c.l(1))?);
    Ok(s.iter()
        .position(|u| set.contains(u))
        .map_or(0, |i| c.l(0).wrapping_add(2 * i as u32)))
}

pub(super) fn wcswcs(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (s, t) = (wstr(p, c.l(0))?, wstr(p, c.l(1))?);
    if t.is_empty() {
        return Ok(c.l(0));
    }
    Ok(s.windows(t.len())
        .position(|w| w == t.as_slice())
        .map_or(0, |i| c.l(0).wrapping_add(2 * i as u32)))
}

/// wcstok(s, delims, &state) (XPG4's three-argument form; the state
/// pointer may be NULL, then the position is kept per thread).
pub(super) fn wcstok(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let tid = p.current_tid();
    let state = c.l(2);
    let start = if c.l(0) != 0 {
        c.l(0)
    } else if state != 0 {
        rd32(p, state)?
    } else {
        rt(p).wcstok.get(&tid).copied().unwrap_or(0)
    };
    let mut next = 0;
    let mut tok = 0;
    if start != 0 {
        let set = wstr(p, c.l(1))?;
        let s = wstr(p, start)?;
        let skip = s.iter().take_while(|u| set.contains(u)).count();
        if skip < s.len() {
            tok = start + 2 * skip as u32;
            let len = s[skip..].iter().take_while(|u| !set.contains(u)).count();
            let end = tok + 2 * len as u32;
            if skip + len < s.len() {
                write(p, end, &[0, 0])?;
                next = end + 2;
            }
        }
    }
    if state != 0 {
        wr32(p, state, next)?;
    } else {
        rt(p).wcstok.insert(tid, next);
    }
    Ok(tok)
}

pub(super) fn wcstol(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let w = wstr(p, c.l(0))?;
    let bytes: Vec<u8> = w.iter().map(|&u| u8::try_from(u).unwrap_or(0xFF)).collect();
    let skip = bytes.iter().take_while(|b| is_space(**b)).count();
    let base = c.l(2);
    let parsed = if base == 1 || base > 36 {
        None
    } else {
        format::scan_int(&bytes[skip..], base)
    };
    let (v, used) = parsed.map_or((0, 0), |(v, n)| (v, skip + n));
    if c.l(1) != 0 {
        wr32(p, c.l(1), c.l(0).wrapping_add(2 * used as u32))?;
    }
    if i32::try_from(v).is_err() {
        set_errno(p, super::ERANGE)?;
        return Ok(if v < 0 { 0x8000_0000 } else { 0x7FFF_FFFF });
    }
    Ok(v as u32)
}

/// _swprintfieee(buf, n, fmt, ...): the format is wide; it is formatted
/// as bytes (each UniChar above 0xFF as `?`) and stored wide.
pub(super) fn swprintf(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let fmt: Vec<u8> = wstr(p, c.l(2))?
        .iter()
        .map(|&u| u8::try_from(u).unwrap_or(b'?'))
        .collect();
    let esp = p.machine.cpu().gpr[emu::Gpr::Esp];
    let text = format::printf(&fmt, &mut super::GuestArgs { p, at: esp + 16 })?;
    let n = c.l(1) as usize;
    if text.len() >= n {
        if n > 0 {
            put_wsz(p, c.l(0), &[])?;
        }
        return Ok(u32::MAX);
    }
    let units: Vec<u16> = text.iter().map(|&b| u16::from(b)).collect();
    put_wsz(p, c.l(0), &units)?;
    Ok(units.len() as u32)
}

// ---- iconv ----

/// iconv_open(to, from): a descriptor, or -1 (errno EINVAL) for a code
/// set [`codepage`] does not know.
pub(super) fn iconv_open(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let to = String::from_utf8_lossy(&cstr(p, c.l(0))?).into_owned();
    let from = String::from_utf8_lossy(&cstr(p, c.l(1))?).into_owned();
    if CodePage::by_name(&to).is_none() || CodePage::by_name(&from).is_none() {
        set_errno(p, super::EINVAL)?;
        return Ok(u32::MAX);
    }
    let r = rt(p);
    if r.iconv.len() >= 256 {
        set_errno(p, super::EMFILE)?;
        return Ok(u32::MAX);
    }
    r.next_iconv += 1;
    let h = 0x1C00_0000 + r.next_iconv;
    r.iconv.insert(h, (from, to));
    Ok(h)
}

pub(super) fn iconv_close(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    if rt(p).iconv.remove(&c.l(0)).is_none() {
        set_errno(p, super::EBADF)?;
        return Ok(u32::MAX);
    }
    Ok(0)
}

/// iconv(cd, &in, &inleft, &out, &outleft): converts what fits; -1 with
/// E2BIG (output full), EILSEQ (no such character) or EINVAL (input
/// ends inside a character), the pointers left at the stop.
pub(super) fn iconv(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let Some((from, to)) = rt(p).iconv.get(&c.l(0)).cloned() else {
        set_errno(p, super::EBADF)?;
        return Ok(u32::MAX);
    };
    let (Some(fcp), Some(tcp)) = (CodePage::by_name(&from), CodePage::by_name(&to)) else {
        set_errno(p, super::EBADF)?;
        return Ok(u32::MAX);
    };
    // cd (EAX), &in (EDX), &inleft (ECX), &out and &outleft on the stack.
    let (inp, inleft_ptr) = (c.l(1), c.l(2));
    let out_ptr_p = stack_arg(p, 16)?;
    let outleft_pp = stack_arg(p, 20)?;
    if inp == 0 || rd32(p, inp)? == 0 {
        return Ok(0);
    }
    let mut src = rd32(p, inp)?;
    let mut left = rd32(p, inleft_ptr)?;
    let mut dst = rd32(p, out_ptr_p)?;
    let mut room = rd32(p, outleft_pp)?;
    let mut err = None;
    while left > 0 {
        let chunk = read(p, src, left.min(4))?;
        let (u, used) = match codepage::decode(fcp, CTL, &chunk) {
            Decoded::Char(u, n) => (u, n as u32),
            Decoded::Illegal(_) => {
                err = Some(EILSEQ);
                break;
            }
            Decoded::Incomplete => {
                err = Some(super::EINVAL);
                break;
            }
        };
        let mut out = Vec::new();
        if codepage::encode(tcp, CTL, u, &mut out).is_none() {
            err = Some(EILSEQ);
            break;
        }
        if out.len() as u32 > room {
            err = Some(E2BIG);
            break;
        }
        write(p, dst, &out)?;
        dst += out.len() as u32;
        room -= out.len() as u32;
        src += used;
        left -= used;
    }
    wr32(p, inp, src)?;
    wr32(p, inleft_ptr, left)?;
    wr32(p, out_ptr_p, dst)?;
    wr32(p, outleft_pp, room)?;
    match err {
        Some(e) => {
            set_errno(p, e)?;
            Ok(u32::MAX)
        }
        None => Ok(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split() {
        let (d, dir, n, e) = split(b"C:\\os2\\tk\\rc.exe");
        assert_eq!(
            (d, dir, n, e),
            (&b"C:"[..], &b"\\os2\\tk\\"[..], &b"rc"[..], &b".exe"[..])
        );
        let (d, dir, n, e) = split(b"name");
        assert_eq!((d, dir, n, e), (&b""[..], &b""[..], &b"name"[..], &b""[..]));
    }

    #[test]
    fn numbers_and_case() {
        assert_eq!(radix_text(255, 16), "ff");
        assert_eq!(radix_text(5, 2), "101");
        assert_eq!(radix_text(5, 1), "");
        assert_eq!(to_case(u32::from(b'a'), true), u32::from(b'A'));
        assert_eq!(to_case(u32::MAX, true), u32::MAX, "EOF stays");
        assert_eq!(to_wcase(0xE9, true), 0xC9);
        assert!(ctype(u32::from(b'7'), u8::is_ascii_digit));
        assert!(!ctype(u32::MAX, u8::is_ascii_digit));
        assert_eq!(cmp_bytes(b"abc", b"ABD", 4, true) as i32, -1);
        assert_eq!(cmp_bytes(b"abc", b"abc", 4, false), 0);
        assert_eq!(cmp_bytes(b"ab", b"abc", 3, false) as i32, -(b'c' as i32));
    }
}
