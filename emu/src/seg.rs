//! Segmentation: descriptors read from the GDT/LDT in guest memory, and
//! segment register loads with the protected-mode type, privilege and
//! presence checks (#GP/#SS/#NP/#TS with selector error codes).
//!
//! Real mode and V86 loads set only selector and base (base = selector*16),
//! keeping limit and attributes, as the 386 does ("unreal" mode works).
//! Protected-mode loads set the descriptor's accessed bit in memory.

use crate::cpu::{Access, SegReg, Segment};
use crate::fault::{Fault, R};
use crate::machine::Machine;

/// A raw 8-byte descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor(pub u64);

impl Descriptor {
    /// A code, data or system descriptor for `base` and the byte-granular
    /// `limit`: above 1 MB the limit is stored in 4 KB units with G set
    /// (its low 12 bits are then taken as ones). `flags` gives the other
    /// bits of the flags nibble: D/B (0x4) and AVL (0x1).
    pub fn encode(base: u32, limit: u32, access: u8, flags: u8) -> Descriptor {
        let (limit, g) = if limit > 0xF_FFFF {
            (limit >> 12, 0x8)
        } else {
            (limit, 0)
        };
        Descriptor(
            u64::from(limit & 0xFFFF)
                | (u64::from(base & 0xFF_FFFF) << 16)
                | (u64::from(access) << 40)
                | (u64::from((limit >> 16) & 0xF) << 48)
                | (u64::from((flags | g) & 0xF) << 52)
                | (u64::from(base >> 24) << 56),
        )
    }
    /// Access byte.
    pub fn access(self) -> u8 {
        (self.0 >> 40) as u8
    }
    /// Segment base.
    pub fn base(self) -> u32 {
        (((self.0 >> 16) & 0xFF_FFFF) | ((self.0 >> 56) << 24)) as u32
    }
    /// Byte-granular limit.
    pub fn limit(self) -> u32 {
        let l = ((self.0 & 0xFFFF) | ((self.0 >> 32) & 0xF_0000)) as u32;
        if self.0 & (1 << 55) != 0 {
            (l << 12) | 0xFFF
        } else {
            l
        }
    }
    /// Descriptor privilege level.
    pub fn dpl(self) -> u8 {
        (self.access() >> 5) & 3
    }
    /// Present.
    pub fn present(self) -> bool {
        self.access() & 0x80 != 0
    }
    /// Code/data (S=1).
    pub fn is_segment(self) -> bool {
        self.access() & 0x10 != 0
    }
    /// System type nibble (S=0 descriptors).
    pub fn sys_type(self) -> u8 {
        self.access() & 0xF
    }
    /// Gate: target selector.
    pub fn gate_selector(self) -> u16 {
        (self.0 >> 16) as u16
    }
    /// Gate: target offset (386 gates use all 32 bits).
    pub fn gate_offset(self) -> u32 {
        let lo = (self.0 & 0xFFFF) as u32;
        if self.sys_type() & 8 != 0 {
            lo | (((self.0 >> 48) as u32) << 16)
        } else {
            lo
        }
    }
    /// Call gate parameter count.
    pub fn gate_params(self) -> u32 {
        ((self.0 >> 32) & 0x1F) as u32
    }
    /// As a segment cache for `selector`.
    pub fn to_segment(self, selector: u16) -> Segment {
        Segment {
            selector,
            base: self.base(),
            limit: self.limit(),
            access: self.access(),
            flags: ((self.0 >> 52) & 0xF) as u8,
        }
    }
}

impl Machine {
    /// The linear address of `sel`'s descriptor in the GDT or LDT
    /// (#GP(sel) without an LDT or beyond the table limit).
    pub(crate) fn desc_addr(&self, sel: u16) -> R<u32> {
        let (base, limit) = if sel & 4 != 0 {
            let l = self.cpu.ldtr;
            if l.selector & !3 == 0 || !l.present() {
                return Err(Fault::gp(u32::from(sel & !3)));
            }
            (l.base, l.limit)
        } else {
            (self.cpu.gdtr.base, u32::from(self.cpu.gdtr.limit))
        };
        let idx = u32::from(sel & !7);
        if idx + 7 > limit {
            return Err(Fault::gp(u32::from(sel & !3)));
        }
        Ok(base.wrapping_add(idx))
    }

    /// Read the descriptor for `sel` (#GP(sel) beyond the table limit).
    pub(crate) fn read_desc(&mut self, sel: u16) -> R<(Descriptor, u32)> {
        let addr = self.desc_addr(sel)?;
        let lo = self.sys_read(addr, 4)?;
        let hi = self.sys_read(addr.wrapping_add(4), 4)?;
        Ok((Descriptor(u64::from(lo) | (u64::from(hi) << 32)), addr))
    }

    /// Set the accessed bit of a code/data descriptor at `addr`.
    pub(crate) fn touch_desc(&mut self, d: Descriptor, addr: u32) -> R<()> {
        if d.access() & 1 == 0 {
            self.sys_write(addr.wrapping_add(5), 1, u32::from(d.access() | 1))?;
        }
        Ok(())
    }

    /// MOV/POP/LxS to a segment register (not CS).
    pub(crate) fn load_sreg(&mut self, s: SegReg, sel: u16) -> R<()> {
        if !self.cpu.protected() || self.cpu.v86() {
            let v86 = self.cpu.v86();
            let seg = &mut self.cpu.seg[s];
            seg.selector = sel;
            seg.base = u32::from(sel) << 4;
            if v86 {
                *seg = Segment {
                    flags: 0,
                    limit: 0xFFFF,
                    access: if s == SegReg::Cs { 0xFB } else { 0xF3 },
                    ..*seg
                };
            }
            return Ok(());
        }
        let err = u32::from(sel & !3);
        let rpl = (sel & 3) as u8;
        let cpl = self.cpu.cpl;
        if s == SegReg::Ss {
            if sel & !3 == 0 {
                return Err(Fault::gp(0));
            }
            let (d, addr) = self.read_desc(sel)?;
            let writable = d.is_segment() && d.access() & 0x1A == 0x12;
            if rpl != cpl || !writable || d.dpl() != cpl {
                return Err(Fault::gp(err));
            }
            if !d.present() {
                return Err(Fault::ss(err));
            }
            self.touch_desc(d, addr)?;
            self.cpu.seg[SegReg::Ss] = Descriptor(d.0 | (1 << 40)).to_segment(sel);
            return Ok(());
        }
        if sel & !3 == 0 {
            self.cpu.seg[s] = Segment::null(sel);
            return Ok(());
        }
        let (d, addr) = self.read_desc(sel)?;
        let a = d.access();
        let code = a & 0x08 != 0;
        let ok_type = d.is_segment() && (!code || a & 2 != 0);
        let conforming = code && a & 4 != 0;
        if !ok_type || (!conforming && (rpl > d.dpl() || cpl > d.dpl())) {
            return Err(Fault::gp(err));
        }
        if !d.present() {
            return Err(Fault::np(err));
        }
        self.touch_desc(d, addr)?;
        self.cpu.seg[s] = Descriptor(d.0 | (1 << 40)).to_segment(sel);
        Ok(())
    }

    /// After a return to an outer level: data segment registers the new CPL
    /// may not use are loaded with null.
    pub(crate) fn scrub_data_segs(&mut self) {
        let cpl = self.cpu.cpl;
        for s in [SegReg::Es, SegReg::Ds, SegReg::Fs, SegReg::Gs] {
            let seg = self.cpu.seg[s];
            let data_or_nc = !seg.is_code() || !seg.conforming();
            if seg.present() && data_or_nc && seg.dpl() < cpl {
                self.cpu.seg[s] = Segment::null(0);
            }
        }
    }

    /// Validate a stack segment selector for privilege level `pl` as a
    /// stack switch does (#TS / #SS).
    pub(crate) fn check_stack_sel(&mut self, sel: u16, pl: u8) -> R<Segment> {
        let err = u32::from(sel & !3);
        if sel & !3 == 0 {
            return Err(Fault::ts(0));
        }
        let (d, addr) = self.read_desc(sel).map_err(|_| Fault::ts(err))?;
        let writable = d.is_segment() && d.access() & 0x1A == 0x12;
        if (sel & 3) as u8 != pl || d.dpl() != pl || !writable {
            return Err(Fault::ts(err));
        }
        if !d.present() {
            return Err(Fault::ss(err));
        }
        self.touch_desc(d, addr)?;
        Ok(Descriptor(d.0 | (1 << 40)).to_segment(sel))
    }

    /// Validate a code segment selector for a transfer and return its
    /// descriptor (#GP(sel) on type/privilege, #NP(sel) when absent).
    pub(crate) fn code_desc(&mut self, sel: u16) -> R<(Descriptor, u32)> {
        if sel & !3 == 0 {
            return Err(Fault::gp(0));
        }
        let (d, addr) = self.read_desc(sel)?;
        if !d.is_segment() || d.access() & 8 == 0 {
            return Err(Fault::gp(u32::from(sel & !3)));
        }
        Ok((d, addr))
    }

    /// The inner stack for privilege `pl` from the current TSS.
    pub(crate) fn tss_stack(&mut self, pl: u8) -> R<(u16, u32)> {
        let tr = self.cpu.tr;
        let err = u32::from(tr.selector & !3);
        if tr.access & 8 != 0 {
            let off = 4 + u32::from(pl) * 8;
            if off + 5 > tr.limit {
                return Err(Fault::ts(err));
            }
            let esp = self.sys_read(tr.base.wrapping_add(off), 4)?;
            let ss = self.sys_read(tr.base.wrapping_add(off + 4), 2)?;
            Ok((ss as u16, esp))
        } else {
            let off = 2 + u32::from(pl) * 4;
            if off + 3 > tr.limit {
                return Err(Fault::ts(err));
            }
            let sp = self.sys_read(tr.base.wrapping_add(off), 2)?;
            let ss = self.sys_read(tr.base.wrapping_add(off + 2), 2)?;
            Ok((ss as u16, sp))
        }
    }

    /// Load CS with a checked code descriptor at privilege `cpl`.
    pub(crate) fn set_cs(&mut self, d: Descriptor, addr: u32, sel: u16, cpl: u8) -> R<()> {
        self.touch_desc(d, addr)?;
        self.cpu.seg[SegReg::Cs] =
            Descriptor(d.0 | (1 << 40)).to_segment((sel & !3) | u16::from(cpl));
        self.cpu.cpl = cpl;
        Ok(())
    }
}

/// Host-side address checks: what the kernel and the trace runtime ask of
/// a guest selector. They use the CPU's own descriptor lookup and limit
/// rule ([`Segment::contains`]) but change nothing: no accessed bit, no
/// TLB fill, CR2 untouched.
impl Machine {
    /// The segment a data-segment register load of `selector` would give,
    /// checked for `access` but not loaded. The host is the kernel, so
    /// privilege (RPL, CPL, DPL) is not checked. Errors: #GP(0) for a null
    /// selector; #GP(selector) past the table, for a system descriptor or
    /// a type that does not allow `access` (execute-only code for a read,
    /// code or read-only data for a write); #NP(selector) when not
    /// present; #PF(0) when the table itself is not mapped. In real and
    /// V86 mode a selector is a paragraph with a 64 KB limit.
    pub fn segment_of(&self, selector: u16, access: Access) -> Result<Segment, Fault> {
        if !self.cpu.protected() || self.cpu.v86() {
            return Ok(Segment::real(selector, false));
        }
        if selector & !3 == 0 {
            return Err(Fault::gp(0));
        }
        let addr = self.desc_addr(selector)?;
        let mut raw = [0u8; 8];
        self.peek_linear(addr, &mut raw)?;
        let seg = Descriptor(u64::from_le_bytes(raw)).to_segment(selector);
        // Type first, as the CPU checks it: present is asked of a
        // usable type only.
        let typed = Segment {
            access: seg.access | 0x80,
            ..seg
        };
        if !typed.permits(access) {
            return Err(Fault::gp(u32::from(selector & !3)));
        }
        if !seg.present() {
            return Err(Fault::np(u32::from(selector & !3)));
        }
        Ok(seg)
    }

    /// The linear address of `selector:offset` if `len` bytes there may be
    /// accessed as `access` (see [`Machine::segment_of`] for the selector
    /// errors; outside the limit, expand-down segments included, is
    /// #GP(0)). An empty range checks only the selector.
    pub fn resolve(
        &self,
        selector: u16,
        offset: u32,
        len: u32,
        access: Access,
    ) -> Result<u32, Fault> {
        let seg = self.segment_of(selector, access)?;
        if !seg.contains(offset, len) {
            return Err(Fault::gp(0));
        }
        Ok(seg.base.wrapping_add(offset))
    }
}
