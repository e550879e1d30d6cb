//! DosQueryFHState / DosSetFHState from 32-bit code: the open mode as
//! DosOpen gave it, the flags that can be changed, and the errors.

mod common;

use common::{Code, DATA};
use kernel_sim::{Outcome, Process, ProcessConfig};

fn run(bytes: Vec<u8>) -> (Outcome, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    common::capture_console(&mut p);
    let o = p.run();
    let mut mem = vec![0u8; 0x200];
    p.read_guest(DATA, &mut mem).unwrap();
    (o, mem)
}

const QUERY: u32 = 276;
const SET: u32 = 221;
const H: u32 = DATA + 0x100;

fn at(mem: &[u8], a: u32) -> u32 {
    let o = (a - DATA) as usize;
    u32::from_le_bytes(mem[o..o + 4].try_into().unwrap())
}

#[test]
fn state_is_the_open_mode_and_the_settable_flags() {
    let mut c = Code::new();
    // T.DAT opened read-write, deny-none (0x42).
    c.open_t_dat().expect(0, 1);
    c.push(DATA + 0x40)
        .push_mem(H)
        .call("DOSCALLS", QUERY, 8)
        .expect(0, 2);
    // NOINHERIT and WRITE_THROUGH on.
    c.push(0x4080)
        .push_mem(H)
        .call("DOSCALLS", SET, 8)
        .expect(0, 3);
    c.push(DATA + 0x44)
        .push_mem(H)
        .call("DOSCALLS", QUERY, 8)
        .expect(0, 4);
    // Access bits cannot be set; neither can DASD.
    c.push(0x42)
        .push_mem(H)
        .call("DOSCALLS", SET, 8)
        .expect(87, 5);
    c.push(0x8000)
        .push_mem(H)
        .call("DOSCALLS", SET, 8)
        .expect(87, 6);
    // Standard output: the console's read-write, deny-none.
    c.push(DATA + 0x48)
        .push(1)
        .call("DOSCALLS", QUERY, 8)
        .expect(0, 7);
    // No such handle; a bad pointer.
    c.push(DATA + 0x4C)
        .push(99)
        .call("DOSCALLS", QUERY, 8)
        .expect(6, 8);
    c.push(0x40).push(99).call("DOSCALLS", SET, 8).expect(6, 9);
    c.push(0x7000_0000).push(1).call("DOSCALLS", QUERY, 8);
    let (o, mem) = run(c.exit_eax());
    assert_eq!(o, Outcome::Exited(487), "ERROR_INVALID_ADDRESS");
    assert_eq!(at(&mem, DATA + 0x40), 0x42);
    assert_eq!(at(&mem, DATA + 0x44), 0x40C2);
    assert_eq!(at(&mem, DATA + 0x48), 0x42);
}
