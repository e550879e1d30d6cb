//! write_atomic against every kind of target.

use std::fs;
use std::path::Path;

use outfile::write_atomic;

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_new_file_gets_the_umask_mode_and_no_temp_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("A.TDF");
    write_atomic(&p, b"hello").unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"hello");
    assert_eq!(entries(dir.path()), ["A.TDF"]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        // The umask-given mode: what File::create makes.
        let probe = dir.path().join("probe");
        fs::File::create(&probe).unwrap();
        let want = fs::metadata(&probe).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, want);
        assert_ne!(mode, 0o600, "not tempfile's private mode");
    }
}

#[test]
fn a_replaced_file_keeps_its_permissions() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("B");
    fs::write(&p, b"old").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o640
        );
    }
    assert_eq!(fs::read(&p).unwrap(), b"new");
}

#[cfg(unix)]
#[test]
fn a_symlink_is_followed_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.sav");
    fs::write(&real, b"old").unwrap();
    let link = dir.path().join("link.sav");
    std::os::unix::fs::symlink("real.sav", &link).unwrap();
    write_atomic(&link, b"new").unwrap();
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read(&real).unwrap(), b"new");
    // A dangling link creates its target.
    let dangling = dir.path().join("d");
    std::os::unix::fs::symlink("made", &dangling).unwrap();
    write_atomic(&dangling, b"x").unwrap();
    assert_eq!(fs::read(dir.path().join("made")).unwrap(), b"x");
    assert_eq!(entries(dir.path()), ["d", "link.sav", "made", "real.sav"]);
}

#[cfg(unix)]
#[test]
fn dev_null_is_written_through_and_dev_full_fails_cleanly() {
    write_atomic(Path::new("/dev/null"), b"gone").unwrap();
    assert!(!fs::metadata("/dev/null").unwrap().file_type().is_file());
    if Path::new("/dev/full").exists() {
        let e = write_atomic(Path::new("/dev/full"), b"x").unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("cannot write /dev/full: "), "{text}");
        assert!(!text.contains(".tmp"), "{text}");
    }
}

#[cfg(unix)]
#[test]
fn a_fifo_is_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read(fifo).unwrap())
    };
    write_atomic(&fifo, b"through the pipe").unwrap();
    assert_eq!(reader.join().unwrap(), b"through the pipe");
    assert_eq!(entries(dir.path()), ["pipe"]);
}

#[test]
fn a_directory_is_refused_and_nothing_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    fs::create_dir(&sub).unwrap();
    let e = write_atomic(&sub, b"x").unwrap_err();
    assert!(e.to_string().contains("it is a directory"), "{e}");
    assert_eq!(entries(dir.path()), ["sub"]);
    assert!(entries(&sub).is_empty());
}

#[cfg(unix)]
#[test]
fn a_read_only_directory_leaves_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("ro");
    fs::create_dir(&ro).unwrap();
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o555)).unwrap();
    let r = write_atomic(&ro.join("X.TDF"), b"x");
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o755)).unwrap();
    // root may write anyway; then the file is whole.
    match r {
        Err(e) => {
            assert!(!e.to_string().contains(".tmp"), "{e}");
            assert!(entries(&ro).is_empty());
        }
        Ok(()) => assert_eq!(entries(&ro), ["X.TDF"]),
    }
}
