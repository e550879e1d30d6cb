//! XPG message catalogs (catopen, catgets, catclose) in the format of
//! IBM's GENCAT as the toolkit's `msg/toolkit.cat` has it:
//! - a 28-byte header: magic 0x000001F9 (u32), the number of sets (u16)
//!   at 4;
//! - then each set: its number (u16), its message count (u16), and per
//!   message its number (u16), length (u16) and the file offset (u32) of
//!   its NUL-terminated text.
//!
//! Decisions: catopen takes a name with a `\`, `/` or `:` as a path;
//! otherwise it tries each element of NLSPATH (`%N` the name, `%L` LANG,
//! `%%` a percent sign; an element without `%N` is a directory), then the
//! current directory. A file that is no catalog, or one bigger than
//! 1 MB, fails (errno ENOENT, EINVAL). catgets copies a message into the
//! C heap once and returns that copy each time after.

use std::collections::BTreeMap;

use super::{Call, Process, Stop, cstr, malloc, put_sz, rt, set_errno, stack_arg};

/// The catalog magic.
const MAGIC: u32 = 0x1F9;
/// Largest catalog read.
const MAX_CAT: usize = 0x10_0000;
/// The first descriptor.
const FIRST: u32 = 0x1D00_0001;

/// An open catalog.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    /// (set, message) → text.
    msgs: BTreeMap<(u16, u16), Vec<u8>>,
    /// Copies already given to the guest.
    copies: BTreeMap<(u16, u16), u32>,
}

/// Parses a catalog file.
pub(crate) fn parse(b: &[u8]) -> Option<Catalog> {
    let u16_at = |o: usize| Some(u16::from_le_bytes([*b.get(o)?, *b.get(o + 1)?]));
    let u32_at = |o: usize| Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?));
    if u32_at(0)? != MAGIC {
        return None;
    }
    let sets = u16_at(4)?;
    let mut at = 0x1C;
    let mut cat = Catalog::default();
    for _ in 0..sets {
        let (set, count) = (u16_at(at)?, u16_at(at + 2)?);
        at += 4;
        for _ in 0..count {
            let (num, len, off) = (u16_at(at)?, u16_at(at + 2)?, u32_at(at + 4)? as usize);
            at += 8;
            let text = b.get(off..off.checked_add(usize::from(len))?)?;
            let end = text.iter().position(|&c| c == 0).unwrap_or(text.len());
            cat.msgs.insert((set, num), text[..end].to_vec());
        }
    }
    Some(cat)
}

/// The candidate files for a catalog name.
fn candidates(name: &[u8], nlspath: &[u8], lang: &[u8]) -> Vec<Vec<u8>> {
    if name.iter().any(|&c| matches!(c, b'\\' | b'/' | b':')) {
        return vec![name.to_vec()];
    }
    let mut out = Vec::new();
    for elem in nlspath.split(|&c| c == b';').filter(|e| !e.is_empty()) {
        let mut path = Vec::new();
        let mut named = false;
        let mut i = 0;
        while i < elem.len() {
            if elem[i] == b'%' && i + 1 < elem.len() {
                match elem[i + 1] {
                    b'N' => {
                        path.extend_from_slice(name);
                        named = true;
                    }
                    b'L' => path.extend_from_slice(lang),
                    b'%' => path.push(b'%'),
                    _ => {}
                }
                i += 2;
                continue;
            }
            path.push(elem[i]);
            i += 1;
        }
        if !named {
            if !matches!(path.last(), Some(b'\\' | b'/')) {
                path.push(b'\\');
            }
            path.extend_from_slice(name);
        }
        out.push(path);
    }
    out.push(name.to_vec());
    out
}

/// catopen(name, flag).
pub(super) fn catopen(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let name = cstr(p, c.l(0))?;
    let nlspath = super::strings::env_value(p, b"NLSPATH")?.unwrap_or_default();
    let lang = super::strings::env_value(p, b"LANG")?.unwrap_or_default();
    for path in candidates(&name, &nlspath, &lang) {
        let Ok(r) = p.files().resolve(&path) else {
            continue;
        };
        if r.exists != Some(false) {
            continue;
        }
        let bytes = match std::fs::metadata(&r.host) {
            Ok(m) if m.len() as usize <= MAX_CAT => std::fs::read(&r.host).unwrap_or_default(),
            _ => Vec::new(),
        };
        let Some(cat) = parse(&bytes) else {
            set_errno(p, super::EINVAL)?;
            return Ok(u32::MAX);
        };
        let r = rt(p);
        if r.catalogs.len() >= 64 {
            set_errno(p, super::EMFILE)?;
            return Ok(u32::MAX);
        }
        let h = FIRST + r.next_catalog;
        r.next_catalog += 1;
        r.catalogs.insert(h, cat);
        return Ok(h);
    }
    set_errno(p, super::ENOENT)?;
    Ok(u32::MAX)
}

/// catgets(catd, set, num, default): the message, or the default.
pub(super) fn catgets(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let default = stack_arg(p, 16)?;
    let key = (c.l(1) as u16, c.l(2) as u16);
    let Some(cat) = rt(p).catalogs.get(&c.l(0)) else {
        set_errno(p, super::EBADF)?;
        return Ok(default);
    };
    if let Some(&a) = cat.copies.get(&key) {
        return Ok(a);
    }
    let Some(text) = cat.msgs.get(&key).cloned() else {
        set_errno(p, super::ENOENT)?;
        return Ok(default);
    };
    let a = malloc(p, text.len() as u32 + 1)?;
    if a == 0 {
        return Ok(default);
    }
    put_sz(p, a, &text)?;
    if let Some(cat) = rt(p).catalogs.get_mut(&c.l(0)) {
        cat.copies.insert(key, a);
    }
    Ok(a)
}

/// catclose(catd): 0, or -1 (EBADF). The copies stay (a program may
/// still hold them).
pub(super) fn catclose(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    if rt(p).catalogs.remove(&c.l(0)).is_none() {
        set_errno(p, super::EBADF)?;
        return Ok(u32::MAX);
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        let mut b = vec![0u8; 0x1C];
        b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        b[4] = 1;
        // set 7 with one message: number 3, 5 bytes at 0x28
        b.extend_from_slice(&[7, 0, 1, 0, 3, 0, 5, 0, 0x28, 0, 0, 0]);
        b.extend_from_slice(b"hello\0");
        let cat = parse(&b).unwrap();
        assert_eq!(
            cat.msgs.get(&(7, 3)).map(Vec::as_slice),
            Some(&b"hello"[..])
        );
        let mut bad = b.clone();
        bad[0] = 0;
        assert!(parse(&bad).is_none());
        assert!(parse(&b[..0x2A]).is_none(), "a message past the end");
    }

    #[test]
    fn nlspath() {
        let c = candidates(b"t.cat", b"C:\\MSG\\%N;D:\\X;%L\\%N", b"en");
        assert_eq!(
            c,
            vec![
                b"C:\\MSG\\t.cat".to_vec(),
                b"D:\\X\\t.cat".to_vec(),
                b"en\\t.cat".to_vec(),
                b"t.cat".to_vec()
            ]
        );
        assert_eq!(
            candidates(b"C:\\t.cat", b"X", b""),
            vec![b"C:\\t.cat".to_vec()]
        );
    }
}
