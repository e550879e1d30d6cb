//! Decoded fields of a formatted record: for each data control of the
//! record's FMT strings, a name, the control and the value it printed.
//! JSON output and the browser show them beside the formatted text.
//!
//! The fields are read back from the engine's own output
//! ([`crate::fmt::format_record`]) rather than by a second engine, so a
//! value is always exactly the text TRACEFMT prints: each FMT string is cut
//! at its literal text, and what the engine printed between two literals is
//! the value of the controls between them.
//!
//! * The name is the literal text before the control, trimmed of spaces and
//!   a trailing `=` or `:`; in `key=value` style (`ret=%A b=%W`) it is the
//!   last word (`ret`, `b`). A control with no text before it is named
//!   `fieldN` (N counts from 1 over the record).
//! * The control is the letters of the data controls in the group, `%P`
//!   and `%Innn` left out: `W`, `S` for `%P%S`, `RW` for `%R%W`.
//! * Controls that print nothing (`%P` alone, `%Innn`) give no field.

use serde::Serialize;

use crate::fmt::{Control, FmtItem, FormatInput, format_record, parse_fmt};
use crate::tff::TffRecord;

/// One decoded field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Field {
    /// The name, from the text before the control.
    pub name: String,
    /// The control letters, such as `W` or `RW`.
    pub control: String,
    /// The value as formatted.
    pub value: String,
}

/// A formatted record: its DESC, its FMT lines and the decoded fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decoded {
    /// The DESC line.
    pub desc: String,
    /// The FMT lines, formatted.
    pub lines: Vec<String>,
    /// The fields of the FMT lines.
    pub fields: Vec<Field>,
}

/// Formats a record with its rule and decodes its fields.
pub fn decode(rule: &TffRecord, input: &FormatInput<'_>) -> Decoded {
    let mut lines = format_record(rule, input);
    let desc = if lines.is_empty() {
        String::new()
    } else {
        lines.remove(0)
    };
    let mut fields = Vec::new();
    for (fmt, line) in rule.fmts.iter().zip(&lines) {
        line_fields(&parse_fmt(fmt), line, &mut fields);
    }
    Decoded {
        desc,
        lines,
        fields,
    }
}

/// A FMT string as alternating literal text and groups of controls.
enum Piece {
    Text(String),
    Group(String),
}

fn pieces(items: &[FmtItem<'_>]) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    for item in items {
        match item {
            FmtItem::Text(t) => match out.last_mut() {
                Some(Piece::Text(s)) => s.push_str(&text(t)),
                _ => out.push(Piece::Text(text(t))),
            },
            FmtItem::Control(c) => {
                let letter = letter(*c);
                match out.last_mut() {
                    Some(Piece::Group(g)) => g.push_str(letter),
                    _ => out.push(Piece::Group(letter.to_string())),
                }
            }
            FmtItem::Ignore(_) => {
                if !matches!(out.last(), Some(Piece::Group(_))) {
                    out.push(Piece::Group(String::new()));
                }
            }
        }
    }
    out
}

fn letter(c: Control) -> &'static str {
    match c {
        Control::A => "A",
        Control::B => "B",
        Control::C => "C",
        Control::D => "D",
        Control::F => "F",
        Control::P => "",
        Control::Q => "Q",
        Control::R => "R",
        Control::S => "S",
        Control::U => "U",
        Control::W => "W",
        Control::X => "X",
        Control::Y => "Y",
    }
}

fn line_fields(items: &[FmtItem<'_>], line: &str, fields: &mut Vec<Field>) {
    let pieces = pieces(items);
    let mut pos = 0;
    let mut before = String::new();
    for (i, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Text(t) => {
                if line[pos..].starts_with(t.as_str()) {
                    pos += t.len();
                } else if let Some(at) = line[pos..].find(t.as_str()) {
                    pos += at + t.len();
                }
                before.clone_from(t);
            }
            Piece::Group(control) => {
                let end = match pieces.get(i + 1) {
                    Some(Piece::Text(next)) if !next.is_empty() => line[pos..]
                        .find(next.as_str())
                        .map_or(line.len(), |at| pos + at),
                    _ => line.len(),
                };
                let value = &line[pos..end];
                pos = end;
                if control.is_empty() && value.is_empty() {
                    continue;
                }
                let name = name_of(&before).unwrap_or_else(|| format!("field{}", fields.len() + 1));
                fields.push(Field {
                    name,
                    control: control.clone(),
                    value: value.to_string(),
                });
                before.clear();
            }
        }
    }
}

/// The name a field takes from the text before it.
fn name_of(before: &str) -> Option<String> {
    let trimmed = before.trim_end();
    let keyed = trimmed.ends_with('=');
    let core = trimmed.trim_end_matches(['=', ':']).trim();
    if core.is_empty() {
        return None;
    }
    let name = if keyed {
        core.rsplit(char::is_whitespace).next().unwrap_or(core)
    } else {
        core
    };
    Some(name.to_string())
}

/// Literal bytes as the engine prints them: ISO-8859-1, control bytes other
/// than tab as `.`.
fn text(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| {
            if b < 0x20 && b != b'\t' || b == 0x7F {
                '.'
            } else {
                char::from(b)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fmt::compile_fmt;

    fn rule(fmts: &[&str]) -> TffRecord {
        TffRecord {
            minor: 1,
            desc: b"TPDLL16 ADDNUMS arguments".to_vec(),
            fmts: fmts.iter().map(|f| compile_fmt(f.as_bytes())).collect(),
        }
    }

    fn input(data: &[u8]) -> FormatInput<'_> {
        FormatInput {
            major: 0xC2,
            minor: 1,
            dynamic: false,
            data,
        }
    }

    #[test]
    fn key_value_fields() {
        let r = rule(&["ret=%A b=%W a=%W"]);
        let d = decode(&r, &input(&[0x15, 0, 0x0F, 0, 3, 0, 2, 0]));
        assert_eq!(d.desc, "TPDLL16 ADDNUMS arguments");
        assert_eq!(d.lines, ["ret=000F:0015 b=0003 a=0002"]);
        let f: Vec<(&str, &str, &str)> = d
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.control.as_str(), f.value.as_str()))
            .collect();
        assert_eq!(
            f,
            [
                ("ret", "A", "000F:0015"),
                ("b", "W", "0003"),
                ("a", "W", "0002")
            ]
        );
    }

    #[test]
    fn prefixes_repeats_ignores_and_unnamed() {
        let r = rule(&["string: %P%S", "%I2 %W", "words %R%W end"]);
        let data = [1, 3, 0, b'a', b'b', b'c', 9, 9, 0x34, 0x12, 1, 0, 2, 0];
        let d = decode(&r, &input(&data));
        assert_eq!(d.lines, ["string: abc", "1234", "words 0001 0002 end"]);
        let f: Vec<(&str, &str, &str)> = d
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.control.as_str(), f.value.as_str()))
            .collect();
        assert_eq!(
            f,
            [
                ("string", "S", "abc"),
                ("field2", "W", "1234"),
                ("words", "RW", "0001 0002")
            ]
        );
    }
}
