//! Helpers shared by the integration tests: assembling guest code with
//! iced-x86's CodeAssembler and building descriptor tables.
#![allow(dead_code)]

use emu::{CpuModel, Descriptor, Gpr, Machine, MachineConfig, SegReg, Segment};
use iced_x86::code_asm::CodeAssembler;

/// Assemble with `f` at `ip` in `bitness`-bit mode.
pub fn asm(bitness: u32, ip: u64, f: impl FnOnce(&mut CodeAssembler)) -> Vec<u8> {
    let mut a = CodeAssembler::new(bitness).expect("bitness");
    f(&mut a);
    a.assemble(ip).expect("assemble")
}

/// A real-mode machine with `code` at 0000:0100 (SS:SP = 0000:8000).
pub fn real_machine(code: &[u8]) -> Machine {
    let mut m = Machine::new(MachineConfig {
        ram_size: 1 << 20,
        model: CpuModel::I486,
    });
    m.write_phys(0x100, code);
    for s in SegReg::ALL {
        m.set_segment(s, Segment::real(0, s == SegReg::Cs));
    }
    m.set_eip(0x100);
    m.gpr_mut()[Gpr::Esp] = 0x8000;
    m
}

/// An 8-byte segment descriptor (see [`Descriptor::encode`]).
pub fn desc(base: u32, limit: u32, access: u8, flags: u8) -> u64 {
    Descriptor::encode(base, limit, access, flags).0
}

/// A call/interrupt/trap gate.
pub fn gate(sel: u16, off: u32, access: u8, params: u8) -> u64 {
    u64::from(off & 0xFFFF)
        | (u64::from(sel) << 16)
        | (u64::from(params) << 32)
        | (u64::from(access) << 40)
        | (u64::from(off >> 16) << 48)
}

/// GDT at 0x800 used by the protected-mode tests.
pub const GDT: u32 = 0x800;
/// IDT at 0x1000.
pub const IDT: u32 = 0x1000;
/// Flat 32-bit ring-0 code.
pub const CODE32: u16 = 0x08;
/// Flat 32-bit ring-0 data.
pub const DATA32: u16 = 0x10;
/// Data at 0x10000 with limit 0xFFF.
pub const SMALL: u16 = 0x18;
/// A not-present data segment.
pub const ABSENT: u16 = 0x20;
/// Flat ring-3 code (RPL 3).
pub const CODE3: u16 = 0x28 | 3;
/// Flat ring-3 data (RPL 3).
pub const DATA3: u16 = 0x30 | 3;
/// The 386 TSS.
pub const TSS: u16 = 0x38;
/// Call gate, DPL 3, to CODE32:0x2800.
pub const GATE: u16 = 0x40 | 3;
/// Expand-down 16-bit data, limit 0xFFF.
pub const EXPDOWN: u16 = 0x48;

/// A flat 32-bit protected-mode machine at CPL 0 with the test GDT, an
/// empty IDT, a 386 TSS whose ring-0 stack is 0x9000, and `code` at 0x2000.
pub fn prot_machine(code: &[u8]) -> Machine {
    let mut m = Machine::new(MachineConfig {
        ram_size: 4 << 20,
        model: CpuModel::I486,
    });
    let entries = [
        0,
        desc(0, 0xFFFF_FFFF, 0x9A, 0x4),
        desc(0, 0xFFFF_FFFF, 0x92, 0x4),
        desc(0x10000, 0xFFF, 0x92, 0x4),
        desc(0, 0xFFFF, 0x12, 0x4),
        desc(0, 0xFFFF_FFFF, 0xFA, 0x4),
        desc(0, 0xFFFF_FFFF, 0xF2, 0x4),
        desc(0x3000, 0x67, 0x89, 0),
        gate(CODE32, 0x2800, 0xEC, 0),
        desc(0x10000, 0xFFF, 0x96, 0),
    ];
    for (i, e) in entries.iter().enumerate() {
        m.write_phys(GDT + 8 * i as u32, &e.to_le_bytes());
    }
    m.write_phys(0x3004, &0x9000u32.to_le_bytes());
    m.write_phys(0x3008, &u32::from(DATA32).to_le_bytes());
    m.write_phys(0x3066, &0x68u16.to_le_bytes());
    m.write_phys(0x2000, code);
    {
        let c = m.cpu_mut_flush_tlb();
        c.cr0 |= 1;
        c.gdtr.base = GDT;
        c.gdtr.limit = (entries.len() * 8 - 1) as u16;
        c.idtr.base = IDT;
        c.idtr.limit = 0x7FF;
        c.eip = 0x2000;
        c.gpr[Gpr::Esp] = 0x8000;
        c.tr = Descriptor(desc(0x3000, 0x67, 0x8B, 0)).to_segment(TSS);
    }
    m.set_segment(SegReg::Cs, Descriptor(entries[1]).to_segment(CODE32));
    for s in [SegReg::Ds, SegReg::Es, SegReg::Ss, SegReg::Fs, SegReg::Gs] {
        m.set_segment(s, Descriptor(entries[2]).to_segment(DATA32));
    }
    m
}

/// Install a 32-bit interrupt gate for `v` pointing at CODE32:`off`.
pub fn set_int_gate(m: &mut Machine, v: u8, off: u32, dpl: u8) {
    let g = gate(CODE32, off, 0x8E | (dpl << 5), 0);
    m.write_phys(IDT + 8 * u32::from(v), &g.to_le_bytes());
}

/// Runs `m` (at most `instructions`) until exception `v`, intercepted:
/// the fault (a panic if the run ends otherwise).
pub fn run_to_fault(m: &mut Machine, v: u8, instructions: u64) -> emu::Fault {
    m.intercept(v, true);
    match m.run(emu::Limits {
        instructions: Some(instructions),
        cycles: None,
    }) {
        emu::Exit::Exception { fault, .. } => fault,
        other => panic!("expected exception {v}, got {other:?}"),
    }
}

/// Ring-0 code at 0x2000 that goes to ring 3 by RETF: CODE3:0x2100,
/// the stack DATA3:0x7000.
pub fn retf_to_ring3() -> Vec<u8> {
    asm(32, 0x2000, |a| {
        a.push(DATA3 as i32).unwrap();
        a.push(0x7000).unwrap();
        a.push(CODE3 as i32).unwrap();
        a.push(0x2100).unwrap();
        a.retf().unwrap();
    })
}
