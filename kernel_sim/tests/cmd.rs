//! The built-in CMD.EXE (issue 12, item 4): `/C`, internal commands,
//! batch files, redirection, ERRORLEVEL, programs along PATH as child
//! processes with the arguments OS/2's CMD.EXE passes, and its exit code.

mod common;

use common::{Code, DATA};
use kernel_sim::{ConsoleBuffer, Outcome, Process, ProcessConfig};

/// A program that exits with `code`.
fn exits(code: u32) -> Vec<u8> {
    let mut c = Code::new();
    c.push(code);
    c.c.push(0x58);
    c.exit_eax()
}

/// A program that writes `text` to stdout and exits 0.
fn hello(text: &[u8]) -> Vec<u8> {
    let mut c = Code::new();
    for (i, ch) in text.chunks(4).enumerate() {
        let mut d = [0u8; 4];
        d[..ch.len()].copy_from_slice(ch);
        c.store(DATA + 0x100 + 4 * i as u32, u32::from_le_bytes(d));
    }
    c.push(DATA + 0x10)
        .push(text.len() as u32)
        .push(DATA + 0x100)
        .push(1)
        .call("DOSCALLS", 282, 16);
    c.push(0);
    c.c.push(0x58);
    c.exit_eax()
}

/// A program that writes the first `len` bytes at its command line
/// (pib_pchcmd) to stdout.
fn args_dumper(len: u32) -> Vec<u8> {
    let mut c = Code::new();
    c.push(DATA + 0x24)
        .push(DATA + 0x20)
        .call("DOSCALLS", 312, 8);
    // mov eax, [DATA+0x24]; push dword [eax+0x0C]: pib_pchcmd
    c.load_eax(DATA + 0x24);
    c.c.extend([0x8B, 0x40, 0x0C, 0xA3]);
    c.c.extend((DATA + 0x2C).to_le_bytes());
    c.push(DATA + 0x10)
        .push(len)
        .push_mem(DATA + 0x2C)
        .push(1)
        .call("DOSCALLS", 282, 16);
    c.push(0);
    c.c.push(0x58);
    c.exit_eax()
}

struct Run {
    outcome: Outcome,
    text: String,
    dir: tempfile::TempDir,
}

/// `CMD.EXE` with `args` in a sandbox holding `files`, with `stdin`.
fn cmd(files: &[(&str, Vec<u8>)], env: &[(&str, &str)], args: &[&str], stdin: &[u8]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let mut cfg = ProcessConfig::new(dir.path(), "C:\\OS2\\CMD.EXE");
    cfg.args = args.iter().map(|s| s.to_string()).collect();
    for (k, v) in env {
        cfg.set_env(k, v);
    }
    cfg.max_instructions = Some(20_000_000);
    let mut p = Process::new(cfg).unwrap();
    let out = ConsoleBuffer::new();
    p.set_console(
        Box::new(out.clone()),
        Box::new(out.clone()),
        Box::new(std::io::Cursor::new(stdin.to_vec())),
    );
    let outcome = p.run();
    Run {
        outcome,
        text: out.text(),
        dir,
    }
}

#[test]
fn cmd_c_runs_internal_commands_and_ends() {
    let r = cmd(&[], &[], &["/C", "echo", "hello", "world"], b"");
    assert_eq!(
        (r.outcome, r.text.as_str()),
        (Outcome::Exited(0), "hello world\r\n")
    );
    let r = cmd(&[], &[("X", "abc")], &["/C", "echo %X%& echo.& set X"], b"");
    assert_eq!(r.text, "abc\r\n\r\nX=abc\r\n");
    // One pair of quotes around the whole command goes.
    let r = cmd(&[], &[], &["/C", "\"echo", "quoted\""], b"");
    assert_eq!(r.text, "quoted\r\n");
}

#[test]
fn the_exit_code_is_the_last_commands_errorlevel() {
    let files = [("T3.EXE", exits(3))];
    let r = cmd(&files, &[], &["/C", "T3"], b"");
    assert_eq!(r.outcome, Outcome::Exited(3));
    let r = cmd(&files, &[], &["/C", "T3 && echo ok || echo failed"], b"");
    assert_eq!(
        (r.outcome, r.text.as_str()),
        (Outcome::Exited(0), "failed\r\n")
    );
    let r = cmd(&files, &[], &["/C", "T3 & if errorlevel 3 echo three"], b"");
    assert_eq!(r.text, "three\r\n");
    let r = cmd(&files, &[], &["/C", "T3 & if errorlevel 4 echo four"], b"");
    assert_eq!((r.outcome, r.text.as_str()), (Outcome::Exited(3), ""));
    let r = cmd(&files, &[], &["/C", "nosuch"], b"");
    assert_eq!(r.outcome, Outcome::Exited(1));
    assert!(
        r.text
            .starts_with("SYS1041: The name nosuch is not recognized"),
        "{}",
        r.text
    );
}

#[test]
fn programs_are_found_along_path_and_get_the_arguments_as_typed() {
    let want = b"BIN\\DUMP\0a \"b c\"\0\0";
    let files = [("BIN/DUMP.EXE", args_dumper(want.len() as u32))];
    let r = cmd(&files, &[], &["/C", "BIN\\DUMP", "a", "\"b", "c\""], b"");
    assert_eq!(r.outcome, Outcome::Exited(0), "{}", r.text);
    assert_eq!(r.text.as_bytes(), want);
    // Not in the current directory, not on PATH; then on PATH.
    let r = cmd(&files, &[], &["/C", "DUMP"], b"");
    assert_eq!(r.outcome, Outcome::Exited(1));
    let want = b"DUMP\0\0\0";
    let files = [("BIN/DUMP.EXE", args_dumper(want.len() as u32))];
    let r = cmd(
        &files,
        &[("PATH", "C:\\NONE;C:\\BIN")],
        &["/C", "DUMP"],
        b"",
    );
    assert_eq!(
        (r.outcome, r.text.as_bytes()),
        (Outcome::Exited(0), &want[..])
    );
}

#[test]
fn redirection_sends_a_child_or_a_command_to_a_file() {
    let files = [("HELLO.EXE", hello(b"hi there\r\n"))];
    let r = cmd(
        &files,
        &[],
        &["/C", "HELLO > H.TXT & echo more>>H.TXT & type H.TXT"],
        b"",
    );
    assert_eq!(r.outcome, Outcome::Exited(0));
    assert_eq!(r.text, "hi there\r\nmore\r\n");
    let h = std::fs::read(r.dir.path().join("H.TXT")).unwrap();
    assert_eq!(h, b"hi there\r\nmore\r\n");
    // To NUL, and stderr with stdout.
    let r = cmd(
        &files,
        &[],
        &["/C", "HELLO >NUL & nosuch 2>E.TXT & echo done"],
        b"",
    );
    assert_eq!(r.text, "done\r\n");
    let e = std::fs::read_to_string(r.dir.path().join("E.TXT")).unwrap();
    assert!(e.starts_with("SYS1041"), "{e}");
}

#[test]
fn a_batch_file_runs_with_its_parameters() {
    let bat = "@echo off\r\n\
               set GREETING=hi %1\r\n\
               echo %GREETING%\r\n\
               T3\r\n\
               if errorlevel 3 echo three\r\n\
               if not errorlevel 4 echo below four\r\n\
               echo data> OUT.TXT\r\n\
               copy OUT.TXT COPY.TXT\r\n\
               del OUT.TXT\r\n\
               if exist OUT.TXT echo still there\r\n\
               if exist COPY.TXT type COPY.TXT\r\n\
               md SUB\r\n\
               cd SUB\r\n\
               cd\r\n\
               cd ..\r\n\
               exit 5\r\n\
               echo not reached\r\n";
    let files = [("T.CMD", bat.as_bytes().to_vec()), ("T3.EXE", exits(3))];
    let r = cmd(&files, &[], &["/C", "T", "world"], b"");
    assert_eq!(r.outcome, Outcome::Exited(5), "{}", r.text);
    assert_eq!(
        r.text,
        "hi world\r\nthree\r\nbelow four\r\n        1 file(s) copied.\r\ndata\r\nC:\\SUB\r\n"
    );
    assert!(r.dir.path().join("SUB").is_dir());
    assert!(!r.dir.path().join("OUT.TXT").exists());
}

#[test]
fn without_c_commands_come_from_standard_input() {
    let r = cmd(
        &[],
        &[],
        &[],
        b"echo one\r\nset A=2\r\necho %A%\r\nexit 4\r\necho no\r\n",
    );
    assert_eq!(
        (r.outcome, r.text.as_str()),
        (Outcome::Exited(4), "one\r\n2\r\n")
    );
    // Its end ends CMD with the last ERRORLEVEL.
    let r = cmd(&[("T3.EXE", exits(3))], &[], &[], b"T3\n");
    assert_eq!(r.outcome, Outcome::Exited(3));
}

#[test]
fn cmd_exe_is_found_where_programs_look_for_it() {
    // A program that execs CMD.EXE from the root (as MSGBIND does along
    // the default PATH, C:\) and returns its result code.
    let mut c = Code::new();
    for (i, ch) in b"C:\\CMD.EXE\0\0CMD.EXE\0/C T3\0\0\0".chunks(4).enumerate() {
        let mut d = [0u8; 4];
        d[..ch.len()].copy_from_slice(ch);
        c.store(DATA + 0x200 + 4 * i as u32, u32::from_le_bytes(d));
    }
    c.push(DATA + 0x200)
        .push(DATA + 0x300)
        .push(0)
        .push(DATA + 0x20C)
        .push(0)
        .push(0)
        .push(0)
        .call("DOSCALLS", 283, 28)
        .expect(0, 0xEE);
    c.load_eax(DATA + 0x304);
    let parent = c.exit_eax();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("P.EXE"), parent).unwrap();
    std::fs::write(dir.path().join("T3.EXE"), exits(3)).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "P.EXE");
    cfg.max_instructions = Some(10_000_000);
    let mut p = Process::new(cfg).unwrap();
    let _out = common::capture_console(&mut p);
    assert_eq!(p.run(), Outcome::Exited(3));
    // The sandbox's own CMD.EXE, if it has one, is that one.
    assert!(!dir.path().join("CMD.EXE").exists());
}

#[test]
fn the_api_log_names_a_child_processes_calls() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T3.EXE"), exits(3)).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "C:\\OS2\\CMD.EXE");
    cfg.args = vec!["/C".into(), "T3".into()];
    cfg.api_log = true;
    let mut p = Process::new(cfg).unwrap();
    let _out = common::capture_console(&mut p);
    assert_eq!(p.run(), Outcome::Exited(3));
    let log: Vec<String> = p.api_log().iter().map(|e| e.to_string()).collect();
    // CMD.EXE (the first process) steps, T3 (PID 2) exits, CMD ends.
    assert_eq!(log.len(), 3, "{log:#?}");
    assert!(
        log[0].contains("CMDSHELL.1 CmdStep()") && !log[0].starts_with("pid"),
        "{log:#?}"
    );
    assert!(
        log[1].starts_with("pid 2 ") && log[1].contains("DosExit(1, 3)"),
        "{log:#?}"
    );
    assert!(log[2].contains("CmdStep() -> exit 3"), "{log:#?}");
}
