//! Which records CPTRAP records and TRAPRED shows: by type, interface code,
//! process and time range.
//!
//! The same selection language serves `run --cptrap FILE [selection]` and
//! TRAPRED's `SELECT` command. It is a list of clauses, case-insensitive,
//! each keyword abbreviable down to its capital letters:
//!
//! ```text
//! TYPE t...     typenums in hex (02 3E, or X'3E'), or ALL
//! CODE c...     interface codes, decimal or X'hex'/0xhex, or ALL
//! PROCess p...  process IDs, decimal or X'hex'/0xhex, or ALL
//! TIME a b      emulated cycles from a to b inclusive, or TIME ALL
//! ALL           everything
//! ```
//!
//! A clause replaces what it names and leaves the rest alone. Data-lost
//! records (X'3C') always pass: they mark a place, whatever was selected.
//! The code clause applies to interface records only; the process and time
//! clauses apply to every other record.

use std::collections::BTreeSet;

use thiserror::Error;

use crate::file::Record;
use crate::typenum::{TypeNum, TypeSet};

/// A selection of records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// The typenums selected.
    pub types: TypeSet,
    /// The interface codes selected; `None` is all.
    pub codes: Option<BTreeSet<u16>>,
    /// The processes selected; `None` is all.
    pub pids: Option<BTreeSet<u16>>,
    /// The time range selected (inclusive); `None` is all.
    pub time: Option<(u64, u64)>,
}

impl Default for Selection {
    fn default() -> Self {
        Selection::all()
    }
}

/// A selection clause that does not parse.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SelectionError {
    /// A word that is no clause keyword.
    #[error("'{0}' is not TYPE, CODE, PROCESS, TIME or ALL")]
    UnknownClause(String),
    /// A clause keyword with nothing after it.
    #[error("{0} needs at least one value")]
    MissingValue(&'static str),
    /// A value that is not a number of the right kind.
    #[error("{clause}: '{word}' is not a valid value")]
    BadValue {
        /// The clause.
        clause: &'static str,
        /// The word.
        word: String,
    },
    /// A time range whose start is after its end.
    #[error("TIME: {0} is after {1}")]
    EmptyTimeRange(u64, u64),
}

/// Whether `word` is `keyword` or an abbreviation of it no shorter than
/// `min` characters, ignoring case (VM/SP's "TYPEBack" convention: the
/// capitals are the shortest form).
pub fn abbrev(word: &str, keyword: &str, min: usize) -> bool {
    word.len() >= min
        && word.len() <= keyword.len()
        && keyword
            .get(..word.len())
            .is_some_and(|k| k.eq_ignore_ascii_case(word))
}

/// A number written decimal, `X'hex'` or `0xhex`.
pub fn parse_number(word: &str) -> Option<u64> {
    let upper = word.to_ascii_uppercase();
    if let Some(hex) = upper.strip_prefix("X'").and_then(|s| s.strip_suffix('\'')) {
        u64::from_str_radix(hex, 16).ok()
    } else if let Some(hex) = upper.strip_prefix("0X") {
        u64::from_str_radix(hex, 16).ok()
    } else {
        upper.parse().ok()
    }
}

fn parse_typenum(word: &str) -> Option<TypeNum> {
    let upper = word.to_ascii_uppercase();
    let hex = upper
        .strip_prefix("X'")
        .and_then(|s| s.strip_suffix('\''))
        .or_else(|| upper.strip_prefix("0X"))
        .unwrap_or(&upper);
    u8::from_str_radix(hex, 16)
        .ok()
        .filter(|&t| t < 64)
        .map(TypeNum)
}

impl Selection {
    /// Every table type, both interfaces, every code, process and time.
    pub fn all() -> Selection {
        Selection {
            types: TypeSet::all(),
            codes: None,
            pids: None,
            time: None,
        }
    }

    /// Whether `record` is selected.
    pub fn matches(&self, record: &Record) -> bool {
        let frame = record.frame();
        match record {
            Record::DataLost { .. } => true,
            Record::Interface { record, .. } => {
                self.types.contains(record.interface.typenum())
                    && self.codes.as_ref().is_none_or(|c| c.contains(&record.code))
                    && self.frame_matches(frame.pid, frame.time)
            }
            Record::Table(e) => {
                self.types.contains(e.typenum()) && self.frame_matches(frame.pid, frame.time)
            }
        }
    }

    /// Whether an interface record of `typenum` and `code` from `pid` would
    /// be selected (time aside): the check before reading the guest's data.
    pub fn wants_interface(&self, typenum: TypeNum, code: u16, pid: u16) -> bool {
        self.types.contains(typenum)
            && self.codes.as_ref().is_none_or(|c| c.contains(&code))
            && self.pids.as_ref().is_none_or(|p| p.contains(&pid))
    }

    fn frame_matches(&self, pid: u16, time: u64) -> bool {
        self.pids.as_ref().is_none_or(|p| p.contains(&pid))
            && self.time.is_none_or(|(a, b)| (a..=b).contains(&time))
    }

    /// A selection of everything, changed by the clauses in `words`.
    pub fn parse(words: &[&str]) -> Result<Selection, SelectionError> {
        let mut sel = Selection::all();
        sel.apply(words)?;
        Ok(sel)
    }

    /// Applies the clauses in `words` to this selection. On error the
    /// selection is unchanged.
    pub fn apply(&mut self, words: &[&str]) -> Result<(), SelectionError> {
        let mut next = self.clone();
        let mut i = 0;
        while i < words.len() {
            let word = words[i];
            i += 1;
            let values: Vec<&str> = words[i..]
                .iter()
                .take_while(|w| !is_clause_keyword(w))
                .copied()
                .collect();
            i += values.len();
            let all = values.len() == 1 && values[0].eq_ignore_ascii_case("ALL");
            if abbrev(word, "ALL", 3) {
                next = Selection::all();
                i -= values.len();
            } else if abbrev(word, "TYPE", 4) {
                next.types = if all {
                    TypeSet::all()
                } else {
                    let types = values_of("TYPE", &values, parse_typenum)?;
                    TypeSet::of(&types)
                };
            } else if abbrev(word, "CODE", 4) {
                next.codes = if all {
                    None
                } else {
                    Some(values_of("CODE", &values, parse_u16)?.into_iter().collect())
                };
            } else if abbrev(word, "PROCESS", 4) {
                next.pids = if all {
                    None
                } else {
                    Some(
                        values_of("PROCESS", &values, parse_u16)?
                            .into_iter()
                            .collect(),
                    )
                };
            } else if abbrev(word, "TIME", 4) {
                next.time = if all {
                    None
                } else {
                    let bounds = values_of("TIME", &values, parse_number)?;
                    let &[a, b] = bounds.as_slice() else {
                        return Err(SelectionError::BadValue {
                            clause: "TIME",
                            word: values.join(" "),
                        });
                    };
                    if a > b {
                        return Err(SelectionError::EmptyTimeRange(a, b));
                    }
                    Some((a, b))
                };
            } else {
                return Err(SelectionError::UnknownClause(word.to_string()));
            }
        }
        *self = next;
        Ok(())
    }

    /// The selection as clauses, the way `apply` reads them back.
    pub fn describe(&self) -> String {
        let types = if self.types == TypeSet::all() {
            "ALL".to_string()
        } else if self.types.is_empty() {
            "NONE".to_string()
        } else {
            let list: Vec<String> = self.types.iter().map(|t| t.to_string()).collect();
            list.join(" ")
        };
        let list = |set: &Option<BTreeSet<u16>>| match set {
            None => "ALL".to_string(),
            Some(s) => s.iter().map(u16::to_string).collect::<Vec<_>>().join(" "),
        };
        let time = match self.time {
            None => "ALL".to_string(),
            Some((a, b)) => format!("{a} {b}"),
        };
        format!(
            "TYPE {types} CODE {} PROCESS {} TIME {time}",
            list(&self.codes),
            list(&self.pids)
        )
    }
}

fn parse_u16(word: &str) -> Option<u16> {
    parse_number(word).and_then(|n| u16::try_from(n).ok())
}

fn is_clause_keyword(word: &str) -> bool {
    abbrev(word, "TYPE", 4)
        || abbrev(word, "CODE", 4)
        || abbrev(word, "PROCESS", 4)
        || abbrev(word, "TIME", 4)
}

fn values_of<T>(
    clause: &'static str,
    values: &[&str],
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Vec<T>, SelectionError> {
    if values.is_empty() {
        return Err(SelectionError::MissingValue(clause));
    }
    values
        .iter()
        .map(|w| {
            parse(w).ok_or_else(|| SelectionError::BadValue {
                clause,
                word: (*w).to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Entry;
    use crate::iface::{Interface, InterfaceRecord};

    fn vm(code: u16, pid: u16, time: u64) -> Record {
        Record::interface(
            InterfaceRecord::new(Interface::VirtualMachine, code, b"x"),
            pid,
            1,
            time,
        )
    }

    #[test]
    fn clauses_select_by_type_code_process_and_time() {
        let sel = Selection::parse(&["type", "3e", "code", "1", "X'3'", "proc", "2"]).unwrap();
        assert!(sel.matches(&vm(3, 2, 0)));
        assert!(!sel.matches(&vm(2, 2, 0)));
        assert!(!sel.matches(&vm(3, 1, 0)));
        assert!(!sel.matches(&Record::Table(Entry::new(TypeNum::API))));
        assert!(sel.matches(&Record::data_lost(1, 2, 3)));
        let timed = Selection::parse(&["TIME", "10", "20"]).unwrap();
        assert!(timed.matches(&vm(9, 1, 10)) && timed.matches(&vm(9, 1, 20)));
        assert!(!timed.matches(&vm(9, 1, 21)));
    }

    #[test]
    fn bad_clauses_name_the_word_and_leave_the_selection() {
        let mut sel = Selection::parse(&["TYPE", "02"]).unwrap();
        let before = sel.clone();
        assert_eq!(
            sel.apply(&["TYPE", "3E", "CODE", "abc"]),
            Err(SelectionError::BadValue {
                clause: "CODE",
                word: "abc".into()
            })
        );
        assert_eq!(sel, before);
        assert_eq!(
            sel.apply(&["FOO"]),
            Err(SelectionError::UnknownClause("FOO".into()))
        );
        assert_eq!(
            sel.apply(&["TIME", "5", "1"]),
            Err(SelectionError::EmptyTimeRange(5, 1))
        );
        assert_eq!(
            sel.apply(&["CODE"]),
            Err(SelectionError::MissingValue("CODE"))
        );
    }

    #[test]
    fn describe_reads_back() {
        let sel = Selection::parse(&["TYPE", "02", "3F", "CODE", "7", "TIME", "1", "9"]).unwrap();
        let text = sel.describe();
        assert_eq!(text, "TYPE 02 3F CODE 7 PROCESS ALL TIME 1 9");
        let words: Vec<&str> = text.split(' ').collect();
        assert_eq!(Selection::parse(&words).unwrap(), sel);
        assert_eq!(
            Selection::all().describe(),
            "TYPE ALL CODE ALL PROCESS ALL TIME ALL"
        );
    }

    #[test]
    fn abbreviations_follow_the_capitals() {
        assert!(abbrev("typeb", "TYPEBACK", 5));
        assert!(!abbrev("type", "TYPEBACK", 5));
        assert!(!abbrev("typebackx", "TYPEBACK", 5));
        assert!(abbrev("P", "PRINTER", 1));
    }
}
