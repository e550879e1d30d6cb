//! What EMX's runtime (emx.dll) needs from OS/2 at start-up: the TIB's
//! stack bounds, DosFlatToSel/DosSelToFlat, suballocation; and 2ine's
//! EMX-built test programs run with their expected output (skipped unless
//! TWOINE_DIR names a 2ine checkout with `tests/emx.dll`).

mod common;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use common::{Code, DATA};
use kernel_sim::{Outcome, Process, ProcessConfig};

fn run_code(bytes: Vec<u8>) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    Process::new(cfg).unwrap().run()
}

/// `mov eax, v`.
fn mov_eax(c: &mut Code, v: u32) -> &mut Code {
    c.c.push(0xB8);
    c.c.extend(v.to_le_bytes());
    c
}

#[test]
fn flat_to_sel_and_back_follow_the_tiling() {
    let mut c = Code::new();
    // Register convention: EAX in, EAX out, no stack arguments.
    mov_eax(&mut c, 0x0002_1234)
        .call("DOSCALLS", 425, 0)
        .expect(0x0017_1234, 1);
    mov_eax(&mut c, 0x0017_0010)
        .call("DOSCALLS", 426, 0)
        .expect(0x0002_0010, 2);
    // Beyond the tiled 512 MB there is no 16:16 form.
    mov_eax(&mut c, 0x2000_0000)
        .call("DOSCALLS", 425, 0)
        .expect(0, 3);
    mov_eax(&mut c, 0);
    assert_eq!(run_code(c.exit_eax()), Outcome::Exited(0));
}

#[test]
fn the_tib_spans_the_whole_stack_object() {
    // DosGetInfoBlocks(&tib, NULL); exit with tib_pstacklimit - tib_pstack.
    let mut c = Code::new();
    c.push(0).push(DATA).call("DOSCALLS", 312, 8).expect(0, 1);
    c.load_eax(DATA);
    // mov ecx, [eax+8]; sub ecx, [eax+4]; mov eax, ecx
    c.c.extend([0x8B, 0x48, 0x08, 0x2B, 0x48, 0x04, 0x89, 0xC8]);
    // lx_program's stack object is 16 KB with ESP at its top.
    assert_eq!(run_code(c.exit_eax()), Outcome::Exited(0x4000));
}

fn twoine() -> Option<PathBuf> {
    let dir = std::env::var_os("TWOINE_DIR").map(|d| Path::new(&d).join("tests"));
    match dir {
        Some(d) if d.join("emx.dll").exists() => Some(d),
        _ => {
            let _ = writeln!(
                std::io::stderr(),
                "TWOINE_DIR is not set (or has no tests/emx.dll): skipped"
            );
            None
        }
    }
}

/// Run one of 2ine's programs with emx.dll beside it: (outcome, console).
fn run_2ine(dir: &Path, exe: &str, args: &[&str]) -> (Outcome, String) {
    let root = tempfile::tempdir().unwrap();
    for f in [exe, "emx.dll"] {
        std::fs::copy(dir.join(f), root.path().join(f.to_ascii_uppercase())).unwrap();
    }
    let mut cfg = ProcessConfig::new(root.path(), exe.to_ascii_uppercase());
    cfg.args = args.iter().map(|s| s.to_string()).collect();
    cfg.max_instructions = Some(100_000_000);
    cfg.set_env("EMXTEST", "yes");
    let mut p = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut p);
    let o = p.run();
    (o, out.text())
}

#[test]
fn helloc_prints_its_greeting() {
    let Some(dir) = twoine() else { return };
    let (o, text) = run_2ine(&dir, "helloc.exe", &[]);
    assert_eq!((o, text.as_str()), (Outcome::Exited(0), "hello world\r\n"));
}

#[test]
fn testargv_prints_its_arguments_and_environment() {
    let Some(dir) = twoine() else { return };
    let (o, text) = run_2ine(&dir, "testargv.exe", &["one", "two words"]);
    assert_eq!(o, Outcome::Exited(0), "{text}");
    // EMX's stdout is in text mode: every newline goes out as CR LF.
    let want = [
        "Command line: (argc == 3)",
        "argv[0] = 'C:\\TESTARGV.EXE'",
        "argv[1] = 'one'",
        "argv[2] = 'two words'",
        "argv[3] = '(null)'",
        "",
        "Environment:",
        "envp[0] = 'PATH=C:\\'",
        "envp[1] = 'DPATH=C:\\'",
        "envp[2] = 'EMXTEST=yes'",
        "",
    ]
    .join("\r\n");
    assert_eq!(text, want);
}

#[test]
fn testtls_keeps_each_threads_value() {
    let Some(dir) = twoine() else { return };
    let (o, text) = run_2ine(&dir, "testtls.exe", &[]);
    assert_eq!(o, Outcome::Exited(0), "{text}");
    // Threads 2 and 3 set their own copies to 100 and 200 while thread 1
    // sleeps; thread 1's stays 10. The address is the TLM area's.
    let want = [
        "the magic address is 0x2840100",
        "Main thread set TLS value to 10",
        "Main thread sees TLS value of 10",
        "",
    ]
    .join("\r\n");
    assert_eq!(text, want);
}
