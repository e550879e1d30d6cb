//! Sessions (issue 12): DosStartSession starts a program as a session in
//! the one machine (its arguments as OS/2 passes them, a child session's
//! ID and PID), DosSelectSession, DosSetSession and DosStopSession, and
//! the STARTDATA checks.

mod common;

use common::DATA;
use common::prog16::{self, A};
use common::threaded::{Arg, Prog};
use kernel_sim::Outcome;

const START: u32 = 37;
const SELECT: u32 = 38;
const SET: u32 = 39;
const STOP: u32 = 40;

const SD: u32 = DATA + 0x100;
const NAME: u32 = DATA + 0x180;
const INPUTS: u32 = DATA + 0x1A0;
const ID: u32 = DATA + 0x1C0;
const PID: u32 = DATA + 0x1C4;
const STATUS: u32 = DATA + 0x1D0;

/// SESMGR.`ordinal` with dword arguments, expecting `rc`.
fn sesmgr(p: &mut Prog, ordinal: u32, args: &[u32], rc: u32, tag: u32) {
    for a in args.iter().rev() {
        p.c.push(*a);
    }
    p.c.call("SESMGR", ordinal, 4 * args.len() as u8)
        .expect(rc, tag);
}

/// A STARTDATA at SD: `len`, Related, FgBg, TraceOpt, PgmName at NAME,
/// PgmInputs at INPUTS, SessionType.
fn startdata(p: &mut Prog, len: u32, related: u32, fgbg: u32, trace: u32, kind: u32) {
    p.c.store(SD, len | (related << 16))
        .store(SD + 4, fgbg | (trace << 16))
        .store(SD + 8, 0)
        .store(SD + 12, NAME)
        .store(SD + 16, INPUTS)
        .store(SD + 20, 0)
        .store(SD + 24, 0)
        .store(SD + 28, kind << 16);
}

/// A child that writes its command line (`len` bytes at pib_pchcmd),
/// then spins until it is stopped.
fn child(len: u32) -> Vec<u8> {
    let mut p = Prog::new();
    p.start_main();
    p.api(312, &[Arg::Imm(DATA + 0x20), Arg::Imm(DATA + 0x24)], 0, 1);
    p.c.load_eax(DATA + 0x24);
    // mov eax, [eax+0x0C]; mov [DATA+0x2C], eax
    p.raw(&[0x8B, 0x40, 0x0C]).store_eax(DATA + 0x2C);
    let write = [
        Arg::Imm(1),
        Arg::Mem(DATA + 0x2C),
        Arg::Imm(len),
        Arg::Imm(DATA + 0x10),
    ];
    p.api(282, &write, 0, 2);
    p.raw(&[0xEB, 0xFE]);
    p.finish()
}

#[test]
fn a_child_session_runs_is_selected_set_and_stopped() {
    let cmdline = b"C.EXE\0hello there\0\0";
    let mut p = Prog::new();
    p.start_main();
    p.text(NAME, "C.EXE").text(INPUTS, "hello there");
    p.c.store(ID, u32::MAX).store(PID, u32::MAX);
    // STARTDATA checks.
    for (len, related, fgbg, trace, kind, rc) in [
        (25, 1, 0, 0, 0, 461),
        (32, 2, 0, 0, 0, 454),
        (32, 1, 2, 0, 0, 453),
        (32, 1, 0, 3, 0, 478),
        (32, 1, 0, 0, 4, 491),
    ] {
        startdata(&mut p, len, related, fgbg, trace, kind);
        sesmgr(&mut p, START, &[SD, ID, PID], rc, 0xD0 + rc % 16);
    }
    startdata(&mut p, 32, 1, 0, 0, 0);
    sesmgr(&mut p, START, &[SD, ID, PID], 0, 0xE0);
    p.sleep(20);
    p.c.load_eax(ID);
    p.store_eax(DATA + 0x1E0);
    // Selectable, then not.
    p.c.push_mem(ID).call("SESMGR", SELECT, 4).expect(0, 0xE1);
    p.c.store(STATUS, 6 | (2 << 16)).store(STATUS + 4, 0);
    p.c.push(STATUS)
        .push_mem(ID)
        .call("SESMGR", SET, 8)
        .expect(0, 0xE2);
    p.c.push_mem(ID).call("SESMGR", SELECT, 4).expect(456, 0xE3);
    p.c.store(STATUS, 5);
    p.c.push(STATUS)
        .push_mem(ID)
        .call("SESMGR", SET, 8)
        .expect(461, 0xE4);
    sesmgr(&mut p, SELECT, &[0], 0, 0xE5);
    // A bad scope; stop it; then it is gone.
    p.c.push_mem(ID)
        .push(2)
        .call("SESMGR", STOP, 8)
        .expect(458, 0xE6);
    p.c.push_mem(ID)
        .push(0)
        .call("SESMGR", STOP, 8)
        .expect(0, 0xE7);
    p.c.push_mem(ID)
        .push(0)
        .call("SESMGR", STOP, 8)
        .expect(369, 0xE8);
    sesmgr(&mut p, SELECT, &[77], 369, 0xE9);
    // An independent session: no ID or PID comes back.
    p.c.store(ID, u32::MAX).store(PID, u32::MAX);
    startdata(&mut p, 32, 0, 1, 0, 0);
    sesmgr(&mut p, START, &[SD, ID, PID], 0, 0xEA);
    p.check(ID, u32::MAX, 0xEB).check(PID, u32::MAX, 0xEC);
    // Its ID (the next) is no child of ours.
    p.c.load_eax(DATA + 0x1E0);
    p.raw(&[0x40]).store_eax(DATA + 0x1E4);
    p.c.push_mem(DATA + 0x1E4)
        .push(0)
        .call("SESMGR", STOP, 8)
        .expect(460, 0xED);
    sesmgr(&mut p, STOP, &[1, 0], 0, 0xEE);
    let files = [
        ("T.EXE", p.finish()),
        ("C.EXE", child(cmdline.len() as u32)),
    ];
    let (o, text, mut proc) = common::run_files(&files, 20_000_000);
    let mut mem = vec![0u8; 0x200];
    proc.read_guest(DATA + 0x100, &mut mem).unwrap();
    assert_eq!(o, Outcome::Exited(0), "{}", String::from_utf8_lossy(&text));
    // Both sessions wrote their command line (the independent one ran
    // on, spinning, until the run ended).
    assert_eq!(&text[..cmdline.len()], &cmdline[..]);
    let id = u32::from_le_bytes(mem[0xE0..0xE4].try_into().unwrap());
    assert_eq!(id, 1, "the first session's ID");
}

/// The 16-bit DosStartSession (16:16 pointers in STARTDATA, word
/// results) and DosStopSession (its reserved dword checked).
#[test]
fn the_16_bit_start_and_stop() {
    let mut p = prog16::Prog::default();
    // STARTDATA at DS:0x10, Length 24: Related 1, PgmName DS:0x60,
    // PgmInputs DS:0x70.
    p.store(0x10, 24);
    p.store(0x12, 1);
    p.store(0x1C, 0x60);
    p.store_ds(0x1E);
    p.store(0x20, 0x70);
    p.store_ds(0x22);
    p.call_only("SESMGR", 17, &[A::P(0x10), A::P(0x40), A::P(0x42)]);
    p.store_ax(0x44);
    // DosStopSession(0, id, 1L): the reserved dword is not zero.
    for (reserved, at) in [(1, 0x46), (0, 0x48), (0, 0x4A)] {
        let args = [A::W(0), A::M(0x40), A::W(0), A::W(reserved)];
        p.call_only("SESMGR", 8, &args);
        p.store_ax(at);
    }
    // DosWrite(1, ds:0x40, 12, ds:0x50); DosExit(1, 0)
    p.call_only(
        "DOSCALLS",
        138,
        &[A::W(1), A::P(0x40), A::W(12), A::P(0x50)],
    );
    p.exit(0);
    let mut data = vec![0u8; 0x80];
    data[0x60..0x66].copy_from_slice(b"C.EXE\0");
    data[0x70..0x73].copy_from_slice(b"x y");
    let cmdline = b"C.EXE\0x y\0\0";
    let files = [
        ("T.EXE", p.build(&data)),
        ("C.EXE", child(cmdline.len() as u32)),
    ];
    let (o, b, _) = common::run_files(&files, 5_000_000);
    assert_eq!(o, Outcome::Exited(0));
    let w = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
    // The parent ran first: ID 1, PID 2, rc 0, 459, 0, 369.
    assert_eq!((w(0), w(2), w(4)), (1, 2, 0));
    assert_eq!((w(6), w(8), w(10)), (459, 0, 369));
}
