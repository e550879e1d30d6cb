//! Host-side address checks: `Machine::resolve` and `Machine::segment_of`
//! give the CPU's own answer for a selector (the same descriptor lookup and
//! limit rule as a segment load and access) and change nothing.

mod common;

use common::*;
use emu::{Access, Fault, Limits, Segment, vector};

#[test]
fn resolve_follows_the_limit_and_expand_down_rules() {
    let m = prot_machine(&[0xF4]);
    // SMALL: base 0x10000, limit 0xFFF.
    assert_eq!(m.resolve(SMALL, 0, 0x1000, Access::Read), Ok(0x10000));
    assert_eq!(m.resolve(SMALL, 0xFFC, 4, Access::Write), Ok(0x10FFC));
    assert_eq!(m.resolve(SMALL, 0xFFD, 4, Access::Read), Err(Fault::gp(0)));
    assert_eq!(
        m.resolve(SMALL, u32::MAX, 2, Access::Read),
        Err(Fault::gp(0))
    );
    // An empty range checks only the selector.
    assert_eq!(m.resolve(SMALL, 0x5000, 0, Access::Read), Ok(0x15000));
    // EXPDOWN: 16-bit expand-down, limit 0xFFF: offsets 0x1000..=0xFFFF.
    assert_eq!(
        m.resolve(EXPDOWN, 0xFFF, 1, Access::Read),
        Err(Fault::gp(0))
    );
    assert_eq!(m.resolve(EXPDOWN, 0x1000, 1, Access::Read), Ok(0x11000));
    assert_eq!(m.resolve(EXPDOWN, 0xFFFE, 2, Access::Write), Ok(0x1FFFE));
    assert_eq!(
        m.resolve(EXPDOWN, 0xFFFF, 2, Access::Read),
        Err(Fault::gp(0))
    );
}

#[test]
fn resolve_agrees_with_the_cpu_on_every_offset_near_the_limits() {
    // The guest's own accesses and the host's check give the same verdict.
    for (sel, probe) in [(SMALL, 0xFF0u32), (EXPDOWN, 0xFF0), (EXPDOWN, 0xFFF0)] {
        for off in probe..probe + 0x20 {
            for len in [1u32, 2, 4] {
                let mut m = prot_machine(&[]);
                m.load_segment(emu::SegReg::Es, sel).unwrap();
                let host = m.resolve(sel, off, len, Access::Read).is_ok();
                let mut buf = vec![0; len as usize];
                let cpu = m.read_virt(emu::SegReg::Es, off, &mut buf).is_ok();
                assert_eq!(host, cpu, "{sel:#x}:{off:#x} len {len}");
            }
        }
    }
}

#[test]
fn selector_errors_are_those_of_a_segment_load() {
    let m = prot_machine(&[]);
    assert_eq!(m.resolve(0, 0, 1, Access::Read), Err(Fault::gp(0)));
    assert_eq!(m.resolve(3, 0, 1, Access::Read), Err(Fault::gp(0)));
    assert_eq!(
        m.segment_of(ABSENT, Access::Read),
        Err(Fault::np(u32::from(ABSENT)))
    );
    // A system descriptor, a selector past the GDT, and an LDT selector
    // without an LDT are not segments.
    assert_eq!(
        m.resolve(TSS, 0, 1, Access::Read),
        Err(Fault::gp(u32::from(TSS)))
    );
    assert_eq!(m.resolve(0x400, 0, 1, Access::Read), Err(Fault::gp(0x400)));
    assert_eq!(m.resolve(0x0C, 0, 1, Access::Read), Err(Fault::gp(0x0C)));
    // Code is readable (R set) but not writable.
    assert_eq!(m.resolve(CODE32, 0x2000, 1, Access::Read), Ok(0x2000));
    assert_eq!(
        m.resolve(CODE32, 0x2000, 1, Access::Write),
        Err(Fault::gp(u32::from(CODE32)))
    );
    // The host is the kernel: RPL and DPL are not checked.
    assert_eq!(m.resolve(DATA3, 0x40, 4, Access::Write), Ok(0x40));
}

#[test]
fn an_execute_only_code_segment_is_not_readable() {
    let mut m = prot_machine(&[]);
    // Replace SMALL with execute-only code.
    let sel = SMALL;
    m.write_phys(
        GDT + u32::from(sel),
        &desc(0x10000, 0xFFF, 0x98, 0x4).to_le_bytes(),
    );
    assert_eq!(
        m.resolve(sel, 0, 1, Access::Read),
        Err(Fault::gp(u32::from(sel)))
    );
}

#[test]
fn real_mode_selectors_are_paragraphs() {
    let m = real_machine(&[0xF4]);
    assert_eq!(m.resolve(0x1234, 0x10, 2, Access::Read), Ok(0x12350));
    assert_eq!(
        m.resolve(0x1234, 0xFFFF, 2, Access::Read),
        Err(Fault::gp(0))
    );
    assert_eq!(
        m.segment_of(0x1234, Access::Write),
        Ok(Segment::real(0x1234, false))
    );
}

#[test]
fn host_checks_change_nothing() {
    let mut m = prot_machine(&[0xF4]);
    // Paging on, with the GDT page mapped and its accessed bits clear.
    let pd = 0x20_0000u32;
    let pt = 0x20_1000u32;
    m.write_phys(pd, &(pt | 3).to_le_bytes());
    for page in 0..0x400u32 {
        m.write_phys(pt + 4 * page, &((page << 12) | 3).to_le_bytes());
    }
    {
        let c = m.cpu_mut_flush_tlb();
        c.cr3 = pd;
        c.cr0 |= 1 << 31;
        c.cr2 = 0x1234_5678;
    }
    let before_pd = read_u32(&m, pd);
    let before_pte = read_u32(&m, pt + 4 * (GDT >> 12));
    let before_desc = read_u32(&m, GDT + u32::from(SMALL) + 4);
    assert_eq!(m.resolve(SMALL, 4, 4, Access::Read), Ok(0x10004));
    // No accessed bit in the descriptor or the page tables, CR2 kept.
    assert_eq!(read_u32(&m, pd), before_pd);
    assert_eq!(read_u32(&m, pt + 4 * (GDT >> 12)), before_pte);
    assert_eq!(read_u32(&m, GDT + u32::from(SMALL) + 4), before_desc);
    assert_eq!(m.cpu().cr2, 0x1234_5678);
    // A GDT on a page that is not present is a page fault, still with no
    // trace in CR2.
    m.write_phys(pt + 4 * (GDT >> 12), &0u32.to_le_bytes());
    assert_eq!(
        m.resolve(SMALL, 0, 1, Access::Read).map_err(|f| f.vector),
        Err(vector::PF)
    );
    assert_eq!(m.cpu().cr2, 0x1234_5678);
    // The machine still runs as before.
    m.write_phys(pt + 4 * (GDT >> 12), &((GDT & !0xFFF) | 3).to_le_bytes());
    m.flush_tlb();
    assert_eq!(m.run(Limits::default()), emu::Exit::Halted);
}

fn read_u32(m: &emu::Machine, at: u32) -> u32 {
    let mut b = [0; 4];
    m.read_phys(at, &mut b);
    u32::from_le_bytes(b)
}
