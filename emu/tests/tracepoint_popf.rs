//! A tracepoint on the POPF that sets (or clears) the guest's own TF: the
//! original instruction runs out of line with the guest's flags, so the
//! guest's single-step traps come exactly where they come without the
//! tracepoint (the x86 rule: a POPF that sets TF traps after the *next*
//! instruction; one that clears it still traps after itself). The host of
//! the old design set TF for its own step and cleared it again at the #DB,
//! which swallowed the trap the guest had just asked for.
//!
//! Each case runs in a hot loop, untraced and traced, in the interpreter
//! and with the native tier, and all four must see the same guest #DBs.

mod common;

use common::*;
use emu::{Exit, Gpr, Limits, Machine, SegReg, vector};
use iced_x86::code_asm::*;

/// What a run saw: the tracepoint hits, the linear EIP after each guest
/// #DB, and the final registers and instruction count.
#[derive(Debug, PartialEq, Eq)]
struct Run {
    hits: usize,
    guest_steps: Vec<u32>,
    gpr: [u32; 8],
    instructions: u64,
    /// Guest instructions the native tier retired.
    native: u64,
}

fn linear_eip(m: &Machine) -> u32 {
    m.cpu().sreg(SegReg::Cs).base.wrapping_add(m.cpu().eip)
}

/// Runs to HLT with a tracepoint at each of `tps`, resuming every hit on
/// the original instruction as the trace runtime does.
fn run(mut m: Machine, tps: &[u32], jit: bool) -> Run {
    m.set_jit(jit);
    // The threshold these cases were sized for.
    m.set_jit_threshold(32);
    for &tp in tps {
        m.insert_tracepoint(tp).unwrap();
    }
    m.intercept(vector::BP, true);
    m.intercept(vector::DB, true);
    let mut hits = 0;
    let mut guest_steps = Vec::new();
    loop {
        match m.run(Limits {
            instructions: Some(1_000_000),
            cycles: None,
        }) {
            Exit::Halted => break,
            Exit::Exception { fault, .. } if fault.vector == vector::BP => {
                let at = linear_eip(&m).wrapping_sub(1);
                assert!(tps.contains(&at), "a guest INT3 at {at:#x}");
                hits += 1;
                assert_eq!(m.resume_at_tracepoint(), at);
            }
            Exit::Exception { fault, .. } if fault.vector == vector::DB => {
                guest_steps.push(linear_eip(&m));
            }
            other => panic!("unexpected exit {other:?} at {:#x}", linear_eip(&m)),
        }
    }
    Run {
        hits,
        guest_steps,
        gpr: m.cpu().gpr,
        instructions: m.instructions(),
        native: m.jit_stats().instructions,
    }
}

const ROUNDS: u32 = 300;

/// A loop of `ROUNDS` passes: POPF sets TF (mark 0), a NOP (mark 1 is the
/// instruction after it), then POPF clears TF (mark 2) and the loop goes
/// on untraced by the guest.
fn popf_loop(bits: u32) -> (Vec<u8>, Vec<u32>) {
    let mut a = CodeAssembler::new(bits).unwrap();
    let (mut set, mut after_nop, mut clear, mut top) = (
        a.create_label(),
        a.create_label(),
        a.create_label(),
        a.create_label(),
    );
    a.mov(ecx, ROUNDS).unwrap();
    a.set_label(&mut top).unwrap();
    if bits == 16 {
        a.pushf().unwrap();
        a.pop(ax).unwrap();
        a.or(ax, 0x100).unwrap();
        a.push(ax).unwrap();
        a.set_label(&mut set).unwrap();
        a.popf().unwrap();
        a.nop().unwrap();
        a.set_label(&mut after_nop).unwrap();
        a.pushf().unwrap();
        a.pop(ax).unwrap();
        a.and(ax, !0x100).unwrap();
        a.push(ax).unwrap();
        a.set_label(&mut clear).unwrap();
        a.popf().unwrap();
    } else {
        a.pushfd().unwrap();
        a.or(dword_ptr(esp), 0x100).unwrap();
        a.set_label(&mut set).unwrap();
        a.popfd().unwrap();
        a.nop().unwrap();
        a.set_label(&mut after_nop).unwrap();
        a.pushfd().unwrap();
        a.and(dword_ptr(esp), !0x100).unwrap();
        a.set_label(&mut clear).unwrap();
        a.popfd().unwrap();
    }
    a.inc(ebx).unwrap();
    a.dec(ecx).unwrap();
    a.jne(top).unwrap();
    a.hlt().unwrap();
    let base = if bits == 16 { 0x100 } else { 0x2000 };
    let r = a
        .assemble_options(
            base,
            iced_x86::BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS,
        )
        .unwrap();
    let marks = [set, after_nop, clear]
        .iter()
        .map(|l| r.label_ip(l).unwrap() as u32)
        .collect();
    (r.inner.code_buffer, marks)
}

fn machine(bits: u32, code: &[u8]) -> Machine {
    if bits == 16 {
        real_machine(code)
    } else {
        prot_machine(code)
    }
}

#[test]
fn a_tracepoint_on_popf_keeps_the_guests_own_single_steps() {
    for bits in [16, 32] {
        let (c, marks) = popf_loop(bits);
        let (set, after_nop, clear) = (marks[0], marks[1], marks[2]);
        let reference = run(machine(bits, &c), &[], false);
        // The x86 rule, checked on the untraced run: the first #DB comes
        // after the instruction that follows the POPF setting TF.
        assert_eq!(reference.guest_steps[0], after_nop, "{bits}-bit");
        assert_eq!(reference.gpr[Gpr::Ebx] & 0xFFFF, ROUNDS, "{bits}-bit: EBX");
        let per_round = reference.guest_steps.len() / ROUNDS as usize;
        assert!(per_round >= 2, "{bits}-bit: {:x?}", reference.guest_steps);
        for tps in [vec![set], vec![clear], vec![set, clear]] {
            for jit in [false, true] {
                let traced = run(machine(bits, &c), &tps, jit);
                let what = format!("{bits}-bit, tracepoints {tps:x?}, native tier {jit}");
                assert_eq!(traced.hits, tps.len() * ROUNDS as usize, "{what}");
                assert_eq!(traced.guest_steps, reference.guest_steps, "{what}");
                // Each hit counts its INT3 as an instruction.
                assert_eq!(
                    (traced.gpr, traced.instructions),
                    (reference.gpr, reference.instructions + traced.hits as u64),
                    "{what}"
                );
                if jit && cfg!(target_arch = "x86_64") {
                    assert!(traced.native > 0, "{what}: the native tier ran");
                }
            }
        }
        let native = run(machine(bits, &c), &[], true);
        assert_eq!(
            (native.guest_steps, native.gpr, native.instructions),
            (reference.guest_steps, reference.gpr, reference.instructions),
            "{bits}-bit: the native tier untraced"
        );
    }
}
