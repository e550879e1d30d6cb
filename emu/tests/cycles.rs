//! The 386 cycle clock: table values, memory-operand forms, prefix and
//! taken-branch adders.

mod common;

use common::real_machine;
use emu::{Gpr, Limits, Machine};

fn cycles_of(code: &[u8]) -> u64 {
    let mut m: Machine = real_machine(code);
    m.gpr_mut()[Gpr::Ebx] = 0x1000; // BX: a divisor and an address
    let c0 = m.cycles();
    let _ = m.run(Limits {
        instructions: Some(1),
        cycles: None,
    });
    m.cycles() - c0
}

#[test]
fn table_values_and_adders() {
    assert_eq!(cycles_of(&[0x89, 0xD8]), 2, "mov ax,bx");
    assert_eq!(cycles_of(&[0x8B, 0x07]), 4, "mov ax,[bx]");
    assert_eq!(cycles_of(&[0x01, 0x07]), 7, "add [bx],ax");
    assert_eq!(cycles_of(&[0x03, 0x07]), 6, "add ax,[bx]");
    assert_eq!(
        cycles_of(&[0x66, 0x01, 0xD8]),
        3,
        "add eax,ebx: +1 for 0x66"
    );
    assert_eq!(cycles_of(&[0xF7, 0xF3]), 22, "div bx (fixed mid value)");
    assert_eq!(cycles_of(&[0x74, 0x00]), 3, "jz not taken (ZF=0)");
    assert_eq!(cycles_of(&[0x75, 0x00]), 7, "jnz taken: 3 + 4");
}

#[test]
fn rep_adds_per_iteration() {
    let one = {
        let mut m = real_machine(&[0xF3, 0xAA]); // rep stosb
        m.gpr_mut()[Gpr::Ecx] = 10;
        m.gpr_mut()[Gpr::Edi] = 0x2000;
        let _ = m.run(Limits {
            instructions: Some(1),
            cycles: None,
        });
        m.cycles()
    };
    assert_eq!(one, 4 + 10 * 4);
}
