//! Our own sample modules (the testprogs crate) run: DLL imports by name
//! and ordinal, DLL initialization, far calls through 16:16 pointers, file
//! write and read back.

use kernel_sim::{ConsoleBuffer, Outcome, Process, ProcessConfig};

fn run(programs: &[testprogs::Program]) -> (Outcome, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    for p in programs {
        p.write_to(dir.path()).unwrap();
    }
    let exe = programs.last().unwrap().file_name;
    let mut cfg = ProcessConfig::new(dir.path(), exe);
    cfg.max_instructions = Some(10_000_000);
    let mut p = Process::new(cfg).unwrap();
    let out = ConsoleBuffer::new();
    p.set_console(
        Box::new(out.clone()),
        Box::new(out.clone()),
        Box::new(std::io::empty()),
    );
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
