//! Paging and the linear arenas: the kernel's page tables in guest
//! physical memory, a frame allocator, page presence under the kernel's
//! control (so the page-not-present fault can be produced on purpose), and
//! 64 KB aligned regions of the private and DLL arenas.
//!
//! Each process has its own [`Memory`]: its page directory (CR3), page
//! tables and regions. The physical frames come from one allocator that
//! every process's `Memory` shares ([`Frames`]). A child's address space
//! ([`Memory::child`]) maps the system region's pages (the GDT and the
//! thunk page) to the same frames as its parent's, and gets its own LDT
//! pages: the LDT sits at the same linear address in every process, and
//! each process's holds its own descriptors.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

use emu::Machine;

use crate::error::KernelError;
use crate::layout::{DLL_TOP, PAGE, PRIVATE_BASE, PRIVATE_TOP, TILE, round_up};

/// Physical address of the page directory.
const PD_PHYS: u32 = 0x1000;
/// First physical frame handed out.
const FIRST_FRAME: u32 = 0x2000;

const PTE_P: u32 = 1;
const PTE_RW: u32 = 2;
const PTE_US: u32 = 4;

/// What a region of the arenas holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RegionKind {
    /// An object or segment of a loaded module.
    Module,
    /// DosAllocSeg / DosAllocHuge.
    Segment,
    /// DosAllocMem.
    Mem,
    /// Kernel data visible to the guest (environment, TIB/PIB).
    System,
}

/// A reserved range of the linear address space.
#[derive(Clone, Debug)]
pub(crate) struct Region {
    pub size: u32,
    pub kind: RegionKind,
}

/// The physical frames of the machine, shared by every process's
/// [`Memory`].
#[derive(Debug)]
pub(crate) struct Frames {
    ram_top: u32,
    next_frame: u32,
    free_frames: Vec<u32>,
}

impl Frames {
    fn take(&mut self, m: &mut Machine) -> Result<u32, KernelError> {
        // Fresh frames are still zero (RAM starts zeroed and only mapped
        // frames are ever written); reused ones are cleared.
        match self.free_frames.pop() {
            Some(f) => {
                m.write_phys(f, &[0; PAGE as usize]);
                Ok(f)
            }
            None => {
                if self.next_frame >= self.ram_top {
                    return Err(KernelError::NoMemory("physical frames"));
                }
                let f = self.next_frame;
                self.next_frame += PAGE;
                Ok(f)
            }
        }
    }
}

/// The kernel's view of one process's guest memory.
#[derive(Debug)]
pub(crate) struct Memory {
    frames: Rc<RefCell<Frames>>,
    /// Physical address of the page directory.
    pd: u32,
    /// Linear page number -> physical frame.
    pages: HashMap<u32, u32>,
    /// Pages whose frames belong to another address space too (the
    /// system region a child shares with its parent): never freed here.
    shared: HashSet<u32>,
    /// Page directory index -> page table frame.
    tables: HashMap<u32, u32>,
    pub regions: BTreeMap<u32, Region>,
}

impl Memory {
    pub fn new(ram_size: usize) -> Memory {
        Memory {
            frames: Rc::new(RefCell::new(Frames {
                ram_top: u32::try_from(ram_size).unwrap_or(u32::MAX) & !(PAGE - 1),
                next_frame: FIRST_FRAME,
                free_frames: Vec::new(),
            })),
            pd: PD_PHYS,
            pages: HashMap::new(),
            shared: HashSet::new(),
            tables: HashMap::new(),
            regions: BTreeMap::new(),
        }
    }

    /// A new address space for a child process: a page directory of its
    /// own; the pages at and above `shared_from` (the system region) map
    /// the parent's frames, except `[own, own+own_len)` (the LDT), which
    /// gets fresh zeroed frames.
    pub fn child(
        &self,
        m: &mut Machine,
        shared_from: u32,
        own: u32,
        own_len: u32,
    ) -> Result<Memory, KernelError> {
        let pd = self.frames.borrow_mut().take(m)?;
        let mut c = Memory {
            frames: Rc::clone(&self.frames),
            pd,
            pages: HashMap::new(),
            shared: HashSet::new(),
            tables: HashMap::new(),
            regions: BTreeMap::new(),
        };
        let mut system: Vec<(u32, u32)> = self
            .pages
            .iter()
            .filter(|&(&p, _)| p >= shared_from >> 12)
            .map(|(&p, &f)| (p, f))
            .collect();
        system.sort_unstable();
        let own_pages =
            (own >> 12)..((u64::from(own) + u64::from(own_len)).div_ceil(u64::from(PAGE)) as u32);
        for (page, f) in system {
            if own_pages.contains(&page) {
                continue;
            }
            let pte = match c.pte_addr(m, page << 12) {
                Ok(a) => a,
                Err(e) => {
                    c.destroy(m);
                    return Err(e);
                }
            };
            let mut parent_pte = [0u8; 4];
            if let Some(t) = self.tables.get(&(page >> 10)) {
                m.read_phys(t + (page & 0x3FF) * 4, &mut parent_pte);
            }
            let flags = u32::from_le_bytes(parent_pte) & 0xFFF;
            m.write_phys(pte, &(f | flags).to_le_bytes());
            c.pages.insert(page, f);
            c.shared.insert(page);
        }
        if let Err(e) = c.map(m, own, own_len, false) {
            c.destroy(m);
            return Err(e);
        }
        Ok(c)
    }

    /// Free every frame of this address space (its own pages, page tables
    /// and page directory): the process has ended.
    pub fn destroy(&mut self, m: &mut Machine) {
        let mut frames = self.frames.borrow_mut();
        let mut own: Vec<u32> = self
            .pages
            .iter()
            .filter(|(p, _)| !self.shared.contains(p))
            .map(|(_, &f)| f)
            .collect();
        own.sort_unstable();
        own.extend(
            self.tables
                .values()
                .copied()
                .collect::<std::collections::BTreeSet<u32>>(),
        );
        if self.pd != PD_PHYS {
            own.push(self.pd);
        }
        frames.free_frames.extend(own);
        self.pages.clear();
        self.shared.clear();
        self.tables.clear();
        self.regions.clear();
        drop(frames);
        m.flush_tlb();
    }

    /// CR3 value.
    pub fn cr3(&self) -> u32 {
        self.pd
    }

    /// Zero the page directory.
    pub fn init(&mut self, m: &mut Machine) {
        m.write_phys(self.pd, &[0; PAGE as usize]);
    }

    fn frame(&mut self, m: &mut Machine) -> Result<u32, KernelError> {
        self.frames.borrow_mut().take(m)
    }

    fn pte_addr(&mut self, m: &mut Machine, lin: u32) -> Result<u32, KernelError> {
        let pdi = lin >> 22;
        let table = match self.tables.get(&pdi) {
            Some(t) => *t,
            None => {
                let t = self.frame(m)?;
                m.write_phys(
                    self.pd + pdi * 4,
                    &(t | PTE_P | PTE_RW | PTE_US).to_le_bytes(),
                );
                self.tables.insert(pdi, t);
                t
            }
        };
        Ok(table + ((lin >> 12) & 0x3FF) * 4)
    }

    /// Map every page of `[lin, lin+len)` that is not mapped yet to a fresh
    /// zeroed frame; `user` pages are ring-3 accessible.
    pub fn map(
        &mut self,
        m: &mut Machine,
        lin: u32,
        len: u32,
        user: bool,
    ) -> Result<(), KernelError> {
        if len == 0 {
            return Ok(());
        }
        let first = lin >> 12;
        let last = (u64::from(lin) + u64::from(len) - 1) >> 12;
        for page in u64::from(first)..=last {
            let page = page as u32;
            if self.pages.contains_key(&page) {
                continue;
            }
            let f = self.frame(m)?;
            let pte = self.pte_addr(m, page << 12)?;
            let flags = PTE_P | PTE_RW | if user { PTE_US } else { 0 };
            m.write_phys(pte, &(f | flags).to_le_bytes());
            self.pages.insert(page, f);
        }
        m.flush_tlb();
        Ok(())
    }

    /// `n` fresh zeroed frames that no address space owns (a shared memory
    /// object's, `api/sharedmem.rs`); none if there are not enough.
    pub fn alloc_frames(&mut self, m: &mut Machine, n: u32) -> Result<Vec<u32>, KernelError> {
        let mut out = Vec::new();
        for _ in 0..n {
            match self.frame(m) {
                Ok(f) => out.push(f),
                Err(e) => {
                    self.free_frames(out);
                    return Err(e);
                }
            }
        }
        Ok(out)
    }

    /// Give frames from [`Memory::alloc_frames`] back to the allocator.
    pub fn free_frames(&mut self, frames: Vec<u32>) {
        self.frames.borrow_mut().free_frames.extend(frames);
    }

    /// Map the pages from `lin` on to `frames` (user pages, writable), as
    /// shared: unmapping them never frees the frames.
    pub fn map_frames(
        &mut self,
        m: &mut Machine,
        lin: u32,
        frames: &[u32],
    ) -> Result<(), KernelError> {
        for (i, &f) in frames.iter().enumerate() {
            let page = (lin >> 12) + i as u32;
            let pte = self.pte_addr(m, page << 12)?;
            m.write_phys(pte, &(f | PTE_P | PTE_RW | PTE_US).to_le_bytes());
            self.pages.insert(page, f);
            self.shared.insert(page);
        }
        m.flush_tlb();
        Ok(())
    }

    /// Fill mapped pages of `[lin, lin+len)` with `byte` through their
    /// frames (page-aligned ranges only; unmapped pages are skipped).
    pub fn fill(&mut self, m: &mut Machine, lin: u32, len: u32, byte: u8) {
        let page = vec![byte; PAGE as usize];
        for p in (lin >> 12)..((u64::from(lin) + u64::from(len)).div_ceil(u64::from(PAGE)) as u32) {
            if let Some(&f) = self.pages.get(&p) {
                m.write_phys(f, &page);
            }
        }
    }

    /// Unmap the pages of `[lin, lin+len)` and free their frames.
    pub fn unmap(&mut self, m: &mut Machine, lin: u32, len: u32) {
        if len == 0 {
            return;
        }
        let first = lin >> 12;
        let last = (u64::from(lin) + u64::from(len) - 1) >> 12;
        for page in u64::from(first)..=last {
            let page = page as u32;
            if let Some(f) = self.pages.remove(&page) {
                if let Some(t) = self.tables.get(&(page >> 10)) {
                    m.write_phys(t + (page & 0x3FF) * 4, &[0; 4]);
                }
                if !self.shared.remove(&page) {
                    self.frames.borrow_mut().free_frames.push(f);
                }
            }
        }
        m.flush_tlb();
    }

    /// The physical address `lin` maps to (present or not), if its page
    /// is mapped: the byte itself, whether this address space is on the
    /// CPU or not.
    pub fn phys(&self, lin: u32) -> Option<u32> {
        self.pages.get(&(lin >> 12)).map(|f| f | (lin & 0xFFF))
    }

    /// Is the page of `lin` mapped (present or not)?
    pub fn is_mapped(&self, lin: u32) -> bool {
        self.pages.contains_key(&(lin >> 12))
    }

    /// Is the page of `lin` mapped and present (committed)? `None` when
    /// it is not mapped.
    pub fn is_present(&self, m: &Machine, lin: u32) -> Option<bool> {
        let page = lin >> 12;
        self.pages.get(&page)?;
        let t = self.tables.get(&(page >> 10))?;
        let mut b = [0u8; 4];
        m.read_phys(t + (page & 0x3FF) * 4, &mut b);
        Some(u32::from_le_bytes(b) & 1 != 0)
    }

    /// Mark the page holding `lin` present or not present, keeping its
    /// frame. Returns false if the page is not mapped.
    pub fn set_present(&mut self, m: &mut Machine, lin: u32, present: bool) -> bool {
        let page = lin >> 12;
        let (Some(f), Some(t)) = (self.pages.get(&page), self.tables.get(&(page >> 10))) else {
            return false;
        };
        let at = t + (page & 0x3FF) * 4;
        let mut b = [0u8; 4];
        m.read_phys(at, &mut b);
        let old = u32::from_le_bytes(b);
        let new = (f & !0xFFF) | (old & 0xFFE) | u32::from(present);
        m.write_phys(at, &new.to_le_bytes());
        m.flush_tlb();
        true
    }

    /// Reserve `size` bytes (rounded up to 64 KB) of the private arena
    /// (low) or the DLL arena (high, downward from [`DLL_TOP`]).
    pub fn reserve(&mut self, size: u32, high: bool, kind: RegionKind) -> Result<u32, KernelError> {
        let size = round_up(size.max(1), TILE);
        let found = if high {
            let mut top = DLL_TOP;
            for (&b, r) in self.regions.range(..DLL_TOP).rev() {
                let end = b.saturating_add(r.size);
                if end <= top && top - end >= size {
                    break;
                }
                top = top.min(b);
            }
            top.checked_sub(size).filter(|&b| b >= PRIVATE_TOP)
        } else {
            let mut cand = PRIVATE_BASE;
            for (&b, r) in self.regions.range(PRIVATE_BASE..) {
                if b >= cand && b - cand >= size {
                    break;
                }
                cand = cand.max(b.saturating_add(r.size));
            }
            (cand.checked_add(size).is_some_and(|e| e <= PRIVATE_TOP)).then_some(cand)
        };
        let base = found.ok_or(KernelError::NoMemory("linear address space"))?;
        self.regions.insert(base, Region { size, kind });
        Ok(base)
    }

    /// Reserve exactly `[base, base+size)` (rounded out to 64 KB) if it
    /// is free and inside an arena.
    pub fn reserve_at(&mut self, base: u32, size: u32, kind: RegionKind) -> Option<u32> {
        if !base.is_multiple_of(TILE) || base < PRIVATE_BASE {
            return None;
        }
        let size = round_up(size.max(1), TILE);
        let end = base.checked_add(size).filter(|&e| e <= DLL_TOP)?;
        let clash = self
            .regions
            .range(..end)
            .next_back()
            .is_some_and(|(&b, r)| b.saturating_add(r.size) > base);
        if clash {
            return None;
        }
        self.regions.insert(base, Region { size, kind });
        Some(base)
    }

    /// The region starting at `base`.
    pub fn region(&self, base: u32) -> Option<&Region> {
        self.regions.get(&base)
    }

    /// The base of the region holding `lin`.
    pub fn region_base_of(&self, lin: u32) -> Option<u32> {
        self.regions
            .range(..=lin)
            .next_back()
            .filter(|(b, r)| lin - **b < r.size)
            .map(|(&b, _)| b)
    }

    /// Release a region and unmap its pages.
    pub fn release(&mut self, m: &mut Machine, base: u32) -> Option<Region> {
        let r = self.regions.remove(&base)?;
        self.unmap(m, base, r.size);
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_do_not_overlap() {
        let mut mem = Memory::new(1 << 20);
        let a = mem.reserve(0x100, false, RegionKind::Mem).unwrap();
        let b = mem.reserve(0x2_0000, false, RegionKind::Mem).unwrap();
        let c = mem.reserve(1, false, RegionKind::Mem).unwrap();
        assert_eq!((a, b, c), (0x1_0000, 0x2_0000, 0x4_0000));
        let d = mem.reserve(0x1_0000, true, RegionKind::Module).unwrap();
        let e = mem.reserve(0x3_0000, true, RegionKind::Module).unwrap();
        assert_eq!((d, e), (DLL_TOP - 0x1_0000, DLL_TOP - 0x4_0000));
        let mut m = Machine::new(emu::MachineConfig {
            ram_size: 1 << 20,
            ..Default::default()
        });
        mem.release(&mut m, b).unwrap();
        assert_eq!(
            mem.reserve(0x1_0000, false, RegionKind::Mem).unwrap(),
            0x2_0000
        );
    }
}
