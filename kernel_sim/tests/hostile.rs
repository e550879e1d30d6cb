//! Hostile guests (issue 13, items 3 and 5): lengths the guest controls
//! never size a host allocation, host calls count against the instruction
//! budget, disk writes are capped by bytes, Ctrl-C and the wall clock end
//! a run, and file times come from the emulated clock.

mod common;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use common::{Code, DATA, JNZ, JZ};
use kernel_sim::{Outcome, Process, ProcessConfig};

fn process(dir: &std::path::Path, bytes: Vec<u8>, max: Option<u64>) -> Process {
    std::fs::write(dir.join("T.EXE"), bytes).unwrap();
    let mut cfg = ProcessConfig::new(dir, "T.EXE");
    cfg.max_instructions = max;
    Process::new(cfg).unwrap()
}

#[test]
fn dos_put_message_with_length_ffffffff_is_refused_without_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Code::new();
    c.push(DATA).push(0xFFFF_FFFF).push(1).call("MSG", 5, 12);
    let mut p = process(dir.path(), c.exit_eax(), Some(1_000_000));
    // ERROR_INVALID_ADDRESS: no 4 GiB buffer was asked for (the CI runs
    // this through the binary under `ulimit -v 2000000` too).
    assert_eq!(p.run(), Outcome::Exited(487));
}

#[test]
fn a_loop_of_api_calls_ends_within_the_instruction_budget() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Code::new();
    // loop: DosPutMessage(1, 0, DATA); jmp loop
    c.push(DATA).push(0).push(1).call("MSG", 5, 12);
    let back = -(c.c.len() as i32 + 2);
    c.c.extend([0xEB, back as u8]);
    let mut p = process(dir.path(), c.exit_eax(), Some(1_000_000));
    let t = Instant::now();
    assert_eq!(p.run(), Outcome::InstructionLimit(1_000_000));
    // ~10,000 calls at most (100 instructions each), not 170,000.
    assert!(p.instructions() < 100_000, "{}", p.instructions());
    assert!(t.elapsed() < Duration::from_secs(20));
}

#[test]
fn seek_then_write_cannot_make_a_huge_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Code::new();
    c.open_t_dat();
    // DosSetFilePtr(h, 300 MB, FILE_BEGIN, &pos)
    c.push(DATA + 0x108)
        .push(0)
        .push(300 << 20)
        .push_mem(DATA + 0x100)
        .call("DOSCALLS", 256, 16);
    // DosWrite(h, DATA, 1, &n)
    c.push(DATA + 0x10C)
        .push(1)
        .push(DATA)
        .push_mem(DATA + 0x100)
        .call("DOSCALLS", 282, 16);
    let mut p = process(dir.path(), c.exit_eax(), Some(1_000_000));
    assert_eq!(p.run(), Outcome::Exited(112), "ERROR_DISK_FULL");
    let len = std::fs::metadata(dir.path().join("T.DAT")).unwrap().len();
    assert!(len < 1 << 20, "{len}");
}

#[test]
fn the_disk_write_cap_counts_bytes_over_all_files() {
    const CHUNK: u32 = 0x4000;
    const FIRST: u64 = 192 << 20;
    let dir = tempfile::tempdir().unwrap();
    let mut c = Code::new();
    // A.DAT gets 192 MB in 16 KB writes (EBX counts them, kept across
    // _System calls); then B.DAT is written until a write fails, and the
    // program exits with that rc (or with the first rc that is not 0).
    let mut to_end = vec![];
    c.open(*b"A.DAT", DATA + 0x100);
    c.c.push(0xBB); // mov ebx, imm32
    c.c.extend(((FIRST / u64::from(CHUNK)) as u32).to_le_bytes());
    let top_a = c.c.len();
    c.write(DATA + 0x100, CHUNK);
    c.c.extend([0x85, 0xC0]); // test eax, eax
    to_end.push(c.jcc(JNZ, None));
    c.c.push(0x4B); // dec ebx
    c.jcc(JNZ, Some(top_a));
    c.open(*b"B.DAT", DATA + 0x110);
    c.c.extend([0x85, 0xC0]);
    to_end.push(c.jcc(JNZ, None));
    let top_b = c.c.len();
    c.write(DATA + 0x110, CHUNK);
    c.c.extend([0x85, 0xC0]);
    c.jcc(JZ, Some(top_b));
    for at in to_end {
        c.land(at);
    }
    let mut p = process(dir.path(), c.exit_eax(), Some(100_000_000));
    assert_eq!(p.run(), Outcome::Exited(112), "ERROR_DISK_FULL");
    let len = |f: &str| std::fs::metadata(dir.path().join(f)).unwrap().len();
    // The cap is on bytes written in all, not per file: B.DAT stopped at
    // what A.DAT left of the 256 MB, far below the largest file size.
    assert_eq!(len("A.DAT"), FIRST);
    assert_eq!(len("B.DAT"), kernel_sim::fs::MAX_DISK_WRITE - FIRST);
    assert!(len("B.DAT") < kernel_sim::fs::MAX_FILE_SIZE);
}

#[test]
fn file_times_come_from_the_emulated_clock() {
    let dir = tempfile::tempdir().unwrap();
    // DosQueryFileInfo(h, 1, DATA+0x200, 24) after creating T.DAT; exit
    // with fdateLastWrite | ftimeLastWrite << 16.
    let build = |c: &mut Code| {
        c.push(24)
            .push(DATA + 0x200)
            .push(1)
            .push_mem(DATA + 0x100)
            .call("DOSCALLS", 279, 16);
        c.c.extend([0xA1]);
        c.c.extend((DATA + 0x208).to_le_bytes());
    };
    let mut c = Code::new();
    c.open_t_dat();
    build(&mut c);
    let bytes = c.exit_eax();
    let run = |bytes: Vec<u8>| {
        let mut p = process(dir.path(), bytes, Some(1_000_000));
        match p.run() {
            Outcome::Exited(v) => v,
            other => panic!("{other}"),
        }
    };
    let created = run(bytes.clone());
    // The emulated clock starts at a fixed date (not today's).
    let date = created & 0xFFFF;
    let host_year = 1970
        + std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            / 31_557_600;
    assert_ne!(1980 + (date >> 9) as u64, host_year, "{created:#x}");
    // The same run again, after the host clock moved on: the same time.
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(run(bytes), created);
    // A file the guest did not write shows the start of the run, whatever
    // its host time.
    let old = std::fs::File::options()
        .write(true)
        .open(dir.path().join("T.DAT"))
        .unwrap();
    old.set_modified(std::time::UNIX_EPOCH + Duration::from_secs(1_000_000_000))
        .unwrap();
    drop(old);
    let mut c = Code::new();
    // DosOpen opening the existing file (OPEN_ACTION_OPEN_IF_EXISTS).
    c.store(DATA, u32::from_le_bytes(*b"T.DA"))
        .store(DATA + 4, u32::from(b'T'))
        .push(0)
        .push(0x42)
        .push(0x01)
        .push(0)
        .push(0)
        .push(DATA + 0x104)
        .push(DATA + 0x100)
        .push(DATA)
        .call("DOSCALLS", 273, 32);
    build(&mut c);
    assert_eq!(run(c.exit_eax()), created, "the boot time, not 2001");
}

#[test]
fn interrupt_and_wall_clock_end_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Code::new();
    c.c.extend([0xEB, 0xFE]); // jmp $
    let bytes = c.exit_eax();
    std::fs::write(dir.path().join("T.EXE"), &bytes).unwrap();
    let flag = Arc::new(AtomicBool::new(true));
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.interrupt = Some(flag);
    assert_eq!(Process::new(cfg).unwrap().run(), Outcome::Interrupted);
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_wall = Some(Duration::from_millis(300));
    let t = Instant::now();
    assert_eq!(
        Process::new(cfg).unwrap().run(),
        Outcome::TimeLimit(Duration::from_millis(300))
    );
    assert!(t.elapsed() < Duration::from_secs(10));
}
