//! Anonymous pipes: DosMakePipe (16-bit) and DosCreatePipe (32-bit), and
//! what DosRead and DosWrite do on their handles.
//!
//! Decisions: a pipe is a bounded byte queue shared by its read and write
//! handles ([`PipeEnd`]); a handle's copies (DosDupHandle, a child's
//! inherited table) count as ends, and dropping the last write end is
//! end of file for the reader, dropping the last read end makes writes
//! fail with ERROR_BROKEN_PIPE. The size the caller asks for is the
//! queue's capacity: 0 means the default 4096 bytes, and more than 65504
//! (the most OS/2 gives one pipe) is cut to 65504. A read returns what is
//! queued (at most what was asked), or blocks the thread (`threads.rs`)
//! while the pipe is empty and a write end is open; a read with no write
//! end open and nothing queued returns 0 bytes. A write queues what fits
//! and blocks until the rest fits or the read ends are closed (then
//! ERROR_BROKEN_PIPE, with the bytes queued so far as the count). Both
//! handles are inheritable; the read handle's state is
//! OPEN_ACCESS_READONLY, the write handle's OPEN_ACCESS_WRITEONLY, both
//! OPEN_SHARE_DENYNONE. Seeking on a pipe is ERROR_SEEK_ON_DEVICE and
//! DosQueryHType says HANDTYPE_PIPE (2). The built-in CMD.EXE reads its
//! standard input without blocking: an empty pipe reads as end of file.

pub(crate) mod queue;

use std::cell::{RefCell, RefMut};
use std::rc::Rc;

use self::queue::Queue;

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call, Stop};
use crate::fs::Handle;
use crate::process::Process;
use crate::rc::*;
use crate::threads::Wait;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 16 "DosMakePipe" Far16 [P, P, W] create),
    api!("DOSCALLS" 239 "DosCreatePipe" Sys32 [P, P, L] create),
];

/// The queue of one pipe and how many ends of each kind are open.
#[derive(Debug)]
struct Pipe {
    queue: Queue,
    readers: u32,
    writers: u32,
}

/// One handle's end of a pipe. Cloning it opens another end of the same
/// kind; dropping it closes one.
#[derive(Debug)]
pub(crate) struct PipeEnd {
    pipe: Rc<RefCell<Pipe>>,
    /// The write end (else the read end).
    pub(crate) write: bool,
}

impl PipeEnd {
    /// A new pipe's read and write ends.
    pub(crate) fn pair(capacity: usize) -> (PipeEnd, PipeEnd) {
        let pipe = Rc::new(RefCell::new(Pipe {
            queue: Queue::new(capacity),
            readers: 1,
            writers: 1,
        }));
        (
            PipeEnd {
                pipe: Rc::clone(&pipe),
                write: false,
            },
            PipeEnd { pipe, write: true },
        )
    }

    fn lock(&self) -> RefMut<'_, Pipe> {
        // Borrowed only inside this module's short calls.
        self.pipe.borrow_mut()
    }

    /// Take up to `n` queued bytes. `None`: the pipe is empty and a write
    /// end is open (the reader must wait); an empty vector is end of file.
    pub(crate) fn read(&self, n: usize) -> Option<Vec<u8>> {
        let mut p = self.lock();
        if p.queue.is_empty() && p.writers > 0 && n > 0 {
            return None;
        }
        Some(p.queue.take(n))
    }

    /// Queue as much of `data` as fits; the count queued, or
    /// ERROR_BROKEN_PIPE when no read end is open.
    pub(crate) fn write(&self, data: &[u8]) -> Result<usize, u32> {
        let mut p = self.lock();
        if p.readers == 0 {
            return Err(ERROR_BROKEN_PIPE);
        }
        Ok(p.queue.push(data))
    }
}

impl Clone for PipeEnd {
    fn clone(&self) -> PipeEnd {
        {
            let mut p = self.lock();
            if self.write {
                p.writers += 1;
            } else {
                p.readers += 1;
            }
        }
        PipeEnd {
            pipe: Rc::clone(&self.pipe),
            write: self.write,
        }
    }
}

impl Drop for PipeEnd {
    fn drop(&mut self) {
        let mut p = self.lock();
        if self.write {
            p.writers -= 1;
        } else {
            p.readers -= 1;
        }
    }
}

/// DosMakePipe / DosCreatePipe(&hRead, &hWrite, cb).
fn create(p: &mut Process, c: &Call) -> ApiResult<()> {
    let word = if c.far16 { 2 } else { 4 };
    // Both handles' places are checked before the pipe exists.
    p.arg_bytes(c, 0, word)?;
    p.arg_bytes(c, 1, word)?;
    let (r, w) = PipeEnd::pair(queue::capacity_for(c.l(2)));
    let (hr, hw) = p.pcb.files.open_pipe(r, w)?;
    p.put_word(c, 0, u32::from(hr))?;
    p.put_word(c, 1, u32::from(hw))
}

/// Is handle `h` a named pipe's end (`npipes.rs`)?
pub(crate) fn is_npipe(p: &mut Process, h: u16) -> bool {
    matches!(p.pcb.files.get(h), Some(Handle::NPipe(_)))
}

/// Is handle `h` either kind of pipe (reads and writes may block)?
pub(crate) fn is_any_pipe(p: &mut Process, h: u16) -> bool {
    end_of(p, h).is_some() || is_npipe(p, h)
}

/// The pipe end behind handle `h`, if it is one.
pub(crate) fn end_of(p: &mut Process, h: u16) -> Option<&PipeEnd> {
    match p.pcb.files.get(h) {
        Some(Handle::Pipe(e)) => Some(e),
        _ => None,
    }
}

/// DosRead on a pipe handle: `buf` and `out` are checked linear
/// addresses, `wide` says the count is a dword.
pub(crate) fn read(
    p: &mut Process,
    h: u16,
    buf: u32,
    len: u32,
    out: u32,
    wide: bool,
) -> Result<u32, Stop> {
    match read_now(p, h, buf, len, out, wide) {
        Some(rc) => Ok(rc),
        None => Err(Stop::Block(Wait::PipeRead {
            handle: h,
            buf,
            len,
            out,
            wide,
        })),
    }
}

/// A pipe read if it can finish now: its code; `None` while the pipe is
/// empty and a writer may still write.
pub(crate) fn read_now(
    p: &mut Process,
    h: u16,
    buf: u32,
    len: u32,
    out: u32,
    wide: bool,
) -> Option<u32> {
    let Some(end) = end_of(p, h) else {
        if is_npipe(p, h) {
            return crate::api::npipes::read_now(p, h, buf, len, out, wide);
        }
        return Some(ERROR_INVALID_HANDLE);
    };
    if end.write {
        return Some(ERROR_ACCESS_DENIED);
    }
    // `len` is the guest's: the queue (at most queue::MAX_SIZE) bounds the copy.
    let data = end.read(len as usize)?;
    if !p.write_mem(buf, &data) {
        return Some(ERROR_INVALID_ADDRESS);
    }
    Some(put_count(p, out, data.len() as u32, wide))
}

/// DosWrite on a pipe handle: `done` bytes of `len` at `buf` are queued.
pub(crate) fn write(
    p: &mut Process,
    h: u16,
    (buf, len, done): (u32, u32, u32),
    out: u32,
    wide: bool,
) -> Result<u32, Stop> {
    match write_now(p, h, (buf, len, done), out, wide) {
        Ok(rc) => Ok(rc),
        Err(done) => Err(Stop::Block(Wait::PipeWrite {
            handle: h,
            buf,
            len,
            done,
            out,
            wide,
        })),
    }
}

/// Queue what fits of a pipe write: its code when it is over, else the
/// bytes queued so far (the writer waits for room).
pub(crate) fn write_now(
    p: &mut Process,
    h: u16,
    (buf, len, mut done): (u32, u32, u32),
    out: u32,
    wide: bool,
) -> Result<u32, u32> {
    if is_npipe(p, h) {
        return crate::api::npipes::write_now(p, h, (buf, len, done), out, wide);
    }
    loop {
        let Some(end) = end_of(p, h) else {
            return Ok(ERROR_INVALID_HANDLE);
        };
        if !end.write {
            return Ok(ERROR_ACCESS_DENIED);
        }
        let room = {
            let pipe = end.lock();
            if pipe.readers == 0 {
                None
            } else {
                Some(pipe.queue.room())
            }
        };
        let Some(room) = room else {
            put_count(p, out, done, wide);
            return Ok(ERROR_BROKEN_PIPE);
        };
        if done == len {
            return Ok(put_count(p, out, done, wide));
        }
        if room == 0 {
            return Err(done);
        }
        let k = (len - done).min(room as u32);
        let Some(data) = p.read_mem(buf.wrapping_add(done), k) else {
            put_count(p, out, done, wide);
            return Ok(ERROR_INVALID_ADDRESS);
        };
        let Some(end) = end_of(p, h) else {
            return Ok(ERROR_INVALID_HANDLE);
        };
        match end.write(&data) {
            Ok(n) => done += n as u32,
            Err(e) => {
                put_count(p, out, done, wide);
                return Ok(e);
            }
        }
    }
}

/// Store DosRead's or DosWrite's byte count at `out` (a dword when
/// `wide`, else a word): NO_ERROR, or ERROR_INVALID_ADDRESS.
pub(crate) fn put_count(p: &mut Process, out: u32, n: u32, wide: bool) -> u32 {
    let ok = if wide {
        p.write_mem(out, &n.to_le_bytes())
    } else {
        p.write_mem(out, &(n as u16).to_le_bytes())
    };
    if ok { NO_ERROR } else { ERROR_INVALID_ADDRESS }
}
