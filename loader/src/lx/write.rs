//! Writing a [`Module`] as an LX file.
//!
//! Layout (LINK386's order): stub, header (0xC4 bytes), object table, object
//! page table, resource table, resident names, entry table, fixup page
//! table, fixup records, import module names, import procedure names, data
//! pages (legal, iterated, compressed in logical page order, each on a
//! `1 << page_shift` boundary from the data pages offset), non-resident
//! names, debug information. Iterated pages share the data pages section.

use super::fixups::encode_record;
use super::header::{LX_SIGNATURE, LxHeader};
use crate::bytes::{Output, to_latin1};
use crate::error::WriteError;
use crate::model::*;
use crate::module::record_groups;
use crate::{exepack1, exepack2, stub};

type WResult<T> = Result<T, WriteError>;

/// Writes an LX file.
///
/// # Errors
///
/// A [`WriteError`] when the module cannot be expressed as LX.
pub fn write(module: &Module) -> WResult<Vec<u8>> {
    let mut m = module.clone();
    m.store_chain_words()?;
    let opts = m.lx.clone().unwrap_or_default();
    let ps = opts.page_size;
    if !ps.is_power_of_two() || ps > 0x8000 || opts.page_shift > 16 {
        return Err(WriteError::new(
            "LX header",
            "page size must be a power of two up to 32 KiB",
        ));
    }
    let stub = stub::with_header_pointer(&m.stub)
        .ok_or_else(|| WriteError::new("DOS stub", "shorter than 64 bytes"))?;
    let hoff = stub.len();
    let mut out = Output { buf: stub };
    out.zeros(0xC4);
    let rel = |pos: usize| (pos - hoff) as u32;
    let mut h = LxHeader {
        signature: LX_SIGNATURE,
        cpu: opts.cpu,
        os: opts.os,
        version: opts.version,
        mflags: m.flags,
        page_size: ps,
        page_shift: opts.page_shift,
        heapsize: m.heap_size,
        stacksize: m.stack_size,
        autods: m.auto_data.map_or(0, u32::from),
        ..LxHeader::default()
    };
    if let Some(a) = m.start {
        (h.eip_obj, h.eip) = (a.object.into(), a.offset);
    }
    if let Some(a) = m.stack {
        (h.esp_obj, h.esp) = (a.object.into(), a.offset);
    }

    // Object table.
    h.objtab_off = rel(out.pos());
    h.nobj = m.objects.len() as u32;
    let mut first_page = Vec::new();
    let mut next_page = 1u32;
    for obj in &m.objects {
        if obj.pages.iter().any(|p| p.data.len() > ps as usize) {
            return Err(WriteError::new(
                "LX page",
                "page data longer than the page size",
            ));
        }
        first_page.push(next_page);
        for v in [
            obj.virtual_size,
            obj.base,
            obj.flags,
            next_page,
            obj.pages.len() as u32,
            0,
        ] {
            out.u32(v);
        }
        next_page += obj.pages.len() as u32;
    }
    let npages = (next_page - 1) as usize;
    h.npages = npages as u32;
    h.objmap_off = rel(out.pos());
    let objmap = out.pos();
    out.zeros(npages * 8);

    h.rsrc_off = rel(out.pos());
    h.nrsrc = m.resources.len() as u32;
    for r in &m.resources {
        out.u16(r.type_id);
        out.u16(r.name_id);
        out.u32(r.size);
        out.u16(r.object);
        out.u32(r.offset);
    }
    h.resname_off = rel(out.pos());
    write_names(&mut out, &m.name, &m.resident_names)?;

    let procs = ProcNames::collect(&m)?;
    h.entry_off = rel(out.pos());
    write_entries(&mut out, &m.entries, &procs)?;
    h.loader_size = rel(out.pos()) - h.objtab_off;

    // Fixup section.
    h.fixpage_off = rel(out.pos());
    let fixpage = out.pos();
    out.zeros((npages + 1) * 4);
    h.fixrec_off = rel(out.pos());
    let per_page = encode_fixups(&m, &first_page, &procs)?;
    let mut total = 0u32;
    for (i, recs) in per_page.iter().enumerate() {
        out.put_u32(fixpage + i * 4, total);
        out.bytes(&recs.buf);
        total += recs.buf.len() as u32;
    }
    out.put_u32(fixpage + npages * 4, total);
    h.impmod_off = rel(out.pos());
    h.nimpmod = m.imports.len() as u32;
    for name in &m.imports {
        pstring(&mut out, name, "LX import module name")?;
    }
    h.impproc_off = rel(out.pos());
    out.bytes(&procs.table);
    h.fixup_size = rel(out.pos()) - h.fixpage_off;

    // Data pages.
    let align = 1usize << opts.page_shift;
    out.align(align);
    h.datapages = out.pos() as u32;
    h.itermap_off = h.datapages;
    let mut logical = 0usize;
    for obj in &m.objects {
        for page in &obj.pages {
            let stored = match page.kind {
                PageKind::Legal | PageKind::Range => page.data.clone(),
                PageKind::Iterated => exepack1::encode(&page.data, ps as usize / 2),
                PageKind::Compressed => exepack2::encode(&page.data),
                PageKind::Invalid | PageKind::Zeroed => Vec::new(),
            };
            if stored.len() > 0xFFFF {
                return Err(WriteError::new("LX page", "stored page larger than 64 KiB"));
            }
            let (offset, size) =
                if stored.is_empty() && !matches!(page.kind, PageKind::Legal | PageKind::Range) {
                    (0, 0)
                } else {
                    out.align(align);
                    let off = ((out.pos() - h.datapages as usize) >> opts.page_shift) as u32;
                    out.bytes(&stored);
                    (off, stored.len() as u16)
                };
            let e = objmap + logical * 8;
            out.put_u32(e, offset);
            out.put_u16(e + 4, size);
            out.put_u16(e + 6, page_flags(page.kind));
            logical += 1;
        }
    }
    if let Some(desc) = &m.description {
        h.nonres_off = out.pos() as u32;
        write_names(&mut out, desc, &m.nonresident_names)?;
        h.nonres_len = out.pos() as u32 - h.nonres_off;
    }
    if !opts.debug_info.is_empty() {
        h.debug_off = out.pos() as u32;
        h.debug_len = opts.debug_info.len() as u32;
        out.bytes(&opts.debug_info);
    }
    out.buf[hoff..hoff + 0xB0].copy_from_slice(&h.to_bytes());
    Ok(out.buf)
}

fn page_flags(kind: PageKind) -> u16 {
    match kind {
        PageKind::Legal => 0,
        PageKind::Iterated => 1,
        PageKind::Invalid => 2,
        PageKind::Zeroed => 3,
        PageKind::Range => 4,
        PageKind::Compressed => 5,
    }
}

pub(crate) fn pstring(out: &mut Output, s: &str, what: &'static str) -> WResult<()> {
    let bytes =
        to_latin1(s).ok_or_else(|| WriteError::new(what, format!("{s:?} is not Latin-1")))?;
    let len =
        u8::try_from(bytes.len()).map_err(|_| WriteError::new(what, "longer than 255 bytes"))?;
    out.u8(len);
    out.bytes(&bytes);
    Ok(())
}

/// A name table: the first name with ordinal 0 (left out when it is
/// empty and names follow), the names, a zero byte.
pub(crate) fn write_names(out: &mut Output, first: &str, names: &[Name]) -> WResult<()> {
    // An empty first name with names after it: the table is the names
    // alone (as LINK386 writes a non-resident table with no
    // description), which reads back the same.
    let named = !first.is_empty() || names.is_empty();
    if named {
        pstring(out, first, "name table")?;
        out.u16(0);
    } else if names[0].ordinal == 0 {
        return Err(WriteError::new(
            "name table",
            "with no first name, the first name's ordinal cannot be 0",
        ));
    }
    for n in names {
        if n.name.is_empty() {
            return Err(WriteError::new("name table", "empty names end the table"));
        }
        pstring(out, &n.name, "name table")?;
        out.u16(n.ordinal);
    }
    out.u8(0);
    Ok(())
}

/// The import procedure name table: a null entry, then each name once.
struct ProcNames {
    table: Vec<u8>,
    offsets: Vec<(String, u32)>,
}

impl ProcNames {
    fn collect(m: &Module) -> WResult<Self> {
        let mut p = ProcNames {
            table: vec![0],
            offsets: Vec::new(),
        };
        let names = m.fixups.iter().filter_map(|f| match &f.target {
            Target::ImportName { name, .. } => Some(name),
            _ => None,
        });
        let forwards = m.entries.iter().filter_map(|e| match &e.point {
            EntryPoint::Forwarder {
                target: ForwardTarget::Name(name),
                ..
            } => Some(name),
            _ => None,
        });
        for name in names.chain(forwards) {
            if p.offsets.iter().any(|(n, _)| n == name) {
                continue;
            }
            let bytes = to_latin1(name).filter(|b| b.len() < 0x80);
            let bytes = bytes
                .ok_or_else(|| WriteError::new("LX import procedure name", format!("{name:?}")))?;
            p.offsets.push((name.clone(), p.table.len() as u32));
            p.table.push(bytes.len() as u8);
            p.table.extend_from_slice(&bytes);
        }
        Ok(p)
    }

    fn offset(&self, name: &str) -> u32 {
        self.offsets
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0, |(_, o)| *o)
    }
}

fn bundle_type(p: &EntryPoint) -> WResult<(u8, u16)> {
    Ok(match *p {
        EntryPoint::Entry16 { object, .. } => (1, object),
        EntryPoint::CallGate { object, .. } => (2, object),
        EntryPoint::Entry32 { object, .. } => (3, object),
        EntryPoint::Forwarder { .. } => (4, 0),
        _ => {
            return Err(WriteError::new(
                "LX entry table",
                "NE entry in an LX module",
            ));
        }
    })
}

fn write_entries(out: &mut Output, entries: &[Entry], procs: &ProcNames) -> WResult<()> {
    let mut next = 1u32;
    let mut i = 0;
    while i < entries.len() {
        let ordinal = u32::from(entries[i].ordinal);
        if ordinal < next {
            return Err(WriteError::new(
                "LX entry table",
                "entries must have ascending ordinals from 1",
            ));
        }
        while ordinal > next {
            let skip = (ordinal - next).min(255);
            out.u8(skip as u8);
            out.u8(0);
            next += skip;
        }
        let key = bundle_type(&entries[i].point)?;
        let mut j = i;
        while j < entries.len()
            && j - i < 255
            && u32::from(entries[j].ordinal) == ordinal + (j - i) as u32
            && bundle_type(&entries[j].point)? == key
        {
            j += 1;
        }
        out.u8((j - i) as u8);
        out.u8(key.0);
        out.u16(key.1);
        for e in &entries[i..j] {
            match &e.point {
                EntryPoint::Entry16 { offset, .. } => {
                    out.u8(e.flags);
                    out.u16(*offset);
                }
                EntryPoint::CallGate {
                    offset, callgate, ..
                } => {
                    out.u8(e.flags);
                    out.u16(*offset);
                    out.u16(*callgate);
                }
                EntryPoint::Entry32 { offset, .. } => {
                    out.u8(e.flags);
                    out.u32(*offset);
                }
                EntryPoint::Forwarder { module, target } => {
                    let (bit, value) = match target {
                        ForwardTarget::Ordinal(o) => (1, *o),
                        ForwardTarget::Name(n) => (0, procs.offset(n)),
                    };
                    out.u8((e.flags & !1) | bit);
                    out.u16(*module);
                    out.u32(value);
                }
                _ => unreachable_entry()?,
            }
        }
        next = ordinal + (j - i) as u32;
        i = j;
    }
    out.u8(0);
    Ok(())
}

fn unreachable_entry() -> WResult<()> {
    Err(WriteError::new(
        "LX entry table",
        "NE entry in an LX module",
    ))
}

/// Fixup records for each logical page.
fn encode_fixups(m: &Module, first_page: &[u32], procs: &ProcNames) -> WResult<Vec<Output>> {
    const WHAT: &str = "LX fixup record";
    let ps = m.page_size();
    let npages: usize = m.objects.iter().map(|o| o.pages.len()).sum();
    let mut pages: Vec<Output> = (0..npages).map(|_| Output::default()).collect();
    let name_offset = |n: &str| procs.offset(n);
    for range in record_groups(&m.fixups) {
        let group = &m.fixups[range];
        let f = &group[0];
        let Some(obj) = m.object(f.object) else {
            return Err(WriteError::new(
                WHAT,
                format!("source object {} does not exist", f.object),
            ));
        };
        let sites = if f.chained { &group[..1] } else { group };
        // The record goes in the page of its last site; earlier sites may
        // start up to size-1 bytes before that page (fixups crossing into it).
        let k = sites.iter().map(|s| s.offset).max().unwrap_or(0) / ps;
        if k as usize >= obj.pages.len() {
            return Err(WriteError::new(
                WHAT,
                "source offset beyond the object's pages",
            ));
        }
        let logical = (first_page[usize::from(f.object) - 1] + k - 1) as usize;
        let mut rels = Vec::new();
        for s in sites {
            let rel = i64::from(s.offset) - i64::from(k * ps);
            if s.object != f.object || rel + i64::from(s.kind.size()) <= 0 || rel > 0x7FFF {
                return Err(WriteError::new(
                    WHAT,
                    "the sites of one record must lie in one page",
                ));
            }
            if !f.chained
                && (s.kind != f.kind
                    || s.target != f.target
                    || s.additive != f.additive
                    || s.alias != f.alias)
            {
                return Err(WriteError::new(
                    WHAT,
                    "the sites of one record must share kind and target",
                ));
            }
            rels.push(rel as i16);
        }
        encode_record(&mut pages[logical], f, &rels, f.chained, &name_offset)?;
        // A site that runs into the next page is repeated there.
        for (s, &rel) in sites.iter().zip(&rels) {
            let end = i32::from(rel) + s.kind.size() as i32;
            if !f.chained && rel >= 0 && end > ps as i32 && (k as usize + 1) < obj.pages.len() {
                let back = i32::from(rel) - ps as i32;
                encode_record(
                    &mut pages[logical + 1],
                    s,
                    &[back as i16],
                    false,
                    &name_offset,
                )?;
            }
        }
    }
    Ok(pages)
}
