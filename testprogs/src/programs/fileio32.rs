//! FILEIO32.EXE: FILEIO16's file round trip as a 32-bit LX program with
//! the 32-bit DOSCALLS entry points, `_System` convention.
//!
//! Objects: 1 `CODE32`, 2 `DATA32` (`fname`, `content`, `result`
//! (initially 1), `hfile`, `action`, `count`, `newpos`, then the
//! zero-filled `rbuf` past the stored data), 3 `STACK`.
//!
//! Calls (rel32 import fixups):
//! 1. `DosOpen(fname, &hfile, &action, 0, 0, 0x12, 0x42, NULL)`
//!    (DOSCALLS.273; create if new, replace if it exists; read/write,
//!    deny none). On failure: exit 1, no close.
//! 2. `DosWrite(hfile, content, len, &count)` (DOSCALLS.282).
//! 3. `DosSetFilePtr(hfile, 0, FILE_BEGIN, &newpos)` (DOSCALLS.256).
//! 4. `DosRead(hfile, rbuf, len + 16, &count)` (DOSCALLS.281).
//! 5. `repe cmpsb`; equal → `result` = 0.
//! 6. `DosClose(hfile)` (DOSCALLS.257), then `DosExit(1, result)`.

use iced_x86::code_asm::*;

use super::*;
use crate::Program;
use crate::error::Result;
use crate::link::{TraceSpec, link, lx_base};
use crate::segment::{Code, Data};

/// The file FILEIO32 creates in its current directory.
pub const FILE_NAME: &str = "TESTFILE.D32";
/// What it writes there.
pub const CONTENT: &[u8] =
    b"os2trace FILEIO32: 32-bit DosOpen, DosWrite, DosSetFilePtr, DosRead.\r\n";

pub(crate) fn build() -> Result<Program> {
    const P: &str = "FILEIO32";
    let base = lx_base(2);
    let mut d = Data::new();
    let mut name = FILE_NAME.as_bytes().to_vec();
    name.push(0);
    let fname = base + d.bytes("fname", &name);
    let content = base + d.bytes("content", CONTENT);
    let result = base + d.dword("result", 1);
    let hfile = base + d.dword("hfile", 0);
    let action = base + d.dword("action", 0);
    let count = base + d.dword("count", 0);
    let newpos = base + d.dword("newpos", 0);
    let len = CONTENT.len() as u32;
    let rbuf = base + d.zeroed("rbuf", len + 16);
    let data = d.finish("DATA32", "DATA", LX_DATA);
    let mem = |v: u32| dword_ptr(u64::from(v));
    let imm = |v: u32| v as i32;

    let mut c = Code::new(P, 32)?;
    let mut close = c.label();
    let mut exit = c.label();
    c.public("main")?;
    // DosOpen(fname, &hfile, &action, 0, 0, 0x12, 0x42, NULL)
    let args = [
        Arg::Address("fname", fname),
        Arg::Address("hfile", hfile),
        Arg::Address("action", action),
        Arg::Imm(0),
        Arg::Imm(0),
        Arg::Imm(0x12),
        Arg::Imm(0x42),
        Arg::Imm(0),
    ];
    Call::system(DOSOPEN32, &args)
        .public("call_dosopen")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, exit)?;
    // DosWrite(hfile, content, len, &count)
    c.public("write_file")?;
    let file = Arg::Dword("hfile", hfile);
    let args = [
        file,
        Arg::Address("content", content),
        Arg::Imm(imm(len)),
        Arg::Address("count", count),
    ];
    Call::system(DOSWRITE32, &args)
        .public("call_doswrite")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, close)?;
    fail_unless_var(&mut c, "count", count, imm(len), close)?;
    // DosSetFilePtr(hfile, 0, FILE_BEGIN, &newpos)
    c.public("seek_file")?;
    let args = [
        file,
        Arg::Imm(0),
        Arg::Imm(0),
        Arg::Address("newpos", newpos),
    ];
    Call::system(DOSSETFILEPTR32, &args)
        .public("call_dossetfileptr")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, close)?;
    // DosRead(hfile, rbuf, len + 16, &count)
    c.public("read_file")?;
    let args = [
        file,
        Arg::Address("rbuf", rbuf),
        Arg::Imm(imm(len + 16)),
        Arg::Address("count", count),
    ];
    Call::system(DOSREAD32, &args)
        .public("call_dosread")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, close)?;
    fail_unless_var(&mut c, "count", count, imm(len), close)?;
    // Compare
    c.public("compare")?;
    c.mov_address(esi, "content", content)?;
    c.mov_address(edi, "rbuf", rbuf)?;
    c.op(|a| a.mov(ecx, len))?;
    c.op(|a| a.cld())?;
    c.op(|a| a.repe().cmpsb())?;
    c.op(|a| a.jne(close))?;
    c.data_ref("result")?;
    c.op(|a| a.mov(mem(result), 0))?;
    // DosClose
    c.place(&mut close)?;
    c.public("close_file")?;
    Call::system(DOSCLOSE32, &[file])
        .public("call_dosclose")
        .emit(&mut c)?;
    c.place(&mut exit)?;
    c.public("exit")?;
    c.data_ref("result")?;
    c.op(|a| a.mov(eax, mem(result)))?;
    exit32(&mut c)?;
    let code = c.finish("CODE32", "CODE", LX_CODE)?;

    let exe = Exe {
        name: P,
        file_name: "FILEIO32.EXE",
        description: "FILEIO32.EXE: 32-bit create, write, read back, compare (os2trace testprogs)",
        major: 0xC8,
        tracepoints: vec![
            TraceSpec {
                minor: 1,
                retep: false,
                at: "call_dosopen",
                desc: "FILEIO32 DosOpen file name",
                fmt: &["open %P%S"],
                data: &["ASCIIZ32=(FESP,INDIRECT,64)"],
                rpn: &["Push W,64", "Push ESP", "Push FIF", "Log ARF"],
            },
            TraceSpec {
                minor: 2,
                at: "call_doswrite",
                desc: "FILEIO32 DosWrite arguments",
                fmt: &["hf=%P%D pBuf=%F cb=%D pcb=%F"],
                ..stack_bytes32!(16)
            },
            TraceSpec {
                minor: 3,
                at: "call_dosread",
                desc: "FILEIO32 DosRead arguments",
                fmt: &["hf=%P%D pBuf=%F cb=%D pcb=%F"],
                ..stack_bytes32!(16)
            },
            TraceSpec {
                minor: 4,
                retep: false,
                at: "close_file",
                desc: "FILEIO32 bytes read and result",
                fmt: &["count=%P%D result=%P%D"],
                data: &["MEM32=(.count,DIRECT,4)", "MEM32=(.result,DIRECT,4)"],
                rpn: &[
                    "Push W,4",
                    "Push OXF,2",
                    "Push D,{count}",
                    "Add",
                    "Log MRF",
                    "Push W,4",
                    "Push OXF,2",
                    "Push D,{result}",
                    "Add",
                    "Log MRF",
                ],
            },
            TraceSpec {
                minor: 5,
                retep: false,
                at: "exit",
                desc: "FILEIO32 exit",
                fmt: &["EAX=%D"],
                data: &["REGS=(EAX)"],
                rpn: &["Push EAX", "Log DN,1"],
            },
        ],
    };
    link(exe.lx(code, data))
}
