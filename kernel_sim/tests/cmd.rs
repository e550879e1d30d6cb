//! The built-in CMD.EXE (issue 12, item 4): `/C`, internal commands,
//! batch files, redirection, ERRORLEVEL, programs along PATH as child
//! processes with the arguments OS/2's CMD.EXE passes, and its exit code.

mod common;

use common::{Code, DATA, JZ};
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
    assert_eq!(p.system_dir(), None, "not made before a path reaches it");
    assert_eq!(p.run(), Outcome::Exited(3));
    // The sandbox's own CMD.EXE, if it has one, is that one.
    assert!(!dir.path().join("CMD.EXE").exists());
    // The exec made the system directory; it goes with the process.
    let system = p.system_dir().expect("C:\\OS2 was reached").to_path_buf();
    assert!(system.join("CMD.EXE").is_file());
    drop(p);
    assert!(!system.exists(), "{} is left behind", system.display());
}

/// Store `bytes` at `at` (padded with zeros to dwords).
fn store_bytes(c: &mut Code, at: u32, bytes: &[u8]) {
    for (i, ch) in bytes.chunks(4).enumerate() {
        let mut d = [0u8; 4];
        d[..ch.len()].copy_from_slice(ch);
        c.store(at + 4 * i as u32, u32::from_le_bytes(d));
    }
}

#[test]
fn the_system_directory_is_made_only_when_a_path_reaches_it() {
    // A run that never names C:\OS2 (nor CMD.EXE) leaves none.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("HELLO.EXE"), hello(b"hi\r\n")).unwrap();
    std::fs::create_dir(dir.path().join("SUB")).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "HELLO.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut p);
    assert_eq!(p.run(), Outcome::Exited(0));
    assert_eq!(out.text(), "hi\r\n");
    assert_eq!(p.system_dir(), None);

    // DosQueryPathInfo("C:\OS2\CMD.EXE") and DosFindFirst("C:\os2\*")
    // see CMD.EXE, of the same size; the program exits with that size.
    let mut c = Code::new();
    store_bytes(&mut c, DATA + 0x200, b"C:\\OS2\\CMD.EXE\0");
    store_bytes(&mut c, DATA + 0x210, b"C:\\os2\\*\0");
    // DosQueryPathInfo(name, FIL_STANDARD, DATA+0x240, 24)
    c.push(24).push(DATA + 0x240).push(1).push(DATA + 0x200);
    c.call("DOSCALLS", 223, 16).expect(0, 0xE1);
    // DosFindFirst(pattern, &hdir (HDIR_CREATE), normal files,
    // DATA+0x300, 0x100, &count (1), FIL_STANDARD)
    c.store(DATA + 0x220, 0xFFFF_FFFF).store(DATA + 0x224, 1);
    c.push(1)
        .push(DATA + 0x224)
        .push(0x100)
        .push(DATA + 0x300)
        .push(0)
        .push(DATA + 0x220)
        .push(DATA + 0x210);
    c.call("DOSCALLS", 264, 28).expect(0, 0xE2);
    c.load_eax(DATA + 0x224).expect(1, 0xE3);
    // FILEFINDBUF3: cbFile at 16, cchName at 28, achName at 29.
    c.load_eax(DATA + 0x300 + 16)
        .sub_eax(DATA + 0x240 + 12)
        .expect(0, 0xE4);
    c.load_eax(DATA + 0x300 + 28)
        .expect(u32::from_le_bytes(*b"\x07CMD"), 0xE5);
    c.load_eax(DATA + 0x300 + 32)
        .expect(u32::from_le_bytes(*b".EXE"), 0xE6);
    c.load_eax(DATA + 0x240 + 12);
    std::fs::write(dir.path().join("Q.EXE"), c.exit_eax()).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "Q.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    let _out = common::capture_console(&mut p);
    assert_eq!(p.system_dir(), None);
    let outcome = p.run();
    let system = p.system_dir().expect("C:\\OS2 was reached").to_path_buf();
    let size = std::fs::metadata(system.join("CMD.EXE")).unwrap().len();
    assert!(size > 0xFF, "a size no error tag can be");
    assert_eq!(outcome, Outcome::Exited(size as u32));
    // Nothing of it is in the sandbox, and it goes with the process.
    assert!(!dir.path().join("OS2").exists());
    drop(p);
    assert!(!system.exists(), "{} is left behind", system.display());
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

#[test]
fn goto_shift_for_and_call_in_batch_files() {
    let bat = "@echo off\r\n\
               :again\r\n\
               if \"%1\"==\"\" goto done\r\n\
               echo arg %1\r\n\
               shift\r\n\
               goto again\r\n\
               :done\r\n\
               for %%f in (b*.txt x,y) do echo item %%f\r\n\
               call SUB one\r\n\
               echo back\r\n\
               goto nowhere\r\n\
               echo not reached\r\n";
    let files = [
        ("T.CMD", bat.as_bytes().to_vec()),
        ("SUB.CMD", b"echo in sub %1\r\n".to_vec()),
        ("B1.TXT", b"1".to_vec()),
        ("B2.TXT", b"2".to_vec()),
    ];
    let r = cmd(&files, &[], &["/C", "T a b & echo after"], b"");
    assert_eq!(
        r.text,
        "arg a\r\narg b\r\nitem B1.TXT\r\nitem B2.TXT\r\nitem x\r\nitem y\r\n\
         in sub one\r\nback\r\n\
         SYS1011: The system cannot find the batch label nowhere.\r\nafter\r\n"
    );
    assert_eq!(r.outcome, Outcome::Exited(0));
    // A loop that never ends stops at the batch line limit.
    let files = [("L.CMD", b":top\r\ngoto top\r\n".to_vec())];
    let r = cmd(&files, &[], &["/C", "L"], b"");
    assert_eq!(r.outcome, Outcome::Exited(1), "{}", r.text);
    // FOR on the command line takes %v.
    let r = cmd(&[], &[], &["/C", "for %v in (1 2) do echo n%v"], b"");
    assert_eq!(r.text, "n1\r\nn2\r\n");
    let r = cmd(&[], &[], &["/C", "for %v (1) do echo"], b"");
    assert_eq!(r.outcome, Outcome::Exited(1));
}

#[test]
fn dir_lists_entries_with_sizes_and_a_total() {
    let files = [("A.TXT", b"abc".to_vec()), ("SUB/B.DAT", vec![0; 1000])];
    let r = cmd(
        &files,
        &[],
        &["/C", "dir & dir /b sub & dir sub\\*.dat & dir *.none"],
        b"",
    );
    let t = r.text;
    assert!(t.contains(" Directory of C:\\\r\n"), "{t}");
    let line_of = |name: &str| {
        t.lines()
            .find(|l| l.ends_with(name))
            .unwrap_or("")
            .to_string()
    };
    assert!(line_of(" A.TXT").contains("           3  "), "{t}");
    assert!(line_of(" SUB").contains("<DIR>"), "{t}");
    assert!(
        t.contains("        1 file(s)            3 bytes used\r\n"),
        "{t}"
    );
    assert!(t.contains("\r\nB.DAT\r\n"), "{t}");
    assert!(t.contains(" Directory of C:\\sub\r\n"), "{t}");
    assert!(
        t.contains("        1 file(s)         1000 bytes used\r\n"),
        "{t}"
    );
    assert!(
        t.ends_with("SYS0002: The system cannot find the file specified.\r\n"),
        "{t}"
    );
    assert_eq!(r.outcome, Outcome::Exited(1));
}

/// A parent that gives CMD.EXE (no /C: it reads commands) the read end
/// of a pipe as standard input, then writes two commands into the pipe
/// a while apart: CMD.EXE must wait for them, not take the empty pipe
/// for the end of its input. The parent exits with CMD.EXE's code.
#[test]
fn cmd_waits_for_commands_on_a_pipe() {
    use common::threaded::{Arg, Prog};
    let mut p = Prog::new();
    p.start_main();
    let (r, w, zero) = (DATA + 0x100, DATA + 0x104, DATA + 0x108);
    let (name, args, res, buf) = (DATA + 0x140, DATA + 0x180, DATA + 0x1C0, DATA + 0x200);
    p.api(239, &[Arg::Imm(r), Arg::Imm(w), Arg::Imm(0)], 0, 0xE0);
    // Standard input becomes the read end.
    p.c.store(zero, 0);
    p.api(260, &[Arg::Mem(r), Arg::Imm(zero)], 0, 0xE1);
    p.api(257, &[Arg::Mem(r)], 0, 0xE2);
    p.text(name, "C:\\OS2\\CMD.EXE").bytes(args, b"CMD\0\0\0");
    let exec = [0, 0, 2, args, 0, res, name].map(Arg::Imm);
    p.api(283, &exec, 0, 0xE3);
    p.c.load_eax(res);
    p.store_eax(DATA + 0x1F0);
    for (i, line) in ["echo from the pipe\r\n", "exit 3\r\n"].iter().enumerate() {
        p.sleep(20);
        let at = buf + 0x40 * i as u32;
        p.text(at, line);
        let n = line.len() as u32;
        let write = [
            Arg::Mem(w),
            Arg::Imm(at),
            Arg::Imm(n),
            Arg::Imm(DATA + 0x1F8),
        ];
        p.api(282, &write, 0, 0xE4);
    }
    let wait = [
        Arg::Imm(0),
        Arg::Imm(0),
        Arg::Imm(res),
        Arg::Imm(DATA + 0x1F4),
        Arg::Mem(DATA + 0x1F0),
    ];
    p.api(280, &wait, 0, 0xE5);
    p.c.load_eax(res + 4);
    p.c.c.extend([0x50, 0x6A, 0x01]);
    p.c.call("DOSCALLS", 234, 8);
    let exe = p.finish();
    let r = cmd_program(exe);
    assert_eq!(r.0, Outcome::Exited(3), "{}", r.1);
    assert_eq!(r.1, "from the pipe\r\n");
}

/// Run T.EXE (with the console captured, no input).
fn cmd_program(exe: Vec<u8>) -> (Outcome, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), exe).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(20_000_000);
    let mut p = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut p);
    let o = p.run();
    (o, out.text())
}

/// A filter: writes "got:", then copies its standard input to its
/// standard output until the end of input, and exits with `code`.
fn filter(code: u32) -> Vec<u8> {
    let mut c = Code::new();
    c.store(DATA + 0x300, u32::from_le_bytes(*b"got:"));
    c.push(DATA + 0x18)
        .push(4)
        .push(DATA + 0x300)
        .push(1)
        .call("DOSCALLS", 282, 16);
    let top = c.c.len();
    c.push(DATA + 0x14)
        .push(0x100)
        .push(DATA + 0x200)
        .push(0)
        .call("DOSCALLS", 281, 16);
    // cmp dword [DATA+0x14], 0; jz out
    c.c.extend([0x83, 0x3D]);
    c.c.extend((DATA + 0x14).to_le_bytes());
    c.c.push(0);
    let out = c.jcc(JZ, None);
    c.push(DATA + 0x18)
        .push_mem(DATA + 0x14)
        .push(DATA + 0x200)
        .push(1)
        .call("DOSCALLS", 282, 16);
    c.c.push(0xE9);
    let rel = top as i32 - (c.c.len() as i32 + 4);
    c.c.extend(rel.to_le_bytes());
    c.land(out);
    c.push(code);
    c.c.push(0x58);
    c.exit_eax()
}

#[test]
fn pipes_join_programs_and_commands() {
    let files = [("HI.EXE", hello(b"piped\r\n")), ("FILT.EXE", filter(5))];
    // A program into a program: ERRORLEVEL is the last one's.
    let r = cmd(&files, &[], &["/C", "HI | FILT"], b"");
    assert_eq!(r.text, "got:piped\r\n");
    assert_eq!(r.outcome, Outcome::Exited(5));
    // Three stages, then the next command of the line.
    let r = cmd(&files, &[], &["/C", "HI | FILT | FILT & echo after"], b"");
    assert_eq!(r.text, "got:got:piped\r\nafter\r\n");
    // An internal command into a program; a redirection inside a stage;
    // `||` is still a join.
    let r = cmd(
        &files,
        &[],
        &[
            "/C",
            "echo one | FILT > O.TXT & type O.TXT & FILT < O.TXT || echo no",
        ],
        b"",
    );
    assert_eq!(r.text, "got:one\r\ngot:got:one\r\nno\r\n");
    assert_eq!(r.outcome, Outcome::Exited(0));
    let r = cmd(&files, &[], &["/C", "nosuch | FILT"], b"");
    assert!(r.text.starts_with("SYS1041"), "{}", r.text);
    assert!(r.text.ends_with("got:"), "{}", r.text);
}
