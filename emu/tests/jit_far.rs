//! The native tier's segment loads and far transfers against the
//! interpreter: PUSH Sreg, MOV/POP to DS, ES, FS and GS, far CALL, JMP
//! and RET in 16- and 32-bit protected mode, at CPL 0 and 3, with paging
//! on and off, through a GDT and LDT holding every kind of descriptor the
//! checks tell apart (null, past the limit, data, read-only, readable and
//! execute-only code, conforming, other DPLs and RPLs, not present,
//! accessed bit clear, gates, system segments). Guest stores into the GDT
//! (presence and accessed bits), LLDT between two LDTs, host writes to the
//! tables and TLB flushes between runs test the descriptor cache's
//! invalidation. All exceptions are intercepted, so a fault ends a run:
//! both machines must stop at the same place with the same registers
//! (segment caches included), flags, EIP, cycles, instruction counts,
//! exception and memory (the descriptor tables' accessed bits included).
//! A second generator does the same in real mode (loads that keep the
//! limits, far transfers checked against CS's limit, SS switches, stores
//! into the code through the loaded segments).
//!
//! Longer runs: `PROPTEST_CASES=20000 cargo test -p emu --release --test
//! jit_far`.
#![cfg(target_arch = "x86_64")]

mod common;
mod jitpair;

use common::{asm, desc, gate};
use emu::{CpuModel, Descriptor, Exit, Gpr, Limits, Machine, MachineConfig, SegReg};
use iced_x86::code_asm::*;
use jitpair::{assert_same, assert_same_memory};

/// The most instructions one run of a case may take.
const MAX_INSTRUCTIONS: u64 = 1 << 22;

/// Compare the memory the programs use: the tables, code, stack and data
/// (below 0x60000), and the page tables.
fn assert_same_ram(a: &Machine, b: &Machine) {
    assert_same_memory(a, b);
    let (mut x, mut y) = (vec![0u8; 0x6_0000], vec![0u8; 0x6_0000]);
    a.read_phys(0, &mut x);
    b.read_phys(0, &mut y);
    if let Some(i) = (0..x.len()).find(|&i| x[i] != y[i]) {
        panic!("memory differs at {i:#x}: {:#x} vs {:#x}", x[i], y[i]);
    }
}
use proptest::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// Cases run, and of them those where the tier ran instructions (long
/// runs print both every 5,000).
static CASES: AtomicU64 = AtomicU64::new(0);
static NATIVE: AtomicU64 = AtomicU64::new(0);

const GDT: u32 = 0x800;
const LDT0: u32 = 0x7000;
const LDT1: u32 = 0x7100;
const PD: u32 = 0x10_0000;
const PT: u32 = 0x10_1000;
/// Main code (selector 0x08).
const MAIN: u32 = 0x1_0000;
/// Stack and data (0x10).
const STACK: u32 = 0x2_0000;
/// The far routines (0x18 and others).
const FAR: u32 = 0x3_0000;
/// Data segments.
const DATA: u32 = 0x4_0000;

/// Offsets of the far routines in the FAR segment.
const R_RET: u32 = 0x00;
const R_LOAD: u32 = 0x20;
const R_RET_IMM: u32 = 0x40;
const R_JMP_BACK: u32 = 0x60;
/// Where a call gate points.
const R_GATE: u32 = 0x80;
/// The selector table in the stack segment (a word per loop count).
const TABLE: u32 = 0x100;
/// The far pointer tables in the stack segment, a pointer per loop
/// count: 16:32 (8 bytes apart) and 16:16.
const PTRS: u32 = 0x800;
/// See [`PTRS`].
const PTRS16: u32 = 0x1000;
/// Far pointers to the routines, a pointer per loop count: 16:32 (8
/// bytes apart) and 16:16.
const FPTRS: u32 = 0x1400;
/// See [`FPTRS`].
const FPTRS16: u32 = 0x1C00;
/// A 16:32 far pointer to the routine that jumps back, and a 16:16 one 8
/// bytes on.
const JPTR: u32 = 0x2000;
/// Far pointers to the stack of the other size: 16:32, and 16:16 8 bytes
/// on.
const SSPTR: u32 = 0x2100;
/// Where MOV m16, Sreg stores (a word per loop count).
const STORES: u32 = 0x2200;

/// The test GDT for code of `bits` at privilege `ring` (normal
/// descriptors have DPL `ring`).
fn gdt(bits: u32, ring: u8, stack32: bool) -> Vec<u64> {
    let d = ring << 5;
    let db = if bits == 32 { 0x4 } else { 0 };
    let sb = if stack32 { 0x4 } else { 0 };
    vec![
        0,
        desc(MAIN, 0xFFFF, 0x9B | d, db),     // 0x08 main code
        desc(STACK, 0xFFFF, 0x93 | d, sb),    // 0x10 stack and data
        desc(FAR, 0x0FFF, 0x9B | d, db),      // 0x18 far routines
        desc(DATA, 0xFFFF, 0x93 | d, 0),      // 0x20 data
        desc(DATA, 0x03FF, 0x92 | d, 0),      // 0x28 data, A clear, small
        desc(DATA, 0xFFFF, 0x13 | d, 0),      // 0x30 not present
        desc(DATA, 0xFFFF, 0x91 | d, 0),      // 0x38 read-only
        desc(FAR, 0x0FFF, 0x99 | d, db),      // 0x40 execute-only code
        desc(FAR, 0x0FFF, 0x9F, db),          // 0x48 conforming readable, DPL 0
        desc(DATA + 0x1000, 0xFFFF, 0xF3, 0), // 0x50 data DPL 3
        desc(DATA, 0x00FF, 0x97 | d, 0),      // 0x58 expand-down
        desc(FAR, 0x0FFF, 0x1B | d, db),      // 0x60 code not present
        gate(0x18 | u16::from(ring), R_GATE, 0x84 | 0x60, 0), // 0x68 16-bit call gate DPL 3
        desc(LDT0, 0x17, 0x82, 0),            // 0x70 LDT 0
        desc(FAR, 0x0FFF, 0xFB, db),          // 0x78 code DPL 3
        desc(FAR, 0x0FFF, 0x9A | d, db),      // 0x80 code, A clear
        desc(0, 0xF_FFFF, 0x93 | d, 0),       // 0x88 data over the tables
        desc(LDT1, 0x0F, 0x82, 0),            // 0x90 LDT 1
        desc(0x3000, 0x67, 0x89, 0),          // 0x98 TSS (available)
        desc(FAR, 0x0FFF, 0x9B, db),          // 0xA0 code DPL 0
        desc(STACK, 0xFFFF, 0x93 | d, sb ^ 0x4), // 0xA8 the stack, other size
        desc(MAIN, 0xFFFF, 0x93 | d, 0),      // 0xB0 data alias of the main code
    ]
}

/// Data selectors the generated loads use: mostly ones that load (and
/// allow the accesses of the program), sometimes one that faults at the
/// load or at the next access.
fn data_sel(k: u32, ring: u16) -> u16 {
    let good = [
        0x20 | ring,
        0x28 | ring,
        0x04 | ring,
        0x10 | ring,
        0x58 | ring,
        0x14 | ring,
        0x18 | ring,
        0x48,
        0x0C | ring,
        0x20,
        0x50 | 3,
        0x20 | ring,
    ];
    let bad = [
        0x00,
        0x03,
        0x30 | ring,
        0x38 | ring,
        0x40 | ring,
        0x68,
        0xF8,
        0x98,
        0x1C | ring,
        0x53,
        0x23,
    ];
    if k % 16 < 13 {
        good[(k >> 4) as usize % good.len()]
    } else {
        bad[(k >> 4) as usize % bad.len()]
    }
}

/// Code selectors the generated far transfers use (likewise).
fn code_sel(k: u32, ring: u16) -> u16 {
    let good = [
        0x18 | ring,
        0x48,
        0x0C | ring,
        0x80 | ring,
        0x18 | ring,
        0x68,
    ];
    let bad = [
        0x1B,
        0x60 | ring,
        0x78 | ring,
        0x20 | ring,
        0x00,
        0xA0,
        0x98,
        0x18,
        0x7B,
    ];
    if k % 16 < 13 {
        good[(k >> 4) as usize % good.len()]
    } else {
        bad[(k >> 4) as usize % bad.len()]
    }
}

/// One generated op: (kind, a, b).
type Gen = (u8, u8, u32);

const SEGS: [AsmRegisterSegment; 4] = [ds, es, fs, gs];
const ALL_SEGS: [AsmRegisterSegment; 6] = [es, cs, ss, ds, fs, gs];

fn emit_op(
    a: &mut CodeAssembler,
    g: Gen,
    bits: u32,
    ring: u16,
    (helper, helper_m): (CodeLabel, [CodeLabel; 2]),
) {
    let (k, x, v) = g;
    let s = SEGS[usize::from(x % 4)];
    let sel = data_sel(v, ring);
    let csel = code_sel(v >> 8, ring);
    let wide = bits == 32;
    match k % 16 {
        // PUSH Sreg; POP r
        0 => {
            a.push(ALL_SEGS[usize::from(x % 6)]).unwrap();
            if wide {
                a.pop(edx).unwrap();
            } else {
                a.pop(dx).unwrap();
            }
        }
        // MOV Sreg, r16
        1 | 2 => {
            a.mov(ax, sel as u32).unwrap();
            a.mov(s, ax).unwrap();
        }
        // PUSH imm; POP Sreg
        3 => {
            if wide {
                a.push(u32::from(sel) as i32).unwrap();
            } else {
                a.push(i32::from(sel as i16)).unwrap();
            }
            a.pop(s).unwrap();
        }
        // MOV Sreg, m16 from the selector table in the stack segment
        // (indexed by the loop count, so a bad entry comes up once the
        // loop is hot), or at BX in ES (which may be anything)
        4 => {
            if x & 0x30 == 0x30 {
                if wide {
                    a.mov(s, word_ptr(ebx).es()).unwrap();
                } else {
                    a.mov(s, word_ptr(bx).es()).unwrap();
                }
            } else if wide {
                a.movzx(esi, di).unwrap();
                a.mov(s, word_ptr(esi * 2 + TABLE as i32).ss()).unwrap();
            } else {
                a.mov(si, di).unwrap();
                a.add(si, si).unwrap();
                a.mov(s, word_ptr(si + TABLE as i32).ss()).unwrap();
            }
        }
        // A memory access through a data segment register
        5 => {
            let m = if wide { word_ptr(ebx) } else { word_ptr(bx) };
            let m = match x % 4 {
                0 => m.ds(),
                1 => m.es(),
                2 => m.fs(),
                _ => m.gs(),
            };
            if x & 0x30 == 0x30 {
                a.add(m, cx).unwrap();
            } else {
                a.mov(cx, m).unwrap();
            }
        }
        // Far CALL to a routine
        6 | 7 => {
            let r = [R_RET, R_LOAD, R_RET_IMM][usize::from(x % 3)];
            // Sometimes just past the limit.
            let r = if (v >> 20) % 16 == 15 { 0x1000 } else { r };
            if r == R_RET_IMM {
                a.push(cx).unwrap();
            }
            a.call_far(csel, r).unwrap();
        }
        // Far JMP there and back (through a near CALL to a helper)
        8 => {
            a.call(helper).unwrap();
        }
        // A guest store into the GDT or LDT: clear A (mostly) or toggle P
        // of a descriptor
        9 => {
            let entry = [0x20u32, 0x28, 0x30, 0x18, 0x80, 0x0C][usize::from(x % 6)];
            let base = if entry & 4 != 0 {
                LDT0 + (entry & !7)
            } else {
                GDT + entry
            };
            let bit = if x & 0xE0 == 0xE0 { 0x80 } else { 0x01 };
            if x & 0xE0 == 0x60 {
                // A store into the loop's own code (the same byte back),
                // through a data alias of the main code segment.
                let at = 0x10 + (v & 0x3F);
                a.push(ds).unwrap();
                a.mov(ax, 0xB0 | u32::from(ring)).unwrap();
                a.mov(ds, ax).unwrap();
                if wide {
                    a.add(byte_ptr(at), 0).unwrap();
                } else {
                    a.add(byte_ptr(u64::from(at)), 0).unwrap();
                }
                a.pop(ds).unwrap();
                return;
            }
            a.push(ds).unwrap();
            a.mov(ax, 0x88).unwrap();
            a.mov(ds, ax).unwrap();
            if wide {
                a.xor(byte_ptr(base + 5), bit).unwrap();
            } else {
                a.xor(byte_ptr(u64::from(base + 5)), bit).unwrap();
            }
            a.pop(ds).unwrap();
        }
        // LLDT with one of the two LDTs (CPL 0 only)
        10 if ring == 0 => {
            a.mov(ax, if x & 1 != 0 { 0x70 } else { 0x90 }).unwrap();
            a.lldt(ax).unwrap();
        }
        // LDS/LES/LFS/LGS from the far pointer table (indexed by the loop
        // count), or from the top of the stack segment (the selector word
        // past the limit)
        12 => {
            let lxs = |a: &mut CodeAssembler, m: AsmMemoryOperand, r32: bool| {
                match (x % 4, r32) {
                    (0, true) => a.lds(edx, m),
                    (1, true) => a.les(edx, m),
                    (2, true) => a.lfs(edx, m),
                    (_, true) => a.lgs(edx, m),
                    (0, false) => a.lds(dx, m),
                    (1, false) => a.les(dx, m),
                    (2, false) => a.lfs(dx, m),
                    (_, false) => a.lgs(dx, m),
                }
                .unwrap()
            };
            let r32 = x & 0x40 != 0;
            if x & 0xB0 == 0xB0 {
                let top = if r32 { 0xFFFC } else { 0xFFFE };
                if wide {
                    lxs(a, dword_ptr(top).ss(), r32);
                } else {
                    lxs(a, dword_ptr(top as u64).ss(), r32);
                }
            } else {
                let (table, shift) = if r32 { (PTRS, 3) } else { (PTRS16, 2) };
                if wide {
                    a.movzx(esi, di).unwrap();
                    lxs(a, dword_ptr(esi * (1 << shift) + table as i32).ss(), r32);
                } else {
                    a.mov(si, di).unwrap();
                    a.shl(si, shift).unwrap();
                    lxs(a, dword_ptr(si + table as i32).ss(), r32);
                }
            }
        }
        // Far CALL through a far pointer (indexed by the loop count), or
        // far JMP through one there and back
        13 => {
            // 16:32 pointers in 32-bit code, either size in 16-bit code.
            let p32 = wide || x & 0x40 != 0;
            let (table, shift) = if p32 { (FPTRS, 3) } else { (FPTRS16, 2) };
            let ptr = |m: AsmMemoryOperand| if p32 { fword_ptr(m) } else { dword_ptr(m) };
            if x & 0x30 == 0x30 {
                a.call(helper_m[usize::from(p32)]).unwrap();
            } else if wide {
                a.movzx(esi, di).unwrap();
                a.call(ptr(esi * (1 << shift) + table as i32).ss()).unwrap();
            } else {
                a.mov(si, di).unwrap();
                a.shl(si, shift).unwrap();
                a.call(ptr(si + table as i32).ss()).unwrap();
            }
        }
        // MOV r16/r32/m16, Sreg
        15 => emit_sreg_store(a, x, wide),
        // MOV, POP or LSS to SS: the stack of either size, sometimes a
        // selector that does not load (or moves the stack away)
        14 => {
            let good = [0x10 | ring, 0xA8 | ring, 0x10 | ring];
            let bad = [
                0x00,
                0x30 | ring,
                0x38 | ring,
                0x18 | ring,
                0x50 | 3,
                0x10,
                0x28 | ring,
            ];
            let sel = if (v >> 4) % 16 < 14 {
                good[v as usize % 3]
            } else {
                bad[v as usize % 7]
            };
            match x % 3 {
                0 => {
                    a.mov(ax, u32::from(sel)).unwrap();
                    a.mov(ss, ax).unwrap();
                }
                1 => {
                    if wide {
                        a.push(u32::from(sel) as i32).unwrap();
                    } else {
                        a.push(i32::from(sel as i16)).unwrap();
                    }
                    a.pop(ss).unwrap();
                }
                _ => {
                    // LSS EDX (16:32) or DX (16:16) of the stack of the
                    // other size.
                    let (m32, m16) = if wide {
                        (
                            fword_ptr(SSPTR as i32).ss(),
                            dword_ptr(SSPTR as i32 + 8).ss(),
                        )
                    } else {
                        (
                            fword_ptr(SSPTR as u64).ss(),
                            dword_ptr(SSPTR as u64 + 8).ss(),
                        )
                    };
                    if x & 0x40 != 0 {
                        a.lss(edx, m32).unwrap();
                    } else {
                        a.lss(dx, m16).unwrap();
                    }
                }
            }
            a.inc(cx).unwrap();
        }
        // Arithmetic
        _ => {
            a.add(bx, (v & 0xFF) as i32).unwrap();
            a.and(bx, 0x3FE).unwrap();
            a.inc(cx).unwrap();
        }
    }
}

/// The main program: `count` passes of `body`, then HLT; the helper that
/// jumps far to the routine segment, which jumps far back to a near RET
/// at MAIN + 2.
fn program(bits: u32, ring: u16, body: &[Gen], count: u16) -> Vec<u8> {
    asm(bits, 0, |a| {
        let mut start = a.create_label();
        let mut top = a.create_label();
        let mut helper = a.create_label();
        a.jmp(start).unwrap();
        // MAIN + 2: the far JMP's way back
        a.ret().unwrap();
        a.set_label(&mut start).unwrap();
        a.mov(di, u32::from(count)).unwrap();
        a.set_label(&mut top).unwrap();
        let mut helper_m = [a.create_label(), a.create_label()];
        for g in body {
            emit_op(a, *g, bits, ring, (helper, helper_m));
        }
        a.dec(di).unwrap();
        a.jnz(top).unwrap();
        a.hlt().unwrap();
        a.set_label(&mut helper).unwrap();
        let c = code_sel(u32::from(count) >> 3, ring);
        a.jmp_far(c, R_JMP_BACK).unwrap();
        // The same through far pointers (16:16 and 16:32) in the stack
        // segment.
        for (i, l) in helper_m.iter_mut().enumerate() {
            a.set_label(l).unwrap();
            if i == 1 {
                a.jmp(fword_ptr(JPTR as u64).ss()).unwrap();
            } else {
                a.jmp(dword_ptr(JPTR as u64 + 8).ss()).unwrap();
            }
        }
    })
}

/// The far routines of the FAR segment.
fn routines(bits: u32, ring: u16) -> Vec<(u32, Vec<u8>)> {
    let wide = bits == 32;
    let retf = |a: &mut CodeAssembler, imm: u32| {
        match imm {
            0 => a.retf(),
            n => a.retf_1(n),
        }
        .unwrap()
    };
    let w = if wide { 4 } else { 2 };
    vec![
        (R_RET, asm(bits, 0, |a| retf(a, 0))),
        (
            R_LOAD,
            asm(bits, 0, |a| {
                a.push(ds).unwrap();
                a.mov(ax, 0x20 | ring as u32).unwrap();
                a.mov(ds, ax).unwrap();
                a.inc(word_ptr(0x10u64)).unwrap();
                a.pop(ds).unwrap();
                retf(a, 0);
            }),
        ),
        (R_RET_IMM, asm(bits, 0, |a| retf(a, w))),
        (
            R_JMP_BACK,
            asm(bits, 0, |a| a.jmp_far(0x08 | ring, 2).unwrap()),
        ),
        // (A 16-bit call gate pushes 16-bit CS:IP.)
        (R_GATE, if wide { vec![0x66, 0xCB] } else { vec![0xCB] }),
    ]
}

/// The machine setup of a case.
#[derive(Clone, Copy, Debug)]
struct Setup {
    bits: u32,
    ring: u8,
    paging: bool,
    stack32: bool,
    /// The initial ESP: 0xFFF0, or just above the page boundary at
    /// 0x8000 (aligned or not), where with paging the page below is
    /// absent if `hole`.
    esp: u32,
    hole: bool,
    /// The CPU model (the 386 and 486 share the cycle table).
    model: CpuModel,
}

fn machine(s: Setup, body: &[Gen], (count, bad_at): (u16, u16), jit: bool) -> Machine {
    let mut m = Machine::new(MachineConfig {
        ram_size: 4 << 20,
        model: s.model,
    });
    m.set_jit(jit);
    // (Short loops get hot: the results are the same for any threshold.)
    m.set_jit_threshold(8);
    // The threshold these cases were sized for.
    m.set_jit_threshold(32);
    let ring = u16::from(s.ring);
    let g = gdt(s.bits, s.ring, s.stack32);
    for (i, e) in g.iter().enumerate() {
        m.write_phys(GDT + 8 * i as u32, &e.to_le_bytes());
    }
    let d = s.ring << 5;
    let db = if s.bits == 32 { 0x4 } else { 0 };
    for (i, e) in [
        desc(DATA, 0xFFFF, 0x93 | d, 0),
        desc(FAR, 0x0FFF, 0x9B | d, db),
        desc(DATA, 0xFFFF, 0x92 | d, 0),
    ]
    .iter()
    .enumerate()
    {
        m.write_phys(LDT0 + 8 * i as u32, &e.to_le_bytes());
    }
    for (i, e) in [
        desc(DATA + 0x2000, 0xFFFF, 0x93 | d, 0),
        desc(FAR, 0x0FFF, 0x9F, db),
    ]
    .iter()
    .enumerate()
    {
        m.write_phys(LDT1 + 8 * i as u32, &e.to_le_bytes());
    }
    m.write_phys(MAIN, &program(s.bits, ring, body, count));
    for (off, code) in routines(s.bits, ring) {
        m.write_phys(FAR + off, &code);
    }
    // The selector table: good selectors but at one loop count.
    for k in 0..=u32::from(count) {
        let sel = if k == u32::from(bad_at) {
            data_sel(13 + 16 * k, ring)
        } else {
            data_sel(16 * k, ring)
        };
        m.write_phys(STACK + TABLE + 2 * k, &sel.to_le_bytes());
        let off = 0x1234_0000 + k * 2;
        m.write_phys(STACK + PTRS + 8 * k, &off.to_le_bytes());
        m.write_phys(STACK + PTRS + 8 * k + 4, &sel.to_le_bytes());
        m.write_phys(STACK + PTRS16 + 4 * k, &(off as u16).to_le_bytes());
        m.write_phys(STACK + PTRS16 + 4 * k + 2, &sel.to_le_bytes());
        // The bad one: a selector that does not load, or (odd counts) an
        // offset just past the limit.
        let bad = k == u32::from(bad_at);
        let csel = if bad && k & 1 == 0 {
            code_sel(13 + 16 * (k >> 1), ring)
        } else {
            code_sel(16 * (k >> 1), ring)
        };
        let r = match (bad, k & 1 != 0) {
            (true, true) => 0x1000,
            (_, true) => R_LOAD,
            _ => R_RET,
        };
        m.write_phys(STACK + FPTRS + 8 * k, &r.to_le_bytes());
        m.write_phys(STACK + FPTRS + 8 * k + 4, &csel.to_le_bytes());
        m.write_phys(STACK + FPTRS16 + 4 * k, &(r as u16).to_le_bytes());
        m.write_phys(STACK + FPTRS16 + 4 * k + 2, &csel.to_le_bytes());
    }
    let back = 0x18 | ring;
    m.write_phys(STACK + JPTR, &R_JMP_BACK.to_le_bytes());
    m.write_phys(STACK + JPTR + 4, &back.to_le_bytes());
    m.write_phys(STACK + JPTR + 8, &(R_JMP_BACK as u16).to_le_bytes());
    m.write_phys(STACK + JPTR + 10, &back.to_le_bytes());
    let other = 0xA8 | ring;
    m.write_phys(STACK + SSPTR, &0x1234_5678u32.to_le_bytes());
    m.write_phys(STACK + SSPTR + 4, &other.to_le_bytes());
    m.write_phys(STACK + SSPTR + 8, &0x9ABCu16.to_le_bytes());
    m.write_phys(STACK + SSPTR + 10, &other.to_le_bytes());
    if s.paging {
        m.write_phys(PD, &(PT | 7).to_le_bytes());
        for p in 0..1024u32 {
            // The page of the GDT starts not accessed.
            let e = if p == 0 {
                7
            } else if s.hole && p == (STACK + 0x7000) >> 12 {
                (p << 12) | 0x66
            } else {
                (p << 12) | 0x67
            };
            m.write_phys(PT + 4 * p, &e.to_le_bytes());
        }
    }
    {
        let c = m.cpu_mut_flush_tlb();
        c.cr0 |= 1;
        if s.paging {
            c.cr3 = PD;
            c.cr0 |= 0x8000_0000;
        }
        c.gdtr.base = GDT;
        c.gdtr.limit = (g.len() * 8 - 1) as u16;
        c.eip = 0;
        c.gpr[Gpr::Esp] = s.esp;
        c.gpr[Gpr::Ebx] = 0x200;
        c.ldtr = Descriptor(g[0x70 >> 3]).to_segment(0x70);
        c.tr = Descriptor(desc(0x3000, 0x67, 0x8B, 0)).to_segment(0x98);
    }
    let seg = |sel: u16| Descriptor(g[usize::from(sel >> 3)] | (1 << 40)).to_segment(sel);
    m.set_segment(SegReg::Cs, seg(0x08 | ring));
    for r in [SegReg::Ss, SegReg::Ds, SegReg::Es, SegReg::Fs, SegReg::Gs] {
        m.set_segment(r, seg(0x10 | ring));
    }
    for v in 0..=255 {
        m.intercept(v, true);
    }
    m
}

/// The benchmark's far-call loop (16-bit, CPL 0): the same outcome with
/// the tier on and off, and the tier runs nearly all of it, block to
/// block.
#[test]
fn far_call_loop_runs_natively() {
    let body = [(7u8, 1u8, 0u32)];
    let s = Setup {
        bits: 16,
        ring: 0,
        paging: false,
        stack32: false,
        esp: 0xFFF0,
        hole: false,
        model: CpuModel::I486,
    };
    let (mut a, mut b) = (
        machine(s, &body, (2000, 0), true),
        machine(s, &body, (2000, 0), false),
    );
    let n = jitpair::run_both(&mut a, &mut b, Limits::default(), 10);
    assert_same_ram(&a, &b);
    assert_eq!(a.cpu().eip, b.cpu().eip);
    assert!(a.halted(), "ran {n} times, {:?}", a.cpu());
    let st = a.jit_stats();
    assert!(st.instructions > 2000 * 8, "{st:?}");
    // The far CALL's block goes into the routine's, whose far RET goes
    // back into the loop's: most entries are chained.
    assert!(st.chained > st.entries / 2, "{st:?}");
}

/// A case's budget for one run from the drawn pair: `.0 * 7`
/// instructions and `.1 * 13` cycles, 0 meaning no limit. Stores into
/// the running code can make a loop endless: with no instruction budget
/// drawn, a run still stops after MAX_INSTRUCTIONS.
fn case_limits((instructions, cycles): (u64, u64)) -> Limits {
    Limits {
        instructions: Some(if instructions > 0 {
            instructions * 7
        } else {
            MAX_INSTRUCTIONS
        }),
        cycles: (cycles > 0).then_some(cycles * 13),
    }
}

/// Runs both machines with `limits` up to 200 times, checking after
/// each run that they agree (`what` ends the message), until a run ends
/// otherwise than at a limit (then true). `between(run, a, b)` goes
/// between runs.
fn run_agreeing(
    a: &mut Machine,
    b: &mut Machine,
    limits: Limits,
    what: &str,
    mut between: impl FnMut(usize, &mut Machine, &mut Machine),
) -> Result<bool, TestCaseError> {
    for run in 0..200 {
        let ea = a.run(limits);
        let eb = b.run(limits);
        prop_assert_eq!(ea, eb, "exit differs in run {}", run);
        assert_same(a, b, &format!("after run {run} ({ea:?}){what}"));
        assert_same_ram(a, b);
        if !matches!(ea, Exit::InstructionLimit | Exit::CycleLimit) {
            return Ok(true);
        }
        between(run, a, b);
    }
    Ok(false)
}

/// A host change between runs: (kind, a).
type Poke = (u8, u8);

/// Apply a host change to both machines: a descriptor's P or A bit
/// flipped, its base moved, a TLB flush (after clearing the accessed bits
/// of the tables' pages, as an OS ageing pages does), or nothing.
fn poke(m: &mut Machine, p: Poke) {
    let (k, x) = p;
    let entry = [0x20u32, 0x28, 0x30, 0x18, 0x80, 0x48, 0x10][usize::from(x % 7)];
    let mut b = [0u8; 1];
    match k % 6 {
        0 => {
            m.read_phys(GDT + entry + 5, &mut b);
            m.write_phys(GDT + entry + 5, &[b[0] ^ 0x80]);
        }
        1 => {
            m.read_phys(GDT + entry + 5, &mut b);
            m.write_phys(GDT + entry + 5, &[b[0] ^ 0x01]);
        }
        2 => {
            m.read_phys(GDT + entry + 3, &mut b);
            m.write_phys(GDT + entry + 3, &[b[0] ^ 0x10]);
        }
        3 => {
            m.cpu_mut_flush_tlb();
        }
        _ => {
            for p in [0u32, LDT0 >> 12] {
                m.read_phys(PT + 4 * p, &mut b);
                m.write_phys(PT + 4 * p, &[b[0] & !0x20]);
            }
            m.cpu_mut_flush_tlb();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: jitpair::cases(256), ..ProptestConfig::default() })]

    /// Random loops of segment loads, far transfers and descriptor table
    /// changes: the tier on and off agree after every run.
    #[test]
    fn far_loops_match_the_interpreter(
        body in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u32>()), 1..10),
        setup in 0u8..128,
        count in 20u16..150,
        bad_at in 0u16..300,
        limits in (0u64..400, 0u64..3000),
        pokes in prop::collection::vec((any::<u8>(), any::<u8>()), 0..4),
    ) {
        let done = CASES.fetch_add(1, Ordering::Relaxed) + 1;
        if done.is_multiple_of(5000) {
            let native = NATIVE.load(Ordering::Relaxed);
            eprintln!("far_loops_match_the_interpreter: {done} cases, {native} ran in the tier");
        }
        let s = Setup {
            bits: if setup & 1 != 0 { 32 } else { 16 },
            ring: if setup & 2 != 0 { 3 } else { 0 },
            paging: setup & 4 != 0,
            stack32: setup & 8 != 0,
            esp: [0xFFF0, 0x8004, 0x8003, 0x8001][usize::from((setup >> 4) & 3)],
            hole: setup & 0x14 == 0x14,
            model: if setup & 0x40 != 0 { CpuModel::I386 } else { CpuModel::I486 },
        };
        // (Mostly a count the loop reaches.)
        let bad_at = bad_at % (count + 10);
        let (mut a, mut b) = (
            machine(s, &body, (count, bad_at), true),
            machine(s, &body, (count, bad_at), false),
        );
        let poke_both = |run: usize, a: &mut Machine, b: &mut Machine| {
            if let Some(&p) = pokes.get(run % 8) {
                poke(a, p);
                poke(b, p);
            }
        };
        let what = format!(" of {s:?}");
        let ended = run_agreeing(&mut a, &mut b, case_limits(limits), &what, poke_both)?;
        if ended && a.jit_stats().instructions > 0 {
            NATIVE.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// MOV SS holds an interrupt off for one instruction: a block that ends
/// with it leaves the same interrupt shadow, so an IRQ raised right after
/// is taken one instruction later, as by the interpreter, at every point
/// of a hot loop.
#[test]
fn mov_ss_holds_an_irq_off_after_a_block() {
    const IDT: u32 = 0x6000;
    const R_IRQ: u32 = 0xA0;
    // mov ax,0x10; mov ss,ax; inc cx (and the loop around them)
    let body = [(14u8, 0u8, 0u32), (11, 0, 3)];
    let s = Setup {
        bits: 16,
        ring: 0,
        paging: false,
        stack32: false,
        esp: 0xFFF0,
        hole: false,
        model: CpuModel::I486,
    };
    for extra in 0..12 {
        let mk = |jit| {
            let mut m = machine(s, &body, (200, 500), jit);
            // A 16-bit interrupt gate to `inc dx; iret`.
            m.write_phys(FAR + R_IRQ, &[0x42, 0xCF]);
            m.write_phys(IDT + 8 * 0x20, &gate(0x18, R_IRQ, 0x86, 0).to_le_bytes());
            let c = m.cpu_mut_flush_tlb();
            c.idtr.base = IDT;
            c.idtr.limit = 0x7FF;
            c.eflags |= emu::flags::IF;
            m
        };
        let (mut a, mut b) = (mk(true), mk(false));
        jitpair::run_both_for(&mut a, &mut b, 400 + extra);
        a.raise_irq(0x20);
        b.raise_irq(0x20);
        // (Instruction by instruction: the pushed return address is out
        // of the compared memory.)
        for _ in 0..3 {
            jitpair::run_both_for(&mut a, &mut b, 1);
        }
        let n = jitpair::run_both(&mut a, &mut b, Limits::default(), 2);
        assert_eq!(n, 1, "halts");
        assert_same_ram(&a, &b);
        assert_eq!(a.cpu().gpr[Gpr::Edx], 1, "one interrupt");
        assert!(a.jit_stats().instructions > 300, "{:?}", a.jit_stats());
    }
}

/// MOV DX/EDX, Sreg, or MOV [SS:(E)SI + STORES], Sreg with (E)SI twice
/// the loop count.
fn emit_sreg_store(a: &mut CodeAssembler, x: u8, wide: bool) {
    let s = ALL_SEGS[usize::from(x % 6)];
    match (x >> 3) % 3 {
        0 => a.mov(dx, s).unwrap(),
        1 => a.mov(edx, s).unwrap(),
        _ if wide => {
            a.movzx(esi, di).unwrap();
            a.mov(word_ptr(esi * 2 + STORES as i32).ss(), s).unwrap();
        }
        _ => {
            a.mov(si, di).unwrap();
            a.add(si, si).unwrap();
            a.mov(word_ptr(si + STORES as i32).ss(), s).unwrap();
        }
    }
}

/// Real-mode paragraphs the generated loads use: data, the stack, and
/// the code segments themselves (stores there are self-modifying).
const PARAS: [u16; 8] = [
    0x4000, 0x4100, 0x4010, 0x2000, 0x3000, 0x1000, 0x0000, 0x5FF0,
];

/// One real-mode op (16-bit code); `helper` jumps far there and back.
fn emit_real(a: &mut CodeAssembler, g: Gen, helper: CodeLabel) {
    let (k, x, v) = g;
    let s = SEGS[usize::from(x % 4)];
    let para = PARAS[v as usize % 8];
    match k % 12 {
        0 => {
            a.push(ALL_SEGS[usize::from(x % 6)]).unwrap();
            a.pop(dx).unwrap();
        }
        1 => {
            a.mov(ax, u32::from(para)).unwrap();
            a.mov(s, ax).unwrap();
        }
        2 => {
            a.push(i32::from(para as i16)).unwrap();
            a.pop(s).unwrap();
        }
        3 => {
            a.mov(si, di).unwrap();
            a.add(si, si).unwrap();
            a.mov(s, word_ptr(si + TABLE as i32).ss()).unwrap();
        }
        4 => {
            a.mov(si, di).unwrap();
            a.shl(si, 2).unwrap();
            let m = dword_ptr(si + PTRS16 as i32).ss();
            match x % 4 {
                0 => a.lds(dx, m),
                1 => a.les(dx, m),
                2 => a.lfs(dx, m),
                _ => a.lgs(dx, m),
            }
            .unwrap();
        }
        5 => {
            let m = match x % 4 {
                0 => word_ptr(bx).ds(),
                1 => word_ptr(bx).es(),
                2 => word_ptr(bx).fs(),
                _ => word_ptr(bx).gs(),
            };
            if x & 0x30 == 0x30 {
                a.add(m, cx).unwrap();
            } else {
                a.mov(cx, m).unwrap();
            }
        }
        6 => {
            let r = [R_RET, R_LOAD, R_RET_IMM][usize::from(x % 3)];
            // Sometimes past CS's limit (0xFFF).
            let r = if (v >> 20) % 16 == 15 { 0x1000 } else { r };
            if r == R_RET_IMM {
                a.push(cx).unwrap();
            }
            a.call_far((FAR >> 4) as u16, r).unwrap();
        }
        7 => {
            a.mov(si, di).unwrap();
            a.shl(si, 2).unwrap();
            a.call(dword_ptr(si + FPTRS16 as i32).ss()).unwrap();
        }
        8 => a.call(helper).unwrap(),
        11 => emit_sreg_store(a, x, false),
        9 => {
            let stack = [0x2000u32, 0x2001][usize::from(x & 1)];
            match (x >> 1) % 3 {
                0 => {
                    a.mov(ax, stack).unwrap();
                    a.mov(ss, ax).unwrap();
                }
                1 => {
                    a.push(stack as i32).unwrap();
                    a.pop(ss).unwrap();
                }
                _ => a.lss(dx, dword_ptr(SSPTR as u64 + 8).ss()).unwrap(),
            }
            a.inc(cx).unwrap();
        }
        _ => {
            a.add(bx, (v & 0xFF) as i32).unwrap();
            a.and(bx, 0x3FE).unwrap();
            a.inc(cx).unwrap();
        }
    }
}

/// A real-mode machine: the loop at MAIN (CS limit 0xFFF), the routines
/// at FAR, the stack at STACK (SS = 0x2000 and 0x2001 both work: every
/// op leaves the stack as it found it), FS with a 4 KB limit that loads
/// keep, tables at the offsets of the protected-mode ones.
fn real_machine(
    body: &[Gen],
    (count, bad_at): (u16, u16),
    top_of_stack: u32,
    jit: bool,
) -> Machine {
    let mut m = Machine::new(MachineConfig {
        ram_size: 4 << 20,
        model: CpuModel::I486,
    });
    m.set_jit(jit);
    // (Short loops get hot: the results are the same for any threshold.)
    m.set_jit_threshold(8);
    let code = asm(16, 0, |a| {
        let mut start = a.create_label();
        let mut top = a.create_label();
        let mut helper = a.create_label();
        a.jmp(start).unwrap();
        a.ret().unwrap();
        a.set_label(&mut start).unwrap();
        a.mov(di, u32::from(count)).unwrap();
        a.set_label(&mut top).unwrap();
        for g in body {
            emit_real(a, *g, helper);
        }
        a.dec(di).unwrap();
        a.jnz(top).unwrap();
        a.hlt().unwrap();
        a.set_label(&mut helper).unwrap();
        a.jmp_far((FAR >> 4) as u16, R_JMP_BACK).unwrap();
    });
    m.write_phys(MAIN, &code);
    let routine = |f: &dyn Fn(&mut CodeAssembler)| asm(16, 0, |a| f(a));
    m.write_phys(FAR + R_RET, &routine(&|a| a.retf().unwrap()));
    m.write_phys(
        FAR + R_LOAD,
        &routine(&|a| {
            a.push(ds).unwrap();
            a.mov(ax, DATA >> 4).unwrap();
            a.mov(ds, ax).unwrap();
            a.inc(word_ptr(0x10u64)).unwrap();
            a.pop(ds).unwrap();
            a.retf().unwrap();
        }),
    );
    m.write_phys(FAR + R_RET_IMM, &routine(&|a| a.retf_1(2).unwrap()));
    m.write_phys(
        FAR + R_JMP_BACK,
        &routine(&|a| a.jmp_far((MAIN >> 4) as u16, 2).unwrap()),
    );
    for k in 0..=u32::from(count) {
        let bad = k == u32::from(bad_at);
        let para = PARAS[(k as usize * 7) % 8];
        m.write_phys(STACK + TABLE + 2 * k, &para.to_le_bytes());
        m.write_phys(STACK + PTRS16 + 4 * k, &((k * 2) as u16).to_le_bytes());
        m.write_phys(STACK + PTRS16 + 4 * k + 2, &para.to_le_bytes());
        let r = match (bad, k & 1 != 0) {
            (true, _) => 0x1000,
            (_, true) => R_LOAD,
            _ => R_RET,
        };
        m.write_phys(STACK + FPTRS16 + 4 * k, &(r as u16).to_le_bytes());
        m.write_phys(
            STACK + FPTRS16 + 4 * k + 2,
            &((FAR >> 4) as u16).to_le_bytes(),
        );
    }
    m.write_phys(STACK + SSPTR + 8, &0x9ABCu16.to_le_bytes());
    m.write_phys(STACK + SSPTR + 10, &0x2001u16.to_le_bytes());
    for r in SegReg::ALL {
        m.set_segment(r, emu::Segment::real((DATA >> 4) as u16, false));
    }
    m.set_segment(SegReg::Ss, emu::Segment::real((STACK >> 4) as u16, false));
    m.set_segment(
        SegReg::Cs,
        emu::Segment {
            limit: 0xFFF,
            ..emu::Segment::real((MAIN >> 4) as u16, true)
        },
    );
    m.set_segment(
        SegReg::Fs,
        emu::Segment {
            limit: 0xFFF,
            ..emu::Segment::real((DATA >> 4) as u16, false)
        },
    );
    m.set_eip(0);
    m.gpr_mut()[Gpr::Esp] = top_of_stack;
    m.gpr_mut()[Gpr::Ebx] = 0x200;
    for v in 0..=255 {
        m.intercept(v, true);
    }
    m
}

proptest! {
    #![proptest_config(ProptestConfig { cases: jitpair::cases(256), ..ProptestConfig::default() })]

    /// Real-mode loops of segment loads (kept limits), far transfers
    /// (CS's limit) and stores into code: the tier on and off agree after
    /// every run.
    #[test]
    fn real_mode_far_loops_match_the_interpreter(
        body in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u32>()), 1..10),
        stack_at in 0usize..4,
        count in 20u16..150,
        bad_at in 0u16..300,
        limits in (0u64..400, 0u64..3000),
    ) {
        let stack_at = [0xFFF0, 0x8004, 0x8003, 0x8001][stack_at];
        let bad_at = bad_at % (count + 10);
        let (mut a, mut b) = (
            real_machine(&body, (count, bad_at), stack_at, true),
            real_machine(&body, (count, bad_at), stack_at, false),
        );
        run_agreeing(&mut a, &mut b, case_limits(limits), "", |_, _, _| {})?;
    }
}
