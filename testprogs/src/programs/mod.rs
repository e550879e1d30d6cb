//! The programs, one module each, and what they share: segment flags,
//! the system imports they call, the stack sizes and the common exit
//! ([`epilogue`]) here; call sequences and result checks in `calls`
//! ([`Call`], [`Arg`], [`routine16`], `fail_unless_*`); the header
//! fields, stack object and common tracepoints in `layout` ([`Exe`],
//! [`exit_rc16`], `stack_bytes16!`); DLLCAL16 and DLLCAL32's shared
//! `main` in `dllcal`.

pub mod args;
pub mod cptrap32;
pub mod debug;
pub mod dll16;
pub mod dll32;
pub mod farcall16;
pub mod fileio16;
pub mod fileio32;
pub mod hello16;
pub mod hello32;
pub mod loops;
pub mod msg;
pub mod ords;
pub mod systrc16;
pub mod systrc32;
pub mod tnf;

mod calls;
mod dllcal;
mod layout;

pub(crate) use calls::{
    Arg, Call, Ret16, fail_unless_ok, fail_unless_returned, fail_unless_var, routine16,
};
pub(crate) use layout::{Exe, exit_rc16, exit_rc32, logging, stack_bytes16, stack_bytes32};

use crate::segment::Ref;

/// NE code segment flags: DPL 3, fixed, not iterated.
pub(crate) const NE_CODE: u32 = 0x0C00;
/// NE data segment flags: DPL 3, read/write data.
pub(crate) const NE_DATA: u32 = 0x0C01;
/// NE module flags of a program: multiple data (per-instance DGROUP),
/// windowing-compatible (a VIO program).
pub(crate) const NE_PROGRAM: u32 = 0x0202;
/// NE module flags of a DLL: library, single (shared) data, global
/// initialization.
pub(crate) const NE_LIBRARY: u32 = 0x8001;
/// LX object flags of 32-bit code: readable, executable, big.
pub(crate) const LX_CODE: u32 = 0x2005;
/// LX object flags of 32-bit data and stack: readable, writable, big.
pub(crate) const LX_DATA: u32 = 0x2003;
/// LX module flags of a program: windowing-compatible.
pub(crate) const LX_PROGRAM: u32 = 0x0200;
/// LX module flags of a DLL: library, global initialization (the start
/// address is the init routine; per-process bit clear).
pub(crate) const LX_LIBRARY: u32 = 0x8000;

/// Stack the OS/2 1.x loader adds to the automatic data segment of the
/// 16-bit programs (the header's stack size).
pub(crate) const STACK16: u32 = 0x1000;
/// Size of the stack object of the 32-bit programs.
pub(crate) const STACK32: u32 = 0x4000;

/// A DOSCALLS import by ordinal.
pub(crate) const fn doscalls(ordinal: u32, name: &'static str) -> Ref {
    Ref::Ordinal {
        module: "DOSCALLS",
        ordinal,
        name,
    }
}

/// 16-bit `DosExit(USHORT action, USHORT result)`.
pub(crate) const DOSEXIT16: Ref = doscalls(5, "DOSEXIT");
/// 16-bit `DosWrite(HFILE, PVOID, USHORT cb, PUSHORT pcbWritten)`.
pub(crate) const DOSWRITE16: Ref = doscalls(138, "DOSWRITE");
/// 16-bit `DosOpen(PSZ, PHFILE, PUSHORT action, ULONG size, USHORT attr,
/// USHORT openflag, USHORT openmode, ULONG reserved)`.
pub(crate) const DOSOPEN16: Ref = doscalls(70, "DOSOPEN");
/// 16-bit `DosRead(HFILE, PVOID, USHORT cb, PUSHORT pcbRead)`.
pub(crate) const DOSREAD16: Ref = doscalls(137, "DOSREAD");
/// 16-bit `DosChgFilePtr(HFILE, LONG distance, USHORT method, PULONG newpos)`.
pub(crate) const DOSCHGFILEPTR16: Ref = doscalls(58, "DOSCHGFILEPTR");
/// 16-bit `DosClose(HFILE)`.
pub(crate) const DOSCLOSE16: Ref = doscalls(59, "DOSCLOSE");
/// 32-bit `DosOpen(PSZ, PHFILE, PULONG action, ULONG cbFile, ULONG attr,
/// ULONG openflags, ULONG openmode, PEAOP2)`.
pub(crate) const DOSOPEN32: Ref = doscalls(273, "DosOpen");
/// 32-bit `DosRead(HFILE, PVOID, ULONG cb, PULONG pcbActual)`.
pub(crate) const DOSREAD32: Ref = doscalls(281, "DosRead");
/// 32-bit `DosSetFilePtr(HFILE, LONG ib, ULONG method, PULONG ibActual)`.
pub(crate) const DOSSETFILEPTR32: Ref = doscalls(256, "DosSetFilePtr");
/// 32-bit `DosClose(HFILE)`.
pub(crate) const DOSCLOSE32: Ref = doscalls(257, "DosClose");
/// 16-bit `DosPutMessage(HFILE, USHORT cb, PCHAR msg)`.
pub(crate) const DOSPUTMESSAGE16: Ref = Ref::Ordinal {
    module: "MSG",
    ordinal: 1,
    name: "DOSPUTMESSAGE",
};
/// 32-bit `DosPutMessage(HFILE, ULONG cb, PCHAR msg)`.
pub(crate) const DOSPUTMESSAGE32: Ref = Ref::Ordinal {
    module: "MSG",
    ordinal: 5,
    name: "DosPutMessage",
};
/// 16-bit `VioWrtTTY(PCH, USHORT cb, HVIO)`.
pub(crate) const VIOWRTTTY16: Ref = Ref::Ordinal {
    module: "VIOCALLS",
    ordinal: 19,
    name: "VIOWRTTTY",
};
/// 32-bit `DosExit(ULONG action, ULONG result)`.
pub(crate) const DOSEXIT32: Ref = doscalls(234, "DosExit");
/// 32-bit `DosWrite(HFILE, PVOID, ULONG cb, PULONG pcbActual)`.
pub(crate) const DOSWRITE32: Ref = doscalls(282, "DosWrite");

use iced_x86::code_asm::*;

use crate::error::Result;
use crate::segment::Code;

/// `push 1; push ax; call far DOSCALLS.5`: DosExit(EXIT_PROCESS, AX).
/// DosExit does not return, so nothing follows it.
pub(crate) fn exit16(c: &mut Code) -> Result<()> {
    c.op(|a| a.push(1))?;
    c.op(|a| a.push(ax))?;
    c.call_far_import(DOSEXIT16)
}

/// `push eax; push 1; call DosExit`: DosExit(EXIT_PROCESS, EAX), _System.
pub(crate) fn exit32(c: &mut Code) -> Result<()> {
    c.op(|a| a.push(eax))?;
    c.op(|a| a.push(1))?;
    c.call_rel32_import(DOSEXIT32)
}

/// The failure exits: for each code, `mov (e)ax, code; jmp exit` at the
/// label the checks branch to (the last one falls through to `exit`).
pub(crate) fn failures(
    c: &mut Code,
    fails: &mut [CodeLabel],
    exit: CodeLabel,
    bits: u32,
) -> Result<()> {
    let n = fails.len();
    for (i, label) in fails.iter_mut().enumerate() {
        c.place(label)?;
        let code = i as u32 + 1;
        if bits == 16 {
            c.op(|a| a.mov(ax, code))?;
        } else {
            c.op(|a| a.mov(eax, code))?;
        }
        if i + 1 < n {
            c.op(|a| a.jmp(exit))?;
        }
    }
    Ok(())
}

/// The common end of a program's checks: success exits 0, then the failure
/// exits ([`failures`]), then the public `exit` label and DosExit with
/// (E)AX as the result.
pub(crate) fn epilogue(
    c: &mut Code,
    fails: &mut [CodeLabel],
    exit: &mut CodeLabel,
    bits: u32,
) -> Result<()> {
    if bits == 16 {
        c.op(|a| a.xor(ax, ax))?;
    } else {
        c.op(|a| a.xor(eax, eax))?;
    }
    let target = *exit;
    c.op(|a| a.jmp(target))?;
    failures(c, fails, target, bits)?;
    c.place(exit)?;
    c.public("exit")?;
    if bits == 16 { exit16(c) } else { exit32(c) }
}
