//! Reading an NE file into a [`Module`].

use super::header::NeHeader;
use super::{NeFile, SegmentEntry};
use crate::bytes::Bytes;
use crate::error::{Error, ErrorKind, Result};
use crate::lx::read_names_pub as read_names;
use crate::model::*;
use crate::module::ne_chains;
use crate::{Format, exepack1, stub};

const RELOC: &str = "NE relocation record";

/// Reads an NE file.
///
/// # Errors
///
/// An [`Error`] naming the file offset and the structure for anything
/// malformed: truncated tables, counts larger than the file, segment data
/// past its end, relocation chains that loop or leave the segment,
/// undefined relocation types or flags.
pub fn read(data: &[u8]) -> Result<NeFile> {
    let input = Bytes::new(data);
    let hoff = stub::new_header_offset(data)?;
    let h = NeHeader::parse(data, hoff)?;
    let rel = |off: u16| hoff + u64::from(off);

    let (name, resident_names) = read_names(&input, rel(h.resname), true, u64::MAX)?;
    let imports = read_module_refs(&input, &h, hoff)?;
    let entries = read_entries(&input, rel(h.entry_off), u64::from(h.entry_len))?;
    let (description, nonresident_names) = if h.nonres_off != 0 && h.nonres_len != 0 {
        let end = u64::from(h.nonres_off) + u64::from(h.nonres_len);
        let (d, n) = read_names(&input, h.nonres_off.into(), true, end)?;
        (Some(d), n)
    } else {
        (None, Vec::new())
    };

    let segtab = rel(h.segtab);
    input.check_count(segtab, h.nseg.into(), 8, "NE segment table")?;
    let mut segments = Vec::new();
    let mut objects = Vec::new();
    let mut fixups = Vec::new();
    let mut record = 0u32;
    for i in 0..u64::from(h.nseg) {
        let e = segtab + i * 8;
        const WHAT: &str = "NE segment table entry";
        let sector = input.u16(e, WHAT)?;
        let stored_len = input.u16(e + 2, WHAT)?;
        let flags = input.u16(e + 4, WHAT)?;
        let min_alloc = input.u16(e + 6, WHAT)?;
        let file_offset = u64::from(sector) << h.shift();
        let length: u32 = if sector == 0 {
            0
        } else if stored_len == 0 {
            0x10000
        } else {
            stored_len.into()
        };
        let raw = input.slice(file_offset, length.into(), "NE segment data")?;
        let iterated = u32::from(flags) & NE_SEG_ITERATED != 0;
        let data = if iterated {
            exepack1::decode(raw, file_offset, 0x10000)?
        } else {
            raw.to_vec()
        };
        let virtual_size = if min_alloc == 0 {
            0x10000
        } else {
            u32::from(min_alloc)
        };
        let kind = if iterated {
            PageKind::Iterated
        } else {
            PageKind::Legal
        };
        let pages = if sector == 0 {
            Vec::new()
        } else {
            vec![Page { kind, data }]
        };
        let object = Object {
            flags: u32::from(flags) & !(NE_SEG_ITERATED | NE_SEG_RELOCINFO),
            base: 0,
            virtual_size,
            pages,
        };
        let mut relocations = 0;
        if u32::from(flags) & NE_SEG_RELOCINFO != 0 && sector != 0 {
            let at = file_offset + u64::from(length);
            relocations = input.u16(at, "NE relocation count")?;
            input.check_count(at + 2, relocations.into(), 8, "NE relocation table")?;
            for r in 0..u64::from(relocations) {
                let sites = read_reloc(
                    &input,
                    &h,
                    hoff,
                    at + 2 + r * 8,
                    (i as u16 + 1, &object),
                    record,
                )?;
                fixups.extend(sites);
                record += 1;
            }
        }
        segments.push(SegmentEntry {
            file_offset: if sector == 0 { 0 } else { file_offset },
            length,
            flags,
            min_alloc,
            relocations,
        });
        objects.push(object);
    }
    let resources = read_resources(&input, &h, hoff, &objects)?;
    let nseg = u32::from(h.nseg);
    let address = |seg: u16, off: u16, field: u64| -> Result<Option<Address>> {
        if seg == 0 {
            return Ok(None);
        }
        if u32::from(seg) > nseg {
            let kind = ErrorKind::OutOfRange {
                value: seg.into(),
                limit: nseg.into(),
            };
            return Err(Error::new(hoff + field, "NE header", kind));
        }
        Ok(Some(Address {
            object: seg,
            offset: off.into(),
        }))
    };
    let module = Module {
        format: Format::Ne,
        stub: data[..hoff as usize].to_vec(),
        name,
        description,
        flags: h.flags.into(),
        objects,
        entries,
        resident_names,
        nonresident_names,
        imports,
        fixups,
        start: address(h.cs, h.ip, 0x16)?,
        stack: address(h.ss, h.sp, 0x1A)?,
        auto_data: if h.autods == 0 { None } else { Some(h.autods) },
        heap_size: h.heap.into(),
        stack_size: h.stack.into(),
        resources,
        lx: None,
        ne: Some(NeOptions {
            linker: (h.linker_version, h.linker_revision),
            target_os: h.target_os,
            align_shift: h.align,
            tail: h.tail,
        }),
    };
    Ok(NeFile {
        header_offset: hoff,
        header: h,
        segments,
        module,
    })
}

fn read_module_refs(input: &Bytes<'_>, h: &NeHeader, hoff: u64) -> Result<Vec<String>> {
    let at = hoff + u64::from(h.modref);
    input.check_count(at, h.nmod.into(), 2, "NE module reference table")?;
    let mut names = Vec::new();
    for i in 0..u64::from(h.nmod) {
        let off = input.u16(at + i * 2, "NE module reference table")?;
        let (name, _) = input.pstring(
            hoff + u64::from(h.impnames) + u64::from(off),
            "NE imported name",
        )?;
        names.push(name);
    }
    Ok(names)
}

fn read_entries(input: &Bytes<'_>, at: u64, len: u64) -> Result<Vec<Entry>> {
    const WHAT: &str = "NE entry table bundle";
    let end = at + len;
    let mut entries = Vec::new();
    let mut ordinal = 1u32;
    let mut pos = at;
    while pos < end {
        let count = input.u8(pos, WHAT)?;
        if count == 0 {
            break;
        }
        let indicator = input.u8(pos + 1, WHAT)?;
        if ordinal + u32::from(count) - 1 > 0xFFFF {
            return Err(Error::new(
                pos,
                WHAT,
                ErrorKind::OutOfRange {
                    value: ordinal.into(),
                    limit: 0xFFFF,
                },
            ));
        }
        pos += 2;
        for _ in 0..count {
            if indicator == 0 {
                break;
            }
            let flags = input.u8(pos, "NE entry")?;
            let point = if indicator == 0xFF {
                let segment = input.u8(pos + 3, "NE entry")?;
                let offset = input.u16(pos + 4, "NE entry")?;
                pos += 6;
                EntryPoint::NeMovable { segment, offset }
            } else {
                let offset = input.u16(pos + 1, "NE entry")?;
                pos += 3;
                EntryPoint::NeFixed {
                    segment: indicator,
                    offset,
                }
            };
            entries.push(Entry {
                ordinal: ordinal as u16,
                flags,
                point,
            });
            ordinal += 1;
        }
        if indicator == 0 {
            ordinal += u32::from(count);
        }
    }
    Ok(entries)
}

fn read_reloc(
    input: &Bytes<'_>,
    h: &NeHeader,
    hoff: u64,
    at: u64,
    (object, seg): (u16, &Object),
    record: u32,
) -> Result<Vec<Fixup>> {
    let src = input.u8(at, RELOC)?;
    let flags = input.u8(at + 1, RELOC)?;
    let first = input.u16(at + 2, RELOC)?;
    let a = input.u16(at + 4, RELOC)?;
    let b = input.u16(at + 6, RELOC)?;
    let kind = match src {
        0 => SourceKind::Byte,
        2 => SourceKind::Sel16,
        3 => SourceKind::Ptr1616,
        5 => SourceKind::Off16,
        0x0B => SourceKind::Ptr1632,
        0x0D => SourceKind::Off32,
        other => return Err(Error::new(at, RELOC, ErrorKind::UnknownType(other.into()))),
    };
    if flags & !7 != 0 {
        return Err(Error::new(
            at + 1,
            RELOC,
            ErrorKind::UnknownFlags((flags & !7).into()),
        ));
    }
    let module = |m: u16| -> Result<u16> {
        if m == 0 || m > h.nmod {
            return Err(Error::new(
                at + 4,
                RELOC,
                ErrorKind::OutOfRange {
                    value: m.into(),
                    limit: h.nmod.into(),
                },
            ));
        }
        Ok(m)
    };
    let target = match flags & 3 {
        0 => {
            let segment = a & 0xFF;
            if segment == 0xFF {
                Target::InternalEntry { ordinal: b }
            } else if segment == 0 || segment > h.nseg {
                let kind = ErrorKind::OutOfRange {
                    value: segment.into(),
                    limit: h.nseg.into(),
                };
                return Err(Error::new(at + 4, RELOC, kind));
            } else {
                Target::Internal {
                    object: segment,
                    offset: b.into(),
                }
            }
        }
        1 => Target::ImportOrdinal {
            module: module(a)?,
            ordinal: b.into(),
        },
        2 => {
            let at_name = hoff + u64::from(h.impnames) + u64::from(b);
            let (name, _) = input.pstring(at_name, "NE imported procedure name")?;
            Target::ImportName {
                module: module(a)?,
                name,
            }
        }
        _ => Target::OsFixup { kind: a },
    };
    let mut f = Fixup {
        record,
        object,
        offset: first.into(),
        kind,
        alias: false,
        target,
        additive: None,
        add_to_site: flags & 4 != 0,
        chained: false,
    };
    let data: &[u8] = seg.pages.first().map_or(&[], |p| &p.data);
    if !ne_chains(&f) {
        let end = u32::from(first) + kind.size();
        if end > seg.virtual_size.max(data.len() as u32) {
            let kind = ErrorKind::OutOfRange {
                value: end.into(),
                limit: seg.virtual_size.into(),
            };
            return Err(Error::new(at + 2, RELOC, kind));
        }
        return Ok(vec![f]);
    }
    // Most chains have one site; the loop check's bitmap (one bit per
    // offset) is made on the second.
    let mut visited: Vec<u64> = Vec::new();
    let mut sites = Vec::new();
    let mut off = usize::from(first);
    loop {
        if sites.len() == 1 {
            visited = vec![0; data.len().div_ceil(64)];
            visit(&mut visited, usize::from(first));
        }
        let seen = off + 2 <= data.len() && !visited.is_empty() && visit(&mut visited, off);
        if off + 2 > data.len() || seen {
            let why = if off + 2 > data.len() {
                "chain leaves the segment data"
            } else {
                "chain loops"
            };
            return Err(Error::new(at + 2, RELOC, ErrorKind::Invalid(why)));
        }
        f.offset = off as u32;
        sites.push(f.clone());
        let next = u16::from_le_bytes([data[off], data[off + 1]]);
        if next == 0xFFFF {
            return Ok(sites);
        }
        off = usize::from(next);
    }
}

/// Mark offset `off` in a bitmap; whether it was marked already.
fn visit(visited: &mut [u64], off: usize) -> bool {
    let (w, bit) = (off / 64, 1u64 << (off % 64));
    let seen = visited[w] & bit != 0;
    visited[w] |= bit;
    seen
}

fn read_resources(
    input: &Bytes<'_>,
    h: &NeHeader,
    hoff: u64,
    objects: &[Object],
) -> Result<Vec<Resource>> {
    const WHAT: &str = "NE resource table";
    if h.nrsrc == 0 || h.target_os == 2 {
        return Ok(Vec::new());
    }
    if h.nrsrc > h.nseg {
        let kind = ErrorKind::TooMany {
            count: h.nrsrc.into(),
            limit: h.nseg.into(),
        };
        return Err(Error::new(hoff + 0x34, "NE header", kind));
    }
    let at = hoff + u64::from(h.rsrctab);
    input.check_count(at, h.nrsrc.into(), 4, WHAT)?;
    let mut out = Vec::new();
    for i in 0..h.nrsrc {
        let e = at + u64::from(i) * 4;
        let object = h.nseg - h.nrsrc + i + 1;
        let size = objects[usize::from(object) - 1]
            .pages
            .first()
            .map_or(0, |p| p.data.len() as u32);
        out.push(Resource {
            type_id: input.u16(e, WHAT)?,
            name_id: input.u16(e + 2, WHAT)?,
            object,
            offset: 0,
            size,
        });
    }
    Ok(out)
}
