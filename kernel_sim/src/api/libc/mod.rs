//! LIBCM and LIBCS: IBM VisualAge C++'s C runtime DLLs (multithreaded
//! and single-threaded), which OS/2 ships and the toolkit's rc.exe and
//! nmake32.exe import, implemented in Rust as system DLLs. Both DLLs
//! have the same entries at the same ordinals (the toolkit's
//! `lib/libcmi.lib` and `lib/libcsi.lib`), except the few above 509.
//!
//! **Conventions.** Most entries are `_Optlink` ([`Conv::Optlink`]): the
//! first three (non-floating-point) arguments in EAX, EDX and ECX, the
//! rest on the stack above 12 bytes the caller reserves for those three;
//! the caller pops; the result is in EAX (EDX:EAX for 64 bits). A
//! variadic function's fixed arguments come in registers and its
//! variable ones on the stack at their places (the printf family's
//! `%f` takes 8 bytes there). `_EXE_Exception` is an exception handler,
//! `_System`; `_terminate` takes its two arguments on the stack, as rc's
//! call sites push them. Exported data ([`Conv::Data`]: `stdin`,
//! `stdout`, `stderr`, `_environ`, `_PGLOBAL_PTR`) lives in the process's
//! runtime data block, made when the first module importing it is loaded.
//!
//! **Layout.** This module owns the per-process [`Runtime`] state, its
//! data block and errno; [`entries`] holds the two DLLs' tables, and
//! each concern has its module: [`guest`] (strings and arguments in
//! guest memory), [`alloc`] and [`heap`] (the heap), [`strings`],
//! [`stdio`], [`format`] (the printf and scanf families), [`time`],
//! [`callback`] (guest code the runtime calls), [`catalog`], [`arith`]
//! (the compiler's 64-bit helpers, the FPU) and [`startup`].
//!
//! **Start-up**, as the EXE's static start-up code does it (seen in
//! rc.exe and nmake32.exe): it registers `_EXE_Exception` on FS:0, calls
//! `_fpninit`, `_fpreset`, `_CRT_init` (-1 is failure), then
//! `_exception_procinit(&_matherr)`, parses the command line itself,
//! adds an exit-list routine (which calls `_CRT_term`), and calls `main`
//! through `_callback_opt_sys(argc, argv, _environ, main)`, then `exit`
//! with what main returned.
//!
//! Decisions, where the runtime's documents leave room:
//! - **Guest memory.** Every pointer is the guest's; reading or writing
//!   through a bad one is the access violation the real DLL's code would
//!   take: the thread's exception handlers get it (at the caller's return
//!   address, [`deliver`]), and the run ends with the page fault when none
//!   handles it. Strings are read up to 16 MB.
//! - **Heap** ([`heap`]): malloc/calloc/realloc/free on guest memory with
//!   host bookkeeping; at most 64 MB; a request that does not fit is NULL
//!   with errno ENOMEM.
//! - **errno** values are VisualAge C++'s own (`errno.h`: EDOM 1, ERANGE
//!   2, ENOMEM 13, EEXIST 16, ENOENT 23, EACCES 24, EMFILE 25, EINVAL 36,
//!   EBADF 43, ENOSPC 45, EILSEQ 52, E2BIG 53, EOS2ERR 60; rc.exe grows
//!   its buffers on ERANGE and E2BIG), one errno per thread (`_errno()`).
//!   An OS/2 error without a closer errno (seeking a pipe, for one) is
//!   EOS2ERR.
//! - **stdio** ([`stdio`]): streams are the kernel's file handles; text
//!   mode (the default) writes `\n` as CR LF and reads CR LF as `\n`
//!   with Ctrl-Z as end of file. Writes go through at once (no stream
//!   buffer to lose); reads are buffered 4 KB. A FILE is a 64-byte guest
//!   block the host keys its stream by; its bytes are not used.
//! - **Callbacks** ([`callback`]): main (through `_callback_opt_sys`),
//!   qsort's comparison and atexit's functions run as guest code; the
//!   runtime resumes at a return slot when each returns. qsort sorts at
//!   most 4M elements (a bigger array ends the run with a host error).
//! - **Bounds**: one printf-family call makes at most 16 MB of text (one
//!   conversion at most 4 KB); fread/fwrite/_read/_write move at most
//!   16 MB a call.
//! - **Locale**: only "C" (and "" as "C"); `setlocale` returns "C".
//! - **Time**: the emulated clock, in the zone UTC (`_tzset` reads TZ's
//!   name only for `tzname`, no offset).
//! - **Message catalogs** ([`catalog`]): GENCAT's format, found along
//!   NLSPATH.

mod alloc;
mod arith;
mod callback;
mod catalog;
mod entries;
mod format;
mod guest;
mod heap;
mod startup;
mod stdio;
mod strings;
mod time;

use std::collections::BTreeMap;

use super::uconv::{fault, wr32};
use super::{Call, Stop};
use crate::layout::{PAGE, round_up};
use crate::memory::RegionKind;
use crate::process::Process;

pub(crate) use alloc::{free, malloc};
pub(crate) use callback::Conts;
pub(crate) use entries::defs;
pub(crate) use guest::{
    GuestArgs, GuestSink, MAX_STR, cstr, cstr_max, format_at, put_sz, stack_arg, wstr_max, zero,
};

// ---- errno values ----
pub(crate) const ERANGE: u32 = 2;
pub(crate) const ENOMEM: u32 = 13;
pub(crate) const EEXIST: u32 = 16;
pub(crate) const ENOENT: u32 = 23;
pub(crate) const EACCES: u32 = 24;
pub(crate) const EMFILE: u32 = 25;
pub(crate) const EINVAL: u32 = 36;
pub(crate) const EBADF: u32 = 43;
pub(crate) const ENOSPC: u32 = 45;
pub(crate) const EILSEQ: u32 = 52;
pub(crate) const E2BIG: u32 = 53;
pub(crate) const EOS2ERR: u32 = 60;

// ---- the runtime's data block ----
/// Bytes of the data block.
const DATA_SIZE: u32 = 0x2000;
/// `FILE *stdin` (then stdout, stderr).
const D_STDIN: u32 = 0x00;
/// `char **_environ`.
const D_ENVIRON: u32 = 0x0C;
/// `_PGLOBAL_PTR`: a pointer to the runtime's global block.
const D_PGLOBAL: u32 = 0x10;
/// The three standard FILEs.
const D_FILES: u32 = 0x40;
/// Bytes of a FILE.
pub(crate) const FILE_SIZE: u32 = 0x40;
/// The global block `_PGLOBAL_PTR` points to (its flags at +0x18 stay 0).
const D_GLOBAL: u32 = 0x100;
/// localtime's `struct tm`.
const D_TM: u32 = 0x200;
/// asctime's buffer (26 bytes).
const D_ASCTIME: u32 = 0x240;
/// strerror's buffer.
const D_STRERROR: u32 = 0x280;
/// tmpnam's buffer (260 bytes).
const D_TMPNAM: u32 = 0x300;
/// setlocale's answer.
const D_LOCALE: u32 = 0x410;
/// One errno per thread (TID modulo 256).
const D_ERRNO: u32 = 0x800;

/// The per-process state of the C runtime.
#[derive(Debug, Default)]
pub(crate) struct Runtime {
    /// The data block's address (0 until made).
    data: u32,
    /// The heap.
    heap: heap::Heap,
    /// Streams by FILE address.
    streams: BTreeMap<u32, stdio::Stream>,
    /// Low-level handle flags (text mode, append) by handle.
    fds: BTreeMap<u16, u32>,
    /// atexit functions, in registration order.
    atexit: Vec<u32>,
    /// exit's code while its atexit functions run.
    exiting: Option<u32>,
    /// strtok's and wcstok's positions per thread.
    strtok: BTreeMap<u32, u32>,
    wcstok: BTreeMap<u32, u32>,
    /// Host calls waiting for guest callbacks to return, per thread.
    conts: BTreeMap<u32, Conts>,
    /// __cppstore's block per thread.
    cppstore: BTreeMap<u32, u32>,
    /// The EXE's `_matherr` (from `_exception_procinit`).
    matherr: u32,
    /// tmpnam's and _tempnam's counter.
    tmp_count: u32,
    /// iconv descriptors: handle → (from, to) code sets.
    iconv: BTreeMap<u32, (String, String)>,
    next_iconv: u32,
    /// TZ's name for tzname.
    tz: String,
    /// Open message catalogs.
    catalogs: BTreeMap<u32, catalog::Catalog>,
    next_catalog: u32,
}

/// The process's runtime state.
pub(crate) fn rt(p: &mut Process) -> &mut Runtime {
    p.pcb.libc.get_or_insert_with(Default::default)
}

/// Maps `size` bytes of committed guest memory (a private region).
pub(crate) fn map_region(p: &mut Process, size: u32) -> Option<u32> {
    let base = p.pcb.mem.reserve(size, false, RegionKind::Mem).ok()?;
    let len = round_up(size, PAGE);
    if p.pcb.mem.map(&mut p.machine, base, len, true).is_err() {
        p.pcb.mem.release(&mut p.machine, base);
        return None;
    }
    p.kernel
        .desc
        .tile(&mut p.machine, base, size, crate::desc::DATA3);
    Some(base)
}

/// The runtime's data block, made on first use.
pub(crate) fn data(p: &mut Process) -> Result<u32, String> {
    let have = rt(p).data;
    if have != 0 {
        return Ok(have);
    }
    let base = map_region(p, DATA_SIZE).ok_or("no memory for the C runtime's data")?;
    let mut init = Vec::new();
    for i in 0..3 {
        init.extend_from_slice(&(base + D_FILES + FILE_SIZE * i).to_le_bytes());
    }
    init.extend_from_slice(&0u32.to_le_bytes());
    init.extend_from_slice(&(base + D_GLOBAL).to_le_bytes());
    p.write_mem(base, &init);
    p.write_mem(base + D_LOCALE, b"C\0");
    let r = rt(p);
    r.data = base;
    for (i, h) in [0u16, 1, 2].into_iter().enumerate() {
        r.streams
            .insert(base + D_FILES + FILE_SIZE * i as u32, stdio::Stream::std(h));
    }
    Ok(base)
}

/// The address of a data export (`off` in the data block), for the
/// loader.
pub(crate) fn data_address(p: &mut Process, off: u32) -> Result<u32, String> {
    Ok(data(p)? + off)
}

fn data_or_stop(p: &mut Process) -> Result<u32, Stop> {
    data(p).map_err(|e| Stop::Outcome(crate::error::Outcome::HostError(e)))
}

/// Sets the calling thread's errno.
pub(crate) fn set_errno(p: &mut Process, v: u32) -> Result<(), Stop> {
    let at = errno_addr(p)?;
    wr32(p, at, v)
}

fn errno_addr(p: &mut Process) -> Result<u32, Stop> {
    let d = data_or_stop(p)?;
    let tid = p.current_tid();
    Ok(d + D_ERRNO + 4 * (tid & 0xFF))
}

/// The errno for an OS/2 return code.
pub(crate) fn errno_of(rc: u32) -> u32 {
    use crate::rc::*;
    match rc {
        ERROR_FILE_NOT_FOUND | ERROR_PATH_NOT_FOUND | ERROR_OPEN_FAILED => ENOENT,
        ERROR_TOO_MANY_OPEN_FILES => EMFILE,
        ERROR_ACCESS_DENIED | ERROR_SHARING_VIOLATION => EACCES,
        ERROR_INVALID_HANDLE => EBADF,
        ERROR_NOT_ENOUGH_MEMORY => ENOMEM,
        ERROR_DISK_FULL => ENOSPC,
        80 => EEXIST,
        _ => EOS2ERR,
    }
}
