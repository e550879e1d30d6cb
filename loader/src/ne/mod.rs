//! NE (New Executable) modules as OS/2 1.x uses them: reader and writer.
//!
//! Follows the Windows 3.0 "EXEFMT" notes with OS/2 conventions. Decisions
//! where the notes are silent:
//! - Segment flag 0x0008 marks iterated data: EXEPACK1 records (as in LX
//!   iterated pages) that expand to at most 64 KiB. The model keeps the
//!   expanded bytes; the model's segment flags have the ITERATED (0x0008) and
//!   RELOCINFO (0x0100) bits cleared, since the page kind and the fixups say
//!   the same, and the writer sets them from those.
//! - Relocation source types: 0 lobyte, 2 sel16, 3 ptr16:16, 5 off16,
//!   0x0B ptr16:32, 0x0D off32. Flag bits other than 0x07 are an error.
//! - Non-additive relocations other than lobyte and OS fixups thread a chain
//!   through the segment data: the word at each site is the next site,
//!   0xFFFF ends it. Lobyte and OS fixups patch one site. A chain that loops
//!   or leaves the segment data is an error.
//! - OS/2 resources (target OS not Windows): the resource table holds one
//!   (type id, name id) word pair per resource, and the resources are the
//!   last segments. Windows-style resource tables are not read.
//! - The alignment shift 0 means 9 (512-byte sectors).

mod header;
mod read;
mod write;

pub use header::{NE_SIGNATURE, NeHeader};
pub use read::read;
pub use write::write;

use crate::model::Module;

/// One segment table entry as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentEntry {
    /// Absolute file offset of the data (0: none).
    pub file_offset: u64,
    /// Bytes stored in the file (65536 when the table says 0 with data).
    pub length: u32,
    /// Flags as stored.
    pub flags: u16,
    /// Minimum allocation as stored (0 means 64 KiB).
    pub min_alloc: u16,
    /// Number of relocation records.
    pub relocations: u16,
}

/// An NE file as read: raw header and segment table, and the module.
#[derive(Debug, Clone)]
pub struct NeFile {
    /// File offset of the NE header.
    pub header_offset: u64,
    /// The header as stored.
    pub header: NeHeader,
    /// The segment table as stored.
    pub segments: Vec<SegmentEntry>,
    /// The module.
    pub module: Module,
}
