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

mod callback;
mod catalog;
mod format;
mod heap;
mod stdio;
mod strings;

use std::collections::BTreeMap;

use super::uconv::{fault, rd32, read, wr32, write};
use super::{ApiDef, Arg, Call, Conv, Func, Stop};
use crate::layout::{PAGE, round_up};
use crate::memory::RegionKind;
use crate::process::Process;

pub(crate) use callback::Conts;

/// Longest string read from the guest.
const MAX_STR: u32 = 0x100_0000;

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

// ---- guest memory ----

/// The NUL-terminated string at `addr` (without the NUL).
pub(crate) fn cstr(p: &mut Process, addr: u32) -> Result<Vec<u8>, Stop> {
    cstr_max(p, addr, MAX_STR)
}

/// The string at `addr`, at most `max` bytes.
pub(crate) fn cstr_max(p: &mut Process, addr: u32, max: u32) -> Result<Vec<u8>, Stop> {
    let mut out = Vec::new();
    let mut at = addr;
    loop {
        if out.len() as u32 >= max {
            return Ok(out);
        }
        let room = (PAGE - (at & (PAGE - 1))).min(max - out.len() as u32);
        let chunk = match p.read_mem(at, room) {
            Some(c) if at != 0 => c,
            _ => return Err(fault(p, at, false)),
        };
        match chunk.iter().position(|&b| b == 0) {
            Some(n) => {
                out.extend_from_slice(&chunk[..n]);
                return Ok(out);
            }
            None => out.extend_from_slice(&chunk),
        }
        at = at.wrapping_add(room);
    }
}

/// The NUL-terminated UCS-2 string at `addr` (at most `max` units).
pub(crate) fn wstr_max(p: &mut Process, addr: u32, max: u32) -> Result<Vec<u16>, Stop> {
    if addr == 0 {
        return Err(fault(p, 0, false));
    }
    super::uconv::read_ustr(p, addr, max)
}

/// Stores `s` and a NUL at `addr`.
pub(crate) fn put_sz(p: &mut Process, addr: u32, s: &[u8]) -> Result<(), Stop> {
    let mut v = Vec::with_capacity(s.len() + 1);
    v.extend_from_slice(s);
    v.push(0);
    write(p, addr, &v)
}

/// Zeroes `n` guest bytes at `addr` (in pieces: `n` is the guest's).
pub(crate) fn zero(p: &mut Process, addr: u32, n: u32) -> Result<(), Stop> {
    let mut at = 0;
    while at < n {
        let k = (n - at).min(PAGE);
        write(p, addr.wrapping_add(at), &vec![0; k as usize])?;
        at += k;
    }
    Ok(())
}

/// The dword at `ESP + off` (arguments beyond the registers).
pub(crate) fn stack_arg(p: &mut Process, off: u32) -> Result<u32, Stop> {
    let esp = p.machine.cpu().gpr[emu::Gpr::Esp];
    rd32(p, esp.wrapping_add(off))
}

/// Arguments of a formatted call: the guest's stack (or a va_list)
/// from `at`.
pub(crate) struct GuestArgs<'a> {
    pub(crate) p: &'a mut Process,
    pub(crate) at: u32,
}

impl format::ArgSource for GuestArgs<'_> {
    type Err = Stop;
    fn next_u32(&mut self) -> Result<u32, Stop> {
        let v = rd32(self.p, self.at)?;
        self.at = self.at.wrapping_add(4);
        Ok(v)
    }
    fn string(&mut self, addr: u32, max: usize) -> Result<Vec<u8>, Stop> {
        cstr_max(self.p, addr, max.min(MAX_STR as usize) as u32)
    }
    fn wstring(&mut self, addr: u32, max: usize) -> Result<Vec<u16>, Stop> {
        wstr_max(self.p, addr, max.min(MAX_STR as usize) as u32)
    }
    fn store(&mut self, addr: u32, value: u64, size: u32) -> Result<(), Stop> {
        write(self.p, addr, &value.to_le_bytes()[..size as usize])
    }
    fn too_long(&mut self) -> Stop {
        Stop::Outcome(crate::error::Outcome::HostError(format!(
            "a printf-family call made more than {} bytes",
            format::MAX_OUT
        )))
    }
}

/// Where scanf's pointers come from and what it stores.
pub(crate) struct GuestSink<'a> {
    pub(crate) p: &'a mut Process,
    pub(crate) at: u32,
}

impl format::Sink for GuestSink<'_> {
    type Err = Stop;
    fn next_ptr(&mut self) -> Result<u32, Stop> {
        let v = rd32(self.p, self.at)?;
        self.at = self.at.wrapping_add(4);
        Ok(v)
    }
    fn put(&mut self, addr: u32, bytes: &[u8]) -> Result<(), Stop> {
        write(self.p, addr, bytes)
    }
}

/// The printf family: `fmt` at `fmt_addr`, arguments from `args_at`.
pub(crate) fn format_at(p: &mut Process, fmt_addr: u32, args_at: u32) -> Result<Vec<u8>, Stop> {
    let fmt = cstr(p, fmt_addr)?;
    format::printf(&fmt, &mut GuestArgs { p, at: args_at })
}

// ---- the heap ----

/// malloc: a guest block of `size` bytes, or 0 (errno ENOMEM).
pub(crate) fn malloc(p: &mut Process, size: u32) -> Result<u32, Stop> {
    if let Some(a) = rt(p).heap.alloc(size) {
        return Ok(a);
    }
    let Some(grow) = rt(p).heap.growth_for(size) else {
        set_errno(p, ENOMEM)?;
        return Ok(0);
    };
    let Some(base) = map_region(p, grow) else {
        set_errno(p, ENOMEM)?;
        return Ok(0);
    };
    let r = rt(p);
    r.heap.add_arena(base, grow);
    Ok(r.heap.alloc(size).unwrap_or(0))
}

/// free.
pub(crate) fn free(p: &mut Process, addr: u32) {
    if addr != 0 {
        rt(p).heap.free(addr);
    }
}

fn calloc(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let Some(n) = c.l(0).checked_mul(c.l(1)) else {
        set_errno(p, ENOMEM)?;
        return Ok(0);
    };
    let a = malloc(p, n)?;
    if a != 0 {
        zero(p, a, n)?;
    }
    Ok(a)
}

fn realloc(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (old, size) = (c.l(0), c.l(1));
    if old == 0 {
        return malloc(p, size);
    }
    if size == 0 {
        free(p, old);
        return Ok(0);
    }
    let Some(had) = rt(p).heap.size_of(old) else {
        // Not a block: as the real runtime's result is undefined, this
        // one fails without touching it.
        set_errno(p, EINVAL)?;
        return Ok(0);
    };
    if rt(p).heap.resize_in_place(old, size) {
        return Ok(old);
    }
    let new = malloc(p, size)?;
    if new != 0 {
        let bytes = read(p, old, had.min(size))?;
        write(p, new, &bytes)?;
        free(p, old);
    }
    Ok(new)
}

// ---- start-up, exit, errors ----

/// _CRT_init: the data block, `_environ` from the environment segment.
fn crt_init(p: &mut Process, _c: &Call) -> Result<u32, Stop> {
    let Ok(d) = data(p) else {
        return Ok(u32::MAX);
    };
    let env = p.pcb.env_base;
    let mut ptrs = Vec::new();
    let mut at = env;
    if env != 0 {
        loop {
            let s = cstr_max(p, at, 0x1_0000)?;
            if s.is_empty() {
                break;
            }
            ptrs.push(at);
            at += s.len() as u32 + 1;
        }
    }
    let arr = malloc(p, 4 * (ptrs.len() as u32 + 1))?;
    if arr == 0 {
        return Ok(u32::MAX);
    }
    ptrs.push(0);
    let bytes: Vec<u8> = ptrs.iter().flat_map(|v| v.to_le_bytes()).collect();
    write(p, arr, &bytes)?;
    wr32(p, d + D_ENVIRON, arr)?;
    Ok(0)
}

/// _PrintErrMsg(number, ...): the runtime's own error message on
/// stderr (DDE4.MSG's text is IBM's; this names the message).
fn print_err_msg(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let text = format!(
        "DDE4{:04}: C runtime error {}.\r\n",
        c.l(0) & 0xFF,
        c.l(0) & 0xFF
    );
    let _ = p.write_handle(2, text.as_bytes());
    Ok(0)
}

/// 64-bit helpers: a in EDX:EAX, b low in ECX and high on the stack.
fn divi64(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let a = (u64::from(c.l(1)) << 32 | u64::from(c.l(0))) as i64;
    let b = (u64::from(c.l(3)) << 32 | u64::from(c.l(2))) as i64;
    if b == 0 {
        return Err(divide_error(p));
    }
    ret64(p, a.wrapping_div(b) as u64)
}

fn divu64(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let a = u64::from(c.l(1)) << 32 | u64::from(c.l(0));
    let b = u64::from(stack_arg(p, 4)?) << 32 | u64::from(c.l(2));
    if b == 0 {
        return Err(divide_error(p));
    }
    ret64(p, a / b)
}

fn multi64(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let a = u64::from(c.l(1)) << 32 | u64::from(c.l(0));
    let b = u64::from(stack_arg(p, 4)?) << 32 | u64::from(c.l(2));
    ret64(p, a.wrapping_mul(b))
}

/// Returns a 64-bit result in EDX:EAX.
fn ret64(p: &mut Process, v: u64) -> Result<u32, Stop> {
    p.machine.gpr_mut()[emu::Gpr::Edx] = (v >> 32) as u32;
    Ok(v as u32)
}

fn divide_error(p: &mut Process) -> Stop {
    let cs = p.machine.cpu().sreg(emu::SegReg::Cs).selector;
    let eip = stack_arg(p, 0).unwrap_or(0);
    Stop::Outcome(crate::error::Outcome::GuestFault {
        vector: emu::vector::DE,
        error: None,
        cs,
        eip,
        cr2: None,
    })
}

/// _fpreset/_fpninit: the FPU as VisualAge C++ starts it (FNINIT's
/// control word, every exception masked).
fn fpreset(p: &mut Process, _c: &Call) -> Result<u32, Stop> {
    let cpu = p.machine.cpu_mut_flush_tlb();
    cpu.fpu_cw = 0x037F;
    cpu.fpu_sw = 0;
    Ok(0)
}

/// `struct tm` of the emulated clock's time `t` (seconds since 1970).
fn tm_of(t: i64) -> [i32; 9] {
    let days = t.div_euclid(86400);
    let secs = t.rem_euclid(86400);
    let (y, m, d) = civil(days);
    let yday = days - days_from_civil(y, 1, 1);
    let wday = (days + 4).rem_euclid(7);
    [
        (secs % 60) as i32,
        (secs / 60 % 60) as i32,
        (secs / 3600) as i32,
        d as i32,
        m as i32 - 1,
        (y - 1900) as i32,
        wday as i32,
        yday as i32,
        0,
    ]
}

pub(crate) use crate::clock::{civil_from_days as civil, days_from_civil};

/// The emulated clock's time in seconds since 1970 (UTC).
pub(crate) fn now_secs(p: &Process) -> i64 {
    i64::from(p.now().unix_seconds())
}

fn read_tm(p: &mut Process, addr: u32) -> Result<[i32; 9], Stop> {
    let b = read(p, addr, 36)?;
    let mut tm = [0i32; 9];
    for (i, v) in tm.iter_mut().enumerate() {
        *v = i32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
    }
    Ok(tm)
}

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const DAYS_LONG: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS_LONG: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

fn name_of(t: &[&'static str], i: i32) -> &'static str {
    usize::try_from(i)
        .ok()
        .and_then(|i| t.get(i))
        .copied()
        .unwrap_or("???")
}

/// asctime's text of a `struct tm`.
fn asctime_text(tm: &[i32; 9]) -> String {
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}\n",
        name_of(&DAYS, tm[6]),
        name_of(&MONTHS, tm[4]),
        tm[3],
        tm[2],
        tm[1],
        tm[0],
        i64::from(tm[5]) + 1900
    )
}

/// strftime's text (C locale), cut once it is longer than `max`.
fn strftime_text(fmt: &[u8], tm: &[i32; 9], tz: &str, max: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < fmt.len() && out.len() <= max {
        if fmt[i] != b'%' || i + 1 >= fmt.len() {
            out.push(fmt[i]);
            i += 1;
            continue;
        }
        let c = fmt[i + 1];
        i += 2;
        let year = i64::from(tm[5]) + 1900;
        let hour12 = if tm[2] % 12 == 0 { 12 } else { tm[2] % 12 };
        let t = match c {
            b'a' => name_of(&DAYS, tm[6]).to_string(),
            b'A' => name_of(&DAYS_LONG, tm[6]).to_string(),
            b'b' | b'h' => name_of(&MONTHS, tm[4]).to_string(),
            b'B' => name_of(&MONTHS_LONG, tm[4]).to_string(),
            b'c' => asctime_text(tm).trim_end().to_string(),
            b'd' => format!("{:02}", tm[3]),
            b'H' => format!("{:02}", tm[2]),
            b'I' => format!("{hour12:02}"),
            b'j' => format!("{:03}", tm[7] + 1),
            b'm' => format!("{:02}", tm[4] + 1),
            b'M' => format!("{:02}", tm[1]),
            b'p' => (if tm[2] < 12 { "AM" } else { "PM" }).to_string(),
            b'S' => format!("{:02}", tm[0]),
            b'U' => format!("{:02}", (tm[7] + 7 - tm[6]) / 7),
            b'W' => format!("{:02}", (tm[7] + 7 - (tm[6] + 6) % 7) / 7),
            b'w' => tm[6].to_string(),
            b'x' => format!("{:02}/{:02}/{:02}", tm[4] + 1, tm[3], year.rem_euclid(100)),
            b'X' => format!("{:02}:{:02}:{:02}", tm[2], tm[1], tm[0]),
            b'y' => format!("{:02}", year.rem_euclid(100)),
            b'Y' => year.to_string(),
            b'Z' => tz.to_string(),
            b'%' => "%".to_string(),
            other => format!("%{}", char::from(other)),
        };
        out.extend_from_slice(t.as_bytes());
    }
    out
}

// ---- the tables ----

/// One entry of both DLLs (the module is filled in by [`for_module`]).
macro_rules! e {
    ($o:literal $n:literal data $off:expr) => {
        ApiDef { module: "", ordinal: $o, name: $n, conv: Conv::Data($off), args: &[], func: None }
    };
    ($o:literal $n:literal sys [$($a:ident),*] $f:expr) => {
        ApiDef {
            module: "",
            ordinal: $o,
            name: $n,
            conv: Conv::Sys32,
            args: &[$(Arg::$a),*],
            func: Some(Func::Raw(|p, c| {
                let f: super::ApiFn = $f;
                let r = f(p, c);
                deliver(p, r)
            })),
        }
    };
    ($o:literal $n:literal [$($a:ident),*] $f:expr) => {
        ApiDef {
            module: "",
            ordinal: $o,
            name: $n,
            conv: Conv::Optlink,
            args: &[$(Arg::$a),*],
            func: Some(Func::Raw(|p, c| {
                let f: super::ApiFn = $f;
                let r = f(p, c);
                deliver(p, r)
            })),
        }
    };
}

/// A fault the runtime's code would take goes to the thread's exception
/// handlers as the CPU's would, raised at the caller's return address
/// with ESP just above it (as though the call had returned): a handler
/// that continues resumes there; when none takes it the run ends with
/// the fault.
fn deliver(p: &mut Process, r: Result<u32, Stop>) -> Result<u32, Stop> {
    let Err(Stop::Outcome(crate::error::Outcome::GuestFault {
        vector,
        error,
        eip,
        cr2,
        ..
    })) = r
    else {
        return r;
    };
    let esp = p.machine.cpu().gpr[emu::Gpr::Esp];
    let before = p.machine.cpu().clone();
    {
        let cpu = p.machine.cpu_mut_flush_tlb();
        cpu.gpr[emu::Gpr::Esp] = esp.wrapping_add(4);
        cpu.cr2 = cr2.unwrap_or(cpu.cr2);
    }
    p.machine.set_eip(eip);
    match p.dispatch_exception32(emu::Fault { vector, error }) {
        Some(None) => Err(Stop::Resumed),
        Some(Some(o)) => Err(Stop::Outcome(o)),
        None => {
            *p.machine.cpu_mut_flush_tlb() = before;
            r
        }
    }
}

const fn for_module<const N: usize>(module: &'static str, src: [ApiDef; N]) -> [ApiDef; N] {
    let mut out = src;
    let mut i = 0;
    while i < N {
        out[i].module = module;
        i += 1;
    }
    out
}

/// Entries both DLLs have at the same ordinal.
const COMMON: [ApiDef; 168] = [
    e!(1 "abort" [] |p, _| {
        stdio::flush_all(p);
        Err(Stop::Exit(3))
    }),
    e!(3 "abs" [L] |_, c| Ok((c.l(0) as i32).wrapping_abs() as u32)),
    e!(4 "_access" [S, L] stdio::access),
    e!(7 "atoi" [S] strings::atoi),
    e!(8 "atol" [S] strings::atoi),
    e!(10 "bsearch" [P, P, L, L] callback::bsearch),
    e!(11 "_callback_opt_sys" [L, L, L, P] callback::callback_opt_sys),
    e!(12 "calloc" [L, L] calloc),
    e!(16 "_close" [L] stdio::close_fd),
    e!(28 "__divi64" [L, L, L, L] divi64),
    e!(29 "__divu64" [L, L, L] divu64),
    e!(41 "__eof" [L] stdio::eof_fd),
    e!(42 "exit" [L] callback::exit),
    e!(46 "_fpninit" [] fpreset),
    e!(49 "_fpreset" [] fpreset),
    e!(50 "free" [P] |p, c| {
        free(p, c.l(0));
        Ok(0)
    }),
    e!(61 "_itoa" [L, P, L] strings::itoa),
    e!(67 "longjmp" [P, L] callback::longjmp),
    e!(68 "_lseek" [L, L, L] stdio::lseek),
    e!(70 "malloc" [L] |p, c| malloc(p, c.l(0))),
    e!(71 "memchr" [P, L, L] strings::memchr),
    e!(72 "memcmp" [P, P, L] strings::memcmp),
    e!(73 "memcpy" [P, P, L] strings::memcpy),
    e!(74 "memmove" [P, P, L] strings::memcpy),
    e!(75 "memset" [P, L, L] strings::memset),
    e!(80 "__multi64" [L, L, L] multi64),
    e!(81 "_open" [S, L] stdio::open_fd),
    e!(84 "_printfieee" [S] |p, c| {
        let esp = p.machine.cpu().gpr[emu::Gpr::Esp];
        let text = format_at(p, c.l(0), esp + 8)?;
        stdio::write_stream_at(p, 1, &text)
    }),
    e!(88 "_ProfileThrow32" [P] |_, _| Ok(0)),
    e!(89 "_ProfileUnwind32" [P] |_, _| Ok(0)),
    e!(90 "qsort" [P, L, L, P] callback::qsort),
    e!(91 "_read" [L, P, L] stdio::read_fd),
    e!(92 "realloc" [P, L] realloc),
    e!(95 "setjmp" [P] callback::setjmp),
    e!(97 "_sopen" [S, L, L] stdio::sopen_fd),
    e!(100 "_sprintfieee" [P, S] |p, c| {
        let esp = p.machine.cpu().gpr[emu::Gpr::Esp];
        let text = format_at(p, c.l(1), esp + 12)?;
        put_sz(p, c.l(0), &text)?;
        Ok(text.len() as u32)
    }),
    e!(103 "_sscanfieee" [S, S] |p, c| {
        let input = cstr(p, c.l(0))?;
        let fmt = cstr(p, c.l(1))?;
        let esp = p.machine.cpu().gpr[emu::Gpr::Esp];
        format::scanf(&input, &fmt, &mut GuestSink { p, at: esp + 12 })
    }),
    e!(105 "strcat" [P, S] strings::concat::<u8>),
    e!(106 "strchr" [S, L] |p, c| strings::find_char::<u8>(p, c, false)),
    e!(107 "strcmp" [S, S] |p, c| strings::compare_strings::<u8>(p, c, false)),
    e!(108 "strcpy" [P, S] strings::copy::<u8>),
    e!(109 "strcspn" [S, S] |p, c| strings::span::<u8>(p, c, false)),
    e!(110 "strdup" [S] strings::strdup),
    e!(111 "strlen" [S] |p, c| Ok(cstr(p, c.l(0))?.len() as u32)),
    e!(112 "strncat" [P, S, L] strings::strncat),
    e!(113 "strncmp" [S, S, L] |p, c| strings::compare_prefixes::<u8>(p, c, false)),
    e!(114 "strncpy" [P, S, L] strings::strncpy),
    e!(115 "strpbrk" [S, S] strings::find_any::<u8>),
    e!(116 "strrchr" [S, L] |p, c| strings::find_char::<u8>(p, c, true)),
    e!(117 "strspn" [S, S] |p, c| strings::span::<u8>(p, c, true)),
    e!(118 "strstr" [S, S] strings::find_string::<u8>),
    e!(119 "strtol" [S, P, L] strings::strtol),
    e!(120 "strtoul" [S, P, L] strings::strtol),
    e!(125 "_terminate" [] |p, _| {
        // Both arguments are on the stack (rc.exe pushes them): the kind
        // and the exit code.
        let code = stack_arg(p, 8)?;
        stdio::flush_all(p);
        Err(Stop::Exit(code))
    }),
    e!(144 "_ultoa" [L, P, L] strings::itoa_unsigned),
    e!(151 "_vprintfieee" [S, P] |p, c| {
        let text = format_at(p, c.l(0), c.l(1))?;
        stdio::write_stream_at(p, 1, &text)
    }),
    e!(153 "_vsprintfieee" [P, S, P] |p, c| {
        let text = format_at(p, c.l(1), c.l(2))?;
        put_sz(p, c.l(0), &text)?;
        Ok(text.len() as u32)
    }),
    e!(154 "_write" [L, P, L] stdio::write_fd),
    e!(156 "asctime" [P] |p, c| {
        let tm = read_tm(p, c.l(0))?;
        let d = data_or_stop(p)?;
        put_sz(p, d + D_ASCTIME, asctime_text(&tm).as_bytes())?;
        Ok(d + D_ASCTIME)
    }),
    e!(161 "atexit" [P] callback::atexit),
    e!(163 "catclose" [L] catalog::catclose),
    e!(164 "catgets" [L, L, L, P] catalog::catgets),
    e!(165 "catopen" [S, L] catalog::catopen),
    e!(168 "_chdir" [S] stdio::chdir),
    e!(169 "_chdrive" [L] |p, c| {
        if c.l(0) == 3 {
            return Ok(0);
        }
        set_errno(p, EACCES)?;
        Ok(u32::MAX)
    }),
    e!(180 "_CRT_init" [] crt_init),
    e!(181 "_CRT_term" [] |p, _| {
        stdio::flush_all(p);
        Ok(0)
    }),
    e!(198 "_environ" data D_ENVIRON),
    e!(201 "_errno" [] |p, _| errno_addr(p)),
    e!(204 "_exception_procinit" [P] |p, c| {
        rt(p).matherr = c.l(0);
        Ok(0)
    }),
    e!(217 "_EXE_Exception" sys [P, P, P, P] |_, _| Ok(0)),
    e!(221 "fclose" [P] stdio::fclose),
    e!(225 "feof" [P] stdio::feof),
    e!(226 "ferror" [P] stdio::ferror),
    e!(227 "fflush" [P] stdio::fflush),
    e!(228 "fgetc" [P] stdio::fgetc),
    e!(231 "fgets" [P, L, P] stdio::fgets),
    e!(233 "fgetws" [P, L, P] stdio::fgetws),
    e!(234 "_fileno" [P] stdio::fileno),
    e!(240 "fopen" [S, S] stdio::fopen),
    e!(244 "_fprintfieee" [P, S] |p, c| {
        let esp = p.machine.cpu().gpr[emu::Gpr::Esp];
        let text = format_at(p, c.l(1), esp + 12)?;
        stdio::fwrite_text(p, c.l(0), &text)
    }),
    e!(245 "fputc" [L, P] |p, c| stdio::fputc(p, c.l(1), c.l(0))),
    e!(247 "fputs" [S, P] |p, c| {
        let s = cstr(p, c.l(0))?;
        stdio::fwrite_text(p, c.l(1), &s).map(|r| if r == u32::MAX { r } else { 0 })
    }),
    e!(250 "fread" [P, L, L, P] stdio::fread),
    e!(258 "fseek" [P, L, L] stdio::fseek),
    e!(260 "_fstat" [L, P] stdio::fstat),
    e!(261 "ftell" [P] stdio::ftell),
    e!(265 "fwrite" [P, L, L, P] stdio::fwrite),
    e!(274 "_getcwd" [P, L] stdio::getcwd),
    e!(275 "_getdcwd" [L, P, L] |p, c| {
        if c.l(0) != 0 && c.l(0) != 3 {
            set_errno(p, EACCES)?;
            return Ok(0);
        }
        stdio::getcwd(p, &Call { vals: vec![c.l(1), c.l(2)], far16: false })
    }),
    e!(276 "_getdrive" [] |_, _| Ok(3)),
    e!(277 "getenv" [S] strings::getenv),
    e!(287 "iconv" [L, P, P, P, P] strings::iconv),
    e!(288 "iconv_close" [L] strings::iconv_close),
    e!(289 "iconv_open" [S, S] strings::iconv_open),
    e!(293 "isalnum" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_alphanumeric)))),
    e!(294 "isalpha" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_alphabetic)))),
    e!(296 "iscntrl" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_control)))),
    e!(297 "isdigit" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_digit)))),
    e!(298 "isgraph" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_graphic)))),
    e!(299 "islower" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_lowercase)))),
    e!(300 "isprint" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), |b| *b == b' ' || b.is_ascii_graphic())))),
    e!(301 "ispunct" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_punctuation)))),
    e!(302 "isspace" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), |b| b.is_ascii_whitespace() || *b == 0x0B)))),
    e!(303 "isupper" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_uppercase)))),
    e!(304 "iswalnum" [L] |_, c| Ok(u32::from(strings::wctype(c.l(0), char::is_alphanumeric)))),
    e!(305 "iswalpha" [L] |_, c| Ok(u32::from(strings::wctype(c.l(0), char::is_alphabetic)))),
    e!(309 "iswdigit" [L] |_, c| Ok(u32::from(strings::wctype(c.l(0), |ch| ch.is_ascii_digit())))),
    e!(311 "iswlower" [L] |_, c| Ok(u32::from(strings::wctype(c.l(0), char::is_lowercase)))),
    e!(314 "iswspace" [L] |_, c| Ok(u32::from(strings::wctype(c.l(0), char::is_whitespace)))),
    e!(315 "iswupper" [L] |_, c| Ok(u32::from(strings::wctype(c.l(0), char::is_uppercase)))),
    e!(317 "isxdigit" [L] |_, c| Ok(u32::from(strings::ctype(c.l(0), u8::is_ascii_hexdigit)))),
    e!(328 "localtime" [P] |p, c| {
        let t = rd32(p, c.l(0))? as i32;
        let tm = tm_of(i64::from(t));
        let d = data_or_stop(p)?;
        let bytes: Vec<u8> = tm.iter().flat_map(|v| v.to_le_bytes()).collect();
        write(p, d + D_TM, &bytes)?;
        Ok(d + D_TM)
    }),
    e!(332 "_makepath" [P, S, S, S, P] strings::makepath),
    e!(333 "_matherr" [P] |_, _| Ok(0)),
    e!(340 "mbstowcs" [P, S, L] strings::mbstowcs),
    e!(341 "mbtowc" [P, P, L] strings::mbtowc),
    e!(354 "perror" [S] stdio::perror),
    e!(355 "_PGLOBAL_PTR" data D_PGLOBAL),
    e!(357 "_PrintErrMsg" [L, L, L] print_err_msg),
    e!(361 "_putenv" [S] strings::putenv),
    e!(362 "puts" [S] |p, c| {
        let mut s = cstr(p, c.l(0))?;
        s.push(b'\n');
        let d = data_or_stop(p)?;
        stdio::fwrite_text(p, d + D_FILES + FILE_SIZE, &s).map(|r| if r == u32::MAX { r } else { 0 })
    }),
    e!(371 "remove" [S] stdio::remove),
    e!(382 "setlocale" [L, P] |p, c| {
        let d = data_or_stop(p)?;
        if c.l(1) == 0 {
            return Ok(d + D_LOCALE);
        }
        let name = cstr(p, c.l(1))?;
        Ok(if name.is_empty() || name == b"C" || name == b"POSIX" { d + D_LOCALE } else { 0 })
    }),
    e!(399 "_splitpath" [S, P, P, P, P] strings::splitpath),
    e!(402 "_stat" [S, P] stdio::stat),
    e!(403 "stderr" data D_STDIN + 8),
    e!(404 "stdin" data D_STDIN),
    e!(405 "stdout" data D_STDIN + 4),
    e!(406 "strcmpi" [S, S] |p, c| strings::compare_strings::<u8>(p, c, true)),
    e!(410 "strerror" [L] |p, c| {
        let d = data_or_stop(p)?;
        put_sz(p, d + D_STRERROR, strings::strerror_text(c.l(0)).as_bytes())?;
        Ok(d + D_STRERROR)
    }),
    e!(412 "strftime" [P, L, S, P] |p, c| {
        let fmt = cstr(p, c.l(2))?;
        let tm_at = stack_arg(p, 16)?;
        let tm = read_tm(p, tm_at)?;
        let tz = rt(p).tz.clone();
        let tz = if tz.is_empty() { "UTC" } else { &tz };
        let text = strftime_text(&fmt, &tm, tz, c.l(1) as usize);
        if text.len() as u32 >= c.l(1) {
            return Ok(0);
        }
        put_sz(p, c.l(0), &text)?;
        Ok(text.len() as u32)
    }),
    e!(413 "stricmp" [S, S] |p, c| strings::compare_strings::<u8>(p, c, true)),
    e!(414 "strlwr" [P] |p, c| strings::map_case(p, c.l(0), false)),
    e!(415 "strnicmp" [S, S, L] |p, c| strings::compare_prefixes::<u8>(p, c, true)),
    e!(423 "strtok" [P, S] strings::strtok),
    e!(425 "strupr" [P] |p, c| strings::map_case(p, c.l(0), true)),
    e!(428 "system" [S] callback::system),
    e!(436 "_tempnam" [S, S] stdio::tempnam),
    e!(441 "time" [P] |p, c| {
        let t = now_secs(p) as u32;
        if c.l(0) != 0 {
            wr32(p, c.l(0), t)?;
        }
        Ok(t)
    }),
    e!(445 "tmpnam" [P] stdio::tmpnam),
    e!(446 "tolower" [L] |_, c| Ok(strings::to_case(c.l(0), false))),
    e!(447 "toupper" [L] |_, c| Ok(strings::to_case(c.l(0), true))),
    e!(448 "towlower" [L] |_, c| Ok(strings::to_wcase(c.l(0), false))),
    e!(449 "towupper" [L] |_, c| Ok(strings::to_wcase(c.l(0), true))),
    e!(452 "_tzset" [] |p, _| {
        let tz = strings::env_value(p, b"TZ")?.unwrap_or_default();
        let name: String = tz.iter().take_while(|b| b.is_ascii_alphabetic()).map(|&b| char::from(b)).collect();
        rt(p).tz = name;
        Ok(0)
    }),
    e!(458 "_unlink" [S] stdio::remove),
    e!(459 "_utime" [S, P] stdio::utime),
    e!(461 "_vfprintfieee" [P, S, P] |p, c| {
        let text = format_at(p, c.l(1), c.l(2))?;
        stdio::fwrite_text(p, c.l(0), &text)
    }),
    e!(464 "wcscat" [P, P] strings::concat::<u16>),
    e!(465 "wcschr" [P, L] |p, c| strings::find_char::<u16>(p, c, false)),
    e!(466 "wcscmp" [P, P] |p, c| strings::compare_strings::<u16>(p, c, false)),
    e!(468 "wcscpy" [P, P] strings::copy::<u16>),
    e!(469 "wcscspn" [P, P] |p, c| strings::span::<u16>(p, c, false)),
    e!(473 "wcslen" [P] |p, c| Ok(wstr_max(p, c.l(0), MAX_STR)?.len() as u32)),
    e!(475 "wcsncmp" [P, P, L] |p, c| strings::compare_prefixes::<u16>(p, c, false)),
    e!(476 "wcsncpy" [P, P, L] strings::wcsncpy),
    e!(477 "wcspbrk" [P, P] strings::find_any::<u16>),
    e!(478 "wcsrchr" [P, L] |p, c| strings::find_char::<u16>(p, c, true)),
    e!(480 "wcsspn" [P, P] |p, c| strings::span::<u16>(p, c, true)),
    e!(483 "wcstok" [P, P, P] strings::wcstok),
    e!(486 "wcstol" [P, P, L] strings::wcstol),
    e!(487 "wcstombs" [P, P, L] strings::wcstombs),
    e!(489 "wcswcs" [P, P] strings::find_string::<u16>),
    e!(499 "_SysQueryFHState" [L, P] stdio::sys_query_fhstate),
    e!(500 "_SysQueryHType" [L, P, P] stdio::sys_query_htype),
    e!(501 "_get_handle_flags" [L] stdio::handle_flags),
    e!(504 "_swprintfieee" [P, L, P] strings::swprintf),
];

/// LIBCM's entries.
pub static LIBCM: [ApiDef; 168] = for_module("LIBCM", COMMON);
/// LIBCS's entries.
pub static LIBCS: [ApiDef; 168] = for_module("LIBCS", COMMON);
/// LIBCM's own entries.
pub static LIBCM_ONLY: &[ApiDef] = &[ApiDef {
    module: "LIBCM",
    ordinal: 511,
    name: "__cppstore",
    conv: Conv::Optlink,
    args: &[],
    func: Some(Func::Raw(cppstore)),
}];

/// __cppstore: the calling thread's C++ runtime block (256 zeroed bytes,
/// made on first use).
fn cppstore(p: &mut Process, _c: &Call) -> Result<u32, Stop> {
    let tid = p.current_tid();
    if let Some(&a) = rt(p).cppstore.get(&tid) {
        return Ok(a);
    }
    let a = malloc(p, 256)?;
    if a != 0 {
        zero(p, a, 256)?;
        rt(p).cppstore.insert(tid, a);
    }
    Ok(a)
}

/// Every entry of both DLLs.
pub fn defs() -> impl Iterator<Item = &'static ApiDef> {
    LIBCM.iter().chain(LIBCS.iter()).chain(LIBCM_ONLY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11017);
        assert_eq!(civil(11017), (2000, 3, 1));
        let tm = tm_of(951_782_400 + 3661); // 2000-02-29 01:01:01, a Tuesday
        assert_eq!(tm, [1, 1, 1, 29, 1, 100, 2, 59, 0]);
        assert_eq!(asctime_text(&tm), "Tue Feb 29 01:01:01 2000\n");
        assert_eq!(
            strftime_text(b"%Y-%m-%d %H:%M:%S %a %B %j %p %%", &tm, "UTC", 100),
            b"2000-02-29 01:01:01 Tue February 060 AM %"
        );
    }

    #[test]
    fn tables_are_sorted_and_unique() {
        let ords: Vec<u32> = COMMON
            .iter()
            .map(|d| d.ordinal)
            .filter(|&o| o != 0)
            .collect();
        assert!(ords.windows(2).all(|w| w[0] < w[1]), "{ords:?}");
        assert_eq!(defs().filter(|d| d.module == "LIBCS").count(), COMMON.len());
    }
}
