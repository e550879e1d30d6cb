//! The descriptor cache of the native tier: per selector (and CPL), what a
//! protected-mode segment load or far transfer would load, for the loads
//! that need nothing but the descriptor read (no fault, no accessed-bit
//! write, no privilege change, no gate).
//!
//! An entry is made from the descriptor as the interpreter would read it
//! (GDT or LDT, the table limit), without side effects, when the host code
//! left a block just before a load it missed (see
//! [`Machine::dcache_fill_for`]); the interpreter then runs that load. Only
//! descriptors whose accessed bit is already set are kept, so a hit never
//! has a descriptor write to do, and only the outcomes that load:
//!
//! - [`DK_DATA`]: MOV/POP to DS, ES, FS, GS: a null selector, or a
//!   present data or readable code segment the RPL and CPL may use (as
//!   `Machine::load_sreg`);
//! - [`DK_CODE`]: far CALL/JMP to a present code segment at the CPL
//!   (conforming with DPL <= CPL, or non-conforming with RPL <= CPL and
//!   DPL = CPL), as `Machine::far_transfer`;
//! - [`DK_RET`]: the same with RPL = CPL, a far RET that stays at the CPL
//!   (`Machine::far_return`);
//! - [`DK_STACK`]: MOV/POP/LSS to SS: a present writable data segment
//!   with RPL = DPL = CPL.
//!
//! Validity. The descriptor's bytes: its physical page is marked as a code
//! page, so any store there (guest, interpreter or host) bumps the page's
//! icache generation, and the cache is dropped when a watched page's
//! generation moved. The tables: GDTR, LDTR and the paging switch are
//! remembered, and the cache is dropped when one changed (LGDT, LLDT, a
//! task switch, CR0). The mapping: with paging on, the host code uses an
//! entry only while the TLB maps the descriptor's linear page to the
//! frame it was read from, with a supervisor read that hits (the
//! interpreter's read then has no side effect either). The CPL is part of
//! the tag. `Jit::clear` drops it all.
//!
//! Every other case (a miss, a gate, a TSS, a privilege change, a
//! not-present or wrong-type segment, a null selector for a transfer, a
//! clear accessed bit, an offset past the target's limit) leaves the block
//! just before the instruction, which the interpreter then runs.

use super::native::{
    DCACHE_SLOTS, DK_CODE, DK_DATA, DK_NO_READ, DK_RET, DK_STACK, DTAG_VALID, DescEntry, SegCheck,
};
use crate::cpu::{SegReg, Segment};
use crate::machine::Machine;
use crate::seg::Descriptor;

/// The descriptor tables the entries were read through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tables {
    gdt: (u32, u16),
    ldt: (u16, u32, u32, u8),
    paging: bool,
}

/// The cache: the host code's entries and, per slot, the segment a hit
/// loads.
pub(crate) struct DescCache {
    /// What the host code reads.
    pub entries: Box<[DescEntry; DCACHE_SLOTS]>,
    /// The segment register contents of each entry (the selector is the
    /// entry's; a far transfer's CS gets the CPL as RPL).
    segs: Vec<Segment>,
    /// The tables of the entries (None: empty).
    tables: Option<Tables>,
    /// Watched physical pages with their icache generation.
    pages: Vec<(u32, u32)>,
}

impl Default for DescCache {
    fn default() -> Self {
        DescCache {
            entries: Box::new([DescEntry::default(); DCACHE_SLOTS]),
            segs: vec![Segment::null(0); DCACHE_SLOTS],
            tables: None,
            pages: Vec::new(),
        }
    }
}

impl DescCache {
    /// Drop every entry.
    pub fn clear(&mut self) {
        if self.tables.is_some() {
            self.entries.fill(DescEntry::default());
            self.tables = None;
            self.pages.clear();
        }
    }

    /// The segment a hit on `sel` at `cpl` loads (CS of a far transfer:
    /// the CPL as RPL), if the slot holds it.
    pub fn segment(&self, sel: u16, cpl: u8, cs: bool) -> Option<Segment> {
        let slot = slot_of(sel);
        (self.entries[slot].tag == tag_of(sel, cpl)).then(|| {
            let s = self.segs[slot];
            if cs {
                Segment {
                    selector: (sel & !3) | u16::from(cpl),
                    ..s
                }
            } else {
                s
            }
        })
    }
}

fn slot_of(sel: u16) -> usize {
    usize::from(sel >> 3) & (DCACHE_SLOTS - 1)
}

/// The tag of `sel` at `cpl`.
pub(crate) fn tag_of(sel: u16, cpl: u8) -> u32 {
    u32::from(sel) | (u32::from(cpl) << 16) | DTAG_VALID
}

/// The host code's check of a segment register holding `s` (see
/// `Machine::seg_check`): its read and write offset ranges (as
/// `Segment::contains` and, where `typed`, `Segment::permits`) and base.
pub(crate) fn seg_check_of(s: &Segment, typed: bool) -> SegCheck {
    // Offsets whose first byte is inside the limit (as u64: an
    // expand-down segment with the top limit has none).
    let (lo, hi): (u64, u64) = if s.expand_down() {
        let top: u64 = if s.big() { 0xFFFF_FFFF } else { 0xFFFF };
        (u64::from(s.limit) + 1, top)
    } else {
        (0, u64::from(s.limit))
    };
    let range = |ok: bool| {
        if ok && lo <= hi {
            (lo as u32, hi as u32)
        } else {
            (1, 0)
        }
    };
    let (rlo, rhi) = range(!typed || s.readable());
    let (wlo, whi) = range(!typed || s.writable());
    SegCheck {
        rlo,
        rhi,
        wlo,
        whi,
        base: s.base,
        _pad: 0,
    }
}

impl Machine {
    fn desc_tables(&self) -> Tables {
        let l = &self.cpu.ldtr;
        Tables {
            gdt: (self.cpu.gdtr.base, self.cpu.gdtr.limit),
            ldt: (l.selector, l.base, l.limit, l.access),
            paging: self.cpu.paging(),
        }
    }

    /// Drop the descriptor cache if a watched page was written or the
    /// tables changed since its entries were made.
    pub(super) fn dcache_validate(&mut self) {
        let d = &self.jit.desc;
        let Some(t) = d.tables else {
            return;
        };
        let stale = t != self.desc_tables()
            || d.pages
                .iter()
                .any(|&(p, g)| self.icache.generation(p) != g || !self.mem.is_code_page(p));
        if stale {
            self.jit.desc.clear();
        }
    }

    /// Make the entry for `sel` at the current CPL if its load needs no
    /// more than the descriptor read (see the module doc); otherwise leave
    /// the slot as it is. No effect on the guest.
    pub(super) fn dcache_fill(&mut self, sel: u16) {
        if !self.cpu.protected() || self.cpu.v86() {
            return;
        }
        self.flush_dirty();
        self.dcache_validate();
        let cpl = self.cpu.cpl;
        let slot = slot_of(sel);
        let mut e = DescEntry {
            tag: tag_of(sel, cpl),
            ..DescEntry::default()
        };
        let tables = self.desc_tables();
        if sel & !3 == 0 {
            let seg = Segment::null(sel);
            e.kinds = DK_DATA | DK_NO_READ;
            e.check = seg_check_of(&seg, true);
            self.dcache_store(slot, e, seg, tables, None);
            return;
        }
        let Ok(lin) = self.desc_addr(sel) else {
            return;
        };
        // Both dwords in one page, read from plain RAM.
        if lin & 0xFFF > 0xFF8 {
            return;
        }
        let phys = if tables.paging {
            match crate::paging::peek(&self.mem, self.cpu.cr3, lin) {
                Ok(p) => p,
                Err(_) => return,
            }
        } else {
            lin
        };
        if u64::from(phys) + 8 > self.mem.fast_limit() {
            return;
        }
        let raw = u64::from(self.mem.read(phys, 4)) | (u64::from(self.mem.read(phys + 4, 4)) << 32);
        let d = Descriptor(raw);
        let a = d.access();
        if !d.is_segment() || !d.present() || a & 1 == 0 {
            return;
        }
        let (rpl, dpl) = ((sel & 3) as u8, d.dpl());
        let code = a & 8 != 0;
        let conforming = code && a & 4 != 0;
        if (!code || a & 2 != 0) && (conforming || (rpl <= dpl && cpl <= dpl)) {
            e.kinds |= DK_DATA;
        }
        if a & 0x1A == 0x12 && rpl == cpl && dpl == cpl {
            e.kinds |= DK_STACK;
        }
        if code
            && (if conforming {
                dpl <= cpl
            } else {
                rpl <= cpl && dpl == cpl
            })
        {
            e.kinds |= DK_CODE;
            if rpl == cpl {
                e.kinds |= DK_RET;
            }
        }
        if e.kinds == 0 {
            return;
        }
        let seg = d.to_segment(sel);
        e.check = seg_check_of(&seg, true);
        e.limit = d.limit();
        e.tlb_tag = (lin >> 12) + 1;
        e.tlb_off = ((lin >> 12) & 0xFF) * 16;
        e.frame = phys & !0xFFF;
        self.dcache_store(slot, e, seg, tables, Some(phys >> 12));
    }

    fn dcache_store(
        &mut self,
        slot: usize,
        e: DescEntry,
        seg: Segment,
        tables: Tables,
        page: Option<u32>,
    ) {
        if let Some(p) = page {
            self.mem.mark_code(p);
            let g = self.icache.generation(p);
            let d = &mut self.jit.desc;
            if !d.pages.iter().any(|&(q, _)| q == p) {
                d.pages.push((p, g));
            }
        }
        let d = &mut self.jit.desc;
        d.tables = Some(tables);
        d.entries[slot] = e;
        d.segs[slot] = seg;
    }

    /// After the host code left just before a segment load or far
    /// transfer, make the cache entry for the selector it would use (read
    /// without side effects; nothing when that read would fault).
    pub(super) fn dcache_fill_for(&mut self, op: DescUse) {
        let peek16 = |m: &Machine, seg: SegReg, off: u32| {
            let mut b = [0u8; 2];
            let lin = m.cpu.seg[seg].base.wrapping_add(off);
            m.peek_linear(lin, &mut b)
                .ok()
                .map(|_| u16::from_le_bytes(b))
        };
        let sel = match op {
            DescUse::Selector(s) => Some(s),
            DescUse::At(seg, off) => peek16(self, seg, off),
        };
        if let Some(s) = sel {
            self.dcache_fill(s);
        }
    }
}

/// Where the selector of a missed load is.
#[derive(Clone, Copy, Debug)]
pub(crate) enum DescUse {
    /// Known.
    Selector(u16),
    /// The word at this segment and offset.
    At(SegReg, u32),
}
