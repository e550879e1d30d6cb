//! TSF FMT text to the TFF encoding, as TRCUST 3.05A writes it
//! (TRCUST-FORMATS.md §4.1). The input is the FMT string's content after
//! the TSF's own string processing (quotes, `\"`); backslash sequences are
//! not touched here, TRCUST stores them unchanged.
//!
//! * `%A %B %C %D %F %P %Q %S %U %W %X %Y`, either case → `01` + upper-case
//!   letter; exactly one space after `%P` is dropped.
//! * `%Innn` (either case, at least one digit) → `01 'I'` + the digits.
//! * `%R` → `01 'R'` only when, after optional spaces, the next thing is one
//!   of `%A %B %C %D %F %Q %W`; otherwise it stays `%R`.
//! * Everything else, including other `%x`, is stored as it is.

use super::CONTROL_BYTE;

/// Encodes a FMT string the way TRCUST stores it in a TFF.
pub fn compile_fmt(src: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len());
    let mut i = 0;
    while i < src.len() {
        if src[i] != b'%' || i + 1 >= src.len() {
            out.push(src[i]);
            i += 1;
            continue;
        }
        let letter = src[i + 1].to_ascii_uppercase();
        match letter {
            b'A' | b'B' | b'C' | b'D' | b'F' | b'Q' | b'S' | b'U' | b'W' | b'X' | b'Y' => {
                out.extend_from_slice(&[CONTROL_BYTE, letter]);
                i += 2;
            }
            b'P' => {
                out.extend_from_slice(&[CONTROL_BYTE, b'P']);
                i += 2;
                if src.get(i) == Some(&b' ') {
                    i += 1;
                }
            }
            b'I' => {
                let digits = src[i + 2..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
                if digits == 0 {
                    out.extend_from_slice(&src[i..i + 2]);
                } else {
                    out.extend_from_slice(&[CONTROL_BYTE, b'I']);
                    out.extend_from_slice(&src[i + 2..i + 2 + digits]);
                }
                i += 2 + digits;
            }
            b'R' if repeatable_follows(&src[i + 2..]) => {
                out.extend_from_slice(&[CONTROL_BYTE, b'R']);
                i += 2;
            }
            _ => {
                out.push(b'%');
                i += 1;
            }
        }
    }
    out
}

/// Whether, after spaces, `rest` starts with a control `%R` may repeat.
fn repeatable_follows(rest: &[u8]) -> bool {
    let rest = &rest[rest.iter().take_while(|&&b| b == b' ').count()..];
    matches!(
        rest,
        [b'%', c, ..] if matches!(c.to_ascii_uppercase(), b'A' | b'B' | b'C' | b'D' | b'F' | b'Q' | b'W')
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> Vec<u8> {
        compile_fmt(s.as_bytes())
    }

    #[test]
    fn controls_become_marker_and_letter() {
        assert_eq!(c("%C|%c"), b"\x01C|\x01C");
        assert_eq!(c(" %P %W here"), b" \x01P\x01W here");
        assert_eq!(c("%P  %W"), b"\x01P \x01W");
        assert_eq!(c("%R %W"), b"\x01R \x01W");
        assert_eq!(c("%Rx"), b"%Rx");
        assert_eq!(c("%R%S"), b"%R\x01S");
        assert_eq!(c("%R"), b"%R");
        assert_eq!(c("skip %I10 here"), b"skip \x01I10 here");
        assert_eq!(c("%I x"), b"%I x");
        assert_eq!(c("%5W %08D %% %E"), b"%5W %08D %% %E");
        assert_eq!(c("%"), b"%");
    }
}
