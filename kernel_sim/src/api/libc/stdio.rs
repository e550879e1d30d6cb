//! stdio streams and the low-level I/O (`_open`, `_read`, ...) on the
//! kernel's file handles, and the file-system calls (`_stat`, `remove`,
//! `_getcwd`, ...). See the module docs of [`super`] for the decisions.

use super::{
    Call, EACCES, EBADF, EINVAL, FILE_SIZE, Process, Stop, cstr, data, errno_of, free, malloc,
    put_sz, rt, set_errno, stack_arg, zero,
};
use crate::api::uconv::{read, wr32, write};

/// End of file.
const EOF: u32 = u32::MAX;
/// Bytes read from a handle at a time.
const CHUNK: usize = 0x1000;
/// Most bytes one fread/fwrite/_read/_write moves (like DosRead's bound).
const MAX_IO: u32 = 0x100_0000;

// Low-level flags (_open's oflag, VisualAge C++'s fcntl.h).
const O_WRONLY: u32 = 0x0001;
const O_RDWR: u32 = 0x0002;
const O_APPEND: u32 = 0x0008;
const O_CREAT: u32 = 0x0100;
const O_TRUNC: u32 = 0x0200;
const O_EXCL: u32 = 0x0400;
const O_BINARY: u32 = 0x8000;

// Handle flags (_get_handle_flags): open, append, device, text.
const F_OPEN: u32 = 0x01;
const F_PIPE: u32 = 0x08;
const F_APPEND: u32 = 0x20;
const F_DEVICE: u32 = 0x40;
const F_TEXT: u32 = 0x80;

/// One FILE.
#[derive(Debug, Default)]
pub(crate) struct Stream {
    fd: u16,
    read: bool,
    write: bool,
    append: bool,
    text: bool,
    eof: bool,
    err: bool,
    /// Raw bytes read ahead, and the next one.
    buf: Vec<u8>,
    pos: usize,
    /// ungetc's bytes (last pushed first out).
    back: Vec<u8>,
    /// The FILE block came from the heap (fclose frees it).
    heap: bool,
}

impl Stream {
    /// A standard stream (0, 1 or 2): text mode.
    pub(crate) fn std(fd: u16) -> Stream {
        Stream {
            fd,
            read: fd == 0,
            write: fd != 0,
            text: true,
            ..Stream::default()
        }
    }
}

fn stream(p: &mut Process, f: u32) -> Option<&mut Stream> {
    rt(p).streams.get_mut(&f)
}

/// A call that fails the C way: errno `e`, the result EOF (-1).
fn fail(p: &mut Process, e: u32) -> Result<u32, Stop> {
    set_errno(p, e)?;
    Ok(EOF)
}

/// An OS/2 call's result the C way: `ok` of its value, or EOF with the
/// errno of its return code.
fn or_errno<T>(p: &mut Process, r: Result<T, u32>, ok: impl FnOnce(T) -> u32) -> Result<u32, Stop> {
    match r {
        Ok(v) => Ok(ok(v)),
        Err(rc) => fail(p, errno_of(rc)),
    }
}

/// 0, or EOF with the errno of an OS/2 call's return code.
fn status(p: &mut Process, r: Result<(), u32>) -> Result<u32, Stop> {
    or_errno(p, r, |()| 0)
}

/// A stream's handle failed with `rc`: its error flag and errno.
fn stream_failed(p: &mut Process, f: u32, rc: u32) -> Result<(), Stop> {
    if let Some(s) = stream(p, f) {
        s.err = true;
    }
    set_errno(p, errno_of(rc))
}

/// Writes `data` (already in the stream's form) to a handle.
fn put_handle(p: &mut Process, fd: u16, data: &[u8]) -> Result<(), u32> {
    let mut at = 0;
    while at < data.len() {
        let n = p.write_handle(fd, &data[at..])?;
        if n == 0 {
            return Err(crate::rc::ERROR_DISK_FULL);
        }
        at += n;
    }
    Ok(())
}

/// `\n` as CR LF.
fn to_text(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + data.len() / 16);
    for &b in data {
        if b == b'\n' {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

/// Writes bytes to a stream; the count written, or EOF (errno set).
pub(super) fn fwrite_text(p: &mut Process, f: u32, data: &[u8]) -> Result<u32, Stop> {
    let Some(s) = stream(p, f) else {
        return fail(p, EBADF);
    };
    if !s.write {
        s.err = true;
        return fail(p, EBADF);
    }
    let (fd, text, append) = (s.fd, s.text, s.append);
    // What was read ahead is given back before writing.
    sync_read(p, f);
    if append {
        let _ = p.pcb.files.seek(fd, 0, 2);
    }
    let bytes = if text { to_text(data) } else { data.to_vec() };
    match put_handle(p, fd, &bytes) {
        Ok(()) => Ok(data.len() as u32),
        Err(rc) => {
            stream_failed(p, f, rc)?;
            Ok(EOF)
        }
    }
}

/// Writes to the standard stream `fd` (1 stdout, 2 stderr).
pub(super) fn write_stream_at(p: &mut Process, fd: u32, data: &[u8]) -> Result<u32, Stop> {
    let d = data_of(p)?;
    let r = fwrite_text(p, d + super::D_FILES + FILE_SIZE * fd, data)?;
    Ok(if r == EOF { r } else { data.len() as u32 })
}

fn data_of(p: &mut Process) -> Result<u32, Stop> {
    data(p).map_err(|e| Stop::Outcome(crate::error::Outcome::HostError(e)))
}

/// Gives back read-ahead bytes: the handle's position becomes the
/// stream's.
fn sync_read(p: &mut Process, f: u32) {
    let Some(s) = stream(p, f) else {
        return;
    };
    let ahead = (s.buf.len() - s.pos) as i64;
    let fd = s.fd;
    s.buf.clear();
    s.pos = 0;
    s.back.clear();
    if ahead > 0 {
        let _ = p.pcb.files.seek(fd, -ahead, 1);
    }
}

/// The next raw byte of a stream, reading ahead; `None` at end of file.
fn raw_byte(p: &mut Process, f: u32) -> Result<Option<u8>, u32> {
    let Some(s) = stream(p, f) else {
        return Err(crate::rc::ERROR_INVALID_HANDLE);
    };
    if s.pos < s.buf.len() {
        s.pos += 1;
        return Ok(Some(s.buf[s.pos - 1]));
    }
    let fd = s.fd;
    let chunk = p.read_handle(fd, CHUNK)?;
    let Some(s) = stream(p, f) else {
        return Err(crate::rc::ERROR_INVALID_HANDLE);
    };
    s.buf = chunk;
    s.pos = 0;
    if s.buf.is_empty() {
        return Ok(None);
    }
    s.pos = 1;
    Ok(Some(s.buf[0]))
}

/// The next byte of a stream as the program sees it (text mode: CR LF
/// is `\n`, Ctrl-Z ends the file); `None` at end of file (the EOF flag
/// set).
fn get_byte(p: &mut Process, f: u32) -> Result<Option<u8>, Stop> {
    let Some(s) = stream(p, f) else {
        set_errno(p, EBADF)?;
        return Ok(None);
    };
    if !s.read {
        s.err = true;
        return Ok(None);
    }
    if let Some(b) = s.back.pop() {
        return Ok(Some(b));
    }
    if s.eof {
        return Ok(None);
    }
    let text = s.text;
    let b = match raw_byte(p, f) {
        Ok(b) => b,
        Err(rc) => {
            stream_failed(p, f, rc)?;
            return Ok(None);
        }
    };
    let b = match b {
        Some(0x1A) if text => None,
        Some(b'\r') if text => match raw_byte(p, f).ok().flatten() {
            Some(b'\n') => Some(b'\n'),
            Some(other) => {
                if let Some(s) = stream(p, f) {
                    s.back.push(other);
                }
                Some(b'\r')
            }
            None => Some(b'\r'),
        },
        b => b,
    };
    if b.is_none()
        && let Some(s) = stream(p, f)
    {
        s.eof = true;
    }
    Ok(b)
}

pub(super) fn fgetc(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    Ok(get_byte(p, c.l(0))?.map_or(EOF, u32::from))
}

pub(super) fn fputc(p: &mut Process, f: u32, ch: u32) -> Result<u32, Stop> {
    let r = fwrite_text(p, f, &[ch as u8])?;
    Ok(if r == EOF { EOF } else { ch & 0xFF })
}

/// fgets(buf, n, stream).
pub(super) fn fgets(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (buf, n, f) = (c.l(0), c.l(1) as i32, c.l(2));
    if n <= 0 {
        return Ok(0);
    }
    let mut line = Vec::new();
    while (line.len() as i32) < n - 1 {
        match get_byte(p, f)? {
            Some(b) => {
                line.push(b);
                if b == b'\n' {
                    break;
                }
            }
            None => break,
        }
    }
    if line.is_empty() {
        return Ok(0);
    }
    put_sz(p, buf, &line)?;
    Ok(buf)
}

/// fgetws(buf, n, stream): bytes of the process's code page as UCS-2.
pub(super) fn fgetws(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (buf, n, f) = (c.l(0), c.l(1) as i32, c.l(2));
    if n <= 0 {
        return Ok(0);
    }
    let cp = crate::api::codepage::CodePage::get(crate::api::codepage::PROCESS_CP);
    let mut line: Vec<u16> = Vec::new();
    while (line.len() as i32) < n - 1 {
        let Some(b) = get_byte(p, f)? else {
            break;
        };
        let u = cp
            .and_then(|cp| cp.table()[usize::from(b)])
            .map_or(u16::from(b), |ch| ch as u32 as u16);
        line.push(u);
        if b == b'\n' {
            break;
        }
    }
    if line.is_empty() {
        return Ok(0);
    }
    line.push(0);
    crate::api::uconv::write_units(p, buf, &line)?;
    Ok(buf)
}

/// fread's and fwrite's stream (on the stack) and byte count;
/// `None` when no bytes move (errno EINVAL for more than MAX_IO).
fn block_io(p: &mut Process, size: u32, count: u32) -> Result<Option<(u32, u32)>, Stop> {
    let f = stack_arg(p, 16)?;
    let Some(total) = size.checked_mul(count).filter(|&t| t <= MAX_IO) else {
        set_errno(p, EINVAL)?;
        return Ok(None);
    };
    Ok((total > 0).then_some((f, total)))
}

/// fread(buf, size, count, stream).
pub(super) fn fread(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (buf, size, count) = (c.l(0), c.l(1), c.l(2));
    let Some((f, total)) = block_io(p, size, count)? else {
        return Ok(0);
    };
    // Check the buffer before reading the stream.
    read(p, buf, total)?;
    let mut out = Vec::new();
    while (out.len() as u32) < total {
        match get_byte(p, f)? {
            Some(b) => out.push(b),
            None => break,
        }
    }
    write(p, buf, &out)?;
    Ok(out.len() as u32 / size)
}

/// fwrite(buf, size, count, stream).
pub(super) fn fwrite(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (buf, size, count) = (c.l(0), c.l(1), c.l(2));
    let Some((f, total)) = block_io(p, size, count)? else {
        return Ok(0);
    };
    let bytes = read(p, buf, total)?;
    let r = fwrite_text(p, f, &bytes)?;
    Ok(if r == EOF { 0 } else { count })
}

/// fopen(name, mode).
pub(super) fn fopen(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let name = cstr(p, c.l(0))?;
    let mode = cstr(p, c.l(1))?;
    let plus = mode.contains(&b'+');
    let text = !mode.contains(&b'b');
    let (flags, access, read_, write_, append) = match mode.first() {
        Some(b'r') => (0x01u16, if plus { 2u16 } else { 0 }, true, plus, false),
        Some(b'w') => (0x12, if plus { 2 } else { 1 }, plus, true, false),
        Some(b'a') => (0x11, if plus { 2 } else { 1 }, plus, true, true),
        _ => {
            set_errno(p, EINVAL)?;
            return Ok(0);
        }
    };
    // Deny-none sharing, as the runtime opens streams.
    let fd = match p.files().open(&name, flags, access | 0x40, 0) {
        Ok((h, _)) => h,
        Err(rc) => {
            set_errno(p, errno_of(rc))?;
            return Ok(0);
        }
    };
    let file = malloc(p, FILE_SIZE)?;
    if file == 0 {
        let _ = p.pcb.files.close(fd);
        return Ok(0);
    }
    zero(p, file, FILE_SIZE)?;
    wr32(p, file, u32::from(fd))?;
    if append {
        let _ = p.pcb.files.seek(fd, 0, 2);
    }
    rt(p).streams.insert(
        file,
        Stream {
            fd,
            read: read_,
            write: write_,
            append,
            text,
            heap: true,
            ..Stream::default()
        },
    );
    Ok(file)
}

/// fclose(stream): 0, or EOF.
pub(super) fn fclose(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let f = c.l(0);
    let Some(s) = rt(p).streams.remove(&f) else {
        return fail(p, EBADF);
    };
    let r = p.pcb.files.close(s.fd);
    if s.heap {
        free(p, f);
    }
    status(p, r)
}

/// Writes are not buffered: nothing to flush, but a stream's read-ahead
/// is given back (so the handle's position is the stream's).
pub(super) fn fflush(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    if c.l(0) == 0 {
        flush_all(p);
        return Ok(0);
    }
    if stream(p, c.l(0)).is_none() {
        return fail(p, EBADF);
    }
    sync_read(p, c.l(0));
    Ok(0)
}

/// Every stream's read-ahead given back (writes are never held).
pub(super) fn flush_all(p: &mut Process) {
    let files: Vec<u32> = rt(p).streams.keys().copied().collect();
    for f in files {
        sync_read(p, f);
    }
}

/// Closes every stream fopen made (at exit).
pub(super) fn close_all(p: &mut Process) {
    flush_all(p);
    let opened: Vec<(u32, u16)> = rt(p)
        .streams
        .iter()
        .filter(|(_, s)| s.heap)
        .map(|(&f, s)| (f, s.fd))
        .collect();
    for (f, fd) in opened {
        rt(p).streams.remove(&f);
        let _ = p.pcb.files.close(fd);
    }
}

pub(super) fn feof(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    Ok(stream(p, c.l(0)).map_or(0, |s| u32::from(s.eof)))
}

pub(super) fn ferror(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    Ok(stream(p, c.l(0)).map_or(0, |s| u32::from(s.err)))
}

pub(super) fn fileno(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    match stream(p, c.l(0)) {
        Some(s) => Ok(u32::from(s.fd)),
        None => fail(p, EBADF),
    }
}

/// ftell(stream): the handle's position less what is read ahead.
pub(super) fn ftell(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let Some(s) = stream(p, c.l(0)) else {
        return fail(p, EBADF);
    };
    let ahead = (s.buf.len() - s.pos + s.back.len()) as u64;
    let fd = s.fd;
    let r = p.pcb.files.seek(fd, 0, 1);
    or_errno(p, r, |pos| pos.saturating_sub(ahead) as u32)
}

/// fseek(stream, offset, whence): 0 or nonzero; clears EOF.
pub(super) fn fseek(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let f = c.l(0);
    if stream(p, f).is_none() {
        return fail(p, EBADF);
    }
    let (off, whence) = (c.l(1) as i32, c.l(2));
    if whence > 2 {
        return fail(p, EINVAL);
    }
    sync_read(p, f);
    let fd = match stream(p, f) {
        Some(s) => {
            s.eof = false;
            s.fd
        }
        None => return Ok(EOF),
    };
    let r = p.pcb.files.seek(fd, i64::from(off), whence);
    or_errno(p, r, |_| 0)
}

/// perror(s): "s: message" on stderr.
pub(super) fn perror(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let at = super::errno_addr(p)?;
    let e = crate::api::uconv::rd32(p, at)?;
    let mut text = Vec::new();
    if c.l(0) != 0 {
        let s = cstr(p, c.l(0))?;
        if !s.is_empty() {
            text.extend_from_slice(&s);
            text.extend_from_slice(b": ");
        }
    }
    text.extend_from_slice(super::strings::strerror_text(e).as_bytes());
    text.push(b'\n');
    write_stream_at(p, 2, &text)?;
    Ok(0)
}

// ---- low-level I/O ----

fn fd_flags(p: &mut Process, fd: u16) -> u32 {
    rt(p)
        .fds
        .get(&fd)
        .copied()
        .unwrap_or(if fd < 3 { F_TEXT } else { 0 })
}

/// _open(name, oflag [, pmode]) and _sopen(name, oflag, share [, pmode]).
fn open_common(p: &mut Process, name_addr: u32, oflag: u32, share: u32) -> Result<u32, Stop> {
    let name = cstr(p, name_addr)?;
    let access = if oflag & O_RDWR != 0 {
        2
    } else if oflag & O_WRONLY != 0 {
        1
    } else {
        0
    };
    let if_exists = if oflag & (O_CREAT | O_EXCL) == (O_CREAT | O_EXCL) {
        0
    } else if oflag & O_TRUNC != 0 {
        2
    } else {
        1
    };
    let if_new = u16::from(oflag & O_CREAT != 0);
    let flags = (if_new << 4) | if_exists;
    let share = match share {
        0 => 0x40,
        s => (s & 0x70) as u16,
    };
    match p.files().open(&name, flags, access | share, 0) {
        Ok((h, _)) => {
            let mut fl = F_OPEN;
            if oflag & O_BINARY == 0 {
                fl |= F_TEXT;
            }
            if oflag & O_APPEND != 0 {
                fl |= F_APPEND;
            }
            rt(p).fds.insert(h, fl);
            Ok(u32::from(h))
        }
        Err(rc) => {
            let e = if rc == crate::rc::ERROR_OPEN_FAILED && if_exists == 0 {
                super::EEXIST
            } else {
                errno_of(rc)
            };
            fail(p, e)
        }
    }
}

pub(super) fn open_fd(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    open_common(p, c.l(0), c.l(1), 0)
}

pub(super) fn sopen_fd(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    open_common(p, c.l(0), c.l(1), c.l(2))
}

pub(super) fn close_fd(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let fd = c.l(0) as u16;
    let r = p.pcb.files.close(fd);
    if r.is_ok() {
        rt(p).fds.remove(&fd);
    }
    status(p, r)
}

/// _read(fd, buf, n): text mode drops the CR of CR LF and stops at
/// Ctrl-Z.
pub(super) fn read_fd(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (fd, buf, n) = (c.l(0) as u16, c.l(1), c.l(2).min(MAX_IO));
    if n == 0 {
        return Ok(0);
    }
    read(p, buf, n)?;
    let text = fd_flags(p, fd) & F_TEXT != 0;
    let raw = match p.read_handle(fd, n as usize) {
        Ok(b) => b,
        Err(rc) => return fail(p, errno_of(rc)),
    };
    if !text {
        write(p, buf, &raw)?;
        return Ok(raw.len() as u32);
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            0x1A => {
                // Back to the Ctrl-Z: the file ends there.
                let back = (raw.len() - i) as i64;
                let _ = p.pcb.files.seek(fd, -back, 1);
                break;
            }
            b'\r' if raw.get(i + 1) == Some(&b'\n') => {}
            b => out.push(b),
        }
        i += 1;
    }
    write(p, buf, &out)?;
    Ok(out.len() as u32)
}

/// _write(fd, buf, n): text mode writes `\n` as CR LF; returns n.
pub(super) fn write_fd(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (fd, buf, n) = (c.l(0) as u16, c.l(1), c.l(2).min(MAX_IO));
    let bytes = read(p, buf, n)?;
    let flags = fd_flags(p, fd);
    if flags & F_APPEND != 0 {
        let _ = p.pcb.files.seek(fd, 0, 2);
    }
    let data = if flags & F_TEXT != 0 {
        to_text(&bytes)
    } else {
        bytes
    };
    let r = put_handle(p, fd, &data);
    or_errno(p, r, |()| n)
}

pub(super) fn lseek(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (fd, off, whence) = (c.l(0) as u16, c.l(1) as i32, c.l(2));
    if whence > 2 {
        return fail(p, EINVAL);
    }
    match p.pcb.files.seek(fd, i64::from(off), whence) {
        Ok(pos) if pos <= i32::MAX as u64 => Ok(pos as u32),
        Ok(_) => fail(p, EINVAL),
        Err(rc) => fail(p, errno_of(rc)),
    }
}

/// __eof(fd): 1 at end of file, 0 before, -1 (EBADF) for a bad handle.
pub(super) fn eof_fd(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let fd = c.l(0) as u16;
    let files = &mut p.pcb.files;
    let (Ok(cur), Ok(end)) = (files.seek(fd, 0, 1), files.seek(fd, 0, 2)) else {
        return fail(p, EBADF);
    };
    let _ = files.seek(fd, cur as i64, 0);
    Ok(u32::from(cur >= end))
}

/// _get_handle_flags(fd): open, pipe, append, device and text bits.
pub(super) fn handle_flags(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let fd = c.l(0) as u16;
    let Ok((kind, _)) = p.pcb.files.handle_type(fd) else {
        return Ok(0);
    };
    let mut f = fd_flags(p, fd) | F_OPEN;
    match kind {
        1 => f |= F_DEVICE,
        2 => f |= F_PIPE,
        _ => {}
    }
    Ok(f)
}

/// _SysQueryFHState(fd, &state) and _SysQueryHType(fd, &type, &attr):
/// DosQueryFHState and DosQueryHType through `_Optlink`.
pub(super) fn sys_query_fhstate(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    forward(p, 276, c)
}

pub(super) fn sys_query_htype(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    forward(p, 224, c)
}

fn forward(p: &mut Process, ordinal: u32, c: &Call) -> Result<u32, Stop> {
    match crate::api::lookup("DOSCALLS", ordinal).and_then(|d| d.func) {
        Some(f) => f.call(p, c),
        None => Ok(crate::rc::ERROR_INVALID_FUNCTION),
    }
}

// ---- the file system ----

/// _access(path, mode): 0 when it exists (and, for mode 2, is not read
/// only).
pub(super) fn access(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let path = cstr(p, c.l(0))?;
    let r = p.files().path_info(&path);
    match r {
        Ok((_, attr, _)) if c.l(1) & 2 != 0 && attr & 1 != 0 => fail(p, EACCES),
        Ok(_) => Ok(0),
        Err(rc) => fail(p, errno_of(rc)),
    }
}

pub(super) fn remove(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let path = cstr(p, c.l(0))?;
    let r = p.files().delete(&path);
    status(p, r)
}

pub(super) fn chdir(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let path = cstr(p, c.l(0))?;
    let r = p.files().chdir(&path);
    status(p, r)
}

/// _getcwd(buf, n): "C:\dir"; a NULL buffer is malloc'd (n bytes, at
/// least what fits).
pub(super) fn getcwd(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let cwd = format!("C:\\{}", p.pcb.files.cwd_text());
    let text = crate::process::latin1(&cwd);
    let (mut buf, n) = (c.l(0), c.l(1));
    if buf == 0 {
        buf = malloc(p, n.max(text.len() as u32 + 1))?;
        if buf == 0 {
            return Ok(0);
        }
    } else if text.len() as u32 >= n {
        set_errno(p, super::ERANGE)?;
        return Ok(0);
    }
    put_sz(p, buf, &text)?;
    Ok(buf)
}

/// `struct stat` as VisualAge C++'s programs read it (rc.exe takes the
/// size at 16 and st_mtime at 24): mode (16 bits) at 0, the drive (2,
/// C:) at 4, 0 at 8, nlink 1 (16 bits) at 12, size at 16, then atime,
/// mtime and ctime; 32 bytes. Mode is S_IFDIR 0x4000 or S_IFREG 0x8000
/// with S_IREAD 0x100, S_IWRITE 0x80 unless read only, and S_IEXEC 0x40
/// for directories and .EXE/.COM/.CMD/.BAT.
fn stat_bytes(size: u64, attr: u16, stamp: (u16, u16), name: &[u8]) -> Vec<u8> {
    let dir = attr & 0x10 != 0;
    let mut mode: u32 = if dir { 0x4000 | 0x40 } else { 0x8000 };
    mode |= 0x100;
    if attr & 1 == 0 {
        mode |= 0x80;
    }
    let ext = super::strings::split(name).3.to_ascii_uppercase();
    if [&b".EXE"[..], b".COM", b".CMD", b".BAT"].contains(&ext.as_slice()) {
        mode |= 0x40;
    }
    let t = fat_time(stamp);
    let size = size.min(u64::from(u32::MAX)) as u32;
    [mode, 2, 0, 1, size, t, t, t]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect()
}

/// A FAT (date, time) as seconds since 1970.
fn fat_time((date, time): (u16, u16)) -> u32 {
    let y = 1980 + i64::from(date >> 9);
    let m = u32::from((date >> 5) & 0xF).clamp(1, 12);
    let d = u32::from(date & 0x1F).max(1);
    let days = crate::clock::days_from_civil(y, m, d);
    let s = days * 86400
        + i64::from(time >> 11) * 3600
        + i64::from((time >> 5) & 0x3F) * 60
        + 2 * i64::from(time & 0x1F);
    s.clamp(0, i64::from(u32::MAX)) as u32
}

pub(super) fn stat(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let path = cstr(p, c.l(0))?;
    let r = p.files().path_info(&path);
    let (size, attr, stamps) = match r {
        Ok(info) => info,
        Err(rc) => return fail(p, errno_of(rc)),
    };
    let b = stat_bytes(size, attr, stamps.written, &path);
    write(p, c.l(1), &b)?;
    Ok(0)
}

pub(super) fn fstat(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let fd = c.l(0) as u16;
    let r = p.files().file_info(fd);
    let (size, attr, stamps) = match r {
        Ok(info) => info,
        Err(rc) => return fail(p, errno_of(rc)),
    };
    let dev = matches!(p.pcb.files.handle_type(fd), Ok((1 | 2, _)));
    let mut b = stat_bytes(size, attr, stamps.written, b"");
    if dev {
        // S_IFCHR.
        b[0..4].copy_from_slice(&(0x2000u32 | 0x180).to_le_bytes());
    }
    write(p, c.l(1), &b)?;
    Ok(0)
}

/// _utime(path, times): the file's write stamp becomes `times->modtime`
/// (now for NULL).
pub(super) fn utime(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let path = cstr(p, c.l(0))?;
    let t = if c.l(1) == 0 {
        super::time::now_secs(p)
    } else {
        i64::from(crate::api::uconv::rd32(p, c.l(1).wrapping_add(4))?)
    };
    let days = t.div_euclid(86400);
    let secs = t.rem_euclid(86400);
    let tm = super::time::tm_of(days * 86400 + secs);
    let y = (i64::from(tm[5]) + 1900).clamp(1980, 2107) as u16;
    let stamp = crate::fs::dos_stamp(
        y,
        (tm[4] + 1) as u8,
        tm[3] as u8,
        tm[2] as u8,
        tm[1] as u8,
        tm[0] as u8,
    );
    let r = p
        .files()
        .set_path_info(&path, [None, Some(stamp), Some(stamp)], None);
    status(p, r)
}

/// A name no file has, in `dir` (the current directory when empty), with
/// `prefix`: `PREFIXnnnn` (up to 8 characters of name). The counter goes
/// on from the last name given.
fn temp_name(p: &mut Process, dir: &[u8], prefix: &[u8]) -> Option<Vec<u8>> {
    for _ in 0..10_000 {
        let n = {
            let r = rt(p);
            r.tmp_count = r.tmp_count.wrapping_add(1);
            r.tmp_count
        };
        let mut name = dir.to_vec();
        if !name.is_empty() && !matches!(name.last(), Some(b'\\' | b'/')) {
            name.push(b'\\');
        }
        let pre: Vec<u8> = prefix.iter().copied().take(4).collect();
        name.extend_from_slice(&pre);
        name.extend_from_slice(format!("{:0w$}", n % 10_000, w = 8 - pre.len().min(4)).as_bytes());
        if p.files().path_info(&name) == Err(crate::rc::ERROR_FILE_NOT_FOUND) {
            return Some(name);
        }
    }
    None
}

/// tmpnam(buf): a name in the current directory (TMP is for _tempnam);
/// NULL gives the runtime's buffer.
pub(super) fn tmpnam(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let Some(name) = temp_name(p, b"", b"") else {
        return Ok(0);
    };
    let buf = if c.l(0) == 0 {
        data_of(p)? + super::D_TMPNAM
    } else {
        c.l(0)
    };
    put_sz(p, buf, &name)?;
    Ok(buf)
}

/// _tempnam(dir, prefix): a malloc'd name in TMP's directory if it
/// exists, else `dir`, else the current directory.
pub(super) fn tempnam(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let mut dir = super::strings::env_value(p, b"TMP")?.unwrap_or_default();
    let exists = |p: &mut Process, d: &[u8]| {
        !d.is_empty() && matches!(p.files().path_info(d), Ok((_, a, _)) if a & 0x10 != 0)
    };
    if !exists(p, &dir) {
        dir = if c.l(0) != 0 {
            cstr(p, c.l(0))?
        } else {
            Vec::new()
        };
        if !exists(p, &dir) {
            dir.clear();
        }
    }
    let prefix = if c.l(1) != 0 {
        cstr(p, c.l(1))?
    } else {
        Vec::new()
    };
    let Some(name) = temp_name(p, &dir, &prefix) else {
        return Ok(0);
    };
    let a = malloc(p, name.len() as u32 + 1)?;
    if a != 0 {
        put_sz(p, a, &name)?;
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_mode_and_stat() {
        assert_eq!(to_text(b"a\nb\n"), b"a\r\nb\r\n");
        // 2000-02-29 01:01:02 in FAT form.
        let date = (20 << 9) | (2 << 5) | 29;
        let time = (1 << 11) | (1 << 5) | 1;
        assert_eq!(fat_time((date, time)), 951_782_400 + 3662);
        let b = stat_bytes(1234, 0x01, (date, time), b"X.EXE");
        assert_eq!(b.len(), 32);
        assert_eq!(
            u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            0x8000 | 0x100 | 0x40
        );
        assert_eq!(u32::from_le_bytes([b[16], b[17], b[18], b[19]]), 1234);
        assert_eq!(
            u32::from_le_bytes([b[24], b[25], b[26], b[27]]),
            951_782_400 + 3662
        );
    }
}
