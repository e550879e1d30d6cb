//! EXEPACK2: the LZ77-style page compression of LX page type 5.
//!
//! Token formats (Wynn & Wu 2000, with the two known corrections):
//!
//! ```text
//! 00 prefix  byte0 = n<<2, n 1..63        pure roots: n literal bytes follow
//!            00 cnt b                      repeat byte b cnt (1..255) times
//!            00 00                         end code (a third byte may follow)
//! 01 prefix  u16: bits 2-3 nroots, bits 4-6 len-3, bits 7-15 back distance
//! 10 prefix  u16: bits 2-3 len-3, bits 4-15 back distance (no roots)
//! 11 prefix  u24: bits 2-5 nroots, bits 6-11 len, bits 12-23 back distance
//! ```
//!
//! The nroots literal bytes follow the token and are output before the copy.
//! Corrections to the paper: the long-string length is the field value itself
//! (not biased by 3), and a back distance of 1 names the previous output byte.
//! Copies may overlap their own output (byte by byte). Decisions: a back
//! distance of 0 or one reaching before the start of the page is an error;
//! input that ends without an end code is accepted; bytes after the end code
//! are ignored; output beyond the limit (the page size) is an error.
//! LINK386 trims the zero bytes at the end of a page before compressing it
//! (as for legal pages); the rest of the page is zero filled.
//!
//! The encoder copies from at least four bytes back. In the 115 compressed
//! pages of the OS/2 Warp 4.5 Toolkit (46,863 copies, 183 overlapping their
//! own output) no copy starts less than four bytes back, which suggests
//! IBM's decompressor may move dwords; output limited this way decodes the
//! same either way. The decoder accepts any distance from 1.

use crate::error::{Error, ErrorKind, Result};

const WHAT: &str = "EXEPACK2 stream";

/// Decompresses an EXEPACK2 stream. `offset` is its file offset (for errors),
/// `limit` the largest output allowed.
pub fn decode(src: &[u8], offset: u64, limit: usize) -> Result<Vec<u8>> {
    let mut out: Vec<u8> = Vec::new();
    let mut pos = 0usize;
    let bad = |at: usize, kind: ErrorKind| Error::new(offset + at as u64, WHAT, kind);
    while pos < src.len() {
        let at = pos;
        let b0 = src[pos];
        let need = |n: usize| {
            if at + n <= src.len() {
                Ok(())
            } else {
                Err(bad(at, ErrorKind::Truncated))
            }
        };
        let (roots, copy_len, dist, size) = match b0 & 3 {
            0 if b0 != 0 => (usize::from(b0 >> 2), 0, 0, 1),
            0 => {
                need(2)?;
                let count = usize::from(src[pos + 1]);
                if count == 0 {
                    return Ok(out);
                }
                need(3)?;
                if out.len() + count > limit {
                    return Err(bad(
                        at,
                        ErrorKind::OutOfRange {
                            value: (out.len() + count) as u64,
                            limit: limit as u64,
                        },
                    ));
                }
                out.resize(out.len() + count, src[pos + 2]);
                pos += 3;
                continue;
            }
            1 => {
                need(2)?;
                let w = usize::from(u16::from_le_bytes([src[pos], src[pos + 1]]));
                ((w >> 2) & 3, ((w >> 4) & 7) + 3, w >> 7, 2)
            }
            2 => {
                need(2)?;
                let w = usize::from(u16::from_le_bytes([src[pos], src[pos + 1]]));
                (0, ((w >> 2) & 3) + 3, w >> 4, 2)
            }
            _ => {
                need(3)?;
                let w = usize::from(src[pos])
                    | usize::from(src[pos + 1]) << 8
                    | usize::from(src[pos + 2]) << 16;
                ((w >> 2) & 0xF, (w >> 6) & 0x3F, w >> 12, 3)
            }
        };
        pos += size;
        let Some(literal) = src.get(pos..pos + roots) else {
            return Err(bad(at, ErrorKind::Truncated));
        };
        if out.len() + roots + copy_len > limit {
            let value = (out.len() + roots + copy_len) as u64;
            return Err(bad(
                at,
                ErrorKind::OutOfRange {
                    value,
                    limit: limit as u64,
                },
            ));
        }
        out.extend_from_slice(literal);
        pos += roots;
        if copy_len > 0 {
            if dist == 0 || dist > out.len() {
                return Err(bad(
                    at,
                    ErrorKind::OutOfRange {
                        value: dist as u64,
                        limit: out.len() as u64,
                    },
                ));
            }
            let from = out.len() - dist;
            for k in 0..copy_len {
                out.push(out[from + k]);
            }
        }
    }
    Ok(out)
}

/// Compresses `data` (at most one page) into an EXEPACK2 stream ending with
/// the three-byte end code. Greedy longest match over a hash chain; runs of
/// five or more equal bytes become repeat roots; copies start at least four
/// bytes back.
pub fn encode(data: &[u8]) -> Vec<u8> {
    let mut enc = Encoder {
        data,
        out: Vec::new(),
        lit_start: 0,
    };
    let mut chains = Chains::new(data.len());
    let mut i = 0usize;
    while i < data.len() {
        let run = data[i..]
            .iter()
            .take(255)
            .take_while(|&&b| b == data[i])
            .count();
        if run >= 5 {
            enc.flush_literals(i, 0);
            enc.out.extend_from_slice(&[0, run as u8, data[i]]);
            for k in i..i + run {
                chains.insert(data, k);
            }
            i += run;
            enc.lit_start = i;
            continue;
        }
        if let Some((len, dist)) = chains.longest(data, i) {
            enc.emit_match(i, len, dist);
            for k in i..i + len {
                chains.insert(data, k);
            }
            i += len;
            enc.lit_start = i;
        } else {
            chains.insert(data, i);
            i += 1;
        }
    }
    enc.flush_literals(data.len(), 0);
    enc.out.extend_from_slice(&[0, 0, 0]);
    enc.out
}

struct Encoder<'a> {
    data: &'a [u8],
    out: Vec<u8>,
    lit_start: usize,
}

impl Encoder<'_> {
    /// Emits pure-root tokens for pending literals up to `end`, leaving at
    /// most `keep` of them pending.
    fn flush_literals(&mut self, end: usize, keep: usize) {
        while end - self.lit_start > keep {
            let n = (end - self.lit_start - keep).min(63);
            self.out.push((n as u8) << 2);
            self.out
                .extend_from_slice(&self.data[self.lit_start..self.lit_start + n]);
            self.lit_start += n;
        }
    }

    /// Emits the literals pending before `i` and a copy of `len` bytes from
    /// `dist` back.
    fn emit_match(&mut self, i: usize, len: usize, dist: usize) {
        let pending = i - self.lit_start;
        if pending <= 3 && (3..=10).contains(&len) && dist < 512 {
            let w = 1 | (pending << 2) | ((len - 3) << 4) | (dist << 7);
            self.out.extend_from_slice(&(w as u16).to_le_bytes());
        } else if pending == 0 && (3..=6).contains(&len) {
            let w = 2 | ((len - 3) << 2) | (dist << 4);
            self.out.extend_from_slice(&(w as u16).to_le_bytes());
        } else {
            self.flush_literals(i, 15);
            let pending = i - self.lit_start;
            let w = 3 | (pending << 2) | (len << 6) | (dist << 12);
            self.out.extend_from_slice(&w.to_le_bytes()[..3]);
        }
        let pending = i - self.lit_start;
        self.out
            .extend_from_slice(&self.data[self.lit_start..self.lit_start + pending]);
    }
}

/// Hash chains over 3-byte prefixes for match finding.
struct Chains {
    head: Vec<u32>,
    prev: Vec<u32>,
}

const NONE: u32 = u32::MAX;
const MAX_DIST: usize = 4095;
const MAX_LEN: usize = 63;
/// Copies start at least this far back (see the module docs).
const MIN_DIST: usize = 4;

impl Chains {
    fn new(len: usize) -> Self {
        Chains {
            head: vec![NONE; 1 << 12],
            prev: vec![NONE; len],
        }
    }

    fn hash(data: &[u8], i: usize) -> Option<usize> {
        let b = data.get(i..i + 3)?;
        Some(((usize::from(b[0]) << 4) ^ (usize::from(b[1]) << 2) ^ usize::from(b[2])) & 0xFFF)
    }

    fn insert(&mut self, data: &[u8], i: usize) {
        if let Some(h) = Self::hash(data, i) {
            self.prev[i] = self.head[h];
            self.head[h] = i as u32;
        }
    }

    fn longest(&self, data: &[u8], i: usize) -> Option<(usize, usize)> {
        let h = Self::hash(data, i)?;
        let mut cand = self.head[h];
        let mut best: Option<(usize, usize)> = None;
        let mut steps = 0;
        while cand != NONE && steps < 64 {
            let c = cand as usize;
            let dist = i - c;
            if dist > MAX_DIST {
                break;
            }
            if dist < MIN_DIST {
                cand = self.prev[c];
                steps += 1;
                continue;
            }
            let len = (0..MAX_LEN.min(data.len() - i))
                .take_while(|&k| data[c + k] == data[i + k])
                .count();
            if len >= 3 && best.is_none_or(|(l, _)| len > l) {
                best = Some((len, dist));
            }
            cand = self.prev[c];
            steps += 1;
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_string_length_is_not_biased() {
        // "ab" as pure roots, then a long string: 0 roots, len 4, dist 2.
        let w: u32 = 3 | (4 << 6) | (2 << 12);
        let mut src = vec![2 << 2, b'a', b'b'];
        src.extend_from_slice(&w.to_le_bytes()[..3]);
        src.extend_from_slice(&[0, 0]);
        assert_eq!(decode(&src, 0, 4096).unwrap(), b"ababab");
    }

    #[test]
    fn distance_one_is_the_previous_byte() {
        // Short string: 1 root 'x', len 3 (field 0), distance 1.
        let w: u16 = 1 | (1 << 2) | (1 << 7);
        let mut src = w.to_le_bytes().to_vec();
        src.push(b'x');
        assert_eq!(decode(&src, 0, 4096).unwrap(), b"xxxx");
    }

    #[test]
    fn mid_string_and_repeat_root() {
        let w: u16 = 2 | (1 << 2) | (3 << 4);
        let mut src = vec![0, 3, b'q', 3 << 2, b'a', b'b', b'c'];
        src.extend_from_slice(&w.to_le_bytes());
        assert_eq!(decode(&src, 0, 4096).unwrap(), b"qqqabcabca");
    }

    #[test]
    fn zero_distance_is_an_error_naming_the_token() {
        let src = [1u8, 0]; // short string, distance 0
        let err = decode(&src, 0x200, 4096).unwrap_err();
        assert_eq!(err.offset, 0x200);
        assert_eq!(err.structure, "EXEPACK2 stream");
    }

    #[test]
    fn output_past_the_page_is_an_error() {
        let err = decode(&[0, 255, 1, 0, 255, 1], 0, 300).unwrap_err();
        assert_eq!(err.offset, 3);
    }

    /// The back distances of every copy token in a stream.
    fn distances(src: &[u8]) -> Vec<usize> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < src.len() {
            let b0 = src[pos];
            let (size, roots, dist) = match b0 & 3 {
                0 if b0 != 0 => (1, usize::from(b0 >> 2), None),
                0 if src[pos + 1] == 0 => break,
                0 => (3, 0, None),
                1 | 2 => {
                    let w = usize::from(u16::from_le_bytes([src[pos], src[pos + 1]]));
                    if b0 & 3 == 1 {
                        (2, (w >> 2) & 3, Some(w >> 7))
                    } else {
                        (2, 0, Some(w >> 4))
                    }
                }
                _ => {
                    let w = usize::from(src[pos])
                        | usize::from(src[pos + 1]) << 8
                        | usize::from(src[pos + 2]) << 16;
                    (3, (w >> 2) & 0xF, Some(w >> 12))
                }
            };
            out.extend(dist);
            pos += size + roots;
        }
        out
    }

    #[test]
    fn encoder_never_copies_from_less_than_four_back() {
        let data: Vec<u8> = b"aab"
            .iter()
            .chain(b"aaaab")
            .chain(b"xyxyxyxyxyxy")
            .copied()
            .cycle()
            .take(3000)
            .collect();
        let packed = encode(&data);
        let d = distances(&packed);
        assert!(!d.is_empty());
        assert!(d.iter().all(|&x| x >= 4), "{d:?}");
        assert_eq!(decode(&packed, 0, 4096).unwrap(), data);
    }

    #[test]
    fn encode_round_trips_text_and_zeros() {
        let mut data =
            b"the quick brown fox jumps over the lazy dog; the quick brown fox".repeat(20);
        data.extend(std::iter::repeat_n(0u8, 700));
        data.truncate(4096);
        let packed = encode(&data);
        assert!(
            packed.len() < data.len() / 4,
            "{} of {}",
            packed.len(),
            data.len()
        );
        assert_eq!(decode(&packed, 0, 4096).unwrap(), data);
    }
}
