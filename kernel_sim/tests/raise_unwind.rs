//! DosRaiseException and DosUnwindException (issue 12, Build item 1)
//! from crafted 32-bit LX guests: a handler that continues returns from
//! the raise with its context record's registers, a handler that
//! declines passes the exception on to the next one, continuing a
//! non-continuable exception raises XCPT_NONCONTINUABLE_EXCEPTION, an
//! unwind calls the handlers above its target with EH_UNWINDING and
//! resumes at the target address, and a raise no handler takes ends the
//! process.
//!
//! Each guest folds what it saw into its exit code.

mod common;

use iced_x86::code_asm::*;
use kernel_sim::{Outcome, Process, ProcessConfig};

/// Where lx_program's code object lands.
const CODE: u32 = 0x10000;
/// Registration records: R1 (outermost) .. R3, 16 bytes apart, in the
/// stack object's bottom (ESP starts at 0x24000).
const R1: u32 = 0x20000;
const R2: u32 = 0x20010;
const R3: u32 = 0x20020;
/// Counters the handlers keep.
const COUNT: u32 = 0x20100;
const COUNT2: u32 = 0x20104;
const SUM: u32 = 0x20108;
/// The report record the guest raises.
const REPORT: u32 = 0x20200;
/// A user exception number.
const USER: u32 = 0x1000;
/// CONTEXTRECORD's EAX.
const CONTEXT_EAX: u32 = 0x88;
/// CONTEXTRECORD's EIP.
const CONTEXT_EIP: u32 = 0x9C;
/// EH_NONCONTINUABLE.
const EH_NONCONTINUABLE: u32 = 1;
/// XCPT_NONCONTINUABLE_EXCEPTION.
const NONCONTINUABLE_EXCEPTION: u32 = 0xC000_0024;

/// Import calls to fix up: (offset of the call, module, ordinal).
type Calls = Vec<(u32, &'static str, u32)>;

/// A guest under construction: its code, its DOSCALLS calls, and its
/// marked places (handlers, a resume point) with their addresses from
/// the previous pass (imm32 operands either way, so nothing moves).
struct Guest {
    a: CodeAssembler,
    calls: Vec<(CodeLabel, u32)>,
    marks: Vec<Option<CodeLabel>>,
    known: Vec<u32>,
}

impl Guest {
    fn new(known: Vec<u32>) -> Guest {
        Guest {
            a: CodeAssembler::new(32).unwrap(),
            calls: Vec::new(),
            marks: vec![None; 4],
            known,
        }
    }

    /// The address of mark `i` (0 in the first pass).
    fn at(&self, i: usize) -> u32 {
        self.known.get(i).copied().unwrap_or(0)
    }

    /// Put mark `i` here.
    fn mark(&mut self, i: usize) {
        let mut l = self.a.create_label();
        self.a.set_label(&mut l).unwrap();
        self.marks[i] = Some(l);
    }

    /// `call DOSCALLS.ordinal` (an import fixup), then pop `args` dwords.
    fn api(&mut self, ordinal: u32, args: u32) {
        let mut l = self.a.create_label();
        self.a.set_label(&mut l).unwrap();
        self.a.db(&[0xE8, 0, 0, 0, 0]).unwrap();
        self.calls.push((l, ordinal));
        if args > 0 {
            self.a.add(esp, 4 * args as i32).unwrap();
        }
    }

    /// Link record `rec` with the handler at mark `handler` into the
    /// chain.
    fn register(&mut self, rec: u32, handler: usize) {
        self.a.mov(eax, self.at(handler)).unwrap();
        self.a.mov(dword_ptr(rec + 4), eax).unwrap();
        self.a.mov(eax, rec).unwrap();
        self.a.push(eax).unwrap();
        self.api(354, 1);
    }

    /// Fill REPORT with `num`, `flags` and one parameter, `info`.
    fn report(&mut self, num: u32, flags: u32, info: u32) {
        for (off, v) in [(0, num), (4, flags), (8, 0), (12, 0), (16, 1), (20, info)] {
            self.a.mov(dword_ptr(REPORT + off), v).unwrap();
        }
    }

    /// A handler that counts its calls in COUNT, adds its report's flags
    /// plus the low byte of its exception code to SUM, and returns
    /// XCPT_CONTINUE_SEARCH.
    fn counting_handler(&mut self) {
        let a = &mut self.a;
        a.inc(dword_ptr(COUNT)).unwrap();
        a.mov(eax, dword_ptr(esp + 4)).unwrap();
        a.mov(ecx, dword_ptr(eax + 4)).unwrap();
        a.movzx(edx, byte_ptr(eax)).unwrap();
        a.add(ecx, edx).unwrap();
        a.add(dword_ptr(SUM), ecx).unwrap();
        a.xor(eax, eax).unwrap();
        a.ret().unwrap();
    }

    /// DosExit(1, eax).
    fn exit_eax(&mut self) {
        self.a.push(eax).unwrap();
        self.a.push(1i32).unwrap();
        self.api(234, 2);
    }

    /// The code, the addresses of the marks, the calls to fix up.
    fn assemble(mut self) -> (Vec<u8>, Vec<u32>, Calls) {
        let r = self
            .a
            .assemble_options(
                u64::from(CODE),
                iced_x86::BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS,
            )
            .unwrap();
        let marks = self
            .marks
            .iter()
            .map(|l| l.map_or(0, |l| r.label_ip(&l).unwrap() as u32))
            .collect();
        let calls = self
            .calls
            .iter()
            .map(|(l, o)| (r.label_ip(l).unwrap() as u32 - CODE, "DOSCALLS", *o))
            .collect();
        (r.inner.code_buffer, marks, calls)
    }
}

/// Build the guest twice (the second time with the marks' addresses) and
/// run it.
fn run(build: impl Fn(&mut Guest)) -> Outcome {
    let mut g = Guest::new(Vec::new());
    build(&mut g);
    let (_, marks, _) = g.assemble();
    let mut g = Guest::new(marks);
    build(&mut g);
    let (code, _, calls) = g.assemble();
    {
        let bytes = common::lx_program(&code, &calls);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
        let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
        cfg.max_instructions = Some(200_000);
        Process::new(cfg).unwrap().run()
    }
}

/// A handler (mark `i`) that counts at `counter`, sets the context's EAX
/// to the report's number plus its first parameter (plus its
/// ExceptionAddress less the context's EIP: 0), and continues execution.
fn continuing_handler(g: &mut Guest, i: usize, counter: u32) {
    g.mark(i);
    let a = &mut g.a;
    a.inc(dword_ptr(counter)).unwrap();
    a.mov(eax, dword_ptr(esp + 4)).unwrap();
    a.mov(edx, dword_ptr(esp + 12)).unwrap();
    a.mov(ecx, dword_ptr(eax)).unwrap();
    a.add(ecx, dword_ptr(eax + 20)).unwrap();
    a.add(ecx, dword_ptr(eax + 12)).unwrap();
    a.sub(ecx, dword_ptr(edx + CONTEXT_EIP)).unwrap();
    a.mov(dword_ptr(edx + CONTEXT_EAX), ecx).unwrap();
    a.or(eax, -1).unwrap();
    a.ret().unwrap();
}

/// A handler (mark `i`) that counts at `counter` and continues the
/// search.
fn declining_handler(g: &mut Guest, i: usize, counter: u32) {
    g.mark(i);
    let a = &mut g.a;
    a.inc(dword_ptr(counter)).unwrap();
    a.xor(eax, eax).unwrap();
    a.ret().unwrap();
}

#[test]
fn a_continuing_handler_returns_from_the_raise_with_its_context() {
    let o = run(|g| {
        g.register(R1, 0);
        g.report(USER, 0, 0x23);
        g.a.mov(ebx, 0x0010_0000u32).unwrap();
        g.a.mov(eax, 0x7000u32).unwrap();
        g.a.push(eax).unwrap(); // a marker: ESP must come back to it
        g.a.mov(eax, REPORT).unwrap();
        g.a.push(eax).unwrap();
        g.api(356, 1);
        g.a.pop(ecx).unwrap();
        g.a.add(eax, ecx).unwrap();
        g.a.add(eax, ebx).unwrap();
        g.a.mov(ecx, dword_ptr(COUNT)).unwrap();
        g.a.shl(ecx, 16).unwrap();
        g.a.add(eax, ecx).unwrap();
        g.exit_eax();
        continuing_handler(g, 0, COUNT);
    });
    // EAX from the context (0x1023), the marker popped, EBX kept, one call.
    assert_eq!(o, Outcome::Exited(0x1023 + 0x7000 + 0x10_0000 + 0x1_0000));
}

#[test]
fn a_declining_handler_passes_the_raise_to_the_outer_one() {
    let o = run(|g| {
        g.register(R1, 0);
        g.register(R2, 1);
        g.report(USER, 0, 0x23);
        g.a.mov(eax, REPORT).unwrap();
        g.a.push(eax).unwrap();
        g.api(356, 1);
        g.a.mov(ecx, dword_ptr(COUNT)).unwrap();
        g.a.shl(ecx, 16).unwrap();
        g.a.add(eax, ecx).unwrap();
        g.a.mov(ecx, dword_ptr(COUNT2)).unwrap();
        g.a.shl(ecx, 20).unwrap();
        g.a.add(eax, ecx).unwrap();
        g.exit_eax();
        continuing_handler(g, 0, COUNT);
        declining_handler(g, 1, COUNT2);
    });
    assert_eq!(o, Outcome::Exited(0x1023 + 0x1_0000 + 0x10_0000));
}

/// A guest raising a non-continuable exception to a handler that
/// continues it; on XCPT_NONCONTINUABLE_EXCEPTION the handler exits with
/// (nested record's number) + count << 16 + its flags << 24 when `exit`,
/// else continues that too.
fn noncontinuable(exit: bool) -> Outcome {
    run(|g| {
        g.register(R1, 0);
        g.report(USER, EH_NONCONTINUABLE, 0x23);
        g.a.mov(eax, REPORT).unwrap();
        g.a.push(eax).unwrap();
        g.api(356, 1);
        g.a.mov(eax, 0xDEADu32).unwrap(); // the raise must not return
        g.exit_eax();
        g.mark(0);
        let mut again = g.a.create_label();
        let a = &mut g.a;
        a.inc(dword_ptr(COUNT)).unwrap();
        a.mov(eax, dword_ptr(esp + 4)).unwrap();
        a.cmp(dword_ptr(eax), NONCONTINUABLE_EXCEPTION as i32)
            .unwrap();
        a.je(again).unwrap();
        a.or(eax, -1).unwrap();
        a.ret().unwrap();
        a.set_label(&mut again).unwrap();
        if !exit {
            a.or(eax, -1).unwrap();
            a.ret().unwrap();
            return;
        }
        a.mov(ecx, dword_ptr(eax + 8)).unwrap(); // the nested record
        a.mov(edx, dword_ptr(ecx)).unwrap();
        a.mov(ecx, dword_ptr(eax + 4)).unwrap();
        a.shl(ecx, 24).unwrap();
        a.add(edx, ecx).unwrap();
        a.mov(ecx, dword_ptr(COUNT)).unwrap();
        a.shl(ecx, 16).unwrap();
        a.add(edx, ecx).unwrap();
        a.mov(eax, edx).unwrap();
        g.exit_eax();
    })
}

#[test]
fn continuing_a_noncontinuable_exception_raises_another() {
    // The second call sees XCPT_NONCONTINUABLE_EXCEPTION, itself
    // non-continuable, whose nested record is the first.
    assert_eq!(
        noncontinuable(true),
        Outcome::Exited(USER + (2 << 16) + (EH_NONCONTINUABLE << 24))
    );
    // Continuing that one too ends the process.
    let o = noncontinuable(false);
    assert!(
        matches!(
            o,
            Outcome::UnhandledException {
                number: NONCONTINUABLE_EXCEPTION,
                ..
            }
        ),
        "{o}"
    );
}

/// A guest with handlers at R1 (mark 0: adds 0x1000 to SUM), R2 and R3
/// (mark 1: each counts and adds its flags plus the low byte of the
/// report's number to SUM) that unwinds to `target`, resuming at mark 2
/// (`at_mark`) or after the call (0); then exits with COUNT << 16 + SUM
/// + (FS:[0] - `head`).
fn unwind(target: u32, at_mark: bool, head: u32) -> Outcome {
    run(|g| {
        g.register(R1, 0);
        g.register(R2, 1);
        g.register(R3, 1);
        g.a.xor(eax, eax).unwrap();
        g.a.push(eax).unwrap(); // report: NULL (XCPT_UNWIND)
        let resume = if at_mark { g.at(2) } else { 0 };
        g.a.mov(eax, resume).unwrap();
        g.a.push(eax).unwrap();
        g.a.mov(eax, target).unwrap();
        g.a.push(eax).unwrap();
        g.api(357, 0);
        if at_mark {
            g.a.mov(eax, 0xDEADu32).unwrap(); // the unwind must not return here
            g.exit_eax();
        }
        g.mark(2);
        g.a.add(esp, 12).unwrap();
        g.a.mov(eax, dword_ptr(COUNT)).unwrap();
        g.a.shl(eax, 16).unwrap();
        g.a.add(eax, dword_ptr(SUM)).unwrap();
        g.a.db(&[0x64, 0x03, 0x05, 0, 0, 0, 0]).unwrap(); // add eax,fs:[0]
        g.a.sub(eax, head as i32).unwrap();
        g.exit_eax();
        g.mark(0);
        let a = &mut g.a;
        a.add(dword_ptr(SUM), 0x1000).unwrap();
        a.xor(eax, eax).unwrap();
        a.ret().unwrap();
        g.mark(1);
        g.counting_handler();
    })
}

#[test]
fn an_unwind_calls_the_inner_handlers_and_resumes_at_the_target() {
    // R3 and R2 are called with EH_UNWINDING (2) and XCPT_UNWIND
    // (0xC0000026), unlinked; R1 is the head again and was not called.
    assert_eq!(
        unwind(R1, true, R1),
        Outcome::Exited((2 << 16) + 2 * (2 + 0x26))
    );
}

#[test]
fn an_unwind_to_the_end_of_the_chain_calls_every_handler() {
    // Target END_OF_CHAIN, no target address: all three are called with
    // EH_UNWINDING (R1 adds 0x1000), the chain is empty, and the call
    // returns.
    assert_eq!(
        unwind(0xFFFF_FFFF, false, 0xFFFF_FFFF),
        Outcome::Exited((2 << 16) + 2 * (2 + 0x26) + 0x1000)
    );
}

/// An exit unwind (target UNWIND_ALL, 0) over R2 (mark 1, as in
/// [`unwind`]) and R1 (mark 3: exits with SUM + its flags + COUNT << 16
/// when `exits`, else returns).
fn exit_unwind(exits: bool) -> Outcome {
    run(|g| {
        g.register(R1, 3);
        g.register(R2, 1);
        g.a.xor(eax, eax).unwrap();
        g.a.push(eax).unwrap();
        g.a.mov(eax, g.at(0)).unwrap(); // an address: it must not go there
        g.a.push(eax).unwrap();
        g.a.xor(eax, eax).unwrap();
        g.a.push(eax).unwrap();
        g.api(357, 3);
        g.mark(0);
        g.a.mov(eax, 0xDEADu32).unwrap();
        g.exit_eax();
        g.mark(1);
        g.counting_handler();
        g.mark(3);
        if !exits {
            g.a.xor(eax, eax).unwrap();
            g.a.ret().unwrap();
            return;
        }
        let a = &mut g.a;
        a.mov(eax, dword_ptr(esp + 4)).unwrap();
        a.mov(eax, dword_ptr(eax + 4)).unwrap();
        a.add(eax, dword_ptr(SUM)).unwrap();
        a.mov(ecx, dword_ptr(COUNT)).unwrap();
        a.shl(ecx, 16).unwrap();
        a.add(eax, ecx).unwrap();
        g.exit_eax();
    })
}

#[test]
fn an_exit_unwind_calls_every_handler_and_ends_the_thread() {
    // R2 and R1 see EH_UNWINDING | EH_EXIT_UNWIND (6) and XCPT_UNWIND.
    assert_eq!(exit_unwind(true), Outcome::Exited((1 << 16) + 6 + 0x26 + 6));
    // Thread 1 ends with code 0 after the last handler, never reaching
    // the address it passed (which exits with 0xDEAD).
    assert_eq!(exit_unwind(false), Outcome::Exited(0));
}

#[test]
fn an_unwind_to_a_record_not_on_the_chain_raises() {
    // Nothing is unwound; XCPT_INVALID_UNWIND_TARGET goes to the
    // handlers, which all decline it: the process ends.
    let o = unwind(0x20300, true, R3);
    assert!(
        matches!(
            o,
            Outcome::UnhandledException {
                number: 0xC000_0028,
                ..
            }
        ),
        "{o}"
    );
}

#[test]
fn an_unhandled_raise_ends_the_process() {
    for with_handler in [false, true] {
        let o = run(|g| {
            if with_handler {
                g.register(R1, 0);
            }
            g.report(USER, 0, 0);
            g.a.mov(eax, REPORT).unwrap();
            g.a.push(eax).unwrap();
            g.api(356, 1);
            g.a.mov(eax, 0xDEADu32).unwrap();
            g.exit_eax();
            declining_handler(g, 0, COUNT);
        });
        assert!(
            matches!(o, Outcome::UnhandledException { number: USER, .. }),
            "{o}"
        );
    }
}

#[test]
fn a_raise_inside_a_handler_reaches_it_as_a_nested_call() {
    // R1's handler, called for USER, raises USER + 1 itself: the walk of
    // that one reaches R1, whose handler is running, so it is called with
    // EH_NESTED_CALL (0x10). It adds the flags of each call to SUM and
    // continues both.
    let o = run(|g| {
        g.register(R1, 0);
        g.report(USER, 0, 0);
        g.a.mov(eax, REPORT).unwrap();
        g.a.push(eax).unwrap();
        g.api(356, 1);
        g.a.mov(eax, dword_ptr(SUM)).unwrap();
        g.a.mov(ecx, dword_ptr(COUNT)).unwrap();
        g.a.shl(ecx, 16).unwrap();
        g.a.add(eax, ecx).unwrap();
        g.exit_eax();
        g.mark(0);
        let mut done = g.a.create_label();
        g.a.inc(dword_ptr(COUNT)).unwrap();
        g.a.mov(eax, dword_ptr(esp + 4)).unwrap();
        g.a.mov(ecx, dword_ptr(eax + 4)).unwrap();
        g.a.add(dword_ptr(SUM), ecx).unwrap();
        g.a.cmp(dword_ptr(eax), USER as i32).unwrap();
        g.a.jne(done).unwrap();
        g.a.mov(dword_ptr(REPORT), USER + 1).unwrap();
        g.a.mov(eax, REPORT).unwrap();
        g.a.push(eax).unwrap();
        g.api(356, 1);
        g.a.set_label(&mut done).unwrap();
        g.a.or(eax, -1).unwrap();
        g.a.ret().unwrap();
    });
    assert_eq!(o, Outcome::Exited((2 << 16) + 0x10));
}
