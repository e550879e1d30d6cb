//! `os2trace run` against hostile guests and awkward outputs (issue 13's
//! CI cases): a 4 GiB DosPutMessage under `ulimit -v`, `--save` onto a
//! symlink, a FIFO and /dev/full or onto one of the run's inputs, Ctrl-C
//! during a traced run, two traced runs under different host clocks, and
//! a program's exit codes told from os2trace's own (`--exit-code-file`).

mod common;

use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{os2trace, stdout as text};
use loader::{Address, Module};
use testprogs::bare::lx_program as lx;

fn prepared() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    text(&os2trace(dir.path(), &["testprogs", "build", "."]));
    text(&os2trace(
        dir.path(),
        &["trcust", "TPDLL16.TSF", "/M=TPDLL16.MAP"],
    ));
    dir
}

/// A traced run of DLLCAL16 saving to `save`; `--trace TPDLL16` is TRACE
/// ON's spelling (the bare name finds TPDLL16.TDF).
fn traced(dir: &Path, save: &str) -> std::process::Output {
    os2trace(
        dir,
        &[
            "run",
            "--root",
            ".",
            "--trace",
            "TPDLL16",
            "--save",
            save,
            "DLLCAL16.EXE",
        ],
    )
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn dos_put_message_ffffffff_under_ulimit() {
    let dir = tempfile::tempdir().unwrap();
    // push 0x20000; push 0xFFFFFFFF; push 1; call MSG.5; add esp,12;
    // push eax; push 1; call DOSCALLS.234
    let mut c = vec![0x68, 0, 0, 2, 0, 0x68, 0xFF, 0xFF, 0xFF, 0xFF, 0x6A, 1];
    let put = c.len() as u32;
    c.extend([0xE8, 0, 0, 0, 0, 0x83, 0xC4, 12, 0x50, 0x6A, 1]);
    let exit = c.len() as u32;
    c.extend([0xE8, 0, 0, 0, 0]);
    let bytes = lx(&c, &[(put, "MSG", 5), (exit, "DOSCALLS", 234)]);
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    let out = common::os2trace_limited(
        dir.path(),
        &["run", "--exit-code-file", "RC", "--root", ".", "T.EXE"],
        2_000_000,
    );
    let rc = std::fs::read_to_string(dir.path().join("RC"));
    assert_eq!(
        rc.as_deref().ok(),
        Some("487\n"),
        "ERROR_INVALID_ADDRESS: {out:?}"
    );
}

#[test]
fn save_onto_a_symlink_writes_its_target() {
    let dir = prepared();
    text(&traced(dir.path(), "PLAIN.SAV"));
    let plain = std::fs::read(dir.path().join("PLAIN.SAV")).unwrap();
    std::os::unix::fs::symlink("REAL.SAV", dir.path().join("LINK.SAV")).unwrap();
    std::fs::write(dir.path().join("REAL.SAV"), b"old").unwrap();
    text(&traced(dir.path(), "LINK.SAV"));
    let link = std::fs::symlink_metadata(dir.path().join("LINK.SAV")).unwrap();
    assert!(link.file_type().is_symlink(), "the link stays a link");
    assert_eq!(std::fs::read(dir.path().join("REAL.SAV")).unwrap(), plain);
}

#[test]
fn save_onto_a_fifo_writes_through_it() {
    let dir = prepared();
    text(&traced(dir.path(), "PLAIN.SAV"));
    let plain = std::fs::read(dir.path().join("PLAIN.SAV")).unwrap();
    let fifo = dir.path().join("PIPE");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let reader = std::thread::spawn(move || std::fs::read(fifo).unwrap());
    text(&traced(dir.path(), "PIPE"));
    assert_eq!(reader.join().unwrap(), plain);
    let meta = std::fs::symlink_metadata(dir.path().join("PIPE")).unwrap();
    assert!(!meta.is_file(), "still a FIFO");
}

#[test]
fn save_onto_dev_null_keeps_the_device_and_new_files_get_the_umask_mode() {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let dir = prepared();
    text(&traced(dir.path(), "/dev/null"));
    let meta = std::fs::metadata("/dev/null").unwrap();
    assert!(
        meta.file_type().is_char_device(),
        "/dev/null stays a device"
    );
    for (umask, mode) in [("022", 0o644), ("077", 0o600)] {
        let save = format!("U{umask}.SAV");
        let out = Command::new("sh")
            .current_dir(dir.path())
            .arg("-c")
            .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_os2trace"))
            .args(["run", "--root", ".", "--trace", "TPDLL16", "--save", &save])
            .arg("DLLCAL16.EXE")
            .output()
            .unwrap();
        text(&out);
        let got = std::fs::metadata(dir.path().join(&save)).unwrap();
        assert_eq!(got.permissions().mode() & 0o777, mode, "umask {umask}");
    }
}

#[test]
fn output_to_dev_full_fails_and_leaves_no_file() {
    if !Path::new("/dev/full").exists() {
        let _ = writeln!(std::io::stderr(), "skipped: no /dev/full");
        return;
    }
    let dir = prepared();
    let before = entries(dir.path());
    let out = traced(dir.path(), "/dev/full");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot write /dev/full"), "{err}");
    assert!(!err.contains(".tmp"), "{err}");
    let out = os2trace(
        dir.path(),
        &["rpn", "asm", "DLLCAL16.RPN", "-o", "/dev/full"],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(entries(dir.path()), before, "nothing was left behind");
}

#[test]
fn trcust_onto_dev_full_fails_and_removes_the_tff_it_wrote() {
    if !Path::new("/dev/full").exists() {
        let _ = writeln!(std::io::stderr(), "skipped: no /dev/full");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    text(&os2trace(dir.path(), &["testprogs", "build", "."]));
    let before = entries(dir.path());
    // The TFF is written first, then the TDF fails: the run's TFF goes
    // too, and /dev/full is written as named (no /dev/full.TDF).
    let out = os2trace(
        dir.path(),
        &["trcust", "TPDLL16.TSF", "/dev/full", "/M=TPDLL16.MAP"],
    );
    let console = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{console}");
    assert!(
        console.contains("error writing to file : /dev/full\n"),
        "{console}"
    );
    assert!(!Path::new("/dev/full.TDF").exists());
    assert_eq!(entries(dir.path()), before, "no TFF, TDF or temp file left");
    // dtrace buildtdf the same way.
    let out = os2trace(
        dir.path(),
        &["dtrace", "buildtdf", "TPDLL16.RPN", "/dev/full"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot write /dev/full"), "{err}");
    assert!(!Path::new("/dev/full.TDF").exists());
    assert_eq!(entries(dir.path()), before, "no TDF or temp file left");
}

/// Runs `os2trace ARGS` in `dir` with the files it writes limited to
/// `blocks` 512-byte blocks (`ulimit -f`, SIGXFSZ ignored): a write past
/// it fails as on a full disk.
fn os2trace_small_disk(dir: &Path, args: &[&str], blocks: u32) -> std::process::Output {
    Command::new("sh")
        .current_dir(dir)
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f {blocks} && exec \"$0\" \"$@\""
        ))
        .arg(env!("CARGO_BIN_EXE_os2trace"))
        .args(args)
        .output()
        .expect("runs sh")
}

#[test]
fn a_full_disk_leaves_no_temp_or_half_written_file() {
    let dir = prepared();
    let d = dir.path();
    // testprogs build: files over 1 KB fail. Those written are whole (as
    // an unlimited build writes them), the others absent, no temp left.
    let out = os2trace_small_disk(d, &["testprogs", "build", "small"], 2);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains(".tmp"), "{err}");
    let small = entries(&d.join("small"));
    for name in &small {
        let written = std::fs::read(d.join("small").join(name)).unwrap();
        let whole = std::fs::read(d.join(name));
        assert_eq!(written, whole.unwrap_or_default(), "{name} is whole");
    }
    assert!(
        small.len() < entries(d).len(),
        "the limit stopped the build: {small:?}"
    );
    // run --save: the 4 KB save file does not fit in 2 KB.
    let before = entries(d);
    let out = os2trace_small_disk(
        d,
        &[
            "run",
            "--root",
            ".",
            "--trace",
            "TPDLL16",
            "--save",
            "S.SAV",
            "DLLCAL16.EXE",
        ],
        4,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot write S.SAV"), "{err}");
    assert!(!err.contains(".tmp"), "{err}");
    assert_eq!(entries(d), before, "no S.SAV, no temp file");
}

#[test]
fn sigint_during_a_traced_run_still_writes_save() {
    let dir = tempfile::tempdir().unwrap();
    // L: nop; jmp L  (a tracepoint on the NOP hits on every turn)
    std::fs::write(dir.path().join("T.EXE"), lx(&[0x90, 0xEB, 0xFD], &[])).unwrap();
    std::fs::write(
        dir.path().join("T.RPN"),
        "major=0xCE\nname=TESTLX\n\nminor=1\nobject=1\noffset=0\nopcode=0x90\n  Push EAX\n  Log DN,1\n",
    )
    .unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_os2trace"))
        .current_dir(dir.path())
        .args([
            "run",
            "--root",
            ".",
            "--apply",
            "T",
            "--save",
            "S.SAV",
            "--query",
            "--tracefmt",
            "T.EXE",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("DTO 0: module TESTLX"),
        "QUERY printed: {stdout}"
    );
    assert!(
        stdout.contains("MAJ=00CE MIN=0001"),
        "TRACEFMT printed: {stdout}"
    );
    let save = std::fs::read(dir.path().join("S.SAV")).unwrap();
    let records = text(&os2trace(dir.path(), &["tracefmt", "S.SAV", "--raw"]));
    assert!(
        !save.is_empty() && records.lines().count() > 10,
        "{records}"
    );
}

#[test]
fn two_traced_runs_with_different_host_clocks_give_identical_buffers() {
    let has_faketime = Command::new("faketime")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let dir = tempfile::tempdir().unwrap();
    text(&os2trace(dir.path(), &["testprogs", "build", "."]));
    text(&os2trace(
        dir.path(),
        &["trcust", "FILEIO32.TSF", "/M=FILEIO32.MAP"],
    ));
    let run = |clock: &str, save: &str| {
        let bin = env!("CARGO_BIN_EXE_os2trace");
        let args = [
            "run",
            "--root",
            ".",
            "--trace",
            "FILEIO32",
            "--save",
            save,
            "FILEIO32.EXE",
        ];
        let out = if has_faketime {
            Command::new("faketime")
                .current_dir(dir.path())
                .arg(clock)
                .arg(bin)
                .args(args)
                .output()
                .unwrap()
        } else {
            // No faketime: the host clock moves on between the runs.
            std::thread::sleep(Duration::from_millis(2100));
            Command::new(bin)
                .current_dir(dir.path())
                .args(args)
                .output()
                .unwrap()
        };
        assert!(out.status.code().is_some(), "{out:?}");
        std::fs::read(dir.path().join(save)).unwrap()
    };
    if !has_faketime {
        let _ = writeln!(
            std::io::stderr(),
            "faketime not installed: comparing runs 2 s apart instead"
        );
    }
    let a = run("2001-02-03 04:05:06", "A.SAV");
    let b = run("2023-11-12 13:14:15", "B.SAV");
    assert!(a.len() > 100);
    assert_eq!(a, b);
}

#[test]
fn module_names_cannot_send_escape_sequences() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = Module::new_lx("E\x1b[2JVIL");
    m.add_object(0x2005, 1, &[0xC3]);
    m.start = Some(Address {
        object: 1,
        offset: 0,
    });
    std::fs::write(dir.path().join("E.EXE"), loader::write(&m).unwrap()).unwrap();
    let out = os2trace(dir.path(), &["exehdr", "E.EXE"]);
    let all = [out.stdout, out.stderr].concat();
    assert!(!all.contains(&0x1B), "{}", String::from_utf8_lossy(&all));
    assert!(String::from_utf8_lossy(&all).contains("E\\x1B[2JVIL"));
}

#[test]
fn guest_text_in_the_api_log_cannot_send_escape_sequences() {
    let dir = tempfile::tempdir().unwrap();
    // DosDelete("A<ESC>[2JB") from a module whose imports name it, then
    // DosExit(1, rc); the string sits after the code (object 1 at 0x10000).
    let mut c = vec![0x68, 0, 0, 0, 0];
    let delete = c.len() as u32;
    c.extend([0xE8, 0, 0, 0, 0, 0x83, 0xC4, 4, 0x50, 0x6A, 1]);
    let exit = c.len() as u32;
    c.extend([0xE8, 0, 0, 0, 0]);
    let string = 0x10000 + c.len() as u32;
    c[1..5].copy_from_slice(&string.to_le_bytes());
    c.extend(b"A\x1b[2JB\0");
    let bytes = lx(&c, &[(delete, "DOSCALLS", 259), (exit, "DOSCALLS", 234)]);
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    let out = os2trace(dir.path(), &["run", "--root", ".", "--api-log", "T.EXE"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("DosDelete(\"A\\x1B[2JB\")"), "{err}");
    assert!(
        !out.stderr.contains(&0x1B) && !out.stdout.contains(&0x1B),
        "{err}"
    );
}

#[test]
fn save_onto_one_of_the_runs_inputs_is_refused() {
    let dir = prepared();
    let d = dir.path();
    let before = entries(d);
    // The program, the TDF (also when --trace names it bare) and the
    // trace program applied.
    for (victim, extra) in [
        ("DLLCAL16.EXE", None),
        ("TPDLL16.TDF", None),
        ("DLLCAL16.RPN", Some("DLLCAL16.RPN")),
    ] {
        let kept = std::fs::read(d.join(victim)).unwrap();
        let mut args = vec!["run", "--root", ".", "--trace", "TPDLL16"];
        if let Some(rpn) = extra {
            args.extend(["--apply", rpn]);
        }
        args.extend(["--save", victim, "DLLCAL16.EXE"]);
        let out = os2trace(d, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{victim}: {stderr}");
        assert!(
            stderr.contains(&format!("{victim} is an input of this command")),
            "{stderr}"
        );
        assert!(std::fs::read(d.join(victim)).unwrap() == kept, "{victim}");
    }
    // Nor the exit code file onto the program.
    let out = os2trace(
        d,
        &[
            "run",
            "--root",
            ".",
            "--exit-code-file",
            "DLLCAL16.EXE",
            "DLLCAL16.EXE",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(entries(d), before, "nothing written, nothing left");
}

/// A program that ends with `DosExit(1, code)`, or with ud2 (a guest
/// fault) when `code` is None.
fn exiting(code: Option<u32>) -> Vec<u8> {
    match code {
        Some(code) => {
            // push code; push 1; call DOSCALLS.234
            let mut c = vec![0x68];
            c.extend(code.to_le_bytes());
            c.extend([0x6A, 1, 0xE8, 0, 0, 0, 0]);
            lx(&c, &[(7, "DOSCALLS", 234)])
        }
        None => lx(&[0x0F, 0x0B], &[]),
    }
}

#[test]
fn exit_code_file_tells_the_programs_code_from_os2traces_own() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rc = || std::fs::read_to_string(d.join("RC")).ok();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--exit-code-file", "RC", "--root", "."];
        args.extend_from_slice(extra);
        args.push("T.EXE");
        let out = os2trace(d, &args);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // The program's 1, 2 (bad usage's code) and 101 (a panic's): the
    // same exit status as os2trace's own, but written to the file, and
    // os2trace says nothing of its own. A code above 255 exits 1 (the
    // README says so): only the file tells it from a failure.
    for (code, status) in [(0u32, 0), (1, 1), (2, 2), (101, 101), (258, 1)] {
        std::fs::write(d.join("T.EXE"), exiting(Some(code))).unwrap();
        let (got, stderr) = run(&[]);
        assert_eq!(got, Some(status), "program exiting {code}: {stderr}");
        assert_eq!(rc(), Some(format!("{code}\n")));
        assert_eq!(stderr, "", "program exiting {code}");
    }
    // os2trace's own: a guest fault and a limit exit 1 and leave no file,
    // not even the one of the run before; each says why.
    std::fs::write(d.join("T.EXE"), exiting(None)).unwrap();
    let (got, stderr) = run(&[]);
    assert_eq!(got, Some(1));
    assert_eq!(rc(), None);
    assert!(stderr.starts_with("os2trace run: "), "{stderr}");
    std::fs::write(d.join("T.EXE"), exiting(Some(7))).unwrap();
    let (got, stderr) = run(&["--max-insns", "1"]);
    assert_eq!(got, Some(1));
    assert_eq!(rc(), None);
    assert!(stderr.contains("instruction limit"), "{stderr}");
    // Bad usage: 2, a usage message, and no file.
    let (got, stderr) = run(&["--tracebuf", "0"]);
    assert_eq!(got, Some(2));
    assert_eq!(rc(), None);
    assert!(stderr.contains("--tracebuf"), "{stderr}");
}
