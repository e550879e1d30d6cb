//! DosSetExtLIBPATH / DosQueryExtLIBPATH: the values, their
//! `%BEGINLIBPATH%` substitution and errors, and DosLoadModule finding a
//! DLL only along BEGINLIBPATH.

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

#[test]
fn beginlibpath_is_kept_substituted_and_searched() {
    let dll = testprogs::all()
        .unwrap()
        .into_iter()
        .find(|p| p.name == "TPDLL32")
        .expect("TPDLL32");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("LIBS")).unwrap();
    std::fs::write(dir.path().join("LIBS").join(dll.file_name), &dll.bytes).unwrap();
    let mut c = Code::new();
    // DosLoadModule(fail buf, 32, "TPDLL32", &hmod): not found before.
    text(&mut c, DATA + 0x20, b"TPDLL32");
    let load = |c: &mut Code, rc: u32, tag: u32| {
        c.push(DATA + 0x40)
            .push(DATA + 0x20)
            .push(32)
            .push(DATA + 0x60)
            .call("DOSCALLS", 318, 16)
            .expect(rc, tag);
    };
    load(&mut c, 126, 1);
    text(&mut c, DATA, b"C:\\LIBS");
    c.push(1).push(DATA).call("DOSCALLS", 873, 8).expect(0, 2);
    text(&mut c, DATA, b"%beginlibpath%;C:\\MORE");
    c.push(1).push(DATA).call("DOSCALLS", 873, 8).expect(0, 3);
    c.push(3).push(DATA).call("DOSCALLS", 873, 8).expect(87, 4);
    c.push(1)
        .push(DATA + 0x100)
        .call("DOSCALLS", 874, 8)
        .expect(0, 5);
    c.push(2)
        .push(DATA + 0x180)
        .call("DOSCALLS", 874, 8)
        .expect(0, 6);
    load(&mut c, 0, 7);
    let bytes = c.exit_eax();
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    common::capture_console(&mut p);
    assert_eq!(p.run(), Outcome::Exited(0));
    let mut mem = vec![0u8; 0x200];
    p.read_guest(DATA, &mut mem).unwrap();
    assert_eq!(
        &mem[0x100..0x116],
        b"C:\\LIBS;C:\\MORE\0\0\0\0\0\0\0"[..0x16].as_ref()
    );
    assert_eq!(mem[0x180], 0, "ENDLIBPATH is empty");
}
