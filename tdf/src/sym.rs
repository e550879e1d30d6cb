//! `.SYM` symbol files, as IBM's MAPSYM writes them from a linker MAP
//! (the format OS/2's kernel debugger and TRACEFMT read): the public
//! symbols of each segment or object, for `.name` resolution when no MAP
//! file is at hand.
//!
//! Layout (little endian; "paragraph" pointers count 16-byte units from
//! the start of the file, other pointers are byte offsets from the start
//! of their own structure):
//!
//! ```text
//! MAPDEF   u16 ppNextMap   paragraph of the next map (the end map follows the last)
//!          u8  bFlags      u8 reserved
//!          u16 pSegEntry   segment of the entry point
//!          u16 cConsts     u16 pConstDef   absolute symbols (count, offset)
//!          u16 cSegs       u16 ppSegDef    segments (count, paragraph of the first)
//!          u8  cbMaxSym    u8  cbModName   then the module name
//! SEGDEF   u16 ppNextSeg   paragraph of the next segment
//!          u16 cSymbols    u16 pSymDef     symbol offsets table (from the SEGDEF)
//!          u16 wSegNum     3 x u16 reserved
//!          u8  bFlags      (1: 32-bit symbol values, 2: a table by name follows)
//!          u8 reserved     u16 ppLineDef   u8 reserved  u8 reserved
//!          u8  cbSegName   then the segment name
//! SYMDEF   u16 (or u32 with bFlags 1) value, u8 cbName, then the name
//! END MAP  u16 0, u8 release, u8 version
//! ```
//!
//! The symbol offsets table holds `cSymbols` u16 offsets (from the
//! SEGDEF) of the SYMDEFs in value order; with `bFlags & 2` a second
//! table, by name, follows (ignored here). Constants are SYMDEFs with
//! 16-bit values listed at `pConstDef`.
//!
//! Every offset and count is checked against the file: a bad file gives a
//! [`SymError`] with the byte offset of the field at fault, never a panic
//! or an allocation larger than the file.

use crate::target::{Symbol, SymbolTable};

/// Why a `.SYM` file cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SYM file, byte offset {offset:#x}: {what}")]
pub struct SymError {
    /// Where in the file.
    pub offset: usize,
    /// What is wrong.
    pub what: String,
}

/// One segment's symbols.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymSegment {
    /// Segment (NE) or object (LX) number, from 1.
    pub number: u16,
    /// Its name (`_TEXT`, `CODE32`).
    pub name: String,
    /// Symbol values are 32-bit.
    pub bits32: bool,
    /// (offset, name) in value order.
    pub symbols: Vec<(u32, String)>,
}

/// A `.SYM` file's first map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymFile {
    /// The module name.
    pub module: String,
    /// The segment of the entry point.
    pub entry_segment: u16,
    /// Absolute symbols: (value, name).
    pub constants: Vec<(u16, String)>,
    /// The segments with their symbols.
    pub segments: Vec<SymSegment>,
    /// MAPSYM's version (major, minor) from the end map.
    pub version: (u8, u8),
}

struct Reader<'a> {
    b: &'a [u8],
}

impl Reader<'_> {
    fn err(&self, offset: usize, what: impl Into<String>) -> SymError {
        SymError {
            offset,
            what: what.into(),
        }
    }
    fn u8(&self, at: usize, field: &str) -> Result<u8, SymError> {
        self.b.get(at).copied().ok_or_else(|| {
            self.err(
                at,
                format!("{field}: past the end of the file ({} bytes)", self.b.len()),
            )
        })
    }
    fn u16(&self, at: usize, field: &str) -> Result<u16, SymError> {
        Ok(u16::from(self.u8(at, field)?) | (u16::from(self.u8(at + 1, field)?) << 8))
    }
    fn u32(&self, at: usize, field: &str) -> Result<u32, SymError> {
        Ok(u32::from(self.u16(at, field)?) | (u32::from(self.u16(at + 2, field)?) << 16))
    }
    /// A length-prefixed name at `at`: (name, offset after it).
    fn name(&self, at: usize, field: &str) -> Result<(String, usize), SymError> {
        let n = usize::from(self.u8(at, field)?);
        let bytes = self.b.get(at + 1..at + 1 + n).ok_or_else(|| {
            self.err(
                at,
                format!("{field}: {n} bytes run past the end of the file"),
            )
        })?;
        Ok((bytes.iter().map(|&c| char::from(c)).collect(), at + 1 + n))
    }
    /// A SYMDEF at `at`.
    fn symdef(&self, at: usize, bits32: bool) -> Result<(u32, String), SymError> {
        let (value, name_at) = if bits32 {
            (self.u32(at, "symbol value")?, at + 4)
        } else {
            (u32::from(self.u16(at, "symbol value")?), at + 2)
        };
        let (name, _) = self.name(name_at, "symbol name")?;
        Ok((value, name))
    }
}

impl SymFile {
    /// Parses a `.SYM` file (its first map).
    ///
    /// # Errors
    /// [`SymError`] with the byte offset of the first field that is out of
    /// the file or inconsistent.
    pub fn parse(bytes: &[u8]) -> Result<SymFile, SymError> {
        let r = Reader { b: bytes };
        let next_map = usize::from(r.u16(0, "MAPDEF next map")?) * 16;
        let entry_segment = r.u16(4, "MAPDEF entry segment")?;
        let n_consts = usize::from(r.u16(6, "MAPDEF constant count")?);
        let p_consts = usize::from(r.u16(8, "MAPDEF constants")?);
        let n_segs = usize::from(r.u16(10, "MAPDEF segment count")?);
        let mut seg_at = usize::from(r.u16(12, "MAPDEF first segment")?) * 16;
        let (module, _) = r.name(15, "MAPDEF module name")?;
        if next_map == 0 || next_map >= bytes.len() {
            return Err(r.err(
                0,
                format!("MAPDEF next map at {next_map:#x} is not in the file"),
            ));
        }
        let version = (
            r.u8(next_map + 3, "end map version")?,
            r.u8(next_map + 2, "end map release")?,
        );
        // Constants: u16 offsets from the MAPDEF to 16-bit SYMDEFs.
        let mut constants = Vec::new();
        for i in 0..n_consts {
            let at = p_consts + 2 * i;
            let def = usize::from(r.u16(at, "constant offset")?);
            let (v, name) = r.symdef(def, false)?;
            constants.push((v as u16, name));
        }
        let mut segments = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..n_segs {
            if seg_at == 0 || seg_at >= bytes.len() || !seen.insert(seg_at) {
                return Err(r.err(
                    seg_at,
                    format!("SEGDEF at {seg_at:#x} is not in the file, or repeats"),
                ));
            }
            let next = usize::from(r.u16(seg_at, "SEGDEF next segment")?) * 16;
            let count = usize::from(r.u16(seg_at + 2, "SEGDEF symbol count")?);
            let table = seg_at + usize::from(r.u16(seg_at + 4, "SEGDEF symbol table")?);
            let number = r.u16(seg_at + 6, "SEGDEF segment number")?;
            let flags = r.u8(seg_at + 14, "SEGDEF flags")?;
            let (name, _) = r.name(seg_at + 20, "SEGDEF segment name")?;
            let bits32 = flags & 1 != 0;
            // The table must fit before any symbol is read: a huge count
            // in a small file is refused here, not allocated.
            if table + 2 * count > bytes.len() {
                return Err(r.err(
                    seg_at + 2,
                    format!("SEGDEF of {name}: {count} symbols do not fit the file"),
                ));
            }
            let mut symbols = Vec::with_capacity(count);
            for i in 0..count {
                let def = seg_at + usize::from(r.u16(table + 2 * i, "symbol offset")?);
                symbols.push(r.symdef(def, bits32)?);
            }
            segments.push(SymSegment {
                number,
                name,
                bits32,
                symbols,
            });
            seg_at = next;
        }
        Ok(SymFile {
            module,
            entry_segment,
            constants,
            segments,
            version,
        })
    }

    /// The file's bytes, laid out as MAPSYM lays them out: the MAPDEF,
    /// each segment's SEGDEF on a paragraph with its SYMDEFs and its two
    /// offset tables (by value, then by name), then the end map. Symbols
    /// are written in the order given (value order, as MAPSYM sorts
    /// them).
    ///
    /// # Errors
    /// [`SymError`] (offset 0) when a name is longer than 255 bytes or a
    /// segment does not fit the 16-bit offsets of its structure.
    pub fn to_bytes(&self) -> Result<Vec<u8>, SymError> {
        let too_big = |what: String| SymError { offset: 0, what };
        let name_bytes = |n: &str| -> Result<Vec<u8>, SymError> {
            let b: Vec<u8> = n.chars().map(|c| c as u32 as u8).collect();
            let len = u8::try_from(b.len())
                .map_err(|_| too_big(format!("name {n:?} is longer than 255 bytes")))?;
            Ok([vec![len], b].concat())
        };
        let pad = |b: &mut Vec<u8>| b.resize(b.len().div_ceil(16) * 16, 0);
        let para =
            |at: usize| u16::try_from(at / 16).map_err(|_| too_big("the file is over 1 MB".into()));
        let max_sym = self
            .segments
            .iter()
            .flat_map(|s| s.symbols.iter().map(|x| x.1.len()))
            .chain(self.constants.iter().map(|c| c.1.len()))
            .max()
            .unwrap_or(0)
            .min(255) as u8;
        let mut b = vec![0u8; 16];
        b[4..6].copy_from_slice(&self.entry_segment.to_le_bytes());
        b[6..8].copy_from_slice(&(self.constants.len() as u16).to_le_bytes());
        b[10..12].copy_from_slice(&(self.segments.len() as u16).to_le_bytes());
        b[14] = max_sym;
        b[2] = 2;
        let module = name_bytes(&self.module)?;
        b[15] = module[0];
        b.extend_from_slice(&module[1..]);
        // Constants: SYMDEFs, then their offsets.
        let mut offs = Vec::new();
        for (v, n) in &self.constants {
            offs.push(b.len() as u16);
            b.extend_from_slice(&v.to_le_bytes());
            b.extend(name_bytes(n)?);
        }
        let p_consts = b.len() as u16;
        b[8..10].copy_from_slice(&p_consts.to_le_bytes());
        for o in offs {
            b.extend_from_slice(&o.to_le_bytes());
        }
        pad(&mut b);
        let first = para(b.len())?;
        b[12..14]
            .copy_from_slice(&(if self.segments.is_empty() { 0 } else { first }).to_le_bytes());
        let mut prev_next: Option<usize> = None;
        for seg in &self.segments {
            let at = b.len();
            if let Some(p) = prev_next {
                b[p..p + 2].copy_from_slice(&para(at)?.to_le_bytes());
            }
            prev_next = Some(at);
            let mut d = vec![0u8; 20];
            d[2..4].copy_from_slice(&(seg.symbols.len() as u16).to_le_bytes());
            d[6..8].copy_from_slice(&seg.number.to_le_bytes());
            d[14] = u8::from(seg.bits32) | 2;
            d[19] = 0xFF;
            d.extend(name_bytes(&seg.name)?);
            let mut sym_offs = Vec::new();
            for (v, n) in &seg.symbols {
                sym_offs.push(d.len());
                if seg.bits32 {
                    d.extend_from_slice(&v.to_le_bytes());
                } else {
                    let v = u16::try_from(*v)
                        .map_err(|_| too_big(format!("{n}: {v:#x} in a 16-bit segment")))?;
                    d.extend_from_slice(&v.to_le_bytes());
                }
                d.extend(name_bytes(n)?);
            }
            let table = d.len();
            let mut by_name: Vec<usize> = (0..seg.symbols.len()).collect();
            by_name.sort_by(|&x, &y| seg.symbols[x].1.cmp(&seg.symbols[y].1));
            for o in sym_offs.iter().chain(by_name.iter().map(|&i| &sym_offs[i])) {
                let o = u16::try_from(*o)
                    .map_err(|_| too_big(format!("segment {} is over 64 KB", seg.name)))?;
                d.extend_from_slice(&o.to_le_bytes());
            }
            let table = u16::try_from(table)
                .map_err(|_| too_big(format!("segment {} is over 64 KB", seg.name)))?;
            d[4..6].copy_from_slice(&table.to_le_bytes());
            b.extend(d);
            pad(&mut b);
        }
        let end = para(b.len())?;
        b[0..2].copy_from_slice(&end.to_le_bytes());
        b.extend_from_slice(&[0, 0, self.version.1, self.version.0]);
        Ok(b)
    }

    /// The segments' public symbols as a symbol table (object = segment
    /// number), as a MAP's publics would give them.
    pub fn symbol_table(&self) -> SymbolTable {
        SymbolTable::new(
            self.segments
                .iter()
                .flat_map(|s| {
                    s.symbols.iter().map(|(offset, name)| Symbol {
                        name: name.clone(),
                        object: u32::from(s.number),
                        offset: *offset,
                    })
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SYM file laid out as MAPSYM lays one out: module T, segment 1
    /// DATA32 with `counter`, segment 3 CODE32 with `main_entry` at 0 and
    /// `helper` at 0xE (16-bit values, tables by value and by name).
    pub(crate) fn sample() -> Vec<u8> {
        let mut b = vec![0u8; 0x94];
        let put16 =
            |b: &mut Vec<u8>, at: usize, v: u16| b[at..at + 2].copy_from_slice(&v.to_le_bytes());
        put16(&mut b, 0, 9);
        b[2] = 2;
        put16(&mut b, 4, 3);
        put16(&mut b, 8, 0x12);
        put16(&mut b, 10, 2);
        put16(&mut b, 12, 2);
        b[14] = 10;
        b[15] = 2;
        b[16..18].copy_from_slice(b"T1");
        // Segment 1 at 0x20.
        let seg =
            |b: &mut Vec<u8>, at: usize, next: u16, n: u16, table: u16, num: u16, name: &[u8]| {
                put16(b, at, next);
                put16(b, at + 2, n);
                put16(b, at + 4, table);
                put16(b, at + 6, num);
                b[at + 14] = 2;
                b[at + 19] = 0xFF;
                b[at + 20] = name.len() as u8;
                b[at + 21..at + 21 + name.len()].copy_from_slice(name);
            };
        seg(&mut b, 0x20, 5, 1, 0x25, 1, b"DATA32");
        b[0x3B..0x3D].copy_from_slice(&0u16.to_le_bytes());
        b[0x3D] = 7;
        b[0x3E..0x45].copy_from_slice(b"counter");
        put16(&mut b, 0x45, 0x1B);
        put16(&mut b, 0x47, 0x1B);
        seg(&mut b, 0x50, 0, 2, 0x31, 3, b"CODE32");
        put16(&mut b, 0x6B, 0);
        b[0x6D] = 10;
        b[0x6E..0x78].copy_from_slice(b"main_entry");
        put16(&mut b, 0x78, 0xE);
        b[0x7A] = 6;
        b[0x7B..0x81].copy_from_slice(b"helper");
        for (i, v) in [0x1B, 0x28, 0x28, 0x1B].iter().enumerate() {
            put16(&mut b, 0x81 + 2 * i, *v);
        }
        b[0x92] = 1;
        b[0x93] = 5;
        b
    }

    #[test]
    fn reads_what_mapsym_writes() {
        let s = SymFile::parse(&sample()).unwrap();
        assert_eq!(s.module, "T1");
        assert_eq!(s.entry_segment, 3);
        assert_eq!(s.version, (5, 1));
        assert_eq!(s.segments.len(), 2);
        assert_eq!(s.segments[0].name, "DATA32");
        assert_eq!(s.segments[0].symbols, [(0, "counter".to_string())]);
        assert_eq!(s.segments[1].number, 3);
        assert_eq!(
            s.segments[1].symbols,
            [(0, "main_entry".to_string()), (0xE, "helper".to_string())]
        );
        let t = s.symbol_table();
        let h = t.lookup("HELPER", true).unwrap();
        assert_eq!((h.object, h.offset), (3, 0xE));
    }

    #[test]
    fn writes_what_it_reads() {
        let s = SymFile::parse(&sample()).unwrap();
        let b = s.to_bytes().unwrap();
        assert_eq!(SymFile::parse(&b).unwrap(), s);
        // MAPSYM's layout: the same paragraphs as the sample.
        assert_eq!(&b[..2], &sample()[..2]);
        assert_eq!(b.len(), sample().len());
    }

    #[test]
    fn bad_files_say_where() {
        assert_eq!(SymFile::parse(&[]).unwrap_err().offset, 0);
        let mut b = sample();
        b[0x52] = 0xFF; // CODE32's symbol count
        b[0x53] = 0x7F;
        let e = SymFile::parse(&b).unwrap_err();
        assert_eq!(e.offset, 0x52, "{e}");
        assert!(e.to_string().contains("do not fit"), "{e}");
        let mut b = sample();
        b[0x20] = 2; // DATA32's next segment: itself
        let e = SymFile::parse(&b).unwrap_err();
        assert_eq!(e.offset, 0x20, "{e}");
        let mut b = sample();
        b[0x7A] = 200; // helper's name length
        let e = SymFile::parse(&b).unwrap_err();
        assert_eq!(e.offset, 0x7A, "{e}");
        for cut in 0..b.len() {
            let _ = SymFile::parse(&b[..cut]);
        }
    }
}
