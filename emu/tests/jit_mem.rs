//! The native tier's memory operands against the interpreter: identical
//! machines, tier on and off, run random loops of loads (MOV, ALU, MOVZX,
//! MOVSX), stores, read-modify-write ops, PUSH/POP and CALL/RET near in
//! every size, 16- and 32-bit addressing and
//! segment overrides, with pointers that walk across page boundaries,
//! segment limits (small, expand-down, read-only segments), pages that are
//! absent, read-only, supervisor-only, or not yet accessed or dirty, and
//! the code's own page (self-modifying stores into the running block). All
//! exceptions are intercepted, so a fault ends the run: both machines must
//! stop at the same place with the same registers, flags, EIP, CR2,
//! cycles, instruction counts, exception (vector and error code) and
//! memory (the low 128 KB, where everything is, and the page tables).
//!
//! Longer runs: `PROPTEST_CASES=20000 cargo test -p emu --release --test
//! jit_mem`.
#![cfg(target_arch = "x86_64")]

mod common;
mod jitpair;

use common::{CODE3, DATA3, EXPDOWN, SMALL, asm, desc, prot_machine, real_machine};
use emu::{Descriptor, Exit, Gpr, Limits, Machine, SegReg, flags};
use iced_x86::code_asm::*;
use jitpair::{assert_same, assert_same_memory};
use proptest::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

const PD: u32 = 0x10_0000;
const PT: u32 = 0x10_1000;

/// One generated instruction: (kind, a, b, value).
type Gen = (u8, u8, u8, u32);

/// The machine a case runs on.
#[derive(Clone, Copy, Debug)]
enum Setup {
    /// Flat 32-bit protected mode, CPL 0, no paging.
    Flat,
    /// The same with paging (identity map, some pages changed).
    Paged,
    /// Paging at CPL 3.
    User,
    /// Real mode, 16-bit code.
    Real,
}

fn setup_of(n: u8) -> Setup {
    [Setup::Flat, Setup::Paged, Setup::User, Setup::Real][usize::from(n % 4)]
}

/// Base registers of generated addresses (EDI counts the loop).
const BASE32: [AsmRegister32; 3] = [esi, ebx, ebp];
const DATA32: [AsmRegister32; 3] = [eax, ecx, edx];
const DATA16: [AsmRegister16; 3] = [ax, cx, dx];
/// BL is a pointer's low byte, AH is not taken with memory by the tier.
const DATA8: [AsmRegister8; 5] = [al, cl, dl, bl, ah];

/// The memory operand of a generated op: base + disp, base + index *
/// scale + disp or an absolute address, 32- or 16-bit addressing, with a
/// segment override or not.
fn operand(x: u8, y: u8, v: u32, bits: u32) -> AsmMemoryOperand {
    let disp = [0, 4, -4, 2, 0x7FF, 0xFFE, (v >> 8) as i8 as i32, -1][usize::from(y % 8)];
    let base = BASE32[usize::from(x % 3)];
    let sixteen = match bits {
        16 => v & 0x1000_0000 == 0,
        _ => v & 0x3000_0000 == 0,
    };
    let m = if sixteen {
        // 16-bit addressing (0x67 in 32-bit code).
        let (b, i) = [(bx, si), (bp, di), (bx, di), (bp, si)][usize::from(x % 4)];
        match (y >> 3) % 4 {
            0 => b + i + disp,
            1 => si + disp,
            2 => b + disp,
            _ => di + 0,
        }
    } else {
        match (y >> 3) % 4 {
            0 | 1 => base + disp,
            2 => base + ecx * 2 + disp,
            _ => ptr((v & 0xFFFF) as u64),
        }
    };
    match (y >> 5) % 8 {
        4 => m.es(),
        5 => m.fs(),
        6 => m.gs(),
        7 if v & 1 == 0 => m.ss(),
        7 => m.cs(),
        _ => m,
    }
}

/// Emit one generated op; `skip` is the target of a forward Jcc.
/// `subs`: a routine that returns with RET, and one that takes a pushed
/// argument and returns with RET imm.
fn emit(a: &mut CodeAssembler, g: Gen, skip: CodeLabel, bits: u32, subs: [CodeLabel; 2]) {
    let (k, x, y, v) = g;
    let m = operand(x, y, v, bits);
    let size = (x >> 2) % 3;
    let d32 = DATA32[usize::from(y % 3)];
    let d16 = DATA16[usize::from(y % 3)];
    let d8 = DATA8[usize::from(y % 5)];
    let imm = (v >> 12) as i32;
    let alu = (v >> 4) % 8;
    macro_rules! sized {
        ($f:ident, $d:expr) => {
            match size {
                0 => a.$f(dword_ptr(m), d32),
                1 => a.$f(word_ptr(m), d16),
                _ => a.$f(byte_ptr(m), $d),
            }
        };
    }
    macro_rules! sized_imm {
        ($f:ident) => {
            match size {
                0 => a.$f(dword_ptr(m), imm),
                1 => a.$f(word_ptr(m), imm as i16 as i32),
                _ => a.$f(byte_ptr(m), imm as i8 as i32),
            }
        };
    }
    macro_rules! load {
        ($f:ident) => {
            match size {
                0 => a.$f(d32, dword_ptr(m)),
                1 => a.$f(d16, word_ptr(m)),
                _ => a.$f(d8, byte_ptr(m)),
            }
        };
    }
    macro_rules! by_alu {
        ($mac:ident $(, $e:expr)?) => {
            match alu {
                0 => $mac!(add $(, $e)?),
                1 => $mac!(or $(, $e)?),
                2 => $mac!(adc $(, $e)?),
                3 => $mac!(sbb $(, $e)?),
                4 => $mac!(and $(, $e)?),
                5 => $mac!(sub $(, $e)?),
                6 => $mac!(xor $(, $e)?),
                _ => $mac!(cmp $(, $e)?),
            }
        };
    }
    let r = match k % 16 {
        0 => load!(mov),
        1 => match alu % 4 {
            0 => a.movzx(d32, byte_ptr(m)),
            1 => a.movzx(d32, word_ptr(m)),
            2 => a.movsx(d16, byte_ptr(m)),
            _ => a.movsx(d32, word_ptr(m)),
        },
        2 => sized!(mov, d8),
        3 => sized_imm!(mov),
        4 => by_alu!(load),
        5 => by_alu!(sized, d8),
        6 => by_alu!(sized_imm),
        7 => sized!(test, d8),
        8 => sized_imm!(test),
        9 => match (size, alu % 4) {
            (0, 0) => a.inc(dword_ptr(m)),
            (0, 1) => a.dec(dword_ptr(m)),
            (0, 2) => a.neg(dword_ptr(m)),
            (0, _) => a.not(dword_ptr(m)),
            (1, 0) => a.inc(word_ptr(m)),
            (1, 1) => a.dec(word_ptr(m)),
            (1, 2) => a.neg(word_ptr(m)),
            (1, _) => a.not(word_ptr(m)),
            (_, 0) => a.inc(byte_ptr(m)),
            (_, 1) => a.dec(byte_ptr(m)),
            (_, 2) => a.neg(byte_ptr(m)),
            _ => a.not(byte_ptr(m)),
        },
        // Pointers walk (across pages and limits).
        10 | 11 => a.add(
            BASE32[usize::from(x % 3)],
            [4, -4, 1, -2, 0x7FE, -0x801][usize::from(y % 6)],
        ),
        12 => match v % 8 {
            0 | 1 => a.push(d32),
            2 => a.pop(d32),
            3 if bits == 16 => a.push(imm as i16 as i32),
            3 => a.push(imm),
            4 => a.push(d16),
            5 => a.pop(d16),
            6 => a.push(ebx),
            // PUSH m: the operand read, then the stack written.
            _ if bits == 16 => a.push(word_ptr(m)),
            _ => a.push(dword_ptr(m)),
        },
        13 => match v % 5 {
            0 | 1 => a.call(subs[0]),
            2 => a.push(imm as i8 as i32).and_then(|()| a.call(subs[1])),
            // A frame made and left with LEAVE (of either size).
            3 if bits == 16 => a
                .push(bp)
                .and_then(|()| a.mov(bp, sp))
                .and_then(|()| a.sub(sp, 6))
                .and_then(|()| a.leave()),
            3 => a
                .push(ebp)
                .and_then(|()| a.mov(ebp, esp))
                .and_then(|()| a.sub(esp, 12))
                .and_then(|()| a.leave()),
            _ => a.adc(d16, d16),
        },
        14 => match v % 4 {
            0 => a.stc(),
            1 => a.cmc(),
            2 => a.inc(d32),
            _ => a.shl(d32, 1),
        },
        _ => match v % 4 {
            0 => a.jb(skip),
            1 => a.jne(skip),
            2 => a.jle(skip),
            _ => a.jp(skip),
        },
    };
    r.expect("assemble");
}

/// A counted loop (EDI, `n` passes) over `body`, then HLT, at 0x2000 (32)
/// or 0x100 (16).
fn program(bits: u32, body: &[Gen], close: u8) -> Vec<u8> {
    asm(bits, if bits == 32 { 0x2000 } else { 0x100 }, |a| {
        let mut labels: Vec<CodeLabel> = (0..=body.len()).map(|_| a.create_label()).collect();
        let mut subs = [a.create_label(), a.create_label()];
        let head = labels[0];
        for (i, g) in body.iter().enumerate() {
            a.set_label(&mut labels[i]).unwrap();
            let target = labels[(i + 2 + usize::from(g.1 % 2)).min(body.len())];
            emit(a, *g, target, bits, subs);
        }
        a.set_label(&mut labels[body.len()]).unwrap();
        if close.is_multiple_of(2) {
            a.dec(edi).unwrap();
            a.jne(head).unwrap();
        } else {
            a.sub(edi, 1).unwrap();
            a.ja(head).unwrap();
        }
        a.hlt().unwrap();
        // inc edx; mov [esi+8],eax; ret
        a.set_label(&mut subs[0]).unwrap();
        a.inc(edx).unwrap();
        a.mov(dword_ptr(esi + 8), eax).unwrap();
        a.ret().unwrap();
        // add eax,[esp+n]; ret n (n = the size of a push here)
        a.set_label(&mut subs[1]).unwrap();
        let n = if bits == 32 { 4 } else { 2 };
        if bits == 32 {
            a.add(eax, dword_ptr(esp + n)).unwrap();
        } else {
            a.add(ax, word_ptr(esp + n)).unwrap();
        }
        a.ret_1(n).unwrap();
    })
}

fn set_pte(m: &mut Machine, page: u32, v: u32) {
    m.write_phys(PT + page * 4, &v.to_le_bytes());
}

/// The machine for `setup` with `code`; `pages` changes the PTEs of pages
/// 3..=0x13 (bits per page: not present, read-only, supervisor, A and D
/// clear), `wp` sets CR0.WP.
fn machine(setup: Setup, code: &[u8], pages: u64, wp: bool, jit: bool) -> Machine {
    let mut m = match setup {
        Setup::Real => real_machine(code),
        _ => prot_machine(code),
    };
    m.set_jit(jit);
    // The threshold these cases were sized for.
    m.set_jit_threshold(32);
    if !matches!(setup, Setup::Real) {
        let seg = |e: u64, sel: u16| Descriptor(e).to_segment(sel);
        // ES read-only data at 0x4000 (limit 0x1FFF), FS small, GS
        // expand-down 16-bit, both at 0x10000 (limit 0xFFF).
        m.set_segment(SegReg::Es, seg(desc(0x4000, 0x1FFF, 0xF0, 0x4), 0x50));
        m.set_segment(SegReg::Fs, seg(desc(0x10000, 0xFFF, 0x92, 0x4), SMALL));
        m.set_segment(SegReg::Gs, seg(desc(0x10000, 0xFFF, 0x96, 0), EXPDOWN));
        if matches!(setup, Setup::Flat) && pages & 1 != 0 {
            // A 16-bit expand-down stack: SP wraps, offsets below 0x1000
            // fault.
            m.set_segment(SegReg::Ss, seg(desc(0, 0xFFF, 0x96, 0), EXPDOWN));
        }
    }
    if matches!(setup, Setup::Paged | Setup::User) {
        m.write_phys(PD, &(PT | 7).to_le_bytes());
        for p in 0..1024 {
            set_pte(&mut m, p, (p << 12) | 7);
        }
        for p in 3..=0x13u32 {
            let bits = (pages >> (3 * (p - 3))) & 7;
            let mut e = (p << 12) | 7;
            match bits {
                1 => e &= !1,
                2 => e &= !2,
                3 if p != 8 => e &= !4,
                4 => e |= 0x60,
                5 => e |= 0x20,
                _ => {}
            }
            set_pte(&mut m, p, e);
        }
        let c = m.cpu_mut_flush_tlb();
        c.cr3 = PD;
        c.cr0 |= 0x8000_0000;
        if wp {
            c.cr0 |= 1 << 16;
        }
    }
    if matches!(setup, Setup::User) {
        let f = 0xFFFF_FFFF;
        m.set_segment(
            SegReg::Cs,
            Descriptor(desc(0, f, 0xFA, 0x4)).to_segment(CODE3),
        );
        for s in [SegReg::Ds, SegReg::Ss] {
            m.set_segment(s, Descriptor(desc(0, f, 0xF2, 0x4)).to_segment(DATA3));
        }
    }
    for v in 0..=255 {
        m.intercept(v, true);
    }
    m
}

/// Interesting pointer values: page ends, segment limits, the code page.
fn pointer(choice: u8, r: u32) -> u32 {
    match choice % 12 {
        0 => 0x4000,
        1 => 0x4FFE,
        2 => 0x5FFD,
        3 => 0x0FFE,
        4 => 0x1000,
        5 => 0x0FFF,
        6 => 0xFFFE,
        7 => 0x2000 + (r & 0x3F),
        8 => 0x7FFC,
        9 => 0x11FF0 + (r & 0xF),
        10 => 0x4000 + (r & 0x1FFF),
        _ => r,
    }
}

/// The most instructions one case runs (a loop whose code a store
/// rewrote may never end).
const MAX_INSTRUCTIONS: u64 = 1 << 22;

/// Cases run (long runs print the count every 5,000).
static CASES: AtomicU64 = AtomicU64::new(0);

proptest! {
    #![proptest_config(ProptestConfig { cases: jitpair::cases(256), ..ProptestConfig::default() })]

    #[test]
    fn memory_loops_match_the_interpreter(
        body in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>(), any::<u32>()), 1..10),
        n in 1u32..200,
        close in any::<u8>(),
        setup in any::<u8>(),
        pointers in any::<[u8; 4]>(),
        gpr in any::<[u32; 8]>(),
        fl in any::<u32>(),
        pages in any::<u64>(),
        wp in any::<bool>(),
        step in prop_oneof![Just(u64::MAX), 1u64..400],
    ) {
        let done = CASES.fetch_add(1, Ordering::Relaxed) + 1;
        if done.is_multiple_of(5000) {
            eprintln!("memory_loops_match_the_interpreter: {done} cases");
        }
        let setup = setup_of(setup);
        let bits = if matches!(setup, Setup::Real) { 16 } else { 32 };
        let code = program(bits, &body, close);
        let mut gpr = gpr;
        gpr[Gpr::Edi] = n;
        gpr[Gpr::Esp] = [0x8000, 0x7002, 0x1001, 0x5FFE][usize::from(pointers[3] % 4)];
        gpr[Gpr::Esi] = pointer(pointers[0], gpr[Gpr::Esi]);
        gpr[Gpr::Ebx] = pointer(pointers[1], gpr[Gpr::Ebx]);
        gpr[Gpr::Ebp] = pointer(pointers[2], gpr[Gpr::Ebp]);
        let (mut a, mut b) = (
            machine(setup, &code, pages, wp, true),
            machine(setup, &code, pages, wp, false),
        );
        for m in [&mut a, &mut b] {
            let c = m.cpu_mut_flush_tlb();
            c.gpr = gpr;
            c.eflags = (c.eflags & !flags::STATUS) | (fl & flags::STATUS);
        }
        // A store into the loop's own code can make it endless, so even
        // the "no budget" runs have one: MAX_INSTRUCTIONS in all.
        let limits = Limits {
            instructions: Some(step.min(MAX_INSTRUCTIONS)),
            cycles: None,
        };
        for run in 0..2000 {
            let e = a.run(limits);
            prop_assert_eq!(e, b.run(limits), "exit of run {}", run);
            assert_same(&a, &b, "memory loop");
            if e != Exit::InstructionLimit || a.instructions() >= MAX_INSTRUCTIONS {
                break;
            }
        }
        assert_same_memory(&a, &b);
    }
}

/// The benchmark's copy loop runs natively and matches the interpreter,
/// with paging off and on.
#[test]
fn copy_loop_runs_natively() {
    let code = asm(32, 0x2000, |a| {
        let mut l = a.create_label();
        a.mov(esi, 0x1_0000).unwrap();
        a.mov(edi, 0x1_8000).unwrap();
        a.mov(ecx, 1024).unwrap();
        a.set_label(&mut l).unwrap();
        a.mov(eax, dword_ptr(esi)).unwrap();
        a.mov(dword_ptr(edi), eax).unwrap();
        a.add(esi, 4).unwrap();
        a.add(edi, 4).unwrap();
        a.dec(ecx).unwrap();
        a.jnz(l).unwrap();
        a.hlt().unwrap();
    });
    for setup in [Setup::Flat, Setup::Paged, Setup::User] {
        let (mut a, mut b) = (
            machine(setup, &code, 0, false, true),
            machine(setup, &code, 0, false, false),
        );
        let data: Vec<u8> = (0..4096u32).map(|i| (i * 7) as u8).collect();
        for m in [&mut a, &mut b] {
            m.write_phys(0x1_0000, &data);
        }
        let e = a.run(Limits::default());
        assert_eq!(e, b.run(Limits::default()), "{setup:?}");
        if matches!(setup, Setup::User) {
            // HLT at CPL 3.
            assert_eq!(
                e,
                Exit::Exception {
                    fault: emu::Fault::gp(0),
                    software: false
                }
            );
        } else {
            assert_eq!(e, Exit::Halted, "{setup:?}");
        }
        assert_same(&a, &b, "copy loop");
        assert_same_memory(&a, &b);
        let mut out = vec![0u8; 4096];
        a.read_phys(0x1_8000, &mut out);
        assert_eq!(out, data, "{setup:?}");
        assert!(
            a.jit_stats().instructions > 5000,
            "{setup:?}: {:?}",
            a.jit_stats()
        );
    }
}

/// A store into the running block's own page leaves the block before it,
/// and the rewritten instruction runs on the next pass.
#[test]
fn store_into_the_running_block() {
    // l: inc eax; mov [imm_of_add], cl; add ebx, 1 (imm patched); dec
    // ecx; jnz l
    let code = asm(32, 0x2000, |a| {
        let mut l = a.create_label();
        a.mov(ecx, 100).unwrap();
        a.set_label(&mut l).unwrap();
        a.inc(eax).unwrap();
        a.mov(byte_ptr(0x2000 + 5 + 1 + 6 + 2), cl).unwrap();
        a.add(ebx, 1).unwrap();
        a.dec(ecx).unwrap();
        a.jnz(l).unwrap();
        a.hlt().unwrap();
    });
    for setup in [Setup::Flat, Setup::Paged] {
        let (mut a, mut b) = (
            machine(setup, &code, 0, false, true),
            machine(setup, &code, 0, false, false),
        );
        jitpair::run_both(&mut a, &mut b, Limits::default(), 1);
        assert_same_memory(&a, &b);
        // add ebx, cl for cl = 100..1
        assert_eq!(a.cpu().gpr[Gpr::Ebx], (1..=100).sum::<u32>());
        let limits = Limits {
            instructions: Some(7),
            cycles: None,
        };
        let (mut a, mut b) = (
            machine(setup, &code, 0, false, true),
            machine(setup, &code, 0, false, false),
        );
        jitpair::run_both(&mut a, &mut b, limits, 1000);
    }
}

/// A 16-bit block whose last byte is at offset 0xFFFF (its next IP wraps
/// to 0) is translated and run like any other.
#[test]
fn block_ending_at_the_top_of_a_16_bit_segment() {
    let mk = |jit: bool| {
        let mut m = machine(Setup::Real, &[], 0, false, jit);
        // 0xFFFC: inc ax (x4); 0x0000: jmp short 0xFFFC
        m.write_phys(0xFFFC, &[0x40, 0x40, 0x40, 0x40]);
        m.write_phys(0, &[0xEB, 0xFA]);
        m.set_eip(0xFFFC);
        m
    };
    let (mut a, mut b) = (mk(true), mk(false));
    let limits = Limits {
        instructions: Some(5000),
        cycles: None,
    };
    jitpair::run_both(&mut a, &mut b, limits, 1);
    assert_eq!(a.cpu().gpr[Gpr::Eax] & 0xFFFF, 4000);
    assert!(a.jit_stats().instructions > 3000, "{:?}", a.jit_stats());
}

/// PUSH and POP run natively with a 32-bit stack (flat, paged) and a
/// 16-bit one (real mode, SP wrapping below 0).
#[test]
fn push_pop_loop_runs_natively() {
    for setup in [Setup::Flat, Setup::Paged, Setup::Real] {
        let bits = if matches!(setup, Setup::Real) { 16 } else { 32 };
        let code = asm(bits, if bits == 32 { 0x2000 } else { 0x100 }, |a| {
            let mut l = a.create_label();
            a.set_label(&mut l).unwrap();
            a.push(eax).unwrap();
            a.push(ecx).unwrap();
            a.push(0x1234).unwrap();
            // A LEAVE frame.
            if bits == 16 {
                a.push(bp).unwrap();
                a.mov(bp, sp).unwrap();
                a.sub(sp, 4).unwrap();
            } else {
                a.push(ebp).unwrap();
                a.mov(ebp, esp).unwrap();
                a.sub(esp, 8).unwrap();
            }
            a.leave().unwrap();
            // PUSH m (read, then the stack written), popped at once.
            if bits == 16 {
                a.push(word_ptr(0x200)).unwrap();
                a.pop(di).unwrap();
            } else {
                a.push(dword_ptr(0x3000)).unwrap();
                a.pop(edi).unwrap();
            }
            if bits == 16 {
                // PUSH imm is 2 bytes here.
                a.pop(si).unwrap();
            } else {
                a.pop(edx).unwrap();
            }
            a.pop(ebx).unwrap();
            a.pop(esi).unwrap();
            a.add(ebp, edx).unwrap();
            a.inc(eax).unwrap();
            a.dec(ecx).unwrap();
            a.jnz(l).unwrap();
            a.hlt().unwrap();
        });
        let mk = |jit| {
            let mut m = machine(setup, &code, 0, false, jit);
            m.gpr_mut()[Gpr::Ecx] = 500;
            // Real mode: SS:SP = 2000:0004, wrapping below 0 (away from
            // the code's page).
            m.gpr_mut()[Gpr::Esp] = if bits == 16 { 0x5_0004 } else { 0x8000 };
            if bits == 16 {
                m.set_segment(SegReg::Ss, emu::Segment::real(0x2000, false));
            }
            m
        };
        let (mut a, mut b) = (mk(true), mk(false));
        jitpair::run_both(&mut a, &mut b, Limits::default(), 1);
        if bits == 32 {
            assert_eq!(a.cpu().gpr[Gpr::Ebp], 500 * 0x1234, "{setup:?}");
        }
        // The whole loop ran in blocks: PUSH m did not end one.
        assert!(a.jit_stats().entries < 30, "{setup:?}: {:?}", a.jit_stats());
        assert!(
            a.jit_stats().instructions > 4000,
            "{setup:?}: {:?}",
            a.jit_stats()
        );
        let limits = Limits {
            instructions: Some(13),
            cycles: None,
        };
        let (mut a, mut b) = (mk(true), mk(false));
        jitpair::run_both(&mut a, &mut b, limits, 1000);
    }
}

/// CALL and RET near run natively; a RET to a target past the CS limit
/// leaves the block and faults in the interpreter.
#[test]
fn call_ret_loop_runs_natively() {
    let code = asm(32, 0x2000, |a| {
        let mut l = a.create_label();
        let mut sub = a.create_label();
        a.set_label(&mut l).unwrap();
        a.push(ecx).unwrap();
        a.call(sub).unwrap();
        a.dec(ecx).unwrap();
        a.jnz(l).unwrap();
        a.push(0x5000).unwrap();
        a.ret().unwrap();
        a.set_label(&mut sub).unwrap();
        a.add(eax, dword_ptr(esp + 4)).unwrap();
        a.ret_1(4).unwrap();
    });
    for setup in [Setup::Flat, Setup::Paged] {
        let mk = |jit| {
            let mut m = machine(setup, &code, 0, false, jit);
            m.gpr_mut()[Gpr::Ecx] = 300;
            let mut code_seg = *m.cpu().sreg(SegReg::Cs);
            code_seg.limit = 0x2FFF;
            m.set_segment(SegReg::Cs, code_seg);
            m
        };
        let (mut a, mut b) = (mk(true), mk(false));
        let e = a.run(Limits::default());
        assert_eq!(e, b.run(Limits::default()));
        assert_eq!(
            e,
            Exit::Exception {
                fault: emu::Fault::gp(0),
                software: false
            }
        );
        assert_same(&a, &b, "RET past the limit");
        assert_same_memory(&a, &b);
        assert_eq!(a.cpu().gpr[Gpr::Eax], 300 * 301 / 2, "{setup:?}");
        assert!(
            a.jit_stats().instructions > 1000,
            "{setup:?}: {:?}",
            a.jit_stats()
        );
        let limits = Limits {
            instructions: Some(11),
            cycles: Some(97),
        };
        let (mut a, mut b) = (mk(true), mk(false));
        jitpair::run_both(&mut a, &mut b, limits, 1000);
    }
}

/// One generated string-test op: (kind, a, b, value).
fn emit_string(a: &mut CodeAssembler, g: Gen, bits: u32) {
    let (k, x, y, v) = g;
    let size = x % 3;
    // 0x67: the other address size (16-bit addressing in 32-bit code).
    let other = y & 0x80 != 0;
    let mut bytes: Vec<u8> = Vec::new();
    let prefix_seg = [
        None,
        Some(0x26),
        Some(0x64),
        Some(0x65),
        Some(0x36),
        Some(0x2E),
    ][usize::from((y >> 2) % 6)];
    let op = |base: u8| -> Vec<u8> {
        let mut b = Vec::new();
        if other {
            b.push(0x67);
        }
        match size {
            0 => b.push(base),
            1 => {
                b.push(0x66);
                b.push(base + 1);
            }
            _ => b.push(base + 1),
        }
        b
    };
    // Mostly short; some around the interpreter's 4096-element chunk; with
    // 16-bit addressing, a count past 0xFFFF (CX alone counts).
    let addr16 = (bits == 16) != other;
    let count = [
        0u32, 1, 2, 3, 17, 33, 100, 255, 1, 2, 3, 5, 1000, 4095, 4096, 4097, 9000,
    ][usize::from(y % 17)];
    let count = if addr16 && v & 0x100 != 0 {
        count | 0x1_0000
    } else {
        count
    };
    let pick = |c: u8| pointer(c, v);
    let r = match k % 12 {
        // Plain MOVS/STOS/LODS (a segment prefix on MOVS/LODS).
        0..=2 => {
            if let (Some(p), false) = (prefix_seg, k % 3 == 1) {
                bytes.push(p);
            }
            bytes.extend(op([0xA4, 0xAA, 0xAC][usize::from(k % 3)]));
            a.db(&bytes)
        }
        // The same with REP (or REPNE) and a count in ECX first.
        3..=5 => {
            let which = [0xA4, 0xAA, 0xAC][usize::from(k % 3)];
            a.mov(ecx, count as i32).expect("mov");
            if let (Some(p), false) = (prefix_seg, k % 3 == 1) {
                bytes.push(p);
            }
            bytes.push(if v & 0x10 != 0 { 0xF2 } else { 0xF3 });
            bytes.extend(op(which));
            a.db(&bytes)
        }
        6 => a.mov(esi, pick(x) as i32),
        7 => a.mov(edi, pick(y) as i32),
        8 => match v % 4 {
            0 => a.std(),
            1 => a.cld(),
            2 => a.mov(eax, v as i32),
            _ => a.add(esi, (v as i32) >> 20),
        },
        9 => a.add(edi, [4, -4, 1, -2, 0x7FE, -0x801][usize::from(y % 6)]),
        10 => a.inc(ebx),
        _ => {
            if bits == 16 {
                a.add(word_ptr(bx), ax)
            } else {
                a.add(dword_ptr(ebx), eax)
            }
        }
    };
    r.expect("assemble");
}

/// A counted loop (EDX, `n` passes) over string ops, then HLT.
fn string_program(bits: u32, body: &[Gen]) -> Vec<u8> {
    asm(bits, if bits == 32 { 0x2000 } else { 0x100 }, |a| {
        let mut head = a.create_label();
        a.set_label(&mut head).unwrap();
        for g in body {
            emit_string(a, *g, bits);
        }
        a.dec(edx).unwrap();
        a.jne(head).unwrap();
        a.hlt().unwrap();
    })
}

/// All of RAM the same.
fn assert_same_ram(a: &Machine, b: &Machine) {
    let (mut x, mut y) = (vec![0u8; 4 << 20], vec![0u8; 4 << 20]);
    a.read_phys(0, &mut x);
    b.read_phys(0, &mut y);
    if let Some(i) = (0..x.len()).find(|&i| x[i] != y[i]) {
        panic!("memory differs at {i:#x}: {:#x} vs {:#x}", x[i], y[i]);
    }
}

static STRING_CASES: AtomicU64 = AtomicU64::new(0);

proptest! {
    #![proptest_config(ProptestConfig { cases: jitpair::cases(256), ..ProptestConfig::default() })]

    /// MOVS/STOS/LODS with and without REP, both directions, every size,
    /// both address sizes and segment overrides, counts around the
    /// interpreter's 4096-element chunk, pointers at page ends, segment
    /// limits, read-only and expand-down ES, absent, read-only,
    /// supervisor-only and not-yet-accessed pages, and the code's own page;
    /// instruction and cycle budgets that end anywhere.
    #[test]
    fn string_loops_match_the_interpreter(
        body in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>(), any::<u32>()), 1..8),
        n in 30u32..60,
        setup in any::<u8>(),
        es_kind in 0u8..6,
        pointers in any::<[u8; 2]>(),
        gpr in any::<[u32; 8]>(),
        df in any::<bool>(),
        pages in any::<u64>(),
        wp in any::<bool>(),
        step in prop_oneof![Just(u64::MAX), 1u64..400],
        cycles in prop_oneof![Just(u64::MAX), 1u64..50_000],
    ) {
        let done = STRING_CASES.fetch_add(1, Ordering::Relaxed) + 1;
        if done.is_multiple_of(1000) {
            eprintln!("string_loops_match_the_interpreter: {done} cases");
        }
        let setup = setup_of(setup);
        let bits = if matches!(setup, Setup::Real) { 16 } else { 32 };
        let code = string_program(bits, &body);
        let mut gpr = gpr;
        gpr[Gpr::Edx] = n;
        gpr[Gpr::Esp] = 0x8000;
        gpr[Gpr::Esi] = pointer(pointers[0], gpr[Gpr::Esi]);
        gpr[Gpr::Edi] = pointer(pointers[1], gpr[Gpr::Edi]);
        gpr[Gpr::Ebx] = 0x6000 + (gpr[Gpr::Ebx] & 0xFFC);
        let (mut a, mut b) = (
            machine(setup, &code, pages, wp, true),
            machine(setup, &code, pages, wp, false),
        );
        // Data that is not zero, so every byte copied shows.
        let data: Vec<u8> = (0..0x1_C000u32).map(|i| (i.wrapping_mul(0x9E37_79B9) >> 24) as u8).collect();
        for m in [&mut a, &mut b] {
            m.write_phys(0x4000, &data);
            if !matches!(setup, Setup::Real) {
                let seg = |e: u64, sel: u16| Descriptor(e).to_segment(sel);
                let user = matches!(setup, Setup::User);
                let (flat, sel) = if user { (0xF2, DATA3) } else { (0x92, 0x10) };
                let s = match es_kind {
                    // (0: the read-only ES of `machine`.)
                    1 | 2 | 5 => Some(seg(desc(0, 0xFFFF_FFFF, flat, 0x4), sel)),
                    3 => Some(seg(desc(0x10000, 0xFFF, 0x96, 0), EXPDOWN)),
                    4 => Some(seg(desc(0x4000, 0x1FFF, 0x92, 0x4), SMALL)),
                    _ => None,
                };
                if let Some(s) = s {
                    m.set_segment(SegReg::Es, s);
                }
            }
            let c = m.cpu_mut_flush_tlb();
            c.gpr = gpr;
            if df {
                c.eflags |= flags::DF;
            }
        }
        // (Stores may turn the code into a loop that never ends: a case
        // stops after 40 runs of at most 500,000 cycles.)
        let limits = Limits {
            instructions: (step != u64::MAX).then_some(step),
            cycles: Some(cycles.min(500_000)),
        };
        for run in 0..40 {
            let e = a.run(limits);
            prop_assert_eq!(e, b.run(limits), "exit of run {}", run);
            assert_same(&a, &b, "string loop");
            if !matches!(e, Exit::InstructionLimit | Exit::CycleLimit) {
                break;
            }
        }
        assert_same_ram(&a, &b);
    }
}

/// REP MOVSD/STOSD copies of a few pages, and a MOVS/STOS/LODS loop, run
/// in the tier (a chunk is one instruction) and match the interpreter,
/// paging off and on.
#[test]
fn string_ops_run_natively() {
    let code = asm(32, 0x2000, |a| {
        let mut l = a.create_label();
        let mut outer = a.create_label();
        a.cld().unwrap();
        a.mov(ebx, 200).unwrap();
        a.set_label(&mut outer).unwrap();
        a.mov(esi, 0x1_0000).unwrap();
        a.mov(edi, 0x2_0000).unwrap();
        a.mov(ecx, 6000).unwrap();
        a.rep().movsd().unwrap();
        a.mov(eax, 0x1234_5678).unwrap();
        a.mov(ecx, 3000).unwrap();
        a.rep().stosw().unwrap();
        a.dec(ebx).unwrap();
        a.jnz(outer).unwrap();
        a.mov(esi, 0x1_0000).unwrap();
        a.mov(edi, 0x3_0000).unwrap();
        a.mov(edx, 500).unwrap();
        a.set_label(&mut l).unwrap();
        a.lodsd().unwrap();
        a.add(eax, edx).unwrap();
        a.stosd().unwrap();
        a.movsb().unwrap();
        a.dec(edx).unwrap();
        a.jnz(l).unwrap();
        a.hlt().unwrap();
    });
    for paged in [false, true] {
        let (mut a, mut b) = (
            machine(Setup::Flat, &code, 0, false, true),
            machine(Setup::Flat, &code, 0, false, false),
        );
        for m in [&mut a, &mut b] {
            let data: Vec<u8> = (0..0x8000u32).map(|i| (i * 13 + 7) as u8).collect();
            m.write_phys(0x1_0000, &data);
            let flat = Descriptor(desc(0, 0xFFFF_FFFF, 0x92, 0x4)).to_segment(0x10);
            m.set_segment(SegReg::Es, flat);
            if paged {
                m.write_phys(PD, &(PT | 7).to_le_bytes());
                for p in 0..1024 {
                    set_pte(m, p, (p << 12) | 0x67);
                }
                let c = m.cpu_mut_flush_tlb();
                c.cr3 = PD;
                c.cr0 |= 0x8000_0000;
            }
        }
        let mut runs = 0;
        loop {
            runs += 1;
            let e = a.run(Limits::default());
            assert_eq!(e, b.run(Limits::default()));
            assert_same(&a, &b, "string ops");
            if e == Exit::Halted || runs > 10 {
                break;
            }
        }
        assert!(a.halted(), "{:?}", a.cpu());
        assert_same_ram(&a, &b);
        let s = a.jit_stats();
        assert!(s.instructions > 2000, "paged {paged}: {s:?}");
        // The REP chunks ran in the tier (200 passes of 2 + 1 chunks, most
        // after the blocks got hot): the interpreter alone took those
        // instructions in the first passes only.
        let rep_chunks = 200 * 3;
        assert!(
            a.instructions() - s.instructions < rep_chunks,
            "{s:?} of {}",
            a.instructions()
        );
        let mut out = [0u8; 8];
        a.read_phys(0x2_0000 + 4 * 6000, &mut out);
        assert_eq!(out, [0x78, 0x56, 0x78, 0x56, 0x78, 0x56, 0x78, 0x56]);
    }
}
