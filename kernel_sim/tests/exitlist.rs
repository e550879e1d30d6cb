//! Exit lists (issue 12): DosExitList's routines run in guest code when
//! the process ends, in invocation order (LIFO within an order), each
//! with the termination code, chained by DosExitList(EXLST_EXIT); the
//! codes for DosExit, a fault and DosKillProcess; the call's errors;
//! the 16-bit DosExitList with a 16:16 routine.

mod common;

use common::prog16::{self, A};
use common::threaded::{Arg, Prog};
use common::{DATA, push};
use kernel_sim::Outcome;

const EXIT_LIST: u32 = 296;
const WRITE: u32 = 282;
const EXEC_PGM: u32 = 283;
const WAIT_CHILD: u32 = 280;
const KILL_PROCESS: u32 = 235;

/// Where a routine builds the two bytes it writes.
const BUF: u32 = DATA + 0x80;

/// A routine that writes `letter` and the termination code (as a digit)
/// to stdout, then DosExitList(EXLST_EXIT) (or a plain `ret` when
/// `returns`). Its address.
fn routine(p: &mut Prog, letter: u8, returns: bool) -> u32 {
    let at = p.here();
    // mov eax, [esp+4]; add al, '0'; mov [BUF+1], al; mov byte [BUF], letter
    p.raw(&[0x8B, 0x44, 0x24, 0x04, 0x04, b'0', 0xA2])
        .raw(&(BUF + 1).to_le_bytes())
        .raw(&[0xC6, 0x05])
        .raw(&BUF.to_le_bytes())
        .raw(&[letter]);
    p.c.push(DATA + 0x90)
        .push(2)
        .push(BUF)
        .push(1)
        .call("DOSCALLS", WRITE, 16);
    if returns {
        p.raw(&[0xC3]);
    } else {
        p.c.push(0).push(3).call("DOSCALLS", EXIT_LIST, 8);
        // Not reached: EXLST_EXIT does not return.
        p.raw(&[0xEB, 0xFE]);
    }
    at
}

fn run(files: &[(&str, Vec<u8>)]) -> (Outcome, Vec<u8>) {
    let (o, out, _) = common::run_files(files, 20_000_000);
    (o, out)
}

fn add(p: &mut Prog, order: u32, addr: u32) {
    p.api(
        EXIT_LIST,
        &[Arg::Imm(1 | (order << 8)), Arg::Imm(addr)],
        0,
        0xE0,
    );
}

#[test]
fn routines_run_in_invocation_order_lifo_within_an_order_with_tc_exit() {
    let mut p = Prog::new();
    let a = routine(&mut p, b'A', false);
    let b = routine(&mut p, b'B', false);
    let c = routine(&mut p, b'C', false);
    let d = routine(&mut p, b'D', false);
    let e = routine(&mut p, b'E', true);
    p.start_main();
    add(&mut p, 0x20, a);
    add(&mut p, 0x10, b);
    add(&mut p, 0x10, c);
    add(&mut p, 0x05, d);
    add(&mut p, 0xFF, e);
    // D leaves the list again.
    p.api(EXIT_LIST, &[Arg::Imm(2), Arg::Imm(d)], 0, 0xE1);
    // DosExit(EXIT_PROCESS, 7).
    p.c.push(7).push(1).call("DOSCALLS", 234, 8);
    let (o, out) = run(&[("T.EXE", p.finish())]);
    // C before B (same order, added later); E returns instead of
    // EXLST_EXIT, which ends the list too.
    assert_eq!(String::from_utf8_lossy(&out), "C0B0A0E0");
    assert_eq!(o, Outcome::Exited(7));
}

#[test]
fn the_main_threads_return_and_other_threads_end_before_the_routines_run() {
    let mut p = Prog::new();
    // A thread that would write 'T' forever if it were not ended.
    let spin = p.here();
    p.c.store(BUF + 8, u32::from(b'T'));
    let top = p.c.c.len();
    p.c.push(DATA + 0x90)
        .push(1)
        .push(BUF + 8)
        .push(1)
        .call("DOSCALLS", WRITE, 16);
    p.c.push(1).call("DOSCALLS", 229, 4);
    let back = top as i32 - (p.c.c.len() as i32 + 5);
    p.raw(&[0xE9]).raw(&back.to_le_bytes());
    let a = routine(&mut p, b'A', false);
    p.start_main();
    add(&mut p, 0, a);
    p.thread(DATA + 0xA0, spin);
    p.sleep(3);
    // main returns 5.
    p.raw(&[0xB8, 5, 0, 0, 0, 0xC3]);
    let (o, out) = run(&[("T.EXE", p.finish())]);
    let s = String::from_utf8_lossy(&out).to_string();
    assert!(s.starts_with('T'), "{s}");
    assert!(s.ends_with("TA0") || s.ends_with("A0"), "{s}");
    assert_eq!(s.matches("A0").count(), 1, "{s}");
    assert!(!s.ends_with('T'), "{s}");
    assert_eq!(o, Outcome::Exited(5));
}

#[test]
fn a_fault_runs_the_routines_with_tc_exception_and_dosexit_in_one_goes_on() {
    let mut p = Prog::new();
    let a = routine(&mut p, b'A', false);
    // B calls DosExit(1, 99) instead of EXLST_EXIT: the next runs.
    let b = p.here();
    p.c.store(BUF + 8, u32::from(b'B'));
    p.c.push(DATA + 0x90)
        .push(1)
        .push(BUF + 8)
        .push(1)
        .call("DOSCALLS", WRITE, 16);
    p.c.push(99).push(1).call("DOSCALLS", 234, 8);
    p.start_main();
    add(&mut p, 2, a);
    add(&mut p, 1, b);
    // mov eax, [0]: a page fault.
    p.raw(&[0xA1, 0, 0, 0, 0]);
    let (o, out) = run(&[("T.EXE", p.finish())]);
    assert_eq!(String::from_utf8_lossy(&out), "BA4");
    assert!(matches!(o, Outcome::GuestFault { vector: 14, .. }), "{o:?}");
}

#[test]
fn dos_exit_list_errors() {
    let mut p = Prog::new();
    let a = routine(&mut p, b'A', false);
    p.start_main();
    let rc = |p: &mut Prog, code: u32, addr: u32, want: u32, tag: u32| {
        p.api(EXIT_LIST, &[Arg::Imm(code), Arg::Imm(addr)], want, tag);
    };
    // Unknown actions.
    rc(&mut p, 0, a, 1, 0xE0);
    rc(&mut p, 4, a, 1, 0xE1);
    // An order byte with REMOVE or EXIT, a high word.
    rc(&mut p, 0x0102, a, 13, 0xE2);
    rc(&mut p, 0x0103, 0, 13, 0xE3);
    rc(&mut p, 0x10001, a, 13, 0xE4);
    // REMOVE of a routine not on the list; EXIT outside exit processing.
    rc(&mut p, 2, a, 1, 0xE5);
    rc(&mut p, 3, 0, 1, 0xE6);
    // Add, remove, remove again.
    rc(&mut p, 1, a, 0, 0xE7);
    rc(&mut p, 2, a, 0, 0xE8);
    rc(&mut p, 2, a, 1, 0xE9);
    let (o, out) = run(&[("T.EXE", p.finish())]);
    assert_eq!(o, Outcome::Exited(0));
    // Nothing left on the list: no routine ran.
    assert!(out.is_empty(), "{out:?}");
}

#[test]
fn a_killed_child_runs_its_exit_list_with_tc_killprocess() {
    let mut c = Prog::new();
    let a = routine(&mut c, b'K', false);
    c.start_main();
    add(&mut c, 0, a);
    c.raw(&[0xEB, 0xFE]);
    let child = c.finish();

    let mut p = Prog::new();
    p.start_main();
    let (name, args, res) = (DATA + 0x200, DATA + 0x240, DATA + 0x280);
    p.text(name, "C.EXE").bytes(args, b"C.EXE\0\0");
    // DosExecPgm(EXEC_ASYNCRESULT), then let the child spin.
    let exec = [0, 0, 2, args, 0, res, name].map(Arg::Imm);
    p.api(EXEC_PGM, &exec, 0, 0xE0);
    p.c.load_eax(res);
    p.store_eax(DATA + 0x2A0);
    p.sleep(20);
    p.api(
        KILL_PROCESS,
        &[Arg::Imm(0), Arg::Mem(DATA + 0x2A0)],
        0,
        0xE1,
    );
    let wait = [
        Arg::Imm(0),
        Arg::Imm(0),
        Arg::Imm(res),
        Arg::Imm(DATA + 0x2A4),
        Arg::Mem(DATA + 0x2A0),
    ];
    p.api(WAIT_CHILD, &wait, 0, 0xE2);
    // RESULTCODES: TC_KILLPROCESS, 0.
    p.check(res, 3, 0xE3).check(res + 4, 0, 0xE4);
    let (o, out) = run(&[("T.EXE", p.finish()), ("C.EXE", child)]);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(String::from_utf8_lossy(&out), "K3");
}

#[test]
fn a_16_bit_routine_gets_the_code_as_a_word_at_ss_sp_plus_4() {
    // main: DosExitList(EXLST_ADD | 0x4000, CS:routine); DosExit(1, 3).
    // routine: AX = [SS:SP+4] + '0'; [0] = 'R', [1] = AL;
    // DosWrite(1, DS:0, 2, DS:0x10); DosExitList(EXLST_EXIT, 0:0).
    let mut p = prog16::Prog::default();
    p.c.extend(push(0x4001));
    p.c.push(0x0E); // push cs
    let routine_at = p.c.len() + 3 + 5 + 3 + 3 + 5;
    p.c.extend(push(routine_at as u16));
    p.far_call("DOSCALLS", 7);
    p.exit(3);
    assert_eq!(p.c.len(), routine_at);
    // mov bp, sp; mov ax, [bp+4]; add al, '0'; mov [1], al; mov byte [0], 'R'
    p.c.extend([0x8B, 0xEC, 0x8B, 0x46, 0x04, 0x04, b'0', 0xA2, 1, 0]);
    p.c.extend([0xC6, 0x06, 0, 0, b'R']);
    p.call_only("DOSCALLS", 138, &[A::W(1), A::P(0), A::W(2), A::P(0x10)]);
    p.call_only("DOSCALLS", 7, &[A::W(3), A::W(0), A::W(0)]);
    p.c.extend([0xEB, 0xFE]);
    let (o, out) = run(&[("T.EXE", p.build(&[0; 0x20]))]);
    assert_eq!(String::from_utf8_lossy(&out), "R0");
    assert_eq!(o, Outcome::Exited(3));
}

#[test]
fn dos_exit_on_another_thread_runs_the_routines_on_thread_1() {
    let mut p = Prog::new();
    // The routine writes 'A', the code and the TID (DosGetInfoBlocks'
    // TIB: tib_ptib2 -> tib2_ultid) as a digit.
    let a = p.here();
    p.api(
        312,
        &[Arg::Imm(DATA + 0xB0), Arg::Imm(DATA + 0xB4)],
        0,
        0xD0,
    );
    // mov eax, [DATA+0xB0]; mov eax, [eax+0x0C]; mov eax, [eax]; add al, '0'
    p.c.load_eax(DATA + 0xB0);
    p.raw(&[0x8B, 0x40, 0x0C, 0x8B, 0x00, 0x04, b'0', 0xA2])
        .raw(&(BUF + 2).to_le_bytes());
    p.raw(&[0x8B, 0x44, 0x24, 0x04, 0x04, b'0', 0xA2])
        .raw(&(BUF + 1).to_le_bytes())
        .raw(&[0xC6, 0x05])
        .raw(&BUF.to_le_bytes())
        .raw(b"A");
    p.c.push(DATA + 0x90)
        .push(3)
        .push(BUF)
        .push(1)
        .call("DOSCALLS", WRITE, 16);
    p.c.push(0).push(3).call("DOSCALLS", EXIT_LIST, 8);
    // Thread 2: DosExit(EXIT_PROCESS, 9).
    let t2 = p.here();
    p.c.push(9).push(1).call("DOSCALLS", 234, 8);
    p.start_main();
    add(&mut p, 0, a);
    p.thread(DATA + 0xA0, t2);
    p.sleep(1000);
    p.c.push(1).push(1).call("DOSCALLS", 234, 8);
    let (o, out) = run(&[("T.EXE", p.finish())]);
    assert_eq!(String::from_utf8_lossy(&out), "A01");
    assert_eq!(o, Outcome::Exited(9));
}
