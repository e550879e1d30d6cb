//! `os2trace run PROGRAM` with PROGRAM a host path (issue 13, item 1):
//! inside or outside --root, DLLs beside it, and the safe default root.

mod common;

use common::{os2trace, stdout};

const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/samples/ne/test-asm16.exe"
);

fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_host_path_inside_or_outside_the_root_runs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::copy(SAMPLE, root.join("test-asm16.exe")).unwrap();
    let inside = root.join("test-asm16.exe");
    let out = os2trace(
        dir.path(),
        &[
            "run",
            "--root",
            root.to_str().unwrap(),
            inside.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = os2trace(dir.path(), &["run", "--root", "empty", SAMPLE]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(entries(&empty).is_empty());
}

#[test]
fn dlls_are_found_beside_a_program_outside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    stdout(&os2trace(dir.path(), &["testprogs", "build", "progs"]));
    std::fs::create_dir(dir.path().join("c")).unwrap();
    let out = os2trace(dir.path(), &["run", "--root", "c", "progs/DLLCAL16.EXE"]);
    let text = stdout(&out);
    assert!(text.contains("DLLCAL16 calls TPDLL16"), "{text}");
}

#[test]
fn without_root_the_program_cannot_write_beside_itself() {
    let dir = tempfile::tempdir().unwrap();
    stdout(&os2trace(dir.path(), &["testprogs", "build", "progs"]));
    let before = entries(&dir.path().join("progs"));
    // FILEIO32 creates, writes and reads back a file in C:\.
    let out = os2trace(dir.path(), &["run", "progs/FILEIO32.EXE"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        entries(&dir.path().join("progs")),
        before,
        "nothing written beside the program"
    );
    // An OS/2 path without --root is a usage error that says what to do.
    let out = os2trace(dir.path(), &["run", "NOSUCH.EXE"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--root"),
        "{out:?}"
    );
}

#[test]
fn a_bare_trace_name_finds_its_tdf_in_the_root_or_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    stdout(&os2trace(d, &["testprogs", "build", "c"]));
    stdout(&os2trace(
        &d.join("c"),
        &["trcust", "TPDLL16.TSF", "/M=TPDLL16.MAP"],
    ));
    let query = |cwd: &std::path::Path, root: &str| {
        let out = os2trace(
            cwd,
            &[
                "run",
                "--root",
                root,
                "--trace",
                "TPDLL16",
                "--apply",
                "DLLCAL16",
                "--query",
                "DLLCAL16.EXE",
            ],
        );
        stdout(&out)
    };
    // In the root (the current directory is its parent, without a TDF).
    let text = query(d, "c");
    assert!(text.contains("module TPDLL16.DLL"), "{text}");
    assert!(text.contains("module DLLCAL16 "), "{text}");
    // In the current directory (the root holds the programs only).
    std::fs::create_dir(d.join("here")).unwrap();
    for f in ["TPDLL16.TDF", "DLLCAL16.RPN"] {
        std::fs::rename(d.join("c").join(f), d.join("here").join(f)).unwrap();
    }
    let root = d.join("c");
    let text = query(&d.join("here"), root.to_str().unwrap());
    assert!(text.contains("module TPDLL16.DLL"), "{text}");
    assert!(text.contains("module DLLCAL16 "), "{text}");
    // Nowhere: an error that names what was looked for.
    std::fs::remove_file(d.join("here").join("TPDLL16.TDF")).unwrap();
    let out = os2trace(
        &d.join("here"),
        &[
            "run",
            "--root",
            root.to_str().unwrap(),
            "--trace",
            "TPDLL16",
            "DLLCAL16.EXE",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("--trace TPDLL16: no file TPDLL16 or TPDLL16.TDF in the current directory"),
        "{err}"
    );
    assert!(err.contains("or the root ("), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn dlls_not_beside_a_program_outside_the_root_come_from_libpath() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    stdout(&os2trace(d, &["testprogs", "build", "progs"]));
    std::fs::create_dir_all(d.join("c/DLLS")).unwrap();
    std::fs::rename(d.join("progs/TPDLL16.DLL"), d.join("c/DLLS/TPDLL16.DLL")).unwrap();
    // Not beside it, not on the default LIBPATH: not found.
    let out = os2trace(d, &["run", "--root", "c", "progs/DLLCAL16.EXE"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("TPDLL16"), "{err}");
    // Along the LIBPATH the program is given, in the sandbox.
    let out = os2trace(
        d,
        &[
            "run",
            "--root",
            "c",
            "--env",
            "LIBPATH=C:\\NOWHERE;C:\\DLLS",
            "progs/DLLCAL16.EXE",
        ],
    );
    let text = stdout(&out);
    assert!(text.contains("DLLCAL16 calls TPDLL16"), "{text}");
}
