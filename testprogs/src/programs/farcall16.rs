//! FARCAL16.EXE: far calls through 16:16 pointers between two code
//! segments of a 16-bit NE program.
//!
//! Segments: 1 `_TEXT` (code: `main`, `TWICE`), 2 `FAR_TEXT` (code:
//! `FARADD`, `FARSQUARE`, `QUAD`, `PRINTFAR`), 3 `_DATA` (DGROUP: `msg`,
//! `msgptr` = 16:16 pointer to `msg`, `fntab` = 16:16 pointers to
//! `FARSQUARE` and `QUAD`, `written`). Every routine is far pascal (the
//! callee pops its arguments with `retf n`).
//!
//! `main` calls:
//! 1. `FARADD(7, 5)` with a direct `call far` (a ptr16:16 internal fixup
//!    to 2:FARADD); 12 expected, else exit 1;
//! 2. `FARSQUARE(12)` indirectly with `call far [fntab]` (the pointer in
//!    DGROUP carries the fixup), then `QUAD(144)` with `call far
//!    [fntab+4]`; QUAD calls back into segment 1 twice (`call far TWICE`),
//!    so 576 is expected, else exit 2;
//! 3. `PRINTFAR(ES:BX, len)` after `les bx, [msgptr]`; PRINTFAR writes the
//!    far buffer with DOSCALLS.138; rc 0 expected, else exit 3.

use iced_x86::code_asm::*;

use super::*;
use crate::Program;
use crate::error::Result;
use crate::link::{TraceSpec, link};
use crate::segment::{Code, Data};

/// The line FARCAL16 writes through a far pointer.
pub const MESSAGE: &[u8] = b"FARCAL16: far calls through 16:16 pointers work\r\n";

pub(crate) fn build() -> Result<Program> {
    const P: &str = "FARCAL16";
    let mut d = Data::new();
    let _ = d.bytes("msg", MESSAGE);
    let msgptr = d.far_ptr(Some("msgptr"), "msg");
    let fntab = d.far_ptr(Some("fntab"), "FARSQUARE");
    let _ = d.far_ptr(None, "QUAD");
    let written = d.word("written", 0);
    let data = d.finish("_DATA", "DATA", NE_DATA);
    let len = MESSAGE.len() as i32;

    // Segment 1: main and TWICE.
    let mut c = Code::new(P, 16)?;
    let mut fails = [c.label(), c.label(), c.label()];
    let mut exit = c.label();
    c.public("main")?;
    Call::pascal(Ref::Symbol("FARADD"), &[Arg::Imm(7), Arg::Imm(5)])
        .public("call_faradd")
        .emit(&mut c)?;
    fail_unless_returned(&mut c, 12, fails[0])?;
    c.op(|a| a.push(ax))?;
    c.public("call_square")?;
    c.op(|a| a.call(dword_ptr(u64::from(fntab))))?;
    c.op(|a| a.push(ax))?;
    c.public("call_quad")?;
    c.op(|a| a.call(dword_ptr(u64::from(fntab + 4))))?;
    c.local("check_quad")?;
    fail_unless_returned(&mut c, 576, fails[1])?;
    c.op(|a| a.les(bx, dword_ptr(u64::from(msgptr))))?;
    let args = [Arg::Seg(es), Arg::Reg16(bx), Arg::Imm(len)];
    Call::pascal(Ref::Symbol("PRINTFAR"), &args)
        .public("call_printfar")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, fails[2])?;
    epilogue(&mut c, &mut fails, &mut exit, 16)?;
    // TWICE(x): AX = 2x.
    routine16(&mut c, "TWICE", Ret16::Far(2), |c| {
        c.op(|a| a.mov(ax, word_ptr(bp + 6)))?;
        c.op(|a| a.add(ax, ax))
    })?;
    let text = c.finish("_TEXT", "CODE", NE_CODE)?;

    // Segment 2: the far routines.
    let mut c = Code::new(P, 16)?;
    // FARADD(a, b): AX = a + b.
    routine16(&mut c, "FARADD", Ret16::Far(4), |c| {
        c.op(|a| a.mov(ax, word_ptr(bp + 8)))?;
        c.op(|a| a.add(ax, word_ptr(bp + 6)))
    })?;
    // FARSQUARE(x): AX = x * x (DX is clobbered).
    routine16(&mut c, "FARSQUARE", Ret16::Far(2), |c| {
        c.op(|a| a.mov(ax, word_ptr(bp + 6)))?;
        c.op(|a| a.mul(ax))
    })?;
    // QUAD(x): TWICE(TWICE(x)), calling back into segment 1.
    routine16(&mut c, "QUAD", Ret16::Far(2), |c| {
        Call::pascal(Ref::Symbol("TWICE"), &[Arg::Mem(word_ptr(bp + 6))])
            .public("quad_call1")
            .emit(c)?;
        Call::pascal(Ref::Symbol("TWICE"), &[Arg::Reg16(ax)])
            .local("quad_call2")
            .emit(c)
    })?;
    // PRINTFAR(PVOID far buf, USHORT len): DosWrite(1, buf, len, &written).
    routine16(&mut c, "PRINTFAR", Ret16::Far(6), |c| {
        let args = [
            Arg::Imm(1),
            Arg::Mem(word_ptr(bp + 10)),
            Arg::Mem(word_ptr(bp + 8)),
            Arg::Mem(word_ptr(bp + 6)),
            Arg::Dgroup(written),
        ];
        Call::pascal(DOSWRITE16, &args)
            .local("printfar_doswrite")
            .emit(c)
    })?;
    let far_text = c.finish("FAR_TEXT", "CODE", NE_CODE)?;

    let exe = Exe {
        name: P,
        file_name: "FARCAL16.EXE",
        description: "FARCAL16.EXE: far calls through 16:16 pointers (os2trace testprogs)",
        major: 0xC6,
        tracepoints: vec![
            TraceSpec {
                minor: 1,
                at: "FARADD",
                desc: "FARCAL16 FARADD entered",
                fmt: &["return %P%A b=%W a=%W"],
                ..stack_bytes16!(8)
            },
            TraceSpec {
                minor: 2,
                retep: false,
                at: "call_square",
                desc: "FARCAL16 pointer in fntab",
                fmt: &["FARSQUARE at %P%A"],
                data: &["MEM=(.fntab,DIRECT,4)"],
                rpn: &["Push W,4", "Push OXS,3", "Push W,{fntab}", "Log MRS"],
            },
            TraceSpec {
                minor: 3,
                at: "TWICE",
                desc: "FARCAL16 TWICE from QUAD",
                fmt: &["return %P%A x=%W"],
                ..stack_bytes16!(6)
            },
            TraceSpec {
                minor: 4,
                retep: false,
                at: "printfar_doswrite",
                desc: "FARCAL16 PRINTFAR buffer",
                fmt: &["buffer starts %P%D %D %D %D"],
                data: &["MEM=(RSS+SP+6,INDIRECT,16)"],
                rpn: &[
                    "Push W,16",
                    "Push SS",
                    "Push ESP",
                    "Push W,6",
                    "Add",
                    "Push SIS",
                    "Log MRS",
                ],
            },
            exit_rc16(5, "FARCAL16 exit code"),
        ],
    };
    link(exe.ne(vec![text, far_text, data]))
}
