//! IBM HLL debug information (`NB04`), as LINK386 /CO writes it for IBM's
//! compilers (and emxomf for GCC): the directory, the module records, the
//! symbol scope table (procedures, their stack and register variables,
//! static data) and the IBM line-number tables (HL03/HL04 form).
//!
//! # Layout implemented (sources)
//!
//! From the public HLL definitions in netlabs' Odin32 (`tools/dbginfo/
//! hll.h`: header, directory, module, line-number first entry, file-name
//! entry, line entry) and emxomf's `stabshll.c` (the symbol scope table
//! subrecords it writes); nothing was copied:
//!
//! * Header: `NB04`, directory offset u32 (from the signature). Directory:
//!   `cb` u16 (offset of the entries), `cbEntry` u16, `cEntries` u32;
//!   entries: type u16, module u16, offset u32, size u32. Types read:
//!   0x0101 module, 0x0102 public symbols (offset u32, segment u16, type
//!   u16, name), 0x0104 symbols, 0x010B IBM line numbers.
//! * Module: object u16, offset u32, size u32, overlay u16, library u16,
//!   `cSegInfo` u8, pad u8, style u16 (`HL`), version minor u8, major u8,
//!   name (length byte).
//! * Symbol subrecords: a length (one byte, or two big-endian bytes with
//!   the top bit set, then 15 bits) counting the type byte and the data.
//!   0x00 begin block (offset u32, length u32, name); 0x01 procedure and
//!   0x1D C++ procedure (offset u32, type u16, length u32, prologue length
//!   u16, prologue + body length u32, class u16, flags u8 (0x08: 32-bit),
//!   name); 0x02 end; 0x04 auto (frame offset i32, type u16, name); 0x05
//!   static (offset u32, segment u16, type u16, name); 0x0D register (type
//!   u16, register u8, name); 0x11 change segment (segment u16, u16).
//! * Line numbers (HL03/HL04): tables that start with a first entry (line
//!   0 u16, type u8, reserved u8, `cEntries` u16, segment u16, u32): type 0
//!   is `cEntries` × (line u16, source file index u16, offset u32); type 3
//!   is a file-name table of the u32's size: start u32, records u32,
//!   `cSourceFiles` u32, names. LINK386's HL04 modules (the toolkit's
//!   GENCAT.EXE, MKCATDEF.EXE) give the type 3 table first; their type 0
//!   tables' u32 is the linear address of the module's code (object base +
//!   the module's offset) and line offsets count from the module's start.
//!   Without a type 3 table first (HL03), a type 0 table's u32 is the size
//!   of a file-name table that follows its entries.
//!
//! # Inferences (checked since against the toolkit's LINK386 modules for
//! the layout only: directory order, publics, line tables)
//!
//! * Procedure and line offsets are object-relative after linking, in the
//!   segment of the last change-segment subrecord (else the module's
//!   first segment).
//! * Source file indexes in line entries count from 1 over the names of
//!   the module's file-name tables, in order.
//! * HLL register numbers are CodeView's less one (0x10 = EAX, as emxomf
//!   writes; 0x08 = AX, 0x0E = SI).
//! * HL01 line numbers (older IBM C/2) are not read.
//! * HLL type indexes are not CodeView's: a variable's type index is
//!   stored as [`HLL_TYPE`] | the HLL index, which has no CodeView size, so
//!   a stack variable logs the procedure's word (2 or 4 bytes).

use super::symbols::{add_procedure, add_variable};
use super::{DataSymbol, Location, Procedure};
use super::{DebugError, DebugInfo, LineEntry, ModuleInfo, SourceFile, bad, too_many};
use binread::{Cursor, ErrorKind};

/// Marks a type index as HLL's (see the module doc).
pub const HLL_TYPE: u32 = 0xFFFF_0000;

/// Directory entry types.
const HLL_MODULE: u16 = 0x0101;
const HLL_PUBLICS: u16 = 0x0102;
const HLL_SYMBOLS: u16 = 0x0104;
const HLL_IBMSRC: u16 = 0x010B;

/// Structure name in read errors.
const SUBRECORD: &str = "HLL symbol subrecord";
/// Structure name in read errors.
const MODULE_REC: &str = "HLL module";
/// Structure name in read errors.
const LINE_TABLE: &str = "HLL line-number table";
/// Structure name in read errors.
const PUBLIC: &str = "HLL public symbol";

/// Reads HLL debug information that starts with `NB04`.
pub(crate) fn parse(bytes: &[u8]) -> Result<DebugInfo, DebugError> {
    let mut info = DebugInfo {
        signature: *b"NB04",
        ..DebugInfo::default()
    };
    let mut h = Cursor::at(bytes, 4);
    let lfo = h.u32("HLL header")? as usize;
    let mut d = Cursor::at(bytes, lfo as u64);
    let cb = usize::from(d.u16("HLL directory")?);
    let cb_entry = usize::from(d.u16("HLL directory")?);
    let count = d.u32("HLL directory")? as usize;
    if cb < 8 || cb_entry < 12 {
        return Err(bad(lfo, "HLL directory", "header or entry size too small"));
    }
    let first = lfo.saturating_add(cb);
    let e = Cursor::at(bytes, first as u64);
    if count > super::MAX_DIRECTORY_ENTRIES {
        return Err(too_many(first, "HLL directory", count));
    }
    e.check_count(count as u64, cb_entry as u64, "HLL directory")?;
    // Each module's first segment, for procedures without a change-segment.
    let mut first_segment: Vec<(u16, u16)> = Vec::new();
    let mut entries = Vec::with_capacity(count);
    for i in 0..count {
        let mut c = Cursor::at(bytes, (first + i * cb_entry) as u64);
        let kind = c.u16("HLL directory entry")?;
        let module = c.u16("HLL directory entry")?;
        let at = c.u32("HLL directory entry")? as usize;
        let len = c.u32("HLL directory entry")? as usize;
        let Some(end) = at.checked_add(len).filter(|&end| end <= bytes.len()) else {
            return Err(bad(
                first + i * cb_entry,
                "HLL directory entry",
                "data outside the debug information",
            ));
        };
        entries.push((kind, module, at, end));
    }
    for &(kind, module, at, end) in &entries {
        if kind == HLL_MODULE {
            let m = read_module(&bytes[..end], at, module)?;
            if let Some(&(seg, _, _)) = m.segments.first() {
                first_segment.push((module, seg));
            }
            info.modules.push(m);
        }
    }
    for &(kind, module, at, end) in &entries {
        let segment = first_segment
            .iter()
            .find(|(m, _)| *m == module)
            .map_or(1, |&(_, s)| s);
        // Where the module's code starts in its segment.
        let start = info
            .modules
            .iter()
            .find(|m| m.index == module)
            .and_then(|m| m.segments.first())
            .map_or(0, |&(_, offset, _)| offset);
        match kind {
            HLL_SYMBOLS => read_symbols(&bytes[..end], at, segment, &mut info)?,
            HLL_PUBLICS => read_publics(&bytes[..end], at, &mut info.publics)?,
            HLL_IBMSRC => info.files.extend(read_lines(&bytes[..end], at, start)?),
            _ => {}
        }
    }
    Ok(info)
}

fn read_module(bytes: &[u8], at: usize, index: u16) -> Result<ModuleInfo, DebugError> {
    let mut c = Cursor::at(bytes, at as u64);
    let seg = c.u16(MODULE_REC)?;
    let offset = c.u32(MODULE_REC)?;
    let size = c.u32(MODULE_REC)?;
    c.skip(4, MODULE_REC)?;
    let count = usize::from(c.u8(MODULE_REC)?);
    c.skip(1, MODULE_REC)?;
    c.skip(4, MODULE_REC)?;
    let name = c.pstring(MODULE_REC)?;
    let mut segments = vec![(seg, offset, size)];
    let more = count.saturating_sub(1);
    c.check_count(more as u64, 10, MODULE_REC)?;
    for _ in 0..more {
        let seg = c.u16(MODULE_REC)?;
        let offset = c.u32(MODULE_REC)?;
        let size = c.u32(MODULE_REC)?;
        segments.push((seg, offset, size));
    }
    Ok(ModuleInfo {
        index,
        name,
        segments,
    })
}

/// The public symbols at `at` to the end of `bytes`: offset u32, segment
/// u16, type u16, name (one length byte).
fn read_publics(bytes: &[u8], at: usize, out: &mut Vec<DataSymbol>) -> Result<(), DebugError> {
    let mut c = Cursor::at(bytes, at as u64);
    while (c.pos() as usize) < bytes.len() {
        let offset = c.u32(PUBLIC)?;
        let segment = c.u16(PUBLIC)?;
        let type_index = HLL_TYPE | u32::from(c.u16(PUBLIC)?);
        let name = c.pstring(PUBLIC)?;
        out.push(DataSymbol {
            name,
            segment,
            offset,
            type_index,
        });
    }
    Ok(())
}

/// A name with a one-byte length, or (top bit set) a two-byte one.
fn long_name(c: &mut Cursor<'_>) -> Result<String, DebugError> {
    let b0 = c.u8(SUBRECORD)?;
    let n = if b0 & 0x80 != 0 {
        (usize::from(b0 & 0x7F) << 8) | usize::from(c.u8(SUBRECORD)?)
    } else {
        usize::from(b0)
    };
    Ok(binread::latin1(c.take(n as u64, SUBRECORD)?))
}

fn read_symbols(
    bytes: &[u8],
    at: usize,
    segment: u16,
    info: &mut DebugInfo,
) -> Result<(), DebugError> {
    let mut segment = segment;
    let mut scopes: Vec<Option<usize>> = Vec::new();
    let first = info.procedures.len();
    let mut at = at;
    while at < bytes.len() {
        let mut c = Cursor::at(bytes, at as u64);
        let b0 = c.u8(SUBRECORD)?;
        let len = if b0 & 0x80 != 0 {
            (usize::from(b0 & 0x7F) << 8) | usize::from(c.u8(SUBRECORD)?)
        } else {
            usize::from(b0)
        };
        let end = c.pos() as usize + len;
        if end > bytes.len() || len == 0 {
            let e = binread::Error::new(at, SUBRECORD, ErrorKind::Truncated);
            return Err(e.into());
        }
        let mut r = Cursor::at(&bytes[..end], c.pos());
        let kind = r.u8(SUBRECORD)?;
        let current = scopes.iter().rev().find_map(|s| *s);
        match kind {
            0x00 => {
                // The first block of a procedure is where IBM's TRCUST
                // takes its body from (see `Procedure::block`).
                let offset = r.u32(SUBRECORD)?;
                let length = r.u32(SUBRECORD)?;
                if let Some(p) = current.and_then(|i| info.procedures.get_mut(i))
                    && p.block.is_none()
                {
                    p.block = Some((offset, length));
                }
                scopes.push(None);
            }
            0x01 | 0x1D => {
                let offset = r.u32(SUBRECORD)?;
                r.u16(SUBRECORD)?;
                let length = r.u32(SUBRECORD)?;
                let debug_start = u32::from(r.u16(SUBRECORD)?);
                let debug_end = r.u32(SUBRECORD)?;
                r.u16(SUBRECORD)?;
                let flags = r.u8(SUBRECORD)?;
                let name = if kind == 0x1D {
                    long_name(&mut r)?
                } else {
                    r.pstring(SUBRECORD)?
                };
                let procedure = Procedure {
                    name,
                    segment,
                    offset,
                    length,
                    debug_start,
                    debug_end,
                    big: flags & 0x08 != 0,
                    global: true,
                    variables: Vec::new(),
                    block: None,
                    last_in_table: false,
                };
                let what = ("HLL procedure", "prologue or body past its length");
                scopes.push(Some(add_procedure(info, procedure, at, what)?));
            }
            0x02 => {
                scopes.pop();
            }
            0x04 => {
                let off = r.u32(SUBRECORD)? as i32;
                let type_index = HLL_TYPE | u32::from(r.u16(SUBRECORD)?);
                let name = r.pstring(SUBRECORD)?;
                add_variable(info, current, name, Location::BpRelative(off), type_index);
            }
            0x05 => {
                let offset = r.u32(SUBRECORD)?;
                let seg = r.u16(SUBRECORD)?;
                let type_index = HLL_TYPE | u32::from(r.u16(SUBRECORD)?);
                let name = r.pstring(SUBRECORD)?;
                info.data.push(DataSymbol {
                    name,
                    segment: seg,
                    offset,
                    type_index,
                });
            }
            0x0D => {
                let type_index = HLL_TYPE | u32::from(r.u16(SUBRECORD)?);
                let reg = u16::from(r.u8(SUBRECORD)?);
                let name = r.pstring(SUBRECORD)?;
                let loc = Location::Register(reg + 1);
                add_variable(info, current, name, loc, type_index);
            }
            0x11 => segment = r.u16(SUBRECORD)?,
            _ => {}
        }
        at = end;
    }
    if info.procedures.len() > first
        && let Some(p) = info.procedures.last_mut()
    {
        p.last_in_table = true;
    }
    Ok(())
}

/// A file-name table of `size` bytes at `c`: its names.
fn file_names(c: &mut Cursor<'_>, size: usize, names: &mut Vec<String>) -> Result<(), DebugError> {
    let start = c.pos() as usize;
    c.skip(8, "HLL file-name table")?;
    let count = c.u32("HLL file-name table")? as usize;
    c.check_count(count as u64, 1, "HLL file-name table")?;
    for _ in 0..count {
        names.push(c.pstring("HLL file-name table")?);
    }
    if c.pos() as usize - start > size {
        return Err(bad(start, "HLL file-name table", "longer than its size"));
    }
    c.seek((start + size) as u64);
    Ok(())
}

/// The line-number tables at `at`. After a file-name table (type 3, the
/// HL04 form LINK386 writes: names first), a type 0 table's u32 is the
/// linear address of the module's code and its offsets are from the
/// module's start (`start` in its segment); without one (HL03), the u32 is
/// the size of the file-name table that follows the entries.
fn read_lines(bytes: &[u8], at: usize, start: u32) -> Result<Vec<SourceFile>, DebugError> {
    let mut names: Vec<String> = Vec::new();
    let mut names_first = false;
    // (file index from 1, entry).
    let mut lines: Vec<(usize, LineEntry)> = Vec::new();
    let mut c = Cursor::at(bytes, at as u64);
    while c.pos() as usize + 12 <= bytes.len() {
        let line0 = c.u16(LINE_TABLE)?;
        let kind = c.u8(LINE_TABLE)?;
        c.u8(LINE_TABLE)?;
        let count = usize::from(c.u16(LINE_TABLE)?);
        let segment = c.u16(LINE_TABLE)?;
        let size = c.u32(LINE_TABLE)? as usize;
        if line0 != 0 {
            return Err(bad(
                c.pos() as usize - 12,
                "HLL line-number table",
                "first entry has a line number",
            ));
        }
        match kind {
            0 => {
                c.check_count(count as u64, 8, LINE_TABLE)?;
                lines.reserve(count);
                for _ in 0..count {
                    let line = u32::from(c.u16(LINE_TABLE)?);
                    let file = usize::from(c.u16(LINE_TABLE)?);
                    let mut offset = c.u32(LINE_TABLE)?;
                    if names_first {
                        offset = offset.wrapping_add(start);
                    }
                    if line != 0 {
                        let e = LineEntry {
                            line,
                            segment,
                            offset,
                        };
                        lines.push((file, e));
                    }
                }
                if size > 0 && !names_first {
                    file_names(&mut c, size, &mut names)?;
                }
            }
            3 => {
                file_names(&mut c, size, &mut names)?;
                names_first = true;
            }
            _ => {
                return Err(bad(
                    c.pos() as usize - 12,
                    "HLL line-number table",
                    "a type this reader does not know",
                ));
            }
        }
    }
    let mut files: Vec<SourceFile> = names
        .into_iter()
        .map(|name| SourceFile {
            name,
            lines: Vec::new(),
        })
        .collect();
    for (file, e) in lines {
        if let Some(f) = file.checked_sub(1).and_then(|i| files.get_mut(i)) {
            f.lines.push(e);
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::debuginfo::LineLookup;

    fn w16(b: &mut Vec<u8>, v: u16) {
        b.extend_from_slice(&v.to_le_bytes());
    }

    fn w32(b: &mut Vec<u8>, v: u32) {
        b.extend_from_slice(&v.to_le_bytes());
    }

    fn pname(b: &mut Vec<u8>, s: &str) {
        b.push(s.len() as u8);
        b.extend_from_slice(s.as_bytes());
    }

    fn sub(b: &mut Vec<u8>, kind: u8, body: &[u8]) {
        b.push(body.len() as u8 + 1);
        b.push(kind);
        b.extend_from_slice(body);
    }

    /// A module record: segment 1 at `offset`, `size` bytes, version
    /// `major`.
    fn module(offset: u32, size: u32, major: u8) -> Vec<u8> {
        let mut b = Vec::new();
        w16(&mut b, 1);
        w32(&mut b, offset);
        w32(&mut b, size);
        w16(&mut b, 0);
        w16(&mut b, 0);
        b.push(1);
        b.push(0);
        b.extend_from_slice(b"HL");
        b.push(0);
        b.push(major);
        pname(&mut b, "T.OBJ");
        b
    }

    /// A procedure subrecord (offset, length, prologue, prologue + body).
    fn procedure(b: &mut Vec<u8>, name: &str, at: u32, len: u32, pro: u16, body: u32) {
        let mut r = Vec::new();
        w32(&mut r, at);
        w16(&mut r, 0x200);
        w32(&mut r, len);
        w16(&mut r, pro);
        w32(&mut r, body);
        w16(&mut r, 0);
        r.push(8);
        pname(&mut r, name);
        sub(b, 0x01, &r);
    }

    /// NB04 with the directory entries (type, bytes) of module 1.
    fn nb04(parts: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let mut out = b"NB04\0\0\0\0".to_vec();
        let mut dir = Vec::new();
        for (kind, bytes) in parts {
            w16(&mut dir, *kind);
            w16(&mut dir, 1);
            w32(&mut dir, out.len() as u32);
            w32(&mut dir, bytes.len() as u32);
            out.extend_from_slice(bytes);
        }
        let lfo = out.len() as u32;
        out[4..8].copy_from_slice(&lfo.to_le_bytes());
        w16(&mut out, 8);
        w16(&mut out, 12);
        w32(&mut out, parts.len() as u32);
        out.extend_from_slice(&dir);
        out
    }

    /// The symbols ALP writes for a frameless `main` at 0 and `Add2` at
    /// 0x1C with a 6-byte prologue, its body a block holding its stack
    /// variables.
    fn alp_symbols() -> Vec<u8> {
        let mut b = Vec::new();
        let mut r = Vec::new();
        w32(&mut r, 0);
        w16(&mut r, 2);
        w16(&mut r, 0x86);
        pname(&mut r, "total");
        sub(&mut b, 0x05, &r);
        sub(&mut b, 0x11, &[1, 0, 0, 0]);
        procedure(&mut b, "main", 0, 0x1C, 0, 0x1C);
        sub(&mut b, 0x02, &[]);
        procedure(&mut b, "Add2", 0x1C, 0x11, 6, 0x0F);
        let mut r = Vec::new();
        w32(&mut r, 0x22);
        w32(&mut r, 9);
        sub(&mut b, 0x00, &r);
        let mut r = Vec::new();
        w32(&mut r, 8);
        w16(&mut r, 0x86);
        pname(&mut r, "a");
        sub(&mut b, 0x04, &r);
        sub(&mut b, 0x02, &[]);
        sub(&mut b, 0x02, &[]);
        b
    }

    #[test]
    fn hl03_line_table_then_its_file_names() {
        // HL03 as ALP +Od and LINK386 write it: one type 0 table whose
        // u32 is the size of the file-name table after its entries;
        // offsets are the segment's.
        let entries = [(9u16, 0u32), (10, 2), (18, 0x1C), (20, 0x22)];
        let mut names = Vec::new();
        w32(&mut names, 9);
        w32(&mut names, entries.len() as u32);
        w32(&mut names, 1);
        pname(&mut names, "C:\\T.ASM");
        let mut lines = Vec::new();
        w16(&mut lines, 0);
        lines.push(0);
        lines.push(0);
        w16(&mut lines, entries.len() as u16);
        w16(&mut lines, 1);
        w32(&mut lines, names.len() as u32);
        for (line, off) in entries {
            w16(&mut lines, line);
            w16(&mut lines, 1);
            w32(&mut lines, off);
        }
        lines.extend_from_slice(&names);
        let d = parse(&nb04(&[
            (HLL_MODULE, module(0, 0x2D, 3)),
            (HLL_SYMBOLS, alp_symbols()),
            (HLL_IBMSRC, lines),
        ]))
        .unwrap();
        assert_eq!(d.files.len(), 1);
        assert_eq!(d.files[0].name, "C:\\T.ASM");
        assert_eq!(d.line("C:\\T.ASM", 18), LineLookup::Exact(1, 0x1C));
        assert_eq!(d.line("C:\\T.ASM", 19), LineLookup::Next(20, 1, 0x22));
        // The procedures: main frameless, without a block, not last;
        // Add2 last, its body the block.
        let main = d.procedure("main").unwrap();
        assert_eq!((main.block, main.last_in_table), (None, false));
        assert_eq!((main.hll_entry(), main.hll_body()), (0, None));
        let add2 = d.procedure("Add2").unwrap();
        assert_eq!((add2.block, add2.last_in_table), (Some((0x22, 9)), true));
        assert_eq!(add2.hll_entry(), 0x22);
        assert_eq!(add2.hll_body(), Some((0x22, 0x2B)));
        assert_eq!(
            add2.variable("a").unwrap().location,
            Location::BpRelative(8)
        );
        assert_eq!(d.data[0].name, "total");
    }

    #[test]
    fn hl04_lines_of_a_module_not_at_offset_0() {
        // HL04 as LINK386 writes it: the file names (type 3) first, then
        // a type 0 table whose offsets count from the module's start in
        // its segment (here 0x40) and whose u32 is the linear address.
        let mut names = Vec::new();
        w32(&mut names, 0);
        w32(&mut names, 0);
        w32(&mut names, 1);
        pname(&mut names, "b.c");
        let mut lines = Vec::new();
        w16(&mut lines, 0);
        lines.push(3);
        lines.push(0);
        w16(&mut lines, 1);
        w16(&mut lines, 0);
        w32(&mut lines, names.len() as u32);
        lines.extend_from_slice(&names);
        w16(&mut lines, 0);
        lines.push(0);
        lines.push(0);
        w16(&mut lines, 2);
        w16(&mut lines, 1);
        w32(&mut lines, 0x0001_0040);
        for (line, off) in [(3u16, 0u32), (5, 7)] {
            w16(&mut lines, line);
            w16(&mut lines, 1);
            w32(&mut lines, off);
        }
        let d = parse(&nb04(&[
            (HLL_MODULE, module(0x40, 0x10, 4)),
            (HLL_IBMSRC, lines),
        ]))
        .unwrap();
        assert_eq!(d.modules[0].segments, [(1, 0x40, 0x10)]);
        assert_eq!(d.line("b.c", 3), LineLookup::Exact(1, 0x40));
        assert_eq!(d.line("B.C", 5), LineLookup::Exact(1, 0x47));
        assert_eq!(d.line("b.c", 6), LineLookup::PastEnd);
    }
}
