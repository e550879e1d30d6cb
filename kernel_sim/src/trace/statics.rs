//! Static tracing: the records programs log themselves with DosSysTrace,
//! and TRACE ON's selection of them by major code (and minors).
//!
//! OS/2 keeps a 256-bit array, one bit per major code, that TRACE ON sets;
//! DosSysTrace logs only for a selected major and otherwise returns
//! ERROR_SYSTEM_TRACE (150). os2trace keeps the same array and, per
//! major, the minors TRACE ON named (none named: all). TRACE ON's operand
//! for a static major is the number itself: `--trace 245` or
//! `--trace 0xF5(1,3-5)` (a TSF's @STATIC tracepoints only give the TFF
//! that formats such records; TRCUST writes no TDF for them).

use std::collections::{BTreeMap, BTreeSet};

/// The static majors and minors TRACE ON selected.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct StaticSelection {
    majors: BTreeMap<u8, Option<BTreeSet<u16>>>,
}

impl StaticSelection {
    /// Selects `major`, with `minors` (`None`: every minor). Selecting a
    /// major again widens it.
    pub fn select(&mut self, major: u8, minors: Option<BTreeSet<u16>>) {
        match (self.majors.get_mut(&major), minors) {
            (Some(Some(have)), Some(more)) => have.extend(more),
            (Some(slot), None) => *slot = None,
            (Some(None), Some(_)) => {}
            (None, m) => {
                self.majors.insert(major, m);
            }
        }
    }

    /// Whether DosSysTrace logs `major`/`minor`.
    pub fn selected(&self, major: u16, minor: u16) -> bool {
        u8::try_from(major)
            .ok()
            .and_then(|m| self.majors.get(&m))
            .is_some_and(|minors| minors.as_ref().is_none_or(|set| set.contains(&minor)))
    }

    /// Nothing selected.
    pub fn is_empty(&self) -> bool {
        self.majors.is_empty()
    }
}

/// A number written decimal or `0x` hex.
fn number(text: &str) -> Option<u32> {
    let t = text.trim();
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => t.parse().ok(),
    }
}

/// A static TRACE ON operand's major (`245`, `0xF5`), or `None` when the
/// operand is a TDF.
pub fn static_major(operand: &str) -> Option<u32> {
    number(operand)
}

/// The minors of a static TRACE ON spec: `1,3-5` (empty: every minor).
///
/// # Errors
/// The part that is not a minor or a range.
pub fn parse_minors(spec: &str) -> Result<Option<BTreeSet<u16>>, String> {
    if spec.trim().is_empty() {
        return Ok(None);
    }
    let mut set = BTreeSet::new();
    for item in spec.split(',') {
        let bad = || format!("{item:?} is not a minor code or a range of them");
        let (a, b) = match item.split_once('-') {
            Some((a, b)) => (number(a).ok_or_else(bad)?, number(b).ok_or_else(bad)?),
            None => {
                let n = number(item).ok_or_else(bad)?;
                (n, n)
            }
        };
        if a > b || b > 0xFFFF {
            return Err(bad());
        }
        set.extend((a..=b).map(|m| m as u16));
    }
    Ok(Some(set))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn majors_and_minors_select_as_trace_on_names_them() {
        let mut s = StaticSelection::default();
        assert!(!s.selected(245, 1));
        s.select(245, parse_minors("1,3-4").unwrap());
        assert!(s.selected(245, 1) && s.selected(245, 4));
        assert!(!s.selected(245, 2) && !s.selected(246, 1) && !s.selected(245 + 256, 1));
        s.select(245, parse_minors("").unwrap());
        assert!(s.selected(245, 2));
        assert_eq!(static_major("0xF5"), Some(245));
        assert_eq!(static_major("LOOP32"), None);
        assert!(parse_minors("4-2").is_err());
        assert!(parse_minors("x").is_err());
    }
}
