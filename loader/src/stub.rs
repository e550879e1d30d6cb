//! The DOS (MZ) stub in front of the new header.
//!
//! The new header's offset is the dword at 0x3C. Decision: unlike the
//! letter of the NE/LX documents we do not require the relocation table
//! offset at 0x18 to be 0x40 (OS/2's loader does not check it either, and
//! some linkers write 0x1E). A file that starts directly with `NE` or `LX`
//! has no stub. The default stub is built with goblin's DOS header writer;
//! reading uses our own bounds-checked reads, because goblin's DOS header
//! parser also insists on a PE signature at the new-header offset.

use goblin::pe::header::DosHeader;
use scroll::{LE, Pwrite};

use crate::error::{Error, ErrorKind, Result};

/// Where the new header starts: after the stub, or 0 without one.
pub fn new_header_offset(data: &[u8]) -> Result<u64> {
    match data.get(..2) {
        Some(b"MZ") => {}
        Some(b"NE" | b"LX" | b"LE") => return Ok(0),
        Some(_) => return Err(Error::new(0u64, "DOS header", ErrorKind::BadSignature)),
        None => return Err(Error::new(0u64, "DOS header", ErrorKind::Truncated)),
    }
    let ptr = data
        .get(0x3C..0x40)
        .ok_or_else(|| Error::new(0x3Cu64, "DOS header", ErrorKind::Truncated))?;
    let offset = u64::from(u32::from_le_bytes([ptr[0], ptr[1], ptr[2], ptr[3]]));
    if offset == 0 {
        let kind = ErrorKind::Unsupported("a DOS program (no new header)");
        return Err(Error::new(0x3Cu64, "DOS header new-header offset", kind));
    }
    if offset < 0x40 || offset >= data.len() as u64 {
        let kind = ErrorKind::OutOfRange {
            value: offset,
            limit: data.len() as u64,
        };
        return Err(Error::new(0x3Cu64, "DOS header new-header offset", kind));
    }
    Ok(offset)
}

/// The message the default stub prints.
const MESSAGE: &[u8] = b"This program cannot be run in DOS mode.\r\n$";

/// A small DOS program that prints a message and exits, with the new-header
/// pointer at 0x3C set to the stub's own length (where the writers put the
/// new header).
pub fn default_stub() -> Vec<u8> {
    // mov dx,0x0E; mov ah,9; push cs; pop ds; int 21h; mov ax,4C01h; int 21h
    let code: [u8; 14] = [
        0xBA, 0x0E, 0x00, 0xB4, 0x09, 0x0E, 0x1F, 0xCD, 0x21, 0xB8, 0x01, 0x4C, 0xCD, 0x21,
    ];
    let mut stub = vec![0u8; 0x40];
    stub.extend_from_slice(&code);
    stub.extend_from_slice(MESSAGE);
    while !stub.len().is_multiple_of(16) {
        stub.push(0);
    }
    let len = stub.len();
    let header = DosHeader {
        signature: 0x5A4D,
        bytes_on_last_page: (len % 512) as u16,
        pages_in_file: len.div_ceil(512) as u16,
        size_of_header_in_paragraphs: 4,
        maximum_extra_paragraphs_needed: 0xFFFF,
        initial_sp: 0xB8,
        file_address_of_relocation_table: 0x40,
        pe_pointer: len as u32,
        ..DosHeader::default()
    };
    // The buffer has room for the 64-byte header, so the write cannot fail.
    let _ = stub.pwrite_with(header, 0, LE);
    stub
}

/// Sets the new-header pointer of `stub` to its length. Returns `None` when
/// the stub is too short to hold the pointer.
pub fn with_header_pointer(stub: &[u8]) -> Option<Vec<u8>> {
    if stub.is_empty() {
        return Some(Vec::new());
    }
    if stub.len() < 0x40 {
        return None;
    }
    let mut out = stub.to_vec();
    out[0x3C..0x40].copy_from_slice(&(stub.len() as u32).to_le_bytes());
    Some(out)
}
