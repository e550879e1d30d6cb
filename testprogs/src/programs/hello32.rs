//! HELLO32.EXE: a 32-bit LX program that writes a line with DosWrite and
//! exits with DosExit, `_System` convention.
//!
//! Objects: 1 `CODE32`, 2 `DATA32` (`msg`, `written`), 3 `STACK` (16 KiB,
//! zero-filled). EIP = 1:`main`, ESP = 3:0x4000.
//!
//! `main`: `push written; push len; push msg; push 1` (the addresses are
//! off32 fixups), then at `call_doswrite` `call DOSCALLS.282` (a rel32
//! import fixup) and `add esp,16`; EAX ≠ 0 or `written` ≠ len → EAX = 1,
//! else 0; at `exit`: `push eax; push 1; call DOSCALLS.234`.
//!
//! Tracepoints (major 0xC1): 1 at `main` (ESP and the 8 bytes there),
//! 2 at `call_doswrite` (the 16 argument bytes), 3 at `exit` (EAX).

use super::*;
use crate::Program;
use crate::error::Result;
use crate::link::{TraceSpec, link, lx_base};
use crate::segment::{Code, Data};

/// The line HELLO32 writes to standard output.
pub const MESSAGE: &[u8] = b"Hello from HELLO32, a 32-bit OS/2 testprogs program!\r\n";

pub(crate) fn build() -> Result<Program> {
    const P: &str = "HELLO32";
    let base = lx_base(2);
    let mut d = Data::new();
    let msg = base + d.bytes("msg", MESSAGE);
    let written = base + d.dword("written", 0);
    let data = d.finish("DATA32", "DATA", LX_DATA);
    let len = MESSAGE.len() as i32;

    let mut c = Code::new(P, 32)?;
    let mut fails = [c.label()];
    let mut exit = c.label();
    // DosWrite(1, msg, len, &written)
    c.public("main")?;
    let args = [
        Arg::Imm(1),
        Arg::Address("msg", msg),
        Arg::Imm(len),
        Arg::Address("written", written),
    ];
    Call::system(DOSWRITE32, &args)
        .public("call_doswrite")
        .after("after_doswrite")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, fails[0])?;
    fail_unless_var(&mut c, "written", written, len, fails[0])?;
    epilogue(&mut c, &mut fails, &mut exit, 32)?;
    let code = c.finish("CODE32", "CODE", LX_CODE)?;

    let exe = Exe {
        name: P,
        file_name: "HELLO32.EXE",
        description: "HELLO32.EXE: DosWrite and DosExit (os2trace testprogs)",
        major: 0xC1,
        tracepoints: vec![
            TraceSpec {
                minor: 1,
                retep: false,
                at: "main",
                desc: "HELLO32 start stack",
                fmt: &["ESP=%F ret=%P%F hmod=%D"],
                data: &["REGS=(ESP)", "MEM32=(FESP,DIRECT,8)"],
                rpn: &["Push ESP", "Log DN,1", "Push W,8", "Push ESP", "Log MRF"],
            },
            TraceSpec {
                minor: 2,
                at: "call_doswrite",
                desc: "HELLO32 DosWrite arguments",
                fmt: &["hf=%P%D pBuf=%F cb=%D pcbActual=%F"],
                ..stack_bytes32!(16)
            },
            exit_rc32(3, "HELLO32 exit code"),
        ],
    };
    link(exe.lx(code, data))
}
