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

/// A TLB entry as the native tier reads it (layout fixed for host code).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct NativeEntry {
    /// Linear page number + 1 (0 = empty).
    pub tag: u32,
    /// Physical page base.
    pub phys: u32,
    /// The accesses that hit without side effects: [`RIGHT_SUP_READ`],
    /// [`RIGHT_SUP_WRITE`], [`RIGHT_USER_READ`], [`RIGHT_USER_WRITE`].
    /// None when the page is not wholly plain RAM.
    pub rights: u32,
    _pad: u32,
}

/// A supervisor read hits.
pub(crate) const RIGHT_SUP_READ: u32 = 1;
/// A supervisor write hits.
pub(crate) const RIGHT_SUP_WRITE: u32 = 2;
/// A user read hits.
pub(crate) const RIGHT_USER_READ: u32 = 4;
/// A user write hits.
pub(crate) const RIGHT_USER_WRITE: u32 = 8;

const _: () = assert!(size_of::<NativeEntry>() == 16);

/// The translation lookaside buffer.
#[derive(Clone, Debug)]
pub struct Tlb {
    entries: Box<[Entry; TLB_SIZE]>,
    native: Box<[NativeEntry; TLB_SIZE]>,
    /// An entry was filled since the last flush: a flush of an empty TLB
    /// costs nothing (the kernel flushes after every mapping change while
    /// it builds a process, before anything was translated).
    filled: bool,
}

impl Default for Tlb {
    fn default() -> Self {
        Tlb {
            entries: Box::new([EMPTY; TLB_SIZE]),
            native: Box::new([NativeEntry::default(); TLB_SIZE]),
            filled: false,
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
        if !std::mem::take(&mut self.filled) {
            return;
        }
        self.entries.iter_mut().for_each(|e| *e = EMPTY);
        self.native
            .iter_mut()
            .for_each(|e| *e = NativeEntry::default());
    }

    /// The native tier's view of the entries (slot = linear page mod 256).
    pub(crate) fn native(&self) -> &[NativeEntry; TLB_SIZE] {
        &self.native
    }

    /// Drop the translation of one linear address (INVLPG).
    pub fn flush_page(&mut self, lin: u32) {
        let e = &mut self.entries[((lin >> 12) as usize) % TLB_SIZE];
        if e.tag == (lin >> 12) + 1 {
            *e = EMPTY;
            self.native[((lin >> 12) as usize) % TLB_SIZE] = NativeEntry::default();
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
        let entry = Entry {
            dirty: npte & 0x40 != 0,
            ..entry
        };
        self.entries[slot] = entry;
        self.native[slot] = native_entry(entry, cr0, mem);
        self.filled = true;
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

/// The native view of `e`: a user access needs U, a write needs D
/// already set and the R/W rule of [`ok_write`]; nothing for a page that is
/// not wholly plain RAM.
fn native_entry(e: Entry, cr0: u32, mem: &PhysMem) -> NativeEntry {
    let fast = u64::from(e.phys) + 0x1000 <= mem.fast_limit();
    let sup = PageAccess {
        write: true,
        user: false,
    };
    let user = PageAccess {
        write: true,
        user: true,
    };
    let mut rights = RIGHT_SUP_READ;
    if e.dirty && ok_write(e, sup, cr0) {
        rights |= RIGHT_SUP_WRITE;
    }
    if e.user {
        rights |= RIGHT_USER_READ;
        if e.dirty && ok_write(e, user, cr0) {
            rights |= RIGHT_USER_WRITE;
        }
    }
    NativeEntry {
        tag: e.tag,
        phys: e.phys,
        rights: if fast { rights } else { 0 },
        _pad: 0,
    }
}

#[inline]
fn ok_write(e: Entry, acc: PageAccess, cr0: u32) -> bool {
    e.write || (!acc.user && cr0 & CR0_WP == 0)
}
