//! Shared memory (issue 12): DosAllocSharedMem with and without a
//! `\SHAREMEM\` name, DosGetNamedSharedMem, DosGetSharedMem,
//! DosGiveSharedMem, DosFreeMem counting each access, and their error
//! codes.

mod common;

use common::threaded::Arg::{self, Imm, Mem};
use common::threaded::dword_at as at;
use common::{Code, DATA};
use kernel_sim::{Outcome, Process, ProcessConfig};

const ALLOC_SHARED: u32 = 300;
const GET_NAMED: u32 = 301;
const GET: u32 = 302;
const GIVE: u32 = 303;
const FREE: u32 = 304;
const RW: u32 = 0x3;
const COMMIT: u32 = 0x10;
const GETTABLE: u32 = 0x100;
const GIVEABLE: u32 = 0x200;

/// DOSCALLS.`ordinal` with dword arguments (C order), expecting `rc`
/// (else exit `tag`).
fn api(c: &mut Code, ordinal: u32, args: &[Arg], rc: u32, tag: u32) {
    for a in args.iter().rev() {
        match *a {
            Imm(v) => c.push(v),
            Mem(at) => c.push_mem(at),
        };
    }
    c.call("DOSCALLS", ordinal, 4 * args.len() as u8)
        .expect(rc, tag);
}

/// Store a NUL-terminated string at `at`.
fn text(c: &mut Code, at: u32, s: &str) {
    let mut b = s.as_bytes().to_vec();
    b.push(0);
    for (i, ch) in b.chunks(4).enumerate() {
        let mut w = [0u8; 4];
        w[..ch.len()].copy_from_slice(ch);
        c.store(at + 4 * i as u32, u32::from_le_bytes(w));
    }
}

fn run(mut c: Code) -> (Outcome, Vec<u8>) {
    c.push(0);
    c.c.push(0x58);
    common::threaded::run_reading(c.exit_eax(), 0x200)
}

const NAME: u32 = DATA + 0x100;
const B1: u32 = DATA + 0x30;
const B2: u32 = DATA + 0x34;
const B3: u32 = DATA + 0x38;
const V: u32 = DATA + 0x3C;

/// `mov eax, [ptr_at]; mov dword [eax], v`.
fn store_through(c: &mut Code, ptr_at: u32, v: u32) {
    c.load_eax(ptr_at);
    c.c.extend([0xC7, 0x00]);
    c.c.extend(v.to_le_bytes());
}

/// `mov eax, [ptr_at]; mov eax, [eax]; mov [to], eax`.
fn load_through(c: &mut Code, ptr_at: u32, to: u32) {
    c.load_eax(ptr_at);
    c.c.extend([0x8B, 0x00, 0xA3]);
    c.c.extend(to.to_le_bytes());
}

#[test]
fn a_named_object_is_found_by_name_and_freed_by_its_last_user() {
    let mut c = Code::new();
    text(&mut c, NAME, "\\sharemem\\demo");
    api(
        &mut c,
        ALLOC_SHARED,
        &[Imm(B1), Imm(NAME), Imm(0x2345), Imm(RW | COMMIT)],
        0,
        1,
    );
    store_through(&mut c, B1, 0xC0FF_EE00);
    // The name again, in any case: ERROR_ALREADY_EXISTS.
    text(&mut c, NAME, "\\SHAREMEM\\DEMO");
    api(
        &mut c,
        ALLOC_SHARED,
        &[Imm(B2), Imm(NAME), Imm(16), Imm(RW)],
        183,
        2,
    );
    api(&mut c, GET_NAMED, &[Imm(B2), Imm(NAME), Imm(RW)], 0, 3);
    load_through(&mut c, B2, V);
    // Bad names, flags and sizes.
    text(&mut c, NAME, "\\SHAREMEM\\NONE");
    api(&mut c, GET_NAMED, &[Imm(B3), Imm(NAME), Imm(RW)], 2, 4);
    api(&mut c, GET_NAMED, &[Imm(B3), Imm(NAME), Imm(0)], 87, 5);
    text(&mut c, NAME, "\\SEM32\\X");
    api(
        &mut c,
        ALLOC_SHARED,
        &[Imm(B3), Imm(NAME), Imm(16), Imm(RW)],
        123,
        6,
    );
    api(&mut c, GET_NAMED, &[Imm(B3), Imm(NAME), Imm(RW)], 123, 7);
    text(&mut c, NAME, "\\SHAREMEM\\G");
    api(
        &mut c,
        ALLOC_SHARED,
        &[Imm(B3), Imm(NAME), Imm(16), Imm(RW | GETTABLE)],
        87,
        8,
    );
    api(
        &mut c,
        ALLOC_SHARED,
        &[Imm(B3), Imm(NAME), Imm(0), Imm(RW)],
        87,
        9,
    );
    api(
        &mut c,
        ALLOC_SHARED,
        &[Imm(B3), Imm(NAME), Imm(16), Imm(COMMIT)],
        87,
        10,
    );
    api(
        &mut c,
        ALLOC_SHARED,
        &[Imm(B3), Imm(NAME), Imm(0xFFFF_FFFF), Imm(RW)],
        8,
        11,
    );
    api(
        &mut c,
        ALLOC_SHARED,
        &[Imm(0), Imm(NAME), Imm(16), Imm(RW)],
        487,
        12,
    );
    // Two accesses: two frees; then the name is gone.
    api(&mut c, FREE, &[Mem(B1)], 0, 13);
    text(&mut c, NAME, "\\SHAREMEM\\DEMO");
    api(&mut c, GET_NAMED, &[Imm(B3), Imm(NAME), Imm(RW)], 0, 14);
    api(&mut c, FREE, &[Mem(B1)], 0, 15);
    api(&mut c, FREE, &[Mem(B1)], 0, 16);
    api(&mut c, FREE, &[Mem(B1)], 487, 17);
    api(&mut c, GET_NAMED, &[Imm(B3), Imm(NAME), Imm(RW)], 2, 18);
    let (o, mem) = run(c);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(at(&mem, B1), at(&mem, B2), "the same address");
    assert_eq!(at(&mem, B1), at(&mem, B3));
    assert_eq!(at(&mem, V), 0xC0FF_EE00);
}

#[test]
fn gettable_and_giveable_objects_check_what_they_are() {
    let mut c = Code::new();
    api(
        &mut c,
        ALLOC_SHARED,
        &[Imm(B1), Imm(0), Imm(100), Imm(RW | COMMIT | GETTABLE)],
        0,
        1,
    );
    api(
        &mut c,
        ALLOC_SHARED,
        &[Imm(B2), Imm(0), Imm(100), Imm(RW | COMMIT | GIVEABLE)],
        0,
        2,
    );
    api(&mut c, GET, &[Mem(B1), Imm(RW)], 0, 3);
    api(&mut c, GET, &[Mem(B2), Imm(RW)], 487, 4);
    api(&mut c, GET, &[Imm(0x1234_0000), Imm(RW)], 487, 5);
    api(&mut c, GET, &[Mem(B1), Imm(0x8000)], 87, 6);
    api(&mut c, GIVE, &[Mem(B1), Imm(999), Imm(RW)], 487, 7);
    api(&mut c, GIVE, &[Mem(B2), Imm(999), Imm(RW)], 303, 8);
    api(&mut c, GIVE, &[Mem(B2), Imm(0x1_0000), Imm(RW)], 303, 9);
    // Gotten once more: two frees.
    api(&mut c, FREE, &[Mem(B1)], 0, 10);
    api(&mut c, FREE, &[Mem(B1)], 0, 11);
    api(&mut c, GET, &[Mem(B1), Imm(RW)], 487, 12);
    api(&mut c, FREE, &[Mem(B2)], 0, 13);
    let (o, mem) = run(c);
    assert_eq!(o, Outcome::Exited(0));
    assert_ne!(at(&mem, B1), at(&mem, B2));
    assert!(at(&mem, B1) >= 0x1000_0000, "in the high arena");
}

/// A child that gets `\SHAREMEM\DEMO`, adds 1 to its first dword, and
/// exits with what it read.
fn shared_child() -> Vec<u8> {
    let mut c = Code::new();
    text(&mut c, NAME, "\\SHAREMEM\\DEMO");
    api(&mut c, GET_NAMED, &[Imm(B1), Imm(NAME), Imm(RW)], 0, 0x51);
    load_through(&mut c, B1, V);
    // mov eax, [B1]; inc dword [eax]
    c.load_eax(B1);
    c.c.extend([0xFF, 0x00]);
    api(&mut c, FREE, &[Mem(B1)], 0, 0x52);
    c.load_eax(V);
    c.exit_eax()
}

#[test]
fn a_child_process_sees_the_same_named_object() {
    let args = DATA + 0x180;
    let res = DATA + 0x1A0;
    let mut c = Code::new();
    text(&mut c, args, "C.EXE");
    text(&mut c, NAME, "\\SHAREMEM\\DEMO");
    api(
        &mut c,
        ALLOC_SHARED,
        &[Imm(B1), Imm(NAME), Imm(64), Imm(RW | COMMIT)],
        0,
        1,
    );
    store_through(&mut c, B1, 0x41);
    // DosExecPgm(buf, 32, EXEC_SYNC, args, NULL, &res, name)
    api(
        &mut c,
        283,
        &[
            Imm(DATA + 0x1C0),
            Imm(32),
            Imm(0),
            Imm(args),
            Imm(0),
            Imm(res),
            Imm(args),
        ],
        0,
        2,
    );
    load_through(&mut c, B1, V);
    api(&mut c, FREE, &[Mem(B1)], 0, 3);
    // Both accesses are gone: so is the name.
    api(&mut c, GET_NAMED, &[Imm(B2), Imm(NAME), Imm(RW)], 2, 4);
    c.push(0);
    c.c.push(0x58);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), c.exit_eax()).unwrap();
    std::fs::write(dir.path().join("C.EXE"), shared_child()).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(5_000_000);
    let mut p = Process::new(cfg).unwrap();
    common::capture_console(&mut p);
    let o = p.run();
    let mut mem = vec![0u8; 0x200];
    p.read_guest(DATA, &mut mem).unwrap();
    assert_eq!(o, Outcome::Exited(0));
    // The child read the parent's 0x41 (its exit code), the parent its 0x42.
    assert_eq!(at(&mem, DATA + 0x1A4), 0x41, "the child's result code");
    assert_eq!(at(&mem, V), 0x42);
}
