//! Where things are in a TNF file (reference §1.5): the magic, the file
//! header, the directory of forwarding cells, the tag (permanent) blocks and
//! the 512-byte data blocks.
//!
//! ```text
//! 0x00000  magic "TNF\0", file header (+ writer-private allocation hints)
//! 0x00200  directory: fw cells (file header type, block header type, root,
//!          then one cell per probe type record)
//! 0x10000  tag blocks (32 KB): type records, generation 0xFFFFFFFF
//! 0x18000  data blocks through block_count * 512, reused LRU in whole blocks
//! ```

/// The magic word, read big-endian from a file in its writer's order.
pub const MAGIC: u32 = 0x544E_4600;
/// The magic word as a reader of the other byte order sees it.
pub const MAGIC_SWAPPED: u32 = 0x0046_4E54;
/// The TNF file format version this crate writes.
pub const FILE_VERSION: u32 = 1;
/// Every block is 512 bytes, as `tnfw_b_init_buffer` insists.
pub const BLOCK_SIZE: u32 = 512;
/// The block header: tag, generation, bytes_valid, A_lock, B_lock, next_block.
pub const BLOCK_HEADER_SIZE: u32 = 16;
/// The directory (forwarding area) of a user file: 64 KB.
pub const DIRECTORY_SIZE: u32 = 0x1_0000;
/// The tag blocks reserved in a user file: 32 KB.
pub const TAG_AREA_SIZE: u32 = 0x8000;
/// The first data block.
pub const DATA_START: u32 = DIRECTORY_SIZE + TAG_AREA_SIZE;
/// The generation of tag (permanent) blocks.
pub const TAG_GENERATION: u32 = 0xFFFF_FFFF;

/// The file header record starts after the magic word.
pub const FILE_HEADER: u32 = 4;
/// The file header record's size, writer-private fields included.
pub const FILE_HEADER_SIZE: u32 = 56;
/// Offsets of the header's fields (from the start of the file).
pub mod header {
    /// file_version
    pub const VERSION: u32 = 8;
    /// file_header_size
    pub const HEADER_SIZE: u32 = 12;
    /// file_log_size
    pub const LOG_SIZE: u32 = 16;
    /// block_header_size
    pub const BLOCK_HEADER_SIZE: u32 = 20;
    /// block_size
    pub const BLOCK_SIZE: u32 = 24;
    /// directory_size
    pub const DIRECTORY_SIZE: u32 = 28;
    /// block_count
    pub const BLOCK_COUNT: u32 = 32;
    /// blocks_valid
    pub const BLOCKS_VALID: u32 = 36;
    /// next_alloc.hi: the generation of the next data block handed out
    pub const NEXT_ALLOC_GEN: u32 = 40;
    /// next_alloc.lo: the next data block's number
    pub const NEXT_ALLOC_BLOCK: u32 = 44;
    /// next_tag_alloc: the next free byte in the tag blocks
    pub const NEXT_TAG_ALLOC: u32 = 52;
    /// next_fw_alloc: the next free directory cell
    pub const NEXT_FW_ALLOC: u32 = 56;
}

/// Directory cell of the file header's type.
pub const FW_FILE_HEADER: u32 = 512;
/// Directory cell of the block header's type.
pub const FW_BLOCK_HEADER: u32 = 516;
/// Directory cell of the root type (`tnf_struct_type`).
pub const FW_ROOT: u32 = 520;
/// The first per-probe directory cell.
pub const FW_FIRST_PROBE: u32 = 524;

/// The smallest trace file prex accepts: 128 KB.
pub const MIN_FILE_SIZE: u32 = 128 * 1024;
/// prex's default user trace file size: 4 MB.
pub const DEFAULT_FILE_SIZE: u32 = 4 * 1024 * 1024;
/// The largest file this writer makes (the whole image is kept in memory,
/// and reclaimable references must keep room for a generation delta).
pub const MAX_FILE_SIZE: u32 = 256 * 1024 * 1024;
/// Strings are cut to this many characters (`TNF_STRING_LIMIT`).
pub const STRING_LIMIT: usize = 255;

/// Rounds a record size up to the allocation unit of 8 bytes.
pub const fn round8(n: u32) -> u32 {
    (n + 7) & !7
}

/// log2 of the file size, rounded up (`file_log_size`).
pub fn log_size(file_size: u32) -> u32 {
    32 - (file_size.max(2) - 1).leading_zeros()
}
