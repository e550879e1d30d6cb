//! `sstSrcModule`: line numbers of one object file, by source file.
//!
//! Layout (offsets relative to the start of the subsection):
//! `cFile` u16, `cSeg` u16, `baseSrcFile[cFile]` u32, `cSeg` × (start u32,
//! end u32), `cSeg` × segment u16. Each source file at its base: `cSeg`
//! u16, pad u16, `baseSrcLn[cSeg]` u32, `cSeg` × (start, end) u32, the
//! name (one length byte). Each line table at its base: segment u16,
//! `cPair` u16, `cPair` × offset u32, `cPair` × line u16.

use super::DebugError;
use super::bytes::Cursor;

/// One line with code: where its first instruction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineEntry {
    /// Source line number.
    pub line: u32,
    /// Segment (object) number.
    pub segment: u16,
    /// Offset of the first instruction of the line.
    pub offset: u32,
}

/// A source file and its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// The name as the compiler recorded it.
    pub name: String,
    /// Lines in table order.
    pub lines: Vec<LineEntry>,
}

/// Reads the `sstSrcModule` at `at`; `bytes` ends where it ends.
pub(crate) fn read(bytes: &[u8], at: usize) -> Result<Vec<SourceFile>, DebugError> {
    let mut c = Cursor::new(bytes, at, "sstSrcModule header");
    let files = usize::from(c.u16()?);
    let _segments = c.u16()?;
    c.check_count(files, 4)?;
    let mut bases = Vec::with_capacity(files);
    for _ in 0..files {
        bases.push(c.u32()? as usize);
    }
    let mut out = Vec::with_capacity(files);
    for base in bases {
        let start = at.checked_add(base).ok_or(DebugError::Bad {
            at: c.at,
            what: "sstSrcModule: file offset overflows",
        })?;
        let mut f = Cursor::new(bytes, start, "sstSrcModule source file");
        let tables = usize::from(f.u16()?);
        f.take(2)?;
        f.check_count(tables, 12)?;
        let mut table_bases = Vec::with_capacity(tables);
        for _ in 0..tables {
            table_bases.push(f.u32()? as usize);
        }
        f.take(tables * 8)?;
        let name = f.name()?;
        let mut lines = Vec::new();
        for tb in table_bases {
            let t_at = at.saturating_add(tb);
            let mut t = Cursor::new(bytes, t_at, "sstSrcModule line table");
            let segment = t.u16()?;
            let pairs = usize::from(t.u16()?);
            t.check_count(pairs, 6)?;
            let mut lt = Cursor::new(bytes, t.at + pairs * 4, "sstSrcModule line numbers");
            lines.reserve(pairs);
            for _ in 0..pairs {
                let offset = t.u32()?;
                let line = u32::from(lt.u16()?);
                lines.push(LineEntry {
                    line,
                    segment,
                    offset,
                });
            }
        }
        out.push(SourceFile { name, lines });
    }
    Ok(out)
}
