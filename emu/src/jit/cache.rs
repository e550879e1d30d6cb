//! The block cache: translated blocks keyed like the decoded-instruction
//! cache (linear address and code size, plus the start EIP, whose value the
//! block's exits are computed from), each remembering the physical address
//! it was read from and that page's generation in the icache. A write to
//! the page bumps the generation (the icache's scheme: marked code page,
//! dirty list, `invalidate_page`), which retires the block; with paging on,
//! the entry check also re-translates the start address and retires a
//! block read from another frame, so a CR3 load or PTE change needs no
//! flush of its own (as with the icache). `Machine::flush_caches` and
//! host-call changes clear the whole table. Also a heat count per start
//! address, so only hot code is translated, and a memo of addresses whose
//! first instruction the tier does not take. An occupancy bit per slot is
//! looked at before the slot, so the instruction boundaries that have no
//! entry (most of those the run loop offers: see "Where blocks start" in
//! the module doc of [`super`]) cost a bit test and a heat count. The blocks' host
//! code is in an [`Arena`], reset with the table.

use super::native::{ARENA_CAP, Arena, Code, Emitted, Guest, State};
use super::select::Plan;

/// Executions of a start address before it is translated. Measured in
/// host instructions (callgrind) over whole runs: IBM's TRCUST on the
/// largest corpus TSF (41,000 guest instructions, no address run more
/// than about 230 times), LOOP16 and LOOP32 of testprogs. Then a
/// translation cost about 70,000 host instructions, an interpreted guest
/// instruction about 640, an entry into a block about 700. With 128 the
/// hot blocks had only some 65 entries left to repay their translation:
/// the run loop of the TRCUST run took 5% more than the interpreter's,
/// LOOP16's 7% less, LOOP32's 51% less. With 32 (blocks chained): 3%,
/// 22% and 58% less; 16 did about as well, 64 worse.
///
/// Since the emitter writes its own bytes (`asm`), a translation costs
/// about 33,000 host instructions, which moved the best value down.
/// Whole runs (load included), host instructions against the
/// interpreter's: TRCUST corpus (10 runs) 8: -2.0%, 12: -4.9%, 16: -6.8%,
/// 24: -6.2%, 32: -5.7%, 64: -2.7%; LOOP16 (50 runs) 16: -5.7%, 32:
/// -5.3%; LOOP32 16: -17.4%, 32: -17.1%.
pub(crate) const HOT: u16 = 16;

/// Block slots: enough that a real program's hot blocks (IBM's TRCUST
/// keeps about 1,100 live) rarely evict each other.
const SLOTS: usize = 1 << 14;
/// Heat counters (2^16, a counter per start address in practice).
const HEAT: usize = 1 << 16;

/// A translated block.
pub(crate) struct Block {
    /// What the block does and costs.
    pub plan: Plan,
    /// Its host code.
    pub code: Code,
}

/// One cache slot: a block, or the memo that the address has none.
pub(crate) struct Entry {
    /// `icache::key` of the start address.
    pub key: u64,
    /// The start EIP.
    pub eip: u32,
    /// Physical address of the first byte.
    pub phys: u32,
    /// The icache generation of `phys`'s page at translation.
    pub generation: u32,
    /// None: the first instruction is not eligible.
    pub block: Option<Box<Block>>,
}

/// 64 slots of the table.
type Group = Box<[Option<Entry>; 64]>;

/// Direct-mapped block table plus heat counters.
pub(crate) struct Cache {
    /// In groups of 64 (a word of `filled`), each allocated at its first
    /// insert: a machine with the tier off, or a short run, does not pay
    /// for 640 KB of slots (their allocation and drop cost more than a
    /// block's translation).
    slots: Vec<Option<Group>>,
    /// A bit per slot: it holds an entry. Looked at first, so the many
    /// boundaries without an entry touch 2 KB, not the slots' cache lines.
    filled: [u64; SLOTS / 64],
    heat: Vec<u16>,
    /// The blocks' host code.
    arena: Arena,
    /// Executions before translation ([`HOT`] unless a test lowers it).
    pub hot: u16,
    /// Something was stored or heated since the last clear: a clear with
    /// nothing to drop costs nothing (the kernel registers hundreds of
    /// host calls, each a clear, before its first instruction).
    touched: bool,
}

impl Default for Cache {
    fn default() -> Self {
        Cache {
            slots: (0..SLOTS / 64).map(|_| None).collect(),
            filled: [0; SLOTS / 64],
            heat: vec![0; HEAT],
            arena: Arena::default(),
            hot: HOT,
            touched: false,
        }
    }
}

fn slot_of(key: u64) -> usize {
    let k = key as u32;
    ((k ^ (k >> 10)) as usize) & (SLOTS - 1)
}

fn heat_of(lin: u32) -> usize {
    (lin ^ (lin >> 12)) as usize & (HEAT - 1)
}

impl Cache {
    /// Might `key` have an entry (its slot holds one)?
    #[inline]
    pub fn filled(&self, key: u64) -> bool {
        let i = slot_of(key);
        self.filled[i / 64] & (1 << (i % 64)) != 0
    }

    /// The entry for `key` at `eip`, if any (valid or not).
    #[inline]
    pub fn get(&self, key: u64, eip: u32) -> Option<&Entry> {
        let i = slot_of(key);
        if self.filled[i / 64] & (1 << (i % 64)) == 0 {
            return None;
        }
        self.slots[i / 64].as_deref()?[i % 64]
            .as_ref()
            .filter(|e| e.key == key && e.eip == eip)
    }

    /// Count one execution of `lin`; true when it just became hot.
    #[inline]
    pub fn heat(&mut self, lin: u32) -> bool {
        self.touched = true;
        let h = &mut self.heat[heat_of(lin)];
        *h += 1;
        if *h >= self.hot {
            *h = 0;
            return true;
        }
        false
    }

    /// Reset the heat of `lin`.
    pub fn cool(&mut self, lin: u32) {
        self.heat[heat_of(lin)] = 0;
    }

    /// Store an entry, replacing whatever shared its slot, except that the
    /// memo of an address without a block does not evict a block.
    pub fn insert(&mut self, e: Entry) {
        self.touched = true;
        let i = slot_of(e.key);
        let group =
            self.slots[i / 64].get_or_insert_with(|| Box::new(std::array::from_fn(|_| None)));
        let s = &mut group[i % 64];
        if e.block.is_none() && s.as_ref().is_some_and(|old| old.block.is_some()) {
            return;
        }
        *s = Some(e);
        self.filled[i / 64] |= 1 << (i % 64);
    }

    /// Drop the entry for `key`.
    pub fn remove(&mut self, key: u64) {
        let i = slot_of(key);
        let Some(group) = self.slots[i / 64].as_deref_mut() else {
            return;
        };
        let s = &mut group[i % 64];
        if s.as_ref().is_some_and(|e| e.key == key) {
            *s = None;
            self.filled[i / 64] &= !(1 << (i % 64));
        }
    }

    /// Drop everything.
    pub fn clear(&mut self) {
        if !self.touched {
            return;
        }
        for (w, bits) in self.filled.iter_mut().enumerate() {
            let mut b = std::mem::take(bits);
            while b != 0 {
                if let Some(g) = self.slots[w].as_deref_mut() {
                    g[b.trailing_zeros() as usize] = None;
                }
                b &= b - 1;
            }
        }
        self.heat.iter_mut().for_each(|h| *h = 0);
        self.arena.reset();
        self.touched = false;
    }

    /// Put a block's host code in the arena, first clearing the whole
    /// cache if the arena has reached its cap (the bytes of retired
    /// blocks are only reclaimed that way).
    pub fn put(&mut self, code: &Emitted) -> std::io::Result<Code> {
        if self.arena.mapped() >= ARENA_CAP {
            self.touched = true;
            self.clear();
        }
        self.touched = true;
        self.arena.put(code)
    }

    /// Run `code` (a block of this cache) on `st`.
    pub fn call(&self, code: &Code, st: &mut State, guest: Option<Guest<'_>>) {
        self.arena.call(code, st, guest);
    }

    /// Translated blocks held (valid or not yet found stale).
    pub fn blocks(&self) -> usize {
        self.slots
            .iter()
            .flatten()
            .flat_map(|g| g.iter())
            .filter(|s| s.as_ref().is_some_and(|e| e.block.is_some()))
            .count()
    }
}
