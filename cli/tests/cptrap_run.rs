//! `os2trace run --cptrap` on CPTRAP32 (three virtual machine interface
//! records of 8, 264 and 300 bytes), then TRAPRED over the file: the
//! records forward and backward, selected by code (a golden dialogue).

use std::path::Path;
use std::process::Command;

fn os2trace(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_os2trace"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/cptrap")
        .join(name);
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(actual, expected, "{} (BLESS=1 rewrites it)", path.display());
}

#[test]
fn trapred_shows_the_vm_interface_records_of_a_run_forward_backward_and_by_code() {
    let dir = tempfile::tempdir().unwrap();
    testprogs::cptrap32().unwrap().write_to(dir.path()).unwrap();
    let (code, out, err) = os2trace(
        dir.path(),
        &[
            "run",
            "--root",
            ".",
            "--cptrap",
            "RUN.CPTRAP",
            "--cptrap-select",
            "TYPE 3E 02",
            "CPTRAP32.EXE",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        err.contains("cptrap: 15 records in 1 blocks to RUN.CPTRAP"),
        "{err}"
    );
    std::fs::write(
        dir.path().join("script"),
        "select type 3e\ntop\ntype *\ntypeb *\nselect code 1 3\ntop\ntype *\nquit\n",
    )
    .unwrap();
    let (code, dialogue, err) = os2trace(dir.path(), &["trapred", "RUN.CPTRAP", "-f", "script"]);
    assert_eq!(code, 0, "{err}");
    golden("trapred_cptrap32.txt", &dialogue);
    // The 300-byte record came through cut to 264 (data + 8 = 272).
    assert!(
        dialogue.contains("CODE 3 (X'0003')  LENGTH 272  DATA 264 BYTES"),
        "{dialogue}"
    );
}

#[test]
fn run_trace_on_a_static_major_logs_dos_sys_trace_records() {
    let dir = tempfile::tempdir().unwrap();
    testprogs::systrc16().unwrap().write_to(dir.path()).unwrap();
    let (code, _, err) = os2trace(dir.path(), &["run", "--root", ".", "SYSTRC16.EXE"]);
    assert_eq!(
        code, 150,
        "not selected: ERROR_SYSTEM_TRACE is the exit code\n{err}"
    );
    let (code, out, err) = os2trace(
        dir.path(),
        &[
            "run",
            "--root",
            ".",
            "--trace",
            "0xF5(1)",
            "--tracefmt",
            ".",
            "SYSTRC16.EXE",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("MAJ=00F5 MIN=0001"), "{out}");
    assert!(!out.contains("MIN=0002"), "{out}");
}
