//! DosInsertMessage (MSG.4) from 32-bit guest code: %1..%9 insertion and
//! its error codes.

mod common;

use kernel_sim::{Outcome, Process, ProcessConfig};

const RC: u32 = 0x20000;
const LEN: u32 = 0x20080;
const TABLE: u32 = 0x20140;
const BUF: u32 = 0x20180;
const MSG: &[u8] = b"Hi %2 and %1, %3%%0!";

/// Stores bytes at `at` with `mov byte` instructions.
fn store(code: &mut Vec<u8>, at: u32, bytes: &[u8]) {
    for (i, b) in bytes.iter().enumerate() {
        code.extend([0xC6, 0x05]);
        code.extend((at + i as u32).to_le_bytes());
        code.push(*b);
    }
}

/// Sets up the strings, then calls DosInsertMessage once per argument
/// list, storing each return code at RC + 4i, and exits.
fn program(calls_args: &[[u32; 7]]) -> Vec<u8> {
    let mut c = Vec::new();
    store(&mut c, 0x20100, b"ab\0");
    store(&mut c, 0x20108, b"XYZ\0");
    store(&mut c, 0x20110, MSG);
    let mut table = Vec::new();
    table.extend(0x20100u32.to_le_bytes());
    table.extend(0x20108u32.to_le_bytes());
    table.extend(0x7000_0000u32.to_le_bytes());
    store(&mut c, TABLE, &table);
    let mut calls = Vec::new();
    for (n, args) in calls_args.iter().enumerate() {
        for a in args.iter().rev() {
            c.push(0x68);
            c.extend(a.to_le_bytes());
        }
        calls.push((c.len() as u32, "MSG", 4));
        c.extend([0xE8, 0, 0, 0, 0]);
        c.extend([0x83, 0xC4, 28]);
        c.push(0xA3);
        c.extend((RC + 4 * n as u32).to_le_bytes());
    }
    c.extend([0x6A, 0x00, 0x6A, 0x01]);
    calls.push((c.len() as u32, "DOSCALLS", 234));
    c.extend([0xE8, 0, 0, 0, 0]);
    common::lx_program(&c, &calls)
}

fn run(bytes: Vec<u8>) -> (Outcome, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    let o = p.run();
    let mut mem = vec![0u8; 512];
    p.read_guest(RC, &mut mem).unwrap();
    (o, mem)
}

fn u32_at(mem: &[u8], lin: u32) -> u32 {
    let i = (lin - RC) as usize;
    u32::from_le_bytes(mem[i..i + 4].try_into().unwrap())
}

#[test]
fn inserts_replace_their_markers() {
    let n = MSG.len() as u32;
    let (o, mem) = run(program(&[[TABLE, 2, 0x20110, n, BUF, 64, LEN]]));
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(u32_at(&mem, RC), 0);
    let want = b"Hi XYZ and ab, %3%%0!";
    assert_eq!(u32_at(&mem, LEN), want.len() as u32);
    let at = (BUF - RC) as usize;
    assert_eq!(&mem[at..at + want.len()], want);
    assert_eq!(mem[at + want.len()], 0, "nothing written past the text");
}

#[test]
fn errors() {
    let n = MSG.len() as u32;
    let (o, mem) = run(program(&[
        [TABLE, 10, 0x20110, n, BUF, 64, LEN],
        [TABLE, 2, 0x20110, n, BUF, 5, LEN],
        [TABLE, 3, 0x20110, n, BUF, 64, LEN],
        [TABLE, 2, 0x20110, n, BUF, 64, 0x7000_0000],
        [TABLE, 0, 0x20110, 2, BUF, 2, LEN],
    ]));
    assert_eq!(o, Outcome::Exited(0));
    let rc: Vec<u32> = (0..5).map(|i| u32_at(&mem, RC + 4 * i)).collect();
    assert_eq!(rc, [320, 316, 487, 487, 0]);
    assert_eq!(u32_at(&mem, LEN), 2, "only the last call stored a length");
    assert_eq!(&mem[(BUF - RC) as usize..][..3], b"Hi\0");
}
