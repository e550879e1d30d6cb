//! 16-bit system semaphores (issue 12): DosCreateSem, DosOpenSem,
//! DosCloseSem, and DosSemSet / DosSemClear / DosSemWait / DosSemRequest
//! on their handles (exclusive ownership, counted requests, a timed wait
//! that blocks until its deadline), next to RAM semaphores; the 16-bit
//! DosExitList; the 16-bit shared segments (DosAllocShrSeg,
//! DosGetShrSeg, DosFreeSeg); and DosGetPrty / DosSetPrty.

mod common;

use common::{ne_program, push};
use kernel_sim::{Outcome, Process, ProcessConfig};

/// A 16-bit program being written: each call is checked.
struct P16 {
    c: Vec<u8>,
    calls: Vec<(u32, &'static str, u32)>,
}

/// A far-call argument.
#[derive(Clone, Copy)]
enum A {
    /// A word.
    W(u16),
    /// A dword.
    L(u32),
    /// DS:offset.
    Ptr(u16),
    /// The dword at DS:offset.
    Dw(u16),
}

impl P16 {
    fn new() -> P16 {
        P16 {
            c: Vec::new(),
            calls: Vec::new(),
        }
    }
    fn far_call(&mut self, ordinal: u32) {
        self.calls.push((self.c.len() as u32, "DOSCALLS", ordinal));
        self.c.extend([0x9A, 0, 0, 0, 0]);
    }
    /// DOSCALLS.`ordinal`(args, pascal order); unless AX is `rc`, exit
    /// with `tag`.
    fn api(&mut self, ordinal: u32, args: &[A], rc: u16, tag: u16) -> &mut P16 {
        for a in args {
            match *a {
                A::W(v) => self.c.extend(push(v)),
                A::L(v) => {
                    self.c.extend(push((v >> 16) as u16));
                    self.c.extend(push(v as u16));
                }
                A::Ptr(off) => {
                    self.c.push(0x1E);
                    self.c.extend(push(off));
                }
                A::Dw(off) => {
                    let [lo, hi] = (off + 2).to_le_bytes();
                    self.c.extend([0xFF, 0x36, lo, hi]);
                    let [lo, hi] = off.to_le_bytes();
                    self.c.extend([0xFF, 0x36, lo, hi]);
                }
            }
        }
        self.far_call(ordinal);
        // cmp ax, rc; jz over; DosExit(1, tag)
        self.c.push(0x3D);
        self.c.extend(rc.to_le_bytes());
        self.c.extend([0x74, 11]);
        self.c.extend(push(1));
        self.c.extend(push(tag));
        self.far_call(5);
        self
    }
    fn finish(mut self, data: &[u8]) -> Vec<u8> {
        self.c.extend(push(1));
        self.c.extend(push(0));
        self.far_call(5);
        ne_program(&self.c, data, &self.calls)
    }
}

fn data_with(names: &[(usize, &str)]) -> Vec<u8> {
    let mut d = vec![0u8; 0x200];
    for &(at, s) in names {
        d[at..at + s.len()].copy_from_slice(s.as_bytes());
    }
    d
}

fn run(bytes: Vec<u8>) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    common::capture_console(&mut p);
    p.run()
}

const CLOSE: u32 = 23;
const CREATE: u32 = 24;
const OPEN: u32 = 25;
const REQUEST: u32 = 140;
const CLEAR: u32 = 141;
const WAIT: u32 = 142;
const SET: u32 = 143;
const H: u16 = 0x10;
const H2: u16 = 0x14;
const H3: u16 = 0x18;
const RAM: u16 = 0x1C;
const NAME: u16 = 0x40;
const NAME_LOWER: u16 = 0x60;
const BAD: u16 = 0x80;
const NONE: u16 = 0xA0;

fn names() -> Vec<u8> {
    data_with(&[
        (0x40, "\\SEM\\DEMO"),
        (0x60, "\\sem\\demo"),
        (0x80, "\\SEM32\\X"),
        (0xA0, "\\SEM\\NONE"),
    ])
}

#[test]
fn an_exclusive_semaphore_is_owned_requested_cleared_and_closed() {
    let mut p = P16::new();
    p.api(CREATE, &[A::W(0), A::Ptr(H), A::Ptr(NAME)], 0, 1);
    p.api(CREATE, &[A::W(1), A::Ptr(H2), A::Ptr(NAME_LOWER)], 183, 2);
    p.api(CREATE, &[A::W(2), A::Ptr(H2), A::Ptr(NONE)], 87, 3);
    p.api(CREATE, &[A::W(1), A::Ptr(H2), A::Ptr(BAD)], 123, 4);
    p.api(OPEN, &[A::Ptr(H2), A::Ptr(NAME_LOWER)], 0, 5);
    p.api(OPEN, &[A::Ptr(H3), A::Ptr(NONE)], 187, 6);
    // Clear: a wait returns at once.
    p.api(WAIT, &[A::Dw(H), A::L(0)], 0, 7);
    // Requested twice by its owner: two clears to clear it.
    p.api(REQUEST, &[A::Dw(H), A::L(u32::MAX)], 0, 8);
    p.api(REQUEST, &[A::Dw(H2), A::L(0)], 0, 9);
    p.api(WAIT, &[A::Dw(H), A::L(0)], 121, 10);
    p.api(CLOSE, &[A::Dw(H)], 102, 11);
    p.api(CLEAR, &[A::Dw(H)], 0, 12);
    p.api(WAIT, &[A::Dw(H), A::L(0)], 121, 13);
    p.api(CLEAR, &[A::Dw(H)], 0, 14);
    p.api(WAIT, &[A::Dw(H), A::L(0)], 0, 15);
    // Set: a timed wait blocks until its deadline.
    p.api(SET, &[A::Dw(H)], 0, 16);
    p.api(WAIT, &[A::Dw(H), A::L(30)], 121, 17);
    p.api(REQUEST, &[A::Dw(H), A::L(30)], 121, 18);
    p.api(CLEAR, &[A::Dw(H)], 0, 19);
    // Two opens, two closes; then it is gone.
    p.api(CLOSE, &[A::Dw(H)], 0, 20);
    p.api(OPEN, &[A::Ptr(H3), A::Ptr(NAME)], 0, 21);
    p.api(CLOSE, &[A::Dw(H2)], 0, 22);
    p.api(CLOSE, &[A::Dw(H3)], 0, 23);
    p.api(CLOSE, &[A::Dw(H)], 6, 24);
    p.api(OPEN, &[A::Ptr(H3), A::Ptr(NAME)], 187, 25);
    p.api(SET, &[A::Dw(H)], 6, 26);
    // A RAM semaphore is still the dword at the pointer.
    p.api(SET, &[A::Ptr(RAM)], 0, 27);
    p.api(WAIT, &[A::Ptr(RAM), A::L(0)], 121, 28);
    p.api(CLEAR, &[A::Ptr(RAM)], 0, 29);
    p.api(REQUEST, &[A::Ptr(RAM), A::L(0)], 0, 30);
    assert_eq!(run(p.finish(&names())), Outcome::Exited(0));
}

#[test]
fn a_bad_name_pointer_or_handle_place_is_refused() {
    let mut p = P16::new();
    p.api(CREATE, &[A::W(1), A::L(0x0001_0000), A::Ptr(NAME)], 487, 1);
    p.api(CREATE, &[A::W(1), A::Ptr(H), A::L(0)], 487, 2);
    p.api(CREATE, &[A::W(1), A::Ptr(H), A::Ptr(NAME)], 0, 3);
    p.api(OPEN, &[A::L(0), A::Ptr(NAME)], 487, 4);
    // A nonexclusive one: anyone sets and clears it.
    p.api(SET, &[A::Dw(H)], 0, 5);
    p.api(CLOSE, &[A::Dw(H)], 0, 6);
    assert_eq!(run(p.finish(&names())), Outcome::Exited(0));
}

#[test]
fn the_16_bit_exit_list_takes_add_remove_and_exit_and_refuses_other_codes() {
    const EXIT_LIST: u32 = 7;
    let mut p = P16::new();
    // The high byte is the invocation order (ADD only); EXLST_EXIT
    // outside exit-list processing is refused (`tests/exitlist.rs`
    // runs the routines).
    p.api(EXIT_LIST, &[A::W(0x0101), A::L(0x0007_0010)], 0, 1);
    p.api(EXIT_LIST, &[A::W(0x0102), A::L(0x0007_0010)], 13, 6);
    p.api(EXIT_LIST, &[A::W(2), A::L(0x0007_0010)], 0, 2);
    p.api(EXIT_LIST, &[A::W(3), A::L(0)], 1, 3);
    p.api(EXIT_LIST, &[A::W(0), A::L(0)], 1, 4);
    p.api(EXIT_LIST, &[A::W(4), A::L(0)], 1, 5);
    assert_eq!(run(p.finish(&names())), Outcome::Exited(0));
}

/// DosWrite(1, DS:off, 1, DS:0x24), checked.
fn write_byte(p: &mut P16, off: u16, tag: u16) {
    p.api(138, &[A::W(1), A::Ptr(off), A::W(1), A::Ptr(0x24)], 0, tag);
}

#[test]
fn a_request_waits_for_the_owner_to_clear_and_a_wait_for_the_new_owners_clear() {
    let mut p = P16::new();
    // jmp main (patched below)
    p.c.extend([0xE9, 0, 0]);
    // The thread: the main thread owns the semaphore, so its set fails
    // and its request waits; then it sleeps, writes B and clears it.
    let thread = p.c.len() as u16;
    p.api(SET, &[A::Dw(H)], 101, 0x61);
    p.api(CLEAR, &[A::Dw(H)], 101, 0x62);
    p.api(REQUEST, &[A::Dw(H), A::L(u32::MAX)], 0, 0x63);
    p.api(32, &[A::L(10)], 0, 0x65);
    write_byte(&mut p, 0xB1, 0x64);
    p.api(CLEAR, &[A::Dw(H)], 0, 0x66);
    p.c.extend(push(0));
    p.c.extend(push(0));
    p.far_call(5);
    let main = p.c.len() as u16;
    p.c[1..3].copy_from_slice(&(main - 3).to_le_bytes());
    p.api(CREATE, &[A::W(0), A::Ptr(H), A::Ptr(NAME)], 0, 1);
    p.api(REQUEST, &[A::Dw(H), A::L(0)], 0, 2);
    // DosCreateThread(CS:thread, DS:0x30, DS:0x2F0)
    p.c.push(0x0E);
    p.c.extend(push(thread));
    p.api(145, &[A::Ptr(0x30), A::Ptr(0x2F0)], 0, 3);
    p.api(32, &[A::L(10)], 0, 4);
    write_byte(&mut p, 0xB0, 5);
    // The clear lets the thread's request through once it runs (the
    // sleep); the thread owns it through its own sleep, so the wait
    // waits for the thread's clear.
    p.api(CLEAR, &[A::Dw(H)], 0, 6);
    p.api(32, &[A::L(1)], 0, 9);
    p.api(WAIT, &[A::Dw(H), A::L(u32::MAX)], 0, 7);
    write_byte(&mut p, 0xB2, 8);
    let mut data = names();
    data.resize(0x300, 0);
    data[0xB0..0xB3].copy_from_slice(b"ABC");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), p.finish(&data)).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut proc = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut proc);
    assert_eq!(proc.run(), Outcome::Exited(0));
    assert_eq!(out.text(), "ABC");
}

#[test]
fn a_shared_segment_is_found_by_name_and_freed_by_its_last_user() {
    const ALLOC_SHR_SEG: u32 = 35;
    const GET_SHR_SEG: u32 = 36;
    const FREE_SEG: u32 = 39;
    let mut data = vec![0u8; 0x200];
    for (at, s) in [
        (0x40, "\\SHAREMEM\\SEG"),
        (0x60, "\\sharemem\\seg"),
        (0x80, "\\SEM\\SEG"),
        (0xA0, "\\SHAREMEM\\NO"),
    ] {
        data[at..at + s.len()].copy_from_slice(s.as_bytes());
    }
    let mut p = P16::new();
    p.api(
        ALLOC_SHR_SEG,
        &[A::W(0x100), A::Ptr(0x40), A::Ptr(0x10)],
        0,
        1,
    );
    p.api(
        ALLOC_SHR_SEG,
        &[A::W(0x100), A::Ptr(0x60), A::Ptr(0x14)],
        183,
        2,
    );
    p.api(
        ALLOC_SHR_SEG,
        &[A::W(0x100), A::Ptr(0x80), A::Ptr(0x14)],
        123,
        3,
    );
    p.api(GET_SHR_SEG, &[A::Ptr(0xA0), A::Ptr(0x14)], 2, 4);
    p.api(GET_SHR_SEG, &[A::Ptr(0x60), A::Ptr(0x14)], 0, 5);
    // mov es, [0x10]; mov word es:[0xFE], 0x1234; mov es, [0x14];
    // mov ax, es:[0xFE]; mov [0x20], ax
    p.c.extend([0x8E, 0x06, 0x10, 0x00]);
    p.c.extend([0x26, 0xC7, 0x06, 0xFE, 0x00, 0x34, 0x12]);
    p.c.extend([0x8E, 0x06, 0x14, 0x00]);
    p.c.extend([0x26, 0xA1, 0xFE, 0x00, 0xA3, 0x20, 0x00]);
    // The two selectors are one, and the word went through.
    p.c.extend([0xA1, 0x10, 0x00, 0x3B, 0x06, 0x14, 0x00, 0x74, 11]);
    p.c.extend(push(1));
    p.c.extend(push(6));
    p.far_call(5);
    p.c.extend([0x81, 0x3E, 0x20, 0x00, 0x34, 0x12, 0x74, 11]);
    p.c.extend(push(1));
    p.c.extend(push(7));
    p.far_call(5);
    // Two accesses, two frees; then the name is gone.
    p.c.extend([0xFF, 0x36, 0x10, 0x00]);
    p.far_call(FREE_SEG);
    p.c.extend([0x3D, 0, 0, 0x74, 11]);
    p.c.extend(push(1));
    p.c.extend(push(8));
    p.far_call(5);
    p.c.extend([0xFF, 0x36, 0x14, 0x00]);
    p.far_call(FREE_SEG);
    p.c.extend([0x3D, 0, 0, 0x74, 11]);
    p.c.extend(push(1));
    p.c.extend(push(9));
    p.far_call(5);
    p.api(GET_SHR_SEG, &[A::Ptr(0x40), A::Ptr(0x14)], 2, 10);
    assert_eq!(run(p.finish(&data)), Outcome::Exited(0));
}

#[test]
fn dos_set_prty_and_dos_get_prty_change_and_give_a_threads_class_and_level() {
    const GET_PRTY: u32 = 9;
    const SET_PRTY: u32 = 11;
    let mut p = P16::new();
    // Unless the word at DS:0x20 is `v`: DosExit(1, tag).
    let check = |p: &mut P16, v: u16, tag: u16| {
        p.c.extend([0x81, 0x3E, 0x20, 0x00]);
        p.c.extend(v.to_le_bytes());
        p.c.extend([0x74, 11]);
        p.c.extend(push(1));
        p.c.extend(push(tag));
        p.far_call(5);
    };
    p.api(GET_PRTY, &[A::W(2), A::Ptr(0x20), A::W(0)], 0, 1);
    check(&mut p, 0x0200, 2);
    p.api(SET_PRTY, &[A::W(2), A::W(3), A::W(5), A::W(0)], 0, 3);
    p.api(GET_PRTY, &[A::W(2), A::Ptr(0x20), A::W(1)], 0, 4);
    check(&mut p, 0x0305, 5);
    // A negative SHORT delta, class unchanged (0).
    p.api(
        SET_PRTY,
        &[A::W(2), A::W(0), A::W(-2i16 as u16), A::W(0)],
        0,
        6,
    );
    p.api(GET_PRTY, &[A::W(0), A::Ptr(0x20), A::W(0)], 0, 7);
    check(&mut p, 0x0303, 8);
    p.api(GET_PRTY, &[A::W(1), A::Ptr(0x20), A::W(0)], 308, 9);
    p.api(GET_PRTY, &[A::W(2), A::Ptr(0x20), A::W(99)], 309, 10);
    p.api(GET_PRTY, &[A::W(0), A::Ptr(0x20), A::W(999)], 303, 11);
    p.api(SET_PRTY, &[A::W(2), A::W(5), A::W(0), A::W(0)], 307, 12);
    p.api(SET_PRTY, &[A::W(2), A::W(0), A::W(40), A::W(0)], 304, 13);
    p.api(GET_PRTY, &[A::W(2), A::L(0), A::W(0)], 487, 14);
    assert_eq!(run(p.finish(&names())), Outcome::Exited(0));
}

#[test]
fn a_child_that_ends_owning_a_semaphore_leaves_it_clear_with_owner_died_and_its_own_gone() {
    // The child opens the parent's \SEM\DEMO, requests it, creates
    // \SEM\NONE, and ends without clearing or closing either.
    let mut c = P16::new();
    c.api(OPEN, &[A::Ptr(H), A::Ptr(NAME)], 0, 1);
    c.api(REQUEST, &[A::Dw(H), A::L(0)], 0, 2);
    c.api(CREATE, &[A::W(1), A::Ptr(H2), A::Ptr(NONE)], 0, 3);
    let child = c.finish(&names());
    // The parent runs it (EXEC_SYNC) and looks.
    const EXEC_PGM: u32 = 144;
    const CHILD: u16 = 0xC0;
    const RES: u16 = 0xD0;
    const OBJ: u16 = 0xE0;
    let mut p = P16::new();
    p.api(CREATE, &[A::W(0), A::Ptr(H), A::Ptr(NAME)], 0, 1);
    p.api(
        EXEC_PGM,
        &[
            A::Ptr(OBJ),
            A::W(16),
            A::W(0),
            A::L(0),
            A::L(0),
            A::Ptr(RES),
            A::Ptr(CHILD),
        ],
        0,
        2,
    );
    // The child's DosExit(0) code, TC_EXIT.
    p.api(REQUEST, &[A::Dw(H), A::L(0)], 105, 3);
    // Now the parent's: a second request is counted, two clears.
    p.api(REQUEST, &[A::Dw(H), A::L(0)], 0, 4);
    p.api(CLEAR, &[A::Dw(H)], 0, 5);
    p.api(CLEAR, &[A::Dw(H)], 0, 6);
    // The child's own semaphore went with it.
    p.api(OPEN, &[A::Ptr(H3), A::Ptr(NONE)], 187, 7);
    // The child's open of \SEM\DEMO went too: one close ends it.
    p.api(CLOSE, &[A::Dw(H)], 0, 8);
    p.api(OPEN, &[A::Ptr(H3), A::Ptr(NAME)], 187, 9);
    let mut data = names();
    data[0xC0..0xC6].copy_from_slice(b"C.EXE\0");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), p.finish(&data)).unwrap();
    std::fs::write(dir.path().join("C.EXE"), child).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    common::capture_console(&mut p);
    assert_eq!(p.run(), Outcome::Exited(0));
}
