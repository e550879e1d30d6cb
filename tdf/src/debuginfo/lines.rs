//! `sstSrcModule`: line numbers of one object file, by source file.
//!
//! Layout (offsets relative to the start of the subsection):
//! `cFile` u16, `cSeg` u16, `baseSrcFile[cFile]` u32, `cSeg` × (start u32,
//! end u32), `cSeg` × segment u16. Each source file at its base: `cSeg`
//! u16, pad u16, `baseSrcLn[cSeg]` u32, `cSeg` × (start, end) u32, the
//! name (one length byte). Each line table at its base: segment u16,
//! `cPair` u16, `cPair` × offset u32, `cPair` × line u16.

use super::DebugError;
use binread::Cursor;

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
    let mut c = Cursor::at(bytes, at as u64);
    let files = usize::from(c.u16("sstSrcModule header")?);
    let _segments = c.u16("sstSrcModule header")?;
    c.check_count(files as u64, 4, "sstSrcModule header")?;
    let mut bases = Vec::with_capacity(files);
    for _ in 0..files {
        bases.push(c.u32("sstSrcModule header")? as usize);
    }
    let mut out = Vec::with_capacity(files);
    for base in bases {
        let start = at.checked_add(base).ok_or_else(|| {
            super::bad(
                c.pos() as usize,
                "sstSrcModule header",
                "file offset overflows",
            )
        })?;
        let mut f = Cursor::at(bytes, start as u64);
        let tables = usize::from(f.u16("sstSrcModule source file")?);
        f.skip(2, "sstSrcModule source file")?;
        f.check_count(tables as u64, 12, "sstSrcModule source file")?;
        let mut table_bases = Vec::with_capacity(tables);
        for _ in 0..tables {
            table_bases.push(f.u32("sstSrcModule source file")? as usize);
        }
        f.skip(tables as u64 * 8, "sstSrcModule source file")?;
        let name = f.pstring("sstSrcModule source file")?;
        let mut lines = Vec::new();
        for tb in table_bases {
            let t_at = at.saturating_add(tb);
            let mut t = Cursor::at(bytes, t_at as u64);
            let segment = t.u16("sstSrcModule line table")?;
            let pairs = usize::from(t.u16("sstSrcModule line table")?);
            t.check_count(pairs as u64, 6, "sstSrcModule line table")?;
            let mut lt = Cursor::at(bytes, (t.pos() as usize + pairs * 4) as u64);
            lines.reserve(pairs);
            for _ in 0..pairs {
                let offset = t.u32("sstSrcModule line table")?;
                let line = u32::from(lt.u16("sstSrcModule line numbers")?);
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
