//! Arbitrary bytes as guest code (first byte picks the mode): the host must
//! never panic, whatever the guest does.
#![no_main]

use emu::{CpuModel, Descriptor, Gpr, Limits, Machine, MachineConfig, SegReg, Segment};
use libfuzzer_sys::fuzz_target;

fn desc(base: u32, limit: u32, access: u8, flags: u8) -> u64 {
    Descriptor::encode(base, limit, access, flags).0
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, code)) = data.split_first() else {
        return;
    };
    let model = match mode & 3 {
        0 => CpuModel::I286,
        1 => CpuModel::I386,
        _ => CpuModel::I486,
    };
    let mut m = Machine::new(MachineConfig { ram_size: 1 << 16, model });
    m.write_phys(0x1000, code);
    if mode & 4 == 0 || model == CpuModel::I286 {
        for s in SegReg::ALL {
            m.set_segment(s, Segment::real(0, s == SegReg::Cs));
        }
    } else {
        let big = if mode & 8 != 0 { 0xC } else { 0x8 };
        let gdt = [0, desc(0, u32::MAX, 0x9A, big), desc(0, u32::MAX, 0x92, big)];
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
    }
    m.set_eip(0x1000);
    m.gpr_mut()[Gpr::Esp] = 0x8000;
    for _ in 0..2 {
        let _ = m.run(Limits { instructions: Some(500), cycles: None });
        m.set_halted(false);
    }
});
