//! DosSetFileInfo, DosSetPathInfo and the information levels of
//! DosQueryFileInfo/DosQueryPathInfo (LINK386 stamps its output with
//! DosSetFileInfo).

mod common;

use common::{Code, DATA};
use kernel_sim::{Outcome, Process, ProcessConfig};

const BUF: u32 = DATA + 0x200;
const OUT: u32 = DATA + 0x240;

/// FILESTATUS3 at BUF: created, accessed (0: keep) and written stamps
/// and the attributes.
fn status(c: &mut Code, attr: u32) {
    c.store(BUF, 0x1234_2345)
        .store(BUF + 4, 0)
        .store(BUF + 8, 0x0001_2346)
        .store(BUF + 12, 0)
        .store(BUF + 16, 0)
        .store(BUF + 20, attr);
}

#[test]
fn set_file_info_changes_the_stamps_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Code::new();
    c.open_t_dat().expect(0, 1);
    status(&mut c, 0x20);
    // DosSetFileInfo(h, 1, BUF, 24)
    c.push(24).push(BUF).push(1).push_mem(DATA + 0x100);
    c.call("DOSCALLS", 218, 16).expect(0, 2);
    // DosQueryFileInfo(h, 1, OUT, 24)
    c.push(24).push(OUT).push(1).push_mem(DATA + 0x100);
    c.call("DOSCALLS", 279, 16).expect(0, 3);
    c.load_eax(OUT).expect(0x1234_2345, 4);
    c.load_eax(OUT + 8).expect(0x0001_2346, 5);
    // Errors: EAs (level 2), an unknown level, a short buffer.
    for (level, len, rc, tag) in [(2, 24, 282, 6), (7, 24, 124, 7), (1, 10, 122, 8)] {
        c.push(len).push(BUF).push(level).push_mem(DATA + 0x100);
        c.call("DOSCALLS", 218, 16).expect(rc, tag);
    }
    // DosQueryPathInfo("T.DAT", 2, OUT, 28): FILESTATUS4, an empty EA list.
    c.push(28).push(OUT).push(2).push(DATA);
    c.call("DOSCALLS", 223, 16).expect(0, 9);
    c.load_eax(OUT + 24).expect(4, 10);
    c.load_eax(OUT).expect(0x1234_2345, 11);
    // DosSetPathInfo("T.DAT", 1, BUF, 24, 0) with read-only, then query.
    status(&mut c, 0x21);
    c.push(0).push(24).push(BUF).push(1).push(DATA);
    c.call("DOSCALLS", 219, 20).expect(0, 12);
    c.push(24).push(OUT).push(1).push(DATA);
    c.call("DOSCALLS", 223, 16).expect(0, 13);
    c.load_eax(OUT + 20).expect(0x21, 14);
    // A directory attribute cannot be given.
    status(&mut c, 0x10);
    c.push(0).push(24).push(BUF).push(1).push(DATA);
    c.call("DOSCALLS", 219, 20).expect(5, 15);
    c.push(0);
    c.c.push(0x58);
    std::fs::write(dir.path().join("T.EXE"), c.exit_eax()).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let o = Process::new(cfg).unwrap().run();
    assert_eq!(o, Outcome::Exited(0));
    let md = std::fs::metadata(dir.path().join("T.DAT")).unwrap();
    assert!(md.permissions().readonly(), "the host file is read-only");
}
