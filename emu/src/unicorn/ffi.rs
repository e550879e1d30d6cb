//! The one raw unicorn call this backend needs: reading a `uc_x86_mmr`
//! register (GDTR, IDTR, LDTR, TR). unicorn-engine 2.1's safe
//! `reg_read_long` sizes its buffer for GDTR/IDTR as 10 bytes and rejects
//! LDTR/TR, while unicorn writes the whole 24-byte structure, so the safe
//! wrapper cannot be used for these registers.
#![allow(unsafe_code)]

use super::Uc;
use unicorn_engine::RegisterX86;
use unicorn_engine::unicorn_const::{uc_error, uc_reg_read2};

/// Read a memory-management register as the raw 24-byte `uc_x86_mmr`.
pub(super) fn read_mmr(uc: &Uc<'_>, reg: RegisterX86) -> Result<[u8; 24], uc_error> {
    let mut buf = [0u64; 3];
    let mut size = std::mem::size_of_val(&buf);
    // SAFETY: `uc.get_handle()` is the live engine owned by `uc` (it
    // outlives this call); `buf` is 24 writable, 8-aligned bytes, the size
    // and alignment of `uc_x86_mmr`, and `size` tells unicorn so (it
    // rejects the read if the register needs more); both pointers are
    // valid for the duration of the call and not retained.
    let r = unsafe {
        uc_reg_read2(
            uc.get_handle(),
            i32::from(reg),
            buf.as_mut_ptr().cast(),
            &raw mut size,
        )
    };
    if r != uc_error::OK {
        return Err(r);
    }
    let mut out = [0u8; 24];
    for (i, w) in buf.iter().enumerate() {
        out[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes());
    }
    Ok(out)
}
