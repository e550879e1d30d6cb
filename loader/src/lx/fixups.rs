//! LX fixup page table and fixup records: reading and encoding.

use super::read::{check_object, import_proc_name};
use crate::bytes::{Bytes, Output};
use crate::error::{Error, ErrorKind, Result, WriteError};
use crate::model::*;

/// What the record reader needs to know about the module.
pub(super) struct FixupContext<'a, 'b> {
    pub input: &'a Bytes<'b>,
    pub page_size: u32,
    pub nobj: u32,
    pub nimpmod: u32,
    pub impproc: u64,
    /// For each logical page: owning object and page index in it.
    pub page_owner: &'a [Option<(u16, u32)>],
}

const REC: &str = "LX fixup record";

/// Source type codes.
fn source_kind(code: u8) -> Option<SourceKind> {
    Some(match code {
        0 => SourceKind::Byte,
        2 => SourceKind::Sel16,
        3 => SourceKind::Ptr1616,
        5 => SourceKind::Off16,
        6 => SourceKind::Ptr1632,
        7 => SourceKind::Off32,
        8 => SourceKind::Rel32,
        _ => return None,
    })
}

fn source_code(kind: SourceKind) -> u8 {
    match kind {
        SourceKind::Byte => 0,
        SourceKind::Sel16 => 2,
        SourceKind::Ptr1616 => 3,
        SourceKind::Off16 => 5,
        SourceKind::Ptr1632 => 6,
        SourceKind::Off32 => 7,
        SourceKind::Rel32 => 8,
    }
}

/// Reads all fixup records. Returns the sites and the record count per page.
pub(super) fn read(
    ctx: &FixupContext<'_, '_>,
    fpt: u64,
    records: u64,
    objects: &[Object],
) -> Result<(Vec<Fixup>, Vec<u32>)> {
    const FPT: &str = "LX fixup page table";
    let input = ctx.input;
    let npages = ctx.page_owner.len() as u64;
    input.check_count(fpt, npages + 1, 4, FPT)?;
    let mut fixups: Vec<Fixup> = Vec::new();
    let mut counts = Vec::new();
    let mut record_no = 0u32;
    let mut start = input.u32(fpt, FPT)?;
    for page in 0..npages {
        let end = input.u32(fpt + (page + 1) * 4, FPT)?;
        if end < start {
            let kind = ErrorKind::OutOfRange {
                value: end.into(),
                limit: start.into(),
            };
            return Err(Error::new(fpt + (page + 1) * 4, FPT, kind));
        }
        let (from, to) = (records + u64::from(start), records + u64::from(end));
        input.slice(from, to - from, "LX fixup record table")?;
        let mut pos = from;
        let mut count = 0;
        while pos < to {
            let Some((object, index)) = ctx.page_owner[page as usize] else {
                return Err(Error::new(
                    pos,
                    REC,
                    ErrorKind::Invalid("fixups for a page that belongs to no object"),
                ));
            };
            let (mut sites, next) = read_record(ctx, pos, to, object, index, objects, record_no)?;
            pos = next;
            count += 1;
            let page_start = index * ctx.page_size;
            sites.retain(|s| s.chained || !is_continuation(&fixups, s, page_start));
            if !sites.is_empty() {
                fixups.extend(sites);
                record_no += 1;
            }
        }
        counts.push(count);
        start = end;
    }
    Ok((fixups, counts))
}

/// A site before the start of its record's page (a fixup crossing into this
/// page) that repeats a fixup already read for the previous page.
fn is_continuation(done: &[Fixup], site: &Fixup, page_start: u32) -> bool {
    if site.offset >= page_start {
        return false;
    }
    done.iter()
        .rev()
        .take_while(|f| f.object == site.object)
        .any(|f| {
            f.offset == site.offset
                && f.kind == site.kind
                && f.target == site.target
                && f.additive == site.additive
                && f.alias == site.alias
        })
}

/// Reads one record at `pos`; returns its sites and the offset after it.
fn read_record(
    ctx: &FixupContext<'_, '_>,
    pos: u64,
    end: u64,
    object: u16,
    index: u32,
    objects: &[Object],
    record: u32,
) -> Result<(Vec<Fixup>, u64)> {
    let input = ctx.input;
    let mut p = pos;
    let mut take = |n: u64| -> Result<u64> {
        if p + n > end {
            return Err(Error::new(pos, REC, ErrorKind::Truncated));
        }
        let v = match n {
            1 => input.u8(p, REC)?.into(),
            2 => input.u16(p, REC)?.into(),
            _ => input.u32(p, REC)?.into(),
        };
        p += n;
        Ok(v)
    };
    let src = take(1)? as u8;
    let flags = take(1)? as u8;
    if src & 0xC0 != 0 {
        return Err(Error::new(
            pos,
            REC,
            ErrorKind::UnknownFlags((src & 0xC0).into()),
        ));
    }
    let kind = source_kind(src & 0x0F)
        .ok_or_else(|| Error::new(pos, REC, ErrorKind::UnknownType((src & 0xF).into())))?;
    let alias = src & 0x10 != 0;
    let list = src & 0x20 != 0;
    let chained = flags & 0x08 != 0;
    if chained && (list || kind != SourceKind::Off32 || matches!(flags & 3, 1 | 2)) {
        return Err(Error::new(
            pos + 1,
            REC,
            ErrorKind::Invalid("chaining flag on a record that cannot chain"),
        ));
    }
    let first = if list {
        take(1)? as i64
    } else {
        take(2)? as u16 as i16 as i64
    };
    let wide_obj = if flags & 0x40 != 0 { 2 } else { 1 };
    let wide_off = if flags & 0x10 != 0 { 4 } else { 2 };
    let target = match flags & 3 {
        0 => {
            let obj = take(wide_obj)? as u32;
            check_object(obj, ctx.nobj, pos, REC)?;
            let offset = if kind == SourceKind::Sel16 {
                0
            } else {
                take(wide_off)? as u32
            };
            Target::Internal {
                object: obj as u16,
                offset,
            }
        }
        1 | 2 => {
            let module = take(wide_obj)? as u32;
            if module == 0 || module > ctx.nimpmod {
                let kind = ErrorKind::OutOfRange {
                    value: module.into(),
                    limit: ctx.nimpmod.into(),
                };
                return Err(Error::new(pos, REC, kind));
            }
            if flags & 3 == 1 {
                let ordinal = if flags & 0x80 != 0 {
                    take(1)?
                } else {
                    take(wide_off)?
                } as u32;
                Target::ImportOrdinal {
                    module: module as u16,
                    ordinal,
                }
            } else {
                let off = take(wide_off)?;
                Target::ImportName {
                    module: module as u16,
                    name: import_proc_name(input, ctx.impproc, off)?,
                }
            }
        }
        _ => Target::InternalEntry {
            ordinal: take(wide_obj)? as u16,
        },
    };
    let additive = if flags & 0x04 != 0 {
        Some(take(if flags & 0x20 != 0 { 4 } else { 2 })? as u32)
    } else {
        None
    };
    let mut offsets = Vec::new();
    if list {
        for _ in 0..first {
            offsets.push(take(2)? as u16 as i16 as i64);
        }
    } else {
        offsets.push(first);
    }
    let page_start = i64::from(index) * i64::from(ctx.page_size);
    let mut sites = Vec::new();
    for off in offsets {
        let size = i64::from(kind.size());
        if off >= i64::from(ctx.page_size) || off + size <= 0 || page_start + off < 0 {
            let kind = ErrorKind::OutOfRange {
                value: off as u64,
                limit: ctx.page_size.into(),
            };
            return Err(Error::new(pos, "LX fixup source offset", kind));
        }
        let base = Fixup {
            record,
            object,
            offset: (page_start + off) as u32,
            kind,
            alias,
            target: target.clone(),
            additive,
            add_to_site: false,
            chained,
        };
        if chained {
            if off < 0 || off + 4 > i64::from(ctx.page_size) {
                let kind = ErrorKind::OutOfRange {
                    value: off as u64,
                    limit: ctx.page_size.into(),
                };
                return Err(Error::new(pos, "LX internal fixup chain", kind));
            }
            let page = &objects[usize::from(object) - 1].pages[index as usize].data;
            sites.extend(read_chain(base, off as u32, page, ctx.page_size, pos)?);
        } else {
            sites.push(base);
        }
    }
    Ok((sites, p))
}

/// Follows an internal chain through the page's bytes.
fn read_chain(
    first: Fixup,
    srcoff: u32,
    page: &[u8],
    page_size: u32,
    pos: u64,
) -> Result<Vec<Fixup>> {
    let word = |off: u32| -> Result<u32> {
        if off + 4 > page_size {
            let kind = ErrorKind::OutOfRange {
                value: off.into(),
                limit: page_size.into(),
            };
            return Err(Error::new(pos, "LX internal fixup chain", kind));
        }
        let b = |k: u32| page.get((off + k) as usize).copied().unwrap_or(0);
        Ok(u32::from_le_bytes([b(0), b(1), b(2), b(3)]))
    };
    let page_start = first.offset - srcoff;
    let info0 = word(srcoff)?;
    let delta0 = info0 & 0xFFFFF;
    let mut visited = vec![false; page_size as usize];
    let mut out = Vec::new();
    let mut off = srcoff;
    loop {
        // `word` checks that the site lies in the page before it is marked.
        let info = word(off)?;
        if std::mem::replace(&mut visited[off as usize], true) {
            return Err(Error::new(
                pos,
                "LX internal fixup chain",
                ErrorKind::Invalid("chain loops"),
            ));
        }
        let delta = info & 0xFFFFF;
        let mut f = first.clone();
        f.offset = page_start + off;
        match &mut f.target {
            Target::Internal { offset, .. } => {
                *offset = offset.wrapping_sub(delta0).wrapping_add(delta)
            }
            _ => {
                f.additive = Some(
                    f.additive
                        .unwrap_or(0)
                        .wrapping_sub(delta0)
                        .wrapping_add(delta),
                )
            }
        }
        out.push(f);
        let next = info >> 20;
        if next == 0xFFF {
            return Ok(out);
        }
        off = next;
    }
}

/// Encodes one record: `sites` are page-relative source offsets.
pub(super) fn encode_record(
    out: &mut Output,
    f: &Fixup,
    sites: &[i16],
    chained: bool,
    proc_offset: &dyn Fn(&str) -> u32,
) -> std::result::Result<(), WriteError> {
    const WHAT: &str = "LX fixup record";
    let list = sites.len() > 1;
    if sites.len() > 255 {
        return Err(WriteError::new(WHAT, "more than 255 sites in one record"));
    }
    let mut src = source_code(f.kind);
    if f.alias {
        src |= 0x10;
    }
    if list {
        src |= 0x20;
    }
    let (mut flags, obj_or_mod, value, value_present): (u8, u32, u32, bool) = match &f.target {
        Target::Internal { object, offset } => {
            (0, (*object).into(), *offset, f.kind != SourceKind::Sel16)
        }
        Target::ImportOrdinal { module, ordinal } => (1, (*module).into(), *ordinal, true),
        Target::ImportName { module, name } => (2, (*module).into(), proc_offset(name), true),
        Target::InternalEntry { ordinal } => (3, (*ordinal).into(), 0, false),
        Target::OsFixup { .. } => return Err(WriteError::new(WHAT, "OS fixups exist only in NE")),
    };
    if obj_or_mod > 0xFF {
        flags |= 0x40;
    }
    let byte_ordinal = flags & 3 == 1 && value <= 0xFF;
    if byte_ordinal {
        flags |= 0x80;
    } else if value_present && value > 0xFFFF {
        flags |= 0x10;
    }
    if let Some(add) = f.additive {
        flags |= 0x04;
        if add > 0xFFFF {
            flags |= 0x20;
        }
    }
    if chained {
        flags |= 0x08;
    }
    out.u8(src);
    out.u8(flags);
    if list {
        out.u8(sites.len() as u8);
    } else {
        out.u16(sites[0] as u16);
    }
    if flags & 0x40 != 0 {
        out.u16(obj_or_mod as u16);
    } else {
        out.u8(obj_or_mod as u8);
    }
    if byte_ordinal {
        out.u8(value as u8);
    } else if value_present {
        if flags & 0x10 != 0 {
            out.u32(value);
        } else {
            out.u16(value as u16);
        }
    }
    if let Some(add) = f.additive {
        if flags & 0x20 != 0 {
            out.u32(add);
        } else {
            out.u16(add as u16);
        }
    }
    if list {
        for &s in sites {
            out.u16(s as u16);
        }
    }
    Ok(())
}
