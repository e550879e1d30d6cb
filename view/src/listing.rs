//! `tdf list`: the tracepoints of a TDF, one line each, joined with the
//! DESC of the TFF and the symbols of the linker MAP, in the spirit of
//! `bpftrace -l`.
//!
//! A line is `MODULE  MAJ/MIN  TYPES  GROUP  OBJ:OFFSET  SYMBOL+OFF  DESC`.
//! The type names are those of the TYPELIST entries whose id bits are in
//! the record's type mask; the group name is the GROUPLIST entry with the
//! record's group id. The symbol is the MAP's public symbol containing the
//! address (`-` without a MAP or outside every symbol); the DESC is the
//! TFF's for the minor (`-` without one).
//!
//! A pattern is a glob (`*`, `?`, `[...]`), matched without regard to case
//! against the module, the symbol, the type and group names, the DESC and
//! `MODULE:MINOR` (`TPDLL16:0002`); a tracepoint is listed when any of them
//! matches.

use serde::Serialize;
use stda::tff::Tff;
use tdf::Tdf;
use tdf::definition::EntryKind;
use tdf::target::SymbolTable;

/// One listed tracepoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tracepoint {
    /// The module the TDF names.
    pub module: String,
    /// Major code.
    pub major: u16,
    /// Minor code.
    pub minor: u16,
    /// TYPELIST names in the type mask.
    pub types: Vec<String>,
    /// GROUPLIST name, when the id has one.
    pub group: Option<String>,
    /// Object or segment number.
    pub object: u32,
    /// Offset in it.
    pub offset: u32,
    /// The MAP symbol containing the address.
    pub symbol: Option<String>,
    /// Offset from the symbol.
    pub symbol_offset: Option<u32>,
    /// DESC from the TFF.
    pub desc: Option<String>,
}

impl Tracepoint {
    /// The probe-style name, `MODULE:MINOR`.
    pub fn probe(&self) -> String {
        format!("{}:{:04X}", self.module, self.minor)
    }

    /// One text line.
    pub fn line(&self) -> String {
        let types = if self.types.is_empty() {
            "-".to_string()
        } else {
            self.types.join("|")
        };
        let symbol = match (&self.symbol, self.symbol_offset) {
            (Some(s), Some(0)) => s.clone(),
            (Some(s), Some(o)) => format!("{s}+{o:#x}"),
            _ => "-".to_string(),
        };
        format!(
            "{:<8} {:04X}/{:04X}  {:<12} {:<8} {:04X}:{:08X}  {:<20} {}",
            self.module,
            self.major,
            self.minor,
            types,
            self.group.as_deref().unwrap_or("-"),
            self.object,
            self.offset,
            symbol,
            self.desc.as_deref().unwrap_or("-")
        )
    }

    fn names(&self) -> Vec<String> {
        let mut n = vec![self.module.clone(), self.probe()];
        n.extend(self.types.iter().cloned());
        n.extend(self.group.iter().cloned());
        n.extend(self.symbol.iter().cloned());
        n.extend(self.desc.iter().cloned());
        n
    }
}

/// A bad pattern.
#[derive(Debug, thiserror::Error)]
#[error("bad pattern '{pattern}': {reason}")]
pub struct PatternError {
    /// The pattern.
    pub pattern: String,
    /// What is wrong.
    pub reason: String,
}

/// The tracepoints of `tdf`, joined with `tff` and `map`, that `pattern`
/// selects, in TDF order.
///
/// # Errors
/// A pattern that is not a glob.
pub fn list(
    tdf: &Tdf,
    tff: Option<&Tff>,
    map: Option<&SymbolTable>,
    pattern: Option<&str>,
) -> Result<Vec<Tracepoint>, PatternError> {
    let pattern = pattern
        .map(|p| {
            glob::Pattern::new(p).map_err(|e| PatternError {
                pattern: p.to_string(),
                reason: e.msg.to_string(),
            })
        })
        .transpose()?;
    let opts = glob::MatchOptions {
        case_sensitive: false,
        require_literal_separator: false,
        require_literal_leading_dot: false,
    };
    let module = crate::render::text(&tdf.module);
    let module = tdf::module::module_name(&module).to_string();
    let mut out = Vec::new();
    for r in &tdf.records {
        let types = tdf
            .entries
            .iter()
            .filter(|e| e.kind == EntryKind::Type && e.id != 0 && r.type_mask & e.id == e.id)
            .map(|e| crate::render::text(&e.name))
            .collect();
        let group = tdf
            .entries
            .iter()
            .find(|e| e.kind == EntryKind::Group && e.id == r.group)
            .map(|e| crate::render::text(&e.name));
        let (symbol, symbol_offset) = match map.and_then(|m| m.containing(r.object, r.offset)) {
            Some((s, _)) => (Some(s.name.clone()), Some(r.offset - s.offset)),
            None => (None, None),
        };
        let desc = tff
            .and_then(|t| t.record(r.minor))
            .map(|t| crate::render::text(&t.desc));
        let tp = Tracepoint {
            module: module.clone(),
            major: r.major,
            minor: r.minor,
            types,
            group,
            object: r.object,
            offset: r.offset,
            symbol,
            symbol_offset,
            desc,
        };
        if pattern
            .as_ref()
            .is_none_or(|p| tp.names().iter().any(|n| p.matches_with(n, opts)))
        {
            out.push(tp);
        }
    }
    Ok(out)
}
