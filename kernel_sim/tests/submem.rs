//! Memory suballocation (DosSubSetMem, DosSubAllocMem, DosSubFreeMem,
//! DosSubUnsetMem), as EMX's start-up uses it for its heap.

mod common;

use common::{Code, DATA};
use kernel_sim::{Outcome, Process, ProcessConfig};

const SET: u32 = 344;
const ALLOC: u32 = 345;
const FREE: u32 = 346;
const UNSET: u32 = 347;

fn run(bytes: Vec<u8>) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    Process::new(cfg).unwrap().run()
}

/// DosAllocMem(&[DATA], 64 KB, flags): the pool's memory object.
fn alloc_object(c: &mut Code, flags: u32) {
    c.push(flags)
        .push(0x10000)
        .push(DATA)
        .call("DOSCALLS", 299, 12)
        .expect(0, 1);
}

/// DosSubSetMem([DATA], flags, size).
fn set(c: &mut Code, flags: u32, size: u32) -> &mut Code {
    c.push(size)
        .push(flags)
        .push_mem(DATA)
        .call("DOSCALLS", SET, 12)
}

/// DosSubAllocMem([DATA], &out, size).
fn sub_alloc(c: &mut Code, out: u32, size: u32) -> &mut Code {
    c.push(size)
        .push(out)
        .push_mem(DATA)
        .call("DOSCALLS", ALLOC, 12)
}

/// DosSubFreeMem([DATA], [block], size).
fn sub_free(c: &mut Code, block: u32, size: u32) -> &mut Code {
    c.push(size)
        .push_mem(block)
        .push_mem(DATA)
        .call("DOSCALLS", FREE, 12)
}

#[test]
fn blocks_come_from_the_pool_after_its_header_and_go_back_merged() {
    let mut c = Code::new();
    alloc_object(&mut c, 0x13);
    set(&mut c, 1, 0x8000).expect(0, 2);
    // 100 bytes round up to 104: the first block is just after the header,
    // the second right after it.
    sub_alloc(&mut c, DATA + 4, 100).expect(0, 3);
    sub_alloc(&mut c, DATA + 8, 8).expect(0, 4);
    c.load_eax(DATA + 8).sub_eax(DATA + 4).expect(104, 5);
    // Nothing is left for the rest of the pool in one piece.
    sub_alloc(&mut c, DATA + 12, 0x8000 - 64 - 104).expect(311, 6);
    sub_free(&mut c, DATA + 4, 100).expect(0, 7);
    sub_free(&mut c, DATA + 4, 100).expect(312, 8);
    sub_free(&mut c, DATA + 8, 8).expect(0, 9);
    // Freed blocks merged: the whole pool is one block again.
    sub_alloc(&mut c, DATA + 12, 0x8000 - 64).expect(0, 10);
    c.load_eax(DATA + 12).sub_eax(DATA).expect(64, 11);
    c.push(0);
    c.c.push(0x58);
    assert_eq!(run(c.exit_eax()), Outcome::Exited(0));
}

#[test]
fn pool_errors_have_their_documented_codes() {
    let mut c = Code::new();
    alloc_object(&mut c, 0x13);
    set(&mut c, 0x10, 0x8000).expect(314, 1); // unknown flag
    set(&mut c, 3, 0x8000).expect(314, 2); // INIT with GROW
    set(&mut c, 1, 64).expect(313, 3); // no room past the header
    set(&mut c, 1, 0x20000).expect(487, 4); // beyond the object
    set(&mut c, 0, 0x8000).expect(87, 5); // attach to no pool
    sub_alloc(&mut c, DATA + 4, 8).expect(87, 6); // not a pool
    set(&mut c, 1, 0x8000).expect(0, 7);
    set(&mut c, 1, 0x8000).expect(312, 8); // a second pool over it
    set(&mut c, 2, 0x4000).expect(310, 9); // shrink
    sub_alloc(&mut c, DATA + 4, 0).expect(313, 10);
    sub_alloc(&mut c, DATA + 4, 0x8000).expect(313, 11);
    set(&mut c, 2, 0xC000).expect(0, 12); // grow
    sub_alloc(&mut c, DATA + 4, 0xC000 - 64).expect(0, 13);
    c.push_mem(DATA).call("DOSCALLS", UNSET, 4).expect(0, 14);
    c.push_mem(DATA).call("DOSCALLS", UNSET, 4).expect(87, 15);
    c.push(0);
    c.c.push(0x58);
    assert_eq!(run(c.exit_eax()), Outcome::Exited(0));
}

#[test]
fn a_sparse_pool_commits_the_pages_of_each_block() {
    let mut c = Code::new();
    // Reserved, not committed: DOSSUB_SPARSE_OBJ commits as it goes.
    alloc_object(&mut c, 0x03);
    set(&mut c, 5, 0x10000).expect(0, 1);
    sub_alloc(&mut c, DATA + 4, 0x3000).expect(0, 2);
    // Write the block's last dword: a fault if its page were not committed.
    c.load_eax(DATA + 4);
    c.c.extend([0xC7, 0x80]);
    c.c.extend(0x2FFCu32.to_le_bytes());
    c.c.extend(7u32.to_le_bytes());
    c.push(0);
    c.c.push(0x58);
    assert_eq!(run(c.exit_eax()), Outcome::Exited(0));
}
