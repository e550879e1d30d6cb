//! Sample OS/2 modules built in Rust: NE and LX programs and DLLs
//! assembled with iced-x86's `code_asm`, written with the `loader` crate's
//! writers, each with a LINK386-style MAP file, a TSF for TRCUST and a
//! DTRACE trace program file whose tracepoints sit on instruction
//! boundaries of named routines.
//!
//! Entry points: one function per module ([`hello16()`], [`hello32()`],
//! [`tpdll16()`], [`dllcal16()`], [`tpdll32()`], [`dllcal32()`],
//! [`farcal16()`], [`fileio16()`], [`fileio32()`], [`msgvio16()`],
//! [`msg32()`], [`args16()`], [`args32()`], [`loop16()`], [`loop32()`]),
//! each returning a [`Program`]
//! (module, file bytes, MAP, TSF and trace program texts, every label, the
//! tracepoints); [`all`] builds them all; [`build_all`] writes them to a directory as
//! `NAME.EXE`/`NAME.DLL`, `NAME.MAP`, `NAME.TSF` and `NAME.RPN`.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let hello = testprogs::hello16()?;
//! let module = loader::parse(&hello.bytes)?;
//! assert_eq!(module.name, "HELLO16");
//! let map = loader::map::parse(&hello.map)?;
//! let main = map.lookup("main").unwrap();
//! assert_eq!(module.start.map(|a| (a.object, a.offset)), Some((main.object, main.offset)));
//! let dll = testprogs::tpdll16()?;
//! assert_eq!(dll.module.export("PUTMSG").map(|e| e.ordinal), Some(2));
//! # Ok(())
//! # }
//! ```
//!
//! # Conventions the programs rely on
//!
//! 16-bit programs (NE) follow OS/2 1.x:
//! - Start: CS:IP is the header's; DS = SS = the automatic data segment
//!   (DGROUP). The header's SS:SP is DGROUP:(minimum allocation + stack
//!   size): the loader allocates DGROUP's minimum allocation plus the
//!   header's stack size (0x1000), and SP starts at the top. AX = the
//!   environment selector and BX = the offset of the command line in it
//!   (only ARGS16 reads them); CX (the DGROUP size) is not used.
//! - API calls are `call far ptr16:16` (`9A`) through ptr16:16 import
//!   fixups, far pascal: arguments pushed left to right, the callee pops
//!   them, the result is in AX; SI, DI, BP, DS are preserved.
//! - A DLL's initialization routine is its CS:IP; it is called far, and
//!   returns AX = 1 (success) with `retf`. TPDLL16's stores AX in `hmod`
//!   (where OS/2 1.x passes the module handle) but nothing depends on it.
//!   It loads its own DS from a sel16 fixup, as do the exported routines.
//! - Segment flags: code 0x0C00, data 0x0C01 (DPL 3, fixed). Module flags:
//!   programs 0x0202, DLLs 0x8001 (library, single data, global init).
//!
//! 32-bit programs (LX) follow OS/2 2.x:
//! - Objects: 1 code (0x2005), 2 data (0x2003), and for programs 3 a
//!   zero-filled stack object (0x2003, 16 KiB, no pages); ESP = 3:0x4000.
//!   Preferred bases are 0x10000 times the object number; data addresses
//!   are off32 fixups (the sites hold the address at the preferred base).
//! - Start: EIP and ESP from the header; the start stack holds the return
//!   address, module handle, 0, environment and command line pointers
//!   (only ARGS32 reads `[esp+16]`, the command line).
//! - API calls are `call rel32` (`E8`) through rel32 import fixups,
//!   `_System`: arguments pushed right to left, the caller pops them, the
//!   result is in EAX; DS = ES = SS flat.
//! - A DLL's initialization routine is its EIP (global initialization,
//!   module flags 0x8000): `_System (hmod, flag)`, flag 0 = init, 1 = term,
//!   returns EAX = 1.
//!
//! # The programs
//!
//! Exit codes: 0 when every check passed, otherwise the number of the
//! first failed check (listed per program below).
//!
//! | file | format | segments / objects | imports | does |
//! |---|---|---|---|---|
//! | HELLO16.EXE | NE | 1 `_TEXT`, 2 `_DATA` (DGROUP) | DOSCALLS.138 DOSWRITE, .5 DOSEXIT | writes [`hello16::MESSAGE`]; exit 1 if DosWrite fails or writes less |
//! | HELLO32.EXE | LX | 1 `CODE32`, 2 `DATA32`, 3 `STACK` | DOSCALLS.282 DosWrite, .234 DosExit | writes [`hello32::MESSAGE`]; exit 1 as above |
//! | TPDLL16.DLL | NE DLL | 1 `_TEXT`, 2 `_DATA` | DOSCALLS.138 | exports 1 `ADDNUMS(a,b)` = a+b, 2 `PUTMSG(psz far)` = DosWrite rc, 3 `GETCOUNT()` = times init ran; init `DLLINIT` |
//! | DLLCAL16.EXE | NE | 1 `_TEXT`, 2 `_DATA` | TPDLL16.PUTMSG, TPDLL16.1 (by ordinal), TPDLL16.GETCOUNT (by name), DOSCALLS.5 | PUTMSG([`dll16::GREETING`]) (exit 1 if rc ≠ 0), ADDNUMS(2,3) = 5 (else 2), GETCOUNT() = 1 (else 3) |
//! | TPDLL32.DLL | LX DLL | 1 `CODE32`, 2 `DATA32` | DOSCALLS.282 | exports 1 `AddNums`, 2 `PutMsg`, 3 `GetCount` (as TPDLL16, `_System`); init `_DLL_InitTerm` |
//! | DLLCAL32.EXE | LX | 1 `CODE32`, 2 `DATA32`, 3 `STACK` | TPDLL32.PutMsg, TPDLL32.1, TPDLL32.GetCount, DOSCALLS.234 | as DLLCAL16 with [`dll32::GREETING`] |
//! | FARCAL16.EXE | NE | 1 `_TEXT`, 2 `FAR_TEXT`, 3 `_DATA` (DGROUP) | DOSCALLS.138, .5 | far calls between the code segments: direct `call far` with ptr16:16 internal fixups, indirect `call far [fntab]` through 16:16 pointers in DGROUP, a far data pointer loaded with `les`; FARADD(7,5) = 12 (exit 1), QUAD(FARSQUARE(12)) = 576 (exit 2), PRINTFAR writes [`farcall16::MESSAGE`] (exit 3) |
//! | FILEIO16.EXE | NE | 1 `_TEXT`, 2 `_DATA` (DGROUP, with a zero-filled read buffer past the stored data) | DOSCALLS.70, .138, .58, .137, .59, .5 | creates [`fileio16::FILE_NAME`] in the current directory, writes [`fileio16::CONTENT`], seeks to 0, reads it back, compares, closes; exit 0 when equal, else 1 (the file is left behind) |
//! | FILEIO32.EXE | LX | 1 `CODE32`, 2 `DATA32` (with the zero-filled `rbuf`), 3 `STACK` | DOSCALLS.273 DosOpen, .282, .256 DosSetFilePtr, .281 DosRead, .257 DosClose, .234 | FILEIO16's round trip with [`fileio32::FILE_NAME`] and [`fileio32::CONTENT`]; exit 0 or 1 |
//! | MSGVIO16.EXE | NE | 1 `_TEXT`, 2 `_DATA` | MSG.1 DosPutMessage, VIOCALLS.19 VioWrtTTY, DOSCALLS.5 | writes [`msg::MESSAGE16`] with DosPutMessage (exit 1 on rc ≠ 0), then [`msg::VIO_TEXT`] with VioWrtTTY (exit 2) |
//! | MSG32.EXE | LX | 1 `CODE32`, 2 `DATA32`, 3 `STACK` | MSG.5 DosPutMessage, DOSCALLS.234 | writes [`msg::MESSAGE32`] (exit 1 on rc ≠ 0) |
//! | ARGS16.EXE | NE | 1 `_TEXT`, 2 `_DATA` | DOSCALLS.138, .5 | reads the OS/2 1.x start registers (AX = environment selector, BX = command line offset), writes its arguments and CR LF; exit 0 (1 if a DosWrite fails) |
//! | ARGS32.EXE | LX | 1 `CODE32`, 2 `DATA32`, 3 `STACK` | DOSCALLS.282, .234 | reads the command line pointer at `[esp+16]` of the OS/2 2.x start stack, writes its arguments and CR LF; exit 0 (1 on failure) |
//! | LOOP16.EXE | NE | 1 `_TEXT`, 2 `_DATA` | DOSCALLS.5 | calls `STEP(i)` [`loops::LOOP16_COUNT`] times and checks the sum (exit 1 if wrong): a workload for tracepoint cost |
//! | LOOP32.EXE | LX | 1 `CODE32`, 2 `DATA32`, 3 `STACK` | DOSCALLS.234 | the same with `Step(i)` [`loops::LOOP32_COUNT`] times |
//!
//! Two more programs carry CodeView (`NB09`) debug information: line
//! numbers of a C source, procedures with a register and a stack
//! variable, a global ([`debug`](mod@debug)). They are built by
//! [`dbg16()`], [`dbg32()`] and [`dbgh32()`] ([`debug_programs`]), not by [`all`], so
//! that the fifteen programs above and [`build_all`]'s output stay as they
//! are. Their [`Program::source`] is the C source the line numbers refer
//! to, written by [`Program::write_to`] as well.
//!
//! | file | format | segments / objects | imports | does |
//! |---|---|---|---|---|
//! | DBG16.EXE | NE + appended NB09 | 1 `_TEXT`, 2 `_DATA` | DOSCALLS.5 | `total = add2(2, 3)`; exit 0 when 5, else 1 |
//! | DBG32.EXE | LX + NB09 debug section | 1 `CODE32`, 2 `DATA32`, 3 `STACK` | DOSCALLS.234 | the same with `Add2` |
//! | DBGH32.EXE | LX + NB04 (IBM HLL) debug section | as DBG32 | DOSCALLS.234 | DBG32's code |
//!
//! Two more carry Solaris TNF probes ([`tnf`](mod@tnf)), built by
//! [`tnf16()`] and [`tnf32()`] ([`tnf_programs`]), not by [`all`]:
//!
//! | file | format | segments / objects | imports | does |
//! |---|---|---|---|---|
//! | TNF16.EXE | NE | 1 `_TEXT`, 2 `_DATA` | TNFPROBE.2 TNF_PROBE16, DOSCALLS.5 | probes `start` (debug; string and int), `step` (int from a BP frame, opaque), `done` (ulong from data) around a loop, `summary` (a `tnf16_state` record through a 16:16 pointer); exit 1 if its sum is wrong |
//! | TNFDLL32.DLL | LX DLL | 1 `CODE32`, 2 `DATA32` | TNFPROBE.1 | `Tick(n)` fires `tick` (n, module) and returns 2n; exports its `TNF_PROBE_LIST` |
//! | TNFLD32.EXE | LX | 1 `CODE32`, 2 `DATA32`, 3 `STACK` | DOSCALLS.318 DosLoadModule, .321 DosQueryProcAddr, TNFPROBE.1, DOSCALLS.234 | loads TNFDLL32 while running, probes `loaded` (hmod) and `types_a`/`types_b` (one value of each TNF type), calls Tick(0..3), Tick(0..N) with a number N as argument, forever with another argument; exit 2/3 if the DLL or Tick is missing, 1 if Tick is wrong |
//! | TNFMT32.EXE | LX | 1 `CODE32`, 2 `DATA32`, 3 `STACK` | DOSCALLS.311 DosCreateThread, .229 DosSleep, .349 DosWaitThread, TNFPROBE.1, DOSCALLS.234 | two threads, each firing its probe (`main_step`, `worker_step`) 3 times with a 1 ms sleep between; exit 1 if a call fails |
//! | TNF32.EXE | LX | 1 `CODE32`, 2 `DATA32`, 3 `STACK` | TNFPROBE.1 TNF_PROBE, DOSCALLS.234 | cookie2: `inloop` (loop_count, total_iterations) per iteration of rounds of 5 and 7, `end` (`node_struct`, a `node_tnf` record of cur_sum and max_cnt); exit 1 if cur_sum is wrong |
//!
//! # The companion files
//!
//! - `NAME.MAP`: LINK386 layout (segment list, `Publics by Name` with `Imp`
//!   lines for imports, `Publics by Value`, `Program entry point at`);
//!   `loader::map::parse` reads it.
//! - `NAME.TSF`: `MODNAME=`, `MAJOR=` (0xC0 and up, one per module), and a
//!   `TRACE` per tracepoint: `TP=.symbol[+n]` from the MAP file,
//!   `OPCODE=` the byte there, `DESC=`, `FMT=` and the data statements;
//!   or `TP=.routine,RETEP=RET` (no `OPCODE=`) for a tracepoint at a
//!   routine's final `ret`, which TRCUST finds itself.
//! - `NAME.RPN`: the same tracepoints as a DTRACE trace program file
//!   (`major=`, `name=`, then `minor=`, `object=`, `offset=`, `opcode=` and
//!   the RPN that TRCUST compiles the TSF's data statements to).
//!
//! Every tracepoint is the first byte of an instruction.
//!
//! Each program's labels (public ones are in its MAP file) and
//! tracepoints are in [`Program::symbols`] and [`Program::tracepoints`];
//! the module docs of [`hello16`](mod@hello16) and the others describe
//! their code.

pub mod bare;
mod codeview;
mod error;
mod hll;
mod link;
mod map;
mod programs;
mod segment;
mod trace;

use std::path::{Path, PathBuf};

pub use error::{BuildError, Result};
pub use programs::{
    args, cptrap32, debug, dll16, dll32, farcall16, fileio16, fileio32, hello16, hello32, loops,
    msg, ords, systrc16, systrc32, tnf,
};

/// A label of a program: where it is, and whether the MAP file lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// Segment or object number (1-based).
    pub object: u16,
    /// Offset in it.
    pub offset: u32,
    /// The name.
    pub name: String,
    /// Listed in the MAP file's publics.
    pub public: bool,
}

/// A tracepoint of a program's TSF and trace program file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracepoint {
    /// Minor code.
    pub minor: u16,
    /// The label of the traced instruction.
    pub label: String,
    /// The public symbol the TSF names (`TP=.symbol+delta`).
    pub symbol: String,
    /// Distance from that symbol.
    pub delta: u32,
    /// Segment or object number.
    pub object: u16,
    /// Offset in it.
    pub offset: u32,
    /// The byte there: the first byte of an instruction.
    pub opcode: u8,
    /// The TSF gives the routine (`TP=.symbol,RETEP=RET`) and TRCUST finds
    /// this address, the routine's last `ret`; `delta` is still the
    /// distance from the symbol.
    pub retep: bool,
}

/// A built program or DLL with its companion files.
#[derive(Debug, Clone)]
pub struct Program {
    /// Module name (`HELLO16`); the companion files are named after it.
    pub name: &'static str,
    /// File name (`HELLO16.EXE`, `TPDLL16.DLL`).
    pub file_name: &'static str,
    /// The major code of its trace definitions.
    pub major: u16,
    /// The module as built; `loader::parse(&bytes)` gives it back.
    pub module: loader::Module,
    /// The module file.
    pub bytes: Vec<u8>,
    /// LINK386-style MAP file.
    pub map: String,
    /// TSF (TRCUST source).
    pub tsf: String,
    /// DTRACE trace program file.
    pub rpn: String,
    /// Every label, public or not.
    pub symbols: Vec<Symbol>,
    /// The tracepoints of the TSF and the trace program file, in order.
    pub tracepoints: Vec<Tracepoint>,
    /// For a program with debug information: the source file's name and
    /// text, whose line numbers the debug information maps.
    pub source: Option<(&'static str, &'static str)>,
}

impl Program {
    /// The label named `name`.
    pub fn symbol(&self, name: &str) -> Option<&Symbol> {
        self.symbols.iter().find(|s| s.name == name)
    }

    /// `NAME.MAP`.
    pub fn map_file_name(&self) -> String {
        format!("{}.MAP", self.name)
    }

    /// `NAME.TSF`.
    pub fn tsf_file_name(&self) -> String {
        format!("{}.TSF", self.name)
    }

    /// `NAME.RPN`.
    pub fn rpn_file_name(&self) -> String {
        format!("{}.RPN", self.name)
    }

    /// Writes the module, MAP, TSF and trace program file (and the source
    /// file, for a program with debug information) into `dir`; returns the
    /// paths written.
    pub fn write_to(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let files: [(String, &[u8]); 4] = [
            (self.file_name.to_string(), &self.bytes),
            (self.map_file_name(), self.map.as_bytes()),
            (self.tsf_file_name(), self.tsf.as_bytes()),
            (self.rpn_file_name(), self.rpn.as_bytes()),
        ];
        let mut paths = Vec::new();
        let source = self.source.map(|(n, t)| (n.to_string(), t.as_bytes()));
        for (name, bytes) in files.into_iter().chain(source) {
            let path = dir.join(name);
            outfile::write_atomic(&path, bytes).map_err(|e| BuildError::Io {
                path: path.clone(),
                source: e.into_cause(),
            })?;
            paths.push(path);
        }
        Ok(paths)
    }
}

/// HELLO16.EXE: 16-bit DosWrite and DosExit.
pub fn hello16() -> Result<Program> {
    programs::hello16::build()
}

/// HELLO32.EXE: 32-bit DosWrite and DosExit.
pub fn hello32() -> Result<Program> {
    programs::hello32::build()
}

/// TPDLL16.DLL: a 16-bit DLL with three exports and an init routine.
pub fn tpdll16() -> Result<Program> {
    programs::dll16::build_dll()
}

/// DLLCAL16.EXE: calls TPDLL16 by ordinal and by name.
pub fn dllcal16() -> Result<Program> {
    programs::dll16::build_exe()
}

/// TPDLL32.DLL: a 32-bit DLL with three exports and an init routine.
pub fn tpdll32() -> Result<Program> {
    programs::dll32::build_dll()
}

/// DLLCAL32.EXE: calls TPDLL32 by ordinal and by name.
pub fn dllcal32() -> Result<Program> {
    programs::dll32::build_exe()
}

/// FARCAL16.EXE: far calls through 16:16 pointers between two code
/// segments.
pub fn farcal16() -> Result<Program> {
    programs::farcall16::build()
}

/// FILEIO16.EXE: create, write, seek, read back, compare, close.
pub fn fileio16() -> Result<Program> {
    programs::fileio16::build()
}

/// FILEIO32.EXE: FILEIO16's round trip with the 32-bit calls.
pub fn fileio32() -> Result<Program> {
    programs::fileio32::build()
}

/// MSGVIO16.EXE: MSG.1 DosPutMessage and VIOCALLS.19 VioWrtTTY.
pub fn msgvio16() -> Result<Program> {
    programs::msg::build_msgvio16()
}

/// MSG32.EXE: MSG.5 DosPutMessage.
pub fn msg32() -> Result<Program> {
    programs::msg::build_msg32()
}

/// ARGS16.EXE: writes its arguments, found from the 16-bit start
/// registers.
pub fn args16() -> Result<Program> {
    programs::args::build_args16()
}

/// ARGS32.EXE: writes its arguments, found from the 32-bit start stack.
pub fn args32() -> Result<Program> {
    programs::args::build_args32()
}

/// LOOP16.EXE: a hot loop of near calls.
pub fn loop16() -> Result<Program> {
    programs::loops::build_loop16()
}

/// TNF16.EXE: TNF probes in a 16-bit program ([`tnf`](mod@tnf)).
pub fn tnf16() -> Result<Program> {
    programs::tnf::build_tnf16(tnf::Probes::Tnf)
}

/// CPTRAP32.EXE: CPTRAP's virtual machine interface, a handled fault,
/// memory and file I/O ([`cptrap32`](mod@cptrap32)).
pub fn cptrap32() -> Result<Program> {
    programs::cptrap32::build()
}

/// SYSTRC16.EXE: static records logged with DosSysTrace
/// ([`systrc16`](mod@systrc16)).
pub fn systrc16() -> Result<Program> {
    programs::systrc16::build()
}

/// SYSTRC32.EXE: DosSysTrace from 32-bit code through a 16-bit thunk
/// ([`systrc32`](mod@systrc32)).
pub fn systrc32() -> Result<Program> {
    programs::systrc32::build()
}

/// TNF32.EXE: the man pages' cookie2 with TNF probes ([`tnf`](mod@tnf)).
pub fn tnf32() -> Result<Program> {
    programs::tnf::build_tnf32(tnf::Probes::Tnf)
}

/// TNF16 or TNF32 built with its probe sites removed (`Probes::Nprobe`)
/// or calling a local stub (`Probes::Stub`), for cost measurements.
pub fn tnf_variant(bits16: bool, probes: tnf::Probes) -> Result<Program> {
    if bits16 {
        programs::tnf::build_tnf16(probes)
    } else {
        programs::tnf::build_tnf32(probes)
    }
}

/// TNFDLL32.DLL: a TNF probe in a DLL that TNFLD32 loads while it runs
/// ([`tnf`](mod@tnf)).
pub fn tnfdll32() -> Result<Program> {
    programs::tnf::build_tnfdll32()
}

/// TNFLD32.EXE: DosLoadModule of TNFDLL32 and calls of its probed `Tick`;
/// N calls with an argument N, forever with another ([`tnf`](mod@tnf)).
pub fn tnfld32() -> Result<Program> {
    programs::tnf::build_tnfld32()
}

/// TNFMT32.EXE: TNF probes in two threads ([`tnf`](mod@tnf)).
pub fn tnfmt32() -> Result<Program> {
    programs::tnf::build_tnfmt32()
}

/// The TNF programs (not in [`all`], whose output stays as it is).
pub fn tnf_programs() -> Result<Vec<Program>> {
    Ok(vec![
        tnf16()?,
        tnf32()?,
        tnfdll32()?,
        tnfld32()?,
        tnfmt32()?,
    ])
}

/// LOOP32.EXE: a hot loop of near calls.
pub fn loop32() -> Result<Program> {
    programs::loops::build_loop32()
}

/// ORDS16.EXE: the 16-bit entries issue 20 moved to their proven
/// ordinals (DosAllocHuge 40, DosReallocHuge 42, DosGetModHandle 47,
/// DosError 120, VioGetConfig 46), each called by ordinal and checked
/// (see [`ords`](mod@ords)). Not part of [`all`].
pub fn ords16() -> Result<Program> {
    programs::ords::build_ords16()
}

/// CALL16.EXE: calls `module.ordinal` (far pascal, no arguments) and
/// exits with AX; `name` is the entry's name for the MAP file. Not part
/// of [`all`].
pub fn call16(module: &'static str, ordinal: u32, name: &'static str) -> Result<Program> {
    programs::ords::build_call16(module, ordinal, name)
}

/// DBG16.EXE: a 16-bit program with appended CodeView information.
pub fn dbg16() -> Result<Program> {
    programs::debug::build_dbg16()
}

/// DBG32.EXE: a 32-bit LX program with a CodeView debug section.
pub fn dbg32() -> Result<Program> {
    programs::debug::build_dbg32()
}

/// DBGH32.EXE: DBG32 with IBM HLL (`NB04`) debug information.
pub fn dbgh32() -> Result<Program> {
    programs::debug::build_dbgh32()
}

/// The programs that carry debug information (DBG16, DBG32, DBGH32).
pub fn debug_programs() -> Result<Vec<Program>> {
    Ok(vec![dbg16()?, dbg32()?, dbgh32()?])
}

/// Every program, in the order of the table above.
pub fn all() -> Result<Vec<Program>> {
    Ok(vec![
        hello16()?,
        hello32()?,
        tpdll16()?,
        dllcal16()?,
        tpdll32()?,
        dllcal32()?,
        farcal16()?,
        fileio16()?,
        fileio32()?,
        msgvio16()?,
        msg32()?,
        args16()?,
        args32()?,
        loop16()?,
        loop32()?,
    ])
}

/// Builds every program and writes each one's files into `dir` (created
/// when missing). Returns the paths written.
pub fn build_all(dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|source| BuildError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut paths = Vec::new();
    for program in all()? {
        paths.extend(program.write_to(dir)?);
    }
    Ok(paths)
}
