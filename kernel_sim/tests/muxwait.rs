//! Named and shared semaphores (DosOpenEventSem, DosOpenMutexSem by name
//! and by handle, open counts) and muxwait semaphores (issue 12, item 3):
//! DCMW_WAIT_ANY and DCMW_WAIT_ALL under the deterministic scheduler,
//! DosAdd/Delete/QueryMuxWaitSem, and their error codes.

mod common;

use common::DATA;
use common::threaded::Arg::{Imm, Mem};
use common::threaded::{Prog, dword_at as at};
use kernel_sim::Outcome;

fn run(bytes: Vec<u8>) -> (Outcome, Vec<u8>) {
    common::threaded::run_reading(bytes, 0x200)
}

const FOREVER: u32 = u32::MAX;
const CREATE_EVENT: u32 = 324;
const OPEN_EVENT: u32 = 325;
const CLOSE_EVENT: u32 = 326;
const POST_EVENT: u32 = 328;
const CREATE_MUTEX: u32 = 331;
const OPEN_MUTEX: u32 = 332;
const CLOSE_MUTEX: u32 = 333;
const RELEASE_MUTEX: u32 = 335;
const QUERY_MUTEX: u32 = 336;
const CREATE_MUX: u32 = 337;
const OPEN_MUX: u32 = 338;
const CLOSE_MUX: u32 = 339;
const WAIT_MUX: u32 = 340;
const ADD_MUX: u32 = 341;
const DELETE_MUX: u32 = 342;
const QUERY_MUX: u32 = 343;
const DCMW_WAIT_ANY: u32 = 2;
const DCMW_WAIT_ALL: u32 = 4;

const NAME: u32 = DATA + 0x100;
const H1: u32 = DATA + 0x30;
const H2: u32 = DATA + 0x34;
const H3: u32 = DATA + 0x38;
const MUX: u32 = DATA + 0x3C;
const USER: u32 = DATA + 0x40;
const RECS: u32 = DATA + 0x80;

#[test]
fn named_semaphores_open_by_name_and_by_handle() {
    let mut p = Prog::new();
    p.start_main();
    p.text(NAME, "\\sem32\\demo\\ready");
    p.api(CREATE_EVENT, &[Imm(NAME), Imm(H1), Imm(0), Imm(0)], 0, 1);
    // The same name again, even for a mutex.
    p.api(CREATE_MUTEX, &[Imm(NAME), Imm(H2), Imm(0), Imm(0)], 285, 2);
    // Open by name (any case) gives the same handle.
    p.text(NAME, "\\SEM32\\DEMO\\READY");
    p.api(OPEN_EVENT, &[Imm(NAME), Imm(H2)], 0, 3);
    // Not a mutex; no such name; not a semaphore name.
    p.api(OPEN_MUTEX, &[Imm(NAME), Imm(H3)], 6, 4);
    p.text(NAME, "\\SEM32\\NONE");
    p.api(OPEN_EVENT, &[Imm(NAME), Imm(H3)], 187, 5);
    p.text(NAME, "\\PIPE\\X");
    p.api(CREATE_EVENT, &[Imm(NAME), Imm(H3), Imm(0), Imm(0)], 123, 6);
    // Bad attribute flags.
    p.api(CREATE_EVENT, &[Imm(0), Imm(H3), Imm(2), Imm(0)], 87, 7);
    // Two opens: the first close keeps it, the second ends it.
    p.api(POST_EVENT, &[Mem(H2)], 0, 8);
    p.api(CLOSE_EVENT, &[Mem(H1)], 0, 9);
    p.api(POST_EVENT, &[Mem(H1)], 299, 10);
    p.api(CLOSE_EVENT, &[Mem(H1)], 0, 11);
    p.api(POST_EVENT, &[Mem(H1)], 6, 12);
    // A shared mutex opens by handle (name NULL); a private one does not.
    p.api(CREATE_MUTEX, &[Imm(0), Imm(H3), Imm(1), Imm(0)], 0, 13);
    p.c.load_eax(H3);
    p.c.c.extend([0xA3]);
    p.c.c.extend(H2.to_le_bytes());
    p.api(OPEN_MUTEX, &[Imm(0), Imm(H2)], 0, 14);
    p.api(CREATE_EVENT, &[Imm(0), Imm(H1), Imm(0), Imm(0)], 0, 15);
    p.api(OPEN_EVENT, &[Imm(0), Imm(H1)], 6, 16);
    p.api(CLOSE_MUTEX, &[Mem(H3)], 0, 17);
    p.api(
        QUERY_MUTEX,
        &[Mem(H3), Imm(RECS), Imm(RECS + 4), Imm(RECS + 8)],
        0,
        18,
    );
    let (o, mem) = run(p.finish());
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(at(&mem, H2), at(&mem, H3), "open by handle keeps it");
}

/// Stores SEMRECORDs (handle at `h`, user) at RECS: code that copies
/// each handle from memory.
fn records(p: &mut Prog, recs: &[(u32, u32)]) {
    for (i, &(h, user)) in recs.iter().enumerate() {
        p.c.load_eax(h);
        p.c.c.extend([0xA3]);
        p.c.c.extend((RECS + 8 * i as u32).to_le_bytes());
        p.c.store(RECS + 8 * i as u32 + 4, user);
    }
}

/// Two semaphores made with `create` (DosCreateEventSem or
/// DosCreateMutexSem) at H1 and H2, and a muxwait of `kind` at MUX on
/// both (`users` their user values), the calls tagged 1 to 3.
fn sems_and_mux(p: &mut Prog, create: u32, users: (u32, u32), kind: u32) {
    p.api(create, &[Imm(0), Imm(H1), Imm(0), Imm(0)], 0, 1);
    p.api(create, &[Imm(0), Imm(H2), Imm(0), Imm(0)], 0, 2);
    records(p, &[(H1, users.0), (H2, users.1)]);
    p.api(
        CREATE_MUX,
        &[Imm(0), Imm(MUX), Imm(2), Imm(RECS), Imm(kind)],
        0,
        3,
    );
}

#[test]
fn wait_any_returns_the_first_posted_and_wait_all_waits_for_every_one() {
    let mut p = Prog::new();
    // A thread that sleeps, posts the second event, sleeps, posts the
    // first.
    let poster = p.here();
    p.sleep(20);
    p.c.store(DATA + 0x48, 1);
    p.api(POST_EVENT, &[Mem(H2)], 0, 0x50);
    p.sleep(20);
    p.c.store(DATA + 0x48, 2);
    p.api(POST_EVENT, &[Mem(H1)], 0, 0x51);
    p.ret0();
    p.start_main();
    sems_and_mux(&mut p, CREATE_EVENT, (100, 200), DCMW_WAIT_ANY);
    // Nothing posted yet: a zero timeout times out.
    p.api(WAIT_MUX, &[Mem(MUX), Imm(0), Imm(USER)], 640, 4);
    p.thread(DATA + 0x20, poster);
    p.api(WAIT_MUX, &[Mem(MUX), Imm(FOREVER), Imm(USER)], 0, 5);
    p.c.load_eax(USER).expect(200, 6);
    p.c.load_eax(DATA + 0x48).expect(1, 7);
    // A WAIT_ALL muxwait on the same two: blocks until the first is
    // posted too.
    p.api(
        CREATE_MUX,
        &[
            Imm(0),
            Imm(DATA + 0x44),
            Imm(2),
            Imm(RECS),
            Imm(DCMW_WAIT_ALL),
        ],
        0,
        8,
    );
    p.api(WAIT_MUX, &[Mem(DATA + 0x44), Imm(FOREVER), Imm(USER)], 0, 9);
    p.c.load_eax(DATA + 0x48).expect(2, 10);
    p.c.load_eax(USER).expect(200, 11);
    // The events are part of a muxwait: their last close is refused.
    p.api(CLOSE_EVENT, &[Mem(H1)], 301, 12);
    p.api(CLOSE_MUX, &[Mem(DATA + 0x44)], 0, 13);
    p.api(CLOSE_MUX, &[Mem(MUX)], 0, 14);
    p.api(CLOSE_EVENT, &[Mem(H1)], 0, 15);
    let (o, _) = run(p.finish());
    assert_eq!(o, Outcome::Exited(0));
}

#[test]
fn wait_all_on_mutexes_takes_them_all_at_once() {
    let mut p = Prog::new();
    // A thread that owns the second mutex for a while.
    let holder = p.here();
    p.api(334, &[Mem(H2), Imm(FOREVER)], 0, 0x50);
    p.sleep(30);
    p.c.store(DATA + 0x48, 1);
    p.api(RELEASE_MUTEX, &[Mem(H2)], 0, 0x51);
    p.ret0();
    p.start_main();
    sems_and_mux(&mut p, CREATE_MUTEX, (7, 8), DCMW_WAIT_ALL);
    p.thread(DATA + 0x20, holder);
    p.sleep(1);
    p.api(WAIT_MUX, &[Mem(MUX), Imm(FOREVER), Imm(USER)], 0, 4);
    p.c.load_eax(DATA + 0x48).expect(1, 5);
    // Both are the caller's now.
    p.api(
        QUERY_MUTEX,
        &[
            Mem(H1),
            Imm(DATA + 0x60),
            Imm(DATA + 0x64),
            Imm(DATA + 0x68),
        ],
        0,
        6,
    );
    p.c.load_eax(DATA + 0x64).expect(1, 7);
    p.api(
        QUERY_MUTEX,
        &[
            Mem(H2),
            Imm(DATA + 0x60),
            Imm(DATA + 0x64),
            Imm(DATA + 0x68),
        ],
        0,
        8,
    );
    p.c.load_eax(DATA + 0x64).expect(1, 9);
    p.api(RELEASE_MUTEX, &[Mem(H1)], 0, 10);
    p.api(RELEASE_MUTEX, &[Mem(H2)], 0, 11);
    let (o, _) = run(p.finish());
    assert_eq!(o, Outcome::Exited(0));
}

#[test]
fn muxwait_lists_are_checked_and_queried() {
    let mut p = Prog::new();
    p.start_main();
    p.api(CREATE_EVENT, &[Imm(0), Imm(H1), Imm(0), Imm(0)], 0, 1);
    p.api(CREATE_MUTEX, &[Imm(0), Imm(H2), Imm(0), Imm(0)], 0, 2);
    p.api(CREATE_EVENT, &[Imm(0), Imm(H3), Imm(0), Imm(0)], 0, 3);
    // Mixed kinds; a duplicate; no wait flag; both wait flags; 65 records.
    records(&mut p, &[(H1, 1), (H2, 2)]);
    p.api(
        CREATE_MUX,
        &[Imm(0), Imm(MUX), Imm(2), Imm(RECS), Imm(DCMW_WAIT_ANY)],
        292,
        4,
    );
    records(&mut p, &[(H1, 1), (H1, 2)]);
    p.api(
        CREATE_MUX,
        &[Imm(0), Imm(MUX), Imm(2), Imm(RECS), Imm(DCMW_WAIT_ANY)],
        284,
        5,
    );
    p.api(
        CREATE_MUX,
        &[Imm(0), Imm(MUX), Imm(1), Imm(RECS), Imm(0)],
        87,
        6,
    );
    p.api(
        CREATE_MUX,
        &[Imm(0), Imm(MUX), Imm(1), Imm(RECS), Imm(6)],
        87,
        7,
    );
    p.api(
        CREATE_MUX,
        &[Imm(0), Imm(MUX), Imm(65), Imm(RECS), Imm(2)],
        100,
        8,
    );
    // A shared (named) muxwait cannot hold a private semaphore.
    p.text(NAME, "\\SEM32\\MUX");
    p.api(
        CREATE_MUX,
        &[Imm(NAME), Imm(MUX), Imm(1), Imm(RECS), Imm(2)],
        292,
        9,
    );
    // An empty one: waiting is ERROR_EMPTY_MUXWAIT; add two, delete one.
    p.api(
        CREATE_MUX,
        &[Imm(NAME), Imm(MUX), Imm(0), Imm(0), Imm(DCMW_WAIT_ALL)],
        0,
        10,
    );
    p.api(WAIT_MUX, &[Mem(MUX), Imm(0), Imm(USER)], 286, 11);
    p.api(ADD_MUX, &[Mem(MUX), Imm(RECS)], 292, 12);
    p.api(CREATE_EVENT, &[Imm(0), Imm(H1), Imm(1), Imm(0)], 0, 13);
    p.api(CREATE_EVENT, &[Imm(0), Imm(H3), Imm(1), Imm(1)], 0, 14);
    records(&mut p, &[(H1, 11), (H3, 33)]);
    p.api(ADD_MUX, &[Mem(MUX), Imm(RECS)], 0, 15);
    p.api(ADD_MUX, &[Mem(MUX), Imm(RECS + 8)], 0, 16);
    p.api(ADD_MUX, &[Mem(MUX), Imm(RECS + 8)], 284, 17);
    p.api(ADD_MUX, &[Mem(MUX), Imm(0x7000_0000)], 487, 18);
    // Query with room for one: ERROR_PARAM_TOO_SMALL and the count.
    p.c.store(DATA + 0x60, 1);
    p.api(
        QUERY_MUX,
        &[
            Mem(MUX),
            Imm(DATA + 0x60),
            Imm(DATA + 0x180),
            Imm(DATA + 0x64),
        ],
        289,
        19,
    );
    p.c.load_eax(DATA + 0x60).expect(2, 20);
    p.api(DELETE_MUX, &[Mem(MUX), Mem(H1)], 0, 21);
    p.api(DELETE_MUX, &[Mem(MUX), Mem(H1)], 6, 22);
    p.api(
        QUERY_MUX,
        &[
            Mem(MUX),
            Imm(DATA + 0x60),
            Imm(DATA + 0x180),
            Imm(DATA + 0x64),
        ],
        0,
        23,
    );
    // Open by name; wait (H3 was created posted); a bad pointer.
    p.api(OPEN_MUX, &[Imm(NAME), Imm(DATA + 0x68)], 0, 24);
    p.api(WAIT_MUX, &[Mem(DATA + 0x68), Imm(0), Imm(USER)], 0, 25);
    p.api(WAIT_MUX, &[Mem(DATA + 0x68), Imm(0), Imm(0)], 487, 26);
    p.api(WAIT_MUX, &[Mem(H1), Imm(0), Imm(USER)], 6, 27);
    let (o, mem) = run(p.finish());
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(at(&mem, DATA + 0x60), 1, "one record left");
    assert_eq!(at(&mem, DATA + 0x180), at(&mem, H3));
    assert_eq!(at(&mem, DATA + 0x184), 33);
    assert_eq!(at(&mem, DATA + 0x64), DCMW_WAIT_ALL | 1, "WAIT_ALL, shared");
    assert_eq!(at(&mem, USER), 33);
    assert_eq!(at(&mem, DATA + 0x68), at(&mem, MUX));
}
