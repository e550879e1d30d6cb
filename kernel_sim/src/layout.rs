//! The linear address space and the fixed selectors.
//!
//! Decisions (DESIGN.md, "Address space"):
//! - Private arena from 0x0001_0000 upward for the EXE, its data and
//!   allocations; DLLs are placed downward from below 0x1C00_0000; every
//!   placement is 64 KB aligned so that each 64 KB tile has exactly one
//!   tiled LDT selector.
//! - The system region starts at 0x2000_0000, beyond what the LDT tiles
//!   reach: the GDT, the LDT, and the host-call thunk page that imported
//!   entries of the system DLLs resolve to. Descriptor tables are
//!   supervisor pages; the thunk page is user-readable so ring-3 code can
//!   reach it (execution there is reported to the host before it happens).
//! - Every guest page is user read/write: object protection flags (read
//!   only, execute only) are not enforced by paging; segment types are
//!   (code segments are execute/read, data read/write).
//! - GDT selectors follow OS/2 2.x where it matters to programs: flat code
//!   0x5B, flat data 0x53, the thread information block at 0x150B.

/// The 4 KB page size.
pub const PAGE: u32 = 0x1000;
/// One LDT tile: 64 KB.
pub const TILE: u32 = 0x1_0000;
/// Lowest address of the private arena.
pub const PRIVATE_BASE: u32 = 0x0001_0000;
/// Boundary between the private arena (below) and the DLL arena (above).
pub const PRIVATE_TOP: u32 = 0x1000_0000;
/// DLLs are placed downward from here.
pub const DLL_TOP: u32 = 0x1C00_0000;
/// Tiled selectors end here (8192 tiles of 64 KB): the end of rpn_vm's
/// compatibility region, whose CRMA rule the LDT tiling is.
pub const TILED_TOP: u32 = rpn_vm::machine::CRMA_LIMIT;
/// The GDT (1024 entries).
pub const GDT_BASE: u32 = 0x2000_0000;
/// GDT entries.
pub const GDT_ENTRIES: usize = 1024;
/// The LDT (8192 entries, 64 KB).
pub const LDT_BASE: u32 = 0x2001_0000;
/// LDT entries.
pub const LDT_ENTRIES: usize = 8192;
/// The host-call thunk region: slot `i` is at `THUNK_BASE + 4 * i`.
pub const THUNK_BASE: u32 = 0x2002_0000;
/// Thunk slots (64 KB / 4).
pub const THUNK_SLOTS: u32 = 0x4000;

/// Flat 32-bit ring-3 code selector.
pub const FLAT_CS: u16 = 0x5B;
/// Flat 32-bit ring-3 data selector.
pub const FLAT_DS: u16 = 0x53;
/// 16-bit ring-3 code selector over the thunk region.
pub const THUNK_CS: u16 = 0x63;
/// The LDT's own selector (GDT, ring 0).
pub const LDT_SEL: u16 = 0x68;
/// The thread information block (FS of 32-bit programs).
pub const TIB_SEL: u16 = 0x150B;

/// The tiled LDT selector of the 64 KB tile holding `lin` (only below
/// [`TILED_TOP`]): the CRMA rule, which rpn_vm owns because trace
/// programs convert addresses with it.
pub fn tile_selector(lin: u32) -> Option<u16> {
    rpn_vm::machine::crma_flat_to_segmented(lin).map(|(sel, _)| sel)
}

/// The linear base of a tiled LDT selector's tile (0 for a GDT selector,
/// which has no tile).
pub fn tile_base(sel: u16) -> u32 {
    rpn_vm::machine::crma_segmented_to_flat(sel, 0).unwrap_or(0)
}

/// Round `n` up to a multiple of `to` (a power of two), saturating.
pub fn round_up(n: u32, to: u32) -> u32 {
    n.checked_add(to - 1).map_or(!(to - 1), |v| v & !(to - 1))
}
