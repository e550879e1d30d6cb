//! The sandboxed file system: a host directory is drive C:, and OS/2 file
//! handles map to host files.
//!
//! Who owns what: [`FileSystem`] is the system's (the sandbox, the time
//! stamps of files written in this run, the bytes written so far) and
//! lives in the kernel; each process has a [`FileTable`] (current
//! directory, handles, the DosSetMaxFH limit, find handles) in its PCB. A
//! handle number means something only in its own process.
//!
//! Path mapping (decisions):
//! - `X:` other than `C:` is ERROR_INVALID_DRIVE. `\` and `/` both
//!   separate components; a path not starting with one is relative to the
//!   current directory.
//! - `.` is dropped; `..` removes the previous component, and `..` at the
//!   root is ERROR_PATH_NOT_FOUND: nothing climbs above C:\.
//! - Host absolute paths have no meaning: `/etc/passwd` is `C:\etc\passwd`
//!   inside the sandbox.
//! - Each component is looked up case-insensitively (an exact match wins);
//!   a missing last component keeps the spelling the program gave.
//! - A symbolic link anywhere on the path is refused with
//!   ERROR_ACCESS_DENIED, so no link can lead out of the sandbox.
//! - Names with `<>|"` or control characters are ERROR_INVALID_NAME; `*`
//!   and `?` only in find patterns.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::rc::*;

/// The largest size DosOpen, DosNewSize and DosSetFileSize give a file:
/// a guest cannot make the host allocate more (ERROR_DISK_FULL).
pub const MAX_FILE_SIZE: u64 = 256 << 20;

/// The most bytes a guest may write to host files in one run (DosWrite,
/// counted by bytes written, whatever the files and offsets): past it a
/// write fails with ERROR_DISK_FULL.
pub const MAX_DISK_WRITE: u64 = 256 << 20;

/// A host directory seen as drive C:, and the system's own directory
/// `C:\OS2` (where CMD.EXE is) unless the root has an `OS2` of its own.
#[derive(Clone, Debug)]
pub struct Sandbox {
    root: PathBuf,
    system: Option<SystemDir>,
}

/// The host directory behind `C:\OS2`.
#[derive(Clone, Debug)]
enum SystemDir {
    /// A directory the caller made ([`Sandbox::with_system_dir`]).
    Given(PathBuf),
    /// The file system's own: a host temporary directory holding CMD.EXE,
    /// made the first time a path reaches `C:\OS2` (or the root's
    /// CMD.EXE), so a run that never does costs no host directory. `None`
    /// inside once making it failed: then there is no `C:\OS2`, as
    /// before the lazy form. Removed when the last clone goes.
    Lazy(Arc<OnceLock<Option<tempfile::TempDir>>>),
}

impl SystemDir {
    /// The host directory, made now if it is the lazy one's first use.
    fn path(&self) -> Option<&Path> {
        match self {
            SystemDir::Given(dir) => Some(dir),
            SystemDir::Lazy(cell) => cell.get_or_init(make_system_dir).as_ref().map(|d| d.path()),
        }
    }

    /// The host directory if it exists already (never makes it).
    fn made(&self) -> Option<&Path> {
        match self {
            SystemDir::Given(dir) => Some(dir),
            SystemDir::Lazy(cell) => cell.get()?.as_ref().map(|d| d.path()),
        }
    }
}

/// A host temporary directory with the system's programs (CMD.EXE).
fn make_system_dir() -> Option<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix("os2trace-os2-")
        .tempdir()
        .ok()
        .filter(|d| fs::write(d.path().join("CMD.EXE"), crate::cmd::image()).is_ok())
}

/// What a path resolves to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The host path (inside the root).
    pub host: PathBuf,
    /// The full OS/2 path, `C:\DIR\NAME`, with the names found on disk.
    pub os2: String,
    /// Whether something exists there, and if it is a directory.
    pub exists: Option<bool>,
}

fn bad_char(c: u8, wild: bool) -> bool {
    c < 0x20 || matches!(c, b'<' | b'>' | b'|' | b'"') || (!wild && matches!(c, b'*' | b'?'))
}

impl Sandbox {
    /// The sandbox rooted at `root`, which must be a directory.
    pub fn new(root: &Path) -> std::io::Result<Sandbox> {
        let root = fs::canonicalize(root)?;
        if !root.is_dir() {
            return Err(std::io::Error::other("the sandbox root is not a directory"));
        }
        Ok(Sandbox { root, system: None })
    }

    /// Show the host directory `dir` as `C:\OS2` (unless the root has an
    /// `OS2` entry of its own).
    pub fn with_system_dir(mut self, dir: &Path) -> Sandbox {
        self.system = Some(SystemDir::Given(dir.to_path_buf()));
        self
    }

    /// The file system's own `C:\OS2` (CMD.EXE), in a host temporary
    /// directory made on first use (see [`FileSystem::system_dir`]).
    fn with_own_system_dir(mut self) -> Sandbox {
        self.system = Some(SystemDir::Lazy(Arc::default()));
        self
    }

    /// The host directory behind `C:\OS2` if it exists now: the file
    /// system's own is made only when a path first reaches it.
    pub fn system_dir(&self) -> Option<&Path> {
        self.system.as_ref()?.made()
    }

    /// The host root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The normalized components of an OS/2 path relative to the root.
    /// `wild` allows `*` and `?` in the last component.
    pub fn components(&self, path: &[u8], cwd: &[String], wild: bool) -> Result<Vec<String>, u32> {
        let mut rest = path;
        if rest.len() >= 2 && rest[1] == b':' {
            if !rest[0].eq_ignore_ascii_case(&b'C') {
                return Err(ERROR_INVALID_DRIVE);
            }
            rest = &rest[2..];
        }
        let absolute = matches!(rest.first(), Some(b'\\' | b'/'));
        let mut out: Vec<String> = if absolute { Vec::new() } else { cwd.to_vec() };
        let parts: Vec<&[u8]> = rest.split(|&c| c == b'\\' || c == b'/').collect();
        let n = parts.len();
        for (i, part) in parts.into_iter().enumerate() {
            match part {
                b"" | b"." => {}
                b".." => {
                    if out.pop().is_none() {
                        return Err(ERROR_PATH_NOT_FOUND);
                    }
                }
                name => {
                    let last = i + 1 == n;
                    if name.iter().any(|&c| bad_char(c, wild && last) || c == b':') {
                        return Err(ERROR_INVALID_NAME);
                    }
                    if name.len() > 255 {
                        return Err(ERROR_FILENAME_EXCED_RANGE);
                    }
                    out.push(name.iter().map(|&b| char::from(b)).collect());
                }
            }
        }
        Ok(out)
    }

    /// The system's program `name` (CMD.EXE) as seen in the root, `C:\`,
    /// when the root has no file of that name: programs look for the
    /// command processor along PATH, and the default PATH is `C:\`.
    fn root_program(&self, name: &str) -> Option<PathBuf> {
        let sys = self.system.as_ref()?;
        if !name.eq_ignore_ascii_case("CMD.EXE") || Self::find_in(&self.root, name).is_some() {
            return None;
        }
        Some(sys.path()?.join("CMD.EXE"))
    }

    /// Find `name` in the host directory `dir` ignoring case.
    fn find_in(dir: &Path, name: &str) -> Option<String> {
        if dir.join(name).symlink_metadata().is_ok() {
            return Some(name.to_string());
        }
        let rd = fs::read_dir(dir).ok()?;
        let mut names: Vec<String> = rd
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.eq_ignore_ascii_case(name))
            .collect();
        names.sort();
        names.into_iter().next()
    }

    /// Resolve an OS/2 path to a host path inside the root.
    pub fn resolve(&self, path: &[u8], cwd: &[String]) -> Result<Resolved, u32> {
        let comps = self.components(path, cwd, false)?;
        self.resolve_components(&comps)
    }

    /// Resolve normalized components (see [`Sandbox::components`]).
    pub fn resolve_components(&self, comps: &[String]) -> Result<Resolved, u32> {
        let mut host = self.root.clone();
        let mut os2 = String::from("C:");
        let mut exists = Some(true);
        if let [name] = comps
            && let Some(host) = self.root_program(name)
        {
            return Ok(Resolved {
                host,
                os2: format!("C:\\{}", name.to_ascii_uppercase()),
                exists: Some(false),
            });
        }
        let mut skip = 0;
        if let (Some(sys), Some(first)) = (&self.system, comps.first())
            && first.eq_ignore_ascii_case("OS2")
            && Self::find_in(&self.root, "OS2").is_none()
            && let Some(sys) = sys.path()
        {
            host = sys.to_path_buf();
            os2.push_str("\\OS2");
            skip = 1;
        }
        for (i, c) in comps.iter().enumerate().skip(skip) {
            let last = i + 1 == comps.len();
            let found = Self::find_in(&host, c);
            let name = found.clone().unwrap_or_else(|| c.clone());
            host.push(&name);
            os2.push('\\');
            os2.push_str(&name);
            match found {
                None if last => exists = None,
                None => return Err(ERROR_PATH_NOT_FOUND),
                Some(_) => {
                    let md = host.symlink_metadata().map_err(|_| ERROR_PATH_NOT_FOUND)?;
                    if md.file_type().is_symlink() {
                        return Err(ERROR_ACCESS_DENIED);
                    }
                    if last {
                        exists = Some(md.is_dir());
                    } else if !md.is_dir() {
                        return Err(ERROR_PATH_NOT_FOUND);
                    }
                }
            }
        }
        if comps.is_empty() {
            os2.push('\\');
        }
        Ok(Resolved { host, os2, exists })
    }
}

/// An open handle.
#[derive(Debug)]
pub(crate) enum Handle {
    /// A character device: 0 standard input, 1 standard output, 2
    /// standard error (the host's), 3 `CON` (reads standard input, writes
    /// standard output), 4 `NUL`.
    Std(u8),
    /// One end of an anonymous pipe (`api/pipes.rs`).
    Pipe(crate::api::pipes::PipeEnd),
    /// One end of a named pipe (`api/npipes.rs`).
    NPipe(crate::api::npipes::NpEnd),
    /// A host file.
    File {
        file: File,
        /// Open mode access bits (0 read, 1 write, 2 both).
        access: u8,
    },
}

/// One find handle's remaining results.
#[derive(Debug)]
pub(crate) struct FindState {
    pub entries: Vec<FindEntry>,
    pub next: usize,
    /// The information level DosFindFirst was given (1 FIL_STANDARD, 2
    /// FIL_QUERYEASIZE).
    pub level: u32,
}

/// A directory entry for DosFindFirst/Next.
#[derive(Clone, Debug)]
pub(crate) struct FindEntry {
    pub name: String,
    pub size: u64,
    pub attr: u16,
    pub stamps: Stamps,
}

/// The system's file system, shared by every process: the sandbox, the
/// time stamps of files written in this run, and the run's write budget.
/// It lives in [`crate::state::Kernel`].
#[derive(Debug)]
pub(crate) struct FileSystem {
    pub sandbox: Sandbox,
    /// The emulated clock as a DOS (date, time), set before each API call:
    /// the time files written now get. No host time reaches the guest.
    pub now: (u16, u16),
    /// The time every file not written in this run shows: the emulated
    /// clock at the start.
    pub boot: (u16, u16),
    /// Files written (or stamped by DosSetFileInfo) in this run, by
    /// (device, inode), and their times.
    stamps: HashMap<(u64, u64), Stamps>,
    /// Bytes written to host files so far (see [`MAX_DISK_WRITE`]).
    pub written: u64,
}

/// One process's files: its current directory, open handles, their limit
/// (DosSetMaxFH) and find handles. It lives in [`crate::state::Pcb`];
/// handle numbers mean nothing outside their process.
#[derive(Debug)]
pub(crate) struct FileTable {
    pub cwd: Vec<String>,
    handles: Vec<Option<Handle>>,
    pub max_handles: usize,
    pub finds: HashMap<u16, FindState>,
    /// Each handle's state (DosQueryFHState): the open mode DosOpen gave
    /// it, with the flags DosSetFHState changed; a character device
    /// without an entry has [`DEVICE_STATE`].
    states: HashMap<u16, u16>,
}

/// The state of a standard handle or device: OPEN_ACCESS_READWRITE and
/// OPEN_SHARE_DENYNONE, as OS/2 opens the console.
pub(crate) const DEVICE_STATE: u16 = 0x0042;

/// OPEN_FLAGS_NOINHERIT.
pub(crate) const OPEN_FLAGS_NOINHERIT: u16 = 0x0080;

/// What DosSetFHState may change: OPEN_FLAGS_NOINHERIT, the locality
/// bits (0x0700), OPEN_FLAGS_NO_CACHE, OPEN_FLAGS_FAIL_ON_ERROR and
/// OPEN_FLAGS_WRITE_THROUGH.
pub(crate) const SETTABLE_STATE: u16 = 0x7F80;

/// What a file call works on: the system's [`FileSystem`] and the calling
/// process's [`FileTable`], borrowed together (`Process::files`). Calls
/// that touch only handles go to the [`FileTable`] directly.
pub(crate) struct Files<'a> {
    pub fs: &'a mut FileSystem,
    pub table: &'a mut FileTable,
}

/// A file's three DOS (date, time) stamps as OS/2 keeps them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamps {
    pub created: (u16, u16),
    pub accessed: (u16, u16),
    pub written: (u16, u16),
}

impl Stamps {
    fn all(t: (u16, u16)) -> Stamps {
        Stamps {
            created: t,
            accessed: t,
            written: t,
        }
    }
}

/// New stamps for a file (created, accessed, written); `None` keeps one.
pub(crate) type NewStamps = [Option<(u16, u16)>; 3];

/// A file's identity on the host, for [`FileSystem`]'s time stamps.
fn file_id(md: &fs::Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (md.dev(), md.ino())
    }
    #[cfg(not(unix))]
    {
        (0, md.len())
    }
}

/// DOS packed (date, time) of an emulated date and time.
pub fn dos_stamp(year: u16, month: u8, day: u8, hour: u8, minute: u8, second: u8) -> (u16, u16) {
    let date =
        ((year.saturating_sub(1980).min(127)) << 9) | (u16::from(month) << 5) | u16::from(day);
    let time = (u16::from(hour) << 11) | (u16::from(minute) << 5) | u16::from(second / 2);
    (date, time)
}

/// OS/2 wildcard match, ignoring case (`*.*` also matches names without a dot).
pub fn wild_match(pattern: &str, name: &str) -> bool {
    if pattern == "*.*" || pattern == "*" {
        return true;
    }
    let p: Vec<char> = pattern.to_ascii_uppercase().chars().collect();
    let n: Vec<char> = name.to_ascii_uppercase().chars().collect();
    let (mut pi, mut ni, mut star, mut mark) = (0usize, 0usize, None, 0usize);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && (p[pi] == '*' || (p[pi] == '.' && pi + 1 == p.len())) {
        pi += 1;
    }
    pi == p.len()
}

impl FileSystem {
    /// The file system with `root` as drive C:.
    pub fn new(root: &Path) -> std::io::Result<FileSystem> {
        // The system's programs (CMD.EXE) are in a host temporary
        // directory made the first time a path reaches them: making and
        // removing it costs more than a short run. Without one there are
        // none, and the rest works as before.
        let sandbox = Sandbox::new(root)?.with_own_system_dir();
        Ok(FileSystem {
            sandbox,
            now: (0, 0),
            boot: (0, 0),
            stamps: HashMap::new(),
            written: 0,
        })
    }

    /// The host directory behind `C:\OS2` if a path has reached it so far
    /// (it is removed with the file system).
    pub fn system_dir(&self) -> Option<&Path> {
        self.sandbox.system_dir()
    }

    /// The (date, time) the guest sees for a file: when it was written in
    /// this run, else the start of the run (never the host's time).
    fn stamp_of(&self, md: &fs::Metadata) -> Stamps {
        self.stamps
            .get(&file_id(md))
            .copied()
            .unwrap_or(Stamps::all(self.boot))
    }

    /// Record that the file behind `md` was written now (a file first
    /// written in this run was created now too).
    fn stamp(&mut self, md: &fs::Metadata) {
        let now = self.now;
        self.stamps
            .entry(file_id(md))
            .and_modify(|s| {
                s.written = now;
                s.accessed = now;
            })
            .or_insert(Stamps::all(now));
    }

    /// Set some of the stamps of the file behind `md` (DosSetFileInfo,
    /// DosSetPathInfo): `None` keeps one as it is.
    fn set_stamps(&mut self, md: &fs::Metadata, new: NewStamps) {
        let mut s = self.stamp_of(md);
        for (slot, v) in [&mut s.created, &mut s.accessed, &mut s.written]
            .into_iter()
            .zip(new)
        {
            if let Some(v) = v {
                *slot = v;
            }
        }
        self.stamps.insert(file_id(md), s);
    }
}

impl Default for FileTable {
    /// A new process's table: handles 0, 1 and 2 are standard input,
    /// output and error; the root is the current directory.
    fn default() -> FileTable {
        FileTable {
            cwd: Vec::new(),
            handles: (0..3).map(|i| Some(Handle::Std(i))).collect(),
            max_handles: 20,
            finds: HashMap::new(),
            states: HashMap::new(),
        }
    }
}

impl FileTable {
    /// A child process's table (DosExecPgm): the same current directory
    /// and handle limit, and every handle not opened with
    /// OPEN_FLAGS_NOINHERIT under the same number, sharing the file
    /// position with the parent's. Find handles are not inherited.
    pub fn inherit(&self) -> FileTable {
        let inherited = |i: usize| {
            let state = self
                .states
                .get(&(i as u16))
                .copied()
                .unwrap_or(DEVICE_STATE);
            state & OPEN_FLAGS_NOINHERIT == 0
        };
        let handles: Vec<Option<Handle>> = self
            .handles
            .iter()
            .enumerate()
            .map(|(i, h)| match h {
                _ if !inherited(i) => None,
                Some(Handle::Std(d)) => Some(Handle::Std(*d)),
                Some(Handle::Pipe(e)) => Some(Handle::Pipe(e.clone())),
                Some(Handle::NPipe(e)) => Some(Handle::NPipe(e.clone())),
                Some(Handle::File { file, access }) => {
                    file.try_clone().ok().map(|file| Handle::File {
                        file,
                        access: *access,
                    })
                }
                None => None,
            })
            .collect();
        let states = self
            .states
            .iter()
            .filter(|(h, _)| handles.get(usize::from(**h)).is_some_and(Option::is_some))
            .map(|(h, s)| (*h, *s))
            .collect();
        FileTable {
            cwd: self.cwd.clone(),
            handles,
            max_handles: self.max_handles,
            finds: HashMap::new(),
            states,
        }
    }

    /// DosDupHandle: a second handle on `h`'s open file (sharing its
    /// position) under the lowest free number (`target` None) or under
    /// `target`, closing what was open there (ERROR_INVALID_TARGET_HANDLE
    /// past the handle limit). The copy has `h`'s state.
    pub fn dup(&mut self, h: u16, target: Option<u16>) -> Result<u16, u32> {
        let copy = match self.get(h).ok_or(ERROR_INVALID_HANDLE)? {
            Handle::Std(d) => Handle::Std(*d),
            Handle::Pipe(e) => Handle::Pipe(e.clone()),
            Handle::NPipe(e) => Handle::NPipe(e.clone()),
            Handle::File { file, access } => Handle::File {
                file: file.try_clone().map_err(|e| io_error(&e))?,
                access: *access,
            },
        };
        let state = self.states.get(&h).copied();
        let new = match target {
            None => self.insert(copy)?,
            Some(t) if t == h => return Ok(t),
            Some(t) => {
                let i = usize::from(t);
                if i >= self.max_handles.max(self.handles.len()) {
                    return Err(ERROR_INVALID_TARGET_HANDLE);
                }
                if self.handles.len() <= i {
                    self.handles.resize_with(i + 1, || None);
                }
                self.handles[i] = Some(copy);
                self.states.remove(&t);
                t
            }
        };
        if let Some(s) = state {
            self.states.insert(new, s);
        }
        Ok(new)
    }

    /// A handle's state (DosQueryFHState).
    pub fn state(&mut self, h: u16) -> Result<u16, u32> {
        self.get(h).ok_or(ERROR_INVALID_HANDLE)?;
        Ok(self.states.get(&h).copied().unwrap_or(DEVICE_STATE))
    }

    /// DosSetFHState: the [`SETTABLE_STATE`] bits of `flags` replace the
    /// handle's; any other bit is ERROR_INVALID_PARAMETER.
    pub fn set_state(&mut self, h: u16, flags: u16) -> Result<(), u32> {
        let old = self.state(h)?;
        if flags & !SETTABLE_STATE != 0 {
            return Err(ERROR_INVALID_PARAMETER);
        }
        self.states.insert(h, (old & !SETTABLE_STATE) | flags);
        Ok(())
    }

    /// Put `new` (a handle and its state) under number `h` (growing the
    /// table), returning what was there: how CMD.EXE redirects its
    /// standard handles around a command.
    pub fn replace(
        &mut self,
        h: u16,
        new: Option<(Handle, Option<u16>)>,
    ) -> Option<(Handle, Option<u16>)> {
        let i = usize::from(h);
        if self.handles.len() <= i {
            self.handles.resize_with(i + 1, || None);
        }
        let old_state = self.states.remove(&h);
        let old = self.handles[i].take().map(|hd| (hd, old_state));
        if let Some((hd, state)) = new {
            self.handles[i] = Some(hd);
            if let Some(st) = state {
                self.states.insert(h, st);
            }
        }
        old
    }

    /// A second handle on what `h` is (the same file position), with its
    /// state but inheritable.
    pub fn duplicate(&mut self, h: u16) -> Option<(Handle, Option<u16>)> {
        let state = self.states.get(&h).map(|s| s & !OPEN_FLAGS_NOINHERIT);
        let hd = match self.get(h)? {
            Handle::Std(d) => Handle::Std(*d),
            Handle::Pipe(e) => Handle::Pipe(e.clone()),
            Handle::NPipe(e) => Handle::NPipe(e.clone()),
            Handle::File { file, access } => Handle::File {
                file: file.try_clone().ok()?,
                access: *access,
            },
        };
        Some((hd, state))
    }

    /// A named pipe's end under the lowest free number, with its state
    /// (`api/npipes.rs`).
    pub fn open_npipe(&mut self, end: crate::api::npipes::NpEnd, state: u16) -> Result<u16, u32> {
        let h = self.insert(Handle::NPipe(end))?;
        self.states.insert(h, state);
        Ok(h)
    }

    /// A new pipe's two handles (the lowest free numbers, or neither),
    /// with their states (`api/pipes.rs`).
    pub fn open_pipe(
        &mut self,
        read: crate::api::pipes::PipeEnd,
        write: crate::api::pipes::PipeEnd,
    ) -> Result<(u16, u16), u32> {
        let r = self.insert(Handle::Pipe(read))?;
        let w = match self.insert(Handle::Pipe(write)) {
            Ok(w) => w,
            Err(e) => {
                self.close(r)?;
                return Err(e);
            }
        };
        self.states.insert(r, 0x0040);
        self.states.insert(w, 0x0041);
        Ok((r, w))
    }

    pub fn get(&mut self, h: u16) -> Option<&mut Handle> {
        self.handles.get_mut(usize::from(h))?.as_mut()
    }

    fn insert(&mut self, handle: Handle) -> Result<u16, u32> {
        if let Some(i) = self.handles.iter().position(Option::is_none) {
            self.handles[i] = Some(handle);
            return Ok(i as u16);
        }
        if self.handles.len() >= self.max_handles {
            return Err(ERROR_TOO_MANY_OPEN_FILES);
        }
        self.handles.push(Some(handle));
        Ok(self.handles.len() as u16 - 1)
    }

    pub fn close(&mut self, h: u16) -> Result<(), u32> {
        match self.handles.get_mut(usize::from(h)) {
            Some(slot @ Some(_)) => {
                *slot = None;
                self.states.remove(&h);
                Ok(())
            }
            _ => Err(ERROR_INVALID_HANDLE),
        }
    }

    /// Close every handle and find handle (the process ended): its files
    /// and pipe ends are released.
    pub fn close_all(&mut self) {
        self.handles.iter_mut().for_each(|h| *h = None);
        self.states.clear();
        self.finds.clear();
    }

    pub fn read_file(&mut self, h: u16, n: usize) -> Result<Vec<u8>, u32> {
        match self.get(h) {
            Some(Handle::File { file, access, .. }) => {
                if *access == 1 {
                    return Err(ERROR_ACCESS_DENIED);
                }
                // Grows with what is read: `n` comes from the guest.
                let mut buf = Vec::new();
                file.take(n as u64)
                    .read_to_end(&mut buf)
                    .map_err(|e| io_error(&e))?;
                Ok(buf)
            }
            _ => Err(ERROR_INVALID_HANDLE),
        }
    }

    /// Seek: method 0 begin, 1 current, 2 end. Returns the new position.
    pub fn seek(&mut self, h: u16, dist: i64, method: u32) -> Result<u64, u32> {
        match self.get(h) {
            Some(Handle::File { file, .. }) => {
                let cur = file.stream_position().map_err(|e| io_error(&e))?;
                let end = file.metadata().map_err(|e| io_error(&e))?.len();
                let base = match method {
                    0 => 0i64,
                    1 => cur as i64,
                    2 => end as i64,
                    _ => return Err(ERROR_INVALID_FUNCTION),
                };
                let pos = base.checked_add(dist).ok_or(ERROR_SEEK)?;
                if pos < 0 {
                    return Err(ERROR_NEGATIVE_SEEK);
                }
                file.seek(SeekFrom::Start(pos as u64))
                    .map_err(|e| io_error(&e))
            }
            Some(Handle::Std(_)) => Ok(0),
            Some(Handle::Pipe(_) | Handle::NPipe(_)) => Err(ERROR_SEEK_ON_DEVICE),
            None => Err(ERROR_INVALID_HANDLE),
        }
    }

    pub fn set_size(&mut self, h: u16, size: u64) -> Result<(), u32> {
        match self.get(h) {
            Some(Handle::File { file, access, .. }) if *access != 0 => {
                if size > MAX_FILE_SIZE {
                    return Err(ERROR_DISK_FULL);
                }
                file.set_len(size).map_err(|e| io_error(&e))
            }
            Some(_) => Err(ERROR_ACCESS_DENIED),
            None => Err(ERROR_INVALID_HANDLE),
        }
    }

    /// (type, device attribute): 0 file, 1 character device.
    pub fn handle_type(&mut self, h: u16) -> Result<(u16, u16), u32> {
        match self.get(h) {
            Some(Handle::Std(_)) => Ok((1, 0x8083)),
            Some(Handle::File { .. }) => Ok((0, 0)),
            Some(Handle::Pipe(_) | Handle::NPipe(_)) => Ok((2, 0)),
            None => Err(ERROR_INVALID_HANDLE),
        }
    }

    /// Current directory without drive and leading backslash.
    pub fn cwd_text(&self) -> String {
        self.cwd.join("\\")
    }
}

impl Files<'_> {
    /// The full OS/2 path of a program name (as given, made absolute).
    pub fn full_os2_path(&self, path: &str) -> String {
        let bytes: Vec<u8> = path
            .chars()
            .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
            .collect();
        match self.resolve(&bytes) {
            Ok(r) => r.os2.to_ascii_uppercase(),
            Err(_) => path.to_ascii_uppercase(),
        }
    }

    /// Resolve an OS/2 path from the process's current directory.
    pub fn resolve(&self, path: &[u8]) -> Result<Resolved, u32> {
        self.fs.sandbox.resolve(path, &self.table.cwd)
    }

    /// DosMove: rename `from` (a file or directory) to `to` on the one
    /// drive. `from` must exist (ERROR_FILE_NOT_FOUND) and not be the
    /// root, `to` must not (ERROR_ACCESS_DENIED); a directory cannot go
    /// into itself (ERROR_ACCESS_DENIED).
    pub fn rename(&mut self, from: &[u8], to: &[u8]) -> Result<(), u32> {
        let a = self.resolve(from)?;
        let b = self.resolve(to)?;
        if a.exists.is_none() {
            return Err(ERROR_FILE_NOT_FOUND);
        }
        if b.exists.is_some() || a.host == self.fs.sandbox.root() {
            return Err(ERROR_ACCESS_DENIED);
        }
        if b.host.starts_with(&a.host) {
            return Err(ERROR_ACCESS_DENIED);
        }
        fs::rename(&a.host, &b.host).map_err(|e| io_error(&e))
    }

    /// DosOpen: open flags (low nibble: if it exists 0 fail, 1 open, 2
    /// replace; high nibble: if not, 0 fail, 1 create) and open mode
    /// (access in bits 0..2). Returns the handle and the action (1
    /// existed, 2 created, 3 replaced).
    pub fn open(
        &mut self,
        path: &[u8],
        flags: u16,
        mode: u16,
        size: u64,
    ) -> Result<(u16, u32), u32> {
        if let Some(dev) = device(path) {
            let h = self.table.insert(Handle::Std(dev))?;
            self.table.states.insert(h, mode);
            return Ok((h, 1));
        }
        let r = self.resolve(path)?;
        let access = (mode & 7) as u8;
        if access > 2 {
            return Err(ERROR_INVALID_ACCESS);
        }
        let (if_exists, if_new) = (flags & 0xF, (flags >> 4) & 0xF);
        let mut oo = OpenOptions::new();
        oo.read(access != 1 || if_exists == 2).write(access != 0);
        let action;
        match r.exists {
            Some(true) => return Err(ERROR_ACCESS_DENIED),
            Some(false) => match if_exists {
                1 => action = 1,
                2 => {
                    oo.write(true).truncate(true);
                    action = 3;
                }
                _ => return Err(ERROR_OPEN_FAILED),
            },
            None => match if_new {
                1 => {
                    oo.write(true).create_new(true);
                    action = 2;
                }
                _ => return Err(ERROR_OPEN_FAILED),
            },
        }
        let file = oo.open(&r.host).map_err(|e| io_error(&e))?;
        if action != 1 && size > 0 {
            let _ = file.set_len(size.min(MAX_FILE_SIZE));
        }
        if action != 1
            && let Ok(md) = file.metadata()
        {
            self.fs.stamp(&md);
        }
        let h = self.table.insert(Handle::File { file, access })?;
        self.table.states.insert(h, mode);
        Ok((h, action))
    }

    pub fn write_file(&mut self, h: u16, data: &[u8]) -> Result<usize, u32> {
        let written = self.fs.written;
        let md = match self.table.get(h) {
            Some(Handle::File { file, access, .. }) => {
                if *access == 0 {
                    return Err(ERROR_ACCESS_DENIED);
                }
                // Bounded by bytes, not by file size: a seek far ahead and
                // a write would otherwise make a huge (sparse) file.
                let pos = file.stream_position().map_err(|e| io_error(&e))?;
                let len = data.len() as u64;
                if pos.saturating_add(len) > MAX_FILE_SIZE
                    || written.saturating_add(len) > MAX_DISK_WRITE
                {
                    return Err(ERROR_DISK_FULL);
                }
                file.write_all(data).map_err(|e| io_error(&e))?;
                file.metadata().ok()
            }
            _ => return Err(ERROR_INVALID_HANDLE),
        };
        self.fs.written += data.len() as u64;
        if let Some(md) = md {
            self.fs.stamp(&md);
        }
        Ok(data.len())
    }

    /// File size, allocation and attributes of an open file.
    pub fn file_info(&mut self, h: u16) -> Result<(u64, u16, Stamps), u32> {
        match self.table.get(h) {
            Some(Handle::File { file, .. }) => {
                let md = file.metadata().map_err(|e| io_error(&e))?;
                let s = self.fs.stamp_of(&md);
                Ok((md.len(), attr_of(&md), s))
            }
            Some(Handle::Std(_) | Handle::Pipe(_) | Handle::NPipe(_)) => {
                Ok((0, 0, Stamps::all((0, 0))))
            }
            None => Err(ERROR_INVALID_HANDLE),
        }
    }

    /// Size, attributes and stamps of a file or directory by path.
    pub fn path_info(&mut self, path: &[u8]) -> Result<(u64, u16, Stamps), u32> {
        let r = self.resolve(path)?;
        if r.exists.is_none() {
            return Err(ERROR_FILE_NOT_FOUND);
        }
        let md = r.host.symlink_metadata().map_err(|e| io_error(&e))?;
        let len = if md.is_dir() { 0 } else { md.len() };
        Ok((len, attr_of(&md), self.fs.stamp_of(&md)))
    }

    /// DosSetFileInfo level 1 on an open file: the stamps given (a zero
    /// date and time keep one), and the read-only attribute when `attr`
    /// is given. A handle opened for reading only may not be changed.
    pub fn set_file_info(
        &mut self,
        h: u16,
        stamps: NewStamps,
        attr: Option<u16>,
    ) -> Result<(), u32> {
        let md = match self.table.get(h) {
            Some(Handle::File { file, access, .. }) => {
                if *access == 0 {
                    return Err(ERROR_ACCESS_DENIED);
                }
                file.metadata().map_err(|e| io_error(&e))?
            }
            Some(Handle::Std(_) | Handle::Pipe(_) | Handle::NPipe(_)) => return Ok(()),
            None => return Err(ERROR_INVALID_HANDLE),
        };
        self.fs.set_stamps(&md, stamps);
        if let Some(a) = attr {
            set_readonly(&md, None, a)?;
        }
        Ok(())
    }

    /// DosSetPathInfo level 1: as [`Files::set_file_info`] by path.
    pub fn set_path_info(
        &mut self,
        path: &[u8],
        stamps: NewStamps,
        attr: Option<u16>,
    ) -> Result<(), u32> {
        let r = self.resolve(path)?;
        if r.exists.is_none() {
            return Err(ERROR_FILE_NOT_FOUND);
        }
        let md = r.host.symlink_metadata().map_err(|e| io_error(&e))?;
        self.fs.set_stamps(&md, stamps);
        if let Some(a) = attr {
            set_readonly(&md, Some(&r.host), a)?;
        }
        Ok(())
    }

    pub fn delete(&mut self, path: &[u8]) -> Result<(), u32> {
        let r = self.resolve(path)?;
        match r.exists {
            None => Err(ERROR_FILE_NOT_FOUND),
            Some(true) => Err(ERROR_ACCESS_DENIED),
            Some(false) => fs::remove_file(&r.host).map_err(|e| io_error(&e)),
        }
    }

    /// Attributes of a path (DosQFileMode).
    pub fn file_mode(&mut self, path: &[u8]) -> Result<u16, u32> {
        let r = self.resolve(path)?;
        match r.exists {
            None => Err(ERROR_FILE_NOT_FOUND),
            Some(_) => {
                let md = r.host.symlink_metadata().map_err(|e| io_error(&e))?;
                Ok(attr_of(&md))
            }
        }
    }

    /// Make a directory.
    pub fn mkdir(&mut self, path: &[u8]) -> Result<(), u32> {
        let r = self.resolve(path)?;
        if r.exists.is_some() {
            return Err(ERROR_ACCESS_DENIED);
        }
        fs::create_dir(&r.host).map_err(|e| io_error(&e))
    }

    /// Change the current directory.
    pub fn chdir(&mut self, path: &[u8]) -> Result<(), u32> {
        let comps = self.fs.sandbox.components(path, &self.table.cwd, false)?;
        let r = self.fs.sandbox.resolve_components(&comps)?;
        if r.exists != Some(true) {
            return Err(ERROR_PATH_NOT_FOUND);
        }
        self.table.cwd = r
            .os2
            .split('\\')
            .skip(1)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        Ok(())
    }

    /// Collect the entries matching a pattern path for DosFindFirst.
    pub fn find(&mut self, pattern: &[u8], attr: u16) -> Result<Vec<FindEntry>, u32> {
        let mut comps = self.fs.sandbox.components(pattern, &self.table.cwd, true)?;
        let pat = comps.pop().ok_or(ERROR_FILE_NOT_FOUND)?;
        let dir = self.fs.sandbox.resolve_components(&comps)?;
        if dir.exists != Some(true) {
            return Err(ERROR_PATH_NOT_FOUND);
        }
        let mut out = Vec::new();
        let rd = fs::read_dir(&dir.host).map_err(|e| io_error(&e))?;
        let mut names: Vec<(String, fs::Metadata)> = rd
            .filter_map(|e| {
                let e = e.ok()?;
                let md = e.path().symlink_metadata().ok()?;
                Some((e.file_name().into_string().ok()?, md))
            })
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, md) in names {
            if md.file_type().is_symlink() || !wild_match(&pat, &name) {
                continue;
            }
            if md.is_dir() && attr & 0x10 == 0 {
                continue;
            }
            let stamps = self.fs.stamp_of(&md);
            out.push(FindEntry {
                name,
                size: md.len(),
                attr: attr_of(&md),
                stamps,
            });
        }
        if out.is_empty()
            && comps.is_empty()
            && let Some(host) = self.fs.sandbox.root_program(&pat)
            && let Ok(md) = host.metadata()
        {
            out.push(FindEntry {
                name: pat.to_ascii_uppercase(),
                size: md.len(),
                attr: attr_of(&md),
                stamps: self.fs.stamp_of(&md),
            });
        }
        if out.is_empty() {
            return Err(ERROR_NO_MORE_FILES);
        }
        Ok(out)
    }
}

/// The device a name opens (`CON`, `NUL`, also as `\DEV\NUL`), if any.
fn device(path: &[u8]) -> Option<u8> {
    let up = path.to_ascii_uppercase();
    let name = up.strip_prefix(b"\\DEV\\").unwrap_or(&up);
    let stem = name.split(|&c| c == b'.').next().unwrap_or(name);
    match stem {
        b"CON" => Some(3),
        b"NUL" => Some(4),
        _ => None,
    }
}

/// Attribute bits a file may be given (read-only, hidden, system,
/// archive); directory and others are refused.
const SETTABLE_ATTRS: u16 = 0x27;

/// Make the host file read-only or not as OS/2 attribute bit 0 says.
/// Hidden, system and archive have no host form and are not kept.
fn set_readonly(md: &fs::Metadata, path: Option<&Path>, attr: u16) -> Result<(), u32> {
    if attr & !SETTABLE_ATTRS != 0 {
        return Err(ERROR_ACCESS_DENIED);
    }
    let Some(path) = path else {
        // An open handle: the attribute applies when the file is closed
        // on OS/2; the host file keeps its mode.
        return Ok(());
    };
    if md.is_dir() {
        return Ok(());
    }
    let mut perm = md.permissions();
    let ro = attr & 1 != 0;
    if perm.readonly() != ro {
        #[allow(clippy::permissions_set_readonly_false)]
        perm.set_readonly(ro);
        fs::set_permissions(path, perm).map_err(|e| io_error(&e))?;
    }
    Ok(())
}

fn attr_of(md: &fs::Metadata) -> u16 {
    if md.is_dir() {
        0x10
    } else if md.permissions().readonly() {
        0x21
    } else {
        0x20
    }
}

/// An OS/2 error code for a host I/O error.
fn io_error(e: &std::io::Error) -> u32 {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::NotFound => ERROR_FILE_NOT_FOUND,
        K::PermissionDenied => ERROR_ACCESS_DENIED,
        K::AlreadyExists => ERROR_ACCESS_DENIED,
        _ => ERROR_ACCESS_DENIED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(wild_match("*.TSF", "static.tsf"));
        assert!(wild_match("A?C", "abc"));
        assert!(!wild_match("A?C", "abcd"));
        assert!(wild_match("*.*", "NODOT"));
        assert!(wild_match("TRC*", "TRC00C5.TFF"));
        assert!(!wild_match("*.TFF", "x.tdf"));
    }

    #[test]
    fn devices() {
        assert_eq!(device(b"NUL"), Some(4));
        assert_eq!(device(b"\\dev\\con"), Some(3));
        assert_eq!(device(b"nul.txt"), Some(4));
        assert_eq!(device(b"NULL"), None);
        let dir = tempfile::tempdir().unwrap();
        let mut fs = FileSystem::new(dir.path()).unwrap();
        let mut table = FileTable::default();
        let mut f = Files {
            fs: &mut fs,
            table: &mut table,
        };
        let (h, action) = f.open(b"NUL", 0x01, 0x41, 0).unwrap();
        assert_eq!((h, action), (3, 1));
        assert_eq!(f.table.handle_type(h), Ok((1, 0x8083)));
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }

    /// Two processes over one file system: each has its own handles,
    /// limit and current directory, and both see the same files, the same
    /// time stamps and one write budget.
    #[test]
    fn handles_are_per_process() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("SUB")).unwrap();
        let mut fs = FileSystem::new(dir.path()).unwrap();
        fs.now = (0x5A21, 0x6000);
        let (mut a, mut b) = (FileTable::default(), FileTable::default());
        let (h, action) = Files {
            fs: &mut fs,
            table: &mut a,
        }
        .open(b"OUT.TXT", 0x10, 0x41, 0)
        .unwrap();
        assert_eq!((h, action), (3, 2));
        assert_eq!(
            Files {
                fs: &mut fs,
                table: &mut a,
            }
            .write_file(h, b"hello"),
            Ok(5)
        );
        // B has only its standard handles: A's handle 3 is not B's.
        assert_eq!(b.handle_type(h), Err(ERROR_INVALID_HANDLE));
        assert_eq!(b.close(h), Err(ERROR_INVALID_HANDLE));
        let mut fb = Files {
            fs: &mut fs,
            table: &mut b,
        };
        assert_eq!(fb.write_file(h, b"x"), Err(ERROR_INVALID_HANDLE));
        // B's current directory moves alone; the file and its stamp are
        // the same for both.
        fb.chdir(b"SUB").unwrap();
        assert_eq!(fb.table.cwd_text(), "SUB");
        let found = fb.find(b"\\*.TXT", 0).unwrap();
        assert_eq!(
            (
                found[0].size,
                found[0].stamps.written.0,
                found[0].stamps.written.1
            ),
            (5, 0x5A21, 0x6000)
        );
        assert_eq!(a.cwd_text(), "");
        assert_eq!(fs.written, 5);
        assert_eq!(a.close(h), Ok(()));
    }
}
