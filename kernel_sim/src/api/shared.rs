//! Implementations that a 16-bit entry and its 32-bit successor share.
//!
//! The two differ only in how arguments are passed and how wide the
//! numbers they return are. Arguments are read with [`Call::l`] (a 16-bit
//! word argument arrives zero-extended), handles are cut to 16 bits as
//! both kernels do, and a returned USHORT/ULONG is written with
//! [`Process::put_word`]: a word for a 16-bit caller, a dword for a 32-bit
//! one.

use crate::api::util::ApiResult;
use crate::api::{Call, Stop};
use crate::process::Process;
use crate::rc::*;

/// Largest read or write one call moves (16 MB).
const MAX_TRANSFER: u32 = 0x100_0000;

impl Process {
    /// Store a USHORT (16-bit caller) or ULONG (32-bit caller) at pointer
    /// argument `i`.
    pub(crate) fn put_word(&mut self, c: &Call, i: usize, v: u32) -> ApiResult<()> {
        if c.far16 {
            self.put_u16(c, i, v as u16)
        } else {
            self.put_u32(c, i, v)
        }
    }

    /// [`Process::put_word`] if pointer argument `i` is not null.
    pub(crate) fn put_word_opt(&mut self, c: &Call, i: usize, v: u32) -> ApiResult<()> {
        if c.l(i) == 0 {
            Ok(())
        } else {
            self.put_word(c, i, v)
        }
    }
}

/// DosExit(action, result).
pub(crate) fn exit(_: &mut Process, c: &Call) -> Result<u32, Stop> {
    // EXIT_THREAD (0) ends the calling thread, EXIT_PROCESS (1) and any
    // other value the process.
    match c.l(0) {
        0 => Err(Stop::ExitThread(c.l(1))),
        _ => Err(Stop::Exit(c.l(1))),
    }
}

/// DosSleep(ms): the thread blocks until the clock has moved on `ms`
/// milliseconds; DosSleep(0) gives the CPU to the next ready thread.
pub(crate) fn sleep(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let until = p.after_millis(c.l(0));
    Err(Stop::Block(crate::threads::Wait::Sleep { until }))
}

/// DosGetDateTime(&datetime).
pub(crate) fn get_date_time(p: &mut Process, c: &Call) -> ApiResult<()> {
    let now = stda::DosDateTime::from(p.now()).to_bytes();
    p.put_bytes(c, 0, &now)
}

/// DosBeep(frequency, duration).
pub(crate) fn beep(p: &mut Process, c: &Call) -> ApiResult<()> {
    if !(0x25..=0x7FFF).contains(&c.l(0)) {
        return Err(ERROR_INVALID_PARAMETER);
    }
    p.host.beeps.push((c.l(0), c.l(1)));
    p.kernel.clock.sleep(u64::from(c.l(1)));
    Ok(())
}

/// DosChDir / DosSetCurrentDir(path).
pub(crate) fn set_current_dir(p: &mut Process, c: &Call) -> ApiResult<()> {
    let s = p.arg_sz(c, 0)?;
    p.files().chdir(&s)
}

/// DosDelete(path).
pub(crate) fn delete(p: &mut Process, c: &Call) -> ApiResult<()> {
    let s = p.arg_sz(c, 0)?;
    p.files().delete(&s)
}

/// DosMkDir / DosCreateDir(path).
pub(crate) fn create_dir(p: &mut Process, c: &Call) -> ApiResult<()> {
    let s = p.arg_sz(c, 0)?;
    p.files().mkdir(&s)
}

/// DosChgFilePtr / DosSetFilePtr(handle, distance, method, &position).
pub(crate) fn set_file_ptr(p: &mut Process, c: &Call) -> ApiResult<()> {
    let pos = p
        .pcb
        .files
        .seek(c.l(0) as u16, i64::from(c.l(1) as i32), c.l(2))?;
    p.put_u32_opt(c, 3, pos as u32)
}

/// DosClose(handle).
pub(crate) fn close(p: &mut Process, c: &Call) -> ApiResult<()> {
    p.pcb.files.close(c.l(0) as u16)
}

/// DosNewSize / DosSetFileSize(handle, size).
pub(crate) fn set_file_size(p: &mut Process, c: &Call) -> ApiResult<()> {
    p.pcb.files.set_size(c.l(0) as u16, u64::from(c.l(1)))
}

/// DosFindClose(hdir).
pub(crate) fn find_close(p: &mut Process, c: &Call) -> ApiResult<()> {
    p.find_close(c.l(0))
}

/// DosFindNext(hdir, &buffer, length, &count).
pub(crate) fn find_next(p: &mut Process, c: &Call) -> ApiResult<()> {
    p.find_next(c)
}

/// DosOpen(name, &handle, &action, size, attribute, flags, mode, reserved).
pub(crate) fn open(p: &mut Process, c: &Call) -> ApiResult<()> {
    let name = p.arg_sz(c, 0)?;
    if crate::api::npipes::is_pipe_name(&name) {
        // A named pipe's client end (`npipes.rs`): FILE_EXISTED.
        p.arg_ptr(c, 1, if c.far16 { 2 } else { 4 })?;
        p.arg_ptr(c, 2, if c.far16 { 2 } else { 4 })?;
        let h = crate::api::npipes::open_client(p, &name, c.l(6) as u16)?;
        p.put_word(c, 1, u32::from(h))?;
        return p.put_word(c, 2, 1);
    }
    let (h, action) = p
        .files()
        .open(&name, c.l(5) as u16, c.l(6) as u16, u64::from(c.l(3)))?;
    p.put_word(c, 1, u32::from(h))?;
    p.put_word(c, 2, action)
}

/// ERROR_EAS_NOT_SUPPORTED.
const ERROR_EAS_NOT_SUPPORTED: u32 = 282;

/// DosOpen2 (16-bit) and the 32-bit DosOpen's EAOP argument (`i`): the
/// sandbox keeps no extended attributes, so an EAOP whose FEALIST holds
/// any (its `cbList` above 4) is ERROR_EAS_NOT_SUPPORTED, with the EAOP's
/// `oError` set to 0; NULL or an empty list opens as DosOpen.
pub(crate) fn open_with_eas(p: &mut Process, c: &Call, i: usize) -> ApiResult<()> {
    if c.l(i) != 0 {
        let (ptr_size, eaop) = (4u32, 12u32);
        let op = p.arg_bytes(c, i, eaop)?;
        let fea = u32::from_le_bytes([op[4], op[5], op[6], op[7]]);
        if fea != 0 {
            let lin = p.ptr(fea, c.far16, 4).ok_or(ERROR_INVALID_ADDRESS)?;
            let b = p.read_mem(lin, 4).ok_or(ERROR_INVALID_ADDRESS)?;
            let cb = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            if cb > 4 {
                let at = p.arg_ptr(c, i, eaop)? + 2 * ptr_size;
                let zero = vec![0; (eaop - 2 * ptr_size) as usize];
                p.write_mem(at, &zero);
                return Err(ERROR_EAS_NOT_SUPPORTED);
            }
        }
    }
    open(p, c)
}

/// DosQCurDisk / DosQueryCurrentDisk(&drive, &map): always C:.
pub(crate) fn query_current_disk(p: &mut Process, c: &Call) -> ApiResult<()> {
    p.put_word(c, 0, 3)?;
    p.put_u32(c, 1, 0b100)
}

/// DosRead(handle, &buffer, length, &read): a pipe's (which may block,
/// `pipes.rs`) or any other handle's.
pub(crate) fn read_any(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let h = c.l(0) as u16;
    if !crate::api::pipes::is_any_pipe(p, h) {
        return Ok(read(p, c).err().unwrap_or(NO_ERROR));
    }
    let word = if c.far16 { 2 } else { 4 };
    let (buf, out) = match (p.arg_ptr(c, 1, c.l(2).max(1)), p.arg_ptr(c, 3, word)) {
        (Ok(b), Ok(o)) => (b, o),
        _ => return Ok(ERROR_INVALID_ADDRESS),
    };
    crate::api::pipes::read(p, h, buf, c.l(2), out, !c.far16)
}

/// DosWrite(handle, &buffer, length, &written): a pipe's (which may
/// block, `pipes.rs`) or any other handle's.
pub(crate) fn write_any(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let h = c.l(0) as u16;
    if !crate::api::pipes::is_any_pipe(p, h) {
        return Ok(write(p, c).err().unwrap_or(NO_ERROR));
    }
    let word = if c.far16 { 2 } else { 4 };
    let (buf, out) = match (p.arg_ptr(c, 1, c.l(2).max(1)), p.arg_ptr(c, 3, word)) {
        (Ok(b), Ok(o)) => (b, o),
        _ => return Ok(ERROR_INVALID_ADDRESS),
    };
    crate::api::pipes::write(p, h, (buf, c.l(2).min(MAX_TRANSFER), 0), out, !c.far16)
}

/// DosRead(handle, &buffer, length, &read).
pub(crate) fn read(p: &mut Process, c: &Call) -> ApiResult<()> {
    let n = c.l(2).min(MAX_TRANSFER) as usize;
    let data = p.read_handle(c.l(0) as u16, n)?;
    p.put_bytes(c, 1, &data)?;
    p.put_word(c, 3, data.len() as u32)
}

/// DosWrite(handle, &buffer, length, &written).
pub(crate) fn write(p: &mut Process, c: &Call) -> ApiResult<()> {
    let data = p.arg_bytes(c, 1, c.l(2).min(MAX_TRANSFER))?;
    let n = p.write_handle(c.l(0) as u16, &data)?;
    p.put_word(c, 3, n as u32)
}

/// DosSetMaxFH(count).
pub(crate) fn set_max_fh(p: &mut Process, c: &Call) -> ApiResult<()> {
    let n = c.l(0) as usize;
    if !(20..=32768).contains(&n) {
        return Err(ERROR_INVALID_PARAMETER);
    }
    p.pcb.files.max_handles = n;
    Ok(())
}

/// DosGetCP / DosQueryCp(length, &list, &returned): code page 437 only;
/// the lengths count bytes of USHORTs or ULONGs.
pub(crate) fn query_cp(p: &mut Process, c: &Call) -> ApiResult<()> {
    let word = if c.far16 { 2 } else { 4 };
    if c.l(0) < word {
        return Err(ERROR_CPLIST_TOO_SMALL);
    }
    p.put_word(c, 1, 437)?;
    p.put_word_opt(c, 2, word)
}

/// DosSearchPath(control, path, name, &buffer, length).
pub(crate) fn search_path(p: &mut Process, c: &Call) -> ApiResult<()> {
    let path = p.arg_sz(c, 1)?;
    let name = p.arg_sz(c, 2)?;
    let mut full = p.search_path(c.l(0), &path, &name)?;
    full.push(0);
    if full.len() > c.l(4) as usize {
        return Err(ERROR_BUFFER_OVERFLOW);
    }
    p.put_bytes(c, 3, &full)
}
