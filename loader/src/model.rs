//! The format-neutral module model shared by the LX and NE readers and writers.
//!
//! A [`Module`] is what later crates consume: objects (LX) or segments (NE)
//! with their decoded, unrelocated bytes; entry points by ordinal with their
//! exported names; imported module names; fixups as typed records, one per
//! site; start address, stack and automatic data.
//!
//! Decisions where the format documents are silent:
//! - Object numbers, segment numbers, import module numbers and ordinals are
//!   1-based everywhere, as in the files.
//! - A [`Fixup`] is one site. Sites that one file record covers (an LX source
//!   list, an LX internal chain, an NE relocation chain) share the same
//!   [`Fixup::record`] number, so the writers can group them again. Records are
//!   numbered 0, 1, 2... in file order.
//! - Names are stored as Latin-1: each byte of the file is one `char`.
//! - A page's `data` holds its decoded bytes without the zero padding up to the
//!   page size; zero-filled and invalid pages hold no bytes.

use crate::Format;

/// 16-bit or 32-bit code/data, from the LX big/default bit or the NE 32-bit flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bitness {
    /// 16-bit segment (`USE16`).
    Bits16,
    /// 32-bit segment (`USE32`).
    Bits32,
}

/// How a page (LX) or segment (NE) is stored in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PageKind {
    /// Stored as is; shorter than a page means zero padding.
    Legal,
    /// EXEPACK1 iteration records.
    Iterated,
    /// Not present; loading it is an error (LX only).
    Invalid,
    /// All zero, no file data (LX only).
    Zeroed,
    /// "Range of pages" (LX type 4): read like a legal page (the OS/2 loader
    /// never implemented it, so this is our decision).
    Range,
    /// EXEPACK2 compressed (LX only).
    Compressed,
}

impl PageKind {
    /// The name used in `exehdr` output and the golden analyses.
    pub fn name(self) -> &'static str {
        match self {
            PageKind::Legal => "legal",
            PageKind::Iterated => "iterated",
            PageKind::Invalid => "invalid",
            PageKind::Zeroed => "zeroed",
            PageKind::Range => "range",
            PageKind::Compressed => "compressed",
        }
    }
}

/// One page of an LX object, or the single data block of an NE segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// How it is (or will be) stored.
    pub kind: PageKind,
    /// The decoded bytes, without padding to the page size.
    pub data: Vec<u8>,
}

impl Page {
    /// A page stored as is.
    pub fn legal(data: Vec<u8>) -> Self {
        Page {
            kind: PageKind::Legal,
            data,
        }
    }
}

/// An LX object or NE segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    /// Raw flags: LX object flags, or NE segment flags.
    pub flags: u32,
    /// LX relocation base address (the preferred load address); 0 for NE.
    pub base: u32,
    /// Bytes of memory the object takes: LX virtual size, NE minimum
    /// allocation (65536 when the file says 0).
    pub virtual_size: u32,
    /// LX: the object's pages in order. NE: one page holding the segment data
    /// (legal or iterated), or none when the segment has no file data.
    pub pages: Vec<Page>,
}

/// LX object flag: 32-bit (big/default).
pub const LX_OBJ_BIG: u32 = 0x2000;
/// NE segment flag: 32-bit segment (OS/2 2.x).
pub const NE_SEG_32BIT: u32 = 0x2000;
/// NE segment flag: data segment.
pub const NE_SEG_DATA: u32 = 0x0001;
/// NE segment flag: iterated data.
pub const NE_SEG_ITERATED: u32 = 0x0008;
/// NE segment flag: relocation records follow the data.
pub const NE_SEG_RELOCINFO: u32 = 0x0100;

impl Object {
    /// Number of bytes of the object that come from pages (before zero fill),
    /// given the module's page size (NE: pass 0, the data is one block).
    pub fn stored_len(&self, page_size: u32) -> u64 {
        if page_size == 0 {
            return self.pages.first().map_or(0, |p| p.data.len() as u64);
        }
        match self.pages.iter().rposition(|p| !p.data.is_empty()) {
            Some(i) => i as u64 * u64::from(page_size) + self.pages[i].data.len() as u64,
            None => 0,
        }
    }

    /// Bytes of memory the object occupies: the virtual size for LX; for NE
    /// the minimum allocation, or the data length when a (malformed) segment
    /// holds more data than its minimum allocation.
    pub fn memory_size(&self, page_size: u32) -> u64 {
        if page_size == 0 {
            u64::from(self.virtual_size).max(self.stored_len(0))
        } else {
            u64::from(self.virtual_size)
        }
    }

    /// The byte at `offset` of the unrelocated image, or `None` past the
    /// virtual size. Bytes past the stored data are zero.
    pub fn byte_at(&self, page_size: u32, offset: u32) -> Option<u8> {
        if u64::from(offset) >= self.memory_size(page_size) {
            return None;
        }
        let (page, within) = match offset.checked_div(page_size) {
            None => (0usize, offset as usize),
            Some(page) => (page as usize, (offset % page_size) as usize),
        };
        Some(
            self.pages
                .get(page)
                .and_then(|p| p.data.get(within))
                .copied()
                .unwrap_or(0),
        )
    }

    /// The unrelocated image: pages zero-padded to the page size, then zero
    /// filled or truncated to the virtual size. For NE (`page_size` 0) the
    /// segment data, zero filled to [`Object::memory_size`].
    pub fn image(&self, page_size: u32) -> Vec<u8> {
        let size = self.memory_size(page_size) as usize;
        let mut out = Vec::with_capacity(size);
        if page_size == 0 {
            if let Some(p) = self.pages.first() {
                out.extend_from_slice(&p.data);
            }
        } else {
            for page in &self.pages {
                if out.len() >= size {
                    break;
                }
                let start = out.len();
                out.extend_from_slice(&page.data);
                out.resize(start + page_size as usize, 0);
            }
        }
        out.resize(size, 0);
        out
    }
}

/// A 1-based object/segment number and an offset in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Address {
    /// Object or segment number (1-based).
    pub object: u16,
    /// Offset within the object.
    pub offset: u32,
}

/// Where an entry point leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryPoint {
    /// LX 16-bit entry (type 1).
    Entry16 {
        /// Object number.
        object: u16,
        /// Offset in the object.
        offset: u16,
    },
    /// LX 286 call gate entry (type 2).
    CallGate {
        /// Object number.
        object: u16,
        /// Offset in the object.
        offset: u16,
        /// Reserved call gate selector slot as stored.
        callgate: u16,
    },
    /// LX 32-bit entry (type 3).
    Entry32 {
        /// Object number.
        object: u16,
        /// Offset in the object.
        offset: u32,
    },
    /// LX forwarder entry (type 4): the entry is an import.
    Forwarder {
        /// Import module number (1-based).
        module: u16,
        /// What is imported.
        target: ForwardTarget,
    },
    /// NE fixed-segment entry (bundle indicator 1..=0xFE; 0xFE is an
    /// absolute/constant entry).
    NeFixed {
        /// Segment number.
        segment: u8,
        /// Offset in the segment.
        offset: u16,
    },
    /// NE movable entry (bundle indicator 0xFF, stored with `INT 3Fh`).
    NeMovable {
        /// Segment number.
        segment: u8,
        /// Offset in the segment.
        offset: u16,
    },
}

/// The target of an LX forwarder entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForwardTarget {
    /// Import by ordinal.
    Ordinal(u32),
    /// Import by name (from the import procedure name table).
    Name(String),
}

/// One entry table entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Ordinal (1-based).
    pub ordinal: u16,
    /// Raw flag byte (bit 0: exported; LX bits 3..7 / NE bits 3..7: parameter
    /// words; NE bit 1: shared data).
    pub flags: u8,
    /// Where it leads.
    pub point: EntryPoint,
}

impl Entry {
    /// Object number and offset, or `None` for a forwarder.
    pub fn address(&self) -> Option<Address> {
        match self.point {
            EntryPoint::Entry16 { object, offset }
            | EntryPoint::CallGate { object, offset, .. } => Some(Address {
                object,
                offset: u32::from(offset),
            }),
            EntryPoint::Entry32 { object, offset } => Some(Address { object, offset }),
            EntryPoint::NeFixed { segment, offset } | EntryPoint::NeMovable { segment, offset } => {
                Some(Address {
                    object: u16::from(segment),
                    offset: u32::from(offset),
                })
            }
            EntryPoint::Forwarder { .. } => None,
        }
    }

    /// Whether the exported bit is set.
    pub fn exported(&self) -> bool {
        self.flags & 1 != 0
    }
}

/// A name table entry: exported name and its ordinal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    /// The name (Latin-1).
    pub name: String,
    /// The ordinal it names.
    pub ordinal: u16,
}

/// The kind of location a fixup patches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SourceKind {
    /// 8-bit (NE lobyte, LX byte fixup).
    Byte,
    /// 16-bit selector.
    Sel16,
    /// 16:16 far pointer.
    Ptr1616,
    /// 16-bit offset.
    Off16,
    /// 16:32 far pointer.
    Ptr1632,
    /// 32-bit offset.
    Off32,
    /// 32-bit self-relative offset (LX only).
    Rel32,
}

impl SourceKind {
    /// The name used in `exehdr` output and the golden analyses.
    pub fn name(self) -> &'static str {
        match self {
            SourceKind::Byte => "lobyte",
            SourceKind::Sel16 => "sel16",
            SourceKind::Ptr1616 => "ptr16:16",
            SourceKind::Off16 => "off16",
            SourceKind::Ptr1632 => "ptr16:32",
            SourceKind::Off32 => "off32",
            SourceKind::Rel32 => "rel32",
        }
    }

    /// Bytes patched at the site.
    pub fn size(self) -> u32 {
        match self {
            SourceKind::Byte => 1,
            SourceKind::Sel16 | SourceKind::Off16 => 2,
            SourceKind::Ptr1616 | SourceKind::Off32 | SourceKind::Rel32 => 4,
            SourceKind::Ptr1632 => 6,
        }
    }
}

/// What a fixup refers to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    /// An object/segment of this module and an offset in it (0 for selector
    /// fixups, which carry no offset).
    Internal {
        /// Object or segment number.
        object: u16,
        /// Offset in it.
        offset: u32,
    },
    /// An entry of this module's entry table (LX target type 3, NE movable
    /// segment reference 0xFF).
    InternalEntry {
        /// Entry ordinal.
        ordinal: u16,
    },
    /// An import by ordinal.
    ImportOrdinal {
        /// Import module number (1-based).
        module: u16,
        /// Ordinal in that module.
        ordinal: u32,
    },
    /// An import by name.
    ImportName {
        /// Import module number (1-based).
        module: u16,
        /// Procedure name.
        name: String,
    },
    /// An NE operating system fixup (floating point emulation).
    OsFixup {
        /// Fixup type (1..=6: FIARQQ...FIWRQQ).
        kind: u16,
    },
}

impl Target {
    /// The name used in `exehdr` output and the golden analyses.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Target::Internal { .. } => "internal",
            Target::InternalEntry { .. } => "internal_entry",
            Target::ImportOrdinal { .. } => "import_ordinal",
            Target::ImportName { .. } => "import_name",
            Target::OsFixup { .. } => "os_fixup",
        }
    }
}

/// One fixup site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixup {
    /// The file record this site came from (or will be written in); sites
    /// sharing a record share kind and target (LX chains: target object).
    pub record: u32,
    /// Source object/segment (1-based).
    pub object: u16,
    /// Offset of the site within the object.
    pub offset: u32,
    /// What is patched.
    pub kind: SourceKind,
    /// LX "fixup to 16:16 alias" flag.
    pub alias: bool,
    /// What it refers to.
    pub target: Target,
    /// LX additive value added to the target address.
    pub additive: Option<u32>,
    /// NE additive relocation: the target is added to what the site holds
    /// (no chain). Never set for LX.
    pub add_to_site: bool,
    /// LX internal chaining fixup: the site's dword holds the chain word
    /// (next site, target delta), as the writer stores it.
    pub chained: bool,
}

/// A resource: type and name ids and where its bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// Resource type id (RT_*).
    pub type_id: u16,
    /// Resource name id.
    pub name_id: u16,
    /// Object (LX) or segment (NE) holding the bytes.
    pub object: u16,
    /// Offset in the object (always 0 for NE).
    pub offset: u32,
    /// Size in bytes (NE: the segment's loaded data size).
    pub size: u32,
}

/// LX-specific header values that have no place in the neutral model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LxOptions {
    /// CPU type (1 = 286, 2 = 386, 3 = 486).
    pub cpu: u16,
    /// OS type (1 = OS/2).
    pub os: u16,
    /// Module version.
    pub version: u32,
    /// Page size (4096 in practice).
    pub page_size: u32,
    /// Page offset shift (file alignment of pages).
    pub page_shift: u32,
    /// Debug information bytes (at "debug info off" in the file).
    pub debug_info: Vec<u8>,
}

impl Default for LxOptions {
    fn default() -> Self {
        LxOptions {
            cpu: 2,
            os: 1,
            version: 0,
            page_size: 4096,
            page_shift: 0,
            debug_info: Vec::new(),
        }
    }
}

/// NE-specific header values that have no place in the neutral model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeOptions {
    /// Linker version and revision.
    pub linker: (u8, u8),
    /// Target operating system (1 = OS/2).
    pub target_os: u8,
    /// Logical sector alignment shift for segment data.
    pub align_shift: u16,
    /// Header bytes 0x37..0x40 (OS/2 flags byte, gangload area, swap area,
    /// expected version), kept as stored.
    pub tail: [u8; 9],
}

impl Default for NeOptions {
    fn default() -> Self {
        NeOptions {
            linker: (5, 1),
            target_os: 1,
            align_shift: 4,
            tail: [0; 9],
        }
    }
}

/// What kind of module: from the LX module type bits or the NE library flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleType {
    /// Program (EXE).
    Program,
    /// Dynamic link library.
    Library,
    /// Physical device driver.
    PhysicalDriver,
    /// Virtual device driver.
    VirtualDriver,
    /// Any other LX module type value.
    Other(u32),
}

impl ModuleType {
    /// The name used in `exehdr` output and the golden analyses.
    pub fn name(self) -> &'static str {
        match self {
            ModuleType::Program => "PROGRAM",
            ModuleType::Library => "LIBRARY",
            ModuleType::PhysicalDriver => "PHYSICAL DEVICE DRIVER",
            ModuleType::VirtualDriver => "VIRTUAL DEVICE DRIVER",
            ModuleType::Other(_) => "UNKNOWN",
        }
    }
}

/// A whole LX or NE module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    /// LX or NE.
    pub format: Format,
    /// The DOS stub: every byte before the new header (with the header offset
    /// at 0x3C). Empty when the file starts with the new header.
    pub stub: Vec<u8>,
    /// Module name (first resident name).
    pub name: String,
    /// First non-resident name: the description (NE) or file name; `None`
    /// when the module has no non-resident name table.
    pub description: Option<String>,
    /// Raw module flags (LX module flags, NE flag word).
    pub flags: u32,
    /// Objects (LX) or segments (NE), numbered from 1.
    pub objects: Vec<Object>,
    /// Entry table, by ascending ordinal.
    pub entries: Vec<Entry>,
    /// Resident names after the module name.
    pub resident_names: Vec<Name>,
    /// Non-resident names after the description.
    pub nonresident_names: Vec<Name>,
    /// Imported module names, numbered from 1 in fixups.
    pub imports: Vec<String>,
    /// Fixup sites, ordered by record.
    pub fixups: Vec<Fixup>,
    /// Start CS:IP / EIP (library init for DLLs).
    pub start: Option<Address>,
    /// Initial SS:SP / ESP.
    pub stack: Option<Address>,
    /// Automatic data segment/object.
    pub auto_data: Option<u16>,
    /// Heap size (NE and LX header field).
    pub heap_size: u32,
    /// Stack size (NE and LX header field).
    pub stack_size: u32,
    /// Resources.
    pub resources: Vec<Resource>,
    /// LX header values (present when `format` is LX).
    pub lx: Option<LxOptions>,
    /// NE header values (present when `format` is NE).
    pub ne: Option<NeOptions>,
}
