//! EXEPACK1: iterated data records (LX page type 1, NE iterated segments).
//!
//! A record is `u16 iterations, u16 length, length bytes`; the bytes are
//! repeated `iterations` times. Decisions: a record with zero iterations or
//! zero length produces nothing; bytes left over that are too few for a
//! record header are an error; the output may not exceed the limit the
//! caller gives (the page size, or 64 KiB for a segment).

use crate::error::{Error, ErrorKind, Result};

/// Expands iteration records. `offset` is the file offset of `src`, used in
/// errors; `limit` caps the output size.
pub fn decode(src: &[u8], offset: u64, limit: usize) -> Result<Vec<u8>> {
    const WHAT: &str = "EXEPACK1 iteration record";
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < src.len() {
        let at = offset + pos as u64;
        if src.len() - pos < 4 {
            return Err(Error::new(at, WHAT, ErrorKind::Truncated));
        }
        let iterations = usize::from(u16::from_le_bytes([src[pos], src[pos + 1]]));
        let len = usize::from(u16::from_le_bytes([src[pos + 2], src[pos + 3]]));
        pos += 4;
        let Some(pattern) = src.get(pos..pos + len) else {
            return Err(Error::new(at, WHAT, ErrorKind::Truncated));
        };
        let total = iterations * len;
        if out.len() + total > limit {
            let value = (out.len() + total) as u64;
            return Err(Error::new(
                at,
                WHAT,
                ErrorKind::OutOfRange {
                    value,
                    limit: limit as u64,
                },
            ));
        }
        for _ in 0..iterations {
            out.extend_from_slice(pattern);
        }
        pos += len;
    }
    Ok(out)
}

/// Encodes `data` as iteration records. Patterns are at most `max_pattern`
/// bytes (LX: half the page size); literal runs become records with one
/// iteration. Repeats of patterns up to 16 bytes are found greedily.
pub fn encode(data: &[u8], max_pattern: usize) -> Vec<u8> {
    let max_pattern = max_pattern.clamp(1, usize::from(u16::MAX));
    let mut out = Vec::new();
    let mut literal_start = 0usize;
    let mut i = 0usize;
    while i < data.len() {
        match best_repeat(data, i, max_pattern) {
            Some((len, count)) => {
                flush_literal(&mut out, &data[literal_start..i], max_pattern);
                push_record(&mut out, count as u16, &data[i..i + len]);
                i += len * count;
                literal_start = i;
            }
            None => i += 1,
        }
    }
    flush_literal(&mut out, &data[literal_start..], max_pattern);
    out
}

/// The best (pattern length, repeat count) at `i`, if it saves bytes.
fn best_repeat(data: &[u8], i: usize, max_pattern: usize) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize, usize)> = None; // len, count, saved
    for len in 1..=16.min(max_pattern) {
        if i + 2 * len > data.len() {
            break;
        }
        let pattern = &data[i..i + len];
        let mut count = 1;
        while count < usize::from(u16::MAX)
            && i + (count + 1) * len <= data.len()
            && &data[i + count * len..i + (count + 1) * len] == pattern
        {
            count += 1;
        }
        let covered = len * count;
        // A repeat record costs 4 + len bytes and splits the literal around
        // it, which costs another 4-byte header.
        let cost = 8 + len;
        if count >= 2 && covered > cost {
            let saved = covered - cost;
            if best.is_none_or(|(_, _, s)| saved > s) {
                best = Some((len, count, saved));
            }
        }
    }
    best.map(|(len, count, _)| (len, count))
}

fn flush_literal(out: &mut Vec<u8>, literal: &[u8], max_pattern: usize) {
    for chunk in literal.chunks(max_pattern) {
        push_record(out, 1, chunk);
    }
}

fn push_record(out: &mut Vec<u8>, iterations: u16, pattern: &[u8]) {
    out.extend_from_slice(&iterations.to_le_bytes());
    out.extend_from_slice(&(pattern.len() as u16).to_le_bytes());
    out.extend_from_slice(pattern);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_a_repeat_and_a_literal() {
        let src = [3, 0, 2, 0, b'a', b'b', 1, 0, 1, 0, b'z'];
        assert_eq!(decode(&src, 0, 4096).unwrap(), b"abababz");
    }

    #[test]
    fn one_byte_pattern_repeats_iterations_times() {
        // TRCUST 3.05A expands this to one byte (a known defect); the LX
        // specification, and this decoder, give #iterations bytes.
        let src = [5, 0, 1, 0, 0x99, 1, 0, 1, 0, 0x22];
        assert_eq!(
            decode(&src, 0, 4096).unwrap(),
            [0x99, 0x99, 0x99, 0x99, 0x99, 0x22]
        );
    }

    #[test]
    fn rejects_output_past_the_limit() {
        let src = [0xff, 0xff, 1, 0, 0];
        let err = decode(&src, 100, 4096).unwrap_err();
        assert_eq!(err.offset, 100);
        assert!(matches!(err.kind, ErrorKind::OutOfRange { .. }));
    }

    #[test]
    fn rejects_a_short_header() {
        let err = decode(&[1, 0, 1], 7, 4096).unwrap_err();
        assert_eq!((err.offset, err.kind), (7, ErrorKind::Truncated));
    }

    #[test]
    fn encode_compresses_zero_runs_and_round_trips() {
        let mut data = vec![0u8; 3000];
        data.extend_from_slice(b"hello world");
        let packed = encode(&data, 2048);
        assert!(packed.len() < 40, "{} bytes", packed.len());
        assert_eq!(decode(&packed, 0, 4096).unwrap(), data);
    }
}
