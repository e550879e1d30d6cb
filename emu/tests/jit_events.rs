//! The native tier against the interpreter around events that must keep
//! it out or retire its blocks: INT3 patches, self-modifying code, host
//! writes, TF, host calls, pending interrupts, paging changes. Each test
//! runs two identical machines (tier on, tier off) and compares them after
//! every run.
#![cfg(target_arch = "x86_64")]

mod common;
mod jitpair;

use common::asm;
use emu::{Exit, Gpr, Limits, flags, vector};
use iced_x86::code_asm::*;
use jitpair::{assert_same, hot_loop, pair, run_both, run_both_for};

#[test]
fn int3_patch_retires_a_hot_block() {
    let code = hot_loop();
    let (mut a, mut b) = pair(&code, [0; 8], 0);
    for m in [&mut a, &mut b] {
        m.intercept(vector::BP, true);
    }
    let l = Limits {
        instructions: Some(400),
        cycles: None,
    };
    assert_eq!(run_both(&mut a, &mut b, l, 1), 1);
    assert_eq!(a.jit_blocks(), 1);
    // INT3 over `add ebx,eax` (offset 6): the next pass must trap there.
    for m in [&mut a, &mut b] {
        m.patch_code(0x2006, &[0xCC]).unwrap();
    }
    let e = a.run(Limits::default());
    assert_eq!(e, b.run(Limits::default()));
    assert_eq!(
        e,
        Exit::Exception {
            fault: emu::Fault::new(vector::BP),
            software: true
        }
    );
    assert_same(&a, &b, "at the breakpoint");
    assert_eq!(a.cpu().eip, 0x2007);
    // Restore the byte and resume after the INT3 (at the add, as a
    // debugger would): the loop finishes identically.
    for m in [&mut a, &mut b] {
        m.patch_code(0x2006, &[0x01]).unwrap();
        m.set_eip(0x2006);
    }
    run_both(&mut a, &mut b, Limits::default(), 1);
    assert_eq!(a.cpu().gpr[Gpr::Eax], 200);
}

#[test]
fn self_modifying_code_retires_a_hot_block() {
    // A hot loop, then code that rewrites the loop's `add ebx,eax` into
    // `sub ebx,eax` and runs the loop again.
    let code = asm(32, 0x2000, |a| {
        let mut l = a.create_label();
        let mut again = a.create_label();
        let mut done = a.create_label();
        a.mov(esi, 0).unwrap();
        a.set_label(&mut again).unwrap();
        a.mov(ecx, 100).unwrap();
        a.set_label(&mut l).unwrap();
        a.inc(eax).unwrap();
        a.add(ebx, eax).unwrap();
        a.dec(ecx).unwrap();
        a.jnz(l).unwrap();
        a.inc(esi).unwrap();
        a.cmp(esi, 2).unwrap();
        a.je(done).unwrap();
        // 0x29 = SUB r/m32,r32 over the ADD's 0x01 at 0x200B.
        a.mov(byte_ptr(0x200B), 0x29).unwrap();
        a.jmp(again).unwrap();
        a.set_label(&mut done).unwrap();
        a.hlt().unwrap();
    });
    assert_eq!(code[0xB], 0x01, "the ADD is where the test patches");
    let (mut a, mut b) = pair(&code, [0; 8], 0);
    run_both(&mut a, &mut b, Limits::default(), 1);
    // 1+..+100 added, then 101+..+200 subtracted.
    let want = (5050u32).wrapping_sub((101..=200).sum::<u32>());
    assert_eq!(a.cpu().gpr[Gpr::Ebx], want);
    assert!(a.jit_stats().translated >= 2, "{:?}", a.jit_stats());
}

#[test]
fn host_write_through_mem_mut_retires_a_hot_block() {
    let code = hot_loop();
    let (mut a, mut b) = pair(&code, [0; 8], 0);
    // MOV, 99 passes and the INC of the 100th: the ADD is next.
    let l = Limits {
        instructions: Some(398),
        cycles: None,
    };
    run_both(&mut a, &mut b, l, 1);
    assert_eq!(a.jit_blocks(), 1);
    assert_eq!(a.cpu().eip, 0x2006);
    // `add ebx,eax` becomes `sub ebx,eax` between runs: both machines
    // must run the new code from the next instruction on.
    for m in [&mut a, &mut b] {
        m.mem_mut().write8(0x2006, 0x29);
    }
    run_both(&mut a, &mut b, Limits::default(), 1);
    let sum = |r: std::ops::RangeInclusive<u32>| r.sum::<u32>();
    assert_eq!(
        a.cpu().gpr[Gpr::Ebx],
        sum(1..=99).wrapping_sub(sum(100..=200))
    );
}

#[test]
fn trap_flag_single_steps_a_hot_block() {
    let code = hot_loop();
    let (mut a, mut b) = pair(&code, [0; 8], 0);
    for m in [&mut a, &mut b] {
        m.intercept(vector::DB, true);
    }
    let l = Limits {
        instructions: Some(300),
        cycles: None,
    };
    run_both(&mut a, &mut b, l, 1);
    assert!(a.jit_stats().entries > 0);
    for m in [&mut a, &mut b] {
        *m.eflags_mut() |= flags::TF;
    }
    let before = a.jit_stats();
    for i in 0..20 {
        let e = a.run(Limits::default());
        assert_eq!(e, b.run(Limits::default()));
        assert_eq!(
            e,
            Exit::Exception {
                fault: emu::Fault::new(vector::DB),
                software: false
            },
            "step {i}"
        );
        assert_same(&a, &b, "single-stepping");
    }
    assert_eq!(
        a.jit_stats().entries,
        before.entries,
        "no native pass under TF"
    );
    for m in [&mut a, &mut b] {
        *m.eflags_mut() &= !flags::TF;
    }
    run_both(&mut a, &mut b, Limits::default(), 1);
}

#[test]
fn host_call_inside_a_hot_loop_is_reported_every_pass() {
    let code = hot_loop();
    let (mut a, mut b) = pair(&code, [0; 8], 0);
    run_both_for(&mut a, &mut b, 300);
    assert_eq!(a.jit_blocks(), 1);
    // A host call on `dec ecx` (0x2008).
    for m in [&mut a, &mut b] {
        m.add_host_call(0x2008);
    }
    let mut calls = 0;
    loop {
        let e = a.run(Limits::default());
        assert_eq!(e, b.run(Limits::default()));
        assert_same(&a, &b, "at a host call");
        match e {
            Exit::HostCall { linear } => {
                assert_eq!(linear, 0x2008);
                calls += 1;
            }
            Exit::Halted => break,
            e => panic!("unexpected {e:?}"),
        }
    }
    // 300 instructions ran 75 passes up to the JNZ.
    assert_eq!(calls, 200 - 75, "one per remaining pass");
}

#[test]
fn pending_interrupt_is_taken_at_the_block_boundary() {
    // IF set and an IRQ queued mid-loop: the tier must not run past it.
    let mut code = hot_loop();
    // Handler at 0x2100: inc edx; iretd.
    code.resize(0x100, 0x90);
    code.extend([0x42, 0xCF]);
    let mut gpr = [0; 8];
    gpr[Gpr::Esp] = 0x8000;
    let (mut a, mut b) = pair(&code, gpr, 0);
    for m in [&mut a, &mut b] {
        common::set_int_gate(m, 0x30, 0x2100, 0);
        *m.eflags_mut() |= flags::IF;
    }
    run_both_for(&mut a, &mut b, 250);
    for m in [&mut a, &mut b] {
        m.raise_irq(0x30);
    }
    let e = a.run(Limits::default());
    assert_eq!(e, b.run(Limits::default()));
    assert_same(&a, &b, "after the interrupt");
    assert_eq!(e, Exit::Halted);
    assert_eq!(a.cpu().gpr[Gpr::Edx], 1, "the handler ran once");
    assert_eq!(a.cpu().gpr[Gpr::Eax], 200);
}

#[test]
fn paging_remap_finds_a_block_where_a_memo_was() {
    // The code page first maps a frame where the loop starts with a
    // memory load (no block: a memo), then a frame with the register-only
    // loop, as after a switch of address space.
    let code = hot_loop();
    let mut with_load = code.clone();
    with_load[5] = 0x8B; // mov eax,[eax] over `inc eax; add ebx,eax`
    with_load[6] = 0x00;
    with_load[7] = 0x90;
    let (mut a, mut b) = pair(&with_load, [0; 8], 0);
    for m in [&mut a, &mut b] {
        let (pd, pt) = (0x5000u32, 0x6000u32);
        m.write_phys(pd, &(pt | 3).to_le_bytes());
        for i in 0..1024u32 {
            m.write_phys(pt + 4 * i, &((i << 12) | 3).to_le_bytes());
        }
        m.write_phys(0x7000, &code);
        let c = m.cpu_mut_flush_tlb();
        c.cr3 = pd;
        c.cr0 |= 0x8000_0000;
    }
    run_both(&mut a, &mut b, Limits::default(), 1);
    let before = a.jit_stats();
    for m in [&mut a, &mut b] {
        m.write_phys(0x6000 + 4 * 2, &(0x7000u32 | 3).to_le_bytes());
        let c = m.cpu_mut_flush_tlb();
        c.eip = 0x2000;
        c.gpr = [0; 8];
        m.set_halted(false);
    }
    run_both(&mut a, &mut b, Limits::default(), 1);
    assert_eq!(a.cpu().gpr[Gpr::Eax], 200);
    assert!(a.jit_stats().entries > before.entries);
    // The loop head's memo gave way to a self-looping block: a third run
    // enters it once for the whole loop.
    for m in [&mut a, &mut b] {
        let c = m.cpu_mut_flush_tlb();
        c.eip = 0x2000;
        c.gpr = [0; 8];
        m.set_halted(false);
    }
    let before = a.jit_stats();
    run_both(&mut a, &mut b, Limits::default(), 1);
    let after = a.jit_stats();
    assert_eq!(after.entries - before.entries, 1, "{after:?}");
    assert_eq!(after.instructions - before.instructions, 800);
}

#[test]
fn paging_remap_moves_the_block() {
    // Identity-map the first 4 MB, run the loop hot, then point the code
    // page at a copy whose loop subtracts instead of adding.
    let code = hot_loop();
    let (mut a, mut b) = pair(&code, [0; 8], 0);
    for m in [&mut a, &mut b] {
        let (pd, pt) = (0x5000u32, 0x6000u32);
        m.write_phys(pd, &(pt | 3).to_le_bytes());
        for i in 0..1024u32 {
            m.write_phys(pt + 4 * i, &((i << 12) | 3).to_le_bytes());
        }
        let mut copy = code.clone();
        copy[6] = 0x29;
        m.write_phys(0x7000, &copy);
        let c = m.cpu_mut_flush_tlb();
        c.cr3 = pd;
        c.cr0 |= 0x8000_0000;
    }
    run_both_for(&mut a, &mut b, 300);
    assert_eq!(a.jit_blocks(), 1);
    for m in [&mut a, &mut b] {
        m.write_phys(0x6000 + 4 * 2, &(0x7000u32 | 3).to_le_bytes());
        m.flush_caches();
    }
    run_both(&mut a, &mut b, Limits::default(), 1);
    // Map the original frame back without flush_caches (cpu_mut flushes
    // the TLB): the entry check re-translates and must leave the block
    // read from the copy.
    for m in [&mut a, &mut b] {
        m.write_phys(0x6000 + 4 * 2, &(0x2000u32 | 3).to_le_bytes());
        m.set_eip(0x2000);
        m.set_halted(false);
    }
    run_both(&mut a, &mut b, Limits::default(), 1);
}

#[test]
fn eip_past_the_cs_limit_faults_without_touching_paging() {
    // EIP beyond the CS limit on a not-present page: #GP every time, and
    // no page walk (CR2 untouched), however often it is retried.
    let (mut a, mut b) = pair(&hot_loop(), [0; 8], 0);
    for m in [&mut a, &mut b] {
        let (pd, pt) = (0x5000u32, 0x6000u32);
        m.write_phys(pd, &(pt | 3).to_le_bytes());
        for i in 0..1024u32 {
            let present = if i == 3 { 0 } else { 3 };
            m.write_phys(pt + 4 * i, &((i << 12) | present).to_le_bytes());
        }
        let mut code_seg = *m.cpu().sreg(emu::SegReg::Cs);
        code_seg.limit = 0x2FFF;
        m.set_segment(emu::SegReg::Cs, code_seg);
        let c = m.cpu_mut_flush_tlb();
        c.cr3 = pd;
        c.cr0 |= 0x8000_0000;
        m.intercept(vector::GP, true);
    }
    for _ in 0..100 {
        for m in [&mut a, &mut b] {
            m.set_eip(0x3000);
        }
        let e = a.run(Limits::default());
        assert_eq!(e, b.run(Limits::default()));
        assert_eq!(
            e,
            Exit::Exception {
                fault: emu::Fault::gp(0),
                software: false
            }
        );
        assert_same(&a, &b, "after the #GP");
    }
    assert_eq!(a.cpu().cr2, 0);
}

/// A start address is translated on its threshold-th execution, not
/// before: the hot loop's 200 passes make its body hot at 128 (or
/// less) but not at 250; at 1 every start address that runs is
/// translated at once (the code around the loop too). The results are
/// the same each time.
#[test]
fn threshold_decides_when_a_block_is_translated() {
    for threshold in [128, 250, 1] {
        let code = hot_loop();
        let (mut a, mut b) = pair(&code, [0; 8], 0);
        a.set_jit_threshold(threshold);
        run_both(&mut a, &mut b, Limits::default(), 1);
        let s = a.jit_stats();
        match threshold {
            128 => assert_eq!(s.translated, 1, "{s:?}"),
            250 => assert_eq!((s.translated, s.entries), (0, 0), "{s:?}"),
            _ => assert!(s.translated > 1, "{s:?}"),
        }
    }
}
