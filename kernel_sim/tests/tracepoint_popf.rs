//! A tracepoint on a POPF that sets TF keeps the guest's own debug trap
//! (issue 13, item 6), seen from a whole process: the guest's single-step
//! exceptions reach it exactly as they do untraced, with the emulator's
//! interpreter and with its native tier, and with the trace program
//! interpreted or compiled.
//!
//! Two crafted guests (loader's writer):
//! - a 32-bit LX program with an exception handler that counts
//!   XCPT_SINGLE_STEP and sums the EIPs it is reported at, over a loop
//!   whose POPF sets TF (the tracepoint) and whose next instruction
//!   therefore traps;
//! - a 16-bit NE program with no handler, whose trap ends the run as a
//!   guest fault at the instruction after the one following the POPF;
//! - a 16-bit NE program whose POPF sets TF before a DIV that faults into
//!   its DosSetVec handler: the handler runs without TF, and the trap
//!   comes after the DIV it retries, not inside the handler.
//!
//! The old trace runtime put the byte back, single-stepped the POPF with
//! its own TF and cleared TF at the #DB: the guest's trap never came, the
//! 32-bit count was 0 and the 16-bit program exited normally.

mod common;

use iced_x86::code_asm::*;
use kernel_sim::trace::TraceCommands;
use kernel_sim::{Outcome, Process, ProcessConfig};
use stda::StdaFormat;

/// Passes of the 32-bit loop: enough for the native tier to translate it.
const ROUNDS: u32 = 300;
/// The 32-bit program's data: the registration record at DATA, the count
/// of single steps at DATA+0x10 and the sum of their EIPs at DATA+0x14
/// (the bottom of the stack object; ESP starts at DATA+0x4000).
const DATA: u32 = 0x20000;
/// Where lx_program's code object lands.
const CODE: u32 = 0x10000;
/// XCPT_SINGLE_STEP.
const SINGLE_STEP: u32 = 0x8000_000C;
/// The offset of EIP in a CONTEXTRECORD.
const CONTEXT_EIP: i32 = 156;

/// Code assembled at `base`, with the offsets of `labels` from it.
fn assembled(a: &mut CodeAssembler, base: u32, labels: &[CodeLabel]) -> (Vec<u8>, Vec<u32>) {
    let r = a
        .assemble_options(
            u64::from(base),
            iced_x86::BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS,
        )
        .unwrap();
    let offsets = labels
        .iter()
        .map(|l| r.label_ip(l).unwrap() as u32 - base)
        .collect();
    (r.inner.code_buffer, offsets)
}

/// Import calls to fix up: (offset of the call, module, ordinal).
type Calls = Vec<(u32, &'static str, u32)>;

/// The 32-bit guest: (code, offset of the POPF that sets TF, offset of
/// the instruction after the NOP that follows it, calls to fix up).
fn guest32() -> (Vec<u8>, u32, u32, Calls) {
    // Twice: the first pass finds the handler, the second stores its
    // address (an imm32 either way, so nothing moves).
    let (_, at) = guest32_with_handler_at(0);
    let (code, at) = guest32_with_handler_at(CODE + at[0]);
    let [_, popf, after_nop, set_handler, exit] = at[..] else {
        unreachable!()
    };
    let calls = vec![(set_handler, "DOSCALLS", 354), (exit, "DOSCALLS", 234)];
    (code, popf, after_nop, calls)
}

/// The 32-bit guest's code and the offsets of (the handler, the POPF,
/// after the NOP, the DosSetExceptionHandler call, the DosExit call).
fn guest32_with_handler_at(handler_address: u32) -> (Vec<u8>, Vec<u32>) {
    let mut a = CodeAssembler::new(32).unwrap();
    let (mut handler, mut top, mut popf, mut after_nop, mut search) = (
        a.create_label(),
        a.create_label(),
        a.create_label(),
        a.create_label(),
        a.create_label(),
    );
    let (mut set_handler, mut exit) = (a.create_label(), a.create_label());
    // DosSetExceptionHandler(&record at DATA), the handler at DATA+4.
    a.mov(dword_ptr(DATA + 4), handler_address).unwrap();
    a.push(DATA).unwrap();
    a.set_label(&mut set_handler).unwrap();
    a.call(u64::from(CODE)).unwrap(); // fixed up to the import
    a.add(esp, 4).unwrap();
    a.mov(ecx, ROUNDS).unwrap();
    a.set_label(&mut top).unwrap();
    a.pushfd().unwrap();
    a.or(dword_ptr(esp), 0x100).unwrap();
    a.set_label(&mut popf).unwrap();
    a.popfd().unwrap(); // the tracepoint; TF is set after it
    a.nop().unwrap(); // ... so the guest's #DB comes after this
    a.set_label(&mut after_nop).unwrap();
    a.inc(ebx).unwrap();
    a.dec(ecx).unwrap();
    a.jne(top).unwrap();
    // DosExit(EXIT_PROCESS, EBX): the loop's own count.
    a.push(ebx).unwrap();
    a.push(1).unwrap();
    a.set_label(&mut exit).unwrap();
    a.call(u64::from(CODE)).unwrap(); // fixed up to the import
    // The handler: _System (report, registration, context, dispatcher).
    a.set_label(&mut handler).unwrap();
    a.mov(eax, dword_ptr(esp + 4)).unwrap();
    a.cmp(dword_ptr(eax), SINGLE_STEP as i32).unwrap();
    a.jne(search).unwrap();
    a.inc(dword_ptr(DATA + 0x10)).unwrap();
    a.mov(edx, dword_ptr(esp + 12)).unwrap();
    a.mov(eax, dword_ptr(edx + CONTEXT_EIP)).unwrap();
    a.add(dword_ptr(DATA + 0x14), eax).unwrap();
    a.mov(eax, -1).unwrap(); // XCPT_CONTINUE_EXECUTION
    a.ret().unwrap();
    a.set_label(&mut search).unwrap();
    a.xor(eax, eax).unwrap(); // XCPT_CONTINUE_SEARCH
    a.ret().unwrap();
    assembled(&mut a, CODE, &[handler, popf, after_nop, set_handler, exit])
}

/// A trace program with one tracepoint on the POPF at `offset` of object
/// 1 of `module`, logging EAX.
fn popf_trace(module: &str, offset: u32) -> String {
    format!(
        "major=0xCE\nname={module}\n\nminor=1\nobject=1\noffset={offset}\nopcode=0x9D\n  Push EAX\n  Log DN,1\n"
    )
}

/// What a run saw.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    outcome: Outcome,
    /// (single steps the handler counted, the sum of their EIPs).
    steps: (u32, u32),
}

/// Runs `exe` (module `module`) with the POPF at `popf` traced or not,
/// the emulator's native tier on or off, the trace program compiled
/// (`native_rpn`) or interpreted: what the guest saw and the hits.
fn run(
    exe: &[u8],
    module: &str,
    popf: Option<u32>,
    jit: bool,
    native_rpn: bool,
) -> (Seen, u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), exe).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    p.machine_mut().set_jit(jit);
    if let Some(offset) = popf {
        let rpn = dir.path().join("T.RPN");
        std::fs::write(&rpn, popf_trace(module, offset)).unwrap();
        p.trace_start(StdaFormat::New, 4).unwrap();
        p.system_trace_mut()
            .unwrap()
            .runtime_mut()
            .set_native(native_rpn);
        let commands = TraceCommands {
            applies: vec![rpn.to_string_lossy().into_owned()],
            ..TraceCommands::default()
        };
        p.trace_commands(&commands).unwrap();
    }
    let outcome = p.run();
    let mut counters = [0u8; 8];
    let _ = p.machine_mut().read_linear(DATA + 0x10, &mut counters);
    let word = |i: usize| u32::from_le_bytes(counters[i..i + 4].try_into().unwrap());
    let hits = p.system_trace().map_or(0, |t| {
        t.runtime().dtos()[0]
            .tracepoints
            .iter()
            .map(|tp| tp.hits)
            .sum()
    });
    let native = p.machine().jit_stats().instructions;
    let seen = Seen {
        outcome,
        steps: (word(0), word(4)),
    };
    (seen, hits, native)
}

#[test]
fn a_popf_tracepoint_keeps_the_single_steps_of_a_32_bit_guest() {
    let (code, popf, after_nop, calls) = guest32();
    let exe = common::lx_program(&code, &calls);
    let untraced = run(&exe, "TESTLX", None, false, false).0;
    // The x86 rule, checked untraced: one trap per pass, after the NOP
    // (the handler's CONTINUE_EXECUTION restores the context without TF).
    let after_nop = CODE + after_nop;
    assert_eq!(
        untraced,
        Seen {
            outcome: Outcome::Exited(ROUNDS),
            steps: (ROUNDS, after_nop.wrapping_mul(ROUNDS)),
        }
    );
    for jit in [false, true] {
        for native_rpn in [false, true] {
            let what = format!("native tier {jit}, compiled trace program {native_rpn}");
            let (seen, hits, native) = run(&exe, "TESTLX", Some(popf), jit, native_rpn);
            assert_eq!(seen, untraced, "{what}");
            assert_eq!(hits, u64::from(ROUNDS), "{what}: the tracepoint hit");
            if jit && cfg!(target_arch = "x86_64") {
                assert!(native > 0, "{what}: the native tier ran");
            }
        }
    }
}

#[test]
fn a_popf_tracepoint_keeps_the_single_step_fault_of_a_16_bit_guest() {
    // pushf; pop ax; or ax,100h; push ax; popf (traced); nop; then
    // DosExit(1, 0), which the guest's own trap must never reach.
    let mut a = CodeAssembler::new(16).unwrap();
    let (mut popf, mut after_nop, mut exit) =
        (a.create_label(), a.create_label(), a.create_label());
    a.pushf().unwrap();
    a.pop(ax).unwrap();
    a.or(ax, 0x100).unwrap();
    a.push(ax).unwrap();
    a.set_label(&mut popf).unwrap();
    a.popf().unwrap();
    a.nop().unwrap();
    a.set_label(&mut after_nop).unwrap();
    a.push(1).unwrap();
    a.push(0).unwrap();
    a.set_label(&mut exit).unwrap();
    a.call_far(0, 0).unwrap();
    let (code, at) = assembled(&mut a, 0, &[popf, after_nop, exit]);
    let exe = common::ne_program(&code, &[], &[(at[2], "DOSCALLS", 5)]);
    let (untraced, _, _) = run(&exe, "TESTPROG", None, false, false);
    match untraced.outcome {
        Outcome::GuestFault { vector: 1, eip, .. } => assert_eq!(eip, at[1]),
        ref other => panic!("untraced: {other:?}"),
    }
    ends_as_untraced_four_ways(&exe, at[0], &untraced.outcome);
}

/// Runs the 16-bit `exe` with its tracepoint on the POPF at `popf`, four
/// ways (the native tier off and on, the trace program interpreted and
/// compiled): each hits once and ends as the untraced run did.
fn ends_as_untraced_four_ways(exe: &[u8], popf: u32, untraced: &Outcome) {
    for jit in [false, true] {
        for native_rpn in [false, true] {
            let what = format!("native tier {jit}, compiled trace program {native_rpn}");
            let (seen, hits, _) = run(exe, "TESTPROG", Some(popf), jit, native_rpn);
            assert_eq!(&seen.outcome, untraced, "{what}");
            assert_eq!(hits, 1, "{what}");
        }
    }
}

/// The 16-bit DosSetVec guest, its handler at `handler`: (code, offsets of
/// the POPF, of the instruction after the DIV, of the handler, of the
/// DosSetVec call and of the DosExit call).
fn guest16_with_vector(handler: u16) -> (Vec<u8>, Vec<u32>) {
    let mut a = CodeAssembler::new(16).unwrap();
    let mut labels = [(); 6].map(|()| a.create_label());
    let [popf, after_div, handler_label, set_vec, exit, _] = &mut labels;
    // DosSetVec(0, CS:handler, NULL)
    a.mov(ax, 0).unwrap();
    a.push(ax).unwrap();
    a.push(cs).unwrap();
    a.mov(ax, u32::from(handler)).unwrap();
    a.push(ax).unwrap();
    a.xor(ax, ax).unwrap();
    a.push(ax).unwrap();
    a.push(ax).unwrap();
    a.set_label(set_vec).unwrap();
    a.call_far(0, 0).unwrap();
    // TF on (the traced POPF), then AX / 0: #DE before the step's trap.
    a.pushf().unwrap();
    a.pop(ax).unwrap();
    a.or(ax, 0x100).unwrap();
    a.push(ax).unwrap();
    a.xor(bx, bx).unwrap();
    a.mov(ax, 10).unwrap();
    a.set_label(popf).unwrap();
    a.popf().unwrap();
    a.div(bl).unwrap();
    a.set_label(after_div).unwrap();
    a.push(1).unwrap();
    a.push(0).unwrap();
    a.set_label(exit).unwrap();
    a.call_far(0, 0).unwrap();
    // The handler: make the divisor 1 and retry the DIV.
    a.set_label(handler_label).unwrap();
    a.mov(bl, 1).unwrap();
    a.iret().unwrap();
    let [popf, after_div, handler_label, set_vec, exit, _] = labels;
    assembled(&mut a, 0, &[popf, after_div, handler_label, set_vec, exit])
}

#[test]
fn a_16_bit_vector_handler_runs_without_the_guests_tf() {
    let handler = guest16_with_vector(0).1[2];
    let (code, at) = guest16_with_vector(handler as u16);
    assert_eq!(at[2], handler, "the handler stayed where it was assembled");
    let exe = common::ne_program(
        &code,
        &[],
        &[(at[3], "DOSCALLS", 89), (at[4], "DOSCALLS", 5)],
    );
    let (untraced, _, _) = run(&exe, "TESTPROG", None, false, false);
    // The x86 rule: the #DE handler runs without TF, IRET restores it, the
    // retried DIV completes and the step traps after it (no #DB handler
    // can be set, so the run ends there).
    match untraced.outcome {
        Outcome::GuestFault { vector: 1, eip, .. } => assert_eq!(eip, at[1]),
        ref other => panic!("untraced: {other:?}"),
    }
    ends_as_untraced_four_ways(&exe, at[0], &untraced.outcome);
}
