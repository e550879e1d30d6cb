//! What a process holds is released when it ends (issue 12): its opens
//! of named and private event and mutex semaphores (a mutex it owned is
//! ERROR_SEM_OWNER_DIED for the next owner), its access to shared
//! memory, its files and pipe ends; with a killed child too.

mod common;

use common::DATA;
use common::threaded::{Arg, Prog};
use kernel_sim::{Outcome, Process, ProcessConfig};

const CREATE_EVENT: u32 = 324;
const OPEN_EVENT: u32 = 325;
const CREATE_MUTEX: u32 = 331;
const OPEN_MUTEX: u32 = 332;
const REQUEST_MUTEX: u32 = 334;
const ALLOC_SHARED: u32 = 300;
const GET_NAMED_SHARED: u32 = 301;
const FREE_MEM: u32 = 304;
const CREATE_PIPE: u32 = 239;
const CLOSE: u32 = 257;
const READ: u32 = 281;
const WRITE: u32 = 282;
const EXEC_PGM: u32 = 283;
const KILL_PROCESS: u32 = 235;
const WAIT_CHILD: u32 = 280;

const MUTEX: u32 = DATA + 0x100;
const EVENT: u32 = DATA + 0x140;
const SHM_P: u32 = DATA + 0x180;
const SHM_C: u32 = DATA + 0x1C0;
const NAME: u32 = DATA + 0x200;
const ARGS: u32 = DATA + 0x240;
const RES: u32 = DATA + 0x280;
const H: u32 = DATA + 0x2C0;
const BUF: u32 = DATA + 0x300;

use Arg::{Imm, Mem};

fn names(p: &mut Prog) {
    p.text(MUTEX, "\\SEM32\\M")
        .text(EVENT, "\\SEM32\\E")
        .text(SHM_P, "\\SHAREMEM\\P")
        .text(SHM_C, "\\SHAREMEM\\C")
        .text(NAME, "C.EXE")
        .bytes(ARGS, b"C.EXE\0\0");
}

/// The child: takes the parent's mutex, creates an event and a shared
/// object, gets the parent's shared object, writes "hi" to the pipe's
/// write handle (4, inherited), and ends holding all of it (or spins
/// until killed).
fn child(spin: bool) -> Vec<u8> {
    let mut p = Prog::new();
    p.start_main();
    names(&mut p);
    p.api(OPEN_MUTEX, &[Imm(MUTEX), Imm(H)], 0, 0xC1);
    p.api(REQUEST_MUTEX, &[Mem(H), Imm(u32::MAX)], 0, 0xC2);
    p.api(
        CREATE_EVENT,
        &[Imm(EVENT), Imm(H + 4), Imm(0), Imm(0)],
        0,
        0xC3,
    );
    // A private mutex it owns: nobody else can see it go, but it must
    // not keep anything alive.
    p.api(CREATE_MUTEX, &[Imm(0), Imm(H + 8), Imm(0), Imm(1)], 0, 0xC4);
    p.api(
        GET_NAMED_SHARED,
        &[Imm(H + 12), Imm(SHM_P), Imm(3)],
        0,
        0xC5,
    );
    let alloc = [Imm(H + 16), Imm(SHM_C), Imm(4096), Imm(0x13)];
    p.api(ALLOC_SHARED, &alloc, 0, 0xC6);
    p.text(BUF, "hi");
    p.api(WRITE, &[Imm(4), Imm(BUF), Imm(2), Imm(H + 20)], 0, 0xC7);
    if spin {
        p.raw(&[0xEB, 0xFE]);
    }
    p.finish()
}

/// The parent: creates the mutex, a shared object and a pipe, runs the
/// child (`exec_flag`; when it is asynchronous, kills it after a while),
/// then checks what is left.
fn parent(exec_flag: u32) -> Vec<u8> {
    let mut p = Prog::new();
    p.start_main();
    names(&mut p);
    p.api(CREATE_MUTEX, &[Imm(MUTEX), Imm(H), Imm(0), Imm(0)], 0, 0xE0);
    let alloc = [Imm(H + 4), Imm(SHM_P), Imm(4096), Imm(0x13)];
    p.api(ALLOC_SHARED, &alloc, 0, 0xE1);
    p.api(CREATE_PIPE, &[Imm(H + 8), Imm(H + 12), Imm(0)], 0, 0xE2);
    p.check(H + 12, 4, 0xE3);
    let exec = [0, 0, exec_flag, ARGS, 0, RES, NAME].map(Imm);
    p.api(EXEC_PGM, &exec, 0, 0xE4);
    if exec_flag != 0 {
        p.c.load_eax(RES);
        p.store_eax(H + 40);
        p.sleep(30);
        p.api(KILL_PROCESS, &[Imm(0), Mem(H + 40)], 0, 0xE5);
        let wait = [Imm(0), Imm(0), Imm(RES), Imm(H + 44), Mem(H + 40)];
        p.api(WAIT_CHILD, &wait, 0, 0xE6);
    }
    p.api(CLOSE, &[Mem(H + 12)], 0, 0xE7);
    // The mutex the child held: the owner died.
    p.api(REQUEST_MUTEX, &[Mem(H), Imm(0)], 105, 0xE8);
    // Its named event and shared object are gone.
    p.api(OPEN_EVENT, &[Imm(EVENT), Imm(H + 16)], 187, 0xE9);
    p.api(
        GET_NAMED_SHARED,
        &[Imm(H + 16), Imm(SHM_C), Imm(3)],
        2,
        0xEA,
    );
    // Its access to the parent's object went: one free ends it.
    p.api(FREE_MEM, &[Mem(H + 4)], 0, 0xEB);
    p.api(
        GET_NAMED_SHARED,
        &[Imm(H + 16), Imm(SHM_P), Imm(3)],
        2,
        0xEC,
    );
    // What it wrote to the pipe, then end of file (its write end closed).
    p.api(READ, &[Mem(H + 8), Imm(BUF), Imm(16), Imm(H + 20)], 0, 0xED);
    p.check(H + 20, 2, 0xEE)
        .check(BUF, u32::from(u16::from_le_bytes(*b"hi")), 0xEF);
    p.api(READ, &[Mem(H + 8), Imm(BUF), Imm(16), Imm(H + 20)], 0, 0xF0);
    p.check(H + 20, 0, 0xF1);
    // Its open of the mutex went too: the parent's close is the last.
    p.api(RELEASE_MUTEX, &[Mem(H)], 0, 0xF2);
    p.api(CLOSE_MUTEX, &[Mem(H)], 0, 0xF3);
    p.api(OPEN_MUTEX, &[Imm(MUTEX), Imm(H + 16)], 187, 0xF4);
    p.finish()
}

const CLOSE_MUTEX: u32 = 333;
const RELEASE_MUTEX: u32 = 335;

fn run(parent: Vec<u8>, child: Vec<u8>) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), parent).unwrap();
    std::fs::write(dir.path().join("C.EXE"), child).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(20_000_000);
    let mut p = Process::new(cfg).unwrap();
    common::capture_console(&mut p);
    p.run()
}

#[test]
fn a_child_that_exits_releases_its_semaphores_shared_memory_and_pipe_ends() {
    assert_eq!(run(parent(0), child(false)), Outcome::Exited(0));
}

#[test]
fn a_killed_child_releases_them_too() {
    assert_eq!(run(parent(2), child(true)), Outcome::Exited(0));
}
