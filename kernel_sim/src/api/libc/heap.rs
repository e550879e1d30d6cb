//! The C heap's bookkeeping: which bytes of the guest's heap arenas are
//! in use. The arenas are guest memory ([`super::Runtime`] maps them);
//! the block list is the host's, so a guest that writes past a block
//! damages only its own data, never the allocator.
//!
//! Decisions:
//! - Blocks are 16-byte aligned and at least 16 bytes; first fit in
//!   address order, freed blocks merge with free neighbours.
//! - An arena is at least [`ARENA`] bytes; the heap grows by new arenas
//!   up to [`MAX_HEAP`] in all, then malloc returns NULL.
//! - `free` of a pointer that is no block (or one already freed) does
//!   nothing: the real runtime's result is undefined, and this keeps the
//!   heap sound.

use std::collections::BTreeMap;

/// Smallest arena (bytes).
pub(crate) const ARENA: u32 = 0x10_0000;
/// Most heap memory a process may have (bytes).
pub(crate) const MAX_HEAP: u32 = 0x1000_0000 / 4;
/// Block alignment.
const ALIGN: u32 = 16;

/// The heap's blocks.
#[derive(Debug, Default)]
pub(crate) struct Heap {
    /// Arenas: base → size.
    pub(crate) arenas: BTreeMap<u32, u32>,
    /// Free runs: address → size.
    free: BTreeMap<u32, u32>,
    /// Blocks in use: address → (size asked, size held).
    used: BTreeMap<u32, (u32, u32)>,
}

impl Heap {
    /// Total bytes of the arenas.
    pub(crate) fn total(&self) -> u32 {
        self.arenas.values().sum()
    }

    /// The arena size to add for a request of `size` bytes, or `None`
    /// when the heap may not grow that much.
    pub(crate) fn growth_for(&self, size: u32) -> Option<u32> {
        let need = round(size)?.checked_add(0xFFF)? & !0xFFF;
        let grow = need.max(ARENA);
        (self.total().checked_add(grow)? <= MAX_HEAP).then_some(grow)
    }

    /// Adds an arena of guest memory.
    pub(crate) fn add_arena(&mut self, base: u32, size: u32) {
        self.arenas.insert(base, size);
        self.release(base, size);
    }

    /// A block of `size` bytes from the free runs, if one fits.
    pub(crate) fn alloc(&mut self, size: u32) -> Option<u32> {
        let held = round(size.max(1))?;
        let (&at, &len) = self.free.iter().find(|&(_, &l)| l >= held)?;
        self.free.remove(&at);
        if len > held {
            self.free.insert(at + held, len - held);
        }
        self.used.insert(at, (size, held));
        Some(at)
    }

    /// Frees the block at `addr`; false when there is none.
    pub(crate) fn free(&mut self, addr: u32) -> bool {
        match self.used.remove(&addr) {
            Some((_, held)) => {
                self.release(addr, held);
                true
            }
            None => false,
        }
    }

    /// The size asked for the block at `addr`.
    pub(crate) fn size_of(&self, addr: u32) -> Option<u32> {
        self.used.get(&addr).map(|u| u.0)
    }

    /// Grows or shrinks the block at `addr` in place when it can;
    /// false when it cannot (the caller moves it).
    pub(crate) fn resize_in_place(&mut self, addr: u32, size: u32) -> bool {
        let Some(&(_, held)) = self.used.get(&addr) else {
            return false;
        };
        let Some(want) = round(size.max(1)) else {
            return false;
        };
        if want <= held {
            self.used.insert(addr, (size, want));
            if want < held {
                self.release(addr + want, held - want);
            }
            return true;
        }
        let next = addr + held;
        match self.free.get(&next) {
            Some(&len) if held + len >= want => {
                self.free.remove(&next);
                let rest = held + len - want;
                if rest > 0 {
                    self.free.insert(addr + want, rest);
                }
                self.used.insert(addr, (size, want));
                true
            }
            _ => false,
        }
    }

    /// Returns a run to the free list, merging with its neighbours.
    fn release(&mut self, addr: u32, size: u32) {
        let (mut at, mut len) = (addr, size);
        if let Some((&prev, &plen)) = self.free.range(..at).next_back()
            && prev + plen == at
            && self.same_arena(prev, at)
        {
            self.free.remove(&prev);
            at = prev;
            len += plen;
        }
        if let Some(&nlen) = self.free.get(&(at + len))
            && self.same_arena(at, at + len)
        {
            self.free.remove(&(at + len));
            len += nlen;
        }
        self.free.insert(at, len);
    }

    fn same_arena(&self, a: u32, b: u32) -> bool {
        let arena = |x: u32| self.arenas.range(..=x).next_back().map(|(&base, _)| base);
        arena(a) == arena(b)
    }

    /// Blocks in use.
    #[cfg(test)]
    pub(crate) fn blocks(&self) -> usize {
        self.used.len()
    }
}

fn round(n: u32) -> Option<u32> {
    Some(n.checked_add(ALIGN - 1)? & !(ALIGN - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_free_merge() {
        let mut h = Heap::default();
        assert_eq!(h.alloc(10), None, "no arena yet");
        h.add_arena(0x10000, 0x1000);
        let a = h.alloc(10).unwrap();
        let b = h.alloc(20).unwrap();
        let c = h.alloc(1).unwrap();
        assert_eq!((a, b, c), (0x10000, 0x10010, 0x10030));
        assert_eq!(h.size_of(b), Some(20));
        assert!(h.free(b));
        assert!(!h.free(b), "a double free is refused");
        assert!(!h.free(0x10001), "not a block");
        assert_eq!(h.alloc(16), Some(0x10010), "first fit reuses the hole");
        assert!(h.free(a) && h.free(0x10010) && h.free(c));
        assert_eq!(h.blocks(), 0);
        assert_eq!(h.alloc(0x1000), Some(0x10000), "all merged back");
        assert_eq!(h.alloc(1), None, "full");
    }

    #[test]
    fn resize() {
        let mut h = Heap::default();
        h.add_arena(0x10000, 0x1000);
        let a = h.alloc(16).unwrap();
        assert!(h.resize_in_place(a, 64), "grows into free space");
        let b = h.alloc(16).unwrap();
        assert_eq!(b, 0x10040);
        assert!(!h.resize_in_place(a, 128), "b is in the way");
        assert!(h.resize_in_place(a, 8), "shrinks");
        assert_eq!(h.alloc(48), Some(0x10010));
    }

    #[test]
    fn arenas_do_not_merge_and_growth_is_bounded() {
        let mut h = Heap::default();
        h.add_arena(0x10000, 0x1000);
        h.add_arena(0x11000, 0x1000);
        assert_eq!(h.alloc(0x1800), None, "runs of two arenas stay apart");
        assert_eq!(h.growth_for(0x1800), Some(ARENA));
        assert_eq!(h.growth_for(u32::MAX), None);
        assert_eq!(h.growth_for(MAX_HEAP), None);
    }
}
