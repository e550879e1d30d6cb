//! Arbitrary bytes as the body of a counted loop, run by two identical
//! machines, one with the native tier on and one interpreter-only: every
//! run must end with the same exit, registers, cycles and instruction
//! count. The first byte picks 16- or 32-bit code, the loop count and the
//! instruction budget per run.
#![no_main]

use emu::{CpuModel, Descriptor, Exit, Gpr, Limits, Machine, MachineConfig, SegReg, Segment};
use libfuzzer_sys::fuzz_target;

fn desc(base: u32, limit: u32, access: u8, flags: u8) -> u64 {
    Descriptor::encode(base, limit, access, flags).0
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

fn machine(code32: bool, code: &[u8], jit: bool) -> Machine {
    let mut m = Machine::new(MachineConfig {
        ram_size: 1 << 16,
        model: CpuModel::I486,
    });
    m.set_jit(jit);
    m.write_phys(0x1000, code);
    if code32 {
        let gdt = [0, desc(0, u32::MAX, 0x9A, 0x4), desc(0, u32::MAX, 0x92, 0x4)];
        for (i, e) in gdt.iter().enumerate() {
            m.write_phys(0x800 + 8 * i as u32, &e.to_le_bytes());
        }
        let c = m.cpu_mut_flush_tlb();
        c.cr0 |= 1;
        c.gdtr.base = 0x800;
        c.gdtr.limit = 23;
        m.set_segment(SegReg::Cs, Descriptor(gdt[1]).to_segment(8));
        for s in [SegReg::Ds, SegReg::Es, SegReg::Ss, SegReg::Fs, SegReg::Gs] {
            m.set_segment(s, Descriptor(gdt[2]).to_segment(0x10));
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
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    let code32 = mode & 1 != 0;
    let code = looped(code32, body, u32::from(mode >> 1) % 64 + 33);
    let (mut a, mut b) = (machine(code32, &code, true), machine(code32, &code, false));
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
});
