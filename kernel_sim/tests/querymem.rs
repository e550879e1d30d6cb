//! DosQueryMem on an allocation with committed and reserved pages, past
//! its end, and with bad arguments.

mod common;

use common::{Code, DATA};
use kernel_sim::{Outcome, Process, ProcessConfig};

const BASE: u32 = DATA + 0x10;
const CB: u32 = DATA + 0x14;
const FLAGS: u32 = DATA + 0x18;

/// `mov eax, [BASE]; add eax, off; push eax`.
fn push_base_plus(c: &mut Code, off: u32) {
    c.load_eax(BASE);
    c.c.push(0x05);
    c.c.extend(off.to_le_bytes());
    c.c.push(0x50);
}

/// DosQueryMem(base + off, &cb = asked, &flags); the results go to
/// DATA + out, out + 4.
fn query(c: &mut Code, off: u32, asked: u32, out: u32, tag: u32) {
    c.store(CB, asked).push(FLAGS).push(CB);
    push_base_plus(c, off);
    c.call("DOSCALLS", 306, 12).expect(0, tag);
    c.load_eax(CB);
    c.c.push(0xA3);
    c.c.extend((DATA + out).to_le_bytes());
    c.load_eax(FLAGS);
    c.c.push(0xA3);
    c.c.extend((DATA + out + 4).to_le_bytes());
}

#[test]
fn runs_of_committed_reserved_and_free_pages() {
    let mut c = Code::new();
    // Three pages reserved (PAG_READ | PAG_WRITE), the second committed.
    c.push(3)
        .push(0x3000)
        .push(BASE)
        .call("DOSCALLS", 299, 12)
        .expect(0, 1);
    c.push(0x13).push(0x1000);
    push_base_plus(&mut c, 0x1000);
    c.call("DOSCALLS", 305, 12).expect(0, 2);
    query(&mut c, 0, 0x3000, 0x40, 3);
    query(&mut c, 0x1800, 0x3000, 0x48, 4);
    query(&mut c, 0x2000, 0x10000, 0x50, 5);
    query(&mut c, 0x3000, 0x2000, 0x58, 6);
    // A zero size; a bad pointer.
    c.store(CB, 0).push(FLAGS).push(CB);
    push_base_plus(&mut c, 0);
    c.call("DOSCALLS", 306, 12).expect(87, 7);
    c.push(0x7000_0000).push(CB);
    push_base_plus(&mut c, 0);
    c.call("DOSCALLS", 306, 12);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), c.exit_eax()).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    common::capture_console(&mut p);
    assert_eq!(p.run(), Outcome::Exited(487));
    let mut mem = [0u8; 0x60];
    p.read_guest(DATA, &mut mem).unwrap();
    let d = |o: usize| u32::from_le_bytes(mem[o..o + 4].try_into().unwrap());
    // First page: reserved, the base.
    assert_eq!((d(0x40), d(0x44)), (0x1000, 0x1_0007));
    // The committed second page (from its middle).
    assert_eq!((d(0x48), d(0x4C)), (0x1000, 0x17));
    // The third: reserved, to the end of the allocation.
    assert_eq!((d(0x50), d(0x54)), (0x1000, 0x7));
    // Past the allocation: free.
    assert_eq!((d(0x58), d(0x5C)), (0x2000, 0x4000));
}
