//! Arbitrary guest bytes never panic the host: random code runs in real
//! mode, 16-bit and 32-bit protected mode, with paging on and off.

mod common;

use common::*;
use emu::{Limits, SegReg};
use proptest::prelude::*;

fn run_random(mut m: emu::Machine) {
    for _ in 0..4 {
        let _ = m.run(Limits {
            instructions: Some(300),
            cycles: None,
        });
        m.set_halted(false);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn random_real_mode_code(code in proptest::collection::vec(any::<u8>(), 1..256), ivt in any::<u64>()) {
        let mut m = real_machine(&code);
        m.write_phys(0, &ivt.to_le_bytes());
        run_random(m);
    }

    #[test]
    fn random_protected_mode_code(code in proptest::collection::vec(any::<u8>(), 1..256), big in any::<bool>(), paging in any::<bool>()) {
        let mut m = prot_machine(&code);
        if !big {
            let mut cs = *m.cpu().sreg(SegReg::Cs);
            cs.flags &= !4;
            m.set_segment(SegReg::Cs, cs);
        }
        if paging {
            m.write_phys(0x10_0000, &(0x10_1007u32).to_le_bytes());
            for p in 0..512u32 {
                m.write_phys(0x10_1000 + p * 4, &((p << 12) | 7).to_le_bytes());
            }
            let c = m.cpu_mut_flush_tlb();
            c.cr3 = 0x10_0000;
            c.cr0 |= 0x8000_0000;
        }
        run_random(m);
    }
}
