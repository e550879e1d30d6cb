//! Our own sample modules (the testprogs crate) run: DLL imports by name
//! and ordinal, DLL initialization, far calls through 16:16 pointers, file
//! write and read back.

mod common;

use kernel_sim::{Outcome, Process, ProcessConfig};

fn run(programs: &[testprogs::Program]) -> (Outcome, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    for p in programs {
        p.write_to(dir.path()).unwrap();
    }
    let exe = programs.last().unwrap().file_name;
    let mut cfg = ProcessConfig::new(dir.path(), exe);
    cfg.max_instructions = Some(10_000_000);
    let mut p = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut p);
    let o = p.run();
    (o, out.text(), dir)
}

#[test]
fn hello16_and_hello32() {
    let (o, text, _d) = run(&[testprogs::hello16().unwrap()]);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(text.as_bytes(), testprogs::hello16::MESSAGE);
    let (o, text, _d) = run(&[testprogs::hello32().unwrap()]);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(text.as_bytes(), testprogs::hello32::MESSAGE);
}

#[test]
fn dll16_imports_by_name_and_ordinal() {
    let (o, text, _d) = run(&[
        testprogs::tpdll16().unwrap(),
        testprogs::dllcal16().unwrap(),
    ]);
    assert_eq!(o, Outcome::Exited(0), "{text}");
    assert_eq!(text.as_bytes(), testprogs::dll16::GREETING);
}

#[test]
fn dll32_imports_by_name_and_ordinal() {
    let (o, text, _d) = run(&[
        testprogs::tpdll32().unwrap(),
        testprogs::dllcal32().unwrap(),
    ]);
    assert_eq!(o, Outcome::Exited(0), "{text}");
    assert_eq!(text.as_bytes(), testprogs::dll32::GREETING);
}

#[test]
fn far_calls_through_16_16_pointers() {
    let (o, text, _d) = run(&[testprogs::farcal16().unwrap()]);
    assert_eq!(o, Outcome::Exited(0), "{text}");
    assert_eq!(text.as_bytes(), testprogs::farcall16::MESSAGE);
}

#[test]
fn file_written_and_read_back() {
    let (o, _text, d) = run(&[testprogs::fileio16().unwrap()]);
    assert_eq!(o, Outcome::Exited(0));
    let written = std::fs::read(d.path().join(testprogs::fileio16::FILE_NAME)).unwrap();
    assert_eq!(written, testprogs::fileio16::CONTENT);
}

#[test]
fn a_missing_dll_is_a_load_error() {
    let dir = tempfile::tempdir().unwrap();
    testprogs::dllcal16().unwrap().write_to(dir.path()).unwrap();
    let err = Process::new(ProcessConfig::new(dir.path(), "DLLCAL16.EXE"))
        .err()
        .unwrap();
    assert!(err.to_string().contains("TPDLL16"), "{err}");
}

/// A 32-bit program that loads TPDLL32 at run time, finds AddNums by
/// ordinal and by name, and exits with AddNums(2, 3) + AddNums(2, 3).
fn dynlink_program(dll: &str) -> Vec<u8> {
    let mut c: Vec<u8> = Vec::new();
    let mut calls = Vec::new();
    let name_at = 0x100u32;
    c.extend([0x68, 0x00, 0x00, 0x02, 0x00]); // push 0x20000 (phmod)
    c.push(0x68);
    c.extend((0x10000 + name_at).to_le_bytes()); // push name
    c.extend([0x6A, 0x00, 0x6A, 0x00]); // cb, pObj
    calls.push((c.len() as u32, "DOSCALLS", 318));
    c.extend([0xE8, 0, 0, 0, 0, 0x83, 0xC4, 0x10]);
    c.extend([0x85, 0xC0, 0x75, 0x60]); // test eax,eax ; jnz fail (far enough)
    for (pfn, ordinal, pname) in [
        (0x20004u32, 1u8, 0u32),
        (0x20008, 0, 0x10000 + name_at + 0x20),
    ] {
        c.push(0x68);
        c.extend(pfn.to_le_bytes());
        c.push(0x68);
        c.extend(pname.to_le_bytes());
        c.extend([0x6A, ordinal]);
        c.extend([0xFF, 0x35, 0x00, 0x00, 0x02, 0x00]); // push [0x20000]
        calls.push((c.len() as u32, "DOSCALLS", 321));
        c.extend([0xE8, 0, 0, 0, 0, 0x83, 0xC4, 0x10]);
    }
    c.extend([
        0x6A, 0x03, 0x6A, 0x02, 0xFF, 0x15, 0x04, 0x00, 0x02, 0x00, 0x83, 0xC4, 0x08,
    ]);
    c.extend([0x89, 0xC3]); // mov ebx,eax
    c.extend([
        0x6A, 0x03, 0x6A, 0x02, 0xFF, 0x15, 0x08, 0x00, 0x02, 0x00, 0x83, 0xC4, 0x08,
    ]);
    c.extend([0x01, 0xD8]); // add eax,ebx
    c.extend([0x50, 0x6A, 0x01]);
    calls.push((c.len() as u32, "DOSCALLS", 234));
    c.extend([0xE8, 0, 0, 0, 0]);
    // fail: exit(99 + rc)
    while c.len() < 0x90 {
        c.push(0x90);
    }
    c.extend([0x83, 0xC0, 0x63, 0x50, 0x6A, 0x01]);
    calls.push((c.len() as u32, "DOSCALLS", 234));
    c.extend([0xE8, 0, 0, 0, 0]);
    c.resize(name_at as usize, 0x90);
    c.extend(dll.as_bytes());
    c.resize(name_at as usize + 0x20, 0);
    c.extend(b"AddNums\0");
    common::lx_program(&c, &calls)
}

#[test]
fn dos_load_module_and_query_proc_addr() {
    let dir = tempfile::tempdir().unwrap();
    testprogs::tpdll32().unwrap().write_to(dir.path()).unwrap();
    std::fs::write(dir.path().join("DYN.EXE"), dynlink_program("TPDLL32")).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "DYN.EXE");
    cfg.max_instructions = Some(100_000);
    cfg.api_log = true;
    let mut p = Process::new(cfg).unwrap();
    let o = p.run();
    assert_eq!(o, Outcome::Exited(10), "{:#?}", p.api_log());
    assert_eq!(p.modules().len(), 2);
    // A module that is not there: DosLoadModule fails with 126.
    std::fs::write(dir.path().join("DYN2.EXE"), dynlink_program("NOSUCH")).unwrap();
    let mut p = Process::new(ProcessConfig::new(dir.path(), "DYN2.EXE")).unwrap();
    assert_eq!(p.run(), Outcome::Exited(99 + 126));
}

#[test]
fn dlls_are_found_along_libpath() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("DLLS")).unwrap();
    testprogs::tpdll16()
        .unwrap()
        .write_to(&dir.path().join("DLLS"))
        .unwrap();
    testprogs::dllcal16().unwrap().write_to(dir.path()).unwrap();
    let cfg = ProcessConfig::new(dir.path(), "DLLCAL16.EXE");
    assert!(Process::new(cfg.clone()).is_err());
    let mut cfg = cfg;
    cfg.set_env("LIBPATH", "C:\\NOWHERE;C:\\DLLS");
    let mut p = Process::new(cfg).unwrap();
    p.set_console(
        Box::new(std::io::sink()),
        Box::new(std::io::sink()),
        Box::new(std::io::empty()),
    );
    assert_eq!(p.run(), Outcome::Exited(0));
    assert_eq!(p.modules()[1].path, "C:\\DLLS\\TPDLL16.DLL");
}

#[test]
fn file_written_and_read_back_32() {
    let (o, _text, d) = run(&[testprogs::fileio32().unwrap()]);
    assert_eq!(o, Outcome::Exited(0));
    let written = std::fs::read(d.path().join(testprogs::fileio32::FILE_NAME)).unwrap();
    assert_eq!(written, testprogs::fileio32::CONTENT);
}

#[test]
fn msg_and_vio_output() {
    let (o, text, _d) = run(&[testprogs::msgvio16().unwrap()]);
    assert_eq!(o, Outcome::Exited(0));
    let mut want = testprogs::msg::MESSAGE16.to_vec();
    want.extend(testprogs::msg::VIO_TEXT);
    assert_eq!(text.as_bytes(), want);
    let (o, text, _d) = run(&[testprogs::msg32().unwrap()]);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(text.as_bytes(), testprogs::msg::MESSAGE32);
}

fn run_args(p: testprogs::Program, args: &[&str]) -> (Outcome, String) {
    let dir = tempfile::tempdir().unwrap();
    p.write_to(dir.path()).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), p.file_name);
    cfg.args = args.iter().map(|s| s.to_string()).collect();
    cfg.max_instructions = Some(1_000_000);
    let mut proc = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut proc);
    (proc.run(), out.text())
}

#[test]
fn start_state_carries_the_command_line() {
    for p in [testprogs::args16().unwrap(), testprogs::args32().unwrap()] {
        let (o, text) = run_args(p, &["alpha", "beta gamma"]);
        assert_eq!(o, Outcome::Exited(0));
        assert_eq!(text, "alpha \"beta gamma\"\r\n");
    }
}

#[test]
fn loops_run_to_completion() {
    for p in [testprogs::loop16().unwrap(), testprogs::loop32().unwrap()] {
        let (o, _) = run_args(p, &[]);
        assert_eq!(o, Outcome::Exited(0));
    }
}
