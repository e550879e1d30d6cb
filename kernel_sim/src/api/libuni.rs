//! LIBUNI: OS/2's Unicode string, character and locale functions
//! (`unidef.h`), 32-bit `_System` entries on UniChar (UCS-2) strings.
//! Conversion objects are UCONV's (`uconv.rs`), which also holds the
//! per-process object table and the guest memory helpers used here.
//!
//! Decisions, where the toolkit leaves room:
//! - **Locales.** UniCreateLocaleObject takes a name given as a UniChar
//!   or a byte string (UNI_UCS_STRING_POINTER, UNI_MBS_STRING_POINTER):
//!   `C`, `POSIX`, `UNIVERSAL`, or `ll_CC` (two lower-case letters, `_`,
//!   two upper-case letters) with an optional `.codeset` or `@modifier`;
//!   NULL or the empty name is the system's locale, `en_US` (the system
//!   is the United States, see `nls.rs`). Another well-formed-looking name
//!   is ULS_UNSUPPORTED, anything else ULS_INVALID; locale tokens
//!   (UNI_TOKEN_POINTER) are ULS_UNSUPPORTED. Every locale classifies and
//!   cases characters the same way, by Unicode's properties, and collates
//!   in code point order.
//! - **Character classes** (UniQuery*) come from Unicode's properties as
//!   Rust's `char` gives them: alpha is Alphabetic, upper/lower are
//!   Uppercase/Lowercase, space is White_Space, cntrl is Cc; digit and
//!   xdigit are the ASCII ones (as the C locale's); alnum is alpha or
//!   digit, print is not cntrl (and not a surrogate or U+FFFF), graph is
//!   print and not space, punct is graph and not alnum, blank is space
//!   but not a line or paragraph end. In the `C` and `POSIX` locales only
//!   ASCII characters are in a class; a locale argument that is no
//!   locale object (NULL too) is the system's.
//! - **Case mapping** (UniToupper/UniTolower/UniStrupr/UniStrlwr) maps a
//!   character whose Unicode mapping is one BMP character; others stay.
//! - **Comparisons** return the difference of the first differing
//!   UniChars (case-insensitive ones compare the upper-case mappings).
//! - **UniStrtok** keeps its position per thread.
//! - **Bad pointers** end the run as an access violation would (see
//!   `uconv.rs`).

use std::collections::BTreeMap;

use super::uconv::{
    self, Locale, ULS_BADOBJECT, ULS_INVALID, ULS_NOMEMORY, ULS_RANGE, ULS_SUCCESS,
    ULS_UNSUPPORTED, rd32, read_ustr, ustr_text, wr32, write_units,
};
use super::{ApiDef, Call, Stop};
use crate::process::Process;

/// Longest string the string functions read (UniChars).
const MAX_STR: u32 = 0x8_0000;

/// LIBUNI's entries.
pub static DEFS: &[ApiDef] = &[
    api!("LIBUNI" 1 "UniQueryXdigit" Sys32 [L, L] raw |p, c| class(p, c, |u| u.is_ascii_hexdigit())),
    api!("LIBUNI" 2 "UniQuerySpace" Sys32 [L, L] raw |p, c| class(p, c, char::is_whitespace)),
    api!("LIBUNI" 3 "UniQueryPrint" Sys32 [L, L] raw |p, c| class(p, c, print)),
    api!("LIBUNI" 4 "UniQueryGraph" Sys32 [L, L] raw |p, c| class(p, c, graph)),
    api!("LIBUNI" 5 "UniQueryCntrl" Sys32 [L, L] raw |p, c| class(p, c, char::is_control)),
    api!("LIBUNI" 6 "UniQueryAlpha" Sys32 [L, L] raw |p, c| class(p, c, char::is_alphabetic)),
    api!("LIBUNI" 9 "UniQueryUpper" Sys32 [L, L] raw |p, c| class(p, c, char::is_uppercase)),
    api!("LIBUNI" 10 "UniQueryPunct" Sys32 [L, L] raw |p, c| class(p, c, |u| graph(u) && !alnum(u))),
    api!("LIBUNI" 11 "UniQueryLower" Sys32 [L, L] raw |p, c| class(p, c, char::is_lowercase)),
    api!("LIBUNI" 12 "UniQueryDigit" Sys32 [L, L] raw |p, c| class(p, c, |u| u.is_ascii_digit())),
    api!("LIBUNI" 13 "UniQueryBlank" Sys32 [L, L] raw |p, c| class(p, c, blank)),
    api!("LIBUNI" 14 "UniQueryAlnum" Sys32 [L, L] raw |p, c| class(p, c, alnum)),
    api!("LIBUNI" 20 "UniCreateLocaleObject" Sys32 [L, P, P] raw create_locale),
    api!("LIBUNI" 21 "UniFreeLocaleObject" Sys32 [L] raw |p, c| {
        Ok(if p.pcb.uni.free_locale(c.l(0)) { ULS_SUCCESS } else { ULS_BADOBJECT })
    }),
    api!("LIBUNI" 31 "UniStrcat" Sys32 [P, P] raw |p, c| {
        let (d, s) = (str(p, c.l(0))?, str(p, c.l(1))?);
        put_sz(p, c.l(0) + 2 * d.len() as u32, &s)?;
        Ok(c.l(0))
    }),
    api!("LIBUNI" 32 "UniStrchr" Sys32 [P, L] raw |p, c| {
        let s = str(p, c.l(0))?;
        Ok(find_char(c.l(0), &s, c.w(1), false))
    }),
    api!("LIBUNI" 33 "UniStrcmp" Sys32 [P, P] raw |p, c| {
        let (a, b) = (str(p, c.l(0))?, str(p, c.l(1))?);
        Ok(compare(&a, &b, usize::MAX, |u| u))
    }),
    api!("LIBUNI" 34 "UniStrcmpi" Sys32 [L, P, P] raw |p, c| {
        let (a, b) = (str(p, c.l(1))?, str(p, c.l(2))?);
        Ok(compare(&a, &b, usize::MAX, upper))
    }),
    api!("LIBUNI" 35 "UniStrcoll" Sys32 [L, P, P] raw |p, c| {
        let (a, b) = (str(p, c.l(1))?, str(p, c.l(2))?);
        Ok(compare(&a, &b, usize::MAX, |u| u))
    }),
    api!("LIBUNI" 36 "UniStrcpy" Sys32 [P, P] raw |p, c| {
        let s = str(p, c.l(1))?;
        put_sz(p, c.l(0), &s)?;
        Ok(c.l(0))
    }),
    api!("LIBUNI" 37 "UniStrcspn" Sys32 [P, P] raw |p, c| {
        let (a, set) = (str(p, c.l(0))?, str(p, c.l(1))?);
        Ok(a.iter().take_while(|u| !set.contains(u)).count() as u32)
    }),
    api!("LIBUNI" 40 "UniStrlen" Sys32 [P] raw |p, c| Ok(str(p, c.l(0))?.len() as u32)),
    api!("LIBUNI" 41 "UniStrncat" Sys32 [P, P, L] raw |p, c| {
        let d = str(p, c.l(0))?;
        let s = strn(p, c.l(1), c.l(2))?;
        put_sz(p, c.l(0) + 2 * d.len() as u32, &s)?;
        Ok(c.l(0))
    }),
    api!("LIBUNI" 42 "UniStrncmp" Sys32 [P, P, L] raw |p, c| {
        let n = c.l(2);
        let (a, b) = (strn(p, c.l(0), n)?, strn(p, c.l(1), n)?);
        Ok(compare(&a, &b, n as usize, |u| u))
    }),
    api!("LIBUNI" 43 "UniStrncmpi" Sys32 [L, P, P, L] raw |p, c| {
        let n = c.l(3);
        let (a, b) = (strn(p, c.l(1), n)?, strn(p, c.l(2), n)?);
        Ok(compare(&a, &b, n as usize, upper))
    }),
    api!("LIBUNI" 44 "UniStrncpy" Sys32 [P, P, L] raw |p, c| {
        let n = c.l(2);
        let s = strn(p, c.l(1), n)?;
        write_units(p, c.l(0), &s)?;
        let end = c.l(0).wrapping_add(2 * s.len() as u32);
        zero_units(p, end, n - s.len() as u32)?;
        Ok(c.l(0))
    }),
    api!("LIBUNI" 45 "UniStrpbrk" Sys32 [P, P] raw |p, c| {
        let (a, set) = (str(p, c.l(0))?, str(p, c.l(1))?);
        Ok(a.iter()
            .position(|u| set.contains(u))
            .map_or(0, |i| c.l(0) + 2 * i as u32))
    }),
    api!("LIBUNI" 47 "UniStrrchr" Sys32 [P, L] raw |p, c| {
        let s = str(p, c.l(0))?;
        Ok(find_char(c.l(0), &s, c.w(1), true))
    }),
    api!("LIBUNI" 48 "UniStrspn" Sys32 [P, P] raw |p, c| {
        let (a, set) = (str(p, c.l(0))?, str(p, c.l(1))?);
        Ok(a.iter().take_while(|u| set.contains(u)).count() as u32)
    }),
    api!("LIBUNI" 49 "UniStrstr" Sys32 [P, P] raw |p, c| {
        let (a, b) = (str(p, c.l(0))?, str(p, c.l(1))?);
        if b.is_empty() {
            return Ok(c.l(0));
        }
        Ok(a.windows(b.len())
            .position(|w| w == b.as_slice())
            .map_or(0, |i| c.l(0) + 2 * i as u32))
    }),
    api!("LIBUNI" 51 "UniStrtol" Sys32 [L, P, P, L, P] raw |p, c| strtol(p, c, true)),
    api!("LIBUNI" 52 "UniStrtoul" Sys32 [L, P, P, L, P] raw |p, c| strtol(p, c, false)),
    api!("LIBUNI" 59 "UniTolower" Sys32 [L] raw |_, c| Ok(u32::from(lower(c.w(0))))),
    api!("LIBUNI" 60 "UniToupper" Sys32 [L] raw |_, c| Ok(u32::from(upper(c.w(0))))),
    api!("LIBUNI" 61 "UniStrupr" Sys32 [P] raw |p, c| map_in_place(p, c.l(0), upper)),
    api!("LIBUNI" 62 "UniStrlwr" Sys32 [P] raw |p, c| map_in_place(p, c.l(0), lower)),
    api!("LIBUNI" 63 "UniStrtok" Sys32 [P, P] raw strtok),
];

fn ch(u: u16) -> Option<char> {
    char::from_u32(u32::from(u)).filter(|&c| c != '\u{FFFF}')
}

/// A character class query: in the C and POSIX locales only ASCII
/// characters are in any class.
fn class(p: &mut Process, c: &Call, f: impl Fn(char) -> bool) -> Result<u32, Stop> {
    let ascii_only = p
        .pcb
        .uni
        .locale(c.l(0))
        .is_some_and(|l| matches!(l.name.as_str(), "C" | "POSIX"));
    let u = c.w(1);
    Ok(u32::from((!ascii_only || u < 0x80) && ch(u).is_some_and(f)))
}

fn print(c: char) -> bool {
    !c.is_control()
}

fn graph(c: char) -> bool {
    print(c) && !c.is_whitespace()
}

fn alnum(c: char) -> bool {
    c.is_alphabetic() || c.is_ascii_digit()
}

fn blank(c: char) -> bool {
    c.is_whitespace()
        && !matches!(
            c,
            '\n' | '\u{0B}' | '\u{0C}' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}'
        )
}

/// One BMP character's single-character case mapping.
fn map_case<I: Iterator<Item = char>>(u: u16, f: impl Fn(char) -> I) -> u16 {
    let Some(c) = ch(u) else { return u };
    let mut m = f(c);
    match (m.next(), m.next()) {
        (Some(x), None) if (x as u32) <= 0xFFFF => x as u32 as u16,
        _ => u,
    }
}

fn upper(u: u16) -> u16 {
    map_case(u, char::to_uppercase)
}

fn lower(u: u16) -> u16 {
    map_case(u, char::to_lowercase)
}

fn str(p: &mut Process, at: u32) -> Result<Vec<u16>, Stop> {
    read_ustr(p, at, MAX_STR)
}

fn strn(p: &mut Process, at: u32, n: u32) -> Result<Vec<u16>, Stop> {
    if n == 0 {
        return Ok(Vec::new());
    }
    read_ustr(p, at, n.min(MAX_STR))
}

/// Store `n` NUL UniChars at `at`, up to each page end at a time: a huge
/// `n` ends at the guest's first unwritable page (the access violation the
/// real function gives, CR2 there) without sizing a host buffer by it.
fn zero_units(p: &mut Process, at: u32, n: u32) -> Result<(), Stop> {
    const PAGE: u64 = 0x1000;
    let zeros = [0u8; PAGE as usize];
    let mut left = 2 * u64::from(n);
    let mut addr = at;
    while left > 0 {
        let len = left.min(PAGE - u64::from(addr) % PAGE);
        uconv::write(p, addr, &zeros[..len as usize])?;
        addr = addr.wrapping_add(len as u32);
        left -= len;
    }
    Ok(())
}

/// Store a string and its NUL.
fn put_sz(p: &mut Process, at: u32, s: &[u16]) -> Result<(), Stop> {
    let mut v = s.to_vec();
    v.push(0);
    write_units(p, at, &v)
}

/// The address of the first (or last) `u` in `s` at `base`; the NUL
/// counts as part of the string (strchr(s, 0) finds the end).
fn find_char(base: u32, s: &[u16], u: u16, last: bool) -> u32 {
    let i = if u == 0 {
        Some(s.len())
    } else if last {
        s.iter().rposition(|&x| x == u)
    } else {
        s.iter().position(|&x| x == u)
    };
    i.map_or(0, |i| base + 2 * i as u32)
}

fn compare(a: &[u16], b: &[u16], n: usize, f: impl Fn(u16) -> u16) -> u32 {
    let (a, b) = (&a[..a.len().min(n)], &b[..b.len().min(n)]);
    for i in 0..a.len().max(b.len()) {
        let x = f(a.get(i).copied().unwrap_or(0));
        let y = f(b.get(i).copied().unwrap_or(0));
        if x != y {
            return (i32::from(x) - i32::from(y)) as u32;
        }
    }
    0
}

fn map_in_place(p: &mut Process, at: u32, f: fn(u16) -> u16) -> Result<u32, Stop> {
    let s: Vec<u16> = str(p, at)?.into_iter().map(f).collect();
    write_units(p, at, &s)?;
    Ok(at)
}

/// Is `name` a locale name this system knows?
fn known_locale(name: &str) -> Result<String, u32> {
    if name.is_empty() {
        return Ok("en_US".into());
    }
    if matches!(name, "C" | "POSIX" | "UNIVERSAL") {
        return Ok(name.into());
    }
    let base = name.split(['.', '@']).next().unwrap_or("");
    let b = base.as_bytes();
    let shaped = b.len() == 5
        && b[..2].iter().all(u8::is_ascii_lowercase)
        && b[2] == b'_'
        && b[3..].iter().all(u8::is_ascii_uppercase);
    if !shaped {
        return Err(ULS_INVALID);
    }
    // The system's locales: the countries nls.rs and the toolkit's
    // message files know.
    const KNOWN: &[&str] = &[
        "en_US", "en_GB", "de_DE", "fr_FR", "it_IT", "es_ES", "nl_NL", "sv_SE", "da_DK", "fi_FI",
        "nb_NO", "pt_PT", "pt_BR", "de_CH", "fr_CA", "ja_JP",
    ];
    if KNOWN.contains(&base) {
        Ok(name.into())
    } else {
        Err(ULS_UNSUPPORTED)
    }
}

fn create_locale(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (kind, spec, out) = (c.l(0), c.l(1), c.l(2));
    rd32(p, out)?;
    let name = match kind {
        1 => return Ok(ULS_UNSUPPORTED),
        _ if spec == 0 && (kind == 2 || kind == 3) => String::new(),
        2 => match p.read_sz(spec, false, 256) {
            Some(s) => s.iter().map(|&b| char::from(b)).collect(),
            None => return Err(uconv::fault(p, spec, false)),
        },
        3 => ustr_text(&read_ustr(p, spec, 256)?),
        _ => return Ok(ULS_INVALID),
    };
    let name = match known_locale(&name) {
        Ok(n) => n,
        Err(rc) => return Ok(rc),
    };
    let Some(h) = p.pcb.uni.add_locale(Locale { name }) else {
        return Ok(ULS_NOMEMORY);
    };
    wr32(p, out, h)?;
    Ok(ULS_SUCCESS)
}

/// The value of a digit in any base up to 36.
fn digit(u: u16) -> Option<u32> {
    ch(u).and_then(|c| c.to_digit(36))
}

/// UniStrtol / UniStrtoul (C's strtol rules on UniChars).
fn strtol(p: &mut Process, c: &Call, signed: bool) -> Result<u32, Stop> {
    let (at, end, base, result) = (c.l(1), c.l(2), c.l(3), c.l(4));
    if c.l(0) != 0 && p.pcb.uni.locale(c.l(0)).is_none() {
        return Ok(ULS_BADOBJECT);
    }
    let s = str(p, at)?;
    rd32(p, result)?;
    if base == 1 || base > 36 {
        return Ok(ULS_INVALID);
    }
    let mut i = s
        .iter()
        .take_while(|&&u| ch(u).is_some_and(char::is_whitespace))
        .count();
    let neg = match s.get(i) {
        Some(&0x2D) => {
            i += 1;
            true
        }
        Some(&0x2B) => {
            i += 1;
            false
        }
        _ => false,
    };
    let hex_prefix = s.get(i) == Some(&0x30)
        && matches!(s.get(i + 1), Some(&0x78) | Some(&0x58))
        && s.get(i + 2).and_then(|&u| digit(u)).is_some_and(|d| d < 16);
    let base = match base {
        0 if hex_prefix => 16,
        0 if s.get(i) == Some(&0x30) => 8,
        0 => 10,
        b => b,
    };
    if base == 16 && hex_prefix {
        i += 2;
    }
    let start = i;
    let mut v: u64 = 0;
    let mut over = false;
    while let Some(d) = s.get(i).and_then(|&u| digit(u)).filter(|&d| d < base) {
        v = v * u64::from(base) + u64::from(d);
        if v > u64::from(u32::MAX) + 1 {
            over = true;
            v = u64::from(u32::MAX) + 1;
        }
        i += 1;
    }
    if i == start {
        if end != 0 {
            wr32(p, end, at)?;
        }
        wr32(p, result, 0)?;
        return Ok(ULS_INVALID);
    }
    let (value, range) = if signed {
        let limit = if neg { 1u64 << 31 } else { (1u64 << 31) - 1 };
        if over || v > limit {
            (if neg { 0x8000_0000 } else { 0x7FFF_FFFF }, true)
        } else if neg {
            ((v as u32).wrapping_neg(), false)
        } else {
            (v as u32, false)
        }
    } else if over || v > u64::from(u32::MAX) {
        (u32::MAX, true)
    } else if neg {
        ((v as u32).wrapping_neg(), false)
    } else {
        (v as u32, false)
    };
    if end != 0 {
        wr32(p, end, at + 2 * i as u32)?;
    }
    wr32(p, result, value)?;
    Ok(if range { ULS_RANGE } else { ULS_SUCCESS })
}

/// UniStrtok's position in each thread: (next UniChar, or 0 when done).
#[derive(Debug, Default)]
pub(crate) struct TokState {
    next: BTreeMap<u32, u32>,
}

fn strtok(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let tid = p.current_tid();
    let at = match c.l(0) {
        0 => p.pcb.uni_tok.next.get(&tid).copied().unwrap_or(0),
        a => a,
    };
    if at == 0 {
        return Ok(0);
    }
    let (s, set) = (str(p, at)?, str(p, c.l(1))?);
    let skip = s.iter().take_while(|u| set.contains(u)).count();
    if skip == s.len() {
        p.pcb.uni_tok.next.insert(tid, 0);
        return Ok(0);
    }
    let len = s[skip..].iter().take_while(|u| !set.contains(u)).count();
    let token = at + 2 * skip as u32;
    let stop = token + 2 * len as u32;
    let next = if skip + len < s.len() {
        write_units(p, stop, &[0])?;
        stop + 2
    } else {
        0
    };
    p.pcb.uni_tok.next.insert(tid, next);
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_and_cases() {
        assert!(ch(0x00E9).is_some_and(char::is_alphabetic));
        assert_eq!(upper(0x00E9), 0x00C9);
        assert_eq!(lower(0x0130), 0x0130, "two-character lower case stays");
        assert_eq!(upper(0xDF), 0xDF, "sharp s upper-cases to two characters");
        assert!(blank(' ') && blank('\t') && !blank('\n'));
        assert!(graph('!') && !alnum('!') && !print('\u{7}'));
    }

    #[test]
    fn comparisons() {
        let a: Vec<u16> = "abc".encode_utf16().collect();
        let b: Vec<u16> = "abD".encode_utf16().collect();
        assert_eq!(
            compare(&a, &b, usize::MAX, |u| u) as i32,
            i32::from(b'c') - i32::from(b'D')
        );
        assert_eq!(compare(&a, &b, 2, |u| u), 0);
        assert_eq!(compare(&a, &b, usize::MAX, upper) as i32, -1);
        assert!((compare(&a, &a[..2], usize::MAX, |u| u) as i32) > 0);
    }

    #[test]
    fn locale_names() {
        assert_eq!(known_locale("").as_deref(), Ok("en_US"));
        assert_eq!(
            known_locale("de_DE.IBM-850").as_deref(),
            Ok("de_DE.IBM-850")
        );
        assert_eq!(known_locale("xx_YY"), Err(ULS_UNSUPPORTED));
        assert_eq!(known_locale("english"), Err(ULS_INVALID));
    }
}
