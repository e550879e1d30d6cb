//! `os2trace demo`: the whole pipeline, end to end, deterministic.

use std::process::Command;

fn demo() -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_os2trace"))
        .arg("demo")
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn demo_compiles_traces_and_formats_the_sample_dll() {
    let text = demo();
    for want in [
        "Creating TDF file: C:\\TPDLL16.TDF\t # records = 4",
        "   | DLLCAL16 calls TPDLL16: PUTMSG by name, ADDNUMS by ordinal",
        "   exited with code 0",
        "minor 0002 at 0001:00000012",
        "MAJ=00C2 MIN=0002 PID=0001 CONTEXT=API:PROTECT DYNAMIC",
        "      TPDLL16 ADDNUMS arguments",
        "      ret=000F:0015 b=0003 a=0002",
        "      string DLLCAL16 calls TPDLL16: PUTMSG by name, ADDNUMS by ordinal",
        "      -> logged major C8 minor 0001, 20 cycles: 34 12 CD AB",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
}

#[test]
fn demo_output_is_byte_identical_across_runs() {
    assert_eq!(demo(), demo());
}

#[test]
fn demo_prints_its_commands_and_keep_keeps_the_files() {
    let text = demo();
    assert!(
        text.contains("   $ os2trace testprogs build DIR\n"),
        "{text}"
    );
    assert!(
        text.contains("   $ os2trace run --root DIR --trace TPDLL16"),
        "{text}"
    );
    assert!(text.contains("\nNext, try:\n"), "{text}");
    let dir = tempfile::tempdir().unwrap();
    let keep = dir.path().join("kept");
    let out = Command::new(env!("CARGO_BIN_EXE_os2trace"))
        .args(["demo", "--keep", keep.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("the files are in {} (kept)", keep.display())),
        "{text}"
    );
    for f in ["DLLCAL16.EXE", "TPDLL16.TDF", "TRC00C2.TFF"] {
        assert!(keep.join(f).is_file(), "{f}");
    }
    // The printed command works there.
    let out = Command::new(env!("CARGO_BIN_EXE_os2trace"))
        .current_dir(&keep)
        .args([
            "run",
            "--root",
            ".",
            "--trace",
            "TPDLL16",
            "--query",
            "DLLCAL16.EXE",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("DTO 0: module TPDLL16"));
}
