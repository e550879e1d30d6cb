//! BUILDTDF: a DTRACE trace program file (warp-debug-dtrace.txt §1.3.6 to
//! §1.5, parsed and assembled by `rpn_vm::source`) to a TDF of the layout
//! TRCUST writes.
//!
//! ```text
//! DTRACE BUILDTDF trpgm_file [tdf_file] [/m=major] [/n=name] [/i=id]
//! ```
//!
//! The command line's `/m=`, `/n=` and `/i=` override the file header; a
//! tracepoint's own `major=` overrides both. BUILDTDF needs every definition
//! in the file: `name=` (not `hmte=`), a major code, and per tracepoint
//! `object=`, `offset=` and `opcode=` (the byte TRACE checks before it
//! patches). `typedef=` ids become the TDF's TYPE entries (a power of two
//! that fits the TDF's 16-bit type mask), `groupdef=` ids its GROUP entries
//! (1 to 0xFFFF); `type=a+b` ORs the ids, `group=` names one. `vars=` gives
//! the DTO variables and `logmax=` the MAXDATALENGTH. Records are sorted by
//! object and offset, as TRCUST sorts them.

use std::collections::HashMap;

use thiserror::Error;

use crate::definition::{EntryKind, NameEntry, Tdf, TdfRecord};

/// Command-line overrides.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `/m=`: default major code.
    pub major: Option<u16>,
    /// `/n=`: module name.
    pub name: Option<String>,
    /// `/i=`: the DTO id, stored as the TDFID.
    pub id: Option<u16>,
}

/// Why a trace program file cannot become a TDF.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BuildError {
    /// The file does not parse or assemble.
    #[error("{0}")]
    Source(#[from] rpn_vm::SourceErrors),
    /// A definition BUILDTDF needs is missing or does not fit the TDF.
    #[error("{file}:{line}: {message}")]
    Definition {
        /// File name.
        file: String,
        /// 1-based line (0 for the header as a whole).
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// Builds the TDF for the trace program file `text` (named `file` in
/// errors).
///
/// # Errors
/// [`BuildError`] for a file that does not parse or lacks a definition.
pub fn build(file: &str, text: &str, ov: &Overrides) -> Result<Tdf, BuildError> {
    let prog = rpn_vm::parse(file, text)?;
    let err = |line: usize, message: String| BuildError::Definition {
        file: file.to_string(),
        line,
        message,
    };
    let h = &prog.header;
    let name = ov
        .name
        .clone()
        .or_else(|| h.name.clone())
        .ok_or_else(|| err(0, "name= is required (BUILDTDF cannot use hmte=)".into()))?;
    if name.len() > 255 {
        return Err(err(0, "name= is longer than 255 characters".into()));
    }
    let default_major = ov.major.or(h.major);
    let id = match ov.id {
        Some(i) => i,
        None => u16::try_from(h.id.unwrap_or(0))
            .map_err(|_| err(0, "id= does not fit the TDF's 16-bit TDFID".into()))?,
    };
    let logmax = u16::try_from(h.logmax()).map_err(|_| {
        err(
            0,
            "logmax= does not fit the TDF's 16-bit MAXDATALENGTH".into(),
        )
    })?;
    let mut entries = Vec::new();
    let mut types: HashMap<String, u16> = HashMap::new();
    let mut groups: HashMap<String, u16> = HashMap::new();
    for (kw, v) in &h.typedefs {
        let id = u16::try_from(*v)
            .ok()
            .filter(|v| v.is_power_of_two())
            .ok_or_else(|| {
                err(
                    0,
                    format!("typedef={kw},{v:#x}: a TDF type id is a power of two up to 0x8000"),
                )
            })?;
        types.insert(kw.to_ascii_uppercase(), id);
        entries.push(name_entry(kw, EntryKind::Type, id));
    }
    for (kw, v) in &h.groupdefs {
        let id = u16::try_from(*v).ok().filter(|&v| v != 0).ok_or_else(|| {
            err(
                0,
                format!("groupdef={kw},{v:#x}: a TDF group id is 1 to 0xFFFF"),
            )
        })?;
        groups.insert(kw.to_ascii_uppercase(), id);
        entries.push(name_entry(kw, EntryKind::Group, id));
    }
    let mut records = Vec::with_capacity(prog.tracepoints.len());
    for tp in &prog.tracepoints {
        let at = |what: &str| {
            err(
                tp.line,
                format!("minor={:#x}: {what} is required by BUILDTDF", tp.minor),
            )
        };
        let major = tp
            .major
            .or(default_major)
            .ok_or_else(|| at("a major code (major= or /m=)"))?;
        let object = tp.object.ok_or_else(|| at("object="))?;
        let offset = tp.offset.ok_or_else(|| at("offset="))?;
        let opcode = tp.opcode.ok_or_else(|| at("opcode="))?;
        let mut type_mask = 0u16;
        for t in &tp.types {
            type_mask |= types
                .get(&t.to_ascii_uppercase())
                .copied()
                .ok_or_else(|| err(tp.line, format!("type {t} is not defined by typedef=")))?;
        }
        let group = match &tp.group {
            None => 0,
            Some(g) => groups
                .get(&g.to_ascii_uppercase())
                .copied()
                .ok_or_else(|| err(tp.line, format!("group {g} is not defined by groupdef=")))?,
        };
        records.push(TdfRecord {
            type_mask,
            group,
            object,
            offset,
            minor: tp.minor,
            major,
            opcode,
            pad: 0,
            rpn: tp.program.bytes().to_vec(),
        });
    }
    records.sort_by_key(|r| (r.object, r.offset));
    let major = default_major
        .or_else(|| records.first().map(|r| r.major))
        .ok_or_else(|| err(0, "a major code (major= or /m=) is required".into()))?;
    Ok(Tdf {
        max_data_len: logmax,
        major,
        module: name.into_bytes(),
        tdf_id: id,
        entries,
        vars: vec![0; h.vars() as usize],
        records,
        ..Tdf::default()
    })
}

/// The TYPELIST or GROUPLIST entry for `keyword`: upper case, cut to the
/// 8 bytes the TDF holds.
fn name_entry(keyword: &str, kind: EntryKind, id: u16) -> NameEntry {
    NameEntry {
        name: keyword
            .to_ascii_uppercase()
            .into_bytes()
            .into_iter()
            .take(8)
            .collect(),
        kind,
        id,
        pad: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "\
name=HELLO.EXE
major=0xC6
vars=2
typedef=PRE,2
groupdef=FS,3
minor=2, object=2, offset=5, opcode=0x6A
type=PRE
group=FS
Push EAX
Log DN,1
minor=1, object=2, offset=0, opcode=0x68
Abort
";

    #[test]
    fn builds_sorted_records() {
        let t = build("t.rpn", SRC, &Overrides::default()).unwrap();
        assert_eq!(t.major, 0xC6);
        assert_eq!(t.vars.len(), 2);
        assert_eq!(t.entries.len(), 2);
        assert_eq!(t.entries[0], name_entry("pre", EntryKind::Type, 2));
        assert_eq!(t.entries[1].name, b"FS");
        assert_eq!(t.entries[1].kind, EntryKind::Group);
        assert_eq!(
            name_entry("longgroupname", EntryKind::Group, 1).name,
            b"LONGGROU"
        );
        assert_eq!(t.records[0].minor, 1);
        assert_eq!(t.records[1].type_mask, 2);
        assert_eq!(t.records[1].group, 3);
        assert_eq!(t.records[1].rpn, [0x00, 0x21, 0x01]);
        let back = Tdf::parse(&t.to_bytes()).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn overrides_and_missing_definitions() {
        let ov = Overrides {
            major: Some(7),
            name: Some("X.DLL".into()),
            id: Some(9),
        };
        let t = build("t.rpn", SRC, &ov).unwrap();
        assert_eq!(
            (t.major, t.tdf_id, t.module.as_slice()),
            (7, 9, &b"X.DLL"[..])
        );
        let e = build(
            "t.rpn",
            "major=1\nminor=1, object=1, offset=0\nAbort\n",
            &Overrides::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("name="), "{e}");
        let e = build(
            "t.rpn",
            "name=A\nmajor=1\nminor=1, object=1, offset=0\nAbort\n",
            &Overrides::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("opcode="), "{e}");
    }
}
