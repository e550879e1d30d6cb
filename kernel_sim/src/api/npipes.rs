//! Named pipes (32-bit): DosCreateNPipe, DosConnectNPipe,
//! DosDisConnectNPipe, DosOpen of `\PIPE\name`, DosRead / DosWrite /
//! DosClose on either end, DosPeekNPipe, DosQueryNPHState,
//! DosSetNPHState, DosQueryNPipeInfo, DosTransactNPipe, DosCallNPipe and
//! DosWaitNPipe.
//!
//! Decisions, where OS/2's documents leave room:
//! - An **instance** is two bounded byte queues (server to client and
//!   client to server, each the size DosCreateNPipe asked for, 0 meaning
//!   4096, at most 65504) shared by the server's handles and those of
//!   the one client connected to it ([`NpEnd`]: copies made by
//!   DosDupHandle and inheritance count as ends; the last one closed
//!   closes that side). Instances of one name are found in creation
//!   order. Instances live in the kernel, so any process reaches them.
//! - **States**: a new instance is disconnected; DosConnectNPipe makes it
//!   listening and, in blocking mode, waits (the thread blocks,
//!   `threads.rs`) until a client opens it; DosOpen of the name connects
//!   to the first listening instance (ERROR_PIPE_BUSY when every
//!   instance is taken, ERROR_PATH_NOT_FOUND when there is none); a
//!   closed client makes the instance closing (the server reads the end
//!   of file, writes get ERROR_BROKEN_PIPE) until DosDisConnectNPipe,
//!   which also throws away what is queued and leaves the client's
//!   handles disconnected (ERROR_PIPE_NOT_CONNECTED).
//! - **Messages**: on a message pipe (NP_TYPE_MESSAGE) each write is one
//!   message; a message read (NP_READMODE_MESSAGE) returns one message,
//!   or its first part with ERROR_MORE_DATA and the rest on the next
//!   read; a byte read reads across messages. A message is written whole
//!   or not at all: one that does not fit waits for room (or, in
//!   nonblocking mode, is not written: 0 bytes); one longer than 65504
//!   bytes is ERROR_INVALID_PARAMETER. A byte write queues what fits and
//!   waits for the rest (nonblocking: returns what was queued).
//! - **Reads** on an empty pipe wait in blocking mode and are
//!   ERROR_NO_DATA in nonblocking mode; a read before a client is there
//!   is ERROR_PIPE_NOT_CONNECTED. The direction (NP_ACCESS_INBOUND:
//!   client to server, OUTBOUND, DUPLEX) is enforced with
//!   ERROR_ACCESS_DENIED, at DosOpen too.
//! - DosTransactNPipe (duplex message pipes only, else
//!   ERROR_BAD_FORMAT; ERROR_PIPE_BUSY while a message waits to be read)
//!   writes one message and reads one. DosCallNPipe opens the name (as
//!   DosOpen, after waiting for a listening instance for up to its
//!   timeout as DosWaitNPipe does), sets message read mode, transacts
//!   and closes its handle once the answer is read.
//! - DosWaitNPipe waits until an instance of the name listens, for the
//!   given milliseconds (0: the wait time the first instance was created
//!   with; -1: forever), then ERROR_SEM_TIMEOUT; a name with no instance
//!   is ERROR_PATH_NOT_FOUND.
//! - The 16-bit NAMPIPES entries (DosMakeNmPipe, DosConnectNmPipe, ...)
//!   are the same calls with word arguments and results.

use std::cell::RefCell;
use std::rc::Rc;

use crate::api::pipes::put_count;
use crate::api::pipes::queue::{MAX_SIZE, Queue, capacity_for};
use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call, Stop};
use crate::fs::Handle;
use crate::process::Process;
use crate::rc::*;
use crate::threads::Wait;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 240 "DosCallNPipe" Sys32 [S, P, L, P, L, P, L] raw call),
    api!("DOSCALLS" 241 "DosConnectNPipe" Sys32 [L] raw connect),
    api!("DOSCALLS" 242 "DosDisConnectNPipe" Sys32 [L] disconnect),
    api!("DOSCALLS" 243 "DosCreateNPipe" Sys32 [S, P, L, L, L, L, L] create),
    api!("DOSCALLS" 244 "DosPeekNPipe" Sys32 [L, P, L, P, P, P] peek),
    api!("DOSCALLS" 245 "DosQueryNPHState" Sys32 [L, P] query_state),
    api!("DOSCALLS" 248 "DosQueryNPipeInfo" Sys32 [L, L, P, L] info),
    api!("DOSCALLS" 250 "DosSetNPHState" Sys32 [L, L] set_state),
    api!("DOSCALLS" 252 "DosTransactNPipe" Sys32 [L, P, L, P, L, P] raw transact),
    api!("DOSCALLS" 253 "DosWaitNPipe" Sys32 [S, L] raw wait_named),
    api!("NAMPIPES" 1 "DosMakeNmPipe" Far16 [S, P, W, W, W, W, L] create),
    api!("NAMPIPES" 2 "DosQNmPipeInfo" Far16 [W, W, P, W] info),
    api!("NAMPIPES" 3 "DosConnectNmPipe" Far16 [W] raw connect),
    api!("NAMPIPES" 4 "DosDisConnectNmPipe" Far16 [W] disconnect),
    api!("NAMPIPES" 5 "DosQNmPHandState" Far16 [W, P] query_state),
    api!("NAMPIPES" 6 "DosSetNmPHandState" Far16 [W, W] set_state),
    api!("NAMPIPES" 7 "DosPeekNmPipe" Far16 [W, P, W, P, P, P] peek),
    api!("NAMPIPES" 8 "DosWaitNmPipe" Far16 [S, L] raw wait_named),
    api!("NAMPIPES" 9 "DosTransactNmPipe" Far16 [W, P, W, P, W, P] raw transact),
    api!("NAMPIPES" 10 "DosCallNmPipe" Far16 [S, P, W, P, W, P, L] raw call),
];

/// DosDisConnectNPipe(hpipe).
fn disconnect(p: &mut Process, c: &Call) -> ApiResult<()> {
    let e = server_end(p, c.l(0))?;
    let mut i = e.inst.borrow_mut();
    i.state = NP_STATE_DISCONNECTED;
    i.conn = i.conn.wrapping_add(1);
    i.client_handles = 0;
    i.to_client.clear();
    i.to_server.clear();
    Ok(())
}

/// DosQueryNPHState(hpipe, &state).
fn query_state(p: &mut Process, c: &Call) -> ApiResult<()> {
    let e = end(p, c.l(0))?;
    let state = e.handle_state();
    p.put_word(c, 1, u32::from(state))
}

/// DosSetNPHState(hpipe, state): NP_NOWAIT and NP_READMODE_MESSAGE.
fn set_state(p: &mut Process, c: &Call) -> ApiResult<()> {
    let e = end(p, c.l(0))?;
    let want = c.l(1);
    if want & !u32::from(NP_NOWAIT | NP_READMODE_MESSAGE) != 0 {
        return Err(ERROR_INVALID_PARAMETER);
    }
    let mut i = e.inst.borrow_mut();
    if want & u32::from(NP_READMODE_MESSAGE) != 0 && !i.message {
        return Err(ERROR_INVALID_PARAMETER);
    }
    *i.mode_mut(e.server) = want as u16;
    Ok(())
}

const ERROR_BAD_FORMAT: u32 = 11;
const ERROR_PIPE_BUSY: u32 = 231;
const ERROR_NO_DATA: u32 = 232;
const ERROR_PIPE_NOT_CONNECTED: u32 = 233;
const ERROR_MORE_DATA: u32 = 234;

/// Pipe modes (DosCreateNPipe's pipeMode, DosQueryNPHState).
const NP_ICOUNT: u16 = 0x00FF;
const NP_READMODE_MESSAGE: u16 = 0x0100;
const NP_TYPE_MESSAGE: u16 = 0x0400;
const NP_END_SERVER: u16 = 0x4000;
const NP_NOWAIT: u16 = 0x8000;

/// Open modes (DosCreateNPipe's openMode).
const NP_ACCESS_INBOUND: u32 = 0;
const NP_ACCESS_OUTBOUND: u32 = 1;
const NP_ACCESS_DUPLEX: u32 = 2;
const NP_NOINHERIT: u32 = 0x0080;
const NP_WRITEBEHIND: u32 = 0x4000;

/// States (DosPeekNPipe).
const NP_STATE_DISCONNECTED: u16 = 1;
const NP_STATE_LISTENING: u16 = 2;
const NP_STATE_CONNECTED: u16 = 3;
const NP_STATE_CLOSING: u16 = 4;

/// Instances in the system at once.
const MAX_INSTANCES: usize = 256;

/// One instance of a named pipe.
#[derive(Debug)]
pub(crate) struct Instance {
    /// Upper case, with its `\PIPE\`.
    name: Vec<u8>,
    access: u32,
    message: bool,
    /// The instance count DosCreateNPipe gave (0xFF: unlimited).
    icount: u8,
    state: u16,
    /// Which connection the client's handles belong to.
    conn: u32,
    server_handles: u32,
    client_handles: u32,
    to_client: Queue,
    to_server: Queue,
    /// NP_NOWAIT and NP_READMODE_MESSAGE of each end.
    server_mode: u16,
    client_mode: u16,
    /// DosCreateNPipe's wait time (DosWaitNPipe with 0).
    wait_ms: u32,
}

impl Instance {
    fn mode_mut(&mut self, server: bool) -> &mut u16 {
        if server {
            &mut self.server_mode
        } else {
            &mut self.client_mode
        }
    }

    /// The queue an end reads from and the one it writes to.
    fn queues(&mut self, server: bool) -> (&mut Queue, &mut Queue) {
        if server {
            (&mut self.to_server, &mut self.to_client)
        } else {
            (&mut self.to_client, &mut self.to_server)
        }
    }

    fn may_read(&self, server: bool) -> bool {
        self.access == NP_ACCESS_DUPLEX || (self.access == NP_ACCESS_INBOUND) == server
    }

    fn may_write(&self, server: bool) -> bool {
        self.access == NP_ACCESS_DUPLEX || (self.access == NP_ACCESS_OUTBOUND) == server
    }
}

/// Which end of which instance (and, for a client, which connection).
#[derive(Clone, Debug)]
struct Core {
    inst: Rc<RefCell<Instance>>,
    server: bool,
    /// The connection a client end belongs to.
    conn: u32,
}

/// One handle's end of a named pipe instance. Cloning it opens another
/// handle on the same end; dropping it closes one.
#[derive(Debug)]
pub(crate) struct NpEnd {
    core: Core,
    /// DosCallNPipe's handle: closed once its answer is read.
    close_after_read: bool,
}

impl NpEnd {
    /// A new end (counted).
    fn open(inst: &Rc<RefCell<Instance>>, server: bool) -> NpEnd {
        let conn = {
            let mut i = inst.borrow_mut();
            if server {
                i.server_handles += 1;
            } else {
                i.client_handles += 1;
            }
            i.conn
        };
        NpEnd {
            core: Core {
                inst: Rc::clone(inst),
                server,
                conn,
            },
            close_after_read: false,
        }
    }
}

impl Clone for NpEnd {
    fn clone(&self) -> NpEnd {
        {
            let mut i = self.core.inst.borrow_mut();
            if self.core.server {
                i.server_handles += 1;
            } else if i.conn == self.core.conn {
                i.client_handles += 1;
            }
        }
        NpEnd {
            core: self.core.clone(),
            close_after_read: false,
        }
    }
}

impl Drop for NpEnd {
    fn drop(&mut self) {
        let mut i = self.core.inst.borrow_mut();
        if self.core.server {
            i.server_handles = i.server_handles.saturating_sub(1);
            if i.server_handles == 0 {
                i.state = NP_STATE_CLOSING;
            }
        } else if i.conn == self.core.conn && i.client_handles > 0 {
            i.client_handles -= 1;
            if i.client_handles == 0 && i.state == NP_STATE_CONNECTED {
                i.state = NP_STATE_CLOSING;
            }
        }
    }
}

impl Core {
    /// DosQueryNPHState's word for this end.
    fn handle_state(&self) -> u16 {
        let i = self.inst.borrow();
        let mode = if self.server {
            i.server_mode
        } else {
            i.client_mode
        };
        let kind = if i.message { NP_TYPE_MESSAGE } else { 0 };
        let end = if self.server { NP_END_SERVER } else { 0 };
        mode | kind | end | u16::from(i.icount)
    }

    /// Is the connection this end belongs to there (and the instance not
    /// disconnected)? The error if not.
    fn connected(&self, i: &Instance) -> Result<(), u32> {
        if !self.server && i.conn != self.conn {
            return Err(ERROR_PIPE_NOT_CONNECTED);
        }
        match i.state {
            NP_STATE_CONNECTED | NP_STATE_CLOSING => Ok(()),
            _ => Err(ERROR_PIPE_NOT_CONNECTED),
        }
    }

    /// Is the other side gone (closing)?
    fn other_gone(&self, i: &Instance) -> bool {
        i.state == NP_STATE_CLOSING
    }

    /// A read of up to `n` bytes: the bytes and whether a message was
    /// cut (ERROR_MORE_DATA); `Ok(None)` when it must wait.
    fn read(&self, n: usize, message_read: Option<bool>) -> Result<Option<(Vec<u8>, bool)>, u32> {
        let mut i = self.inst.borrow_mut();
        if !i.may_read(self.server) {
            return Err(ERROR_ACCESS_DENIED);
        }
        self.connected(&i)?;
        let gone = self.other_gone(&i);
        let mode = *i.mode_mut(self.server);
        let by_message = message_read.unwrap_or(mode & NP_READMODE_MESSAGE != 0);
        let (q, _) = i.queues(self.server);
        if q.is_empty() {
            if gone {
                return Ok(Some((Vec::new(), false)));
            }
            if mode & NP_NOWAIT != 0 {
                return Err(ERROR_NO_DATA);
            }
            return Ok(None);
        }
        if by_message && let Some(len) = q.next_message() {
            let k = n.min(len);
            return Ok(Some((q.take(k), k < len)));
        }
        Ok(Some((q.take(n), false)))
    }

    /// Queue what it can of `data`: the count queued (a message is
    /// whole or nothing); `Ok(None)` when a blocking writer must wait
    /// with nothing queued.
    fn write(&self, data: &[u8]) -> Result<Option<usize>, u32> {
        let mut i = self.inst.borrow_mut();
        if !i.may_write(self.server) {
            return Err(ERROR_ACCESS_DENIED);
        }
        self.connected(&i)?;
        if self.other_gone(&i) {
            return Err(ERROR_BROKEN_PIPE);
        }
        let message = i.message;
        let nowait = *i.mode_mut(self.server) & NP_NOWAIT != 0;
        let (_, q) = i.queues(self.server);
        if message {
            if data.len() > MAX_SIZE {
                return Err(ERROR_INVALID_PARAMETER);
            }
            if data.len() > q.room() && !q.is_empty() {
                return if nowait { Ok(Some(0)) } else { Ok(None) };
            }
            q.push_message(data);
            return Ok(Some(data.len()));
        }
        if q.room() == 0 && !data.is_empty() && !nowait {
            return Ok(None);
        }
        Ok(Some(q.push(data)))
    }
}

/// Every named pipe instance of the system (`Kernel::npipes`), and the
/// names DosWaitNPipe callers wait for.
#[derive(Debug, Default)]
pub(crate) struct NamedPipes {
    list: Vec<Rc<RefCell<Instance>>>,
    waits: Vec<Vec<u8>>,
}

impl NamedPipes {
    /// Forget instances no server handle holds.
    fn prune(&mut self) {
        self.list.retain(|i| i.borrow().server_handles > 0);
    }

    fn named(&mut self, name: &[u8]) -> Vec<Rc<RefCell<Instance>>> {
        self.prune();
        self.list
            .iter()
            .filter(|i| i.borrow().name == name)
            .cloned()
            .collect()
    }
}

/// `\PIPE\...`, upper case, or ERROR_INVALID_NAME (ERROR_PATH_NOT_FOUND
/// for another path, as for a file that is not there).
fn pipe_name(raw: &[u8]) -> ApiResult<Vec<u8>> {
    let up: Vec<u8> = raw
        .iter()
        .map(|b| {
            if *b == b'/' {
                b'\\'
            } else {
                b.to_ascii_uppercase()
            }
        })
        .collect();
    if !up.starts_with(b"\\PIPE\\") {
        return Err(ERROR_PATH_NOT_FOUND);
    }
    if up.len() == 6 || up.len() > 255 || up[6..].iter().any(|&b| b"*?\"<>|:".contains(&b)) {
        return Err(ERROR_INVALID_NAME);
    }
    Ok(up)
}

/// Is `name` a named pipe's name (DosOpen sends it here)?
pub(crate) fn is_pipe_name(name: &[u8]) -> bool {
    name.len() >= 6 && name[..6].eq_ignore_ascii_case(b"\\PIPE\\")
}

/// The named pipe end behind handle `h` (a look at it, not a handle).
fn end(p: &mut Process, h: u32) -> ApiResult<Core> {
    let h = u16::try_from(h).map_err(|_| ERROR_INVALID_HANDLE)?;
    match p.pcb.files.get(h) {
        Some(Handle::NPipe(e)) => Ok(e.core.clone()),
        Some(_) => Err(ERROR_BAD_PIPE),
        None => Err(ERROR_INVALID_HANDLE),
    }
}

/// ERROR_BAD_PIPE: the handle is not a named pipe's.
const ERROR_BAD_PIPE: u32 = 230;

/// A server end, or ERROR_BAD_PIPE.
fn server_end(p: &mut Process, h: u32) -> ApiResult<Core> {
    let e = end(p, h)?;
    if !e.server {
        return Err(ERROR_BAD_PIPE);
    }
    Ok(e)
}

/// DosCreateNPipe(name, &hpipe, openMode, pipeMode, cbOut, cbIn, msec).
fn create(p: &mut Process, c: &Call) -> ApiResult<()> {
    let name = pipe_name(&p.arg_sz(c, 0)?)?;
    p.arg_ptr(c, 1, if c.far16 { 2 } else { 4 })?;
    let (open_mode, pipe_mode) = (c.l(2), c.l(3));
    let access = open_mode & 3;
    if open_mode & !(3 | NP_NOINHERIT | NP_WRITEBEHIND) != 0 || access > NP_ACCESS_DUPLEX {
        return Err(ERROR_INVALID_PARAMETER);
    }
    let allowed = u32::from(NP_ICOUNT | NP_READMODE_MESSAGE | NP_TYPE_MESSAGE | NP_NOWAIT);
    let icount = (pipe_mode & 0xFF) as u8;
    let message = pipe_mode & u32::from(NP_TYPE_MESSAGE) != 0;
    let read_message = pipe_mode & u32::from(NP_READMODE_MESSAGE) != 0;
    if pipe_mode & !allowed != 0 || icount == 0 || (read_message && !message) {
        return Err(ERROR_INVALID_PARAMETER);
    }
    let same = p.kernel.npipes.named(&name);
    if let Some(first) = same.first() {
        let max = first.borrow().icount;
        if max != 0xFF && same.len() >= usize::from(max) {
            return Err(ERROR_PIPE_BUSY);
        }
    }
    if p.kernel.npipes.list.len() >= MAX_INSTANCES {
        return Err(ERROR_TOO_MANY_OPEN_FILES);
    }
    let mode = (pipe_mode as u16) & (NP_NOWAIT | NP_READMODE_MESSAGE);
    let inst = Rc::new(RefCell::new(Instance {
        name,
        access,
        message,
        icount,
        state: NP_STATE_DISCONNECTED,
        conn: 0,
        server_handles: 0,
        client_handles: 0,
        to_client: Queue::new(capacity_for(c.l(4))),
        to_server: Queue::new(capacity_for(c.l(5))),
        server_mode: mode,
        client_mode: 0,
        wait_ms: c.l(6),
    }));
    let state = if open_mode & NP_NOINHERIT != 0 {
        0x0082
    } else {
        0x0002
    };
    let h = p.pcb.files.open_npipe(NpEnd::open(&inst, true), state)?;
    p.kernel.npipes.list.push(inst);
    if let Err(e) = p.put_word(c, 1, u32::from(h)) {
        let _ = p.pcb.files.close(h);
        return Err(e);
    }
    Ok(())
}

/// DosConnectNPipe(hpipe): listen, and in blocking mode wait for a
/// client.
fn connect(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let e = match server_end(p, c.l(0)) {
        Ok(e) => e,
        Err(rc) => return Ok(rc),
    };
    let nowait = {
        let mut i = e.inst.borrow_mut();
        match i.state {
            NP_STATE_CONNECTED => return Ok(NO_ERROR),
            NP_STATE_CLOSING => return Ok(ERROR_BROKEN_PIPE),
            _ => i.state = NP_STATE_LISTENING,
        }
        i.server_mode & NP_NOWAIT != 0
    };
    if nowait {
        return Ok(ERROR_PIPE_NOT_CONNECTED);
    }
    Err(Stop::Block(Wait::NpConnect {
        handle: c.l(0) as u16,
    }))
}

/// A blocked DosConnectNPipe's code once a client is there.
pub(crate) fn connect_now(p: &mut Process, h: u16) -> Option<u32> {
    let Ok(e) = server_end(p, u32::from(h)) else {
        return Some(ERROR_INVALID_HANDLE);
    };
    match e.inst.borrow().state {
        NP_STATE_CONNECTED => Some(NO_ERROR),
        NP_STATE_LISTENING => None,
        NP_STATE_CLOSING => Some(ERROR_BROKEN_PIPE),
        _ => Some(ERROR_PIPE_NOT_CONNECTED),
    }
}

/// A client end on the first listening instance of `name` (ERROR_PIPE_BUSY
/// when none listens, ERROR_PATH_NOT_FOUND when there is no instance),
/// checked against the access the client asks for (0 read, 1 write, 2
/// both).
fn connect_client(p: &mut Process, name: &[u8], access: u16) -> ApiResult<NpEnd> {
    let name = pipe_name(name)?;
    let same = p.kernel.npipes.named(&name);
    if same.is_empty() {
        return Err(ERROR_PATH_NOT_FOUND);
    }
    let inst = same
        .iter()
        .find(|i| i.borrow().state == NP_STATE_LISTENING)
        .ok_or(ERROR_PIPE_BUSY)?;
    {
        let i = inst.borrow();
        let reads = access != 1;
        let writes = access != 0;
        if access > 2 || (reads && !i.may_read(false)) || (writes && !i.may_write(false)) {
            return Err(ERROR_ACCESS_DENIED);
        }
    }
    {
        let mut i = inst.borrow_mut();
        i.state = NP_STATE_CONNECTED;
        i.conn = i.conn.wrapping_add(1);
        i.client_handles = 0;
        i.client_mode = 0;
    }
    Ok(NpEnd::open(inst, false))
}

/// DosOpen of `\PIPE\name` with `mode` (DosOpen's open mode): the
/// client's handle.
pub(crate) fn open_client(p: &mut Process, name: &[u8], mode: u16) -> ApiResult<u16> {
    let e = connect_client(p, name, mode & 7)?;
    p.pcb.files.open_npipe(e, mode & 0x00FF)
}

/// DosRead on a named pipe handle (`pipes.rs`'s wait calls it again):
/// its code once it can finish, `None` while it must wait.
pub(crate) fn read_now(
    p: &mut Process,
    h: u16,
    buf: u32,
    len: u32,
    out: u32,
    wide: bool,
) -> Option<u32> {
    let e = match end(p, u32::from(h)) {
        Ok(e) => e,
        Err(rc) => return Some(rc),
    };
    let after = match p.pcb.files.get(h) {
        Some(Handle::NPipe(x)) => x.close_after_read,
        _ => false,
    };
    let (data, more) = match e.read(len as usize, after.then_some(true)) {
        Ok(Some(r)) => r,
        Ok(None) => return None,
        Err(rc) => return Some(rc),
    };
    if after {
        let _ = p.pcb.files.close(h);
    }
    if !p.write_mem(buf, &data) {
        return Some(ERROR_INVALID_ADDRESS);
    }
    Some(match put_count(p, out, data.len() as u32, wide) {
        NO_ERROR if more => ERROR_MORE_DATA,
        rc => rc,
    })
}

/// DosWrite on a named pipe handle: `done` of the `len` bytes at `buf`
/// are queued. `Ok(code)` when it is over, `Err(done)` while the writer
/// waits for room.
pub(crate) fn write_now(
    p: &mut Process,
    h: u16,
    (buf, len, mut done): (u32, u32, u32),
    out: u32,
    wide: bool,
) -> Result<u32, u32> {
    let e = match end(p, u32::from(h)) {
        Ok(e) => e,
        Err(rc) => return Ok(rc),
    };
    let put = |p: &mut Process, n: u32| put_count(p, out, n, wide);
    let message = e.inst.borrow().message;
    loop {
        if done == len && (done > 0 || !message) {
            return Ok(put(p, done));
        }
        // A message goes whole: read it all at once (bounded).
        let want = if message {
            len.min(MAX_SIZE as u32 + 1)
        } else {
            (len - done).min(MAX_SIZE as u32)
        };
        let Some(data) = p.read_mem(buf.wrapping_add(done), want) else {
            put(p, done);
            return Ok(ERROR_INVALID_ADDRESS);
        };
        match e.write(&data) {
            Ok(Some(0)) if !data.is_empty() => return Ok(put(p, done)),
            Ok(Some(k)) => {
                done += k as u32;
                if message || k == 0 {
                    return Ok(put(p, done));
                }
            }
            Ok(None) => return Err(done),
            Err(rc) => {
                put(p, done);
                return Ok(rc);
            }
        }
    }
}

/// DosPeekNPipe(hpipe, &buf, cb, &cbActual, &avail, &state): a look at
/// what the end would read, without taking it.
fn peek(p: &mut Process, c: &Call) -> ApiResult<()> {
    let e = end(p, c.l(0))?;
    let w = if c.far16 { 2 } else { 4 };
    for (i, n) in [(3, w), (4, 4), (5, w)] {
        p.arg_ptr(c, i, n)?;
    }
    let (data, total, first, state) = {
        let mut i = e.inst.borrow_mut();
        if !e.server && i.conn != e.conn {
            (Vec::new(), 0, 0, NP_STATE_DISCONNECTED)
        } else {
            let state = i.state;
            let (q, _) = i.queues(e.server);
            (
                q.peek(c.l(2) as usize),
                q.len(),
                q.next_message().unwrap_or(0),
                state,
            )
        }
    };
    if !data.is_empty() {
        p.put_bytes(c, 1, &data)?;
    }
    p.put_word(c, 3, data.len() as u32)?;
    let avail = (total.min(0xFFFF) as u32) | ((first.min(0xFFFF) as u32) << 16);
    p.put_u32(c, 4, avail)?;
    p.put_word(c, 5, u32::from(state))
}

/// DosQueryNPipeInfo(hpipe, level 1, &buf, cb): PIPEINFO (cbOut, cbIn,
/// cbMaxInst, cbCurInst, cbName, szName), as much as fits
/// (ERROR_BUFFER_OVERFLOW when not all).
fn info(p: &mut Process, c: &Call) -> ApiResult<()> {
    let e = end(p, c.l(0))?;
    if c.l(1) != 1 {
        return Err(ERROR_INVALID_LEVEL);
    }
    let (out_size, in_size, icount, name) = {
        let i = e.inst.borrow();
        let (o, n) = if e.server {
            (i.to_client.capacity(), i.to_server.capacity())
        } else {
            (i.to_server.capacity(), i.to_client.capacity())
        };
        (o, n, i.icount, i.name.clone())
    };
    let current = p.kernel.npipes.named(&name).len().min(0xFF) as u8;
    let mut b = Vec::new();
    b.extend((out_size as u16).to_le_bytes());
    b.extend((in_size as u16).to_le_bytes());
    b.extend([icount, current, name.len().min(0xFF) as u8]);
    b.extend(&name);
    b.push(0);
    let cap = c.l(3) as usize;
    if cap == 0 {
        return Err(ERROR_BUFFER_OVERFLOW);
    }
    let fits = b.len() <= cap;
    b.truncate(cap);
    p.put_bytes(c, 2, &b)?;
    if fits {
        Ok(())
    } else {
        Err(ERROR_BUFFER_OVERFLOW)
    }
}

/// DosTransactNPipe(hpipe, &in, cbIn, &out, cbOut, &cbRead).
fn transact(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let h = c.l(0);
    match transact_on(p, h, (c.l(1), c.l(2)), (c.l(3), c.l(4), c.l(5)), c) {
        Ok(()) => {}
        Err(rc) => return Ok(rc),
    }
    let w = if c.far16 { 2 } else { 4 };
    let (buf, out) = match (p.arg_ptr(c, 3, c.l(4).max(1)), p.arg_ptr(c, 5, w)) {
        (Ok(b), Ok(o)) => (b, o),
        _ => return Ok(ERROR_INVALID_ADDRESS),
    };
    crate::api::pipes::read(p, h as u16, buf, c.l(4), out, !c.far16)
}

/// Write the message of a transaction on `h` (a duplex message pipe with
/// nothing waiting to be read).
fn transact_on(
    p: &mut Process,
    h: u32,
    (inp, in_len): (u32, u32),
    (_, out_len, _): (u32, u32, u32),
    c: &Call,
) -> ApiResult<()> {
    let e = end(p, h)?;
    {
        let mut i = e.inst.borrow_mut();
        if !i.message || i.access != NP_ACCESS_DUPLEX {
            return Err(ERROR_BAD_FORMAT);
        }
        e.connected(&i)?;
        let (q, _) = i.queues(e.server);
        if !q.is_empty() {
            return Err(ERROR_PIPE_BUSY);
        }
    }
    let _ = (inp, out_len);
    let data = p.arg_bytes(c, 1, in_len.min(MAX_SIZE as u32 + 1))?;
    match e.write(&data)? {
        Some(_) => Ok(()),
        // No room for the request: as the pipe were busy.
        None => Err(ERROR_PIPE_BUSY),
    }
}

/// DosCallNPipe(name, &in, cbIn, &out, cbOut, &cbActual, msec).
fn call(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let name = match p.arg_sz(c, 0) {
        Ok(n) => n,
        Err(rc) => return Ok(rc),
    };
    let w = if c.far16 { 2 } else { 4 };
    let (buf, out) = match (p.arg_ptr(c, 3, c.l(4).max(1)), p.arg_ptr(c, 5, w)) {
        (Ok(b), Ok(o)) => (b, o),
        _ => return Ok(ERROR_INVALID_ADDRESS),
    };
    let mut e = match connect_client(p, &name, 2) {
        Ok(e) => e,
        Err(rc) => return Ok(rc),
    };
    e.close_after_read = true;
    e.core.inst.borrow_mut().client_mode = NP_READMODE_MESSAGE;
    let h = match p.pcb.files.open_npipe(e, 0x0082) {
        Ok(h) => h,
        Err(rc) => return Ok(rc),
    };
    if let Err(rc) = transact_on(
        p,
        u32::from(h),
        (c.l(1), c.l(2)),
        (c.l(3), c.l(4), c.l(5)),
        c,
    ) {
        let _ = p.pcb.files.close(h);
        return Ok(rc);
    }
    crate::api::pipes::read(p, h, buf, c.l(4), out, !c.far16)
}

/// DosWaitNPipe(name, msec).
fn wait_named(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let name = match p.arg_sz(c, 0).and_then(|n| pipe_name(&n)) {
        Ok(n) => n,
        Err(rc) => return Ok(rc),
    };
    let same = p.kernel.npipes.named(&name);
    let Some(first) = same.first() else {
        return Ok(ERROR_PATH_NOT_FOUND);
    };
    if same.iter().any(|i| i.borrow().state == NP_STATE_LISTENING) {
        return Ok(NO_ERROR);
    }
    let ms = match c.l(1) {
        0 => first.borrow().wait_ms,
        ms => ms,
    };
    let until = p.deadline(ms);
    let waits = &mut p.kernel.npipes.waits;
    let slot = match waits.iter().position(|w| *w == name) {
        Some(i) => i,
        None => {
            waits.push(name);
            waits.len() - 1
        }
    };
    Err(Stop::Block(Wait::NpWait {
        slot: slot as u32,
        until,
    }))
}

/// A blocked DosWaitNPipe's code once an instance listens (or there is
/// none left).
pub(crate) fn wait_now(p: &mut Process, slot: u32) -> Option<u32> {
    let name = p.kernel.npipes.waits.get(slot as usize)?.clone();
    let same = p.kernel.npipes.named(&name);
    if same.is_empty() {
        return Some(ERROR_PATH_NOT_FOUND);
    }
    same.iter()
        .any(|i| i.borrow().state == NP_STATE_LISTENING)
        .then_some(NO_ERROR)
}

/// A write that does not wait (the console-like paths: CMD.EXE's
/// redirections): what fits.
pub(crate) fn write_once(p: &mut Process, h: u16, data: &[u8]) -> ApiResult<usize> {
    let e = end(p, u32::from(h))?;
    Ok(e.write(data)?.unwrap_or(0))
}

/// A read that does not wait: an empty pipe reads as nothing.
pub(crate) fn read_once(p: &mut Process, h: u16, n: usize) -> ApiResult<Vec<u8>> {
    let e = end(p, u32::from(h))?;
    Ok(e.read(n.min(MAX_SIZE), None)?
        .map(|r| r.0)
        .unwrap_or_default())
}
