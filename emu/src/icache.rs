//! Decoded-instruction cache, keyed by linear address and code size.
//!
//! Entries remember the physical address they were decoded from; the
//! physical pages holding cached code are marked in [`PhysMem`], and any
//! write to a marked page (guest store, DMA-like host write, INT3 patch)
//! drops every entry decoded from that page before the next instruction
//! runs. With paging on, a hit is only used if the current translation of
//! the linear address still gives the cached physical address. Instructions
//! that straddle a 4 KB boundary are never cached (they are decoded afresh
//! each time), so one physical page check covers every cached entry.
//!
//! [`PhysMem`]: crate::mem::PhysMem

use iced_x86::Instruction;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A decoded instruction with what the executor needs precomputed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decoded {
    pub insn: Instruction,
    /// Physical address of the first byte.
    pub phys: u32,
    /// Base cycle count (cycles.rs).
    pub cycles: u16,
    /// The instruction starts at a registered host-call address.
    pub hostcall: bool,
    /// Address size is 32 bits.
    pub addr32: bool,
}

/// A multiplicative hasher for u64 keys (the keys are already well spread).
#[derive(Default, Clone, Copy)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The cache itself.
#[derive(Default, Clone)]
pub(crate) struct ICache {
    map: HashMap<u64, Decoded, BuildHasherDefault<KeyHasher>>,
    /// Hits and misses, for tests and tuning.
    pub hits: u64,
    pub misses: u64,
}

#[inline]
pub(crate) fn key(lin: u32, code32: bool) -> u64 {
    u64::from(lin) | (u64::from(code32) << 32)
}

impl ICache {
    #[inline]
    pub fn get(&mut self, k: u64) -> Option<&Decoded> {
        self.map.get(&k)
    }
    pub fn insert(&mut self, k: u64, d: Decoded) {
        if self.map.len() > 1 << 20 {
            self.map.clear();
        }
        self.map.insert(k, d);
    }
    /// Drop every entry decoded from physical page `page`.
    pub fn invalidate_page(&mut self, page: u32) {
        self.map.retain(|_, d| d.phys >> 12 != page);
    }
    pub fn clear(&mut self) {
        self.map.clear();
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
}
