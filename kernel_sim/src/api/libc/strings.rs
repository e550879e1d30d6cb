//! Strings, memory, characters, numbers, the environment, wide strings
//! (wchar_t is UCS-2) and iconv. The multibyte code set is the
//! process's code page (437); iconv converts between the code pages
//! [`crate::api::codepage`] knows.
//!
//! A str* function and its wcs* twin are one function generic over the
//! string's element ([`Unit`]: `u8` for char, `u16` for wchar_t); the
//! tables in [`super`] say which C name each instance is.

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
/// overflow (a value that fits a long or an unsigned long passes).
pub(super) fn strtol(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let v = scan_long::<u8>(p, c)?;
    if i32::try_from(v).is_err() && u32::try_from(v).is_err() && v > -(1 << 32) {
        return out_of_range(p, v);
    }
    Ok(v as u32)
}

/// wcstol(s, &end, base): with errno ERANGE and the limit when the
/// value is not a long.
pub(super) fn wcstol(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let v = scan_long::<u16>(p, c)?;
    if i32::try_from(v).is_err() {
        return out_of_range(p, v);
    }
    Ok(v as u32)
}

/// The number strtol and wcstol read from `(s, &end, base)`, with
/// `*end` stored (`s` itself when there is no number, or the base is
/// not 0 or 2..=36). A wide character above 0xFF ends the number.
fn scan_long<C: Unit>(p: &mut Process, c: &Call) -> Result<i64, Stop> {
    let s: Vec<u8> = C::read(p, c.l(0))?.iter().map(|u| u.as_byte()).collect();
    let base = c.l(2);
    let skip = s.iter().take_while(|b| is_space(**b)).count();
    let parsed = if base == 1 || base > 36 {
        None
    } else {
        format::scan_int(&s[skip..], base)
    };
    let (v, used) = parsed.map_or((0, 0), |(v, n)| (v, skip + n));
    if c.l(1) != 0 {
        wr32(p, c.l(1), at::<C>(c.l(0), used))?;
    }
    Ok(v)
}

/// errno ERANGE, and the limit of `v`'s sign.
fn out_of_range(p: &mut Process, v: i64) -> Result<u32, Stop> {
    set_errno(p, super::ERANGE)?;
    Ok(if v < 0 { 0x8000_0000 } else { 0x7FFF_FFFF })
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

// ---- strings, narrow and wide ----

/// The element of a C string: `u8` for char, `u16` for wchar_t (UCS-2).
pub(super) trait Unit: Copy + Eq + Into<u32> {
    /// Bytes per element.
    const SIZE: u32;
    /// The element that ends a string.
    const NUL: Self;
    /// The most elements read of one string.
    const MAX: u32;
    /// The string at `addr` up to its NUL (without it), at most `max`
    /// elements.
    fn read_max(p: &mut Process, addr: u32, max: u32) -> Result<Vec<Self>, Stop>;
    /// Stores `s` at `addr` (no NUL added).
    fn write(p: &mut Process, addr: u32, s: &[Self]) -> Result<(), Stop>;
    /// The element an int argument names (its low bits).
    fn from_arg(v: u32) -> Self;
    /// ASCII upper case as lower case (the case-blind compares).
    fn fold(self) -> Self;
    /// The byte a number is read from: a wide character above 0xFF is
    /// 0xFF, which no number has.
    fn as_byte(self) -> u8;

    /// The string at `addr` up to its NUL.
    fn read(p: &mut Process, addr: u32) -> Result<Vec<Self>, Stop> {
        Self::read_max(p, addr, Self::MAX)
    }

    /// Stores `s` and a NUL at `addr`.
    fn put_sz(p: &mut Process, addr: u32, s: &[Self]) -> Result<(), Stop> {
        let mut v = Vec::with_capacity(s.len() + 1);
        v.extend_from_slice(s);
        v.push(Self::NUL);
        Self::write(p, addr, &v)
    }
}

impl Unit for u8 {
    const SIZE: u32 = 1;
    const NUL: u8 = 0;
    const MAX: u32 = super::MAX_STR;
    fn read_max(p: &mut Process, addr: u32, max: u32) -> Result<Vec<u8>, Stop> {
        cstr_max(p, addr, max)
    }
    fn write(p: &mut Process, addr: u32, s: &[u8]) -> Result<(), Stop> {
        write(p, addr, s)
    }
    fn from_arg(v: u32) -> u8 {
        v as u8
    }
    fn fold(self) -> u8 {
        self.to_ascii_lowercase()
    }
    fn as_byte(self) -> u8 {
        self
    }
}

impl Unit for u16 {
    const SIZE: u32 = 2;
    const NUL: u16 = 0;
    const MAX: u32 = MAX_W;
    fn read_max(p: &mut Process, addr: u32, max: u32) -> Result<Vec<u16>, Stop> {
        wstr_max(p, addr, max)
    }
    fn write(p: &mut Process, addr: u32, s: &[u16]) -> Result<(), Stop> {
        write_units(p, addr, s)
    }
    fn from_arg(v: u32) -> u16 {
        v as u16
    }
    fn fold(self) -> u16 {
        u8::try_from(self).map_or(self, |b| u16::from(b.to_ascii_lowercase()))
    }
    fn as_byte(self) -> u8 {
        u8::try_from(self).unwrap_or(0xFF)
    }
}

/// The address of element `i` of the string at `base`.
fn at<C: Unit>(base: u32, i: usize) -> u32 {
    base.wrapping_add(C::SIZE * i as u32)
}

/// strcat / wcscat(dst, src).
pub(super) fn concat<C: Unit>(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let d = C::read(p, c.l(0))?;
    let s = C::read(p, c.l(1))?;
    C::put_sz(p, at::<C>(c.l(0), d.len()), &s)?;
    Ok(c.l(0))
}

pub(super) fn strncat(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let d = cstr(p, c.l(0))?;
    let s = cstr_max(p, c.l(1), c.l(2))?;
    put_sz(p, c.l(0).wrapping_add(d.len() as u32), &s)?;
    Ok(c.l(0))
}

/// strcpy / wcscpy(dst, src).
pub(super) fn copy<C: Unit>(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let s = C::read(p, c.l(1))?;
    C::put_sz(p, c.l(0), &s)?;
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

pub(super) fn wcsncpy(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let n = c.l(2);
    let mut s = wstr_max(p, c.l(1), n)?;
    s.resize(n as usize, 0);
    write_units(p, c.l(0), &s)?;
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

/// C's compare of the first `n` elements (a NUL ends both), ASCII case
/// folded when `fold`: negative, 0 or positive as the first difference.
fn compare<C: Unit>(a: &[C], b: &[C], n: usize, fold: bool) -> u32 {
    let f = |x: C| if fold { x.fold() } else { x };
    for i in 0..n {
        let (x, y) = (
            a.get(i).copied().unwrap_or(C::NUL),
            b.get(i).copied().unwrap_or(C::NUL),
        );
        if f(x) != f(y) {
            return (f(x).into() as i32 - f(y).into() as i32) as u32;
        }
        if x == C::NUL {
            break;
        }
    }
    0
}

/// strcmp / wcscmp(a, b), and stricmp when `fold`.
pub(super) fn compare_strings<C: Unit>(p: &mut Process, c: &Call, fold: bool) -> Result<u32, Stop> {
    let (a, b) = (C::read(p, c.l(0))?, C::read(p, c.l(1))?);
    Ok(compare(&a, &b, a.len().max(b.len()) + 1, fold))
}

/// strncmp / wcsncmp(a, b, n), and strnicmp when `fold`.
pub(super) fn compare_prefixes<C: Unit>(
    p: &mut Process,
    c: &Call,
    fold: bool,
) -> Result<u32, Stop> {
    let n = c.l(2);
    let (a, b) = (C::read_max(p, c.l(0), n)?, C::read_max(p, c.l(1), n)?);
    Ok(compare(&a, &b, n as usize, fold))
}

/// strchr / wcschr(s, ch), or strrchr / wcsrchr when `last`: the
/// element's address (the NUL's for ch 0), or NULL.
pub(super) fn find_char<C: Unit>(p: &mut Process, c: &Call, last: bool) -> Result<u32, Stop> {
    let s = C::read(p, c.l(0))?;
    let ch = C::from_arg(c.l(1));
    if ch == C::NUL {
        return Ok(at::<C>(c.l(0), s.len()));
    }
    let found = if last {
        s.iter().rposition(|&u| u == ch)
    } else {
        s.iter().position(|&u| u == ch)
    };
    Ok(found.map_or(0, |i| at::<C>(c.l(0), i)))
}

/// strspn / wcsspn(s, set), or strcspn / wcscspn when not `inside`: how
/// many leading elements are (are not) in the set.
pub(super) fn span<C: Unit>(p: &mut Process, c: &Call, inside: bool) -> Result<u32, Stop> {
    let (s, set) = (C::read(p, c.l(0))?, C::read(p, c.l(1))?);
    Ok(s.iter().take_while(|u| set.contains(u) == inside).count() as u32)
}

/// strpbrk / wcspbrk(s, set): the first element in the set, or NULL.
pub(super) fn find_any<C: Unit>(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (s, set) = (C::read(p, c.l(0))?, C::read(p, c.l(1))?);
    Ok(s.iter()
        .position(|u| set.contains(u))
        .map_or(0, |i| at::<C>(c.l(0), i)))
}

/// strstr / wcswcs(s, t): the first `t` in `s`, or NULL.
pub(super) fn find_string<C: Unit>(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (s, t) = (C::read(p, c.l(0))?, C::read(p, c.l(1))?);
    if t.is_empty() {
        return Ok(c.l(0));
    }
    Ok(s.windows(t.len())
        .position(|w| w == t.as_slice())
        .map_or(0, |i| at::<C>(c.l(0), i)))
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

/// One strtok / wcstok step from `start` (not NULL), with the delimiters
/// at `delims`: the token's address (NULL when only delimiters are
/// left) and where the next step starts (NULL after the last token).
/// The delimiter after the token becomes a NUL.
fn next_token<C: Unit>(p: &mut Process, start: u32, delims: u32) -> Result<(u32, u32), Stop> {
    let set = C::read(p, delims)?;
    let s = C::read(p, start)?;
    let skip = s.iter().take_while(|u| set.contains(u)).count();
    if skip == s.len() {
        return Ok((0, 0));
    }
    let tok = at::<C>(start, skip);
    let len = s[skip..].iter().take_while(|u| !set.contains(u)).count();
    let end = at::<C>(tok, len);
    if skip + len == s.len() {
        return Ok((tok, 0));
    }
    C::put_sz(p, end, &[])?;
    Ok((tok, at::<C>(end, 1)))
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
    let (tok, next) = next_token::<u8>(p, start, c.l(1))?;
    rt(p).strtok.insert(tid, next);
    Ok(tok)
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
    let (tok, next) = if start != 0 {
        next_token::<u16>(p, start, c.l(1))?
    } else {
        (0, 0)
    };
    if state != 0 {
        wr32(p, state, next)?;
    } else {
        rt(p).wcstok.insert(tid, next);
    }
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
    let mut out: Vec<u16> = Vec::new();
    for &b in &s {
        match mb_decode(&[b]) {
            Some((u, _)) => out.push(u),
            None => {
                set_errno(p, EILSEQ)?;
                return Ok(u32::MAX);
            }
        }
    }
    store_converted(p, c.l(0), &out, c.l(2) as usize)
}

/// What mbstowcs and wcstombs converted, stored at `dst`: at most `n`
/// elements, with a NUL when there is room; the count stored (no NUL).
/// A NULL `dst` stores nothing and gives the whole count.
fn store_converted<C: Unit>(p: &mut Process, dst: u32, out: &[C], n: usize) -> Result<u32, Stop> {
    if dst == 0 {
        return Ok(out.len() as u32);
    }
    if out.len() < n {
        C::put_sz(p, dst, out)?;
        return Ok(out.len() as u32);
    }
    C::write(p, dst, &out[..n])?;
    Ok(n as u32)
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
    store_converted(p, c.l(0), &out, c.l(2) as usize)
}

/// _swprintfieee(buf, n, fmt, ...): the format is wide; it is formatted
/// as bytes (each UniChar above 0xFF as `?`) and stored wide.
pub(super) fn swprintf(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let fmt: Vec<u8> = u16::read(p, c.l(2))?
        .iter()
        .map(|&u| u8::try_from(u).unwrap_or(b'?'))
        .collect();
    let esp = p.machine.cpu().gpr[emu::Gpr::Esp];
    let text = format::printf(&fmt, &mut super::GuestArgs { p, at: esp + 16 })?;
    let n = c.l(1) as usize;
    if text.len() >= n {
        if n > 0 {
            u16::put_sz(p, c.l(0), &[])?;
        }
        return Ok(u32::MAX);
    }
    let units: Vec<u16> = text.iter().map(|&b| u16::from(b)).collect();
    u16::put_sz(p, c.l(0), &units)?;
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
        assert_eq!(compare::<u8>(b"abc", b"ABD", 4, true) as i32, -1);
        assert_eq!(compare::<u8>(b"abc", b"abc", 4, false), 0);
        assert_eq!(
            compare::<u8>(b"ab", b"abc", 3, false) as i32,
            -(b'c' as i32)
        );
    }
}
