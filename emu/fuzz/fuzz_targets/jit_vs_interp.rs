//! Arbitrary bytes as the body of a counted loop, run by two identical
//! machines, one with the native tier on and one interpreter-only: every
//! run must end with the same exit, registers, cycles and instruction
//! count, and the runs with the same memory. The first byte picks 16- or
//! 32-bit code, the loop count and the instruction budget per run; the
//! second, for 32-bit code, paging (an identity map of the 64 KB whose
//! pages 3..=13 are absent, read-only, supervisor-only or already dirty
//! by the byte's bits) and segments with small, expand-down and read-only
//! limits in ES, FS and GS, so the memory operands of the body meet every
//! check the native tier makes. Bit 6 of the second byte runs 16-bit code
//! in protected mode instead of real mode. In protected mode the GDT (at
//! 0x800, inside the memory the body may store into) also holds the
//! descriptors segment loads and far transfers tell apart: a second flat
//! code segment, 16-bit code, conforming and execute-only code, small data
//! with its accessed bit clear, read-only, not-present and DPL 3 data, a
//! call gate, and an LDT with code and data, so MOV/POP Sreg, PUSH Sreg
//! and far CALL/JMP/RET in the body meet every case of the descriptor
//! cache, and stores into the tables its invalidation.
#![no_main]

use emu::{CpuModel, Descriptor, Exit, Gpr, Limits, Machine, MachineConfig, SegReg, Segment};
use libfuzzer_sys::fuzz_target;

fn desc(base: u32, limit: u32, access: u8, flags: u8) -> u64 {
    Descriptor::encode(base, limit, access, flags).0
}

/// A call gate to `sel:off` with access byte `access`.
fn gate(sel: u16, off: u32, access: u8) -> u64 {
    u64::from(off & 0xFFFF)
        | (u64::from(sel) << 16)
        | (u64::from(access) << 40)
        | (u64::from(off >> 16) << 48)
}

/// `mov edi, n; body; dec edi; jnz body; hlt` at 0x1000.
fn looped(code32: bool, body: &[u8], n: u32) -> Vec<u8> {
    let o32: &[u8] = if code32 { &[] } else { &[0x66] };
    let mut c = [o32, &[0xBF], &n.to_le_bytes()].concat();
    let start = c.len();
    c.extend_from_slice(body);
    c.extend_from_slice(o32);
    c.push(0x4F);
    let rel = start as i64 - (c.len() as i64 + 6);
    c.extend_from_slice(&[0x0F, 0x85]);
    if code32 {
        c.extend_from_slice(&(rel as i32).to_le_bytes());
    } else {
        // rel16 is two bytes shorter.
        c.extend_from_slice(&((rel + 2) as i16).to_le_bytes());
    }
    c.push(0xF4);
    c
}

const PD: u32 = 0xE000;
const PT: u32 = 0xF000;

fn machine(code32: bool, setup: u8, code: &[u8], jit: bool) -> Machine {
    let mut m = Machine::new(MachineConfig {
        ram_size: 1 << 16,
        model: CpuModel::I486,
    });
    m.set_jit(jit);
    // The threshold these cases were sized for.
    m.set_jit_threshold(32);
    m.write_phys(0x1000, code);
    if code32 || setup & 0x40 != 0 {
        let db = if code32 { 0x4 } else { 0 };
        let gdt = [
            0,
            desc(0, u32::MAX, 0x9B, 0x4),
            desc(0, u32::MAX, 0x93, 0x4),
            desc(0, 0xFFFF, 0x9B, db),
            desc(0, 0xFFFF, 0x9B, 0x4 - db),
            desc(0x6000, 0xFFF, 0x92, 0),
            desc(0x6000, 0xFFF, 0x13, 0),
            desc(0x4000, 0x1FFF, 0x91, 0),
            desc(0, 0xFFFF, 0x99, db),
            desc(0, 0xFFFF, 0x9F, db),
            desc(0, 0xFFFF, 0xF3, 0),
            gate(0x18, 0x1000, if code32 { 0x8C } else { 0x84 }),
            desc(0xC00, 0x17, 0x82, 0),
        ];
        for (i, e) in gdt.iter().enumerate() {
            m.write_phys(0x800 + 8 * i as u32, &e.to_le_bytes());
        }
        let ldt = [
            desc(0x6000, 0xFFF, 0x93, 0),
            desc(0, 0xFFFF, 0x9B, db),
            desc(0x6000, 0xFFF, 0x92, 0),
        ];
        for (i, e) in ldt.iter().enumerate() {
            m.write_phys(0xC00 + 8 * i as u32, &e.to_le_bytes());
        }
        let c = m.cpu_mut_flush_tlb();
        c.cr0 |= 1;
        c.gdtr.base = 0x800;
        c.gdtr.limit = (gdt.len() * 8 - 1) as u16;
        c.ldtr = Descriptor(gdt[12]).to_segment(0x60);
        let cs = if code32 { 1 } else { 3 };
        m.set_segment(SegReg::Cs, Descriptor(gdt[cs]).to_segment(8 * cs as u16));
        for s in [SegReg::Ds, SegReg::Es, SegReg::Ss, SegReg::Fs, SegReg::Gs] {
            m.set_segment(s, Descriptor(gdt[2]).to_segment(0x10));
        }
        if setup & 2 != 0 {
            let seg = |e: u64| Descriptor(e).to_segment(0x10);
            m.set_segment(SegReg::Es, seg(desc(0x4000, 0x1FFF, 0x90, 0x4)));
            m.set_segment(SegReg::Fs, seg(desc(0x6000, 0xFFF, 0x92, 0x4)));
            m.set_segment(SegReg::Gs, seg(desc(0x6000, 0xFFF, 0x96, 0)));
        }
        if setup & 1 != 0 {
            m.write_phys(PD, &(PT | 7).to_le_bytes());
            for p in 0..16u32 {
                let mut e = (p << 12) | 7;
                if (3..=13).contains(&p) {
                    match (setup >> 2).wrapping_mul(p as u8 + 1) % 6 {
                        1 => e &= !1,
                        2 => e &= !2,
                        3 => e &= !4,
                        4 => e |= 0x60,
                        _ => {}
                    }
                }
                m.write_phys(PT + 4 * p, &e.to_le_bytes());
            }
            let c = m.cpu_mut_flush_tlb();
            c.cr3 = PD;
            c.cr0 |= 0x8000_0000 | if setup & 0x80 != 0 { 1 << 16 } else { 0 };
        }
    } else {
        for s in SegReg::ALL {
            m.set_segment(s, Segment::real(0, s == SegReg::Cs));
        }
    }
    for v in 0..=255 {
        m.intercept(v, true);
    }
    m.set_eip(0x1000);
    m.gpr_mut()[Gpr::Esp] = 0x8000;
    m
}

fuzz_target!(|data: &[u8]| {
    let [mode, setup, body @ ..] = data else {
        return;
    };
    let (mode, setup) = (*mode, *setup);
    let code32 = mode & 1 != 0;
    let code = looped(code32, body, u32::from(mode >> 1) % 64 + 33);
    let (mut a, mut b) = (
        machine(code32, setup, &code, true),
        machine(code32, setup, &code, false),
    );
    let limits = Limits {
        instructions: Some(u64::from(mode) * 7 + 1),
        cycles: None,
    };
    for _ in 0..8 {
        let e = a.run(limits);
        assert_eq!(e, b.run(limits));
        assert_eq!(a.cpu(), b.cpu());
        assert_eq!(a.cycles(), b.cycles());
        assert_eq!(a.instructions(), b.instructions());
        if e != Exit::InstructionLimit {
            break;
        }
    }
    let (mut x, mut y) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    a.read_phys(0, &mut x);
    b.read_phys(0, &mut y);
    assert!(x == y, "memory differs");
});
