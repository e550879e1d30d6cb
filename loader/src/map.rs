//! Linker MAP files: public symbols by object:offset and name.
//!
//! Three styles are read:
//! - IBM LINK386 (32-bit OS/2): a `Start Length Name Class` segment list
//!   (with `at offset ...` contribution lines, skipped), an
//!   `Address Export Alias` list, `Publics by Name` and `Publics by Value`
//!   sections with
//!   `0002:00000005       push28` lines, `Program entry point at ...`.
//! - Microsoft LINK (16-bit OS/2): the same sections with 16-bit offsets
//!   (`0001:0010`), a `Start Stop Length Name Class` list and `Imp`/`Abs`
//!   markers before imported and absolute names.
//! - Open Watcom WLINK: a `Memory Map` section of `0001:00000010  main_`
//!   lines (a `*` or `+` after the address marks unreferenced or local
//!   symbols), `Imported Symbols`, and `Entry point address: ...`.
//!
//! Decisions: symbols come from "Publics by Value" when present, else from
//! "Publics by Name" (TRCUST reads the by-value list; a map with only one of
//! them still works); the leading blank is optional; headers and markers
//! are matched in any case (maps written all lower or upper case, which
//! TRCUST reads too). `Imp` lines become
//! imports, not symbols; `Abs` symbols keep object 0. A line inside a
//! symbol section that starts with something shaped like an address
//! (`hex:hex`) but is not a valid one is an error naming the line; any other
//! line ends the section. Input bytes are read as Latin-1.

use std::fmt;

/// Which linker wrote the map (as far as can be told).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapStyle {
    /// IBM LINK386.
    Link386,
    /// Microsoft LINK (segmented).
    MsLink,
    /// Open Watcom WLINK.
    Wlink,
    /// Only a publics section, no telling which linker.
    Unknown,
}

/// A public symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// Object or segment number (0 for absolute symbols).
    pub object: u16,
    /// Offset in it.
    pub offset: u32,
    /// The name as written.
    pub name: String,
}

/// A segment line of the map's segment list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapSegment {
    /// Object or segment number.
    pub object: u16,
    /// Start offset.
    pub offset: u32,
    /// Length in bytes.
    pub length: u32,
    /// Segment name.
    pub name: String,
    /// Class name.
    pub class: String,
}

/// An exported name the map lists (LINK386's `Address Export Alias`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapExport {
    /// Object number.
    pub object: u16,
    /// Offset in it.
    pub offset: u32,
    /// Exported name.
    pub name: String,
    /// Internal (alias) name.
    pub alias: String,
}

/// An imported name the map lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapImport {
    /// The local name.
    pub name: String,
    /// The module it comes from, when the map says.
    pub module: Option<String>,
}

/// A parsed MAP file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapFile {
    /// The linker style recognised.
    pub style: MapStyle,
    /// Public symbols, in the order of the section they came from.
    pub symbols: Vec<Symbol>,
    /// Segment list (LINK386 / MS LINK `Start Length Name Class` lines with
    /// object:offset starts).
    pub segments: Vec<MapSegment>,
    /// Imported names.
    pub imports: Vec<MapImport>,
    /// Exported names (LINK386).
    pub exports: Vec<MapExport>,
    /// Program entry point.
    pub entry: Option<(u16, u32)>,
}

/// A MAP file error: the 1-based line and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct MapError {
    /// Line number (1-based).
    pub line: usize,
    /// What is wrong.
    pub reason: &'static str,
}

impl fmt::Display for MapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MAP file line {}: {}", self.line, self.reason)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    None,
    Segments,
    Exports,
    ByName,
    ByValue,
    WatcomMap,
    WatcomImports,
}

/// Parses a MAP file from bytes (Latin-1).
pub fn parse_bytes(bytes: &[u8]) -> Result<MapFile, MapError> {
    parse(&crate::bytes::latin1(bytes))
}

/// Parses a MAP file.
///
/// # Errors
///
/// A [`MapError`] naming the line when an address-shaped word is not a
/// valid `object:offset`.
pub fn parse(text: &str) -> Result<MapFile, MapError> {
    let mut map = MapFile {
        style: MapStyle::Unknown,
        symbols: Vec::new(),
        segments: Vec::new(),
        imports: Vec::new(),
        exports: Vec::new(),
        entry: None,
    };
    let mut by_name = Vec::new();
    let mut by_value = Vec::new();
    let mut saw_by_value = false;
    let mut section = Section::None;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = raw.trim_end_matches(['\r', '\x1a']);
        let t = line.trim();
        let words: Vec<&str> = t.split_whitespace().collect();
        // Headers and markers in any case (a map may be all lower or all
        // upper case).
        let lower = t.to_ascii_lowercase();
        let lwords: Vec<&str> = lower.split_whitespace().collect();
        if lower.contains("watcom linker") {
            map.style = MapStyle::Wlink;
        }
        // Section headers.
        if lower.contains("publics by name") {
            section = Section::ByName;
            continue;
        }
        if lower.contains("publics by value") {
            section = Section::ByValue;
            saw_by_value = true;
            continue;
        }
        if lwords.first() == Some(&"start") && lwords.contains(&"class") {
            if map.style != MapStyle::Wlink {
                map.style = if lwords.get(1) == Some(&"stop") {
                    MapStyle::MsLink
                } else {
                    MapStyle::Link386
                };
            }
            section = Section::Segments;
            continue;
        }
        if lwords.len() == 3 && lwords[..2] == ["address", "export"] {
            section = Section::Exports;
            continue;
        }
        if t.starts_with('|') && lower.contains("memory map") {
            map.style = MapStyle::Wlink;
            section = Section::WatcomMap;
            continue;
        }
        if t.starts_with('|') && lower.contains("imported symbols") {
            section = Section::WatcomImports;
            continue;
        }
        if t.starts_with('|') || lwords.first() == Some(&"origin") {
            section = Section::None;
            continue;
        }
        if t.starts_with("+-") {
            continue;
        }
        let entry = ["program entry point at", "entry point address:"]
            .iter()
            .find(|p| lower.starts_with(*p))
            .map(|p| &t[p.len()..]);
        if let Some(rest) = entry {
            if let Some(word) = rest.split_whitespace().next() {
                map.entry = Some(parse_address(word, line_no)?.ok_or(MapError {
                    line: line_no,
                    reason: "bad entry point address",
                })?);
            }
            section = Section::None;
            continue;
        }
        if t.is_empty() {
            continue;
        }
        match section {
            Section::None => {}
            Section::Segments => {
                if words.len() >= 3
                    && let Some((object, offset)) = parse_address(words[0], line_no)?
                {
                    let length = parse_length(words[1]).ok_or(MapError {
                        line: line_no,
                        reason: "bad segment length",
                    })?;
                    map.segments.push(MapSegment {
                        object,
                        offset,
                        length,
                        name: words[2].to_string(),
                        class: words.get(3).unwrap_or(&"").to_string(),
                    });
                } else if looks_like_address(words[0]) {
                    return Err(MapError {
                        line: line_no,
                        reason: "bad segment address",
                    });
                }
            }
            Section::Exports => match parse_address(words[0], line_no)? {
                Some((object, offset)) if words.len() >= 2 => map.exports.push(MapExport {
                    object,
                    offset,
                    name: words[1].to_string(),
                    alias: words.get(2).unwrap_or(&words[1]).to_string(),
                }),
                Some(_) => {
                    return Err(MapError {
                        line: line_no,
                        reason: "export without a name",
                    });
                }
                None => section = Section::None,
            },
            Section::ByName | Section::ByValue => {
                let list = if section == Section::ByName {
                    &mut by_name
                } else {
                    &mut by_value
                };
                match public_line(&words, line_no)? {
                    Some(Public::Symbol(s)) => list.push(s),
                    Some(Public::Import(i)) => {
                        if section == Section::ByName || !map.imports.contains(&i) {
                            map.imports.push(i);
                        }
                    }
                    None if lwords[0] == "address" || lwords[0] == "origin" => {}
                    None => section = Section::None,
                }
            }
            Section::WatcomMap => {
                if lwords[0] == "module:"
                    || lwords[0] == "address"
                    || words[0].starts_with('=')
                    || t.starts_with('*')
                    || t.starts_with('+')
                {
                    continue;
                }
                let addr = words[0].trim_end_matches(['*', '+', '!']);
                match parse_address(addr, line_no)? {
                    Some((object, offset)) if words.len() >= 2 => {
                        let name = words[1..].join(" ");
                        let name = name.trim_start_matches(['*', '+', '!']).trim().to_string();
                        by_value.push(Symbol {
                            object,
                            offset,
                            name,
                        });
                        saw_by_value = true;
                    }
                    _ => section = Section::None,
                }
            }
            Section::WatcomImports => {
                if lwords[0] == "symbol" || words[0].starts_with('=') {
                    continue;
                }
                map.imports.push(MapImport {
                    name: words[0].to_string(),
                    module: words.get(1).map(|m| m.to_string()),
                });
            }
        }
    }
    map.symbols = if saw_by_value { by_value } else { by_name };
    Ok(map)
}

enum Public {
    Symbol(Symbol),
    Import(MapImport),
}

/// One line of a publics section: `ssss:oooo [Imp|Abs] name [(MOD.ord)]`.
fn public_line(words: &[&str], line: usize) -> Result<Option<Public>, MapError> {
    let Some((object, offset)) = parse_address(words[0], line)? else {
        return Ok(None);
    };
    let marker_of = |m: &str| {
        ["Imp", "Abs", "Res", "Unr"]
            .into_iter()
            .find(|k| k.eq_ignore_ascii_case(m))
    };
    let (marker, rest) = match words.get(1..) {
        Some([m, rest @ ..]) if !rest.is_empty() && marker_of(m).is_some() => (marker_of(m), rest),
        Some(rest) => (None, rest),
        None => (None, &[][..]),
    };
    let Some(name) = rest.first() else {
        return Err(MapError {
            line,
            reason: "address without a name",
        });
    };
    if marker == Some("Imp") {
        let module = rest
            .get(1)
            .and_then(|m| {
                m.trim_start_matches('(')
                    .trim_end_matches(')')
                    .split('.')
                    .next()
            })
            .map(str::to_string);
        return Ok(Some(Public::Import(MapImport {
            name: name.to_string(),
            module,
        })));
    }
    Ok(Some(Public::Symbol(Symbol {
        object,
        offset,
        name: name.to_string(),
    })))
}

fn looks_like_address(word: &str) -> bool {
    word.split_once(':')
        .is_some_and(|(s, _)| !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit()))
}

/// `ssss:oooo[oooo]`; `Ok(None)` when the word is not address-shaped, an
/// error when it is but does not fit.
fn parse_address(word: &str, line: usize) -> Result<Option<(u16, u32)>, MapError> {
    if !looks_like_address(word) {
        return Ok(None);
    }
    let bad = MapError {
        line,
        reason: "malformed object:offset address",
    };
    let (seg, off) = word.split_once(':').ok_or(bad.clone())?;
    if seg.len() > 4
        || off.is_empty()
        || off.len() > 8
        || !off.chars().all(|c| c.is_ascii_hexdigit())
    {
        return Err(bad);
    }
    let seg = u16::from_str_radix(seg, 16).map_err(|_| bad.clone())?;
    let off = u32::from_str_radix(off, 16).map_err(|_| bad)?;
    Ok(Some((seg, off)))
}

/// `000008000H` or `00008000`.
fn parse_length(word: &str) -> Option<u32> {
    let w = word.trim_end_matches(['H', 'h']);
    if w.is_empty() || w.len() > 9 {
        return None;
    }
    u32::from_str_radix(w, 16).ok()
}

impl MapFile {
    /// The symbol named exactly `name`.
    pub fn lookup(&self, name: &str) -> Option<&Symbol> {
        self.symbols.iter().find(|s| s.name == name)
    }

    /// The symbol named `name` ignoring ASCII case (OS/2 tools often
    /// upper-case names).
    pub fn lookup_ignore_case(&self, name: &str) -> Option<&Symbol> {
        self.symbols
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(name))
    }

    /// The symbol containing `object:offset`: the one in that object with
    /// the highest offset not above it.
    pub fn symbol_at(&self, object: u16, offset: u32) -> Option<&Symbol> {
        self.symbols
            .iter()
            .filter(|s| s.object == object && s.offset <= offset)
            .max_by_key(|s| s.offset)
    }

    /// Distance from `symbol` to the next symbol of the same object, `None`
    /// for the last one (TRCUST writes 0xFFFFFFFF then).
    pub fn symbol_size(&self, symbol: &Symbol) -> Option<u32> {
        self.symbols
            .iter()
            .filter(|s| s.object == symbol.object && s.offset > symbol.offset)
            .map(|s| s.offset - symbol.offset)
            .min()
    }
}
