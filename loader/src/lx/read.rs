//! Reading an LX file into a [`Module`].

use super::fixups::{self, FixupContext};
use super::header::{LX_HEADER_SIZE, LxHeader};
use super::{LxFile, PageEntry};
use crate::bytes::Bytes;
use crate::error::{Error, ErrorKind, Result};
use crate::model::*;
use crate::{Format, exepack1, exepack2, stub};

/// The largest object virtual size accepted (the OS/2 user address space).
pub const MAX_VIRTUAL_SIZE: u32 = 0x2000_0000;

/// Reads an LX file.
///
/// # Errors
///
/// An [`Error`] naming the file offset and the structure for anything
/// malformed: truncated tables, overlapping tables, counts larger than the
/// file, page data past its end, undecodable EXEPACK1/EXEPACK2 pages,
/// fixups outside their page or with undefined flags.
pub fn read(data: &[u8]) -> Result<LxFile> {
    let input = Bytes::new(data);
    let hoff = stub::new_header_offset(data)?;
    let h = LxHeader::parse(data, hoff)?;
    let rel = |off: u32| hoff + u64::from(off);

    check_overlaps(&input, hoff, &h)?;
    let pages = read_page_table(&input, &h, rel(h.objmap_off))?;
    let decoded = decode_pages(&input, &h, &pages, rel(h.objmap_off))?;
    let (objects, page_owner) = read_objects(&input, &h, rel(h.objtab_off), &pages, &decoded)?;

    let (name, resident_names) =
        read_names(&input, rel(h.resname_off), h.resname_off != 0, u64::MAX)?;
    let imports = read_import_modules(&input, rel(h.impmod_off), h.nimpmod)?;
    let impproc = rel(h.impproc_off);
    let entries = if h.entry_off != 0 {
        read_entries(&input, rel(h.entry_off), impproc)?
    } else {
        Vec::new()
    };
    let (description, nonresident_names) = if h.nonres_off != 0 && h.nonres_len != 0 {
        let end = u64::from(h.nonres_off) + u64::from(h.nonres_len);
        let (d, n) = read_names(&input, h.nonres_off.into(), true, end)?;
        (Some(d), n)
    } else {
        (None, Vec::new())
    };

    let ctx = FixupContext {
        input: &input,
        page_size: h.page_size,
        nobj: h.nobj,
        nimpmod: h.nimpmod,
        impproc,
        page_owner: &page_owner,
    };
    let (fixups, fixup_records) = if h.fixpage_off != 0 {
        fixups::read(&ctx, rel(h.fixpage_off), rel(h.fixrec_off), &objects)?
    } else {
        (Vec::new(), vec![0; pages.len()])
    };
    let resources = read_resources(&input, rel(h.rsrc_off), h.nrsrc, h.nobj)?;
    let debug_info = if h.debug_off != 0 && h.debug_len != 0 {
        input
            .slice(
                h.debug_off.into(),
                h.debug_len.into(),
                "LX debug information",
            )?
            .to_vec()
    } else {
        Vec::new()
    };

    let address = |obj: u32, off: u32, field: u64| -> Result<Option<Address>> {
        if obj == 0 {
            return Ok(None);
        }
        check_object(obj, h.nobj, hoff + field, "LX header")?;
        Ok(Some(Address {
            object: obj as u16,
            offset: off,
        }))
    };
    let module = Module {
        format: Format::Lx,
        stub: data[..hoff as usize].to_vec(),
        name,
        description,
        flags: h.mflags,
        objects,
        entries,
        resident_names,
        nonresident_names,
        imports,
        fixups,
        start: address(h.eip_obj, h.eip, 0x18)?,
        stack: address(h.esp_obj, h.esp, 0x20)?,
        auto_data: match h.autods {
            0 => None,
            n => {
                check_object(n, h.nobj, hoff + 0x94, "LX header")?;
                Some(n as u16)
            }
        },
        heap_size: h.heapsize,
        stack_size: h.stacksize,
        resources,
        lx: Some(LxOptions {
            cpu: h.cpu,
            os: h.os,
            version: h.version,
            page_size: h.page_size,
            page_shift: h.page_shift,
            debug_info,
        }),
        ne: None,
    };
    Ok(LxFile {
        header_offset: hoff,
        header: h,
        pages,
        fixup_records,
        module,
    })
}

pub(super) fn check_object(obj: u32, nobj: u32, at: u64, what: &'static str) -> Result<()> {
    if obj == 0 || obj > nobj || obj > u32::from(u16::MAX) {
        return Err(Error::new(
            at,
            what,
            ErrorKind::OutOfRange {
                value: obj.into(),
                limit: nobj.into(),
            },
        ));
    }
    Ok(())
}

/// Rejects headers whose fixed-size tables overlap each other or the header.
fn check_overlaps(input: &Bytes<'_>, hoff: u64, h: &LxHeader) -> Result<()> {
    if h.nobj != 0 && h.objtab_off == 0 {
        return Err(Error::new(
            hoff + 0x40,
            "LX header",
            ErrorKind::Invalid("objects but no object table"),
        ));
    }
    if h.npages != 0 && h.objmap_off == 0 {
        return Err(Error::new(
            hoff + 0x48,
            "LX header",
            ErrorKind::Invalid("pages but no object page table"),
        ));
    }
    input.check_count(
        hoff + u64::from(h.objtab_off),
        h.nobj.into(),
        24,
        "LX object table",
    )?;
    input.check_count(
        hoff + u64::from(h.objmap_off),
        h.npages.into(),
        8,
        "LX object page table",
    )?;
    let mut tables: Vec<(&'static str, u64, u64)> = vec![("LX header", hoff, LX_HEADER_SIZE)];
    let mut add = |name, off: u32, len: u64| {
        if off != 0 && len != 0 {
            tables.push((name, hoff + u64::from(off), len));
        }
    };
    add("LX object table", h.objtab_off, u64::from(h.nobj) * 24);
    add(
        "LX object page table",
        h.objmap_off,
        u64::from(h.npages) * 8,
    );
    add("LX resource table", h.rsrc_off, u64::from(h.nrsrc) * 14);
    if h.fixpage_off != 0 {
        add(
            "LX fixup page table",
            h.fixpage_off,
            (u64::from(h.npages) + 1) * 4,
        );
    }
    for (i, a) in tables.iter().enumerate() {
        for b in &tables[..i] {
            if a.1 < b.1 + b.2 && b.1 < a.1 + a.2 {
                return Err(Error::new(a.1, a.0, ErrorKind::Overlap(b.0)));
            }
        }
    }
    Ok(())
}

fn read_page_table(input: &Bytes<'_>, h: &LxHeader, at: u64) -> Result<Vec<PageEntry>> {
    const WHAT: &str = "LX object page table entry";
    let mut pages = Vec::new();
    for i in 0..u64::from(h.npages) {
        let e = at + i * 8;
        let off = input.u32(e, WHAT)?;
        let data_size = input.u16(e + 4, WHAT)?;
        let flags = input.u16(e + 6, WHAT)?;
        let kind = match flags {
            0 => PageKind::Legal,
            1 => PageKind::Iterated,
            2 => PageKind::Invalid,
            3 => PageKind::Zeroed,
            4 => PageKind::Range,
            5 => PageKind::Compressed,
            other => {
                return Err(Error::new(
                    e + 6,
                    WHAT,
                    ErrorKind::UnknownType(other.into()),
                ));
            }
        };
        let shifted = u64::from(off) << h.page_shift;
        let file_offset = match kind {
            PageKind::Iterated if h.itermap_off != 0 => u64::from(h.itermap_off) + shifted,
            PageKind::Invalid | PageKind::Zeroed => 0,
            _ => u64::from(h.datapages) + shifted,
        };
        let stored = !matches!(kind, PageKind::Invalid | PageKind::Zeroed);
        if stored && file_offset + u64::from(data_size) > input.len() {
            let kind = ErrorKind::OutOfRange {
                value: file_offset + u64::from(data_size),
                limit: input.len(),
            };
            return Err(Error::new(e, WHAT, kind));
        }
        pages.push(PageEntry {
            file_offset,
            data_size: if stored { data_size } else { 0 },
            kind,
        });
    }
    Ok(pages)
}

fn decode_pages(
    input: &Bytes<'_>,
    h: &LxHeader,
    pages: &[PageEntry],
    at: u64,
) -> Result<Vec<Vec<u8>>> {
    let limit = h.page_size as usize;
    let mut out = Vec::new();
    for (i, p) in pages.iter().enumerate() {
        let raw = input.slice(p.file_offset, p.data_size.into(), "LX page data")?;
        let data = match p.kind {
            PageKind::Legal | PageKind::Range => {
                if raw.len() > limit {
                    let kind = ErrorKind::OutOfRange {
                        value: raw.len() as u64,
                        limit: limit as u64,
                    };
                    return Err(Error::new(
                        at + i as u64 * 8 + 4,
                        "LX object page table entry",
                        kind,
                    ));
                }
                raw.to_vec()
            }
            PageKind::Iterated => exepack1::decode(raw, p.file_offset, limit)?,
            PageKind::Compressed => exepack2::decode(raw, p.file_offset, limit)?,
            PageKind::Invalid | PageKind::Zeroed => Vec::new(),
        };
        out.push(data);
    }
    Ok(out)
}

/// For each logical page: owning object number and page index in it.
type PageOwners = Vec<Option<(u16, u32)>>;

/// Reads the object table. Returns the objects and, for each logical page,
/// its owning (object number, page index within the object).
fn read_objects(
    input: &Bytes<'_>,
    h: &LxHeader,
    at: u64,
    entries: &[PageEntry],
    decoded: &[Vec<u8>],
) -> Result<(Vec<Object>, PageOwners)> {
    const WHAT: &str = "LX object table entry";
    let mut objects = Vec::new();
    let mut owner = vec![None; decoded.len()];
    for i in 0..u64::from(h.nobj) {
        let e = at + i * 24;
        let virtual_size = input.u32(e, WHAT)?;
        let base = input.u32(e + 4, WHAT)?;
        let flags = input.u32(e + 8, WHAT)?;
        let first = input.u32(e + 12, WHAT)?;
        let count = input.u32(e + 16, WHAT)?;
        if virtual_size > MAX_VIRTUAL_SIZE {
            let kind = ErrorKind::OutOfRange {
                value: virtual_size.into(),
                limit: MAX_VIRTUAL_SIZE.into(),
            };
            return Err(Error::new(e, WHAT, kind));
        }
        let mut pages = Vec::new();
        if count != 0 {
            let end = u64::from(first) + u64::from(count) - 1;
            if first == 0 || end > decoded.len() as u64 {
                let kind = ErrorKind::OutOfRange {
                    value: end,
                    limit: decoded.len() as u64,
                };
                return Err(Error::new(e + 12, WHAT, kind));
            }
            for (k, page) in (first as usize - 1..end as usize).enumerate() {
                pages.push(Page {
                    kind: entries[page].kind,
                    data: decoded[page].clone(),
                });
                if owner[page].is_none() {
                    owner[page] = Some((i as u16 + 1, k as u32));
                }
            }
        }
        objects.push(Object {
            flags,
            base,
            virtual_size,
            pages,
        });
    }
    Ok((objects, owner))
}

/// Reads a name table: the first name and the (name, ordinal) pairs after
/// it. Stops at a zero length byte or at `end`. A first entry whose
/// ordinal is not 0 is a name, and the first name is then empty.
pub(crate) fn read_names(
    input: &Bytes<'_>,
    at: u64,
    present: bool,
    end: u64,
) -> Result<(String, Vec<Name>)> {
    const WHAT: &str = "name table entry";
    if !present {
        return Ok((String::new(), Vec::new()));
    }
    let mut first = None;
    let mut names = Vec::new();
    let mut pos = at;
    while pos < end {
        let len = input.u8(pos, WHAT)?;
        if len == 0 {
            break;
        }
        let (name, next) = input.pstring(pos, WHAT)?;
        let ordinal = input.u16(next, WHAT)?;
        // The first entry is the module name or description (ordinal 0);
        // LINK386 writes a non-resident table without a DESCRIPTION
        // statement as the names alone, the first one with its ordinal.
        if first.is_none() && ordinal == 0 {
            first = Some(name);
        } else {
            first.get_or_insert_with(String::new);
            names.push(Name { name, ordinal });
        }
        pos = next + 2;
    }
    Ok((first.unwrap_or_default(), names))
}

fn read_import_modules(input: &Bytes<'_>, at: u64, count: u32) -> Result<Vec<String>> {
    input.check_count(at, count.into(), 1, "LX import module name table")?;
    let mut names = Vec::new();
    let mut pos = at;
    for _ in 0..count {
        let (name, next) = input.pstring(pos, "LX import module name table")?;
        names.push(name);
        pos = next;
    }
    Ok(names)
}

/// A name in the import procedure name table (bit 7 of the length byte is
/// the overload flag, not part of the length).
pub(super) fn import_proc_name(input: &Bytes<'_>, table: u64, offset: u64) -> Result<String> {
    const WHAT: &str = "LX import procedure name";
    let at = table + offset;
    let len = input.u8(at, WHAT)? & 0x7F;
    Ok(crate::bytes::latin1(input.slice(
        at + 1,
        len.into(),
        WHAT,
    )?))
}

fn read_entries(input: &Bytes<'_>, at: u64, impproc: u64) -> Result<Vec<Entry>> {
    const WHAT: &str = "LX entry table bundle";
    let mut entries = Vec::new();
    let mut ordinal: u32 = 1;
    let mut pos = at;
    loop {
        let count = input.u8(pos, WHAT)?;
        if count == 0 {
            break;
        }
        let kind = input.u8(pos + 1, WHAT)? & 0x7F;
        if ordinal + u32::from(count) - 1 > u32::from(u16::MAX) {
            let kind = ErrorKind::OutOfRange {
                value: (ordinal + u32::from(count)).into(),
                limit: 0xFFFF,
            };
            return Err(Error::new(pos, WHAT, kind));
        }
        if kind == 0 {
            ordinal += u32::from(count);
            pos += 2;
            continue;
        }
        let object = input.u16(pos + 2, WHAT)?;
        pos += 4;
        for _ in 0..count {
            let flags = input.u8(pos, "LX entry")?;
            let (point, size) = match kind {
                1 => (
                    EntryPoint::Entry16 {
                        object,
                        offset: input.u16(pos + 1, "LX entry")?,
                    },
                    3,
                ),
                2 => {
                    let offset = input.u16(pos + 1, "LX entry")?;
                    let callgate = input.u16(pos + 3, "LX entry")?;
                    (
                        EntryPoint::CallGate {
                            object,
                            offset,
                            callgate,
                        },
                        5,
                    )
                }
                3 => (
                    EntryPoint::Entry32 {
                        object,
                        offset: input.u32(pos + 1, "LX entry")?,
                    },
                    5,
                ),
                4 => {
                    let module = input.u16(pos + 1, "LX forwarder entry")?;
                    let value = input.u32(pos + 3, "LX forwarder entry")?;
                    let target = if flags & 1 != 0 {
                        ForwardTarget::Ordinal(value)
                    } else {
                        ForwardTarget::Name(import_proc_name(input, impproc, value.into())?)
                    };
                    (EntryPoint::Forwarder { module, target }, 7)
                }
                other => {
                    return Err(Error::new(
                        pos - 3,
                        WHAT,
                        ErrorKind::UnknownType(other.into()),
                    ));
                }
            };
            entries.push(Entry {
                ordinal: ordinal as u16,
                flags,
                point,
            });
            ordinal += 1;
            pos += size;
        }
    }
    Ok(entries)
}

fn read_resources(input: &Bytes<'_>, at: u64, count: u32, nobj: u32) -> Result<Vec<Resource>> {
    const WHAT: &str = "LX resource table entry";
    if count == 0 {
        return Ok(Vec::new());
    }
    input.check_count(at, count.into(), 14, WHAT)?;
    let mut out = Vec::new();
    for i in 0..u64::from(count) {
        let e = at + i * 14;
        let object = input.u16(e + 8, WHAT)?;
        check_object(object.into(), nobj, e + 8, WHAT)?;
        out.push(Resource {
            type_id: input.u16(e, WHAT)?,
            name_id: input.u16(e + 2, WHAT)?,
            size: input.u32(e + 4, WHAT)?,
            object,
            offset: input.u32(e + 10, WHAT)?,
        });
    }
    Ok(out)
}
