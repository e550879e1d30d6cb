//! Code pages for the Unicode API (UCONV, LIBUNI): which code pages
//! exist, and their mapping to and from UCS-2.
//!
//! Decisions:
//! - **Tables.** The single-byte PC code pages (437, 850 and the other
//!   OEM pages: 737, 775, 852, 855, 857, 858, 860-866, 869, 874) come from
//!   the `oem_cp` crate; 1252 and the ISO page 819 (Latin-1) from
//!   `encoding_rs` (WHATWG's windows-1252, whose five holes 0x81, 0x8D,
//!   0x8F, 0x90, 0x9D map to the C1 controls). 1208 is UTF-8 and 1200 is
//!   UCS-2 (little endian, as OS/2 stores UniChar). Nothing else is
//!   known: the conversion object cannot be created (UCONV_EINVAL).
//! - **The low 32 bytes and 0x7F** of a PC code page are controls or
//!   glyphs as the object's display mask and CVTTYPE_CTRL7F say: as
//!   controls they map to U+0000..U+001F and U+007F; as glyphs to the IBM
//!   PC's pictures (U+263A..., U+2302 for 0x7F). The other pages always
//!   treat them as controls.
//! - **Names.** `IBM-NNNN` (any case, also `IBMNNNN`, `CPNNNN` and the
//!   bare number), `UTF-8` and `UCS-2`; the empty name is the process's
//!   code page ([`PROCESS_CP`]).

use std::sync::OnceLock;

/// A single-byte page's characters by byte; `None` for a hole.
type Table = [Option<char>; 256];

/// The process's code page (DosQueryCp's first; see `nls.rs`).
pub(crate) const PROCESS_CP: u32 = 437;

/// The IBM PC's glyphs for bytes 0x00..=0x1F of a PC code page.
const PC_GLYPHS: [char; 32] = [
    '\u{0000}', '\u{263A}', '\u{263B}', '\u{2665}', '\u{2666}', '\u{2663}', '\u{2660}', '\u{2022}',
    '\u{25D8}', '\u{25CB}', '\u{25D9}', '\u{2642}', '\u{2640}', '\u{266A}', '\u{266B}', '\u{263C}',
    '\u{25BA}', '\u{25C4}', '\u{2195}', '\u{203C}', '\u{00B6}', '\u{00A7}', '\u{25AC}', '\u{21A8}',
    '\u{2191}', '\u{2193}', '\u{2192}', '\u{2190}', '\u{221F}', '\u{2194}', '\u{25B2}', '\u{25BC}',
];

/// The PC glyph for 0x7F (a house).
const PC_GLYPH_7F: char = '\u{2302}';

/// How a code page encodes characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scheme {
    /// One byte per character, with its 256-entry table.
    Sbcs {
        /// An IBM PC (OEM) page: the low bytes may be glyphs.
        pc: bool,
    },
    /// UTF-8 (1208).
    Utf8,
    /// UCS-2 little endian (1200).
    Ucs2,
}

/// A known code page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CodePage {
    /// Its number.
    pub(crate) cp: u32,
    /// Its encoding scheme.
    pub(crate) scheme: Scheme,
}

impl CodePage {
    /// Code page `cp`, if known.
    pub(crate) fn get(cp: u32) -> Option<CodePage> {
        let scheme = match cp {
            1208 => Scheme::Utf8,
            1200 | 13488 => Scheme::Ucs2,
            819 | 1252 => Scheme::Sbcs { pc: false },
            _ => {
                let n = u16::try_from(cp).ok()?;
                oem_cp::code_table::DECODING_TABLE_CP_MAP.get(&n)?;
                Scheme::Sbcs { pc: true }
            }
        };
        Some(CodePage { cp, scheme })
    }

    /// The code page a name gives (`IBM-850`, `utf-8`, ``).
    pub(crate) fn by_name(name: &str) -> Option<CodePage> {
        let up = name.trim().to_ascii_uppercase();
        let n = match up.as_str() {
            "" => PROCESS_CP,
            "UTF-8" | "UTF8" => 1208,
            "UCS-2" | "UCS2" => 1200,
            _ => {
                let digits = ["IBM-", "IBM", "CP"]
                    .iter()
                    .find_map(|p| up.strip_prefix(p))
                    .unwrap_or(&up);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                digits.parse().ok()?
            }
        };
        CodePage::get(n)
    }

    /// The 256-entry table of a single-byte page, with its low bytes and
    /// 0x7F as controls; `None` entries are holes.
    pub(crate) fn table(self) -> &'static [Option<char>; 256] {
        static TABLES: OnceLock<std::sync::Mutex<Vec<(u32, &'static Table)>>> = OnceLock::new();
        let tables = TABLES.get_or_init(Default::default);
        let mut tables = tables.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, t)) = tables.iter().find(|(cp, _)| *cp == self.cp) {
            return t;
        }
        let mut t = [None; 256];
        for (b, slot) in t.iter_mut().enumerate() {
            *slot = match self.cp {
                819 => Some(char::from(b as u8)),
                1252 => {
                    let byte = [b as u8];
                    let (s, _, bad) = encoding_rs::WINDOWS_1252.decode(&byte);
                    if bad { None } else { s.chars().next() }
                }
                _ if b < 0x80 => Some(char::from(b as u8)),
                _ => oem_cp::code_table::DECODING_TABLE_CP_MAP
                    .get(&(self.cp as u16))
                    .and_then(|tt| tt.decode_char_checked(b as u8)),
            };
        }
        let t: &'static [Option<char>; 256] = Box::leak(Box::new(t));
        tables.push((self.cp, t));
        t
    }

    /// Bytes per character: (min, max).
    pub(crate) fn byte_lengths(self) -> (u8, u8) {
        match self.scheme {
            Scheme::Sbcs { .. } => (1, 1),
            Scheme::Utf8 => (1, 3),
            Scheme::Ucs2 => (2, 2),
        }
    }

    /// The encoding scheme ID (`uconv_attribute_t.esid`).
    pub(crate) fn esid(self) -> u16 {
        match (self.scheme, self.cp) {
            (Scheme::Utf8, _) => 0x7807,
            (Scheme::Ucs2, _) => 0x7200,
            (_, 819) => 0x4100,
            (_, 1252) => 0x4105,
            _ => 0x3100,
        }
    }
}

/// How control bytes of a PC code page convert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Controls {
    /// Bit n set: byte n (0..32) is a control, else a glyph.
    pub(crate) displaymask: u32,
    /// 0x7F is a control (CVTTYPE_CTRL7F).
    pub(crate) ctrl7f: bool,
}

/// One step of a conversion to UCS-2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decoded {
    /// A character, and the bytes it used.
    Char(u16, usize),
    /// The bytes at the start are no character of the page (this many).
    Illegal(usize),
    /// The input ends inside a character.
    Incomplete,
}

/// The UniChar of byte `b` of a single-byte page with table `t`.
fn sbcs_char(t: &[Option<char>; 256], pc: bool, ctl: Controls, b: u8) -> Option<u16> {
    let glyph = pc
        && match b {
            0..=0x1F => ctl.displaymask & (1 << b) == 0,
            0x7F => !ctl.ctrl7f,
            _ => false,
        };
    let c = if glyph {
        Some(if b == 0x7F {
            PC_GLYPH_7F
        } else {
            PC_GLYPHS[usize::from(b)]
        })
    } else {
        t[usize::from(b)]
    };
    c.map(|c| c as u32 as u16)
}

/// Decode the first character of `input` (not empty).
pub(crate) fn decode(cp: CodePage, ctl: Controls, input: &[u8]) -> Decoded {
    let b = input[0];
    match cp.scheme {
        Scheme::Sbcs { pc } => match sbcs_char(cp.table(), pc, ctl, b) {
            Some(c) => Decoded::Char(c, 1),
            None => Decoded::Illegal(1),
        },
        Scheme::Ucs2 => match input {
            [lo, hi, ..] => Decoded::Char(u16::from_le_bytes([*lo, *hi]), 2),
            _ => Decoded::Incomplete,
        },
        Scheme::Utf8 => {
            let need = match b {
                0..=0x7F => return Decoded::Char(u16::from(b), 1),
                0xC2..=0xDF => 2,
                0xE0..=0xEF => 3,
                _ => return Decoded::Illegal(1),
            };
            let have = input.len().min(need);
            for (i, &c) in input[1..have].iter().enumerate() {
                if c & 0xC0 != 0x80 {
                    return Decoded::Illegal(i + 1);
                }
            }
            if have < need {
                return Decoded::Incomplete;
            }
            let v = if need == 2 {
                (u32::from(b & 0x1F) << 6) | u32::from(input[1] & 0x3F)
            } else {
                (u32::from(b & 0x0F) << 12)
                    | (u32::from(input[1] & 0x3F) << 6)
                    | u32::from(input[2] & 0x3F)
            };
            // Overlong three-byte forms are not characters.
            if v < 0x800 && need == 3 {
                return Decoded::Illegal(need);
            }
            Decoded::Char(v as u16, need)
        }
    }
}

/// Encode one UniChar; `None` when the page has no such character.
pub(crate) fn encode(cp: CodePage, ctl: Controls, u: u16, out: &mut Vec<u8>) -> Option<()> {
    match cp.scheme {
        Scheme::Ucs2 => out.extend_from_slice(&u.to_le_bytes()),
        Scheme::Utf8 => {
            let v = u32::from(u);
            if v < 0x80 {
                out.push(v as u8);
            } else if v < 0x800 {
                out.extend_from_slice(&[0xC0 | (v >> 6) as u8, 0x80 | (v & 0x3F) as u8]);
            } else {
                out.extend_from_slice(&[
                    0xE0 | (v >> 12) as u8,
                    0x80 | ((v >> 6) & 0x3F) as u8,
                    0x80 | (v & 0x3F) as u8,
                ]);
            }
        }
        Scheme::Sbcs { pc } => {
            let t = cp.table();
            let b = (0..=255u8).find(|&b| sbcs_char(t, pc, ctl, b) == Some(u))?;
            out.push(b);
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DATA: Controls = Controls {
        displaymask: u32::MAX,
        ctrl7f: true,
    };

    fn to_ucs(cp: u32, bytes: &[u8]) -> Vec<u16> {
        let cp = CodePage::get(cp).unwrap();
        let mut at = 0;
        let mut out = Vec::new();
        while at < bytes.len() {
            match decode(cp, DATA, &bytes[at..]) {
                Decoded::Char(u, n) => {
                    out.push(u);
                    at += n;
                }
                other => panic!("{other:?} at {at}"),
            }
        }
        out
    }

    #[test]
    fn pc_pages_differ_where_ibm_says() {
        // 0x9B is the cent sign in 437 and o-slash in 850; 0xD5 is the
        // box corner in 437 and the dotless i in 850.
        assert_eq!(to_ucs(437, &[0x9B, 0xD5]), [0x00A2, 0x2552]);
        assert_eq!(to_ucs(850, &[0x9B, 0xD5]), [0x00F8, 0x0131]);
        assert_eq!(to_ucs(1252, &[0x80, 0xE9, 0x9F]), [0x20AC, 0x00E9, 0x0178]);
    }

    #[test]
    fn round_trip_every_byte_of_437_850_1252() {
        for cp in [437, 850, 1252] {
            let page = CodePage::get(cp).unwrap();
            for b in 0..=255u8 {
                let Decoded::Char(u, 1) = decode(page, DATA, &[b]) else {
                    panic!("{cp}: {b:#x} undefined");
                };
                let mut out = Vec::new();
                encode(page, DATA, u, &mut out).unwrap();
                assert_eq!(out, [b], "{cp}: {b:#x} via U+{u:04X}");
            }
        }
    }

    #[test]
    fn glyphs_and_controls_follow_the_mask() {
        let cp = CodePage::get(437).unwrap();
        let display = Controls {
            displaymask: 0x0000_2400,
            ctrl7f: false,
        };
        assert_eq!(decode(cp, display, &[1]), Decoded::Char(0x263A, 1));
        assert_eq!(decode(cp, display, &[0x0A]), Decoded::Char(0x0A, 1));
        assert_eq!(decode(cp, display, &[0x7F]), Decoded::Char(0x2302, 1));
        assert_eq!(decode(cp, DATA, &[1]), Decoded::Char(1, 1));
        let mut out = Vec::new();
        assert!(encode(cp, DATA, 0x263A, &mut out).is_none());
    }

    #[test]
    fn utf8_decodes_and_rejects() {
        let cp = CodePage::get(1208).unwrap();
        assert_eq!(decode(cp, DATA, &[0xC3, 0xA9]), Decoded::Char(0xE9, 2));
        assert_eq!(
            decode(cp, DATA, &[0xE2, 0x82, 0xAC]),
            Decoded::Char(0x20AC, 3)
        );
        assert_eq!(decode(cp, DATA, &[0xE2, 0x82]), Decoded::Incomplete);
        assert_eq!(decode(cp, DATA, &[0xC3, 0x41]), Decoded::Illegal(1));
        assert_eq!(decode(cp, DATA, &[0xFF]), Decoded::Illegal(1));
        let mut out = Vec::new();
        encode(cp, DATA, 0x20AC, &mut out).unwrap();
        assert_eq!(out, [0xE2, 0x82, 0xAC]);
    }

    #[test]
    fn names() {
        assert_eq!(CodePage::by_name("IBM-850").map(|c| c.cp), Some(850));
        assert_eq!(CodePage::by_name("ibm1252").map(|c| c.cp), Some(1252));
        assert_eq!(CodePage::by_name("").map(|c| c.cp), Some(PROCESS_CP));
        assert_eq!(CodePage::by_name("UTF-8").map(|c| c.cp), Some(1208));
        assert!(CodePage::by_name("IBM-").is_none());
        assert!(CodePage::by_name("IBM-99999").is_none());
        assert!(CodePage::by_name("KOI8-R").is_none());
    }
}
