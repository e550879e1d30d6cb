//! TPDLL16.DLL, a 16-bit NE DLL, and DLLCAL16.EXE, which calls it.
//!
//! TPDLL16 (segments 1 `_TEXT`, 2 `_DATA`; module flags 0x8001):
//! - `DLLINIT` (CS:IP, not exported): loads DS from a sel16 fixup, stores
//!   AX (the module handle, as OS/2 1.x passes it; only recorded) in
//!   `hmod`, increments `initcount`, returns AX = 1 with `retf`.
//! - ordinal 1 `ADDNUMS(USHORT a, USHORT b)`: AX = a + b; `retf 4`.
//! - ordinal 2 `PUTMSG(PSZ far)`: measures the string with `repne scasb`
//!   and writes it to handle 1 with DOSCALLS.138 (DosWrite, its own
//!   `written` word in its DGROUP); AX = DosWrite's rc; `retf 4`.
//! - ordinal 3 `GETCOUNT()`: AX = `initcount` (1 after one load); `retf`.
//!
//! DLLCAL16 (segments 1 `_TEXT`, 2 `_DATA`) imports PUTMSG and GETCOUNT by
//! name and ADDNUMS by ordinal (TPDLL16.1), all as ptr16:16 fixups.

use iced_x86::code_asm::*;
use loader::Format;

use super::dllcal::{Dll, call_dll};
use super::*;
use crate::Program;
use crate::error::Result;
use crate::link::{Export, Spec, TraceSpec, link};
use crate::segment::{Code, Data};

/// The line DLLCAL16 passes to PUTMSG (without its terminating NUL).
pub const GREETING: &[u8] = b"DLLCAL16 calls TPDLL16: PUTMSG by name, ADDNUMS by ordinal\r\n";

pub(crate) fn build_dll() -> Result<Program> {
    const P: &str = "TPDLL16";
    let mut d = Data::new();
    let hmod = d.word("hmod", 0);
    let initcount = d.word("initcount", 0);
    let written = d.word("written", 0);
    let data = d.finish("_DATA", "DATA", NE_DATA);

    let mut c = Code::new(P, 16)?;
    // DLLINIT: far, AX = module handle; returns AX = 1.
    c.public("DLLINIT")?;
    c.op(|a| a.push(ds))?;
    c.mov_selector(bx, 2)?;
    c.op(|a| a.mov(ds, bx))?;
    c.op(|a| a.mov(word_ptr(u64::from(hmod)), ax))?;
    c.local("init_count")?;
    c.op(|a| a.inc(word_ptr(u64::from(initcount))))?;
    c.op(|a| a.pop(ds))?;
    c.op(|a| a.mov(ax, 1))?;
    c.op(|a| a.retf())?;

    // ADDNUMS(a, b): [bp+8] = a, [bp+6] = b.
    routine16(&mut c, "ADDNUMS", Ret16::Far(4), |c| {
        c.op(|a| a.mov(ax, word_ptr(bp + 8)))?;
        c.op(|a| a.add(ax, word_ptr(bp + 6)))
    })?;

    // PUTMSG(psz): [bp+8]:[bp+6] = the string.
    routine16(&mut c, "PUTMSG", Ret16::Far(4), |c| {
        c.op(|a| a.push(ds))?;
        c.op(|a| a.push(di))?;
        c.mov_selector(ax, 2)?;
        c.op(|a| a.mov(ds, ax))?;
        c.local("putmsg_strlen")?;
        c.op(|a| a.les(di, dword_ptr(bp + 6)))?;
        c.op(|a| a.mov(cx, 0xFFFF))?;
        c.op(|a| a.xor(al, al))?;
        c.op(|a| a.cld())?;
        c.op(|a| a.repne().scasb())?;
        c.op(|a| a.not(cx))?;
        c.op(|a| a.dec(cx))?;
        let args = [
            Arg::Imm(1),
            Arg::Mem(word_ptr(bp + 8)),
            Arg::Mem(word_ptr(bp + 6)),
            Arg::Reg16(cx),
            Arg::Dgroup(written),
        ];
        Call::pascal(DOSWRITE16, &args)
            .local("putmsg_doswrite")
            .emit(c)?;
        c.op(|a| a.pop(di))?;
        c.op(|a| a.pop(ds))
    })?;

    // GETCOUNT()
    c.public("GETCOUNT")?;
    c.op(|a| a.push(ds))?;
    c.mov_selector(ax, 2)?;
    c.op(|a| a.mov(ds, ax))?;
    c.op(|a| a.mov(ax, word_ptr(u64::from(initcount))))?;
    c.op(|a| a.pop(ds))?;
    c.op(|a| a.retf())?;
    let code = c.finish("_TEXT", "CODE", NE_CODE)?;

    link(Spec {
        format: Format::Ne,
        name: P,
        file_name: "TPDLL16.DLL",
        description: "TPDLL16.DLL: exports and init routine (os2trace testprogs)",
        flags: NE_LIBRARY,
        segments: vec![code, data],
        exports: vec![
            Export {
                ordinal: 1,
                symbol: "ADDNUMS",
                name: "ADDNUMS",
            },
            Export {
                ordinal: 2,
                symbol: "PUTMSG",
                name: "PUTMSG",
            },
            Export {
                ordinal: 3,
                symbol: "GETCOUNT",
                name: "GETCOUNT",
            },
        ],
        start: "DLLINIT",
        stack: None,
        stack_size: 0,
        auto_data: Some(2),
        major: 0xC2,
        tracepoints: vec![
            TraceSpec {
                minor: 1,
                retep: false,
                at: "DLLINIT",
                desc: "TPDLL16 init: module handle",
                fmt: &["hmod AX=%W DS=%W"],
                data: &["REGS=(AX,DS)"],
                rpn: &["Push DS", "Push EAX", "Log WN,2"],
            },
            TraceSpec {
                minor: 2,
                at: "ADDNUMS",
                desc: "TPDLL16 ADDNUMS arguments",
                fmt: &["ret=%P%A b=%W a=%W"],
                ..stack_bytes16!(8)
            },
            TraceSpec {
                minor: 3,
                retep: false,
                at: "putmsg_doswrite",
                desc: "TPDLL16 PUTMSG string",
                fmt: &["length CX=%W", "string %P%S"],
                data: &["REGS=(CX)", "ASCIIZ=(RSS+SP+6,INDIRECT,80)"],
                rpn: &[
                    "Push ECX",
                    "Log WN,1",
                    "Push W,80",
                    "Push SS",
                    "Push ESP",
                    "Push W,6",
                    "Add",
                    "Push SIS",
                    "Log ARS",
                ],
            },
            TraceSpec {
                minor: 4,
                retep: false,
                at: "GETCOUNT",
                desc: "TPDLL16 GETCOUNT entered",
                fmt: &["CS=%W"],
                data: &["REGS=(CS)"],
                rpn: &["Push CS", "Log WN,1"],
            },
        ],
    })
}

pub(crate) fn build_exe() -> Result<Program> {
    const P: &str = "DLLCAL16";
    let mut d = Data::new();
    let mut greeting = GREETING.to_vec();
    greeting.push(0);
    let greet = d.bytes("greeting", &greeting);
    let data = d.finish("_DATA", "DATA", NE_DATA);

    let mut c = Code::new(P, 16)?;
    let mut fails = [c.label(), c.label(), c.label()];
    let mut exit = c.label();
    let tpdll16 = Dll {
        module: "TPDLL16",
        putmsg: "PUTMSG",
        addnums: "ADDNUMS",
        getcount: "GETCOUNT",
        after_addnums: "check_sum",
    };
    call_dll(&mut c, &tpdll16, Arg::Dgroup(greet), &fails)?;
    epilogue(&mut c, &mut fails, &mut exit, 16)?;
    let code = c.finish("_TEXT", "CODE", NE_CODE)?;

    let exe = Exe {
        name: P,
        file_name: "DLLCAL16.EXE",
        description: "DLLCAL16.EXE: calls TPDLL16 (os2trace testprogs)",
        major: 0xC4,
        tracepoints: vec![
            TraceSpec {
                minor: 1,
                at: "call_addnums",
                desc: "DLLCAL16 ADDNUMS arguments",
                fmt: &["b=%P%W a=%W"],
                ..stack_bytes16!(4)
            },
            TraceSpec {
                minor: 2,
                retep: false,
                at: "check_sum",
                desc: "DLLCAL16 ADDNUMS result",
                fmt: &["sum=%W"],
                data: &["REGS=(AX)"],
                rpn: &["Push EAX", "Log WN,1"],
            },
            exit_rc16(3, "DLLCAL16 exit code"),
        ],
    };
    link(exe.ne(vec![code, data]))
}
