//! The ordinal table: every entry of every OS/2 system DLL, with its
//! ordinal, name and calling convention, as the OS/2 toolkit's import
//! libraries (`OS2286.LIB`, `OS2386.LIB`) give them. It is what names an
//! unimplemented entry (see [`super::names`]) and what the API tables are
//! proven against.
//!
//! The table is facts, not IBM's bytes: `ordinals.txt`, one line per
//! entry, `MODULE ORDINAL BITS NAME [ALIAS ...]` (`-` for an entry
//! imported by name only). [`derive`] makes it from the import records of
//! the libraries (`os2trace apis --facts OS2TK_DIR` prints it), and
//! [`check`] compares the libraries with this table and with the API
//! tables (`os2trace apis --check OS2TK_DIR`, and the `ordinals` test of
//! this crate with OS2TK_DIR set).
//!
//! The libraries do not say which convention an entry has; their names
//! do, by a rule that holds over every system DLL entry:
//! - a name with a `16` or `32` between letters (`DOS16EXITLIST`,
//!   `Dos32Open`, `DOSPRINT16QADD`, `XVIO16SETCASTATE`) is the 16-bit or
//!   32-bit entry, and the name without the digits is its API name;
//! - an entry none of whose names carries a marker is 32-bit when one of
//!   them is in mixed case (`SplQueryQueue`), 16-bit when all are in upper
//!   case (the far pascal spelling, `DOSPTRACE`).
//!
//! An entry's name here is spelled as the toolkit's ordinal headers spell
//! it (`ORD_` dropped): upper case, a 32-bit entry with its marker when it
//! has one (`DOS32FORCEDELETE`), a 16-bit entry without (`DOSEXITLIST`);
//! the longest when there are several. Names compare without case and
//! without the marker ([`normalize`]), so the API tables may write
//! `DosExitList`, `DOSEXITLIST` or `DOS16EXITLIST`.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

use crate::api::{self, Conv};

/// 16-bit or 32-bit entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bits {
    /// 16-bit far pascal.
    B16,
    /// 32-bit `_System`.
    B32,
}

impl Bits {
    /// `16` or `32`.
    pub fn number(self) -> u32 {
        match self {
            Bits::B16 => 16,
            Bits::B32 => 32,
        }
    }

    /// The calling convention of a function entry.
    pub fn conv(self) -> Conv {
        match self {
            Bits::B16 => Conv::Far16,
            Bits::B32 => Conv::Sys32,
        }
    }
}

/// One entry of a system DLL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact<S = &'static str> {
    /// DLL name, upper case.
    pub module: S,
    /// Ordinal; `None` for an entry the libraries import by name only.
    pub ordinal: Option<u32>,
    /// Convention.
    pub bits: Bits,
    /// The API name.
    pub name: S,
    /// Other names of the entry that differ from `name` after
    /// [`normalize`] (`DosAcknowledgeSignalExc` for
    /// `DosAcknowledgeSignalException`).
    pub aliases: Vec<S>,
}

/// A fact made by [`derive`].
pub type Derived = Fact<String>;

impl<S: AsRef<str>> Fact<S> {
    /// Does `name` name this entry (ignoring case and the 16/32 marker)?
    pub fn is_named(&self, name: &str) -> bool {
        let n = normalize(name);
        normalize(self.name.as_ref()) == n
            || self.aliases.iter().any(|a| normalize(a.as_ref()) == n)
    }

    /// The line of `ordinals.txt`.
    pub fn line(&self) -> String {
        let mut s = format!(
            "{} {} {} {}",
            self.module.as_ref(),
            self.ordinal.map_or("-".to_string(), |o| o.to_string()),
            self.bits.number(),
            self.name.as_ref()
        );
        for a in &self.aliases {
            s.push(' ');
            s.push_str(a.as_ref());
        }
        s
    }
}

/// The table's text.
static TEXT: &str = include_str!("ordinals.txt");

/// Every entry, sorted by module and ordinal (by-name entries last).
pub fn facts() -> &'static [Fact] {
    static FACTS: OnceLock<Vec<Fact>> = OnceLock::new();
    // The text is part of this crate and a unit test parses it; a broken
    // line would leave an empty table rather than a panic.
    FACTS.get_or_init(|| parse(TEXT).unwrap_or_default())
}

/// Parses the table's text: `#` comments, blank lines, and lines of
/// `MODULE ORDINAL|- 16|32 NAME [ALIAS ...]`.
///
/// # Errors
///
/// `line N: what` for a malformed line.
pub fn parse(text: &str) -> Result<Vec<Fact<&str>>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |what: &str| format!("line {}: {what}", i + 1);
        let mut f = line.split_ascii_whitespace();
        let (Some(module), Some(ordinal), Some(bits), Some(name)) =
            (f.next(), f.next(), f.next(), f.next())
        else {
            return Err(err("expected MODULE ORDINAL BITS NAME"));
        };
        let ordinal = match ordinal {
            "-" => None,
            o => Some(o.parse().map_err(|_| err("bad ordinal"))?),
        };
        let bits = match bits {
            "16" => Bits::B16,
            "32" => Bits::B32,
            _ => return Err(err("bits is not 16 or 32")),
        };
        out.push(Fact {
            module,
            ordinal,
            bits,
            name,
            aliases: f.collect(),
        });
    }
    Ok(out)
}

/// Where the 16/32 marker is in a name: the first `16` or `32` with a
/// letter before it and a letter or the end of the name after it
/// (`DOS16EXITLIST`, `GreInitialize32`, not `ClassData321`). Returns the
/// bits and the name without it.
pub fn split_marker(name: &str) -> (Option<Bits>, String) {
    let b = name.as_bytes();
    for i in 1..b.len().saturating_sub(1) {
        let bits = match &b[i..i + 2] {
            b"16" => Bits::B16,
            b"32" => Bits::B32,
            _ => continue,
        };
        let after = b.get(i + 2);
        if b[i - 1].is_ascii_alphabetic() && after.is_none_or(u8::is_ascii_alphabetic) {
            return (Some(bits), format!("{}{}", &name[..i], &name[i + 2..]));
        }
    }
    (None, name.to_string())
}

/// A name as compared: upper case, without the 16/32 marker.
pub fn normalize(name: &str) -> String {
    split_marker(name).1.to_ascii_uppercase()
}

/// Makes the facts from import records `(module, ordinal, public name)`
/// of any number of libraries. Returns the facts, sorted, and the
/// entries whose names disagree about the convention.
pub fn derive<'a>(
    imports: impl IntoIterator<Item = (&'a str, Option<u32>, &'a str)>,
) -> (Vec<Derived>, Vec<String>) {
    // (module, ordinal or u32::MAX with the name for by-name entries)
    let mut groups: BTreeMap<(String, Option<u32>, String), Vec<String>> = BTreeMap::new();
    for (module, ordinal, public) in imports {
        let module = module.to_ascii_uppercase();
        let key = match ordinal {
            Some(o) => (module, Some(o), String::new()),
            None => (module, None, normalize(public)),
        };
        let names = groups.entry(key).or_default();
        if !names.iter().any(|n| n == public) {
            names.push(public.to_string());
        }
    }
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for ((module, ordinal, _), names) in groups {
        // Each name's marker; when they disagree (`Dos32PM16SemChk` and
        // `DosPM16SemChk`), only markers whose removal gives another of
        // the entry's names count.
        let marks = |confirmed: bool| -> Vec<Bits> {
            names
                .iter()
                .filter_map(|n| match split_marker(n) {
                    (Some(b), rest)
                        if !confirmed || names.iter().any(|m| m.eq_ignore_ascii_case(&rest)) =>
                    {
                        Some(b)
                    }
                    _ => None,
                })
                .collect()
        };
        let mixed = |m: &[Bits]| m.contains(&Bits::B16) && m.contains(&Bits::B32);
        let mut marked = marks(false);
        let mut conflict = false;
        if mixed(&marked) {
            marked = marks(true);
            conflict = marked.is_empty() || mixed(&marked);
        }
        let bits = if conflict {
            problems.push(format!(
                "{module}.{}: names mark both 16 and 32 bits: {}",
                ordinal.map_or("-".into(), |o| o.to_string()),
                names.join(" ")
            ));
            Bits::B32
        } else if let Some(b) = marked.first() {
            *b
        } else if names
            .iter()
            .any(|n| n.bytes().any(|c| c.is_ascii_lowercase()))
        {
            Bits::B32
        } else {
            Bits::B16
        };
        // The name as the toolkit's ordinal headers spell it
        // (ORD_DOSEXITLIST, ORD_DOS32TRUEGETMESSAGE): upper case, a 32-bit
        // entry with its 32 marker when it has one, a 16-bit entry without
        // its 16; the longest when there are several.
        let mut api: Vec<String> = names
            .iter()
            .map(|n| match (bits, split_marker(n)) {
                (Bits::B32, (Some(Bits::B32), _)) => n.to_ascii_uppercase(),
                (_, (_, rest)) => rest.to_ascii_uppercase(),
            })
            .collect();
        let marked = |s: &str| bits == Bits::B32 && split_marker(s).0 == Some(Bits::B32);
        api.sort_by(|a, b| {
            marked(b)
                .cmp(&marked(a))
                .then(b.len().cmp(&a.len()))
                .then(a.cmp(b))
        });
        api.dedup();
        let name = api[0].clone();
        let mut aliases: Vec<String> = Vec::new();
        for a in &api[1..] {
            let n = normalize(a);
            if n != normalize(&name) && !aliases.iter().any(|x| normalize(x) == n) {
                aliases.push(a.clone());
            }
        }
        out.push(Fact {
            module,
            ordinal,
            bits,
            name,
            aliases,
        });
    }
    out.sort_by(|a, b| {
        (&a.module, a.ordinal.is_none(), a.ordinal, &a.name).cmp(&(
            &b.module,
            b.ordinal.is_none(),
            b.ordinal,
            &b.name,
        ))
    });
    (out, problems)
}

/// The facts of a toolkit's import libraries.
#[derive(Clone, Debug, Default)]
pub struct Toolkit {
    /// The facts of every DLL the libraries import from.
    pub facts: Vec<Derived>,
    /// Entries whose names disagree about the convention.
    pub problems: Vec<String>,
    /// Each library file read: (file name, import records), in name order.
    pub libraries: Vec<(String, usize)>,
    /// Files of `lib/` that are not OMF libraries: (file name, why).
    pub skipped: Vec<(String, String)>,
}

/// Reads every `*.lib` of `dir/lib` (a toolkit such as OS2TK_DIR) and
/// derives the facts of all their import records.
///
/// # Errors
///
/// `path: what` when the directory cannot be listed, a file cannot be
/// read, or an OMF library is malformed (with the byte offset).
pub fn from_toolkit(dir: &std::path::Path) -> Result<Toolkit, String> {
    let lib_dir = dir.join("lib");
    let listing = std::fs::read_dir(&lib_dir).map_err(|e| format!("{}: {e}", lib_dir.display()))?;
    let mut paths = Vec::new();
    for e in listing {
        let p = e.map_err(|e| format!("{}: {e}", lib_dir.display()))?.path();
        if p.extension().is_some_and(|x| x.eq_ignore_ascii_case("lib")) {
            paths.push(p);
        }
    }
    paths.sort();
    let mut tk = Toolkit::default();
    let mut records = Vec::new();
    for p in &paths {
        let file = p
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        let bytes = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
        match loader::omflib::read(&bytes) {
            Ok(lib) => {
                tk.libraries.push((file, lib.imports.len()));
                records.extend(lib.imports);
            }
            Err(e) if matches!(e.kind, loader::ErrorKind::Unsupported(_)) => {
                tk.skipped.push((file, e.to_string()));
            }
            Err(e) => return Err(format!("{}: {e}", p.display())),
        }
    }
    let (facts, problems) = derive(records.iter().map(|i| {
        let ordinal = match i.target {
            loader::omflib::ImportTarget::Ordinal(o) => Some(u32::from(o)),
            loader::omflib::ImportTarget::Name(_) => None,
        };
        (i.module.as_str(), ordinal, i.public.as_str())
    }));
    tk.facts = facts;
    tk.problems = problems;
    Ok(tk)
}

/// The text of `ordinals.txt` for derived facts.
pub fn format(facts: &[Derived]) -> String {
    let mut s = String::from(
        "# The OS/2 system DLLs' entries: MODULE ORDINAL BITS NAME [ALIAS ...].\n\
         # Facts gathered from the OS/2 Warp 4.5 Toolkit's import libraries\n\
         # (lib/os2286.lib, lib/os2386.lib; LIBUNI and UCONV from lib/libuls.lib and\n\
         # lib/libconv.lib, TCP32DLL from lib/tcp32dll.lib, LIBCM and LIBCS from\n\
         # lib/libc*.lib) by\n\
         # `os2trace apis --facts OS2TK_DIR`;\n\
         # see kernel_sim/src/api/ordinals.rs for the rules.\n",
    );
    for f in facts {
        s.push_str(&f.line());
        s.push('\n');
    }
    s
}

/// One disagreement found by [`check`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    /// `MODULE.ordinal` (or `MODULE.name`).
    pub entry: String,
    /// What differs.
    pub what: String,
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.entry, self.what)
    }
}

/// What [`check`] found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Entries compared, per system DLL.
    pub compared: BTreeMap<String, usize>,
    /// Entries of DLLs that are not system DLLs here, per DLL (not
    /// compared).
    pub other: BTreeMap<String, usize>,
    /// Every disagreement.
    pub disagreements: Vec<Disagreement>,
}

fn conv_name(c: Conv) -> &'static str {
    match c {
        Conv::Far16 => "16-bit",
        Conv::Sys32 => "32-bit",
        Conv::Optlink => "_Optlink",
        Conv::Value(_) => "a value",
        Conv::Data(_) => "data",
    }
}

/// Compares facts derived from the libraries with the API tables
/// ([`api::lookup`], [`api::lookup_name`]) and with this table: for every
/// entry of every system DLL, the same ordinal must have the same name
/// in the same convention (a [`Conv::Value`] entry agrees with either);
/// every implemented entry of a DLL the libraries know must be one of
/// their entries; and
/// `ordinals.txt` must be exactly what the libraries give.
pub fn check(derived: &[Derived]) -> Report {
    let mut r = Report::default();
    let mut bad = |entry: String, what: String| {
        r.disagreements.push(Disagreement { entry, what });
    };
    for f in derived {
        let entry = match f.ordinal {
            Some(o) => format!("{}.{o}", f.module),
            None => format!("{}.{}", f.module, f.name),
        };
        if !api::is_system(&f.module) {
            *r.other.entry(f.module.clone()).or_default() += 1;
            continue;
        }
        *r.compared.entry(f.module.clone()).or_default() += 1;
        let def = match f.ordinal {
            Some(o) => api::lookup(&f.module, o),
            None => api::lookup_name(&f.module, &f.name),
        };
        let Some(def) = def else {
            bad(
                entry,
                format!("missing (libraries: {} {}-bit)", f.name, f.bits.number()),
            );
            continue;
        };
        if !f.is_named(def.name) {
            bad(
                entry.clone(),
                format!("named {} here, {} in the libraries", def.name, f.name),
            );
        }
        let conv_ok = match def.conv {
            Conv::Value(_) | Conv::Data(_) => true,
            // The C runtime's: a 32-bit entry whose convention the
            // libraries cannot tell from _System.
            Conv::Optlink => f.bits == Bits::B32,
            c => c == f.bits.conv(),
        };
        if !conv_ok {
            bad(
                entry,
                format!(
                    "{} is {} here, {}-bit in the libraries",
                    def.name,
                    conv_name(def.conv),
                    f.bits.number()
                ),
            );
        }
    }
    for def in api::table() {
        // os2trace's own DLLs (TNFPROBE) are not in IBM's libraries.
        if !derived.iter().any(|f| f.module == def.module) {
            continue;
        }
        let known = derived
            .iter()
            .any(|f| f.module == def.module && f.ordinal == Some(def.ordinal));
        if !known {
            bad(
                format!("{}.{}", def.module, def.ordinal),
                format!(
                    "{} is implemented here but the libraries have no such entry",
                    def.name
                ),
            );
        }
    }
    let ours: Vec<String> = facts().iter().map(Fact::line).collect();
    let theirs: Vec<String> = derived
        .iter()
        .filter(|f| api::is_system(&f.module))
        .map(Fact::line)
        .collect();
    for line in theirs.iter().filter(|l| !ours.contains(l)) {
        bad(
            "ordinals.txt".into(),
            format!("lacks the libraries' line `{line}`"),
        );
    }
    for line in ours.iter().filter(|l| !theirs.contains(l)) {
        bad(
            "ordinals.txt".into(),
            format!("has `{line}`, which the libraries do not give"),
        );
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_is_sorted() {
        let facts = parse(TEXT).unwrap();
        assert!(facts.len() > 1000, "{}", facts.len());
        let key = |f: &Fact| (f.module, f.ordinal.is_none(), f.ordinal, f.name);
        assert!(facts.windows(2).all(|w| key(&w[0]) < key(&w[1])));
    }

    #[test]
    fn markers() {
        assert_eq!(
            split_marker("DOS16EXITLIST"),
            (Some(Bits::B16), "DOSEXITLIST".into())
        );
        assert_eq!(
            split_marker("Dos32Open"),
            (Some(Bits::B32), "DosOpen".into())
        );
        assert_eq!(split_marker("DOSPRINT16QADD").0, Some(Bits::B16));
        assert_eq!(split_marker("_M_WPClassData321").0, None);
        assert_eq!(split_marker("DosFindFirst2").0, None);
        assert_eq!(
            split_marker("GreInitialize32"),
            (Some(Bits::B32), "GreInitialize".into())
        );
        assert_eq!(normalize("DOS32Open"), "DOSOPEN");
    }

    #[test]
    fn derive_groups_aliases_and_picks_the_convention() {
        let (f, p) = derive([
            ("DOSCALLS", Some(7), "DOSEXITLIST"),
            ("DOSCALLS", Some(7), "DOS16EXITLIST"),
            ("DOSCALLS", Some(418), "Dos32AcknowledgeSignalExc"),
            ("DOSCALLS", Some(418), "DosAcknowledgeSignalException"),
            ("DOSCALLS", Some(418), "DOSACKNOWLEDGESIGNALEXC"),
            ("PMSPL", Some(380), "SPLCONTROLDEVICE"),
            ("PMSPL", Some(380), "SplControlDevice"),
            ("DOSCALLS", Some(12), "DOSPTRACE"),
        ]);
        assert!(p.is_empty());
        let lines: Vec<_> = f.iter().map(Fact::line).collect();
        assert_eq!(
            lines,
            [
                "DOSCALLS 7 16 DOSEXITLIST",
                "DOSCALLS 12 16 DOSPTRACE",
                "DOSCALLS 418 32 DOS32ACKNOWLEDGESIGNALEXC DOSACKNOWLEDGESIGNALEXCEPTION",
                "PMSPL 380 32 SPLCONTROLDEVICE",
            ]
        );
        let (f, p) = derive([
            ("DOSCALLS", Some(596), "Dos32PM16SemChk"),
            ("DOSCALLS", Some(596), "DosPM16SemChk"),
        ]);
        assert!(p.is_empty());
        assert_eq!(f[0].bits, Bits::B32);
        let (_, p) = derive([("X", Some(1), "A16B"), ("X", Some(1), "A32B")]);
        assert_eq!(p.len(), 1);
    }
}
