//! Bad input gives an error naming the offset and the structure: the
//! issue's list (truncated files, overlapping tables, page offsets past the
//! end, fixups outside their page, malformed EXEPACK2 streams, unknown fixup
//! flags, absurd counts), each made from a real sample or a written module.

use loader::*;

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/samples");

fn hello() -> Vec<u8> {
    std::fs::read(format!("{SAMPLES}/lx/hello.exe")).unwrap()
}

fn put32(data: &mut [u8], at: usize, v: u32) {
    data[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

const LX: usize = 0x80; // hello.exe's LX header

#[test]
fn four_billion_objects_is_an_error_not_an_allocation() {
    let mut d = hello();
    put32(&mut d, LX + 0x44, 0xFFFF_FFFF);
    let e = parse(&d).unwrap_err();
    assert_eq!(e.structure, "LX object table");
    assert_eq!(e.offset, (LX + 196) as u64);
    assert!(
        matches!(
            e.kind,
            ErrorKind::TooMany {
                count: 0xFFFF_FFFF,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn truncated_file() {
    let d = hello();
    let e = parse(&d[..0x100]).unwrap_err();
    assert_eq!((e.structure, e.offset), ("LX header", 0x80));
    assert_eq!(e.kind, ErrorKind::Truncated);
    let e = parse(&d[..0x1B0]).unwrap_err();
    assert_eq!(e.structure, "LX object page table entry");
    assert!(e.to_string().contains("file offset 0x"), "{e}");
}

#[test]
fn overlapping_tables() {
    let mut d = hello();
    put32(&mut d, LX + 0x48, 196 + 8); // page table inside the object table
    let e = parse(&d).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Overlap("LX object table"));
    assert_eq!(e.offset, (LX + 204) as u64);
    // An absent (offset 0) table that the header says has entries.
    let mut d = hello();
    put32(&mut d, LX + 0x40, 0);
    let e = parse(&d).unwrap_err();
    assert_eq!((e.structure, e.offset), ("LX header", (LX + 0x40) as u64));
}

#[test]
fn page_offset_past_the_end() {
    let mut d = hello();
    put32(&mut d, LX + 244, 0x10_0000); // page 1 data offset
    let e = parse(&d).unwrap_err();
    assert_eq!(
        (e.structure, e.offset),
        ("LX object page table entry", (LX + 244) as u64)
    );
    assert!(matches!(e.kind, ErrorKind::OutOfRange { .. }));
}

#[test]
fn fixup_outside_its_page() {
    let mut d = hello();
    let rec = LX + 282; // the only fixup record: rel32 import by ordinal
    assert_eq!(d[rec], 0x08);
    d[rec + 2..rec + 4].copy_from_slice(&0x1000u16.to_le_bytes());
    let e = parse(&d).unwrap_err();
    assert_eq!(
        (e.structure, e.offset),
        ("LX fixup source offset", rec as u64)
    );
}

#[test]
fn unknown_fixup_flags_and_types() {
    let mut d = hello();
    let rec = LX + 282;
    d[rec] = 0x48;
    let e = parse(&d).unwrap_err();
    assert_eq!(
        (e.structure, e.offset, e.kind),
        ("LX fixup record", rec as u64, ErrorKind::UnknownFlags(0x40))
    );
    d[rec] = 0x09;
    assert_eq!(parse(&d).unwrap_err().kind, ErrorKind::UnknownType(9));
}

#[test]
fn fixup_for_a_missing_import_module() {
    let mut d = hello();
    d[LX + 282 + 4] = 7; // module ordinal 7 of 1
    let e = parse(&d).unwrap_err();
    assert_eq!(e.kind, ErrorKind::OutOfRange { value: 7, limit: 1 });
}

/// An LX module whose only page is EXEPACK2-compressed; returns the bytes
/// and the file offset of the compressed stream.
fn compressed_module() -> (Vec<u8>, usize) {
    let mut m = Module::new_lx("PACKED");
    let data: Vec<u8> = b"abcabcabcabc-0123456789-".repeat(100);
    m.add_object(0x2005, 4096, &data[..2400]);
    m.objects[0].pages[0].kind = PageKind::Compressed;
    let bytes = write(&m).unwrap();
    let f = lx::read(&bytes).unwrap();
    (bytes, f.pages[0].file_offset as usize)
}

#[test]
fn malformed_exepack2_streams() {
    let (good, at) = compressed_module();
    assert_eq!(parse(&good).unwrap().objects[0].pages[0].data.len(), 2400);
    // A copy from before the start of the page.
    let mut d = good.clone();
    d[at..at + 2].copy_from_slice(&(2u16 | (5 << 4)).to_le_bytes());
    let e = parse(&d).unwrap_err();
    assert_eq!((e.structure, e.offset), ("EXEPACK2 stream", at as u64));
    // Roots that run past the stored size.
    let mut d = good.clone();
    d[at] = 63 << 2;
    let size_at = objmap_offset(&good) + 4;
    d[size_at..size_at + 2].copy_from_slice(&10u16.to_le_bytes());
    let e = parse(&d).unwrap_err();
    assert_eq!(
        (e.structure, e.kind),
        ("EXEPACK2 stream", ErrorKind::Truncated)
    );
    // Output longer than a page: nine runs of 255 bytes exceed 2048.
    let stream: Vec<u8> = [0u8, 255, 1].repeat(9);
    let e = loader::exepack2::decode(&stream, 50, 2048).unwrap_err();
    assert_eq!(e.offset, 50 + 24);
    assert!(matches!(
        e.kind,
        ErrorKind::OutOfRange {
            value: 2295,
            limit: 2048
        }
    ));
}

fn objmap_offset(bytes: &[u8]) -> usize {
    let f = lx::read(bytes).unwrap();
    (f.header_offset + u64::from(f.header.objmap_off)) as usize
}

#[test]
fn lx_internal_chain_that_loops() {
    let mut m = Module::new_lx("CHAIN");
    let o = m.add_object(0x2003, 4096, &[0u8; 64]);
    for off in [8u32, 16] {
        m.fixups.push(Fixup {
            record: 0,
            object: o,
            offset: off,
            kind: SourceKind::Off32,
            alias: false,
            target: Target::Internal {
                object: o,
                offset: off * 2,
            },
            additive: None,
            add_to_site: false,
            chained: true,
        });
    }
    m.store_chain_words().unwrap();
    let mut bytes = write(&m).unwrap();
    assert_eq!(parse(&bytes).unwrap(), m);
    // Point the second link back at the first.
    let f = lx::read(&bytes).unwrap();
    let site = f.pages[0].file_offset as usize + 16;
    let word = u32::from_le_bytes(bytes[site..site + 4].try_into().unwrap());
    assert_eq!(word >> 20, 0xFFF);
    bytes[site..site + 4].copy_from_slice(&((8 << 20) | (word & 0xFFFFF)).to_le_bytes());
    let e = parse(&bytes).unwrap_err();
    assert_eq!(
        (e.structure, e.kind),
        ("LX internal fixup chain", ErrorKind::Invalid("chain loops"))
    );
}

fn ne_module() -> Module {
    let mut m = Module::new_ne("NECHAIN");
    let s = m.add_object(0, 0x100, &[0x90; 0x40]);
    let d = m.import_module("DOSCALLS");
    for off in [4u32, 12, 20] {
        m.fixups.push(Fixup {
            record: 0,
            object: s,
            offset: off,
            kind: SourceKind::Ptr1616,
            alias: false,
            target: Target::ImportOrdinal {
                module: d,
                ordinal: 5,
            },
            additive: None,
            add_to_site: false,
            chained: false,
        });
    }
    m.store_chain_words().unwrap();
    m
}

#[test]
fn ne_chain_loops_and_leaves_the_segment() {
    let m = ne_module();
    let bytes = write(&m).unwrap();
    let f = ne::read(&bytes).unwrap();
    assert_eq!(f.module, m);
    assert_eq!(
        f.segments[0].relocations, 1,
        "three sites, one chained record"
    );
    let data = f.segments[0].file_offset as usize;
    let mut loops = bytes.clone();
    loops[data + 20..data + 22].copy_from_slice(&4u16.to_le_bytes());
    let e = parse(&loops).unwrap_err();
    assert_eq!(
        (e.structure, e.kind),
        ("NE relocation record", ErrorKind::Invalid("chain loops"))
    );
    let mut leaves = bytes;
    leaves[data + 20..data + 22].copy_from_slice(&0x3Fu16.to_le_bytes());
    let e = parse(&leaves).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Invalid("chain leaves the segment data"));
}

#[test]
fn ne_unknown_relocation_flags_and_huge_segment_count() {
    let bytes = std::fs::read(format!("{SAMPLES}/ne/test-asm16.exe")).unwrap();
    let f = ne::read(&bytes).unwrap();
    let seg = f.segments[2];
    let rec = (seg.file_offset + u64::from(seg.length) + 2) as usize;
    let mut d = bytes.clone();
    d[rec + 1] |= 0x40;
    let e = parse(&d).unwrap_err();
    assert_eq!(
        (e.structure, e.offset, e.kind),
        (
            "NE relocation record",
            rec as u64 + 1,
            ErrorKind::UnknownFlags(0x40)
        )
    );
    let mut d = bytes;
    d[0x80 + 0x1C..0x80 + 0x1E].copy_from_slice(&0xFFFFu16.to_le_bytes());
    let e = parse(&d).unwrap_err();
    assert_eq!(e.structure, "NE segment table");
    assert!(matches!(e.kind, ErrorKind::TooMany { count: 0xFFFF, .. }));
}

#[test]
fn not_a_module() {
    assert_eq!(parse(b"").unwrap_err().kind, ErrorKind::Truncated);
    assert_eq!(
        parse(b"PK\x03\x04").unwrap_err().kind,
        ErrorKind::BadSignature
    );
    let mut stub = stub::default_stub();
    stub.extend_from_slice(b"PE\0\0");
    let e = parse(&stub).unwrap_err();
    assert_eq!(
        (e.structure, e.kind),
        ("new header signature", ErrorKind::BadSignature)
    );
}

/// Fuzzer find: a chained record with a negative source offset (allowed for
/// ordinary records in a page after the first) indexed the chain's loop
/// check at offset -1.
#[test]
fn lx_chain_with_negative_source_offset() {
    let mut m = Module::new_lx("CHAIN2");
    let o = m.add_object(0x2003, 8192, &[0u8; 4200]);
    m.fixups.push(Fixup {
        record: 0,
        object: o,
        offset: 4096 + 8,
        kind: SourceKind::Off32,
        alias: false,
        target: Target::Internal {
            object: o,
            offset: 0x40,
        },
        additive: None,
        add_to_site: false,
        chained: true,
    });
    m.store_chain_words().unwrap();
    let mut bytes = write(&m).unwrap();
    assert_eq!(parse(&bytes).unwrap(), m);
    let f = lx::read(&bytes).unwrap();
    let h = &f.header;
    let fpt = (f.header_offset + u64::from(h.fixpage_off)) as usize;
    let page2 = u32::from_le_bytes(bytes[fpt + 4..fpt + 8].try_into().unwrap());
    let rec = (f.header_offset + u64::from(h.fixrec_off) + u64::from(page2)) as usize;
    assert_eq!(&bytes[rec..rec + 2], &[0x07, 0x08]);
    bytes[rec + 2..rec + 4].copy_from_slice(&(-1i16).to_le_bytes());
    let e = parse(&bytes).unwrap_err();
    assert_eq!(
        (e.structure, e.offset),
        ("LX internal fixup chain", rec as u64)
    );
    // A chain whose next link lies past a small page.
    let mut small = Module::new_lx("SMALL");
    small.lx.as_mut().unwrap().page_size = 512;
    let o = small.add_object(0x2003, 512, &[0u8; 512]);
    small.fixups.push(Fixup {
        record: 0,
        object: o,
        offset: 8,
        kind: SourceKind::Off32,
        alias: false,
        target: Target::Internal {
            object: o,
            offset: 0,
        },
        additive: None,
        add_to_site: false,
        chained: true,
    });
    small.store_chain_words().unwrap();
    let mut bytes = write(&small).unwrap();
    let f = lx::read(&bytes).unwrap();
    let site = f.pages[0].file_offset as usize + 8;
    bytes[site..site + 4].copy_from_slice(&(0xFF0u32 << 20).to_le_bytes());
    let e = parse(&bytes).unwrap_err();
    assert_eq!(e.structure, "LX internal fixup chain");
}
