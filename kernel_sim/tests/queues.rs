//! QUECALLS, the 32-bit queue API, from guest code: every call with its
//! error codes, the three orders, element codes, the event semaphore of
//! DCWW_NOWAIT, a reader blocked until another thread writes, and a
//! client process writing a pointer into shared memory to its server.

mod common;

use common::DATA;
use common::threaded::{Arg, Prog, run_reading};
use kernel_sim::Outcome;

const READ: u32 = 9;
const PURGE: u32 = 10;
const CLOSE: u32 = 11;
const QUERY: u32 = 12;
const PEEK: u32 = 13;
const WRITE: u32 = 14;
const OPEN: u32 = 15;
const CREATE: u32 = 16;

const HQ: u32 = DATA;
const HQ2: u32 = DATA + 0x04;
const PID: u32 = DATA + 0x08;
const N: u32 = DATA + 0x0C;
const REQ: u32 = DATA + 0x10;
const CB: u32 = DATA + 0x18;
const PB: u32 = DATA + 0x1C;
const PRIO: u32 = DATA + 0x20;
const ELEM: u32 = DATA + 0x24;
const HEV: u32 = DATA + 0x28;
const HEV2: u32 = DATA + 0x2C;
const TID: u32 = DATA + 0x30;
const SHP: u32 = DATA + 0x34;
const RES: u32 = DATA + 0x38;
const NAME: u32 = DATA + 0x100;
const OTHER: u32 = DATA + 0x140;
const SHNAME: u32 = DATA + 0x180;
const CHILD: u32 = DATA + 0x1C0;

use Arg::{Imm, Mem};

/// QUECALLS.`ordinal` with dword arguments (C order), expecting `rc`
/// (else exit `tag`).
fn q(p: &mut Prog, ordinal: u32, args: &[Arg], rc: u32, tag: u32) {
    for a in args.iter().rev() {
        match *a {
            Imm(v) => p.c.push(v),
            Mem(at) => p.c.push_mem(at),
        };
    }
    p.c.call("QUECALLS", ordinal, 4 * args.len() as u8)
        .expect(rc, tag);
}

/// DosReadQueue(hq, REQ, CB, PB, element, wait, PRIO, hsem), with PRIO
/// set to 0xAAAAAAAA first (only its low byte is the priority).
fn read(p: &mut Prog, element: Arg, wait: u32, hsem: Arg, rc: u32, tag: u32) {
    p.c.store(PRIO, 0xAAAA_AAAA);
    let args = [
        Mem(HQ),
        Imm(REQ),
        Imm(CB),
        Imm(PB),
        element,
        Imm(wait),
        Imm(PRIO),
        hsem,
    ];
    q(p, READ, &args, rc, tag);
}

/// DosPeekQueue(hq, REQ, CB, PB, ELEM, wait, PRIO, 0).
fn peek(p: &mut Prog, rc: u32, tag: u32) {
    let args = [
        Mem(HQ),
        Imm(REQ),
        Imm(CB),
        Imm(PB),
        Imm(ELEM),
        Imm(1),
        Imm(PRIO),
        Imm(0),
    ];
    q(p, PEEK, &args, rc, tag);
}

fn write(p: &mut Prog, request: u32, len: u32, buf: u32, priority: u32, tag: u32) {
    let args = [Mem(HQ), Imm(request), Imm(len), Imm(buf), Imm(priority)];
    q(p, WRITE, &args, 0, tag);
}

fn run(p: Prog) -> Vec<u8> {
    let (o, mem) = run_reading(p.finish(), 0x400);
    assert_eq!(o, Outcome::Exited(0));
    mem
}

#[test]
fn create_open_write_read_peek_purge_query_close_and_their_errors() {
    let mut p = Prog::new();
    p.start_main();
    p.text(NAME, "\\QUEUES\\A");
    p.text(OTHER, "\\FOO\\A");
    q(&mut p, CREATE, &[Imm(HQ), Imm(3), Imm(NAME)], 87, 1);
    q(&mut p, CREATE, &[Imm(HQ), Imm(8), Imm(NAME)], 87, 2);
    q(&mut p, CREATE, &[Imm(HQ), Imm(0), Imm(OTHER)], 335, 3);
    p.text(OTHER, "\\QUEUES\\");
    q(&mut p, CREATE, &[Imm(HQ), Imm(0), Imm(OTHER)], 335, 4);
    q(&mut p, CREATE, &[Imm(HQ), Imm(4), Imm(NAME)], 0, 5);
    q(&mut p, CREATE, &[Imm(HQ2), Imm(2), Imm(NAME)], 332, 6);
    // Opened by name, any case: the same handle, owned by PID 1.
    p.text(OTHER, "\\queues\\a");
    q(&mut p, OPEN, &[Imm(PID), Imm(HQ2), Imm(OTHER)], 0, 7);
    p.check(PID, 1, 8);
    p.c.load_eax(HQ2).sub_eax(HQ).expect(0, 9);
    p.text(OTHER, "\\QUEUES\\B");
    q(&mut p, OPEN, &[Imm(PID), Imm(HQ2), Imm(OTHER)], 343, 10);
    q(&mut p, QUERY, &[Mem(HQ), Imm(N)], 0, 11);
    p.check(N, 0, 12);
    read(&mut p, Imm(0), 1, Imm(0), 342, 13);
    read(&mut p, Imm(0), 2, Imm(0), 433, 14);
    // Three elements; a FIFO queue keeps no priority.
    write(&mut p, 10, 3, 0x1234, 0, 15);
    write(&mut p, 11, 4, 0x5678, 9, 16);
    write(&mut p, 12, 5, 0x9ABC, 0, 17);
    q(&mut p, QUERY, &[Mem(HQ), Imm(N)], 0, 18);
    p.check(N, 3, 19);
    read(&mut p, Imm(0), 1, Imm(0), 0, 20);
    p.check(REQ, 1, 21)
        .check(REQ + 4, 10, 22)
        .check(CB, 3, 23)
        .check(PB, 0x1234, 24)
        .check(PRIO, 0xAAAA_AA00, 25);
    // Peek: the first, then the one after each code.
    p.c.store(ELEM, 0);
    peek(&mut p, 0, 26);
    p.check(REQ + 4, 11, 27)
        .check(CB, 4, 28)
        .check(PRIO, 0xAAAA_AA00, 29);
    // Keep element 11's code.
    p.c.load_eax(ELEM);
    p.store_eax(HQ2);
    peek(&mut p, 0, 31);
    p.check(REQ + 4, 12, 32).check(PB, 0x9ABC, 33);
    peek(&mut p, 342, 34);
    // Read element 12 by its code; again: gone.
    read(&mut p, Mem(ELEM), 1, Imm(0), 0, 35);
    p.check(REQ + 4, 12, 36);
    read(&mut p, Mem(ELEM), 1, Imm(0), 333, 37);
    // A peek after an element that is gone.
    p.c.store(ELEM, 0x7FFF_FFFF);
    peek(&mut p, 333, 38);
    q(&mut p, QUERY, &[Mem(HQ), Imm(N)], 0, 39);
    p.check(N, 1, 40);
    // Element 11 is still there, by its code.
    read(&mut p, Mem(HQ2), 1, Imm(0), 0, 41);
    p.check(REQ + 4, 11, 42);
    write(&mut p, 13, 0, 0, 0, 43);
    q(&mut p, PURGE, &[Mem(HQ)], 0, 44);
    q(&mut p, QUERY, &[Mem(HQ), Imm(N)], 0, 45);
    p.check(N, 0, 46);
    // Bad handles.
    q(
        &mut p,
        WRITE,
        &[Imm(0xDEAD), Imm(0), Imm(0), Imm(0), Imm(0)],
        337,
        47,
    );
    q(&mut p, QUERY, &[Imm(0), Imm(N)], 337, 48);
    q(&mut p, PURGE, &[Imm(0xDEAD)], 337, 49);
    // Bad pointers.
    q(&mut p, QUERY, &[Mem(HQ), Imm(0)], 487, 50);
    write(&mut p, 14, 0, 0, 0, 51);
    let args = [
        Mem(HQ),
        Imm(0),
        Imm(CB),
        Imm(PB),
        Imm(0),
        Imm(1),
        Imm(PRIO),
        Imm(0),
    ];
    q(&mut p, READ, &args, 487, 52);
    q(&mut p, QUERY, &[Mem(HQ), Imm(N)], 0, 53);
    p.check(N, 1, 54);
    // Closed: the handle is gone, for a second close too.
    q(&mut p, CLOSE, &[Mem(HQ)], 0, 55);
    q(&mut p, QUERY, &[Mem(HQ), Imm(N)], 337, 56);
    q(&mut p, CLOSE, &[Mem(HQ)], 337, 57);
    read(&mut p, Imm(0), 1, Imm(0), 337, 58);
    // The name is free again.
    q(&mut p, CREATE, &[Imm(HQ), Imm(0), Imm(NAME)], 0, 59);
    run(p);
}

#[test]
fn lifo_and_priority_queues_read_in_their_order() {
    let mut p = Prog::new();
    p.start_main();
    p.text(NAME, "\\QUEUES\\LIFO");
    q(&mut p, CREATE, &[Imm(HQ), Imm(1), Imm(NAME)], 0, 1);
    for r in 1..=3 {
        write(&mut p, r, 0, 0, 7, 2);
    }
    for (i, want) in [3, 2, 1].into_iter().enumerate() {
        read(&mut p, Imm(0), 1, Imm(0), 0, 10 + i as u32);
        p.check(REQ + 4, want, 20 + i as u32);
        p.check(PRIO, 0xAAAA_AA00, 30 + i as u32);
    }
    p.text(NAME, "\\QUEUES\\PRIO");
    q(&mut p, CREATE, &[Imm(HQ), Imm(2), Imm(NAME)], 0, 3);
    // (request, priority): more than 15 is 15; equals keep FIFO order.
    for (r, prio) in [(1, 0), (2, 5), (3, 20), (4, 5), (5, 0), (6, 15)] {
        write(&mut p, r, 0, 0, prio, 4);
    }
    for (i, (want, prio)) in [(3, 15), (6, 15), (2, 5), (4, 5), (1, 0), (5, 0)]
        .into_iter()
        .enumerate()
    {
        read(&mut p, Imm(0), 1, Imm(0), 0, 40 + i as u32);
        p.check(REQ + 4, want, 50 + i as u32);
        p.check(PRIO, 0xAAAA_AA00 | prio, 60 + i as u32);
    }
    run(p);
}

#[test]
fn the_nowait_semaphore_is_kept_and_posted_by_each_write() {
    let mut p = Prog::new();
    p.start_main();
    p.text(NAME, "\\QUEUES\\SEM");
    q(&mut p, CREATE, &[Imm(HQ), Imm(0), Imm(NAME)], 0, 1);
    p.api(324, &[Imm(0), Imm(HEV), Imm(0), Imm(0)], 0, 2);
    p.api(324, &[Imm(0), Imm(HEV2), Imm(0), Imm(0)], 0, 3);
    // Not an event semaphore: ERROR_INVALID_HANDLE.
    read(&mut p, Imm(0), 1, Imm(0x4242), 6, 4);
    read(&mut p, Imm(0), 1, Mem(HEV), 342, 5);
    p.api(330, &[Mem(HEV), Imm(N)], 0, 6).check(N, 0, 7);
    write(&mut p, 1, 0, 0, 0, 8);
    write(&mut p, 2, 0, 0, 0, 9);
    p.api(330, &[Mem(HEV), Imm(N)], 0, 10).check(N, 2, 11);
    // Another semaphore now: ERROR_INVALID_PARAMETER; none (0) is fine,
    // and DCWW_WAIT ignores the handle.
    read(&mut p, Imm(0), 1, Mem(HEV2), 87, 12);
    read(&mut p, Imm(0), 1, Imm(0), 0, 13);
    read(&mut p, Imm(0), 0, Mem(HEV2), 0, 14);
    p.check(REQ + 4, 2, 15);
    p.api(330, &[Mem(HEV2), Imm(N)], 0, 16).check(N, 0, 17);
    run(p);
}

#[test]
fn a_waiting_reader_wakes_when_another_thread_writes() {
    let mut p = Prog::new();
    // The writer: sleeps, then writes twice.
    let writer = p.here();
    p.sleep(20);
    write(&mut p, 77, 1, 0x1111, 0, 0xE1);
    p.sleep(20);
    write(&mut p, 78, 2, 0x2222, 0, 0xE2);
    p.ret0();
    p.start_main();
    p.text(NAME, "\\QUEUES\\T");
    q(&mut p, CREATE, &[Imm(HQ), Imm(0), Imm(NAME)], 0, 1);
    p.thread(TID, writer);
    read(&mut p, Imm(0), 0, Imm(0), 0, 2);
    p.check(REQ, 1, 3)
        .check(REQ + 4, 77, 4)
        .check(PB, 0x1111, 5);
    // A waiting peek, then the read of what it saw.
    p.c.store(ELEM, 0);
    let args = [
        Mem(HQ),
        Imm(REQ),
        Imm(CB),
        Imm(PB),
        Imm(ELEM),
        Imm(0),
        Imm(PRIO),
        Imm(0),
    ];
    q(&mut p, PEEK, &args, 0, 6);
    p.check(REQ + 4, 78, 7);
    read(&mut p, Mem(ELEM), 1, Imm(0), 0, 8);
    p.check(CB, 2, 9);
    p.wait(TID, 0, 0, 10);
    run(p);
}

/// The client: opens the server's queue and shared memory, checks what
/// only the owner may do, writes "HELLO" into the shared memory and an
/// element pointing at it, closes; exits 0 or the failing tag.
fn client() -> Vec<u8> {
    let mut p = Prog::new();
    p.start_main();
    p.text(SHNAME, "\\SHAREMEM\\Q");
    p.text(NAME, "\\QUEUES\\SERVER");
    p.api(301, &[Imm(SHP), Imm(SHNAME), Imm(3)], 0, 101);
    q(&mut p, OPEN, &[Imm(PID), Imm(HQ), Imm(NAME)], 0, 102);
    p.check(PID, 1, 103);
    read(&mut p, Imm(0), 1, Imm(0), 330, 104);
    peek(&mut p, 330, 105);
    q(&mut p, PURGE, &[Mem(HQ)], 330, 106);
    q(&mut p, QUERY, &[Mem(HQ), Imm(N)], 0, 107);
    p.check(N, 0, 108);
    // mov eax, [SHP]; mov dword [eax], 'HELL'; mov byte [eax+4], 'O'
    p.c.load_eax(SHP);
    p.raw(&[0xC7, 0x00])
        .raw(b"HELL")
        .raw(&[0xC6, 0x40, 0x04, b'O']);
    let args = [Mem(HQ), Imm(0x55), Imm(5), Mem(SHP), Imm(0)];
    q(&mut p, WRITE, &args, 0, 109);
    q(&mut p, CLOSE, &[Mem(HQ)], 0, 110);
    q(&mut p, WRITE, &args, 337, 111);
    p.finish()
}

#[test]
fn a_client_process_writes_a_pointer_into_shared_memory() {
    let mut p = Prog::new();
    p.start_main();
    p.text(SHNAME, "\\SHAREMEM\\Q");
    p.text(NAME, "\\QUEUES\\SERVER");
    p.text(CHILD, "CLIENT.EXE");
    p.api(300, &[Imm(SHP), Imm(SHNAME), Imm(4096), Imm(0x13)], 0, 1);
    q(&mut p, CREATE, &[Imm(HQ), Imm(0), Imm(NAME)], 0, 2);
    // DosExecPgm(EXEC_ASYNCRESULT): RES holds the child's PID.
    let exec = [DATA + 0x300, 32, 2, 0, 0, RES, CHILD].map(Imm);
    p.api(283, &exec, 0, 3);
    read(&mut p, Imm(0), 0, Imm(0), 0, 4);
    p.c.load_eax(REQ).sub_eax(RES).expect(0, 5);
    p.check(REQ + 4, 0x55, 6).check(CB, 5, 7);
    p.c.load_eax(PB).sub_eax(SHP).expect(0, 8);
    // mov eax, [PB]; mov eax, [eax]: "HELL"
    p.c.load_eax(PB);
    p.raw(&[0x8B, 0x00]);
    p.c.expect(u32::from_le_bytes(*b"HELL"), 9);
    // The client ended with 0.
    p.api(280, &[Imm(0), Imm(0), Imm(RES), Imm(PID), Mem(RES)], 0, 10);
    p.check(RES, 0, 11).check(RES + 4, 0, 12);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), p.finish()).unwrap();
    std::fs::write(dir.path().join("CLIENT.EXE"), client()).unwrap();
    let mut cfg = kernel_sim::ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(5_000_000);
    let mut proc = kernel_sim::Process::new(cfg).unwrap();
    assert_eq!(proc.run(), Outcome::Exited(0));
}

#[test]
fn a_queue_goes_with_its_owner() {
    // The client above creates nothing; here the child creates a queue
    // and ends: the parent cannot open it afterwards.
    let mut c = Prog::new();
    c.start_main();
    c.text(NAME, "\\QUEUES\\GONE");
    q(&mut c, CREATE, &[Imm(HQ), Imm(0), Imm(NAME)], 0, 101);
    let child = c.finish();
    let mut p = Prog::new();
    p.start_main();
    p.text(NAME, "\\QUEUES\\GONE");
    p.text(CHILD, "CLIENT.EXE");
    let exec = [DATA + 0x300, 32, 0, 0, 0, RES, CHILD].map(Imm);
    p.api(283, &exec, 0, 1);
    p.check(RES + 4, 0, 2);
    q(&mut p, OPEN, &[Imm(PID), Imm(HQ), Imm(NAME)], 343, 3);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), p.finish()).unwrap();
    std::fs::write(dir.path().join("CLIENT.EXE"), child).unwrap();
    let mut cfg = kernel_sim::ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(5_000_000);
    let mut proc = kernel_sim::Process::new(cfg).unwrap();
    assert_eq!(proc.run(), Outcome::Exited(0));
}

#[test]
fn hostile_arguments_are_errors() {
    // Every entry with garbage arguments: an error code each, never a
    // host panic or a guest fault.
    let mut p = Prog::new();
    p.start_main();
    let entries = [
        (READ, 8),
        (PURGE, 1),
        (CLOSE, 1),
        (QUERY, 2),
        (PEEK, 8),
        (WRITE, 5),
        (OPEN, 3),
        (CREATE, 3),
    ];
    for (i, (ordinal, n)) in entries.into_iter().enumerate() {
        for _ in 0..n {
            p.c.push(0xFFFF_FFF0);
        }
        p.c.call("QUECALLS", ordinal, 4 * n as u8);
        p.store_eax(DATA + 4 * i as u32);
    }
    let (o, mem) = run_reading(p.finish(), 4 * entries.len());
    assert_eq!(o, Outcome::Exited(0));
    let codes: Vec<u32> = mem
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // Handles first: ERROR_QUE_INVALID_HANDLE; DosOpenQueue's pointers;
    // DosCreateQueue's flags.
    assert_eq!(codes, [337, 337, 337, 337, 337, 337, 487, 87]);
}
