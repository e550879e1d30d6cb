//! Anonymous pipes (issue 12): DosCreatePipe and DosMakePipe, DosRead and
//! DosWrite on their handles, end of file when the write ends close,
//! ERROR_BROKEN_PIPE when the read ends do, and reads and writes that
//! block under the deterministic scheduler.

mod common;

use common::threaded::Arg::{Imm, Mem};
use common::threaded::{Prog, dword_at as at};
use common::{Code, DATA};
use kernel_sim::{Outcome, Process, ProcessConfig};

fn run(bytes: Vec<u8>) -> (Outcome, Vec<u8>) {
    common::threaded::run_reading(bytes, 0x400)
}

/// Append the dword at `at` to the log at LOG (index at LOGN).
fn log(p: &mut Prog, at: u32) -> &mut Prog {
    // mov eax, [at]; mov ecx, [LOGN]; mov [LOG + ecx*4], eax; inc dword [LOGN]
    p.c.load_eax(at);
    p.c.c.extend([0x8B, 0x0D]);
    p.c.c.extend(LOGN.to_le_bytes());
    p.c.c.extend([0x89, 0x04, 0x8D]);
    p.c.c.extend(LOG.to_le_bytes());
    p.c.c.extend([0xFF, 0x05]);
    p.c.c.extend(LOGN.to_le_bytes());
    p
}

const CREATE_PIPE: u32 = 239;
const READ: u32 = 281;
const WRITE: u32 = 282;
const CLOSE: u32 = 257;
const SET_FILE_PTR: u32 = 256;
const QUERY_HTYPE: u32 = 224;
const QUERY_FHSTATE: u32 = 276;
const DUP: u32 = 260;

const HR: u32 = DATA + 0x30;
const HW: u32 = DATA + 0x34;
const N: u32 = DATA + 0x38;
const TID: u32 = DATA + 0x3C;
const H2: u32 = DATA + 0x40;
const H3: u32 = DATA + 0x44;
const OUT: u32 = DATA + 0x80;
const SRC: u32 = DATA + 0x100;
const BUF: u32 = DATA + 0x200;
const LOGN: u32 = DATA + 0x300;
const LOG: u32 = DATA + 0x304;

#[test]
fn bytes_go_through_in_order_and_the_ends_report_their_errors() {
    let mut p = Prog::new();
    p.start_main();
    p.bytes(SRC, b"hello, pipe!");
    p.api(CREATE_PIPE, &[Imm(HR), Imm(HW), Imm(0)], 0, 1);
    p.api(WRITE, &[Mem(HW), Imm(SRC), Imm(5), Imm(N)], 0, 2);
    p.check(N, 5, 3);
    p.api(WRITE, &[Mem(HW), Imm(SRC + 5), Imm(7), Imm(N)], 0, 4);
    // One read takes at most what is asked, the next the rest.
    p.api(READ, &[Mem(HR), Imm(BUF), Imm(3), Imm(N)], 0, 5);
    p.check(N, 3, 6);
    p.api(READ, &[Mem(HR), Imm(BUF + 3), Imm(100), Imm(N)], 0, 7);
    p.check(N, 9, 8);
    // Wrong direction, seeking, the handle type and state.
    p.api(WRITE, &[Mem(HR), Imm(SRC), Imm(1), Imm(N)], 5, 9);
    p.api(READ, &[Mem(HW), Imm(BUF), Imm(1), Imm(N)], 5, 10);
    p.api(SET_FILE_PTR, &[Mem(HR), Imm(0), Imm(0), Imm(N)], 132, 11);
    p.api(QUERY_HTYPE, &[Mem(HR), Imm(OUT), Imm(OUT + 4)], 0, 12);
    p.check(OUT, 2, 13);
    p.api(QUERY_FHSTATE, &[Mem(HW), Imm(OUT)], 0, 14);
    p.check(OUT, 0x41, 15);
    // Bad pointers: no pipe, and the calls on one fail cleanly.
    p.api(CREATE_PIPE, &[Imm(0), Imm(H2), Imm(0)], 487, 16);
    p.api(CREATE_PIPE, &[Imm(H2), Imm(0xFFFF_F000), Imm(0)], 487, 17);
    p.api(WRITE, &[Mem(HW), Imm(0xFFFF_F000), Imm(4), Imm(N)], 487, 18);
    // A duplicate of the write end keeps the pipe open; closing both is
    // end of file once the queue is empty.
    p.c.store(H2, 0xFFFF_FFFF);
    p.api(DUP, &[Mem(HW), Imm(H2)], 0, 19);
    p.api(CLOSE, &[Mem(HW)], 0, 20);
    p.api(WRITE, &[Mem(H2), Imm(SRC), Imm(2), Imm(N)], 0, 21);
    p.api(CLOSE, &[Mem(H2)], 0, 22);
    p.api(READ, &[Mem(HR), Imm(BUF + 12), Imm(100), Imm(N)], 0, 23);
    p.check(N, 2, 24);
    p.api(READ, &[Mem(HR), Imm(BUF), Imm(100), Imm(N)], 0, 25);
    p.check(N, 0, 26);
    p.api(CLOSE, &[Mem(HR)], 0, 27);
    p.api(READ, &[Mem(HR), Imm(BUF), Imm(1), Imm(N)], 6, 28);
    // No reader: ERROR_BROKEN_PIPE.
    p.api(CREATE_PIPE, &[Imm(HR), Imm(HW), Imm(16)], 0, 29);
    p.api(CLOSE, &[Mem(HR)], 0, 30);
    p.c.store(N, 0x55);
    p.api(WRITE, &[Mem(HW), Imm(SRC), Imm(4), Imm(N)], 109, 31);
    p.check(N, 0, 32);
    let (o, mem) = run(p.finish());
    assert_eq!(o, Outcome::Exited(0));
    let b = (BUF - DATA) as usize;
    assert_eq!(&mem[b..b + 14], b"hello, pipe!he");
}

#[test]
fn a_read_of_an_empty_pipe_waits_for_the_writer_and_a_full_pipe_for_the_reader() {
    let mut p = Prog::new();
    // The writer: sleeps, then writes 40 bytes into a 16-byte pipe (it
    // waits twice for room), logs that, closes its end.
    let writer = p.here();
    p.sleep(20);
    p.api(WRITE, &[Mem(HW), Imm(SRC), Imm(40), Imm(H3)], 0, 0x50);
    p.c.store(OUT, 0x77);
    log(&mut p, OUT);
    p.api(CLOSE, &[Mem(HW)], 0, 0x51);
    p.ret0();
    p.start_main();
    p.bytes(SRC, b"0123456789abcdefghijklmnopqrstuvwxyzABCD");
    p.api(CREATE_PIPE, &[Imm(HR), Imm(HW), Imm(16)], 0, 1);
    p.thread(TID, writer);
    // Each read waits until there are bytes, and gets what is queued.
    for i in 0..4u32 {
        p.api(
            READ,
            &[Mem(HR), Imm(BUF + 0x40 * i), Imm(100), Imm(N)],
            0,
            2 + i,
        );
        log(&mut p, N);
    }
    p.c.push(TID).push(0).call("DOSCALLS", 349, 8);
    let (o, mem) = run(p.finish());
    assert_eq!(o, Outcome::Exited(0));
    let n = at(&mem, LOGN);
    let log: Vec<u32> = (0..n).map(|i| at(&mem, LOG + 4 * i)).collect();
    // 16 + 16 + 8 bytes, then end of file. The second read and the
    // writer's last 8 bytes finish in the same wake-up; the writer is
    // next in the round robin, so its finish comes before the third
    // read's count.
    assert_eq!(log, [16, 16, 0x77, 8, 0]);
    assert_eq!(at(&mem, H3), 40);
    let b = (BUF - DATA) as usize;
    let got: Vec<u8> = [
        &mem[b..b + 16],
        &mem[b + 0x40..b + 0x50],
        &mem[b + 0x80..b + 0x88],
    ]
    .concat();
    assert_eq!(got, b"0123456789abcdefghijklmnopqrstuvwxyzABCD");
}

#[test]
fn a_lone_reader_of_its_own_empty_pipe_deadlocks() {
    let mut p = Prog::new();
    p.start_main();
    p.api(CREATE_PIPE, &[Imm(HR), Imm(HW), Imm(0)], 0, 1);
    p.api(READ, &[Mem(HR), Imm(BUF), Imm(4), Imm(N)], 0, 2);
    let (o, _) = run(p.finish());
    assert!(matches!(o, Outcome::Deadlock { .. }), "{o:?}");
}

/// A 16-bit program: DosMakePipe(&hRead at DS:0x12, &hWrite at DS:0x10,
/// 64), DosWrite of "abcd" (DS:0x20), DosRead into DS:0x40; it exits with
/// (the OR of every return code and of the bytes that differ) << 8 | the
/// count read.
fn make_pipe_16() -> Vec<u8> {
    let mut c: Vec<u8> = Vec::new();
    let mut calls = Vec::new();
    let mut call = |c: &mut Vec<u8>, ordinal: u32| {
        calls.push((c.len() as u32, "DOSCALLS", ordinal));
        c.extend([0x9A, 0, 0, 0, 0]);
    };
    let or_rc = [0x09, 0x06, 0x18, 0x00];
    c.push(0x1E);
    c.extend(common::push(0x12));
    c.push(0x1E);
    c.extend(common::push(0x10));
    c.extend(common::push(64));
    call(&mut c, 16);
    c.extend(or_rc);
    c.extend([0xFF, 0x36, 0x10, 0x00, 0x1E]);
    c.extend(common::push(0x20));
    c.extend(common::push(4));
    c.push(0x1E);
    c.extend(common::push(0x14));
    call(&mut c, 138);
    c.extend(or_rc);
    c.extend([0xFF, 0x36, 0x12, 0x00, 0x1E]);
    c.extend(common::push(0x40));
    c.extend(common::push(100));
    c.push(0x1E);
    c.extend(common::push(0x16));
    call(&mut c, 137);
    c.extend(or_rc);
    for off in [0u8, 2] {
        c.extend([0xA1, 0x40 + off, 0x00, 0x33, 0x06, 0x20 + off, 0x00]);
        c.extend(or_rc);
    }
    c.extend([0xA1, 0x18, 0x00, 0xC1, 0xE0, 0x08, 0x0B, 0x06, 0x16, 0x00]);
    c.extend(common::push(1));
    c.push(0x50);
    call(&mut c, 5);
    let mut data = vec![0u8; 0x200];
    data[0x20..0x24].copy_from_slice(b"abcd");
    common::ne_program(&c, &data, &calls)
}

#[test]
fn dos_make_pipe_gives_a_16_bit_caller_word_handles() {
    let (o, _) = run(make_pipe_16());
    assert_eq!(o, Outcome::Exited(4));
}

/// A child that writes "hi!" to handle 4 (the inherited write end) and
/// exits.
fn pipe_child() -> Vec<u8> {
    let mut c = Code::new();
    c.store(SRC, u32::from_le_bytes(*b"hi!\0"));
    c.push(N)
        .push(3)
        .push(SRC)
        .push(4)
        .call("DOSCALLS", WRITE, 16);
    c.exit_eax()
}

#[test]
fn a_child_writes_into_an_inherited_pipe_and_its_end_is_end_of_file() {
    const EXEC_ASYNC: u32 = 1;
    let name = DATA + 0x180;
    let mut p = Prog::new();
    p.start_main();
    p.bytes(name, b"C.EXE\0\0\0");
    p.api(CREATE_PIPE, &[Imm(HR), Imm(HW), Imm(0)], 0, 1);
    p.check(HW, 4, 2);
    p.api(
        283,
        &[
            Imm(BUF),
            Imm(32),
            Imm(EXEC_ASYNC),
            Imm(name),
            Imm(0),
            Imm(OUT),
            Imm(name),
        ],
        0,
        3,
    );
    // The parent's own write end goes: the child's is the last.
    p.api(CLOSE, &[Mem(HW)], 0, 4);
    p.api(READ, &[Mem(HR), Imm(BUF), Imm(100), Imm(N)], 0, 5);
    log(&mut p, N);
    p.api(READ, &[Mem(HR), Imm(BUF + 0x10), Imm(100), Imm(N)], 0, 6);
    log(&mut p, N);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), p.finish()).unwrap();
    std::fs::write(dir.path().join("C.EXE"), pipe_child()).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(5_000_000);
    let mut proc = Process::new(cfg).unwrap();
    common::capture_console(&mut proc);
    let o = proc.run();
    let mut mem = vec![0u8; 0x400];
    proc.read_guest(DATA, &mut mem).unwrap();
    assert_eq!(o, Outcome::Exited(0));
    let n = at(&mem, LOGN);
    let log: Vec<u32> = (0..n).map(|i| at(&mem, LOG + 4 * i)).collect();
    assert_eq!(log, [3, 0]);
    let b = (BUF - DATA) as usize;
    assert_eq!(&mem[b..b + 3], b"hi!");
}
