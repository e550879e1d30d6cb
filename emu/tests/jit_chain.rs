//! Chained blocks against the interpreter: programs whose hot blocks end
//! in near CALL, RET, JMP and Jcc to other blocks on other pages, so the
//! native tier goes block to block without the run loop, under
//! instruction and cycle budgets that end runs in the middle of a chain.
//! Some cases store into the code of a block the chain jumps to (the
//! immediate of an ADD, from a subroutine the chain runs just before it),
//! others have the host rewrite that immediate between runs (page
//! generation bumped while the chain's blocks are valid and hot). Both
//! machines must end every run with the same exit, registers, flags, EIP,
//! cycles, instruction counts and memory.
//!
//! Longer runs: `PROPTEST_CASES=20000 cargo test -p emu --release --test
//! jit_chain`.
#![cfg(target_arch = "x86_64")]

mod common;
mod jitpair;

use common::asm;
use emu::{Gpr, Limits, Machine};
use iced_x86::code_asm::*;
use jitpair::{assert_same_memory, pair, run_both};
use proptest::prelude::*;

/// The main loop (written by `pair`).
const MAIN: u64 = 0x2000;
/// The subroutines, on a page of their own.
const SUBS: u64 = 0x4000;
/// The block the main loop jumps to, on a page of its own; it starts with
/// `add eax, imm32`, whose immediate is at [`PATCH`].
const AWAY: u64 = 0x5000;
/// The immediate of the ADD at [`AWAY`].
const PATCH: u32 = AWAY as u32 + 1;
/// Data the memory operands use.
const DATA: i32 = 0x8000;
/// The initial stack pointer.
const STACK: u32 = 0x9000;

/// Registers the random ops may write (ESP is the stack, EDI the loop
/// counter).
const W32: [AsmRegister32; 6] = [eax, ecx, edx, ebx, esi, ebp];
const R32: [AsmRegister32; 8] = [eax, ecx, edx, ebx, esp, ebp, esi, edi];

/// One generated instruction: (kind, a, b, imm).
type Gen = (u8, u8, u8, u32);

/// Emit one generated instruction.
fn emit(a: &mut CodeAssembler, g: Gen) {
    let (k, x, y, v) = g;
    let d = W32[usize::from(x % 6)];
    let s = R32[usize::from(y % 8)];
    let i = v as i32;
    let m = dword_ptr(DATA + i32::from(y % 64) * 4);
    let r = match k % 20 {
        0 => a.mov(d, s),
        1 => a.mov(d, i),
        2 => a.add(d, s),
        3 => a.adc(d, i),
        4 => a.sub(d, s),
        5 => a.sbb(d, s),
        6 => a.xor(d, s),
        7 => a.and(d, i),
        8 => a.or(d, s),
        9 => a.inc(d),
        10 => a.dec(d),
        11 => a.neg(d),
        12 => a.shl(d, v % 32),
        13 => a.mov(m, d),
        14 => a.add(d, m),
        15 => a.add(m, d),
        16 => a.push(s).and_then(|()| a.pop(d)),
        17 => a.lea(d, dword_ptr(s + d * 2 + i)),
        18 => a.cmp(d, s),
        // (Not taken by the tier: a block ends before it.)
        _ => a.pushfd().and_then(|()| a.popfd()),
    };
    r.expect("encodable");
}

fn emit_all(a: &mut CodeAssembler, ops: &[Gen]) {
    for g in ops {
        emit(a, *g);
    }
}

/// The blocks of a case: ops of each part, the Jcc's condition, how
/// often (a mask of EDI) the subroutine stores into [`PATCH`] (0: never),
/// and the forms of the main loop's CALL and JMP (relative, through a
/// register, through memory at [`POINTERS`]).
#[derive(Clone, Debug)]
struct Shape {
    parts: [Vec<Gen>; 8],
    cc: u8,
    smc_mask: u32,
    forms: u8,
}

/// Pointers to [`SUBS`] and [`AWAY`] for the indirect CALL and JMP.
const POINTERS: i32 = DATA + 0x200;

/// A near CALL or JMP to `target` in the form `form` picks, through
/// register `reg` (which it loads first) or the pointer at `ptr`.
fn branch(a: &mut CodeAssembler, call: bool, target: u64, form: u8, ptr: i32) {
    let reg = W32[usize::from(form / 3 % 6)];
    let r = match (form % 3, call) {
        (0, true) => a.call(target),
        (0, false) => a.jmp(target),
        (1, true) => a.mov(reg, target as i32).and_then(|()| a.call(reg)),
        (1, false) => a.mov(reg, target as i32).and_then(|()| a.jmp(reg)),
        (_, true) => a.call(dword_ptr(ptr)),
        (_, false) => a.jmp(dword_ptr(ptr)),
    };
    r.expect("encodable");
}

/// The three pieces of code (at [`MAIN`], [`SUBS`], [`AWAY`]).
fn program(s: &Shape) -> [Vec<u8>; 3] {
    let [a_ops, b_ops, c_ops, d_ops, e_ops, f_ops, g_ops, h_ops] = &s.parts;
    let sub2 = SUBS + 0x800;
    let main = asm(32, MAIN, |a| {
        let mut top = a.create_label();
        let mut skip = a.create_label();
        a.set_label(&mut top).unwrap();
        emit_all(a, a_ops);
        branch(a, true, SUBS, s.forms % 18, POINTERS);
        emit_all(a, b_ops);
        match s.cc % 4 {
            0 => a.jc(skip),
            1 => a.jz(skip),
            2 => a.js(skip),
            _ => a.jo(skip),
        }
        .unwrap();
        emit_all(a, c_ops);
        a.set_label(&mut skip).unwrap();
        branch(a, false, AWAY, s.forms / 18 % 14, POINTERS + 4);
    });
    // The way back from AWAY.
    let back = MAIN + 0x400;
    let tail = asm(32, back, |a| {
        emit_all(a, d_ops);
        a.dec(edi).unwrap();
        a.jnz(MAIN).unwrap();
        a.hlt().unwrap();
    });
    let mut main = main;
    main.resize((back - MAIN) as usize, 0x90);
    main.extend(tail);
    let subs = asm(32, SUBS, |a| {
        let mut no_store = a.create_label();
        emit_all(a, e_ops);
        if s.smc_mask != 0 {
            a.test(edi, s.smc_mask).unwrap();
            a.jnz(no_store).unwrap();
            a.mov(dword_ptr(PATCH), edi).unwrap();
        }
        a.set_label(&mut no_store).unwrap();
        a.call(sub2).unwrap();
        emit_all(a, f_ops);
        a.ret().unwrap();
    });
    let sub2_code = asm(32, sub2, |a| {
        emit_all(a, g_ops);
        a.ret().unwrap();
    });
    let mut subs = subs;
    subs.resize((sub2 - SUBS) as usize, 0x90);
    subs.extend(sub2_code);
    let away = asm(32, AWAY, |a| {
        a.add(eax, 0x1234_5678).unwrap();
        emit_all(a, h_ops);
        a.jmp(back).unwrap();
    });
    [main, subs, away]
}

/// Two machines (tier on, off) with the case's code, EDI = `n` passes and
/// translation after `hot` executions.
fn machines(s: &Shape, gpr: [u32; 8], fl: u32, n: u32, hot: u16) -> (Machine, Machine) {
    let [main, subs, away] = program(s);
    let mut gpr = gpr;
    gpr[Gpr::Esp] = STACK;
    gpr[Gpr::Edi] = n;
    let (mut a, mut b) = pair(&main, gpr, fl);
    for m in [&mut a, &mut b] {
        m.write_phys(SUBS as u32, &subs);
        m.write_phys(AWAY as u32, &away);
        m.write_phys(POINTERS as u32, &(SUBS as u32).to_le_bytes());
        m.write_phys(POINTERS as u32 + 4, &(AWAY as u32).to_le_bytes());
        m.set_jit_threshold(hot);
    }
    (a, b)
}

fn gen_strategy() -> impl Strategy<Value = Gen> {
    (any::<u8>(), any::<u8>(), any::<u8>(), any::<u32>())
}

fn ops() -> impl Strategy<Value = Vec<Gen>> {
    prop::collection::vec(gen_strategy(), 0..5)
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        [ops(), ops(), ops(), ops(), ops(), ops(), ops(), ops()],
        any::<u8>(),
        prop_oneof![Just(0u32), Just(1), Just(7), Just(31)],
        any::<u8>(),
    )
        .prop_map(|(parts, cc, smc_mask, forms)| Shape {
            parts,
            cc,
            smc_mask,
            forms,
        })
}

/// Cases run, and of them those where blocks were chained (long runs
/// print both every 5,000).
static CASES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static CHAINED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

proptest! {
    #![proptest_config(ProptestConfig { cases: jitpair::cases(128), ..ProptestConfig::default() })]

    #[test]
    fn chained_blocks_match_the_interpreter(
        s in shape(),
        n in 1u32..200,
        hot in 1u16..40,
        gpr in any::<[u32; 8]>(),
        fl in any::<u32>(),
        limit_kind in 0u8..4,
        amount in 1u64..2000,
        host_patch in any::<Option<u32>>(),
    ) {
        use std::sync::atomic::Ordering::Relaxed;
        let (mut a, mut b) = machines(&s, gpr, fl, n, hot);
        let limits = match limit_kind {
            0 => Limits::default(),
            1 => Limits { instructions: Some(amount), cycles: None },
            2 => Limits { instructions: None, cycles: Some(amount) },
            _ => Limits { instructions: Some(amount), cycles: Some(amount * 3) },
        };
        // Run by run, the host rewriting the ADD's immediate between runs
        // in some cases: the chain's next entry must see the new code.
        for run in 0..20_000u32 {
            run_both(&mut a, &mut b, limits, 1);
            if a.halted() {
                break;
            }
            if let Some(v) = host_patch {
                for m in [&mut a, &mut b] {
                    m.write_phys(PATCH, &v.wrapping_add(run).to_le_bytes());
                }
            }
        }
        prop_assert!(a.halted(), "did not finish");
        assert_same_memory(&a, &b);
        prop_assert_eq!(b.jit_stats().instructions, 0);
        let c = CASES.fetch_add(1, Relaxed) + 1;
        if a.jit_stats().chained > 0 {
            CHAINED.fetch_add(1, Relaxed);
        }
        if c.is_multiple_of(5000) {
            eprintln!("jit_chain: {c} cases, {} chained", CHAINED.load(Relaxed));
        }
    }
}

/// A fixed case: every block of the loop is translated and chained (CALL,
/// RET, Jcc, JMP, in the `forms` given), and the result is the one
/// computed by hand.
fn chained_by_hand(forms: u8) {
    let mut parts: [Vec<Gen>; 8] = Default::default();
    // `add ebx, eax` in the subroutine and `inc ecx` at the way back.
    parts[4] = vec![(2, 3, 0, 0)];
    parts[3] = vec![(9, 1, 0, 0)];
    let s = Shape {
        parts,
        cc: 1,
        smc_mask: 0,
        forms,
    };
    let (mut a, mut b) = machines(&s, [0; 8], 0, 1000, 8);
    run_both(&mut a, &mut b, Limits::default(), 1);
    let st = a.jit_stats();
    assert!(st.chained > 3 * 900, "{st:?}");
    // All but the first passes in the tier, the indirect forms included.
    let total = a.instructions();
    assert!(st.instructions * 100 > total * 98, "{st:?} of {total}");
    // EAX += 0x12345678 per pass, EBX sums EAX before each add.
    let k = 0x1234_5678u32;
    let sum = (0..1000u32).fold(0u32, |s, i| s.wrapping_add(k.wrapping_mul(i)));
    assert_eq!(a.cpu().gpr[Gpr::Ebx], sum);
    assert_eq!(a.cpu().gpr[Gpr::Ecx], 1000);
    assert_eq!(a.cpu().gpr[Gpr::Eax], k.wrapping_mul(1000));
}

#[test]
fn calls_returns_and_jumps_are_chained() {
    chained_by_hand(0);
}

/// CALL through EDX and JMP through memory; CALL through memory and JMP
/// through ESI.
#[test]
fn indirect_calls_and_jumps_are_chained() {
    chained_by_hand(7 + 18 * 2);
    chained_by_hand(2 + 18 * 13);
}

/// The subroutine stores EDI into the ADD at AWAY every eighth pass: the
/// chain's next block (AWAY, retired by the store) must run the new
/// immediate, and the sum shows every pass added the right one.
#[test]
fn store_into_a_chained_block_retires_it() {
    let mut parts: [Vec<Gen>; 8] = Default::default();
    // `mov ebx, eax` at AWAY after the ADD: EAX's sum lands in EBX.
    parts[7] = vec![(0, 3, 0, 0)];
    let s = Shape {
        parts,
        cc: 1,
        smc_mask: 7,
        forms: 0,
    };
    let n = 1000u32;
    let (mut a, mut b) = machines(&s, [0; 8], 0, n, 4);
    run_both(&mut a, &mut b, Limits::default(), 1);
    let st = a.jit_stats();
    assert!(st.chained > 1000, "{st:?}");
    // The immediate is 0x12345678 until the first pass with EDI % 8 == 0
    // stores EDI, and the last stored EDI from then on.
    let mut imm = 0x1234_5678u32;
    let mut sum = 0u32;
    for count in (1..=n).rev() {
        if count & 7 == 0 {
            imm = count;
        }
        sum = sum.wrapping_add(imm);
    }
    assert_eq!(a.cpu().gpr[Gpr::Eax], sum);
    assert_eq!(a.cpu().gpr[Gpr::Ebx], sum);
    assert!(
        st.translated > 10,
        "the block at AWAY is retranslated: {st:?}"
    );
}
