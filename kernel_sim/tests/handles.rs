//! DosDupHandle (the copy shares the file position; a named target is
//! closed first, standard output can be redirected), DosSetDefaultDisk,
//! DosEnumAttribute and DosAcknowledgeSignalException from 32-bit code.

mod common;

use common::{Code, DATA};
use kernel_sim::{Outcome, Process, ProcessConfig};

fn run(bytes: Vec<u8>) -> (Outcome, String, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut p);
    let o = p.run();
    let file = std::fs::read(dir.path().join("T.DAT")).unwrap_or_default();
    (o, out.text(), file)
}

const H: u32 = DATA + 0x100;
const NEW: u32 = DATA + 0x40;

/// Stores `b` at DATA (what `Code::write` writes).
fn bytes(c: &mut Code, b: &[u8; 4]) {
    c.store(DATA, u32::from_le_bytes(*b));
}

#[test]
fn a_duplicate_shares_the_position_and_can_replace_stdout() {
    let mut c = Code::new();
    c.open_t_dat().expect(0, 1);
    c.store(NEW, u32::MAX)
        .push(NEW)
        .push_mem(H)
        .call("DOSCALLS", 260, 8)
        .expect(0, 2);
    bytes(&mut c, b"AB\0\0");
    c.write(NEW, 2).expect(0, 3);
    bytes(&mut c, b"CD\0\0");
    c.write(H, 2).expect(0, 4);
    // Standard output becomes the file.
    c.store(NEW, 1)
        .push(NEW)
        .push_mem(H)
        .call("DOSCALLS", 260, 8)
        .expect(0, 5);
    bytes(&mut c, b"EF\0\0");
    c.store(DATA + 0x44, 1).write(DATA + 0x44, 2).expect(0, 6);
    // No such handle; a target past the limit.
    c.store(NEW, u32::MAX)
        .push(NEW)
        .push(99)
        .call("DOSCALLS", 260, 8)
        .expect(6, 7);
    c.store(NEW, 5000)
        .push(NEW)
        .push_mem(H)
        .call("DOSCALLS", 260, 8)
        .expect(114, 8);
    let (o, console, file) = run(c.exit_eax());
    assert_eq!(o, Outcome::Exited(114));
    assert_eq!(file, b"ABCDEF");
    assert_eq!(console, "");
}

/// DosEnumAttribute(reftype, file, entry, DATA + 0x80, 64, &count at
/// DATA + 0x40, level).
fn enum_attribute(c: &mut Code, reftype: u32, file: u32, entry: u32, level: u32) -> &mut Code {
    c.push(level)
        .push(DATA + 0x40)
        .push(64)
        .push(DATA + 0x80)
        .push(entry)
        .push(file)
        .push(reftype)
        .call("DOSCALLS", 372, 28)
}

#[test]
fn disks_extended_attributes_and_signals() {
    let mut c = Code::new();
    c.push(3).call("DOSCALLS", 220, 4).expect(0, 1);
    c.push(4).call("DOSCALLS", 220, 4).expect(15, 2);
    c.open_t_dat().expect(0, 3);
    // DosEnumAttribute(ENUMEA_REFTYPE_PATH, "T.DAT", 1, buf, 64, &count, 1)
    c.store(DATA + 0x40, 7);
    enum_attribute(&mut c, 1, DATA, 1, 1).expect(0, 4);
    c.load_eax(DATA + 0x40).expect(0, 5);
    // By handle; level 2; entry 0; a missing file.
    c.store(DATA + 0x40, 7);
    enum_attribute(&mut c, 0, H, 1, 1).expect(0, 6);
    for (level, entry, rc) in [(2, 1, 124), (1, 0, 87)] {
        enum_attribute(&mut c, 1, DATA, entry, level).expect(rc, 7);
    }
    c.store(DATA, u32::from_le_bytes(*b"NONE"));
    enum_attribute(&mut c, 1, DATA, 1, 1).expect(2, 8);
    c.push(4).call("DOSCALLS", 418, 4).expect(0, 9);
    c.push(2).call("DOSCALLS", 418, 4);
    let (o, _, _) = run(c.exit_eax());
    assert_eq!(o, Outcome::Exited(209), "ERROR_INVALID_SIGNAL_NUMBER");
}
