//! Decoded-instruction cache, keyed by linear address and code size
//! (a direct-mapped table of 32768 entries).
//!
//! Entries remember the physical address they were decoded from; the
//! physical pages holding cached code are marked in [`PhysMem`], and any
//! write to a marked page (guest store, host write, INT3 patch) bumps that
//! page's generation before the next instruction runs, which retires every
//! entry decoded from it. With paging on, a hit is only used if the current translation of
//! the linear address still gives the cached physical address. Instructions
//! that straddle a 4 KB boundary are never cached (they are decoded afresh
//! each time), so one physical page check covers every cached entry.
//!
//! [`PhysMem`]: crate::mem::PhysMem

use iced_x86::Instruction;

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
    /// `insn` is the original instruction of a tracepoint, whose INT3 is
    /// in memory (tracepoint.rs).
    pub tracepoint: bool,
    /// Decoded for one use only (it straddles a page boundary).
    pub uncacheable: bool,
    /// Address size is 32 bits.
    pub addr32: bool,
}

// Size checks on the hot structs (as iced-x86 does): the cache holds
// SLOTS of these, so growing one shows up here rather than in a bench.
const _: () = assert!(size_of::<Decoded>() == 56);
const _: () = assert!(size_of::<Slot>() == 72);

const SLOTS: usize = 1 << 15;
/// The extra slot that holds an uncacheable decode for one step.
const SCRATCH: usize = SLOTS;
const PAGES: usize = 1 << 20;

#[derive(Clone, Copy)]
struct Slot {
    /// `key()` of the entry, 0 when empty.
    key: u64,
    /// Generation of the entry's physical page when it was decoded.
    generation: u32,
    d: Decoded,
}

/// The cache: a direct-mapped table indexed by the low linear address bits.
/// Invalidating a physical page bumps its generation, which makes every
/// entry decoded from it stale in O(1).
#[derive(Clone)]
pub(crate) struct ICache {
    slots: Vec<Slot>,
    page_gen: Vec<u32>,
    /// Misses (decodes), for tests and tuning.
    pub misses: u64,
    /// Something was inserted since the last clear: a clear of an empty
    /// cache costs nothing (the kernel registers hundreds of host calls,
    /// each a clear of 2 MB of slots, before its first instruction).
    filled: bool,
}

impl Default for ICache {
    fn default() -> Self {
        let empty = Slot {
            key: 0,
            generation: 0,
            d: Decoded {
                insn: Instruction::default(),
                phys: 0,
                cycles: 0,
                hostcall: false,
                tracepoint: false,
                addr32: false,
                uncacheable: false,
            },
        };
        ICache {
            slots: vec![empty; SLOTS + 1],
            page_gen: vec![0; PAGES],
            misses: 0,
            filled: false,
        }
    }
}

/// The cache key of a linear address in 16- or 32-bit code.
#[inline]
pub(crate) fn key(lin: u32, code32: bool) -> u64 {
    u64::from(lin) | (u64::from(code32) << 32) | (1 << 40)
}

impl ICache {
    /// The slot of a valid entry for `k`.
    #[inline]
    pub fn lookup(&self, k: u64) -> Option<usize> {
        let i = (k as usize) & (SLOTS - 1);
        let s = &self.slots[i];
        if s.key == k && s.generation == self.page_gen[(s.d.phys >> 12) as usize] {
            Some(i)
        } else {
            None
        }
    }

    /// The entry in slot `i` (from `lookup` or `insert`).
    #[inline]
    pub fn at(&self, i: usize) -> &Decoded {
        &self.slots[i].d
    }

    /// Store a decode and return its slot (the scratch slot, never found
    /// by `lookup`, for an uncacheable one).
    pub fn insert(&mut self, k: u64, d: Decoded) -> usize {
        self.filled = true;
        let generation = self.page_gen[(d.phys >> 12) as usize];
        let (i, key) = if d.uncacheable {
            (SCRATCH, 0)
        } else {
            ((k as usize) & (SLOTS - 1), k)
        };
        self.slots[i] = Slot { key, generation, d };
        i
    }
    /// The generation of physical page `page` (bumped by every write to
    /// it while it holds cached code).
    #[inline]
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub fn generation(&self, page: u32) -> u32 {
        self.page_gen[page as usize]
    }
    /// Drop every entry decoded from physical page `page`.
    #[inline]
    pub fn invalidate_page(&mut self, page: u32) {
        let g = &mut self.page_gen[page as usize];
        *g = g.wrapping_add(1);
    }
    pub fn clear(&mut self) {
        if !std::mem::take(&mut self.filled) {
            return;
        }
        self.slots.iter_mut().for_each(|s| s.key = 0);
    }
    pub fn len(&self) -> usize {
        self.slots[..SLOTS]
            .iter()
            .filter(|s| s.key != 0 && self.lookup(s.key).is_some())
            .count()
    }
}
