//! TRACE ON/OFF selections: which tracepoints of a TDF to switch.
//!
//! `TRACE ON name(spec)` (warp-debug-dtrace.txt §1.3.5, BUILDTDF) takes a
//! comma-separated spec whose items are
//! * minor codes and ranges, decimal or 0x hex: `1,2-10,401`;
//! * groups, each optionally limited to types: `FS,TK:PRE+POST`;
//! * types: `PRE,POST`.
//!
//! Names are looked up in the TDF's TYPELIST and GROUPLIST, case-insensitive;
//! a name that is both a group and a type is taken as the group (the seed's
//! syntax gives group specs first). A tracepoint is selected when any item
//! matches it: its minor is in a range, or its group is the item's group
//! (and, with types, its type mask shares a bit with theirs), or its type
//! mask shares a bit with a type item. No spec selects every tracepoint.

use tdf::definition::EntryKind;
use tdf::{Tdf, TdfRecord};

/// One item of a selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// Minor codes `first..=last`.
    Minors(u16, u16),
    /// A group id, with a type mask (0: all types).
    Group(u16, u16),
    /// A type mask.
    Types(u16),
}

/// A parsed selection; empty means everything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selection {
    /// The items, any of which selects a tracepoint.
    pub items: Vec<Item>,
}

/// Why a spec does not parse against a TDF.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// A number or range that is not valid.
    #[error("item {item}: '{text}' is not a minor code or range")]
    BadMinor {
        /// 1-based item position.
        item: usize,
        /// The item.
        text: String,
    },
    /// A name the TDF does not define.
    #[error("item {item}: '{name}' is not a group or type of this TDF")]
    UnknownName {
        /// 1-based item position.
        item: usize,
        /// The name.
        name: String,
    },
    /// `name:types` where name is not a group.
    #[error("item {item}: '{name}' is not a group, so it cannot take types")]
    NotAGroup {
        /// 1-based item position.
        item: usize,
        /// The name.
        name: String,
    },
}

fn number(text: &str) -> Option<u16> {
    let t = text.trim();
    let n = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
        None => t.parse().ok()?,
    };
    u16::try_from(n).ok()
}

fn lookup(tdf: &Tdf, name: &str, kind: EntryKind) -> Option<u16> {
    tdf.entries
        .iter()
        .find(|e| e.kind == kind && e.name.eq_ignore_ascii_case(name.trim().as_bytes()))
        .map(|e| e.id)
}

impl Selection {
    /// Parses `spec` (the text between the parentheses) against `tdf`.
    ///
    /// # Errors
    /// [`SelectError`] naming the item at fault.
    pub fn parse(spec: &str, tdf: &Tdf) -> Result<Selection, SelectError> {
        let mut items = Vec::new();
        for (i, raw) in spec.split(',').enumerate() {
            let item = i + 1;
            let text = raw.trim();
            if text.is_empty() {
                continue;
            }
            if text.starts_with(|c: char| c.is_ascii_digit()) {
                let (a, b) = text.split_once('-').unwrap_or((text, text));
                match (number(a), number(b)) {
                    (Some(a), Some(b)) if a <= b => items.push(Item::Minors(a, b)),
                    _ => {
                        return Err(SelectError::BadMinor {
                            item,
                            text: text.to_string(),
                        });
                    }
                }
                continue;
            }
            let (name, types) = match text.split_once(':') {
                Some((n, t)) => (n, Some(t)),
                None => (text, None),
            };
            if let Some(group) = lookup(tdf, name, EntryKind::Group) {
                let mut mask = 0;
                for t in types.into_iter().flat_map(|t| t.split('+')) {
                    mask |= lookup(tdf, t, EntryKind::Type).ok_or_else(|| {
                        SelectError::UnknownName {
                            item,
                            name: t.trim().to_string(),
                        }
                    })?;
                }
                items.push(Item::Group(group, mask));
            } else if types.is_some() {
                return Err(SelectError::NotAGroup {
                    item,
                    name: name.to_string(),
                });
            } else if let Some(mask) = lookup(tdf, name, EntryKind::Type) {
                items.push(Item::Types(mask));
            } else {
                return Err(SelectError::UnknownName {
                    item,
                    name: name.to_string(),
                });
            }
        }
        Ok(Selection { items })
    }

    /// Whether the selection takes this tracepoint.
    pub fn matches(&self, record: &TdfRecord) -> bool {
        self.items.is_empty()
            || self.items.iter().any(|item| match *item {
                Item::Minors(a, b) => (a..=b).contains(&record.minor),
                Item::Group(g, mask) => {
                    record.group == g && (mask == 0 || record.type_mask & mask != 0)
                }
                Item::Types(mask) => record.type_mask & mask != 0,
            })
    }
}

/// Splits a `DTRACE APPLY` operand `file@module` into the trace program
/// file and the module (None without `@`; the last `@` separates, so a
/// file name may hold one).
pub fn split_apply_operand(operand: &str) -> (&str, Option<&str>) {
    match operand.rsplit_once('@') {
        Some((file, module)) => (file, Some(module)),
        None => (operand, None),
    }
}

/// Splits `TRACE ON` operands of the form `name(spec)` into the name and
/// the spec (None when there are no parentheses).
pub fn split_operand(operand: &str) -> (&str, Option<&str>) {
    match operand.split_once('(') {
        Some((name, rest)) => (name.trim(), Some(rest.trim_end().trim_end_matches(')'))),
        None => (operand.trim(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_operands_split_at_the_last_at() {
        assert_eq!(
            split_apply_operand("LOOP.RPN@HELLO"),
            ("LOOP.RPN", Some("HELLO"))
        );
        assert_eq!(split_apply_operand("a@b.rpn@MOD"), ("a@b.rpn", Some("MOD")));
        assert_eq!(split_apply_operand("LOOP.RPN"), ("LOOP.RPN", None));
    }
}
