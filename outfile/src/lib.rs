//! The one way the workspace writes an output file (TDF, TFF, TMI, save
//! files, compiled trace programs, sample modules).
//!
//! [`write_atomic`] gives a reader either the old file or the whole new
//! one, never half of it, and leaves nothing behind when it fails:
//!
//! * a regular file (or a name that does not exist yet) is written to a
//!   temporary file in the same directory and renamed over the target; the
//!   temporary file is removed on every failure (a full disk, a read-only
//!   directory, a short write), and its name never appears in an error;
//! * a symbolic link is followed: the file it points to is replaced, the
//!   link stays (replacing the link by a file would silently cut the user's
//!   indirection);
//! * a device or FIFO (`/dev/null`, `/dev/stdout`, a named pipe) is written
//!   through, as `cmd > target` would: renaming over it would turn a device
//!   node into a regular file. A write error (`/dev/full`) is an error;
//! * a directory or any other kind of file is refused.
//!
//! New files get the mode the umask gives (0666 & !umask, usually 0644),
//! as `File::create` does; a replaced regular file keeps its permissions.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Why an output file could not be written. The message names the target
/// path (never a temporary file) and the I/O error.
#[derive(Debug)]
pub struct WriteError {
    /// The target as the caller named it.
    pub path: PathBuf,
    /// What went wrong.
    pub kind: WriteErrorKind,
}

/// What went wrong in [`write_atomic`].
#[derive(Debug)]
pub enum WriteErrorKind {
    /// The target is a directory or another kind of file that cannot take
    /// the bytes.
    NotAFile(&'static str),
    /// An I/O error while writing.
    Io(io::Error),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            WriteErrorKind::NotAFile(what) => {
                write!(f, "cannot write {}: it is {what}", self.path.display())
            }
            WriteErrorKind::Io(e) => write!(f, "cannot write {}: {e}", self.path.display()),
        }
    }
}

impl std::error::Error for WriteError {}

impl WriteError {
    /// The cause alone, without the path: for callers whose own error
    /// already names the path (so that it is not said twice).
    pub fn into_cause(self) -> io::Error {
        match self.kind {
            WriteErrorKind::NotAFile(what) => {
                io::Error::new(io::ErrorKind::InvalidInput, format!("it is {what}"))
            }
            WriteErrorKind::Io(e) => e,
        }
    }
}

/// Writes `bytes` to `path` whole or not at all (see the module docs for
/// symlinks, devices and FIFOs).
///
/// # Errors
/// The target cannot take a file, or an I/O error; nothing new is left on
/// disk then.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let err = |kind| WriteError {
        path: path.to_path_buf(),
        kind,
    };
    let target = resolve(path).map_err(|e| err(WriteErrorKind::Io(e)))?;
    match fs::metadata(&target) {
        Ok(meta) if meta.is_file() => replace(&target, bytes, Some(meta.permissions()))
            .map_err(|e| err(WriteErrorKind::Io(e))),
        Ok(meta) if meta.is_dir() => Err(err(WriteErrorKind::NotAFile("a directory"))),
        Ok(meta) if is_stream(&meta) => {
            write_through(&target, bytes).map_err(|e| err(WriteErrorKind::Io(e)))
        }
        Ok(_) => Err(err(WriteErrorKind::NotAFile(
            "not a regular file, device or FIFO",
        ))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            replace(&target, bytes, None).map_err(|e| err(WriteErrorKind::Io(e)))
        }
        Err(e) => Err(err(WriteErrorKind::Io(e))),
    }
}

/// The path the bytes go to: symbolic links followed, also a dangling one
/// (its target is created, as a shell redirection would).
fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    // A bounded walk: a link loop is an error, as the kernel's ELOOP.
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

#[cfg(unix)]
fn is_stream(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    t.is_char_device() || t.is_fifo() || t.is_block_device() || t.is_socket()
}

#[cfg(not(unix))]
fn is_stream(_: &fs::Metadata) -> bool {
    false
}

/// Devices and FIFOs: opened for writing without truncation or creation.
fn write_through(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new().write(true).open(target)?;
    f.write_all(bytes)?;
    f.flush()
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A regular file: a temporary file beside it, then a rename.
fn replace(target: &Path, bytes: &[u8], keep: Option<fs::Permissions>) -> io::Result<()> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (tmp, file) = create_temp(dir, &name)?;
    let result = fill(file, bytes, keep).and_then(|()| fs::rename(&tmp, target));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn create_temp(dir: &Path, name: &str) -> io::Result<(PathBuf, File)> {
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        // create_new: mode 0666 & !umask, as File::create; never an
        // existing file (another writer's, or an attacker's symlink).
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

fn fill(mut file: File, bytes: &[u8], keep: Option<fs::Permissions>) -> io::Result<()> {
    file.write_all(bytes)?;
    // sync_all surfaces a deferred ENOSPC/EIO before the rename commits.
    file.sync_all()?;
    if let Some(perm) = keep {
        file.set_permissions(perm)?;
    }
    Ok(())
}
