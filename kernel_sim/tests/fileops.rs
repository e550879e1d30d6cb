//! DosMove, DosResetBuffer and DosError from 32-bit code.

mod common;

use common::{Code, DATA};
use kernel_sim::{Outcome, Process, ProcessConfig};

fn text(c: &mut Code, at: u32, s: &[u8]) {
    let mut b = s.to_vec();
    b.push(0);
    for (i, ch) in b.chunks(4).enumerate() {
        let mut w = [0u8; 4];
        w[..ch.len()].copy_from_slice(ch);
        c.store(at + 4 * i as u32, u32::from_le_bytes(w));
    }
}

const MOVE: u32 = 271;
const A: u32 = DATA + 0x40;
const B: u32 = DATA + 0x60;

fn mv(c: &mut Code, from: &[u8], to: &[u8], rc: u32, tag: u32) {
    text(c, A, from);
    text(c, B, to);
    c.push(B).push(A).call("DOSCALLS", MOVE, 8).expect(rc, tag);
}

#[test]
fn move_renames_and_refuses_what_os2_refuses() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("OTHER.DAT"), b"x").unwrap();
    std::fs::create_dir(dir.path().join("SUB")).unwrap();
    let mut c = Code::new();
    c.open_t_dat().expect(0, 1);
    mv(&mut c, b"T.DAT", b"SUB\\U.DAT", 0, 2);
    mv(&mut c, b"T.DAT", b"V.DAT", 2, 3);
    mv(&mut c, b"SUB\\U.DAT", b"OTHER.DAT", 5, 4);
    mv(&mut c, b"SUB", b"SUB\\INNER", 5, 5);
    mv(&mut c, b"SUB", b"SUB2", 0, 6);
    // DosResetBuffer: the open handle, all, no such handle.
    c.push_mem(DATA + 0x100)
        .call("DOSCALLS", 254, 4)
        .expect(0, 7);
    c.push(u32::MAX).call("DOSCALLS", 254, 4).expect(0, 8);
    c.push(99).call("DOSCALLS", 254, 4).expect(6, 9);
    c.push(3).call("DOSCALLS", 212, 4).expect(0, 10);
    c.push(4).call("DOSCALLS", 212, 4);
    std::fs::write(dir.path().join("T.EXE"), c.exit_eax()).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    common::capture_console(&mut p);
    assert_eq!(p.run(), Outcome::Exited(87));
    assert!(dir.path().join("SUB2").join("U.DAT").is_file());
    assert!(!dir.path().join("T.DAT").exists());
    assert_eq!(std::fs::read(dir.path().join("OTHER.DAT")).unwrap(), b"x");
}
