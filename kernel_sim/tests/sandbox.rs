//! The sandbox: OS/2 paths map into the root and nothing leads out of it,
//! neither `..`, nor host absolute paths, nor symbolic links; from the
//! host API and from a guest program calling DosOpen.

mod common;

use kernel_sim::fs::Sandbox;
use kernel_sim::{Outcome, Process, ProcessConfig};

const FILE_NOT_FOUND: u32 = 2;
const PATH_NOT_FOUND: u32 = 3;
const ACCESS_DENIED: u32 = 5;
const INVALID_DRIVE: u32 = 15;
const OPEN_FAILED: u32 = 110;

/// A root inside a parent that holds a secret file.
fn world() -> (tempfile::TempDir, std::path::PathBuf) {
    let parent = tempfile::tempdir().unwrap();
    std::fs::write(parent.path().join("SECRET.TXT"), b"secret").unwrap();
    let root = parent.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::create_dir(root.join("Sub")).unwrap();
    std::fs::write(root.join("Sub").join("Inside.txt"), b"inside").unwrap();
    (parent, root)
}

/// Run a guest that opens `name` for reading; its exit code is DosOpen's.
fn guest_open(root: &std::path::Path, name: &str) -> u32 {
    std::fs::write(
        root.join("OPEN.EXE"),
        common::open_program(name, 0x01, 0x40),
    )
    .unwrap();
    let mut cfg = ProcessConfig::new(root, "OPEN.EXE");
    cfg.max_instructions = Some(100_000);
    let mut p = Process::new(cfg).unwrap();
    match p.run() {
        Outcome::Exited(c) => c,
        other => panic!("{other}"),
    }
}

#[test]
fn paths_map_case_insensitively_inside_the_root() {
    let (_p, root) = world();
    let s = Sandbox::new(&root).unwrap();
    let r = s.resolve(b"c:\\SUB\\inside.TXT", &[]).unwrap();
    assert_eq!(r.os2, "C:\\Sub\\Inside.txt");
    assert_eq!(r.exists, Some(false));
    assert!(r.host.starts_with(s.root()));
    let r = s.resolve(b"Sub/../Sub/./Inside.txt", &[]).unwrap();
    assert_eq!(r.os2, "C:\\Sub\\Inside.txt");
    assert_eq!(guest_open(&root, "SUB\\INSIDE.TXT"), 0);
    assert_eq!(guest_open(&root, "SUB\\MISSING.TXT"), OPEN_FAILED);
}

#[test]
fn dot_dot_cannot_climb_out() {
    let (_p, root) = world();
    let s = Sandbox::new(&root).unwrap();
    for path in [
        &b"..\\SECRET.TXT"[..],
        b"C:\\..\\SECRET.TXT",
        b"Sub\\..\\..\\SECRET.TXT",
        b"/../SECRET.TXT",
    ] {
        assert_eq!(
            s.resolve(path, &[]),
            Err(PATH_NOT_FOUND),
            "{}",
            String::from_utf8_lossy(path)
        );
    }
    assert_eq!(guest_open(&root, "..\\SECRET.TXT"), PATH_NOT_FOUND);
    assert_eq!(guest_open(&root, "SUB\\..\\..\\SECRET.TXT"), PATH_NOT_FOUND);
}

#[test]
fn host_absolute_paths_stay_inside() {
    let (parent, root) = world();
    let secret = parent.path().join("SECRET.TXT");
    let host = secret.to_str().unwrap();
    let s = Sandbox::new(&root).unwrap();
    match s.resolve(host.as_bytes(), &[]) {
        Ok(r) => assert!(r.host.starts_with(s.root()) && r.exists.is_none()),
        Err(e) => assert_eq!(e, PATH_NOT_FOUND),
    }
    assert_eq!(guest_open(&root, host), PATH_NOT_FOUND);
    assert_eq!(guest_open(&root, "D:\\SECRET.TXT"), INVALID_DRIVE);
    assert_eq!(guest_open(&root, "/etc/passwd"), PATH_NOT_FOUND);
}

#[cfg(unix)]
#[test]
fn symbolic_links_are_refused() {
    let (parent, root) = world();
    std::os::unix::fs::symlink(parent.path().join("SECRET.TXT"), root.join("LINK.TXT")).unwrap();
    std::os::unix::fs::symlink(parent.path(), root.join("UP")).unwrap();
    let s = Sandbox::new(&root).unwrap();
    assert_eq!(s.resolve(b"LINK.TXT", &[]), Err(ACCESS_DENIED));
    assert_eq!(s.resolve(b"UP\\SECRET.TXT", &[]), Err(ACCESS_DENIED));
    assert_eq!(guest_open(&root, "LINK.TXT"), ACCESS_DENIED);
    assert_eq!(guest_open(&root, "up\\secret.txt"), ACCESS_DENIED);
    // Creating through a dangling link is refused as well.
    std::os::unix::fs::symlink(parent.path().join("NEW.TXT"), root.join("DANGLE.TXT")).unwrap();
    std::fs::write(
        root.join("CREATE.EXE"),
        common::open_program("DANGLE.TXT", 0x12, 0x41),
    )
    .unwrap();
    let mut p = Process::new(ProcessConfig::new(&root, "CREATE.EXE")).unwrap();
    assert_eq!(p.run(), Outcome::Exited(ACCESS_DENIED));
    assert!(!parent.path().join("NEW.TXT").exists());
}

#[test]
fn bad_names_and_missing_files() {
    let (_p, root) = world();
    let s = Sandbox::new(&root).unwrap();
    assert_eq!(s.resolve(b"A<B", &[]), Err(123));
    assert_eq!(s.resolve(b"X:FOO", &[]), Err(INVALID_DRIVE));
    assert_eq!(s.resolve(b"NOPE\\FILE", &[]), Err(PATH_NOT_FOUND));
    assert_eq!(guest_open(&root, "NOPE\\FILE"), PATH_NOT_FOUND);
    let _ = FILE_NOT_FOUND;
}

proptest::proptest! {
    /// Whatever bytes a program passes, the host path stays in the root.
    #[test]
    fn no_path_leaves_the_root(path in proptest::collection::vec(proptest::prop_oneof![
        proptest::strategy::Just(b'.'), proptest::strategy::Just(b'\\'), proptest::strategy::Just(b'/'),
        proptest::strategy::Just(b':'), proptest::strategy::Just(b'C'), proptest::strategy::Just(b'S'),
        proptest::num::u8::ANY,
    ], 0..40)) {
        let dir = tempfile::tempdir().unwrap();
        let s = Sandbox::new(dir.path()).unwrap();
        if let Ok(r) = s.resolve(&path, &[]) {
            proptest::prop_assert!(r.host.starts_with(s.root()));
            proptest::prop_assert!(!r.host.components().any(|c| c == std::path::Component::ParentDir));
        }
    }
}
