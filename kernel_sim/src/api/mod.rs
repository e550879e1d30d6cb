//! The system DLLs, implemented in Rust as host calls.
//!
//! Every imported entry of a system DLL (DOSCALLS, MSG, VIOCALLS, NLS,
//! KBDCALLS, ...) is bound at load time to a thunk slot in the system
//! region (see [`crate::thunks`]); a call reaches the host before the instruction
//! at the slot runs. The API table ([`ApiDef`]) gives each entry its real
//! ordinal, name, calling convention and argument list:
//! - [`Conv::Far16`]: 16-bit far pascal. Arguments are pushed left to
//!   right, so the last one is just above the far return address; the
//!   callee pops them. The result is in AX.
//! - [`Conv::Sys32`]: 32-bit `_System`. Arguments are pushed right to left
//!   above the near return address; the caller pops them. The result is in
//!   EAX.
//! - [`Conv::Value`]: an absolute value import (DOSHUGESHIFT,
//!   DOSHUGEINCR): fixups get the number itself.
//! - [`Conv::Optlink`]: 32-bit `_Optlink` (the C runtime, `libc`): the
//!   first three arguments in EAX, EDX, ECX, the rest on the stack above
//!   12 reserved bytes (so argument `i` is at ESP+4+4i either way); the
//!   caller pops; the result in EAX.
//! - [`Conv::Data`]: exported data (the C runtime's `stdout`): fixups get
//!   the address of the variable in the process's runtime data block.
//!
//! Entries the table names but does not implement, and ordinals it does
//! not know, stop the program with `unimplemented MODULE.ordinal (name)`
//! when called (not when loaded, as a program may import more than it
//! uses).

/// The one way to write an entry of a system DLL's table:
///
/// - `api!(MODULE ORDINAL NAME CONV [ARGS] f)`: `f` returns `Ok(())` or
///   `Err(rc)` ([`Func::Code`]);
/// - `api!(MODULE ORDINAL NAME CONV [ARGS] raw f)`: `f` returns the code
///   itself or stops the run ([`Func::Raw`]);
/// - `api!(MODULE ORDINAL NAME value N)`: an absolute value import.
///
/// CONV is a [`Conv`] variant (`Far16`, `Sys32`), ARGS are [`Arg`]
/// variants in declaration order.
macro_rules! api {
    // An entry with an implementation (the two kinds' shared body).
    (@entry $m:literal $o:literal $n:literal $conv:ident [$($a:ident),*] $func:expr) => {
        $crate::api::ApiDef {
            module: $m,
            ordinal: $o,
            name: $n,
            conv: $crate::api::Conv::$conv,
            args: &[$($crate::api::Arg::$a),*],
            func: Some($func),
        }
    };
    ($m:literal $o:literal $n:literal value $v:expr) => {
        $crate::api::ApiDef {
            module: $m,
            ordinal: $o,
            name: $n,
            conv: $crate::api::Conv::Value($v),
            args: &[],
            func: None,
        }
    };
    ($m:literal $o:literal $n:literal $conv:ident [$($a:ident),*] raw $f:expr) => {
        api!(@entry $m $o $n $conv [$($a),*] $crate::api::Func::Raw($f))
    };
    ($m:literal $o:literal $n:literal $conv:ident [$($a:ident),*] $f:expr) => {
        api!(@entry $m $o $n $conv [$($a),*] $crate::api::Func::Code($f))
    };
}

mod cmdshell;
mod codepage;
pub mod console;
pub mod cptrapvm;
pub mod doscalls16;
pub mod doscalls32;
mod exec;
mod fhstate;
mod fileinfo;
mod fileops;
mod find;
mod fsattach;
mod handles;
mod ioctl;
pub(crate) mod kbd;
pub(crate) mod libc;
pub(crate) mod libpath;
pub(crate) mod libuni;
pub mod modules;
pub mod moncalls;
pub mod msg;
mod muxwait;
pub mod names;
pub mod nls;
pub(crate) mod npipes;
pub mod ordinals;
pub(crate) mod pipes;
mod pmwin;
mod querymem;
pub mod queues;
mod resources;
pub mod sems;
pub(crate) mod sessions;
mod shared;
pub(crate) mod sharedmem;
pub(crate) mod signals;
pub(crate) mod submem;
mod sysmsg;
pub(crate) mod syssem;
pub mod systrace;
mod tcpip;
pub(crate) mod threads;
mod threads16;
pub mod tnfprobe;
pub(crate) mod uconv;
mod util;
pub mod vio;

use crate::error::Outcome;
use crate::process::Process;

/// A calling convention.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conv {
    /// 16-bit far pascal, callee pops.
    Far16,
    /// 32-bit `_System`, caller pops.
    Sys32,
    /// Not a function: an absolute value.
    Value(u32),
    /// 32-bit `_Optlink`, caller pops.
    Optlink,
    /// Not a function: a variable at this offset of the C runtime's data
    /// block (`libc`).
    Data(u32),
}

/// An argument's kind, in declaration order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// A 16-bit word (USHORT, HFILE in 16-bit APIs).
    W,
    /// A 32-bit number (ULONG, LONG).
    L,
    /// A pointer: 16:16 in 16-bit APIs, flat in 32-bit APIs.
    P,
    /// A pointer to a NUL-terminated string (logged as text).
    S,
}

/// A host implementation: the result code, or a reason to stop.
pub type ApiFn = fn(&mut Process, &Call) -> Result<u32, Stop>;

/// An implementation in one of two shapes.
#[derive(Clone, Copy, Debug)]
pub enum Func {
    /// Returns `Ok(())` for NO_ERROR or `Err(rc)`.
    Code(fn(&mut Process, &Call) -> Result<(), u32>),
    /// Returns the code itself or stops the run.
    Raw(ApiFn),
}

impl Func {
    /// Call it.
    pub fn call(self, p: &mut Process, c: &Call) -> Result<u32, Stop> {
        match self {
            Func::Code(f) => Ok(f(p, c).err().unwrap_or(0)),
            Func::Raw(f) => f(p, c),
        }
    }
}

/// One entry of a system DLL.
#[derive(Clone, Copy, Debug)]
pub struct ApiDef {
    /// DLL name, upper case.
    pub module: &'static str,
    /// Ordinal.
    pub ordinal: u32,
    /// Function name.
    pub name: &'static str,
    /// Calling convention.
    pub conv: Conv,
    /// Arguments in declaration order.
    pub args: &'static [Arg],
    /// The implementation; `None` for entries named but not implemented.
    pub func: Option<Func>,
}

// Every host call reads its table entry and builds a `Call`: keep them
// from growing unnoticed.
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(std::mem::size_of::<ApiDef>() == 80);
    assert!(std::mem::size_of::<Call>() == 32);
};

impl ApiDef {
    /// Implemented: a function with code, a value or data.
    pub fn is_implemented(&self) -> bool {
        self.func.is_some() || matches!(self.conv, Conv::Value(_) | Conv::Data(_))
    }
}

/// Why an API call ends the run.
#[derive(Debug)]
pub enum Stop {
    /// DosExit: the process ends with this code.
    Exit(u32),
    /// DosExit(EXIT_THREAD): the calling thread ends with this code (the
    /// process too if it is thread 1 or the last).
    ExitThread(u32),
    /// The call blocks: it returns when the wait is over, with the code
    /// the waker gives it (`threads.rs`).
    Block(crate::threads::Wait),
    /// The call has set the thread's registers itself (a
    /// DosRaiseException a handler continued, a DosUnwindException): the
    /// thread runs on from them.
    Resumed,
    /// Anything else.
    Outcome(Outcome),
}

/// The arguments of one call, in declaration order.
#[derive(Debug)]
pub struct Call {
    /// Raw values (16:16 pointers as `sel << 16 | off`).
    pub vals: Vec<u32>,
    /// 16-bit convention (pointers are 16:16).
    pub far16: bool,
}

impl Call {
    /// Argument `i` as a word.
    pub fn w(&self, i: usize) -> u16 {
        self.vals.get(i).copied().unwrap_or(0) as u16
    }
    /// Argument `i` as a dword.
    pub fn l(&self, i: usize) -> u32 {
        self.vals.get(i).copied().unwrap_or(0)
    }
}

/// Bytes of one argument on the stack.
fn arg_size(a: Arg, far16: bool) -> u32 {
    match (a, far16) {
        (Arg::W, true) => 2,
        _ => 4,
    }
}

/// (offset from SP/ESP, size) of each argument in declaration order.
pub fn arg_offsets(args: &[Arg], far16: bool) -> Vec<(u32, u32)> {
    if far16 {
        let mut off = 4;
        let mut out: Vec<(u32, u32)> = args
            .iter()
            .rev()
            .map(|a| {
                let s = arg_size(*a, true);
                let r = (off, s);
                off += s;
                r
            })
            .collect();
        out.reverse();
        out
    } else {
        (0..args.len() as u32).map(|i| (4 + 4 * i, 4)).collect()
    }
}

/// Arguments as text for the API log.
pub fn format_args(p: &mut Process, def: &ApiDef, call: &Call) -> String {
    let mut parts = Vec::new();
    for (i, a) in def.args.iter().enumerate() {
        let v = call.l(i);
        parts.push(match a {
            Arg::W => format!("{}", v & 0xFFFF),
            Arg::L => format!("{v}"),
            Arg::P if call.far16 => format!("{:04X}:{:04X}", v >> 16, v & 0xFFFF),
            Arg::P => format!("{v:#010x}"),
            Arg::S => match p.read_sz(v, call.far16, 260) {
                Some(s) => format!(
                    "\"{}\"",
                    s.iter().map(|&b| char::from(b)).collect::<String>()
                ),
                None if v == 0 => "NULL".to_string(),
                None => format!("{v:#010x}"),
            },
        });
    }
    parts.join(", ")
}

/// Every implemented or named entry of every system DLL.
pub fn table() -> impl Iterator<Item = &'static ApiDef> {
    doscalls16::DEFS
        .iter()
        .chain(doscalls32::DEFS)
        .chain(modules::DEFS)
        .chain(sems::DEFS)
        .chain(muxwait::DEFS)
        .chain(console::DEFS)
        .chain(nls::DEFS)
        .chain(tnfprobe::DEFS)
        .chain(cptrapvm::DEFS)
        .chain(systrace::DEFS)
        .chain(signals::DEFS)
        .chain(msg::DEFS)
        .chain(submem::DEFS)
        .chain(threads::DEFS)
        .chain(fileinfo::DEFS)
        .chain(fhstate::DEFS)
        .chain(fileops::DEFS)
        .chain(fsattach::DEFS)
        .chain(handles::DEFS)
        .chain(kbd::DEFS)
        .chain(libpath::DEFS)
        .chain(resources::DEFS)
        .chain(querymem::DEFS)
        .chain(pmwin::DEFS)
        .chain(libuni::DEFS)
        .chain(uconv::DEFS)
        .chain(exec::DEFS)
        .chain(cmdshell::DEFS)
        .chain(threads16::DEFS)
        .chain(pipes::DEFS)
        .chain(queues::DEFS)
        .chain(sharedmem::DEFS)
        .chain(syssem::DEFS)
        .chain(tcpip::DEFS)
        .chain(libc::defs())
        .chain(ioctl::DEFS)
        .chain(sessions::DEFS)
        .chain(npipes::DEFS)
        .chain(moncalls::DEFS)
        .chain(vio::DEFS)
}

/// The system DLLs this kernel provides.
pub const SYSTEM_DLLS: &[&str] = &[
    "DOSCALLS", "DOSCALL1", "MSG", "VIOCALLS", "NLS", "KBDCALLS", "MOUCALLS", "SESMGR", "QUECALLS",
    "MONCALLS", "PMWIN", "PMGPI", "PMSHAPI", "PMMERGE", "HELPMGR", "PMSPL", "PMVIOP", "TNFPROBE",
    "NAMPIPES", "BDCALLS", "FKA", "PMCTLS", "PMDRAG", "PMGRE", "PMPIC", "PMWP", "PNP", "WPCONFIG",
    "WPINET", "WPPRINT", "CPTRAP", "CMDSHELL", "LIBUNI", "UCONV", "TCP32DLL", "LIBCM", "LIBCS",
];

/// Is `name` a system DLL?
pub fn is_system(name: &str) -> bool {
    SYSTEM_DLLS.iter().any(|d| d.eq_ignore_ascii_case(name))
}

/// The table entry for an ordinal of a system DLL. DOSCALL1 is DOSCALLS.
pub fn lookup(module: &str, ordinal: u32) -> Option<&'static ApiDef> {
    let module = canonical(module);
    table()
        .find(|d| d.module == module && d.ordinal == ordinal)
        .or_else(|| names::named(module, ordinal))
}

/// The table entry for a name of a system DLL (case-insensitive).
pub fn lookup_name(module: &str, name: &str) -> Option<&'static ApiDef> {
    let module = canonical(module);
    table()
        .find(|d| d.module == module && d.name.eq_ignore_ascii_case(name))
        .or_else(|| names::by_name(module, name))
}

fn canonical(module: &str) -> &'static str {
    let up = module.to_ascii_uppercase();
    if up == "DOSCALL1" {
        return "DOSCALLS";
    }
    SYSTEM_DLLS
        .iter()
        .find(|d| **d == up)
        .copied()
        .unwrap_or("?")
}
