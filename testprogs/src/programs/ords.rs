//! ORDS16.EXE: calls, by ordinal, the 16-bit entries whose ordinals the
//! OS/2 toolkit's import libraries proved (issue 20: they had been bound
//! to the wrong ordinals), and checks what each did. [`call16`] builds a
//! program that calls any one entry by ordinal and exits with its result,
//! to see what a call to an entry does (or which name stops it).
//!
//! ORDS16 (NE; segments 1 `_TEXT`, 2 `_DATA`), exit code = the first
//! failed check:
//! 1. `DosAllocHuge(2, 0x100, &sel, 4, 0)` (DOSCALLS.40) returns 0;
//! 2. `DosGetHugeShift(&shift)` (DOSCALLS.41) returns 0;
//! 3. `DosReallocHuge(3, 0, sel)` (DOSCALLS.42) returns 0, after which the
//!    last byte of the third segment (`sel + 2 << shift`, 0xFFFF) is
//!    written and read back (4 if it reads back wrong; a fault if the
//!    segment was not grown);
//! 5. `DosGetModHandle("DOSCALLS", &hmod)` (DOSCALLS.47) returns 0
//!    (6 if `hmod` is 0);
//! 7. `DosError(1)` (DOSCALLS.120) returns 0; 8. `DosError(7)` returns
//!    ERROR_INVALID_PARAMETER (87);
//! 9. `VioGetConfig(0, &cfg, 0)` (VIOCALLS.46, `cfg.cb` = 32) returns 0;
//!    10. `cfg.adapter` is DISPLAY_VGA (3); 11. `cfg.cb` is 32.

use iced_x86::code_asm::*;

use super::*;
use crate::Program;
use crate::error::Result;
use crate::link::link;
use crate::segment::{Code, Data};

/// 16-bit `DosAllocHuge(USHORT cSegs, USHORT cbLast, PSEL, USHORT
/// cMaxSegs, USHORT fAlloc)`.
const DOSALLOCHUGE16: Ref = doscalls(40, "DOSALLOCHUGE");
/// 16-bit `DosGetHugeShift(PUSHORT)`.
const DOSGETHUGESHIFT16: Ref = doscalls(41, "DOSGETHUGESHIFT");
/// 16-bit `DosReallocHuge(USHORT cSegs, USHORT cbLast, SEL)`.
const DOSREALLOCHUGE16: Ref = doscalls(42, "DOSREALLOCHUGE");
/// 16-bit `DosGetModHandle(PSZ, PHMODULE)`.
const DOSGETMODHANDLE16: Ref = doscalls(47, "DOSGETMODHANDLE");
/// 16-bit `DosError(USHORT fEnable)`.
const DOSERROR16: Ref = doscalls(120, "DOSERROR");
/// 16-bit `VioGetConfig(USHORT id, PVIOCONFIGINFO, HVIO)`.
const VIOGETCONFIG16: Ref = Ref::Ordinal {
    module: "VIOCALLS",
    ordinal: 46,
    name: "VIOGETCONFIG",
};

pub(crate) fn build_ords16() -> Result<Program> {
    const P: &str = "ORDS16";
    let mut d = Data::new();
    let sel = d.word("sel", 0);
    let shift = d.word("shift", 0);
    let hmod = d.word("hmod", 0);
    let modname = d.bytes("modname", b"DOSCALLS\0");
    let cfg = d.word("cfg", 32);
    d.zeroed("cfg_rest", 30);
    let data = d.finish("_DATA", "DATA", NE_DATA);
    let mem = |v: u32| word_ptr(u64::from(v));

    let mut c = Code::new(P, 16)?;
    let mut fails: Vec<CodeLabel> = (0..11).map(|_| c.label()).collect();
    let f = fails.clone();
    let mut exit = c.label();
    c.public("main")?;

    let args = [
        Arg::Imm(2),
        Arg::Imm(0x100),
        Arg::Dgroup(sel),
        Arg::Imm(4),
        Arg::Imm(0),
    ];
    Call::pascal(DOSALLOCHUGE16, &args)
        .public("call_dosallochuge")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, f[0])?;
    Call::pascal(DOSGETHUGESHIFT16, &[Arg::Dgroup(shift)]).emit(&mut c)?;
    fail_unless_ok(&mut c, f[1])?;
    let args = [Arg::Imm(3), Arg::Imm(0), Arg::Mem(mem(sel))];
    Call::pascal(DOSREALLOCHUGE16, &args)
        .public("call_dosreallochuge")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, f[2])?;
    // es = sel + (2 << shift); es:[0xFFFF] = 0x5A; read it back.
    c.op(|a| a.mov(cx, mem(shift)))?;
    c.op(|a| a.mov(ax, 2))?;
    c.op(|a| a.shl(ax, cl))?;
    c.op(|a| a.add(ax, mem(sel)))?;
    c.op(|a| a.mov(es, ax))?;
    c.op(|a| a.mov(byte_ptr(0xFFFF).es(), 0x5A))?;
    c.op(|a| a.cmp(byte_ptr(0xFFFF).es(), 0x5A))?;
    c.op(|a| a.jne(f[3]))?;

    let args = [Arg::Dgroup(modname), Arg::Dgroup(hmod)];
    Call::pascal(DOSGETMODHANDLE16, &args)
        .public("call_dosgetmodhandle")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, f[4])?;
    c.op(|a| a.cmp(mem(hmod), 0))?;
    c.op(|a| a.je(f[5]))?;

    Call::pascal(DOSERROR16, &[Arg::Imm(1)])
        .public("call_doserror")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, f[6])?;
    Call::pascal(DOSERROR16, &[Arg::Imm(7)]).emit(&mut c)?;
    fail_unless_returned(&mut c, 87, f[7])?;

    let args = [Arg::Imm(0), Arg::Dgroup(cfg), Arg::Imm(0)];
    Call::pascal(VIOGETCONFIG16, &args)
        .public("call_viogetconfig")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, f[8])?;
    fail_unless_var(&mut c, "cfg", cfg + 2, 3, f[9])?;
    fail_unless_var(&mut c, "cfg", cfg, 32, f[10])?;
    epilogue(&mut c, &mut fails, &mut exit, 16)?;
    let code = c.finish("_TEXT", "CODE", NE_CODE)?;

    let exe = Exe {
        name: P,
        file_name: "ORDS16.EXE",
        description: "ORDS16.EXE: entries at their proven ordinals (os2trace testprogs)",
        major: 0xD8,
        tracepoints: vec![exit_rc16(1, "ORDS16 exit code")],
    };
    link(exe.ne(vec![code, data]))
}

/// A 16-bit program, `CALL16.EXE`, that calls `module.ordinal` (far
/// pascal, no arguments) and exits with AX.
pub(crate) fn build_call16(
    module: &'static str,
    ordinal: u32,
    name: &'static str,
) -> Result<Program> {
    const P: &str = "CALL16";
    let mut d = Data::new();
    d.word("unused", 0);
    let data = d.finish("_DATA", "DATA", NE_DATA);
    let mut c = Code::new(P, 16)?;
    c.public("main")?;
    let target = Ref::Ordinal {
        module,
        ordinal,
        name,
    };
    Call::pascal(target, &[])
        .public("call_entry")
        .emit(&mut c)?;
    c.public("exit")?;
    exit16(&mut c)?;
    let code = c.finish("_TEXT", "CODE", NE_CODE)?;
    let exe = Exe {
        name: P,
        file_name: "CALL16.EXE",
        description: "CALL16.EXE: one call by ordinal (os2trace testprogs)",
        major: 0xD9,
        tracepoints: Vec::new(),
    };
    link(exe.ne(vec![code, data]))
}
