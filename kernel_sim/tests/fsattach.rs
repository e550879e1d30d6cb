//! DosQueryFSAttach and the FIL_QUERYEASIZE level of DosFindFirst from
//! 32-bit code (the 16-bit forms, DosQFSAttach and DosFindFirst2, run
//! under IBM's PACK2 in cli's toolkit test).

mod common;

use common::{Code, DATA};
use kernel_sim::{Outcome, Process, ProcessConfig};

fn run(bytes: Vec<u8>) -> (Outcome, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    std::fs::write(dir.path().join("ABC.TXT"), b"0123456789").unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    common::capture_console(&mut p);
    let o = p.run();
    let mut mem = vec![0u8; 0x300];
    p.read_guest(DATA, &mut mem).unwrap();
    (o, mem)
}

fn text(c: &mut Code, at: u32, s: &[u8]) {
    let mut b = s.to_vec();
    b.push(0);
    for (i, ch) in b.chunks(4).enumerate() {
        let mut w = [0u8; 4];
        w[..ch.len()].copy_from_slice(ch);
        c.store(at + 4 * i as u32, u32::from_le_bytes(w));
    }
}

const NAME: u32 = DATA;
const CB: u32 = DATA + 0x20;
const BUF: u32 = DATA + 0x100;

/// DosQueryFSAttach(NAME, ordinal, level, BUF, &cb) with cb = `room`.
fn attach(c: &mut Code, ordinal: u32, level: u32, room: u32) {
    c.store(CB, room)
        .push(CB)
        .push(BUF)
        .push(level)
        .push(ordinal)
        .push(NAME)
        .call("DOSCALLS", 277, 20);
}

#[test]
fn drive_c_is_a_local_hpfs_drive() {
    let mut c = Code::new();
    text(&mut c, NAME, b"c:");
    attach(&mut c, 0, 1, 64);
    c.expect(0, 1);
    let (o, mem) = run(c.exit_eax());
    assert_eq!(o, Outcome::Exited(0));
    let at = (BUF - DATA) as usize;
    assert_eq!(
        &mem[at..at + 16],
        b"\x03\x00\x02\x00\x04\x00\x00\x00C:\0HPFS\0"
    );
    assert_eq!(mem[(CB - DATA) as usize], 16);
}

#[test]
fn attach_levels_and_errors() {
    for (name, ordinal, level, room, rc) in [
        (&b"D:"[..], 0, 1, 64, 15),   // no such drive
        (b"\\DEV\\NUL", 0, 1, 64, 0), // a device
        (b"LPT9", 0, 1, 64, 87),      // no such name
        (b"", 3, 3, 64, 0),           // drive number 3
        (b"", 4, 3, 64, 259),         // no drive 4
        (b"", 2, 2, 64, 0),           // the second device
        (b"", 3, 2, 64, 259),         // no third
        (b"C:", 0, 4, 64, 124),       // no level 4
        (b"C:", 0, 1, 15, 111),       // one byte short
    ] {
        let mut c = Code::new();
        text(&mut c, NAME, name);
        attach(&mut c, ordinal, level, room);
        let (o, _) = run(c.exit_eax());
        assert_eq!(o, Outcome::Exited(rc), "{name:?} {ordinal} {level} {room}");
    }
}

#[test]
fn find_first_level_2_gives_the_ea_size() {
    let mut c = Code::new();
    text(&mut c, NAME, b"ABC.TXT");
    // DosFindFirst(NAME, &hdir = HDIR_CREATE, attr 0, BUF, 200, &count = 1, level)
    for (level, rc) in [(2, 0), (3, 124)] {
        c.store(DATA + 0x24, 0xFFFF_FFFF)
            .store(DATA + 0x28, 1)
            .push(level)
            .push(DATA + 0x28)
            .push(200)
            .push(BUF)
            .push(0)
            .push(DATA + 0x24)
            .push(NAME)
            .call("DOSCALLS", 264, 28)
            .expect(rc, 10 + level);
    }
    let (o, mem) = run(c.exit_eax());
    assert_eq!(o, Outcome::Exited(124), "level 3 last");
    let at = (BUF - DATA) as usize;
    // FILEFINDBUF4: next 0, three stamps, size 10, allocation, attributes,
    // cbList 4, the name.
    assert_eq!(&mem[at..at + 4], &[0; 4]);
    assert_eq!(&mem[at + 16..at + 20], &10u32.to_le_bytes());
    assert_eq!(&mem[at + 28..at + 32], &4u32.to_le_bytes(), "cbList");
    assert_eq!(mem[at + 32], 7);
    assert_eq!(&mem[at + 33..at + 41], b"ABC.TXT\0");
}
