//! The native tier against the interpreter: identical machines, one with
//! the tier on and one with it off, must end every run with the same
//! registers (all EFLAGS bits), EIP, cycles, instruction counts and exit.
//! Random register-only programs with loops (ADC/SBB chains, forward Jcc,
//! instructions the tier does not take) under instruction and cycle
//! budgets that end mid-loop; then the events that must keep the tier out:
//! code patches, self-modifying code, TF, host calls, interrupts, paging
//! changes.
//!
//! Longer runs: `PROPTEST_CASES=20000 cargo test -p emu --release --test jit`;
//! the same comparison on arbitrary bytes is the `jit_vs_interp` fuzz target.
#![cfg(target_arch = "x86_64")]

mod common;

use common::{asm, prot_machine};
use emu::{Exit, Limits, Machine, flags, vector};
use iced_x86::code_asm::*;
use proptest::prelude::*;

const R32: [AsmRegister32; 8] = [eax, ecx, edx, ebx, esp, ebp, esi, edi];
const R16: [AsmRegister16; 8] = [ax, cx, dx, bx, sp, bp, si, di];

/// One generated instruction: (kind, a, b, imm).
type Gen = (u8, u8, u8, u32);

/// Registers the random ops may write (EDI is the loop counter).
fn dst(a: u8) -> AsmRegister32 {
    R32[usize::from(a % 7)]
}

fn imm(v: u32, b: u8) -> i32 {
    match b % 4 {
        0 => (v as i8) as i32,
        1 => [0, 1, -1, 0x7FFF_FFFF, i32::MIN, 0x80, 0x7F][(v % 7) as usize],
        _ => v as i32,
    }
}

/// Emit one generated instruction; `skip` is the label a forward Jcc
/// goes to.
fn emit(a: &mut CodeAssembler, g: Gen, skip: CodeLabel) {
    let (k, x, y, v) = g;
    let d = dst(x);
    let s = R32[usize::from(y % 8)];
    let i = imm(v, y);
    let r = match k % 32 {
        0 => a.mov(d, s),
        1 => a.mov(d, i),
        2 | 3 => a.add(d, if k & 32 != 0 { s } else { d }),
        4 => a.add(d, i),
        5 | 6 => a.adc(d, s),
        7 => a.adc(d, i),
        8 => a.sub(d, s),
        9 => a.sub(d, i),
        10 | 11 => a.sbb(d, s),
        12 => a.sbb(d, i),
        13 => a.and(d, s),
        14 => a.and(d, i),
        15 => a.or(d, s),
        16 => a.xor(d, s),
        17 => a.xor(d, i),
        18 => a.cmp(d, s),
        19 => a.cmp(d, i),
        20 => a.test(d, s),
        21 => a.test(d, i),
        22 => a.inc(d),
        23 => a.dec(d),
        24 => a.neg(d),
        25 => a.not(d),
        // Not taken by the tier: the interpreter runs these mid-block.
        26 => match v % 5 {
            0 => a.stc(),
            1 => a.clc(),
            2 => a.cmc(),
            3 => a.shl(d, 1),
            _ => a.add(al, ch),
        },
        27 => match v % 3 {
            0 => a.mov(dword_ptr(0x4000 + (v & 0xFC)), d),
            1 => a.mov(d, dword_ptr(0x4000 + (v & 0xFC))),
            _ => a.add(d, dword_ptr(0x4000 + (v & 0xFC))),
        },
        28 | 29 => jcc(a, v, skip),
        // 16- and 8-bit forms and LEA.
        30 => {
            let (d16, s16) = (R16[usize::from(x % 7)], R16[usize::from(y % 8)]);
            match v % 6 {
                0 => a.add(d16, s16),
                1 => a.adc(d16, i32::from(i as i16)),
                2 => a.sbb(d16, s16),
                3 => a.mov(d16, i32::from(v as i16)),
                4 => a.neg(d16),
                _ => a.xor(d16, s16),
            }
        }
        31 if k & 64 != 0 => {
            // CL only with AL/DL/BL: pick from the encodable pairs.
            let pairs = [
                (al, ah),
                (ah, bl),
                (dl, dh),
                (bh, al),
                (cl, dl),
                (bl, cl),
                (dh, bh),
            ];
            let (d8, s8) = pairs[(v % 7) as usize];
            match (v >> 3) % 6 {
                0 => a.add(d8, s8),
                1 => a.adc(d8, s8),
                2 => a.sub(d8, i & 0x7F),
                3 => a.mov(d8, s8),
                4 => a.inc(d8),
                _ => a.cmp(d8, s8),
            }
        }
        31 => match v % 3 {
            0 => a.lea(d, dword_ptr(s + ebx * 2 + 5)),
            1 => a.lea(d, dword_ptr(s - 0x1234)),
            _ => a.lea(d, dword_ptr(ecx * 8 + 0x7FFF_FFF0)),
        },
        _ => unreachable!(),
    };
    r.expect("assemble");
}

fn jcc(a: &mut CodeAssembler, v: u32, l: CodeLabel) -> Result<(), iced_x86::IcedError> {
    match v % 16 {
        0 => a.jo(l),
        1 => a.jno(l),
        2 => a.jb(l),
        3 => a.jae(l),
        4 => a.je(l),
        5 => a.jne(l),
        6 => a.jbe(l),
        7 => a.ja(l),
        8 => a.js(l),
        9 => a.jns(l),
        10 => a.jp(l),
        11 => a.jnp(l),
        12 => a.jl(l),
        13 => a.jge(l),
        14 => a.jle(l),
        _ => a.jg(l),
    }
}

/// Two counted loops (EDI counts, `n1`/`n2` passes) of random bodies with
/// random code between, then HLT.
fn program(bits: u32, body1: &[Gen], mid: &[Gen], body2: &[Gen], n2: u32, close: u8) -> Vec<u8> {
    asm(bits, if bits == 32 { 0x2000 } else { 0x100 }, |a| {
        for (bi, body) in [body1, body2].into_iter().enumerate() {
            let mut labels: Vec<CodeLabel> = (0..=body.len()).map(|_| a.create_label()).collect();
            let head = labels[0];
            for (i, g) in body.iter().enumerate() {
                a.set_label(&mut labels[i]).unwrap();
                let target = labels[(i + 1 + usize::from(g.1 % 2) + 1).min(body.len())];
                emit(a, *g, target);
            }
            a.set_label(&mut labels[body.len()]).unwrap();
            // The loop's closing branch in a few shapes.
            match close % 3 {
                0 => {
                    a.dec(edi).unwrap();
                    a.jne(head).unwrap();
                }
                1 => {
                    a.sub(edi, 1).unwrap();
                    a.ja(head).unwrap();
                }
                _ => {
                    a.dec(edi).unwrap();
                    a.jg(head).unwrap();
                }
            }
            if bi == 0 {
                let mut after = a.create_label();
                for g in mid {
                    // Forward Jcc in the middle part all go to the second
                    // loop's setup.
                    emit(a, *g, after);
                }
                a.set_label(&mut after).unwrap();
                a.mov(edi, n2 as i32).unwrap();
            }
        }
        a.hlt().unwrap();
    })
}

/// Two machines (native tier on, off) with `code` and these registers:
/// flat 32-bit protected mode with the code at 0x2000.
fn pair(code: &[u8], gpr: [u32; 8], fl: u32) -> (Machine, Machine) {
    pair_in(32, code, gpr, fl)
}

/// Like [`pair`] in `bits`-bit code: 16 is real mode with the code at
/// 0000:0100.
fn pair_in(bits: u32, code: &[u8], gpr: [u32; 8], fl: u32) -> (Machine, Machine) {
    let mk = |jit: bool| {
        let mut m = if bits == 32 {
            prot_machine(code)
        } else {
            common::real_machine(code)
        };
        m.set_jit(jit);
        let c = m.cpu_mut();
        c.gpr = gpr;
        c.eflags = (c.eflags & !flags::STATUS) | (fl & flags::STATUS);
        m
    };
    (mk(true), mk(false))
}

fn assert_same(a: &Machine, b: &Machine, what: &str) {
    assert_eq!(a.cpu(), b.cpu(), "registers differ {what}");
    assert_eq!(a.cycles(), b.cycles(), "cycles differ {what}");
    assert_eq!(
        a.instructions(),
        b.instructions(),
        "instructions differ {what}"
    );
    assert_eq!(a.halted(), b.halted(), "halted differs {what}");
}

/// Run both with `limits` until HLT (at most `max_runs` runs), comparing
/// after every run. Returns the number of runs.
fn run_both(a: &mut Machine, b: &mut Machine, limits: Limits, max_runs: usize) -> usize {
    for n in 1..=max_runs {
        let ea = a.run(limits);
        let eb = b.run(limits);
        assert_eq!(ea, eb, "exit differs in run {n}");
        assert_same(a, b, &format!("after run {n} ({ea:?})"));
        if ea == Exit::Halted {
            return n;
        }
    }
    max_runs
}

fn gen_strategy() -> impl Strategy<Value = Gen> {
    (any::<u8>(), any::<u8>(), any::<u8>(), any::<u32>())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_loops_match_the_interpreter(
        body1 in prop::collection::vec(gen_strategy(), 1..9),
        mid in prop::collection::vec(gen_strategy(), 0..4),
        body2 in prop::collection::vec(gen_strategy(), 1..6),
        n1 in 1u32..300,
        n2 in 1u32..300,
        close in any::<u8>(),
        gpr in any::<[u32; 8]>(),
        fl in any::<u32>(),
        limit_kind in 0u8..4,
        amount in 1u64..3000,
        sixteen in any::<bool>(),
    ) {
        let bits = if sixteen { 16 } else { 32 };
        let code = program(bits, &body1, &mid, &body2, n2, close);
        let mut gpr = gpr;
        gpr[7] = n1;
        if sixteen {
            gpr[4] = 0x8000;
        }
        let (mut a, mut b) = pair_in(bits, &code, gpr, fl);
        let limits = match limit_kind {
            0 => Limits::default(),
            1 => Limits { instructions: Some(amount), cycles: None },
            2 => Limits { instructions: None, cycles: Some(amount) },
            _ => Limits { instructions: Some(amount), cycles: Some(amount * 3) },
        };
        run_both(&mut a, &mut b, limits, 100_000);
        prop_assert_eq!(b.jit_stats().instructions, 0);
    }
}

/// `body` (any bytes) run `n` times by an outer counted loop on EDI, then
/// HLT.
fn looped(bits: u32, body: &[u8], n: u32) -> Vec<u8> {
    let ip = if bits == 32 { 0x2000 } else { 0x100 };
    let head = asm(bits, ip, |a| a.mov(edi, n as i32).unwrap());
    let start = ip + head.len() as u64;
    let tail_ip = start + body.len() as u64;
    let tail = asm(bits, tail_ip, |a| {
        a.dec(edi).unwrap();
        a.jnz(start).unwrap();
        a.hlt().unwrap();
    });
    [head, body.to_vec(), tail].concat()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Arbitrary bytes as a loop body, every exception intercepted: both
    /// machines stop at the same place with the same state, whatever the
    /// bytes do.
    #[test]
    fn arbitrary_loop_bodies_match_the_interpreter(
        body in prop::collection::vec(any::<u8>(), 0..40),
        n in 1u32..200,
        sixteen in any::<bool>(),
        gpr in any::<[u32; 8]>(),
        fl in any::<u32>(),
        step in 1u64..5000,
    ) {
        let bits = if sixteen { 16 } else { 32 };
        let mut gpr = gpr;
        gpr[4] = 0x8000;
        let (mut a, mut b) = pair_in(bits, &looped(bits, &body, n), gpr, fl);
        for m in [&mut a, &mut b] {
            for v in 0..=255 {
                m.intercept(v, true);
            }
        }
        let limits = Limits { instructions: Some(step), cycles: None };
        for run in 0..20 {
            let e = a.run(limits);
            prop_assert_eq!(e, b.run(limits), "exit of run {}", run);
            assert_same(&a, &b, "arbitrary bytes");
            if e != Exit::InstructionLimit {
                break;
            }
        }
    }
}

/// The benchmark's tight loop, and budgets that end in every position of it.
#[test]
fn tight_loop_runs_natively_and_stops_where_the_interpreter_does() {
    let code = asm(32, 0x2000, |a| {
        let mut l = a.create_label();
        a.mov(ecx, 1000).unwrap();
        a.set_label(&mut l).unwrap();
        a.add(eax, ecx).unwrap();
        a.xor(ebx, eax).unwrap();
        a.dec(ecx).unwrap();
        a.jnz(l).unwrap();
        a.hlt().unwrap();
    });
    let (mut a, mut b) = pair(&code, [0; 8], 0);
    run_both(&mut a, &mut b, Limits::default(), 1);
    let s = a.jit_stats();
    assert_eq!(s.translated, 1);
    assert!(s.instructions > 3500, "{s:?}");
    assert_eq!(a.instructions(), 4002);
    for n in 1..40 {
        let (mut a, mut b) = pair(&code, [0; 8], 0);
        run_both(
            &mut a,
            &mut b,
            Limits {
                instructions: Some(n),
                cycles: None,
            },
            10_000,
        );
        let (mut a, mut b) = pair(&code, [0; 8], 0);
        run_both(
            &mut a,
            &mut b,
            Limits {
                instructions: None,
                cycles: Some(n),
            },
            10_000,
        );
        let (mut a, mut b) = pair(&code, [0; 8], 0);
        run_both(
            &mut a,
            &mut b,
            Limits {
                instructions: Some(150 + n),
                cycles: Some(9 * n + 400),
            },
            10_000,
        );
    }
}

#[test]
fn sixteen_bit_loop_in_real_mode() {
    // mov cx,300; l: add ax,cx; adc dx,0; xor bl,ah; dec cx; jnz l; hlt
    let code = asm(16, 0x100, |a| {
        let mut l = a.create_label();
        a.mov(cx, 300).unwrap();
        a.set_label(&mut l).unwrap();
        a.add(ax, cx).unwrap();
        a.adc(dx, 0).unwrap();
        a.xor(bl, ah).unwrap();
        a.dec(cx).unwrap();
        a.jnz(l).unwrap();
        a.hlt().unwrap();
    });
    let mut gpr = [0xFFFF_0000; 8];
    gpr[0] = 0xFF00;
    gpr[4] = 0x8000;
    let (mut a, mut b) = pair_in(16, &code, gpr, 0);
    run_both(&mut a, &mut b, Limits::default(), 1);
    assert!(a.jit_stats().instructions > 1000, "{:?}", a.jit_stats());
    assert_eq!(a.cpu().gpr[0], (0xFF00 + 300 * 301 / 2) & 0xFFFF);
    let (mut a, mut b) = pair_in(16, &code, gpr, 0);
    run_both(
        &mut a,
        &mut b,
        Limits {
            instructions: Some(77),
            cycles: Some(701),
        },
        10_000,
    );
}

/// A hot loop: `inc eax; add ebx,eax; dec ecx; jnz` 200 times, HLT.
fn hot_loop() -> Vec<u8> {
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
        m.cpu_mut().eip = 0x2006;
    }
    run_both(&mut a, &mut b, Limits::default(), 1);
    assert_eq!(a.cpu().gpr[0], 200);
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
    assert_eq!(a.cpu().gpr[3], want);
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
    assert_eq!(a.cpu().gpr[3], sum(1..=99).wrapping_sub(sum(100..=200)));
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
        m.cpu_mut().eflags |= flags::TF;
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
        m.cpu_mut().eflags &= !flags::TF;
    }
    run_both(&mut a, &mut b, Limits::default(), 1);
}

#[test]
fn host_call_inside_a_hot_loop_is_reported_every_pass() {
    let code = hot_loop();
    let (mut a, mut b) = pair(&code, [0; 8], 0);
    run_both(
        &mut a,
        &mut b,
        Limits {
            instructions: Some(300),
            cycles: None,
        },
        1,
    );
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
    gpr[4] = 0x8000;
    let (mut a, mut b) = pair(&code, gpr, 0);
    for m in [&mut a, &mut b] {
        common::set_int_gate(m, 0x30, 0x2100, 0);
        m.cpu_mut().eflags |= flags::IF;
    }
    run_both(
        &mut a,
        &mut b,
        Limits {
            instructions: Some(250),
            cycles: None,
        },
        1,
    );
    for m in [&mut a, &mut b] {
        m.raise_irq(0x30);
    }
    let e = a.run(Limits::default());
    assert_eq!(e, b.run(Limits::default()));
    assert_same(&a, &b, "after the interrupt");
    assert_eq!(e, Exit::Halted);
    assert_eq!(a.cpu().gpr[2], 1, "the handler ran once");
    assert_eq!(a.cpu().gpr[0], 200);
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
        let c = m.cpu_mut();
        c.cr3 = pd;
        c.cr0 |= 0x8000_0000;
    }
    run_both(&mut a, &mut b, Limits::default(), 1);
    let before = a.jit_stats();
    for m in [&mut a, &mut b] {
        m.write_phys(0x6000 + 4 * 2, &(0x7000u32 | 3).to_le_bytes());
        let c = m.cpu_mut();
        c.eip = 0x2000;
        c.gpr = [0; 8];
        m.set_halted(false);
    }
    run_both(&mut a, &mut b, Limits::default(), 1);
    assert_eq!(a.cpu().gpr[0], 200);
    assert!(a.jit_stats().entries > before.entries);
    // The loop head's memo gave way to a self-looping block: a third run
    // enters it once for the whole loop.
    for m in [&mut a, &mut b] {
        let c = m.cpu_mut();
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
        let c = m.cpu_mut();
        c.cr3 = pd;
        c.cr0 |= 0x8000_0000;
    }
    run_both(
        &mut a,
        &mut b,
        Limits {
            instructions: Some(300),
            cycles: None,
        },
        1,
    );
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
        m.cpu_mut().eip = 0x2000;
        m.set_halted(false);
    }
    run_both(&mut a, &mut b, Limits::default(), 1);
}
