//! One instruction line of a trace program file, blanks already removed:
//! mnemonic and form matched against the opcode table, operands parsed and
//! range-checked, jump targets left as labels or distances.

use crate::opcode::{OPCODES, Op, Operand};

/// Parses a number: decimal, `0x` hex or `h`-suffixed hex.
pub fn parse_number(text: &str) -> Option<u64> {
    let t = text.to_ascii_lowercase();
    if let Some(hex) = t.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16).ok();
    }
    if let Some(hex) = t.strip_suffix('h') {
        if hex.starts_with(|c: char| c.is_ascii_digit()) {
            return u64::from_str_radix(hex, 16).ok();
        }
        return None;
    }
    if t.starts_with(|c: char| c.is_ascii_digit()) {
        return t.parse().ok();
    }
    None
}

/// A jump operand as written.
pub(super) enum ParsedTarget {
    Distance(u32),
    /// Label name and its byte index in the squeezed instruction text.
    Label(String, usize),
}

/// Parses one squeezed instruction; errors carry a byte index into `text`.
pub(super) fn parse_instruction(
    text: &str,
) -> Result<(Op, u32, Option<ParsedTarget>), (usize, String)> {
    let lower = text.to_ascii_lowercase();
    // Exact forms or forms followed by `,operand`.
    let mut found = None;
    for info in OPCODES {
        let name = format!("{}{}", info.mnemonic, info.form).to_ascii_lowercase();
        if lower == name {
            found = Some((info, None));
            break;
        }
        if let Some(rest) = lower.strip_prefix(&name).and_then(|r| r.strip_prefix(',')) {
            found = Some((
                info,
                Some((name.len() + 1, &text[text.len() - rest.len()..])),
            ));
            break;
        }
    }
    // `Push n`: an immediate without its form.
    if found.is_none()
        && let Some(rest) = lower
            .strip_prefix("push")
            .filter(|r| parse_number(r).is_some() || r.starts_with('-'))
    {
        let value = parse_signed(rest).ok_or((4, format!("invalid number '{rest}'")))?;
        let op = if value <= 0xFFFF {
            Op::PushW
        } else {
            Op::PushD
        };
        return Ok((op, value, None));
    }
    let Some((info, operand)) = found else {
        return Err((
            0,
            format!("unknown instruction '{text}'{}", suggestion(&lower)),
        ));
    };
    match (info.operand, operand) {
        (Operand::None, None) => Ok((info.op, 0, None)),
        (Operand::None, Some((at, _))) => Err((at, format!("{} takes no operand", info.name()))),
        (_, None) => Err((text.len(), format!("{} needs an operand", info.name()))),
        (kind, Some((at, value))) => {
            if value.contains(',') {
                return Err((at, format!("{} takes one operand", info.name())));
            }
            if info.op.is_jump() && parse_number(value).is_none() {
                if value.starts_with(|c: char| c.is_ascii_digit()) || value.is_empty() {
                    return Err((at, format!("invalid jump distance '{value}'")));
                }
                return Ok((info.op, 0, Some(ParsedTarget::Label(value.to_string(), at))));
            }
            let n = if kind == Operand::Dword {
                parse_signed(value)
            } else {
                parse_number(value).and_then(|n| u32::try_from(n).ok())
            };
            let Some(n) = n else {
                return Err((at, format!("invalid number '{value}'")));
            };
            if n > kind.max() {
                return Err((
                    at,
                    format!(
                        "operand {n} out of range for {} (max {})",
                        info.name(),
                        kind.max()
                    ),
                ));
            }
            let target = info.op.is_jump().then_some(ParsedTarget::Distance(n));
            Ok((info.op, n, target))
        }
    }
}

/// A dword: a number up to 0xFFFFFFFF, or a negative one down to i32::MIN.
fn parse_signed(text: &str) -> Option<u32> {
    if let Some(neg) = text.strip_prefix('-') {
        let n = parse_number(neg)?;
        return (n <= 0x8000_0000).then(|| (n as u32).wrapping_neg());
    }
    parse_number(text).and_then(|n| u32::try_from(n).ok())
}

/// Lists the forms of the mnemonic that `lower` starts with, if any.
fn suggestion(lower: &str) -> String {
    let mnemonic = OPCODES
        .iter()
        .map(|i| i.mnemonic)
        .filter(|m| lower.starts_with(&m.to_ascii_lowercase()))
        .max_by_key(|m| m.len());
    match mnemonic {
        Some(m) => {
            let forms: Vec<String> = OPCODES
                .iter()
                .filter(|i| i.mnemonic == m)
                .map(|i| i.name())
                .collect();
            format!(" (forms of {m}: {})", forms.join(", "))
        }
        None => String::new(),
    }
}
