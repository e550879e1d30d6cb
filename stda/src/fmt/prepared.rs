//! A TFF rule parsed once for formatting many records: the DESC line
//! converted to text and every FMT string split into items, so that a
//! record costs only the engine's work, written into the caller's buffer.

use super::engine::{FormatInput, RecordState, text};
use super::{Control, FmtItem, parse_fmt};
use crate::tff::TffRecord;

/// An item of a FMT string, with text as a range of the stored string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stored {
    Text(u32, u32),
    Control(Control),
    Ignore(u32),
}

/// A rule ready to format records ([`PreparedRule::write`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedRule {
    desc: String,
    fmts: Vec<(Vec<u8>, Vec<Stored>)>,
}

impl PreparedRule {
    /// Parses `rule`'s DESC and FMT strings.
    pub fn new(rule: &TffRecord) -> PreparedRule {
        let fmts = rule
            .fmts
            .iter()
            .map(|fmt| {
                let base = fmt.as_ptr() as usize;
                let items = parse_fmt(fmt)
                    .into_iter()
                    .map(|item| match item {
                        FmtItem::Text(t) => {
                            let start = (t.as_ptr() as usize - base) as u32;
                            Stored::Text(start, start + t.len() as u32)
                        }
                        FmtItem::Control(c) => Stored::Control(c),
                        FmtItem::Ignore(n) => Stored::Ignore(n),
                    })
                    .collect();
                (fmt.clone(), items)
            })
            .collect();
        PreparedRule {
            desc: text(&rule.desc),
            fmts,
        }
    }

    /// Writes what [`super::format_record`] returns for this rule, each
    /// line after `indent` and ending in a newline, into `out`.
    pub fn write(&self, input: &FormatInput<'_>, indent: &str, out: &mut String) {
        out.push_str(indent);
        out.push_str(&self.desc);
        out.push('\n');
        let mut cur = RecordState::new(input);
        for (fmt, items) in &self.fmts {
            out.push_str(indent);
            for &item in items {
                let item = match item {
                    Stored::Text(a, b) => FmtItem::Text(&fmt[a as usize..b as usize]),
                    Stored::Control(c) => FmtItem::Control(c),
                    Stored::Ignore(n) => FmtItem::Ignore(n),
                };
                cur.item(item, out);
            }
            cur.end_line();
            out.push('\n');
        }
    }
}
