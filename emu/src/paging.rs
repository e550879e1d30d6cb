//! Two-level 4 KB paging with a direct-mapped TLB.
//!
//! The walk sets A in both levels and D in the PTE on writes, checks U/S and
//! R/W with the 386 rule (supervisor writes ignore R/W unless CR0.WP, the
//! 486 addition, is set), and raises #PF with CR2 and the error code
//! (bit 0 protection, bit 1 write, bit 2 user). The TLB caches the combined
//! permission of both levels; it is flushed by MOV CR3, by any CR0 write that
//! changes PG/WP/PE, by task switches and by INVLPG (one entry), as the
//! architecture requires. Guests that change a PTE without flushing see the
//! stale translation, as on hardware.

use crate::cpu::CR0_WP;
use crate::fault::{Fault, R, vector};
use crate::mem::PhysMem;

const TLB_SIZE: usize = 256;

#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Linear page number + 1 (0 = empty).
    tag: u32,
    /// Physical page base.
    phys: u32,
    /// Both levels have U set.
    user: bool,
    /// Both levels have W set.
    write: bool,
    /// PTE dirty bit already set.
    dirty: bool,
}

// Size check on a hot struct: every translation reads one.
const _: () = assert!(size_of::<Entry>() == 12);

const EMPTY: Entry = Entry {
    tag: 0,
    phys: 0,
    user: false,
    write: false,
    dirty: false,
};

/// The translation lookaside buffer.
#[derive(Clone, Debug)]
pub struct Tlb {
    entries: Box<[Entry; TLB_SIZE]>,
}

impl Default for Tlb {
    fn default() -> Self {
        Tlb {
            entries: Box::new([EMPTY; TLB_SIZE]),
        }
    }
}

/// One page access request.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PageAccess {
    pub write: bool,
    pub user: bool,
}

impl Tlb {
    /// Drop every translation.
    pub fn flush(&mut self) {
        self.entries.iter_mut().for_each(|e| *e = EMPTY);
    }

    /// Drop the translation of one linear address (INVLPG).
    pub fn flush_page(&mut self, lin: u32) {
        let e = &mut self.entries[((lin >> 12) as usize) % TLB_SIZE];
        if e.tag == (lin >> 12) + 1 {
            *e = EMPTY;
        }
    }

    /// Translate `lin`; on a miss walk the tables in `mem`.
    #[inline]
    pub(crate) fn translate(
        &mut self,
        mem: &mut PhysMem,
        cr0: u32,
        cr3: u32,
        cr2: &mut u32,
        lin: u32,
        acc: PageAccess,
    ) -> R<u32> {
        let page = lin >> 12;
        let slot = (page as usize) % TLB_SIZE;
        let e = self.entries[slot];
        if e.tag == page + 1
            && (!acc.user || e.user)
            && (!acc.write || (e.dirty && ok_write(e, acc, cr0)))
        {
            return Ok(e.phys | (lin & 0xFFF));
        }
        let fault = |present: bool, cr2: &mut u32| {
            *cr2 = lin;
            let code =
                u32::from(present) | (u32::from(acc.write) << 1) | (u32::from(acc.user) << 2);
            Err(Fault::code(vector::PF, code))
        };
        let Some(w) = Walk::new(mem, cr3, lin) else {
            return fault(false, cr2);
        };
        let Walk {
            pde_addr,
            pde,
            pte_addr,
            pte,
        } = w;
        let entry = Entry {
            tag: page + 1,
            phys: pte & !0xFFF,
            user: pde & pte & 4 != 0,
            write: pde & pte & 2 != 0,
            dirty: false,
        };
        if (acc.user && !entry.user) || (acc.write && !ok_write(entry, acc, cr0)) {
            return fault(true, cr2);
        }
        if pde & 0x20 == 0 {
            mem.write(pde_addr, 4, pde | 0x20);
        }
        let mut npte = pte | 0x20;
        if acc.write {
            npte |= 0x40;
        }
        if npte != pte {
            mem.write(pte_addr, 4, npte);
        }
        self.entries[slot] = Entry {
            dirty: npte & 0x40 != 0,
            ..entry
        };
        Ok(entry.phys | (lin & 0xFFF))
    }
}

/// The two table entries of a present page: the one walk rule, for the
/// TLB's misses and the host's side-effect-free reads.
struct Walk {
    pde_addr: u32,
    pde: u32,
    pte_addr: u32,
    pte: u32,
}

impl Walk {
    /// Walk the tables at `cr3` for `lin`; None when either level is not
    /// present.
    fn new(mem: &PhysMem, cr3: u32, lin: u32) -> Option<Walk> {
        let pde_addr = (cr3 & !0xFFF).wrapping_add((lin >> 22) * 4);
        let pde = mem.read(pde_addr, 4);
        if pde & 1 == 0 {
            return None;
        }
        let pte_addr = (pde & !0xFFF).wrapping_add(((lin >> 12) & 0x3FF) * 4);
        let pte = mem.read(pte_addr, 4);
        if pte & 1 == 0 {
            return None;
        }
        Some(Walk {
            pde_addr,
            pde,
            pte_addr,
            pte,
        })
    }
}

/// The physical address of `lin` for a supervisor read, walking the
/// tables without touching the TLB, the accessed bits or CR2 (host-side
/// checks must not change the guest). #PF(0) when not present.
pub(crate) fn peek(mem: &PhysMem, cr3: u32, lin: u32) -> R<u32> {
    match Walk::new(mem, cr3, lin) {
        Some(w) => Ok((w.pte & !0xFFF) | (lin & 0xFFF)),
        None => Err(Fault::code(vector::PF, 0)),
    }
}

#[inline]
fn ok_write(e: Entry, acc: PageAccess, cr0: u32) -> bool {
    e.write || (!acc.user && cr0 & CR0_WP == 0)
}
