//! MSGVIO16.EXE and MSG32.EXE: console output through the other system
//! DLLs real OS/2 programs import (see the samples' hello16.exe and
//! hello.exe): MSG's DosPutMessage and VIOCALLS' VioWrtTTY.
//!
//! MSGVIO16 (NE; segments 1 `_TEXT`, 2 `_DATA`):
//! 1. `DosPutMessage(1, len, DS:msg)` (MSG.1, far pascal); rc ≠ 0 → exit 1;
//! 2. `VioWrtTTY(DS:vio, len, 0)` (VIOCALLS.19); rc ≠ 0 → exit 2;
//! 3. `DosExit(1, 0)` (DOSCALLS.5).
//!
//! MSG32 (LX; objects 1 `CODE32`, 2 `DATA32`, 3 `STACK`):
//! 1. `DosPutMessage(1, len, msg)` (MSG.5, `_System`, the same call
//!    sequence as the sample hello.exe); rc ≠ 0 → exit 1;
//! 2. `DosExit(1, 0)` (DOSCALLS.234).

use super::*;
use crate::Program;
use crate::error::Result;
use crate::link::{TraceSpec, link, lx_base};
use crate::segment::{Code, Data};

/// What MSGVIO16 writes with DosPutMessage.
pub const MESSAGE16: &[u8] = b"MSGVIO16: DosPutMessage through MSG.1\r\n";
/// What MSGVIO16 writes with VioWrtTTY.
pub const VIO_TEXT: &[u8] = b"MSGVIO16: VioWrtTTY through VIOCALLS.19\r\n";
/// What MSG32 writes with DosPutMessage.
pub const MESSAGE32: &[u8] = b"MSG32: DosPutMessage through MSG.5\r\n";

pub(crate) fn build_msgvio16() -> Result<Program> {
    const P: &str = "MSGVIO16";
    let mut d = Data::new();
    let msg = d.bytes("msg", MESSAGE16);
    let vio = d.bytes("vio", VIO_TEXT);
    let data = d.finish("_DATA", "DATA", NE_DATA);

    let mut c = Code::new(P, 16)?;
    let mut fails = [c.label(), c.label()];
    let mut exit = c.label();
    c.public("main")?;
    let args = [
        Arg::Imm(1),
        Arg::Imm(MESSAGE16.len() as i32),
        Arg::Dgroup(msg),
    ];
    Call::pascal(DOSPUTMESSAGE16, &args)
        .public("call_dosputmessage")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, fails[0])?;
    let args = [
        Arg::Dgroup(vio),
        Arg::Imm(VIO_TEXT.len() as i32),
        Arg::Imm(0),
    ];
    Call::pascal(VIOWRTTTY16, &args)
        .public("call_viowrttty")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, fails[1])?;
    epilogue(&mut c, &mut fails, &mut exit, 16)?;
    let code = c.finish("_TEXT", "CODE", NE_CODE)?;

    let exe = Exe {
        name: P,
        file_name: "MSGVIO16.EXE",
        description: "MSGVIO16.EXE: DosPutMessage and VioWrtTTY (os2trace testprogs)",
        major: 0xC9,
        tracepoints: vec![
            TraceSpec {
                minor: 1,
                at: "call_dosputmessage",
                desc: "MSGVIO16 DosPutMessage arguments",
                fmt: &["msg=%P%A cb=%W hf=%W"],
                ..stack_bytes16!(8)
            },
            TraceSpec {
                minor: 2,
                retep: false,
                at: "call_viowrttty",
                desc: "MSGVIO16 VioWrtTTY text",
                fmt: &["text %P%S"],
                data: &["ASCIIZ=(RSS+SP+4,INDIRECT,16)"],
                rpn: &[
                    "Push W,16",
                    "Push SS",
                    "Push ESP",
                    "Push W,4",
                    "Add",
                    "Push SIS",
                    "Log ARS",
                ],
            },
            exit_rc16(3, "MSGVIO16 exit code"),
        ],
    };
    link(exe.ne(vec![code, data]))
}

pub(crate) fn build_msg32() -> Result<Program> {
    const P: &str = "MSG32";
    let base = lx_base(2);
    let mut d = Data::new();
    let msg = base + d.bytes("msg", MESSAGE32);
    let data = d.finish("DATA32", "DATA", LX_DATA);

    let mut c = Code::new(P, 32)?;
    let mut fails = [c.label()];
    let mut exit = c.label();
    c.public("main")?;
    let args = [
        Arg::Imm(1),
        Arg::Imm(MESSAGE32.len() as i32),
        Arg::Address("msg", msg),
    ];
    Call::system(DOSPUTMESSAGE32, &args)
        .public("call_dosputmessage")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, fails[0])?;
    epilogue(&mut c, &mut fails, &mut exit, 32)?;
    let code = c.finish("CODE32", "CODE", LX_CODE)?;

    let exe = Exe {
        name: P,
        file_name: "MSG32.EXE",
        description: "MSG32.EXE: 32-bit DosPutMessage (os2trace testprogs)",
        major: 0xCA,
        tracepoints: vec![
            TraceSpec {
                minor: 1,
                at: "call_dosputmessage",
                desc: "MSG32 DosPutMessage arguments",
                fmt: &["hf=%P%D cb=%D msg=%F"],
                ..stack_bytes32!(12)
            },
            exit_rc32(2, "MSG32 exit code"),
        ],
    };
    link(exe.lx(code, data))
}
