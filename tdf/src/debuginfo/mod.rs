//! Debug information of a module: CodeView 4 (`NB05` to `NB09`, and `NB11`
//! with 32-bit type indexes) as Microsoft LINK, WLINK and LINK386's CodeView
//! mode write it, read for what TRCUST needs: line numbers by source file,
//! procedures (with their debug start and end), and each procedure's
//! register and stack (BP-relative) variables; global data symbols too.
//!
//! # Layout implemented (sources)
//!
//! From Microsoft's public CodeView 4 headers (`cvexefmt.h`: the directory
//! and `OMFSourceModule`/`OMFSourceFile`/`OMFSourceLine`; `cvinfo.h`: the
//! symbol records and `CV_REG_*` numbers) and the CodeView 4 specification
//! (Tools Interface Standards; also summarised in Wine's `winedump` and
//! LLVM's CodeView documents). Nothing was copied; the reader is written
//! from these facts:
//!
//! * The debug information starts with a 4-byte signature `NBxx` and a
//!   dword `lfoDirectory`, relative to that start (`lfaBase`). A module
//!   file whose debug information is appended ends with the same signature
//!   and a dword: the distance from the end of the file back to `lfaBase`.
//!   LX modules may instead point at it from the header (debug info offset
//!   and length).
//! * Directory header: `cbDirHeader` u16, `cbDirEntry` u16, `cDir` u32,
//!   `lfoNextDir` u32, `flags` u32; then `cDir` entries of `cbDirEntry`
//!   bytes: `subsection` u16, `iMod` u16, `lfo` u32, `cb` u32.
//! * Subsections read: `sstModule` (0x120: overlay, library, `cSeg`,
//!   style, `cSeg` × (seg u16, pad u16, offset u32, size u32), name),
//!   `sstSrcModule` (0x127, lines — see [`lines`]), `sstAlignSym` (0x125,
//!   a dword signature then symbol records) and `sstGlobalSym` (0x129,
//!   a 16-byte hash header then symbol records) — see [`symbols`].
//!   Others are skipped.
//!
//! IBM HLL (`NB04`, what LINK386 /CO writes for IBM compilers) uses a
//! different directory and symbol encoding, read by `hll` (its module doc
//! lists its sources and what is inferred) into the same [`DebugInfo`].
//! Old CodeView (`NB00`-`NB02`) is reported as
//! [`DebugError::Unsupported`].
//!
//! # Inferences
//!
//! * Segment numbers in line tables and symbols are the module's object
//!   (NE segment, LX object) numbers, as linkers for OS/2 write them;
//!   `sstSegMap` is not consulted.
//! * A source file name is a length-prefixed string with one length byte.
//!
//! Every count is checked against the bytes that remain before anything
//! is allocated for it; errors carry the offset from `lfaBase`.

pub mod hll;
pub mod lines;
pub mod symbols;

use thiserror::Error;

use binread::{Cursor, ErrorKind};
pub use lines::{LineEntry, SourceFile};
pub use symbols::{DataSymbol, Location, Procedure, Variable};

/// `sstModule`.
pub const SST_MODULE: u16 = 0x120;
/// `sstAlignSym`.
pub const SST_ALIGN_SYM: u16 = 0x125;
/// `sstSrcModule`.
pub const SST_SRC_MODULE: u16 = 0x127;
/// `sstGlobalSym`.
pub const SST_GLOBAL_SYM: u16 = 0x129;

/// Most directory entries read (a real module has a few per object file).
pub const MAX_DIRECTORY_ENTRIES: usize = 65_536;

/// Debug information that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DebugError {
    /// A structure that runs past the end of the debug information, a
    /// count larger than the bytes left could hold, or a field the format
    /// does not allow: the shared reader's error, whose offset is from the
    /// start of the debug information (the `NBxx` signature), not of the
    /// file.
    #[error("debug information offset {:#x}: {}: {}", .0.offset, .0.structure, .0.kind)]
    Read(#[from] binread::Error),
    /// The information does not start with `NB`.
    #[error("debug information offset 0x0: no NBxx signature")]
    NoSignature,
    /// A format this reader does not implement (old CodeView
    /// `NB00`-`NB02`).
    #[error("{} debug information is not supported", String::from_utf8_lossy(.0))]
    Unsupported([u8; 4]),
}

/// One `sstModule`: an object file of the link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleInfo {
    /// Module index (`iMod`).
    pub index: u16,
    /// Object file name.
    pub name: String,
    /// Code contributions: (segment, offset, size).
    pub segments: Vec<(u16, u32, u32)>,
}

/// The debug information of a module.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DebugInfo {
    /// The signature (`NB09`...).
    pub signature: [u8; 4],
    /// Object files.
    pub modules: Vec<ModuleInfo>,
    /// Source files with their line numbers.
    pub files: Vec<SourceFile>,
    /// Procedures with their variables.
    pub procedures: Vec<Procedure>,
    /// Data symbols (global and module-local static data).
    pub data: Vec<DataSymbol>,
    /// IBM HLL only: the public symbols (subsection 0x0102, what the
    /// linker made public: procedures and data), where TRCUST looks up a
    /// `.name` that is no procedure.
    pub publics: Vec<DataSymbol>,
}

/// Where a source line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineLookup {
    /// The line itself: (segment, offset).
    Exact(u16, u32),
    /// The line has no code; the next line that has: (line, segment,
    /// offset).
    Next(u32, u16, u32),
    /// The file is known but no line at or after this one has code.
    PastEnd,
    /// No such source file.
    NoFile,
}

/// The debug information appended to a module file, found from its last
/// 8 bytes (`NBxx` and the distance back to the start, which holds the
/// same signature).
pub fn appended(file: &[u8]) -> Option<&[u8]> {
    let tail = file.len().checked_sub(8)?;
    let sig = file.get(tail..tail + 4)?;
    if &sig[..2] != b"NB" {
        return None;
    }
    let back = u32::from_le_bytes(file.get(tail + 4..)?.try_into().ok()?) as usize;
    let start = file.len().checked_sub(back)?;
    (file.get(start..start + 4)? == sig).then(|| &file[start..])
}

impl DebugInfo {
    /// Reads debug information that starts with its `NBxx` signature.
    ///
    /// # Errors
    /// [`DebugError`] naming the offset and structure that is wrong.
    pub fn parse(bytes: &[u8]) -> Result<DebugInfo, DebugError> {
        let mut c = Cursor::new(bytes);
        let sig: [u8; 4] = c.array("signature").map_err(|_| DebugError::NoSignature)?;
        if &sig[..2] != b"NB" {
            return Err(DebugError::NoSignature);
        }
        if &sig == b"NB04" {
            return hll::parse(bytes);
        }
        if !matches!(&sig[2..], b"05" | b"06" | b"07" | b"08" | b"09" | b"11") {
            return Err(DebugError::Unsupported(sig));
        }
        let wide_types = &sig[2..] == b"11";
        let mut info = DebugInfo {
            signature: sig,
            ..DebugInfo::default()
        };
        let lfo = c.u32("signature")? as usize;
        let mut d = Cursor::at(bytes, lfo as u64);
        let cb_header = usize::from(d.u16("subsection directory header")?);
        let cb_entry = usize::from(d.u16("subsection directory header")?);
        let count = d.u32("subsection directory header")? as usize;
        if cb_header < 8 || cb_entry < 12 {
            return Err(bad(
                lfo,
                "subsection directory header",
                "header or entry size too small",
            ));
        }
        let first = lfo.saturating_add(cb_header);
        let e = Cursor::at(bytes, first as u64);
        if count > MAX_DIRECTORY_ENTRIES {
            return Err(too_many(first, "subsection directory", count));
        }
        e.check_count(count as u64, cb_entry as u64, "subsection directory")?;
        for i in 0..count {
            let mut entry = Cursor::at(bytes, (first + i * cb_entry) as u64);
            let kind = entry.u16("subsection directory entry")?;
            let module = entry.u16("subsection directory entry")?;
            let at = entry.u32("subsection directory entry")? as usize;
            let len = entry.u32("subsection directory entry")? as usize;
            let end = at.checked_add(len).filter(|&end| end <= bytes.len());
            let Some(end) = end else {
                return Err(bad(
                    entry.pos() as usize - 8,
                    "subsection directory entry",
                    "subsection outside the debug information",
                ));
            };
            let sub = &bytes[..end];
            match kind {
                SST_MODULE => info.modules.push(read_module(sub, at, module)?),
                SST_SRC_MODULE => info.files.extend(lines::read(sub, at)?),
                SST_ALIGN_SYM => {
                    let mut start = Cursor::at(sub, at as u64);
                    start.u32("sstAlignSym signature")?;
                    symbols::read(sub, start.pos() as usize, wide_types, &mut info)?;
                }
                SST_GLOBAL_SYM => {
                    let mut h = Cursor::at(sub, at as u64);
                    h.skip(4, "sstGlobalSym header")?;
                    let cb_symbols = h.u32("sstGlobalSym header")? as usize;
                    h.skip(8, "sstGlobalSym header")?;
                    let sym_end = (h.pos() as usize).saturating_add(cb_symbols).min(end);
                    symbols::read(&bytes[..sym_end], h.pos() as usize, wide_types, &mut info)?;
                }
                _ => {}
            }
        }
        Ok(info)
    }

    /// The file called `name`: compared without case, by its whole name
    /// or by the name after the last path separator.
    pub fn file(&self, name: &str) -> Option<&SourceFile> {
        let base = |s: &str| -> String { crate::module::file_name(s).to_ascii_lowercase() };
        let want = name.to_ascii_lowercase();
        self.files
            .iter()
            .find(|f| f.name.to_ascii_lowercase() == want)
            .or_else(|| self.files.iter().find(|f| base(&f.name) == base(name)))
    }

    /// Where `line` of source file `name` is (the lowest address that
    /// line has, when it has several).
    pub fn line(&self, name: &str, line: u32) -> LineLookup {
        let mut found = false;
        let mut best: Option<(u32, u16, u32)> = None;
        for f in self.files.iter().filter(|f| {
            self.file(name)
                .is_some_and(|g| g.name.eq_ignore_ascii_case(&f.name))
        }) {
            found = true;
            for l in f.lines.iter().filter(|l| l.line >= line) {
                let key = (l.line, l.segment, l.offset);
                if best.is_none_or(|b| key < b) {
                    best = Some(key);
                }
            }
        }
        match best {
            Some((l, s, o)) if l == line => LineLookup::Exact(s, o),
            Some((l, s, o)) => LineLookup::Next(l, s, o),
            None if found => LineLookup::PastEnd,
            None => LineLookup::NoFile,
        }
    }

    /// The procedure called `name` (case-sensitive, as compiled).
    pub fn procedure(&self, name: &str) -> Option<&Procedure> {
        self.procedures.iter().find(|p| p.name == name)
    }

    /// The procedure whose code contains `segment:offset`.
    pub fn procedure_at(&self, segment: u16, offset: u32) -> Option<&Procedure> {
        self.procedures.iter().find(|p| {
            p.segment == segment
                && offset >= p.offset
                && u64::from(offset) < u64::from(p.offset) + u64::from(p.length)
        })
    }
}

/// Structure name in read errors.
const MODULE_REC: &str = "sstModule";

/// A field at `at` in `structure` the format does not allow.
pub(crate) fn bad(at: usize, structure: &'static str, problem: &'static str) -> DebugError {
    binread::Error::new(at, structure, ErrorKind::Invalid(problem)).into()
}

/// A count over [`MAX_DIRECTORY_ENTRIES`] at `at`.
pub(crate) fn too_many(at: usize, structure: &'static str, count: usize) -> DebugError {
    let kind = ErrorKind::TooMany {
        count: count as u64,
        limit: MAX_DIRECTORY_ENTRIES as u64,
    };
    binread::Error::new(at, structure, kind).into()
}

/// `sstModule` at `at`.
fn read_module(bytes: &[u8], at: usize, index: u16) -> Result<ModuleInfo, DebugError> {
    let mut c = Cursor::at(bytes, at as u64);
    c.skip(4, MODULE_REC)?;
    let count = usize::from(c.u16(MODULE_REC)?);
    c.skip(2, MODULE_REC)?;
    c.check_count(count as u64, 12, MODULE_REC)?;
    let mut segments = Vec::with_capacity(count);
    for _ in 0..count {
        let seg = c.u16(MODULE_REC)?;
        c.skip(2, MODULE_REC)?;
        let offset = c.u32(MODULE_REC)?;
        let size = c.u32(MODULE_REC)?;
        segments.push((seg, offset, size));
    }
    let name = c.pstring(MODULE_REC)?;
    Ok(ModuleInfo {
        index,
        name,
        segments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures() {
        assert_eq!(DebugInfo::parse(b""), Err(DebugError::NoSignature));
        assert_eq!(DebugInfo::parse(b"MZ\0\0"), Err(DebugError::NoSignature));
        assert_eq!(
            DebugInfo::parse(b"NB02\0\0\0\0"),
            Err(DebugError::Unsupported(*b"NB02"))
        );
        let err = DebugInfo::parse(b"NB04\x40\0\0\0").unwrap_err();
        assert_eq!(
            err.to_string(),
            "debug information offset 0x40: HLL directory: truncated"
        );
        let err = DebugInfo::parse(b"NB09\x40\0\0\0").unwrap_err();
        assert_eq!(
            err.to_string(),
            "debug information offset 0x40: subsection directory header: truncated"
        );
    }

    #[test]
    fn a_huge_directory_count_is_refused_before_allocation() {
        let mut b = b"NB09\x08\0\0\0".to_vec();
        b.extend_from_slice(&16u16.to_le_bytes());
        b.extend_from_slice(&12u16.to_le_bytes());
        b.extend_from_slice(&0xFFFFu32.to_le_bytes());
        b.extend_from_slice(&[0; 8]);
        let err = DebugInfo::parse(&b).unwrap_err();
        let DebugError::Read(e) = &err else {
            panic!("{err}")
        };
        assert_eq!((e.offset, e.structure), (0x18, "subsection directory"));
        assert!(matches!(e.kind, ErrorKind::TooMany { count: 0xFFFF, .. }));
    }
}
