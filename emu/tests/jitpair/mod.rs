//! Helpers of the native-tier tests: two identical machines, one with the
//! tier on and one interpreter-only, run and compared after every run.
#![allow(dead_code)]

use crate::common::{self, asm, prot_machine};
use emu::{Exit, Limits, Machine, flags};
use iced_x86::code_asm::*;

/// Two machines (native tier on, off) with `code` and these registers:
/// flat 32-bit protected mode with the code at 0x2000.
pub fn pair(code: &[u8], gpr: [u32; 8], fl: u32) -> (Machine, Machine) {
    pair_in(32, code, gpr, fl)
}

/// Like [`pair`] in `bits`-bit code: 16 is real mode with the code at
/// 0000:0100.
pub fn pair_in(bits: u32, code: &[u8], gpr: [u32; 8], fl: u32) -> (Machine, Machine) {
    let mk = |jit: bool| {
        let mut m = if bits == 32 {
            prot_machine(code)
        } else {
            common::real_machine(code)
        };
        m.set_jit(jit);
        // The threshold these cases were sized for.
        m.set_jit_threshold(32);
        let c = m.cpu_mut_flush_tlb();
        c.gpr = gpr;
        c.eflags = (c.eflags & !flags::STATUS) | (fl & flags::STATUS);
        m
    };
    (mk(true), mk(false))
}

pub fn assert_same(a: &Machine, b: &Machine, what: &str) {
    assert_eq!(a.cpu(), b.cpu(), "registers differ {what}");
    assert_eq!(a.cycles(), b.cycles(), "cycles differ {what}");
    assert_eq!(
        a.instructions(),
        b.instructions(),
        "instructions differ {what}"
    );
    assert_eq!(a.halted(), b.halted(), "halted differs {what}");
}

/// Property-test cases: `PROPTEST_CASES` if set (an explicit `cases` in a
/// `ProptestConfig` would override the variable), else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Compare the low 128 KB of physical memory (code, data and stacks of
/// the tests) and the page tables at 1 MB.
pub fn assert_same_memory(a: &Machine, b: &Machine) {
    for (lo, len) in [(0u32, 0x2_0000usize), (0x10_0000, 0x2000)] {
        let (mut x, mut y) = (vec![0u8; len], vec![0u8; len]);
        a.read_phys(lo, &mut x);
        b.read_phys(lo, &mut y);
        if let Some(i) = (0..len).find(|&i| x[i] != y[i]) {
            panic!(
                "memory differs at {:#x}: {:#x} vs {:#x}",
                lo + i as u32,
                x[i],
                y[i]
            );
        }
    }
}

/// Run both with `limits` until HLT (at most `max_runs` runs), comparing
/// after every run. Returns the number of runs.
pub fn run_both(a: &mut Machine, b: &mut Machine, limits: Limits, max_runs: usize) -> usize {
    for n in 1..=max_runs {
        let ea = a.run(limits);
        let eb = b.run(limits);
        assert_eq!(ea, eb, "exit differs in run {n}");
        assert_same(a, b, &format!("after run {n} ({ea:?})"));
        if ea == Exit::Halted {
            assert_same_memory(a, b);
            return n;
        }
    }
    assert_same_memory(a, b);
    max_runs
}

/// [`run_both`] once, for `instructions` instructions.
pub fn run_both_for(a: &mut Machine, b: &mut Machine, instructions: u64) {
    let limits = Limits {
        instructions: Some(instructions),
        cycles: None,
    };
    run_both(a, b, limits, 1);
}

/// A hot loop: `inc eax; add ebx,eax; dec ecx; jnz` 200 times, HLT.
pub fn hot_loop() -> Vec<u8> {
    asm(32, 0x2000, |a| {
        let mut l = a.create_label();
        a.mov(ecx, 200).unwrap();
        a.set_label(&mut l).unwrap();
        a.inc(eax).unwrap();
        a.add(ebx, eax).unwrap();
        a.dec(ecx).unwrap();
        a.jnz(l).unwrap();
        a.hlt().unwrap();
    })
}
