//! Queues: the 32-bit QUECALLS API (DosCreateQueue, DosOpenQueue,
//! DosWriteQueue, DosReadQueue, DosPeekQueue, DosPurgeQueue,
//! DosQueryQueue, DosCloseQueue), shared by every process of the system.
//!
//! What OS/2 documents, and this does:
//! - A queue has a name (`\QUEUES\` and a path, compared without case)
//!   and an owner, the process that created it (the server). Only the
//!   owner's threads read, peek and purge (others get
//!   ERROR_QUE_PROC_NOT_OWNED); any process that opened it (the owner's
//!   create counts as an open) writes, queries and closes it. DosOpenQueue
//!   returns the owner's PID.
//! - An element is the writer's PID, a request value, a length, a
//!   pointer and a priority. The data is not copied: the reader gets the
//!   writer's pointer as it was, so data meant for another process goes
//!   in shared memory (DosAllocSharedMem), as in OS/2. Neither the
//!   pointer nor the length is checked.
//! - Order: QUE_FIFO reads the oldest first, QUE_LIFO the newest,
//!   QUE_PRIORITY the highest priority (0..=15, 15 first; more than 15 is
//!   15) and, among equals, the oldest.
//! - DosReadQueue with element 0 removes the first element in that
//!   order; with an element code DosPeekQueue returned, that element
//!   (ERROR_QUE_ELEMENT_NOT_EXIST if it is gone). DosPeekQueue with
//!   element 0 looks at the first element, with a code at the one after
//!   it, and returns the code of the one it looked at.
//! - DCWW_WAIT (0) blocks the thread (`threads.rs`) while there is
//!   nothing to read; DCWW_NOWAIT (1) returns ERROR_QUE_EMPTY; any other
//!   value is ERROR_QUE_INVALID_WAIT. The first event semaphore given
//!   with DCWW_NOWAIT is kept with the queue and posted by each
//!   DosWriteQueue; a different one later is ERROR_INVALID_PARAMETER.
//! - The owner's DosCloseQueue (and its end) deletes the queue: the
//!   other processes' handles then give ERROR_QUE_INVALID_HANDLE, and a
//!   thread blocked reading it wakes with that code. Another process's
//!   close, or its end, gives up its open only.
//!
//! Decisions, where the documents leave room:
//! - Handles are `0x0100 + index`, system-wide (the same in every
//!   process), never reused within a run.
//! - The priority an element keeps is the one written on a priority
//!   queue and 0 on FIFO and LIFO queues.
//! - Element codes are 1, 2, ... in writing order, system-wide.
//! - An event semaphore handle of 0 with DCWW_NOWAIT means none: it is
//!   not kept, and does not conflict with one that is.
//! - Bounds: [`MAX_QUEUES`] queues at once (then ERROR_QUE_NO_MEMORY),
//!   [`MAX_ELEMENTS`] elements in one queue (then ERROR_QUE_NO_MEMORY).
//! - DosCreateQueue's flags are QUE_FIFO, QUE_LIFO or QUE_PRIORITY with
//!   or without QUE_CONVERT_ADDRESS; anything else is
//!   ERROR_INVALID_PARAMETER. The conversion concerns elements written
//!   by the 16-bit DosWriteQueue, which is not implemented (the 16-bit
//!   QUECALLS entries stop the program when called).
//! - A pointer argument the call must write that cannot be written is
//!   ERROR_INVALID_ADDRESS, and nothing is taken off the queue.

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call, Stop};
use crate::process::Process;
use crate::rc::*;
use crate::semaphores::{Opens, SemKind};
use crate::threads::Wait;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("QUECALLS" 9 "DosReadQueue" Sys32 [L, P, P, P, L, L, P, L] raw read),
    api!("QUECALLS" 10 "DosPurgeQueue" Sys32 [L] purge),
    api!("QUECALLS" 11 "DosCloseQueue" Sys32 [L] close),
    api!("QUECALLS" 12 "DosQueryQueue" Sys32 [L, P] query),
    api!("QUECALLS" 13 "DosPeekQueue" Sys32 [L, P, P, P, P, L, P, L] raw peek),
    api!("QUECALLS" 14 "DosWriteQueue" Sys32 [L, L, L, P, L] write),
    api!("QUECALLS" 15 "DosOpenQueue" Sys32 [P, P, S] open),
    api!("QUECALLS" 16 "DosCreateQueue" Sys32 [P, L, S] create),
];

/// Queues that exist at once.
pub const MAX_QUEUES: usize = 1024;
/// Elements one queue holds.
pub const MAX_ELEMENTS: usize = 65535;

/// The first handle.
const FIRST_HANDLE: u32 = 0x0100;

/// DosCreateQueue's flags.
const QUE_FIFO: u32 = 0;
const QUE_LIFO: u32 = 1;
const QUE_PRIORITY: u32 = 2;
const QUE_CONVERT_ADDRESS: u32 = 4;

/// DosReadQueue's and DosPeekQueue's wait values.
const DCWW_WAIT: u32 = 0;
const DCWW_NOWAIT: u32 = 1;

/// One element.
#[derive(Clone, Copy, Debug)]
struct Element {
    code: u32,
    pid: u16,
    request: u32,
    len: u32,
    addr: u32,
    priority: u8,
}

/// One queue.
#[derive(Debug)]
struct Queue {
    /// Upper case, `\QUEUES\...`.
    name: String,
    owner: u16,
    /// QUE_FIFO, QUE_LIFO or QUE_PRIORITY.
    order: u32,
    /// Its elements in reading order.
    elements: Vec<Element>,
    opens: Opens,
    /// The event semaphore DosWriteQueue posts (0: none).
    sem: u32,
}

/// The system's queues.
#[derive(Debug, Default)]
pub(crate) struct Queues {
    slots: Vec<Option<Queue>>,
    last_code: u32,
}

impl Queues {
    fn get(&self, h: u32) -> Option<&Queue> {
        h.checked_sub(FIRST_HANDLE)
            .and_then(|i| self.slots.get(i as usize))
            .and_then(Option::as_ref)
    }

    fn get_mut(&mut self, h: u32) -> Option<&mut Queue> {
        h.checked_sub(FIRST_HANDLE)
            .and_then(|i| self.slots.get_mut(i as usize))
            .and_then(Option::as_mut)
    }

    /// The queue `h` if `pid` has it open.
    fn opened(&mut self, h: u32, pid: u16) -> Result<&mut Queue, u32> {
        self.get_mut(h)
            .filter(|q| q.opens.has(pid))
            .ok_or(ERROR_QUE_INVALID_HANDLE)
    }

    /// The queue `h` if `pid` owns it.
    fn owned(&mut self, h: u32, pid: u16) -> Result<&mut Queue, u32> {
        let q = self.get_mut(h).ok_or(ERROR_QUE_INVALID_HANDLE)?;
        if q.owner != pid {
            return Err(ERROR_QUE_PROC_NOT_OWNED);
        }
        Ok(q)
    }

    fn by_name(&self, name: &str) -> Option<u32> {
        self.slots
            .iter()
            .position(|q| q.as_ref().is_some_and(|q| q.name == name))
            .map(|i| FIRST_HANDLE + i as u32)
    }

    /// Process `pid` ended: the queues it owns go, its opens of others'
    /// are closed.
    pub(crate) fn process_ended(&mut self, pid: u16) {
        for slot in &mut self.slots {
            if let Some(q) = slot {
                if q.owner == pid {
                    *slot = None;
                } else {
                    q.opens.drop_process(pid);
                }
            }
        }
    }
}

/// A queue name: `\QUEUES\` and at least one more character, a valid
/// path (no `:*?"<>|`, no control characters, no empty component), at
/// most 255 bytes. Upper case.
fn check_name(name: &[u8]) -> Result<String, u32> {
    let s: String = name.iter().map(|&b| char::from(b)).collect();
    let up = s.to_ascii_uppercase().replace('/', "\\");
    let Some(rest) = up.strip_prefix("\\QUEUES\\") else {
        return Err(ERROR_QUE_INVALID_NAME);
    };
    let bad = |c: char| c < ' ' || ":*?\"<>|".contains(c);
    if up.len() > 255
        || rest.is_empty()
        || rest.chars().any(bad)
        || rest.split('\\').any(str::is_empty)
    {
        return Err(ERROR_QUE_INVALID_NAME);
    }
    Ok(up)
}

/// DosCreateQueue(&hq, flags, name).
fn create(p: &mut Process, c: &Call) -> ApiResult<()> {
    let flags = c.l(1);
    let order = flags & !QUE_CONVERT_ADDRESS;
    if order > QUE_PRIORITY {
        return Err(ERROR_INVALID_PARAMETER);
    }
    p.arg_ptr(c, 0, 4)?;
    let name = check_name(&p.arg_sz(c, 2)?)?;
    let qs = &mut p.kernel.queues;
    if qs.by_name(&name).is_some() {
        return Err(ERROR_QUE_DUPLICATE);
    }
    if qs.slots.iter().flatten().count() >= MAX_QUEUES || qs.slots.len() >= 0xFFFF {
        return Err(ERROR_QUE_NO_MEMORY);
    }
    let h = FIRST_HANDLE + qs.slots.len() as u32;
    p.put_u32(c, 0, h)?;
    let pid = p.pcb.pid;
    p.kernel.queues.slots.push(Some(Queue {
        name,
        owner: pid,
        order,
        elements: Vec::new(),
        opens: Opens::one(pid),
        sem: 0,
    }));
    Ok(())
}

/// DosOpenQueue(&pid, &hq, name).
fn open(p: &mut Process, c: &Call) -> ApiResult<()> {
    p.arg_ptr(c, 0, 4)?;
    p.arg_ptr(c, 1, 4)?;
    let name = check_name(&p.arg_sz(c, 2)?)?;
    let h = p
        .kernel
        .queues
        .by_name(&name)
        .ok_or(ERROR_QUE_NAME_NOT_EXIST)?;
    let owner = p.kernel.queues.get(h).map_or(0, |q| q.owner);
    p.put_u32(c, 0, u32::from(owner))?;
    p.put_u32(c, 1, h)?;
    let pid = p.pcb.pid;
    if let Some(q) = p.kernel.queues.get_mut(h) {
        q.opens.add(pid);
    }
    Ok(())
}

/// DosWriteQueue(hq, request, cb, pb, priority).
fn write(p: &mut Process, c: &Call) -> ApiResult<()> {
    let pid = p.pcb.pid;
    let qs = &mut p.kernel.queues;
    let code = match qs.last_code.wrapping_add(1) {
        0 => 1,
        n => n,
    };
    let q = qs.opened(c.l(0), pid)?;
    if q.elements.len() >= MAX_ELEMENTS {
        return Err(ERROR_QUE_NO_MEMORY);
    }
    let priority = if q.order == QUE_PRIORITY {
        c.l(4).min(15) as u8
    } else {
        0
    };
    let e = Element {
        code,
        pid,
        request: c.l(1),
        len: c.l(2),
        addr: c.l(3),
        priority,
    };
    match q.order {
        QUE_FIFO => q.elements.push(e),
        QUE_LIFO => q.elements.insert(0, e),
        _ => {
            let at = q
                .elements
                .iter()
                .position(|x| x.priority < priority)
                .unwrap_or(q.elements.len());
            q.elements.insert(at, e);
        }
    }
    let sem = q.sem;
    qs.last_code = code;
    if sem != 0
        && let Ok(s) = p.kernel.sems.get_mut(sem, SemKind::Event)
        && s.count < 0xFFFF
    {
        s.count += 1;
    }
    Ok(())
}

/// DosPurgeQueue(hq).
fn purge(p: &mut Process, c: &Call) -> ApiResult<()> {
    let pid = p.pcb.pid;
    p.kernel.queues.owned(c.l(0), pid)?.elements.clear();
    Ok(())
}

/// DosQueryQueue(hq, &count).
fn query(p: &mut Process, c: &Call) -> ApiResult<()> {
    let pid = p.pcb.pid;
    let n = p.kernel.queues.opened(c.l(0), pid)?.elements.len() as u32;
    p.put_u32(c, 1, n)
}

/// DosCloseQueue(hq).
fn close(p: &mut Process, c: &Call) -> ApiResult<()> {
    let pid = p.pcb.pid;
    let h = c.l(0);
    let qs = &mut p.kernel.queues;
    let q = qs.opened(h, pid)?;
    if q.owner != pid {
        q.opens.remove(pid);
        return Ok(());
    }
    if let Some(slot) = h
        .checked_sub(FIRST_HANDLE)
        .and_then(|i| qs.slots.get_mut(i as usize))
    {
        *slot = None;
    }
    Ok(())
}

/// A DosReadQueue or DosPeekQueue waiting for an element: the queue and
/// where the results go (linear addresses in the owner's memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueWait {
    /// The queue handle.
    pub handle: u32,
    /// REQUESTDATA (PID, request).
    pub request: u32,
    /// The length.
    pub len: u32,
    /// The data pointer.
    pub buf: u32,
    /// The priority byte.
    pub priority: u32,
    /// DosPeekQueue: where the element code goes (else 0).
    pub code_out: u32,
    /// DosPeekQueue: the element before the one wanted (0: the first).
    /// DosReadQueue: the element wanted (0: the first).
    pub element: u32,
}

/// The result of `w` if there is an element for it now: its fields
/// written (and the element removed for a read); `None` to wait on.
pub(crate) fn read_now(p: &mut Process, w: QueueWait) -> Option<u32> {
    let Some(q) = p.kernel.queues.get(w.handle) else {
        return Some(ERROR_QUE_INVALID_HANDLE);
    };
    let peek = w.code_out != 0;
    let at = match (peek, w.element) {
        (_, 0) => 0,
        (false, code) => match q.elements.iter().position(|e| e.code == code) {
            Some(i) => i,
            None => return Some(ERROR_QUE_ELEMENT_NOT_EXIST),
        },
        (true, code) => match q.elements.iter().position(|e| e.code == code) {
            Some(i) => i + 1,
            None => return Some(ERROR_QUE_ELEMENT_NOT_EXIST),
        },
    };
    let e = *q.elements.get(at)?;
    let mut req = Vec::with_capacity(8);
    req.extend(u32::from(e.pid).to_le_bytes());
    req.extend(e.request.to_le_bytes());
    let ok = p.write_mem(w.request, &req)
        && p.write_mem(w.len, &e.len.to_le_bytes())
        && p.write_mem(w.buf, &e.addr.to_le_bytes())
        && p.write_mem(w.priority, &[e.priority])
        && (!peek || p.write_mem(w.code_out, &e.code.to_le_bytes()));
    if !ok {
        return Some(ERROR_INVALID_ADDRESS);
    }
    if !peek && let Some(q) = p.kernel.queues.get_mut(w.handle) {
        q.elements.remove(at);
    }
    Some(NO_ERROR)
}

/// The checks DosReadQueue and DosPeekQueue share; argument `ie` is the
/// element (or its pointer), `iw` the wait flag, `ip` the priority
/// pointer, `is` the semaphore. The wait, or the result code.
fn start(p: &mut Process, c: &Call, peek: bool) -> Result<QueueWait, u32> {
    let pid = p.pcb.pid;
    let h = c.l(0);
    let wait = c.l(5);
    let sem = c.l(7);
    p.kernel.queues.owned(h, pid)?;
    if wait != DCWW_WAIT && wait != DCWW_NOWAIT {
        return Err(ERROR_QUE_INVALID_WAIT);
    }
    let request = p.arg_ptr(c, 1, 8)?;
    let len = p.arg_ptr(c, 2, 4)?;
    let buf = p.arg_ptr(c, 3, 4)?;
    let priority = p.arg_ptr(c, 6, 1)?;
    let (element, code_out) = if peek {
        let at = p.arg_ptr(c, 4, 4)?;
        let b = p.read_mem(at, 4).ok_or(ERROR_INVALID_ADDRESS)?;
        (u32::from_le_bytes([b[0], b[1], b[2], b[3]]), at)
    } else {
        (c.l(4), 0)
    };
    if wait == DCWW_NOWAIT && sem != 0 {
        p.kernel.sems.get_mut(sem, SemKind::Event)?;
        let q = p.kernel.queues.owned(h, pid)?;
        match q.sem {
            0 => q.sem = sem,
            s if s != sem => return Err(ERROR_INVALID_PARAMETER),
            _ => {}
        }
    }
    Ok(QueueWait {
        handle: h,
        request,
        len,
        buf,
        priority,
        code_out,
        element,
    })
}

/// DosReadQueue and DosPeekQueue: now, ERROR_QUE_EMPTY, or a wait.
fn read_or_peek(p: &mut Process, c: &Call, peek: bool) -> Result<u32, Stop> {
    let w = match start(p, c, peek) {
        Ok(w) => w,
        Err(rc) => return Ok(rc),
    };
    match read_now(p, w) {
        Some(rc) => Ok(rc),
        None if c.l(5) == DCWW_NOWAIT => Ok(ERROR_QUE_EMPTY),
        None => Err(Stop::Block(Wait::Queue(w))),
    }
}

/// DosReadQueue(hq, &request, &cb, &pb, element, wait, &priority, hev).
fn read(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    read_or_peek(p, c, false)
}

/// DosPeekQueue(hq, &request, &cb, &pb, &element, wait, &priority, hev).
fn peek(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    read_or_peek(p, c, true)
}
