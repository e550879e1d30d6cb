//! HELLO16.EXE: a 16-bit NE program that writes a line with DosWrite and
//! exits with DosExit.
//!
//! Segments: 1 `_TEXT` (code), 2 `_DATA` (DGROUP: `msg`, `written`).
//! Header: CS:IP = 1:`main`, SS:SP = 2:(size of `_DATA` + 0x1000), stack
//! size 0x1000, automatic data segment 2.
//!
//! `main`: `push 1; push ds; push msg; push len; push ds; push written`,
//! then at `call_doswrite` `call far DOSCALLS.138` (DosWrite); AX ≠ 0 or
//! `written` ≠ len → AX = 1, else AX = 0; at `exit`: `push 1; push ax;
//! call far DOSCALLS.5` (DosExit(EXIT_PROCESS, AX)).
//!
//! Tracepoints (major 0xC0): 1 at `main` (AX, BX, CX), 2 at
//! `call_doswrite` (the 12 argument bytes at SS:SP), 3 at `exit` (AX).

use super::*;
use crate::Program;
use crate::error::Result;
use crate::link::{TraceSpec, link};
use crate::segment::{Code, Data};

/// The line HELLO16 writes to standard output.
pub const MESSAGE: &[u8] = b"Hello from HELLO16, a 16-bit OS/2 testprogs program!\r\n";

pub(crate) fn build() -> Result<Program> {
    const P: &str = "HELLO16";
    let mut d = Data::new();
    let msg = d.bytes("msg", MESSAGE);
    let written = d.word("written", 0);
    let data = d.finish("_DATA", "DATA", NE_DATA);
    let len = MESSAGE.len() as i32;

    let mut c = Code::new(P, 16)?;
    let mut fails = [c.label()];
    let mut exit = c.label();
    // DosWrite(1, DS:msg, len, DS:written)
    c.public("main")?;
    let args = [
        Arg::Imm(1),
        Arg::Dgroup(msg),
        Arg::Imm(len),
        Arg::Dgroup(written),
    ];
    Call::pascal(DOSWRITE16, &args)
        .public("call_doswrite")
        .after("after_doswrite")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, fails[0])?;
    fail_unless_var(&mut c, "written", written, len, fails[0])?;
    epilogue(&mut c, &mut fails, &mut exit, 16)?;
    let code = c.finish("_TEXT", "CODE", NE_CODE)?;

    let exe = Exe {
        name: P,
        file_name: "HELLO16.EXE",
        description: "HELLO16.EXE: DosWrite and DosExit (os2trace testprogs)",
        major: 0xC0,
        tracepoints: vec![
            TraceSpec {
                minor: 1,
                retep: false,
                at: "main",
                desc: "HELLO16 start registers",
                fmt: &["env sel AX=%W cmdline BX=%W DGROUP size CX=%W"],
                data: &["REGS=(AX,BX,CX)"],
                rpn: &["Push ECX", "Push EBX", "Push EAX", "Log WN,3"],
            },
            TraceSpec {
                minor: 2,
                at: "call_doswrite",
                desc: "HELLO16 DosWrite arguments",
                fmt: &["pcbWritten=%P%A cb=%W pBuf=%A hf=%W"],
                ..stack_bytes16!(12)
            },
            exit_rc16(3, "HELLO16 exit code"),
        ],
    };
    link(exe.ne(vec![code, data]))
}
