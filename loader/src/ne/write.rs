//! Writing a [`Module`] as an NE file.
//!
//! Layout: stub, header, segment table, resource table (OS/2 style), resident
//! names, module reference table, imported names (a null entry, module
//! names, then procedure names), entry table, non-resident names, then each
//! segment's data on a `1 << align_shift` boundary followed by its
//! relocation records.

use super::header::{NE_SIGNATURE, NeHeader};
use crate::bytes::{Output, to_latin1};
use crate::error::WriteError;
use crate::lx::write_names_pub as write_names;
use crate::model::*;
use crate::module::{ne_chains, record_groups};
use crate::{exepack1, stub};

type WResult<T> = Result<T, WriteError>;

/// Writes an NE file.
///
/// # Errors
///
/// A [`WriteError`] when the module cannot be expressed as NE (values
/// above 16 bits, segments over 64 KiB, LX-only fixups or entries).
pub fn write(module: &Module) -> WResult<Vec<u8>> {
    let mut m = module.clone();
    m.store_chain_words()?;
    let opts = m.ne.clone().unwrap_or_default();
    let small = |v: u32, what: &'static str| {
        u16::try_from(v).map_err(|_| WriteError::new(what, "above 0xFFFF"))
    };
    let stub = stub::with_header_pointer(&m.stub)
        .ok_or_else(|| WriteError::new("DOS stub", "shorter than 64 bytes"))?;
    let hoff = stub.len();
    let mut out = Output { buf: stub };
    out.zeros(0x40);
    let rel = |pos: usize| small((pos - hoff) as u32, "NE table offset");
    let nseg = small(m.objects.len() as u32, "NE segment table")?;
    let shift = if opts.align_shift == 0 {
        9
    } else {
        opts.align_shift
    };
    let mut h = NeHeader {
        signature: NE_SIGNATURE,
        linker_version: opts.linker.0,
        linker_revision: opts.linker.1,
        flags: small(m.flags, "NE flags")?,
        autods: m.auto_data.unwrap_or(0),
        heap: small(m.heap_size, "NE heap size")?,
        stack: small(m.stack_size, "NE stack size")?,
        nseg,
        nmod: small(m.imports.len() as u32, "NE module reference table")?,
        align: opts.align_shift,
        nrsrc: small(m.resources.len() as u32, "NE resource table")?,
        target_os: opts.target_os,
        tail: opts.tail,
        ..NeHeader::default()
    };
    if let Some(a) = m.start {
        (h.cs, h.ip) = (a.object, small(a.offset, "NE CS:IP")?);
    }
    if let Some(a) = m.stack {
        (h.ss, h.sp) = (a.object, small(a.offset, "NE SS:SP")?);
    }

    h.segtab = rel(out.pos())?;
    let segtab = out.pos();
    out.zeros(m.objects.len() * 8);
    h.rsrctab = rel(out.pos())?;
    for (i, r) in m.resources.iter().enumerate() {
        if usize::from(r.object) != m.objects.len() - m.resources.len() + i + 1 || r.offset != 0 {
            return Err(WriteError::new(
                "NE resource table",
                "OS/2 resources must be the last segments, in order",
            ));
        }
        out.u16(r.type_id);
        out.u16(r.name_id);
    }
    h.resname = rel(out.pos())?;
    write_names(&mut out, &m.name, &m.resident_names)?;

    // Imported names: null entry, modules, procedures.
    let mut impnames = Output::default();
    impnames.u8(0);
    let mut module_offsets = Vec::new();
    for name in &m.imports {
        module_offsets.push(impnames.pos() as u16);
        crate::lx::pstring_pub(&mut impnames, name, "NE imported name")?;
    }
    let mut procs: Vec<(String, u16)> = Vec::new();
    for f in &m.fixups {
        if let Target::ImportName { name, .. } = &f.target
            && !procs.iter().any(|(n, _)| n == name)
        {
            procs.push((
                name.clone(),
                small(impnames.pos() as u32, "NE imported names")?,
            ));
            crate::lx::pstring_pub(&mut impnames, name, "NE imported name")?;
        }
    }
    h.modref = rel(out.pos())?;
    for off in module_offsets {
        out.u16(off);
    }
    h.impnames = rel(out.pos())?;
    out.bytes(&impnames.buf);
    h.entry_off = rel(out.pos())?;
    let entry_start = out.pos();
    h.nmovable = write_entries(&mut out, &m.entries)?;
    h.entry_len = small((out.pos() - entry_start) as u32, "NE entry table")?;
    if let Some(desc) = &m.description {
        h.nonres_off = out.pos() as u32;
        write_names(&mut out, desc, &m.nonresident_names)?;
        h.nonres_len = small(out.pos() as u32 - h.nonres_off, "NE non-resident names")?;
    }

    let groups = record_groups(&m.fixups);
    for (i, obj) in m.objects.iter().enumerate() {
        let number = i as u16 + 1;
        let relocs: Vec<_> = groups
            .iter()
            .filter(|g| m.fixups[g.start].object == number)
            .cloned()
            .collect();
        let mut flags = obj.flags & !(NE_SEG_ITERATED | NE_SEG_RELOCINFO);
        let (mut sector, mut length) = (0u16, 0u16);
        if let Some(page) = obj.pages.first() {
            let stored = match page.kind {
                PageKind::Legal => page.data.clone(),
                PageKind::Iterated => {
                    flags |= NE_SEG_ITERATED;
                    exepack1::encode(&page.data, 0xFFFF)
                }
                _ => {
                    return Err(WriteError::new(
                        "NE segment",
                        "only legal or iterated segment data",
                    ));
                }
            };
            if stored.len() > 0x10000 || obj.pages.len() > 1 {
                return Err(WriteError::new(
                    "NE segment",
                    "segment data larger than 64 KiB",
                ));
            }
            out.align(1 << shift);
            sector = small((out.pos() >> shift) as u32, "NE segment sector")?;
            length = stored.len() as u16; // 65536 is stored as 0
            if stored.is_empty() {
                return Err(WriteError::new(
                    "NE segment",
                    "empty data block (use no page)",
                ));
            }
            out.bytes(&stored);
            if !relocs.is_empty() {
                flags |= NE_SEG_RELOCINFO;
                out.u16(small(relocs.len() as u32, "NE relocation count")?);
                for g in &relocs {
                    write_reloc(&mut out, &m.fixups[g.clone()], &procs, &m.imports)?;
                }
            }
        } else if !relocs.is_empty() {
            return Err(WriteError::new(
                "NE relocation",
                "segment without data cannot have relocations",
            ));
        }
        let e = segtab + i * 8;
        out.put_u16(e, sector);
        out.put_u16(e + 2, length);
        out.put_u16(e + 4, small(flags, "NE segment flags")?);
        let min_alloc = if obj.virtual_size == 0x10000 {
            0
        } else {
            small(obj.virtual_size, "NE minimum allocation")?
        };
        out.put_u16(e + 6, min_alloc);
    }
    out.buf[hoff..hoff + 0x40].copy_from_slice(&h.to_bytes());
    Ok(out.buf)
}

fn write_entries(out: &mut Output, entries: &[Entry]) -> WResult<u16> {
    const WHAT: &str = "NE entry table";
    let mut movable = 0u16;
    let mut next = 1u32;
    let mut i = 0;
    let key = |e: &Entry| match e.point {
        EntryPoint::NeFixed { segment, .. } => Ok(segment),
        EntryPoint::NeMovable { .. } => Ok(0xFF),
        _ => Err(WriteError::new(WHAT, "LX entry in an NE module")),
    };
    while i < entries.len() {
        let ordinal = u32::from(entries[i].ordinal);
        if ordinal < next {
            return Err(WriteError::new(
                WHAT,
                "entries must have ascending ordinals from 1",
            ));
        }
        while ordinal > next {
            let skip = (ordinal - next).min(255);
            out.u8(skip as u8);
            out.u8(0);
            next += skip;
        }
        let k = key(&entries[i])?;
        if k == 0 {
            return Err(WriteError::new(WHAT, "segment 0"));
        }
        let mut j = i;
        while j < entries.len()
            && j - i < 255
            && u32::from(entries[j].ordinal) == ordinal + (j - i) as u32
            && key(&entries[j])? == k
        {
            j += 1;
        }
        out.u8((j - i) as u8);
        out.u8(k);
        for e in &entries[i..j] {
            out.u8(e.flags);
            match e.point {
                EntryPoint::NeMovable { segment, offset } => {
                    out.bytes(&[0xCD, 0x3F, segment]);
                    out.u16(offset);
                    movable += 1;
                }
                EntryPoint::NeFixed { offset, .. } => out.u16(offset),
                _ => {}
            }
        }
        next = ordinal + (j - i) as u32;
        i = j;
    }
    out.u8(0);
    Ok(movable)
}

fn write_reloc(
    out: &mut Output,
    group: &[Fixup],
    procs: &[(String, u16)],
    imports: &[String],
) -> WResult<()> {
    const WHAT: &str = "NE relocation record";
    let f = &group[0];
    if group.len() > 1 && !ne_chains(f) {
        return Err(WriteError::new(
            WHAT,
            "only non-additive relocations can have several sites",
        ));
    }
    if group
        .iter()
        .any(|s| s.kind != f.kind || s.target != f.target || s.add_to_site != f.add_to_site)
    {
        return Err(WriteError::new(
            WHAT,
            "the sites of one record must share kind and target",
        ));
    }
    if f.additive.is_some() || f.alias || f.chained {
        return Err(WriteError::new(WHAT, "LX-only fixup fields set"));
    }
    let src = match f.kind {
        SourceKind::Byte => 0,
        SourceKind::Sel16 => 2,
        SourceKind::Ptr1616 => 3,
        SourceKind::Off16 => 5,
        SourceKind::Ptr1632 => 0x0B,
        SourceKind::Off32 => 0x0D,
        SourceKind::Rel32 => {
            return Err(WriteError::new(
                WHAT,
                "self-relative fixups exist only in LX",
            ));
        }
    };
    let module_ok = |m: u16| {
        if m == 0 || usize::from(m) > imports.len() {
            Err(WriteError::new(WHAT, "bad module"))
        } else {
            Ok(m)
        }
    };
    let (kind, a, b) = match &f.target {
        Target::Internal { object, offset } => {
            let seg = u8::try_from(*object).ok().filter(|&s| s != 0 && s != 0xFF);
            let seg = seg.ok_or_else(|| WriteError::new(WHAT, "segment number above 254"))?;
            (
                0,
                u16::from(seg),
                u16::try_from(*offset).map_err(|_| WriteError::new(WHAT, "offset above 0xFFFF"))?,
            )
        }
        Target::InternalEntry { ordinal } => (0, 0xFF, *ordinal),
        Target::ImportOrdinal { module, ordinal } => (
            1,
            module_ok(*module)?,
            u16::try_from(*ordinal).map_err(|_| WriteError::new(WHAT, "ordinal above 0xFFFF"))?,
        ),
        Target::ImportName { module, name } => (
            2,
            module_ok(*module)?,
            procs.iter().find(|(n, _)| n == name).map_or(0, |(_, o)| *o),
        ),
        Target::OsFixup { kind } => (3, *kind, 0),
    };
    if f.offset > 0xFFFF {
        return Err(WriteError::new(WHAT, "site above 0xFFFF"));
    }
    let _ = to_latin1;
    out.u8(src);
    out.u8(kind | if f.add_to_site { 4 } else { 0 });
    out.u16(f.offset as u16);
    out.u16(a);
    out.u16(b);
    Ok(())
}
