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
    /// The native tier would take the instruction inside a block and go
    /// on after it (`jit::offer::in_block`), and no block starts right
    /// after it (none at decode; a translation there clears it, see
    /// `block_after`). False where the tier is absent or off. The run
    /// loop offers the boundary after it to the tier only for other
    /// reasons (see the jit module doc, "Where blocks start").
    pub in_block: bool,
}

// Size checks on the hot structs (as iced-x86 does): the cache holds
// up to SLOTS of these, so growing one shows up here rather than in a bench.
const _: () = assert!(size_of::<Decoded>() == 56);
const _: () = assert!(size_of::<Slot>() == 72);

const SLOTS: usize = 1 << 15;
/// The slot number of the scratch slot, which holds an uncacheable decode
/// for one step.
const SCRATCH: usize = SLOTS;
/// The table grows to a power of two of slots, at least this many.
const MIN_SLOTS: usize = 1 << 6;
/// Physical pages in the 4 GB space.
const PAGES: usize = 1 << 20;
/// The page-generation table grows to a power of two of pages, at least
/// this many.
const MIN_PAGES: usize = 1 << 10;

#[derive(Clone, Copy)]
struct Slot {
    /// `key()` of the entry, 0 when empty.
    key: u64,
    /// Generation of the entry's physical page when it was decoded.
    generation: u32,
    d: Decoded,
}

impl Default for Slot {
    fn default() -> Self {
        Slot {
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
                in_block: false,
            },
        }
    }
}

/// The cache: a direct-mapped table indexed by the low linear address bits.
/// Invalidating a physical page bumps its generation, which makes every
/// entry decoded from it stale in O(1).
///
/// Nothing big is made up front (a small program's whole run is shorter
/// than clearing 2 MB of slots and 4 MB of generations). `slots` is a
/// prefix of the table of [`SLOTS`]: a slot past its end is empty, and an
/// insert there first grows it to a power of two of slots that holds it.
/// Entries go to the same slots, and evict the same entries, as in the
/// whole table, so what is decoded again is the same; only a program
/// with code at high slot numbers (linear addresses modulo 32 KB) pays
/// for the whole table.
///
/// The generation table likewise covers the pages up to the highest one
/// an entry was decoded from or invalidated; a page beyond it has
/// generation 0, what it would have had in a table of all 2^20 pages.
/// Every stored entry's page is inside it (insert grows it first), so a
/// hit indexes it without a check.
#[derive(Clone, Default)]
pub(crate) struct ICache {
    /// The first slots of the table.
    slots: Vec<Slot>,
    /// Slot [`SCRATCH`].
    scratch: Slot,
    page_gen: Vec<u32>,
    /// Misses (decodes), for tests and tuning.
    pub misses: u64,
    /// Something was inserted since the last clear: a clear of an empty
    /// cache costs nothing (the kernel registers hundreds of host calls,
    /// each a clear, before its first instruction).
    filled: bool,
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
        // Past the end of `slots`: an empty slot.
        let s = self.slots.get(i)?;
        if s.key == k && s.generation == self.page_gen[(s.d.phys >> 12) as usize] {
            Some(i)
        } else {
            None
        }
    }

    /// The entry in slot `i` (from `lookup` or `insert`).
    #[inline]
    pub fn at(&self, i: usize) -> &Decoded {
        // Of those, only the scratch slot is past the end of `slots`.
        match self.slots.get(i) {
            Some(s) => &s.d,
            None => &self.scratch.d,
        }
    }

    /// The instruction cached at `k` (valid or not) is `len` bytes long:
    /// clear its `in_block`, as a block now starts right after it.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub fn block_after(&mut self, k: u64, len: usize) {
        // (Past the end of `slots`: an empty slot.)
        if let Some(s) = self.slots.get_mut((k as usize) & (SLOTS - 1))
            && s.key == k
            && s.d.insn.len() == len
        {
            s.d.in_block = false;
        }
    }

    /// Store a decode and return its slot (the scratch slot, never found
    /// by `lookup`, for an uncacheable one).
    pub fn insert(&mut self, k: u64, d: Decoded) -> usize {
        self.filled = true;
        let page = (d.phys >> 12) as usize;
        self.cover(page);
        let generation = self.page_gen[page];
        if d.uncacheable {
            self.scratch = Slot {
                key: 0,
                generation,
                d,
            };
            return SCRATCH;
        }
        let i = (k as usize) & (SLOTS - 1);
        if i >= self.slots.len() {
            self.grow(i);
        }
        self.slots[i] = Slot {
            key: k,
            generation,
            d,
        };
        i
    }

    /// Make `slots` hold slot `i`.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, i: usize) {
        let len = (i + 1).next_power_of_two().clamp(MIN_SLOTS, SLOTS);
        self.slots.resize(len, Slot::default());
    }

    /// Make the generation table hold `page` (new pages at 0).
    #[inline]
    fn cover(&mut self, page: usize) {
        if page >= self.page_gen.len() {
            self.cover_more(page);
        }
    }

    #[cold]
    #[inline(never)]
    fn cover_more(&mut self, page: usize) {
        let len = (page + 1).next_power_of_two().clamp(MIN_PAGES, PAGES);
        self.page_gen.resize(len, 0);
    }

    /// The generation of physical page `page` (bumped by every write to
    /// it while it holds cached code).
    #[inline]
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pub fn generation(&self, page: u32) -> u32 {
        self.page_gen.get(page as usize).copied().unwrap_or(0)
    }
    /// Drop every entry decoded from physical page `page`.
    #[inline]
    pub fn invalidate_page(&mut self, page: u32) {
        self.cover(page as usize);
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
        self.slots
            .iter()
            .filter(|s| s.key != 0 && self.lookup(s.key).is_some())
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(phys: u32, uncacheable: bool) -> Decoded {
        Decoded {
            insn: Instruction::default(),
            phys,
            cycles: 1,
            hostcall: false,
            tracepoint: false,
            uncacheable,
            addr32: true,
            in_block: false,
        }
    }

    #[test]
    fn an_empty_cache_allocates_nothing_and_misses() {
        let c = ICache::default();
        assert_eq!(c.slots.capacity(), 0);
        assert_eq!(c.page_gen.capacity(), 0);
        assert_eq!(c.lookup(key(0x1_7FFF, true)), None);
        assert_eq!(c.generation(0xF_FFFF), 0);
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn entries_hit_until_their_page_is_invalidated() {
        let mut c = ICache::default();
        let (k1, k2) = (key(0x1_0010, true), key(0x2_0020, false));
        let i1 = c.insert(k1, decoded(0x35_0010, false));
        let i2 = c.insert(k2, decoded(0xFFFF_FFF0, false));
        assert_eq!((i1, i2), (0x10, 0x20));
        assert_eq!(c.slots.len(), MIN_SLOTS, "low slots: a small table");
        assert_eq!(c.page_gen.len(), PAGES);
        assert_eq!(c.lookup(k1), Some(i1));
        assert_eq!(c.lookup(k2), Some(i2));
        assert_eq!(c.at(i2).phys, 0xFFFF_FFF0);
        assert_eq!(c.len(), 2);
        assert_eq!(c.lookup(key(0x1_0010, false)), None, "other code size");
        c.invalidate_page(0x350);
        assert_eq!(c.lookup(k1), None);
        assert_eq!(c.lookup(k2), Some(i2));
        assert_eq!(c.generation(0x350), 1);
        c.clear();
        assert_eq!(c.lookup(k2), None);
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn the_table_grows_to_hold_a_high_slot_keeping_its_entries() {
        let mut c = ICache::default();
        let (k1, k2) = (key(0x1_0010, true), key(0x1_4410, true));
        let i1 = c.insert(k1, decoded(0x1010, false));
        assert_eq!(c.page_gen.len(), MIN_PAGES);
        let i2 = c.insert(k2, decoded(0x2410, false));
        assert_eq!(i2, 0x4410);
        assert_eq!(c.slots.len(), 0x8000);
        assert_eq!(c.lookup(k1), Some(i1));
        assert_eq!(c.lookup(k2), Some(i2));
        assert_eq!(c.at(i2).phys, 0x2410);
        // A key 32 KB away takes the same slot, as in the whole table.
        let k3 = key(0x1_C410, true);
        assert_eq!(c.lookup(k3), None);
        assert_eq!(c.insert(k3, decoded(0x3410, false)), i2);
        assert_eq!(c.lookup(k2), None);
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn a_page_beyond_the_table_keeps_its_generation() {
        let mut c = ICache::default();
        // Invalidated before anything was decoded from it: the bump
        // stands, and a later decode records it.
        c.invalidate_page(0x8_0000);
        c.invalidate_page(0x8_0000);
        assert_eq!(c.generation(0x8_0000), 2);
        assert_eq!(c.generation(0x8_0001), 0);
        let k = key(0x5000, true);
        let i = c.insert(k, decoded(0x8000_0123, false));
        assert_eq!(c.lookup(k), Some(i));
        c.invalidate_page(0x8_0000);
        assert_eq!(c.lookup(k), None);
    }

    #[test]
    fn uncacheable_decodes_use_the_scratch_slot() {
        let mut c = ICache::default();
        let k = key(0x1FFF, true);
        let i = c.insert(k, decoded(0x1FFF, true));
        assert_eq!(i, SCRATCH);
        assert_eq!(c.at(i).phys, 0x1FFF);
        assert_eq!(c.lookup(k), None);
        assert_eq!(c.len(), 0);
        assert_eq!(c.slots.len(), 0, "no table for it");
        // With a table, the scratch slot is still apart from it.
        let k2 = key(0x1_7FF0, true);
        let i2 = c.insert(k2, decoded(0x7FF0, false));
        assert_eq!(c.at(i).phys, 0x1FFF);
        assert_eq!(c.at(i2).phys, 0x7FF0);
    }
}
