//! FILEIO16.EXE: a 16-bit NE program that creates a file, writes it, seeks
//! back, reads it, compares, closes it and exits with 0 (equal) or 1.
//!
//! Segments: 1 `_TEXT`, 2 `_DATA` (DGROUP: `fname`, `content`, `result`
//! (initially 1), `hfile`, `action`, `count`, `newpos`, then the
//! zero-filled `rbuf`, which lies past the stored data: the segment's
//! minimum allocation is larger than its file data).
//!
//! Calls, all far pascal through ptr16:16 import fixups:
//! 1. `DosOpen(fname, &hfile, &action, 0L, 0, 0x0012, 0x0042, 0L)`
//!    (DOSCALLS.70; open flags: create if new, replace if it exists; open
//!    mode: read/write, deny none). On failure: exit 1, no close.
//! 2. `DosWrite(hfile, content, len, &count)` (DOSCALLS.138); rc 0 and
//!    count = len expected.
//! 3. `DosChgFilePtr(hfile, 0L, 0, &newpos)` (DOSCALLS.58, FILE_BEGIN).
//! 4. `DosRead(hfile, rbuf, len + 16, &count)` (DOSCALLS.137); rc 0 and
//!    count = len expected.
//! 5. `repe cmpsb` of `content` and `rbuf`; equal → `result` = 0.
//! 6. `DosClose(hfile)` (DOSCALLS.59), then `DosExit(1, result)`.

use iced_x86::code_asm::*;

use super::*;
use crate::Program;
use crate::error::Result;
use crate::link::{TraceSpec, link};
use crate::segment::{Code, Data};

/// The file FILEIO16 creates in its current directory.
pub const FILE_NAME: &str = "TESTFILE.DAT";
/// What it writes there.
pub const CONTENT: &[u8] = b"os2trace FILEIO16: written, read back and compared.\r\n";

pub(crate) fn build() -> Result<Program> {
    const P: &str = "FILEIO16";
    let mut d = Data::new();
    let mut name = FILE_NAME.as_bytes().to_vec();
    name.push(0);
    let fname = d.bytes("fname", &name);
    let content = d.bytes("content", CONTENT);
    let result = d.word("result", 1);
    let hfile = d.word("hfile", 0);
    let action = d.word("action", 0);
    let count = d.word("count", 0);
    let newpos = d.dword("newpos", 0);
    let len = CONTENT.len() as u32;
    let rbuf = d.zeroed("rbuf", len + 16);
    let data = d.finish("_DATA", "DATA", NE_DATA);
    let off = |v: u32| v as i32;
    let mem = |v: u32| word_ptr(u64::from(v));

    let mut c = Code::new(P, 16)?;
    let mut close = c.label();
    let mut exit = c.label();
    c.public("main")?;
    // DosOpen(fname, &hfile, &action, 0L, 0, 0x12, 0x42, 0L)
    let args = [
        Arg::Dgroup(fname),
        Arg::Dgroup(hfile),
        Arg::Dgroup(action),
        Arg::Imm(0),
        Arg::Imm(0),
        Arg::Imm(0),
        Arg::Imm(0x12),
        Arg::Imm(0x42),
        Arg::Imm(0),
        Arg::Imm(0),
    ];
    Call::pascal(DOSOPEN16, &args)
        .public("call_dosopen")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, exit)?;
    // DosWrite(hfile, content, len, &count)
    c.public("write_file")?;
    let file = Arg::Mem(mem(hfile));
    let args = [
        file,
        Arg::Dgroup(content),
        Arg::Imm(off(len)),
        Arg::Dgroup(count),
    ];
    Call::pascal(DOSWRITE16, &args)
        .public("call_doswrite")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, close)?;
    fail_unless_var(&mut c, "count", count, off(len), close)?;
    // DosChgFilePtr(hfile, 0L, FILE_BEGIN, &newpos)
    c.public("seek_file")?;
    let args = [
        file,
        Arg::Imm(0),
        Arg::Imm(0),
        Arg::Imm(0),
        Arg::Dgroup(newpos),
    ];
    Call::pascal(DOSCHGFILEPTR16, &args)
        .public("call_doschgfileptr")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, close)?;
    // DosRead(hfile, rbuf, len + 16, &count)
    c.public("read_file")?;
    let args = [
        file,
        Arg::Dgroup(rbuf),
        Arg::Imm(off(len + 16)),
        Arg::Dgroup(count),
    ];
    Call::pascal(DOSREAD16, &args)
        .public("call_dosread")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, close)?;
    fail_unless_var(&mut c, "count", count, off(len), close)?;
    // Compare
    c.public("compare")?;
    c.op(|a| a.push(ds))?;
    c.op(|a| a.pop(es))?;
    c.op(|a| a.mov(si, off(content)))?;
    c.op(|a| a.mov(di, off(rbuf)))?;
    c.op(|a| a.mov(cx, off(len)))?;
    c.op(|a| a.cld())?;
    c.op(|a| a.repe().cmpsb())?;
    c.op(|a| a.jne(close))?;
    c.op(|a| a.mov(mem(result), 0))?;
    // DosClose
    c.place(&mut close)?;
    c.public("close_file")?;
    Call::pascal(DOSCLOSE16, &[file])
        .public("call_dosclose")
        .emit(&mut c)?;
    c.place(&mut exit)?;
    c.public("exit")?;
    c.op(|a| a.mov(ax, mem(result)))?;
    exit16(&mut c)?;
    let code = c.finish("_TEXT", "CODE", NE_CODE)?;

    let exe = Exe {
        name: P,
        file_name: "FILEIO16.EXE",
        description: "FILEIO16.EXE: create, write, read back, compare (os2trace testprogs)",
        major: 0xC7,
        tracepoints: vec![
            TraceSpec {
                minor: 1,
                retep: false,
                at: "call_dosopen",
                desc: "FILEIO16 DosOpen file name",
                fmt: &["open %P%S"],
                data: &["ASCIIZ=(RSS+SP+22,INDIRECT,64)"],
                rpn: &[
                    "Push W,64",
                    "Push SS",
                    "Push ESP",
                    "Push W,22",
                    "Add",
                    "Push SIS",
                    "Log ARS",
                ],
            },
            TraceSpec {
                minor: 2,
                at: "call_doswrite",
                desc: "FILEIO16 DosWrite arguments",
                fmt: &["pcb=%P%A cb=%W pBuf=%A hf=%W"],
                ..stack_bytes16!(12)
            },
            TraceSpec {
                minor: 3,
                at: "call_dosread",
                desc: "FILEIO16 DosRead arguments",
                fmt: &["pcb=%P%A cb=%W pBuf=%A hf=%W"],
                ..stack_bytes16!(12)
            },
            TraceSpec {
                minor: 4,
                retep: false,
                at: "close_file",
                desc: "FILEIO16 bytes read and result",
                fmt: &["count=%P%W result=%P%W"],
                data: &["MEM=(.count,DIRECT,2)", "MEM=(.result,DIRECT,2)"],
                rpn: &[
                    "Push W,2",
                    "Push OXS,2",
                    "Push W,{count}",
                    "Log MRS",
                    "Push W,2",
                    "Push OXS,2",
                    "Push W,{result}",
                    "Log MRS",
                ],
            },
            TraceSpec {
                minor: 5,
                retep: false,
                at: "exit",
                desc: "FILEIO16 exit",
                fmt: &["AX=%W"],
                data: &["REGS=(AX)"],
                rpn: &["Push EAX", "Log WN,1"],
            },
        ],
    };
    link(exe.ne(vec![code, data]))
}
