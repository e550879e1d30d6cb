//! A small fake [`TracedMachine`] for tests, benchmarks and `os2trace rpn run`.
//!
//! It holds the registers of a trap frame, sparse flat memory (bytes never
//! written read as zero), a table of selectors with base, limit and a
//! present bit (any other selector is invalid), pages marked not present,
//! and the traced module's objects as (selector, flat base) pairs.
//! Segmented reads check the selector, then the limit, then each page of the
//! linear range, in that order, as the 386 does.

use std::collections::{BTreeMap, BTreeSet};

use crate::machine::{FaultKind, MemFault, Reg, TracedMachine};

/// Page size used for not-present pages.
pub const PAGE_SIZE: u32 = 4096;

/// A segment descriptor of the fake machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FakeSegment {
    /// Linear base address.
    pub base: u32,
    /// Highest valid offset.
    pub limit: u32,
    /// Whether the segment is present.
    pub present: bool,
}

/// The fake machine.
#[derive(Debug, Clone, Default)]
pub struct FakeMachine {
    regs: [u32; 16],
    memory: BTreeMap<u32, u8>,
    selectors: BTreeMap<u16, FakeSegment>,
    not_present: BTreeSet<u32>,
    objects: BTreeMap<u32, (u16, u32)>,
}

impl FakeMachine {
    /// An empty machine: registers zero, memory zero, no selectors.
    pub fn new() -> FakeMachine {
        FakeMachine::default()
    }

    /// Sets a register (as the trap frame holds it).
    pub fn set_reg(&mut self, reg: Reg, value: u32) -> &mut Self {
        self.regs[reg as usize] = value;
        self
    }

    /// Stores bytes at a flat address.
    pub fn write(&mut self, address: u32, bytes: &[u8]) -> &mut Self {
        for (i, &b) in bytes.iter().enumerate() {
            self.memory.insert(address.wrapping_add(i as u32), b);
        }
        self
    }

    /// Defines a selector.
    pub fn add_selector(&mut self, selector: u16, segment: FakeSegment) -> &mut Self {
        self.selectors.insert(selector, segment);
        self
    }

    /// Marks the page containing `address` not present.
    pub fn mark_not_present(&mut self, address: u32) -> &mut Self {
        self.not_present.insert(address / PAGE_SIZE);
        self
    }

    /// Defines object `object` of the traced module.
    pub fn add_object(&mut self, object: u32, selector: u16, flat_base: u32) -> &mut Self {
        self.objects.insert(object, (selector, flat_base));
        self
    }

    fn read_linear(&self, address: u32, buf: &mut [u8]) -> Result<(), MemFault> {
        for (i, slot) in buf.iter_mut().enumerate() {
            let at = address.wrapping_add(i as u32);
            if self.not_present.contains(&(at / PAGE_SIZE)) {
                return Err(MemFault {
                    kind: FaultKind::PageNotPresent,
                    address: at,
                });
            }
            *slot = self.memory.get(&at).copied().unwrap_or(0);
        }
        Ok(())
    }
}

impl TracedMachine for FakeMachine {
    fn reg(&self, reg: Reg) -> u32 {
        self.regs[reg as usize]
    }

    #[inline]
    fn registers(&self) -> [u32; 16] {
        self.regs
    }

    #[inline]
    fn register_file(&self) -> Option<&[u32; 16]> {
        Some(&self.regs)
    }

    #[inline]
    fn gpr_file(&self) -> Option<&[u32; 8]> {
        self.regs.first_chunk()
    }

    fn read_flat(&mut self, address: u32, buf: &mut [u8]) -> Result<(), MemFault> {
        self.read_linear(address, buf)
    }

    fn read_segmented(
        &mut self,
        selector: u16,
        offset: u32,
        buf: &mut [u8],
    ) -> Result<(), MemFault> {
        let at = |offset: u32| (u32::from(selector) << 16) | (offset & 0xFFFF);
        let segment = self.selectors.get(&selector).ok_or(MemFault {
            kind: FaultKind::InvalidSelector,
            address: at(offset),
        })?;
        if !segment.present {
            return Err(MemFault {
                kind: FaultKind::SelectorNotPresent,
                address: at(offset),
            });
        }
        let last = u64::from(offset) + buf.len() as u64;
        if !buf.is_empty() && last - 1 > u64::from(segment.limit) {
            let first_bad = offset.max(segment.limit.wrapping_add(1));
            return Err(MemFault {
                kind: FaultKind::InvalidSelector,
                address: at(first_bad),
            });
        }
        self.read_linear(segment.base.wrapping_add(offset), buf)
    }

    fn object_selector(&self, object: u32) -> u16 {
        self.objects.get(&object).map_or(0, |o| o.0)
    }

    fn object_flat_base(&self, object: u32) -> u32 {
        self.objects.get(&object).map_or(0, |o| o.1)
    }
}
