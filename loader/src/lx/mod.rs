//! LX (Linear eXecutable) modules: reader and writer.
//!
//! Follows "IBM OS/2 16/32-bit OMF and LX Module Format", revision 10.
//! Decisions where it is silent:
//! - The object page table has "module # of pages" entries; an object's pages
//!   must lie inside it. Object virtual sizes above 512 MiB (the OS/2 user
//!   address space) are rejected, so images can always be allocated.
//! - Legal, range and compressed pages are found at the data pages offset,
//!   iterated pages at the iterated pages offset (or the data pages offset
//!   when that is 0). Decoded pages may not exceed the page size.
//! - A fixup record that continues a fixup crossing into the next page (a
//!   negative source offset) is dropped when the previous page holds the same
//!   fixup; the writer emits such continuations itself.
//! - An additive value is read for every target type when its flag is set.
//! - Parameter typing bundles (type bit 0x80) are read as their base type.
//! - Module directives, verify records and per-page checksums are not read.

mod fixups;
mod header;
mod read;
mod write;

pub use header::{LX_SIGNATURE, LxHeader};
pub use read::read;
pub(crate) use read::read_names as read_names_pub;
pub use write::write;
pub(crate) use write::{pstring as pstring_pub, write_names as write_names_pub};

use crate::model::{Module, PageKind};

/// One entry of the object page table as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageEntry {
    /// Absolute file offset of the page data (0 for zeroed/invalid pages).
    pub file_offset: u64,
    /// Bytes stored in the file.
    pub data_size: u16,
    /// Page kind from the flags.
    pub kind: PageKind,
}

/// An LX file as read: raw header and page table, and the module.
#[derive(Debug, Clone)]
pub struct LxFile {
    /// File offset of the LX header.
    pub header_offset: u64,
    /// The header as stored.
    pub header: LxHeader,
    /// The object page table as stored (logical page n at index n-1).
    pub pages: Vec<PageEntry>,
    /// Number of fixup records per logical page.
    pub fixup_records: Vec<u32>,
    /// The module.
    pub module: Module,
}
