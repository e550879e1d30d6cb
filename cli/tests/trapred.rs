//! `os2trace trapred` as a user runs it: scripted with -f or stdin, PRINTER's
//! print file, STOP deleting the file unless held, corrupt files refused.

mod common;

use std::fs;
use std::path::Path;

use cptrap::{Entry, Interface, InterfaceRecord, Recorder, Selection};

fn write_file(path: &Path) {
    let mut rec = Recorder::new(Selection::all(), 4);
    let mut call = Entry::api_call("DOSCALLS", 282, 0, 0x0001_0040);
    call.frame.time = 10;
    rec.record_entry(&call);
    for code in 1..=3u16 {
        rec.record_interface(
            InterfaceRecord::new(Interface::VirtualMachine, code, b"DATA1234"),
            1,
            1,
            20 + u64::from(code),
        );
    }
    let mut bytes = Vec::new();
    rec.finish(&mut bytes).unwrap();
    fs::write(path, bytes).unwrap();
}

fn trapred(dir: &Path, args: &[&str], stdin: &str) -> (i32, String, String) {
    let args: Vec<&str> = std::iter::once("trapred")
        .chain(args.iter().copied())
        .collect();
    let out = common::os2trace_with_input(dir, &args, stdin);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn script_from_stdin_and_from_a_file_give_the_same_dialogue() {
    let dir = tempfile::tempdir().unwrap();
    write_file(&dir.path().join("T.CPTRAP"));
    let script = "sel type 3e code 2\ntype *\ntypeb *\nquit\n";
    fs::write(dir.path().join("s.txt"), script).unwrap();
    let (code, piped, err) = trapred(dir.path(), &["T.CPTRAP"], script);
    assert_eq!(code, 0, "{err}");
    let (code, scripted, _) = trapred(dir.path(), &["T.CPTRAP", "-f", "s.txt"], "");
    assert_eq!(code, 0);
    assert_eq!(piped, scripted);
    assert_eq!(piped.matches("CODE 2 (X'0002')").count(), 2, "{piped}");
    assert!(
        !piped.contains("CODE 1 (") && !piped.contains("CODE 3 ("),
        "{piped}"
    );
    assert!(dir.path().join("T.CPTRAP").exists());
}

#[test]
fn printer_writes_the_print_file() {
    let dir = tempfile::tempdir().unwrap();
    write_file(&dir.path().join("T.CPTRAP"));
    let (code, out, _) = trapred(dir.path(), &["T.CPTRAP"], "SELECT TYPE 02\nP *\n");
    assert_eq!(code, 0);
    assert!(out.contains("1 RECORDS PRINTED"), "{out}");
    let printed = fs::read_to_string(dir.path().join("T.CPTRAP.print")).unwrap();
    assert!(
        printed.starts_with("RECORD 1  TYPE 02 API CALL"),
        "{printed}"
    );
    assert!(printed.contains("DOSCALLS.282"), "{printed}");
}

#[test]
fn stop_deletes_the_file_unless_held() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("T.CPTRAP");
    write_file(&path);
    let (code, out, _) = trapred(dir.path(), &["T.CPTRAP", "--hold"], "STOP\n");
    assert_eq!(code, 0);
    assert!(path.exists(), "{out}");
    let (code, _, _) = trapred(dir.path(), &["T.CPTRAP"], "HOLD\nSTOP\n");
    assert_eq!(code, 0);
    assert!(path.exists());
    let (code, out, _) = trapred(dir.path(), &["T.CPTRAP"], "STOP\n");
    assert_eq!(code, 0);
    assert!(!path.exists());
    assert!(out.ends_with("FILE T.CPTRAP DELETED\n"), "{out}");
}

#[test]
fn corrupt_file_fails_with_the_offset_and_bad_usage_is_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("T.CPTRAP");
    write_file(&path);
    let mut bytes = fs::read(&path).unwrap();
    bytes[16] = 0x7F;
    fs::write(&path, bytes).unwrap();
    let (code, _, err) = trapred(dir.path(), &["T.CPTRAP"], "");
    assert_eq!(code, 1);
    assert!(err.contains("byte offset 16"), "{err}");
    assert_eq!(trapred(dir.path(), &[], "").0, 2);
    assert_eq!(trapred(dir.path(), &["T.CPTRAP", "--frob"], "").0, 2);
}
