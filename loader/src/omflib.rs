//! OMF libraries (`.LIB`), read for the imports they define: what IMPLIB
//! and the OS/2 toolkit's `OS2286.LIB` / `OS2386.LIB` are made of.
//!
//! A library is a header record (`F0`, whose length gives the page size),
//! object modules each starting on a page boundary, an end record (`F1`),
//! then a dictionary of 512-byte blocks at the offset the header gives.
//! An import library's modules are tiny: `THEADR`, one `COMENT` of class
//! `A0` subtype `01` (IMPDEF: the public name a program links against, the
//! DLL's name, and the entry's ordinal or exported name), `MODEND`.
//!
//! [`read`] returns every IMPDEF, in file order, with the offset of its
//! record, the dictionary's (name, page) entries, and how many modules
//! define no import (real code, which is skipped record by record).
//! [`Library::lookup`] finds a name the way a linker does, through the
//! dictionary's hash, so a test can check the dictionary against the
//! modules. [`write_import_library`] builds such a library (the tests'
//! inputs; nothing of IBM's is kept here).
//!
//! Every error names the byte offset and the structure (see
//! [`crate::Error`]). Record checksums are checked when not zero (zero
//! means "not computed", as the OMF specification allows).

use crate::bytes::{Bytes, Output, to_latin1};
use crate::error::{Error, ErrorKind, Result, WriteError};

/// The dictionary's block size and buckets per block.
const BLOCK: u64 = 512;
const BUCKETS: u16 = 37;

/// What an import binds to in its DLL.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ImportTarget {
    /// By ordinal.
    Ordinal(u16),
    /// By exported name.
    Name(String),
}

/// One IMPDEF record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The public (internal) name programs link against.
    pub public: String,
    /// The DLL's module name.
    pub module: String,
    /// Ordinal or entry name.
    pub target: ImportTarget,
    /// File offset of the COMENT record.
    pub offset: u64,
}

/// A dictionary entry: a public name and the page its module starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DictEntry {
    /// The name as stored (module names end with `!`).
    pub name: String,
    /// Page number: the module starts at `page * page_size`.
    pub page: u16,
}

/// A library read by [`read`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Library {
    /// Page size (a power of two, 16 to 32768).
    pub page_size: u32,
    /// Every IMPDEF, in file order.
    pub imports: Vec<Import>,
    /// Modules that define no import.
    pub other_modules: usize,
    /// Pages on which modules start, in file order.
    pub module_pages: Vec<u16>,
    /// Every dictionary entry, block by block, bucket by bucket.
    pub dictionary: Vec<DictEntry>,
    /// Case-sensitive library (header flag bit 0).
    pub case_sensitive: bool,
    dict_offset: u64,
    dict_blocks: u16,
    data: Vec<u8>,
}

/// Reads an OMF library.
///
/// # Errors
///
/// An [`Error`] naming the offset and the structure when the header,
/// a record, an IMPDEF or the dictionary is malformed.
pub fn read(data: &[u8]) -> Result<Library> {
    let input = Bytes::new(data);
    match input.u8(0, "library header")? {
        0xF0 => {}
        // VisualAge's ILIB libraries (some of the toolkit's static
        // libraries) start with F3; they hold no IMPDEF.
        0xF3 => {
            return Err(Error::new(
                0,
                "library header",
                ErrorKind::Unsupported("F3 library (not OMF)"),
            ));
        }
        _ => return Err(Error::new(0, "library header", ErrorKind::BadSignature)),
    }
    let page_size = u32::from(input.u16(1, "library header")?) + 3;
    if !page_size.is_power_of_two() || !(16..=32768).contains(&page_size) {
        return Err(Error::new(
            1,
            "library header",
            ErrorKind::Invalid("page size is not a power of two from 16 to 32768"),
        ));
    }
    let dict_offset = u64::from(input.u32(3, "library header")?);
    let dict_blocks = input.u16(7, "library header")?;
    let flags = input.u8(9, "library header")?;
    input.check_count(dict_offset, u64::from(dict_blocks), BLOCK, "dictionary")?;
    if dict_blocks > 0 && dict_offset % BLOCK != 0 {
        return Err(Error::new(
            3,
            "library header",
            ErrorKind::Invalid("dictionary offset is not a multiple of 512"),
        ));
    }

    let mut lib = Library {
        page_size,
        imports: Vec::new(),
        other_modules: 0,
        module_pages: Vec::new(),
        dictionary: Vec::new(),
        case_sensitive: flags & 1 != 0,
        dict_offset,
        dict_blocks,
        data: Vec::new(),
    };
    read_modules(&input, &mut lib)?;
    read_dictionary(&input, &mut lib)?;
    if dict_blocks > 0 {
        lib.data = input
            .slice(dict_offset, u64::from(dict_blocks) * BLOCK, "dictionary")?
            .to_vec();
    }
    Ok(lib)
}

/// One record: (type, body without the checksum, offset of the next).
fn record<'a>(input: &Bytes<'a>, at: u64) -> Result<(u8, &'a [u8], u64)> {
    let kind = input.u8(at, "OMF record")?;
    let len = u64::from(input.u16(at + 1, "OMF record")?);
    if len == 0 {
        return Err(Error::new(
            at + 1,
            "OMF record",
            ErrorKind::Invalid("record length 0 (no room for the checksum)"),
        ));
    }
    let whole = input.slice(at, 3 + len, "OMF record")?;
    let checksum = whole[whole.len() - 1];
    if checksum != 0 && whole.iter().fold(0u8, |s, b| s.wrapping_add(*b)) != 0 {
        return Err(Error::new(
            at + 2 + len,
            "OMF record",
            ErrorKind::Invalid("checksum does not match"),
        ));
    }
    Ok((kind, &whole[3..whole.len() - 1], at + 3 + len))
}

fn read_modules(input: &Bytes<'_>, lib: &mut Library) -> Result<()> {
    let page = u64::from(lib.page_size);
    let (_, _, mut at) = record(input, 0)?;
    at = at.div_ceil(page) * page;
    loop {
        if input.u8(at, "library module")? == 0xF1 {
            return Ok(());
        }
        let start_page = at / page;
        let Ok(start_page) = u16::try_from(start_page) else {
            return Err(Error::new(
                at,
                "library module",
                ErrorKind::OutOfRange {
                    value: start_page,
                    limit: 0xFFFF,
                },
            ));
        };
        lib.module_pages.push(start_page);
        let before = lib.imports.len();
        loop {
            let (kind, body, next) = record(input, at)?;
            match kind {
                0x88 => coment(body, at, lib)?,
                0xF0 | 0xF1 => {
                    return Err(Error::new(
                        at,
                        "library module",
                        ErrorKind::Invalid("library record inside a module (no MODEND)"),
                    ));
                }
                _ => {}
            }
            at = next;
            if kind == 0x8A || kind == 0x8B {
                break;
            }
        }
        if lib.imports.len() == before {
            lib.other_modules += 1;
        }
        at = at.div_ceil(page) * page;
    }
}

/// A COMENT record: keeps IMPDEFs (class A0, subtype 01).
fn coment(body: &[u8], at: u64, lib: &mut Library) -> Result<()> {
    if body.len() < 3 || body[1] != 0xA0 || body[2] != 0x01 {
        return Ok(());
    }
    // Offsets inside the body, reported from the record's start.
    let b = Bytes::new(body);
    let base = at + 3;
    let err = |e: Error| Error::new(base + e.offset, "IMPDEF record", e.kind);
    let by_ordinal = b.u8(3, "IMPDEF record").map_err(err)? != 0;
    let (public, p) = b.pstring(4, "IMPDEF record").map_err(err)?;
    let (module, p) = b.pstring(p, "IMPDEF record").map_err(err)?;
    let (target, end) = if by_ordinal {
        let o = b.u16(p, "IMPDEF record").map_err(err)?;
        (ImportTarget::Ordinal(o), p + 2)
    } else {
        let (name, end) = b.pstring(p, "IMPDEF record").map_err(err)?;
        // An empty entry name means "the same as the public name".
        let name = if name.is_empty() {
            public.clone()
        } else {
            name
        };
        (ImportTarget::Name(name), end)
    };
    if end != body.len() as u64 {
        return Err(Error::new(
            base + end,
            "IMPDEF record",
            ErrorKind::Invalid("bytes after the IMPDEF's last field"),
        ));
    }
    if public.is_empty() || module.is_empty() {
        return Err(Error::new(
            base + 4,
            "IMPDEF record",
            ErrorKind::Invalid("empty public or module name"),
        ));
    }
    lib.imports.push(Import {
        public,
        module,
        target,
        offset: at,
    });
    Ok(())
}

fn read_dictionary(input: &Bytes<'_>, lib: &mut Library) -> Result<()> {
    for block in 0..u64::from(lib.dict_blocks) {
        let at = lib.dict_offset + block * BLOCK;
        let b = input.slice(at, BLOCK, "dictionary block")?;
        for bucket in 0..usize::from(BUCKETS) {
            if b[bucket] == 0 {
                continue;
            }
            let off = usize::from(b[bucket]) * 2;
            let e = Bytes::new(b);
            let err = |e: Error| Error::new(at + e.offset, "dictionary entry", e.kind);
            if off < usize::from(BUCKETS) + 1 {
                return Err(Error::new(
                    at + bucket as u64,
                    "dictionary entry",
                    ErrorKind::Invalid("bucket points into the bucket table"),
                ));
            }
            let (name, p) = e.pstring(off as u64, "dictionary entry").map_err(err)?;
            let page = e.u16(p, "dictionary entry").map_err(err)?;
            if !lib.module_pages.contains(&page) {
                return Err(Error::new(
                    at + p,
                    "dictionary entry",
                    ErrorKind::Invalid("page is not the start of a module"),
                ));
            }
            lib.dictionary.push(DictEntry { name, page });
        }
    }
    Ok(())
}

/// The four numbers of the dictionary hash: (start block, block step,
/// start bucket, bucket step), from the OMF specification's algorithm.
fn hash(name: &[u8], blocks: u16) -> (u16, u16, u16, u16) {
    let n = name.len();
    let at = |i: usize| if i == 0 { n as u8 } else { name[i - 1] };
    let (mut block, mut block_d, mut bucket, mut bucket_d) = (0u16, 0u16, 0u16, 0u16);
    // The front walks the length-prefixed name from its length byte, the
    // back from its last character.
    for i in 0..n {
        let front = u16::from(at(i) | 0x20);
        let back = u16::from(at(n - i) | 0x20);
        block = block.rotate_left(2) ^ front;
        bucket_d = bucket_d.rotate_right(2) ^ front;
        bucket = bucket.rotate_right(2) ^ back;
        block_d = block_d.rotate_left(2) ^ back;
    }
    let blocks = blocks.max(1);
    (
        block % blocks,
        (block_d % blocks).max(1),
        bucket % BUCKETS,
        (bucket_d % BUCKETS).max(1),
    )
}

impl Library {
    /// The page of the module defining `name`, found through the
    /// dictionary's hash as a linker finds it (names compare without
    /// regard to case unless the library is case-sensitive).
    ///
    /// Every bucket of a block's probe sequence is tried, not only those
    /// before the first empty one: libraries written by some tools (the
    /// toolkit's `GLUT.LIB`) carry on an overflowing name's bucket sequence
    /// into the next block. The search ends at a block that is not full.
    pub fn lookup(&self, name: &str) -> Option<u16> {
        let key = to_latin1(name)?;
        if key.is_empty() || key.len() > 255 || self.dict_blocks == 0 {
            return None;
        }
        let (mut block, block_d, start, bucket_d) = hash(&key, self.dict_blocks);
        for _ in 0..self.dict_blocks {
            let b = &self.data[usize::from(block) * BLOCK as usize..][..BLOCK as usize];
            let used = b[..usize::from(BUCKETS)]
                .iter()
                .filter(|s| **s != 0)
                .count();
            let full = b[usize::from(BUCKETS)] == 0xFF || used == usize::from(BUCKETS);
            let mut bucket = start;
            for _ in 0..BUCKETS {
                let slot = b[usize::from(bucket)];
                if slot != 0 {
                    let off = usize::from(slot) * 2;
                    let len = usize::from(*b.get(off)?);
                    let stored = b.get(off + 1..off + 1 + len)?;
                    let same = if self.case_sensitive {
                        stored == key.as_slice()
                    } else {
                        stored.eq_ignore_ascii_case(&key)
                    };
                    if same {
                        let p = b.get(off + 1 + len..off + 3 + len)?;
                        return Some(u16::from_le_bytes([p[0], p[1]]));
                    }
                }
                bucket = (bucket + bucket_d) % BUCKETS;
            }
            if !full {
                return None;
            }
            block = (block + block_d) % self.dict_blocks;
        }
        None
    }
}

/// One import for [`write_import_library`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportDef {
    /// The public name.
    pub public: String,
    /// The DLL.
    pub module: String,
    /// Ordinal or entry name.
    pub target: ImportTarget,
}

fn pstr(out: &mut Output, s: &str, what: &'static str) -> std::result::Result<(), WriteError> {
    let b = to_latin1(s).ok_or_else(|| WriteError::new(what, "a name is not Latin-1"))?;
    let len =
        u8::try_from(b.len()).map_err(|_| WriteError::new(what, "a name is over 255 bytes"))?;
    out.u8(len);
    out.bytes(&b);
    Ok(())
}

fn put_record(out: &mut Output, kind: u8, body: &[u8]) {
    let len = body.len() as u16 + 1;
    let start = out.pos();
    out.u8(kind);
    out.u16(len);
    out.bytes(body);
    let sum = out.buf[start..].iter().fold(0u8, |s, b| s.wrapping_add(*b));
    out.u8(sum.wrapping_neg());
}

/// Builds an import library of 16-byte pages with one module per import
/// (as IMPLIB does) and a dictionary of the public names.
///
/// # Errors
///
/// A [`WriteError`] when a name is not Latin-1 or over 255 bytes, there
/// are too many imports for 16-bit page numbers, or the names do not fit
/// in a dictionary of 251 blocks.
pub fn write_import_library(defs: &[ImportDef]) -> std::result::Result<Vec<u8>, WriteError> {
    const PAGE: usize = 16;
    let mut out = Output::default();
    put_record(&mut out, 0xF0, &[0; PAGE - 4]);
    let mut names: Vec<(Vec<u8>, u16)> = Vec::new();
    for d in defs {
        out.align(PAGE);
        let page = u16::try_from(out.pos() / PAGE)
            .map_err(|_| WriteError::new("library", "too many modules for 16-bit pages"))?;
        let mut t = Output::default();
        pstr(&mut t, &d.public, "THEADR")?;
        put_record(&mut out, 0x80, &t.buf);
        let mut c = Output::default();
        c.bytes(&[0x00, 0xA0, 0x01]);
        c.u8(u8::from(matches!(d.target, ImportTarget::Ordinal(_))));
        pstr(&mut c, &d.public, "IMPDEF")?;
        pstr(&mut c, &d.module, "IMPDEF")?;
        match &d.target {
            ImportTarget::Ordinal(o) => c.u16(*o),
            ImportTarget::Name(n) => pstr(&mut c, n, "IMPDEF")?,
        }
        put_record(&mut out, 0x88, &c.buf);
        put_record(&mut out, 0x8A, &[0x00]);
        names.push((to_latin1(&d.public).unwrap_or_default(), page));
    }
    out.align(PAGE);
    put_record(&mut out, 0xF1, &[]);
    out.align(BLOCK as usize);
    let dict_offset = out.pos();
    let dict = build_dictionary(&names)?;
    out.bytes(&dict);
    out.put_u32(3, dict_offset as u32);
    out.put_u16(7, (dict.len() / BLOCK as usize) as u16);
    out.buf[9] = 0;
    // The header's checksum: recompute over the patched bytes.
    out.buf[PAGE - 1] = 0;
    let sum = out.buf[..PAGE].iter().fold(0u8, |s, b| s.wrapping_add(*b));
    out.buf[PAGE - 1] = sum.wrapping_neg();
    Ok(out.buf)
}

/// A dictionary holding every name: the smallest prime number of blocks
/// (as linkers choose) in which all of them fit.
fn build_dictionary(names: &[(Vec<u8>, u16)]) -> std::result::Result<Vec<u8>, WriteError> {
    const PRIMES: &[u16] = &[
        2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89,
        97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167, 173, 179, 181,
        191, 193, 197, 199, 211, 223, 227, 229, 233, 239, 241, 251,
    ];
    'sizes: for &blocks in PRIMES {
        let mut dict = vec![0u8; usize::from(blocks) * BLOCK as usize];
        for b in 0..usize::from(blocks) {
            dict[b * BLOCK as usize + usize::from(BUCKETS)] =
                (usize::from(BUCKETS) + 1).div_ceil(2) as u8;
        }
        for (name, page) in names {
            let (mut block, block_d, start, bucket_d) = hash(name, blocks);
            let need = (name.len() + 3).div_ceil(2) * 2;
            let mut placed = false;
            for _ in 0..blocks {
                let b = &mut dict[usize::from(block) * BLOCK as usize..][..BLOCK as usize];
                let free = usize::from(b[usize::from(BUCKETS)]) * 2;
                if b[usize::from(BUCKETS)] != 0xFF && free + need <= BLOCK as usize {
                    let mut bucket = start;
                    for _ in 0..BUCKETS {
                        if b[usize::from(bucket)] == 0 {
                            b[usize::from(bucket)] = (free / 2) as u8;
                            b[free] = name.len() as u8;
                            b[free + 1..free + 1 + name.len()].copy_from_slice(name);
                            b[free + 1 + name.len()..free + 3 + name.len()]
                                .copy_from_slice(&page.to_le_bytes());
                            let next = free + need;
                            b[usize::from(BUCKETS)] = if next >= BLOCK as usize {
                                0xFF
                            } else {
                                (next / 2) as u8
                            };
                            placed = true;
                            break;
                        }
                        bucket = (bucket + bucket_d) % BUCKETS;
                    }
                    if placed {
                        break;
                    }
                    // Every bucket taken: the block is full.
                    b[usize::from(BUCKETS)] = 0xFF;
                } else {
                    b[usize::from(BUCKETS)] = 0xFF;
                }
                block = (block + block_d) % blocks;
            }
            if !placed {
                continue 'sizes;
            }
        }
        return Ok(dict);
    }
    Err(WriteError::new(
        "dictionary",
        "the names do not fit in 251 blocks",
    ))
}
