//! Paging and the linear arenas: the kernel's page tables in guest
//! physical memory, a frame allocator, page presence under the kernel's
//! control (so the page-not-present fault can be produced on purpose), and
//! 64 KB aligned regions of the private and DLL arenas.

use std::collections::{BTreeMap, HashMap};

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

/// The kernel's view of guest memory.
#[derive(Debug)]
pub(crate) struct Memory {
    ram_top: u32,
    next_frame: u32,
    free_frames: Vec<u32>,
    /// Linear page number -> physical frame.
    pages: HashMap<u32, u32>,
    /// Page directory index -> page table frame.
    tables: HashMap<u32, u32>,
    pub regions: BTreeMap<u32, Region>,
}

impl Memory {
    pub fn new(ram_size: usize) -> Memory {
        Memory {
            ram_top: u32::try_from(ram_size).unwrap_or(u32::MAX) & !(PAGE - 1),
            next_frame: FIRST_FRAME,
            free_frames: Vec::new(),
            pages: HashMap::new(),
            tables: HashMap::new(),
            regions: BTreeMap::new(),
        }
    }

    /// CR3 value.
    pub fn cr3(&self) -> u32 {
        PD_PHYS
    }

    /// Zero the page directory.
    pub fn init(&mut self, m: &mut Machine) {
        m.write_phys(PD_PHYS, &[0; PAGE as usize]);
    }

    fn frame(&mut self, m: &mut Machine) -> Result<u32, KernelError> {
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

    fn pte_addr(&mut self, m: &mut Machine, lin: u32) -> Result<u32, KernelError> {
        let pdi = lin >> 22;
        let table = match self.tables.get(&pdi) {
            Some(t) => *t,
            None => {
                let t = self.frame(m)?;
                m.write_phys(
                    PD_PHYS + pdi * 4,
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
                self.free_frames.push(f);
            }
        }
        m.flush_tlb();
    }

    /// Is the page of `lin` mapped (present or not)?
    pub fn is_mapped(&self, lin: u32) -> bool {
        self.pages.contains_key(&(lin >> 12))
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
