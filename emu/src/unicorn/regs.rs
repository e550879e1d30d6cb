//! Moving a [`CpuState`] in and out of unicorn's register file.
//!
//! Unicorn exposes selectors, not the hidden descriptor caches: writing a
//! segment register in protected mode makes QEMU load the descriptor from
//! the GDT/LDT in guest memory (with its checks), and reading one returns
//! only the selector. [`read_state`] therefore rebuilds each cache from the
//! descriptor tables as they are now (real mode: base = selector * 16,
//! limit 0xFFFF). A cache that disagrees with its descriptor (unreal mode,
//! LOADALL, a table edited after the load) cannot be expressed.
//!
//! QEMU takes CPL from SS.DPL, and refuses (before executing anything) a
//! stack selector whose RPL is not the current CPL, so only CPL 0 states
//! can be written in protected mode.

use super::{Uc, UnicornError};
use crate::cpu::{CpuState, DescTable, SegReg, Segment};
use unicorn_engine::RegisterX86 as X;

/// EAX..EDI in x86 encoding order.
const GPRS: [X; 8] = [
    X::EAX,
    X::ECX,
    X::EDX,
    X::EBX,
    X::ESP,
    X::EBP,
    X::ESI,
    X::EDI,
];
/// ES, CS, SS, DS, FS, GS.
const SEGS: [X; 6] = [X::ES, X::CS, X::SS, X::DS, X::FS, X::GS];

/// `uc_x86_mmr` as C lays it out: u16 selector, (pad), u64 base, u32 limit,
/// u32 flags (QEMU's descriptor-high-dword flag layout).
fn mmr_bytes(selector: u16, base: u32, limit: u32, flags: u32) -> [u8; 24] {
    let mut b = [0u8; 24];
    b[0..2].copy_from_slice(&selector.to_le_bytes());
    b[8..16].copy_from_slice(&u64::from(base).to_le_bytes());
    b[16..20].copy_from_slice(&limit.to_le_bytes());
    b[20..24].copy_from_slice(&flags.to_le_bytes());
    b
}

fn mmr_parse(b: &[u8]) -> (u16, u32, u32, u32) {
    let word = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    (
        u16::from_le_bytes([b[0], b[1]]),
        word(8),
        word(16),
        word(20),
    )
}

/// QEMU's segment flags (bits 8..23 of a descriptor's high dword) from an
/// access byte and flag nibble.
fn qemu_flags(s: &Segment) -> u32 {
    (u32::from(s.access) << 8) | (u32::from(s.flags & 0xF) << 20)
}

fn seg_from_qemu(selector: u16, base: u32, limit: u32, flags: u32) -> Segment {
    Segment {
        selector,
        base,
        limit,
        access: (flags >> 8) as u8,
        flags: ((flags >> 20) & 0xF) as u8,
    }
}

fn rd(uc: &Uc<'_>, r: X) -> Result<u32, UnicornError> {
    uc.reg_read(r)
        .map(|v| v as u32)
        .map_err(|e| UnicornError::new("reg_read", e))
}

fn wr(uc: &mut Uc<'_>, r: X, v: u32) -> Result<(), UnicornError> {
    uc.reg_write(r, u64::from(v))
        .map_err(|e| UnicornError::new("reg_write", e))
}

fn rd_mmr(uc: &Uc<'_>, r: X) -> Result<(u16, u32, u32, u32), UnicornError> {
    let b = super::ffi::read_mmr(uc, r).map_err(|e| UnicornError::new("reg_read (mmr)", e))?;
    Ok(mmr_parse(&b))
}

fn wr_mmr(uc: &mut Uc<'_>, r: X, bytes: &[u8; 24]) -> Result<(), UnicornError> {
    uc.reg_write_long(r, bytes)
        .map_err(|e| UnicornError::new("reg_write_long", e))
}

/// Write `s` into unicorn. EIP is written too (the next run starts there).
pub(super) fn write_state(uc: &mut Uc<'_>, s: &CpuState) -> Result<(), UnicornError> {
    // Control registers only when they change: QEMU flushes its TLB on
    // every CR0/CR3 write.
    for (r, v) in [(X::CR0, s.cr0), (X::CR2, s.cr2), (X::CR3, s.cr3)] {
        if rd(uc, r)? != v {
            wr(uc, r, v)?;
        }
    }
    wr_mmr(
        uc,
        X::GDTR,
        &mmr_bytes(0, s.gdtr.base, u32::from(s.gdtr.limit), 0),
    )?;
    wr_mmr(
        uc,
        X::IDTR,
        &mmr_bytes(0, s.idtr.base, u32::from(s.idtr.limit), 0),
    )?;
    for (r, seg) in [(X::LDTR, &s.ldtr), (X::TR, &s.tr)] {
        wr_mmr(
            uc,
            r,
            &mmr_bytes(seg.selector, seg.base, seg.limit, qemu_flags(seg)),
        )?;
    }
    for (i, r) in GPRS.iter().enumerate() {
        wr(uc, *r, s.gpr[i])?;
    }
    wr(uc, X::EFLAGS, s.eflags)?;
    // SS first: QEMU derives CPL from it, and checks the other loads
    // against that CPL.
    for i in [2usize, 1, 0, 3, 4, 5] {
        wr(uc, SEGS[i], u32::from(s.seg[i].selector))?;
    }
    wr(uc, X::EIP, s.eip)?;
    wr(uc, X::FPCW, u32::from(s.fpu_cw))?;
    wr(uc, X::FPSW, u32::from(s.fpu_sw))?;
    // The full tag word: 11 (empty) or 00 (valid) per register.
    let tags = (0..8).fold(0u32, |w, i| {
        w | if s.fpu_tags & (1 << i) == 0 {
            3 << (2 * i)
        } else {
            0
        }
    });
    wr(uc, X::FPTAG, tags)?;
    Ok(())
}

/// The descriptor cache a load of `selector` would produce now.
fn cache_for(uc: &Uc<'_>, s: &CpuState, selector: u16, code: bool) -> Segment {
    if !s.protected() || s.v86() {
        return Segment::real(selector, code);
    }
    if selector & !3 == 0 {
        return Segment::null(selector);
    }
    let table = if selector & 4 != 0 {
        DescTable {
            base: s.ldtr.base,
            limit: s.ldtr.limit.min(0xFFFF) as u16,
        }
    } else {
        s.gdtr
    };
    let index = u32::from(selector & !7);
    if index + 7 > u32::from(table.limit) {
        return Segment::null(selector);
    }
    let mut d = [0u8; 8];
    let lin = u64::from(table.base.wrapping_add(index));
    let ok = if s.paging() {
        uc.vmem_read(lin, unicorn_engine::Prot::READ, &mut d)
            .is_ok()
    } else {
        uc.mem_read(lin, &mut d).is_ok()
    };
    if !ok {
        return Segment::null(selector);
    }
    let d = crate::seg::Descriptor(u64::from_le_bytes(d));
    Segment {
        selector,
        base: d.base(),
        limit: d.limit(),
        access: d.access(),
        flags: ((d.0 >> 52) & 0xF) as u8,
    }
}

/// The base of the GDT/LDT descriptor `selector` names now (0 if none).
pub(super) fn segment_base(uc: &Uc<'_>, selector: u16) -> u32 {
    let Ok(cr0) = rd(uc, X::CR0) else { return 0 };
    let Ok((_, base, limit, _)) = rd_mmr(uc, if selector & 4 != 0 { X::LDTR } else { X::GDTR })
    else {
        return 0;
    };
    let mut s = CpuState::reset();
    s.cr0 = cr0;
    s.gdtr = DescTable {
        base,
        limit: limit as u16,
    };
    s.ldtr.base = base;
    s.ldtr.limit = limit;
    cache_for(uc, &s, selector, true).base
}

/// Read the register file out of unicorn (see the module docs for how the
/// segment caches are rebuilt). `cpl` is QEMU's (SS.DPL in protected mode).
pub(super) fn read_state(uc: &Uc<'_>) -> Result<CpuState, UnicornError> {
    let mut s = CpuState::reset();
    for (i, r) in GPRS.iter().enumerate() {
        s.gpr[i] = rd(uc, *r)?;
    }
    s.eip = rd(uc, X::EIP)?;
    s.eflags = rd(uc, X::EFLAGS)?;
    s.cr0 = rd(uc, X::CR0)?;
    s.cr2 = rd(uc, X::CR2)?;
    s.cr3 = rd(uc, X::CR3)?;
    s.cr4 = rd(uc, X::CR4)?;
    let (_, base, limit, _) = rd_mmr(uc, X::GDTR)?;
    s.gdtr = DescTable {
        base,
        limit: limit as u16,
    };
    let (_, base, limit, _) = rd_mmr(uc, X::IDTR)?;
    s.idtr = DescTable {
        base,
        limit: limit as u16,
    };
    let (sel, base, limit, flags) = rd_mmr(uc, X::LDTR)?;
    s.ldtr = seg_from_qemu(sel, base, limit, flags);
    let (sel, base, limit, flags) = rd_mmr(uc, X::TR)?;
    s.tr = seg_from_qemu(sel, base, limit, flags);
    for (i, r) in SEGS.iter().enumerate() {
        let sel = rd(uc, *r)? as u16;
        s.seg[i] = cache_for(uc, &s, sel, i == SegReg::Cs as usize);
    }
    s.cpl = if s.protected() && !s.v86() {
        s.seg[SegReg::Ss as usize].dpl()
    } else {
        0
    };
    s.fpu_cw = rd(uc, X::FPCW)? as u16;
    s.fpu_sw = rd(uc, X::FPSW)? as u16;
    let tags = rd(uc, X::FPTAG)?;
    s.fpu_tags = (0..8).fold(0u8, |b, i| {
        b | if (tags >> (2 * i)) & 3 == 3 {
            0
        } else {
            1 << i
        }
    });
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mmr_round_trip() {
        let b = mmr_bytes(0x28, 0x1234_5678, 0xFFFF, 0x00C0_9300);
        assert_eq!(mmr_parse(&b), (0x28, 0x1234_5678, 0xFFFF, 0x00C0_9300));
        let s = seg_from_qemu(0x10, 0, 0xFFFF_FFFF, 0x00CF_9300);
        assert_eq!((s.access, s.flags), (0x93, 0xC));
        assert_eq!(qemu_flags(&s), 0x00C0_9300);
    }
}
