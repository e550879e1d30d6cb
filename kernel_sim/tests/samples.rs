//! The real OS/2 programs in shared/samples run in the emulator.

mod common;

use std::path::{Path, PathBuf};

use kernel_sim::{Outcome, Process, ProcessConfig};

fn sample(rel: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/samples")).join(rel)
}

/// Copy a sample into a fresh sandbox and build a configuration for it.
fn setup(rel: &str, name: &str) -> (tempfile::TempDir, ProcessConfig) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(sample(rel), dir.path().join(name)).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), name);
    cfg.max_instructions = Some(50_000_000);
    cfg.api_log = true;
    (dir, cfg)
}

fn run(cfg: ProcessConfig) -> (Outcome, String, Process) {
    let mut p = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut p);
    let o = p.run();
    (o, out.text(), p)
}

#[test]
fn test_asm16_prints_hello_world() {
    let (_d, cfg) = setup("ne/test-asm16.exe", "TEST.EXE");
    let (o, text, p) = run(cfg);
    assert_eq!(o, Outcome::Exited(0), "log: {:#?}", p.api_log());
    assert_eq!(text, "Hello World\r\n");
}

#[test]
fn hello16_prints_its_message() {
    let (_d, cfg) = setup("ne/hello16.exe", "HELLO16.EXE");
    let (o, text, p) = run(cfg);
    assert_eq!(o, Outcome::Exited(0), "log: {:#?}", p.api_log());
    assert!(text.contains("Hello from a 16-bit OS/2 .exe!"), "{text:?}");
}

#[test]
fn hello32_prints_its_message() {
    let (_d, cfg) = setup("lx/hello.exe", "HELLO.EXE");
    let (o, text, p) = run(cfg);
    assert!(
        matches!(o, Outcome::Exited(_)),
        "{o} log: {:#?}",
        p.api_log()
    );
    // The program passes a length of 40 for its 39-byte message, so the
    // NUL after it is written too, as on OS/2.
    assert_eq!(text, "Hello world! I'm a 32-bit OS/2 binary!\n\0");
}

#[test]
fn testbeep_beeps_nine_times() {
    let (_d, cfg) = setup("lx/testbeep.exe", "TESTBEEP.EXE");
    let (o, _text, p) = run(cfg);
    assert_eq!(o, Outcome::Exited(0), "log: {:#?}", p.api_log());
    let beeps: Vec<_> = p.api_log().iter().filter(|e| e.name == "DosBeep").collect();
    assert_eq!(beeps.len(), 9);
    assert_eq!(beeps[0].args, "250, 100");
    assert_eq!(beeps[8].args, "500, 100");
    assert_eq!(p.beeps().len(), 9);
    assert!(p.now_millis() >= 900, "DosBeep takes emulated time");
}

#[test]
fn testargv16_prints_arguments_and_environment() {
    let (_d, mut cfg) = setup("ne/testargv16.exe", "TESTARGV.EXE");
    cfg.args = vec!["one".into(), "two words".into()];
    cfg.env = vec![("FOO".into(), "bar".into()), ("PATH".into(), "C:\\".into())];
    let (o, text, p) = run(cfg);
    assert_eq!(o, Outcome::Exited(0), "{text}\nlog: {:#?}", p.api_log());
    assert!(text.contains("argc == 3"), "{text}");
    assert!(text.contains("argv[0] = 'C:\\TESTARGV.EXE'"), "{text}");
    assert!(text.contains("argv[1] = 'one'"), "{text}");
    assert!(text.contains("argv[2] = 'two words'"), "{text}");
    assert!(text.contains("envp[0] = 'FOO=bar'"), "{text}");
    assert!(text.contains("envp[1] = 'PATH=C:\\'"), "{text}");
}

#[test]
fn testpm_stops_at_its_first_unimplemented_presentation_manager_call() {
    // WinInitialize (PMWIN.763) is implemented; PM message queues are not.
    let (_d, cfg) = setup("lx/testpm.exe", "TESTPM.EXE");
    let (o, _text, _p) = run(cfg);
    assert_eq!(
        o.to_string(),
        "unimplemented PMWIN.716 (WIN32CREATEMSGQUEUE)"
    );
    assert_eq!(o.exit_code(), 1);
}

#[test]
fn runs_are_deterministic() {
    let once = || {
        let (_d, cfg) = setup("ne/testargv16.exe", "TESTARGV.EXE");
        let (o, text, p) = run(cfg);
        (
            o,
            text,
            p.api_log().to_vec(),
            p.instructions(),
            p.machine().cycles(),
            p.now(),
        )
    };
    assert_eq!(once(), once());
}
