//! ARGS16.EXE and ARGS32.EXE: programs that read their start state and
//! write their command-line arguments, one line, to standard output.
//!
//! The command line lies in the environment segment as OS/2 builds it:
//! the program name, NUL, the arguments, NUL, NUL. Both programs skip the
//! name with `repne scasb`, measure the arguments, and write them and a
//! CR LF with DosWrite; exit 0, or 1 if a DosWrite fails.
//!
//! ARGS16 (NE; segments 1 `_TEXT`, 2 `_DATA`): OS/2 1.x start registers,
//! AX = the environment selector and BX = the offset of the command line
//! in it (`main` copies them to ES:DI first).
//!
//! ARGS32 (LX; objects 1 `CODE32`, 2 `DATA32`, 3 `STACK`): the OS/2 2.x
//! start stack, `[esp+4]` module handle, `[esp+8]` 0, `[esp+12]` the
//! environment, `[esp+16]` the command line (`main` loads EDI from it).

use iced_x86::code_asm::*;

use super::*;
use crate::Program;
use crate::error::Result;
use crate::link::{TraceSpec, link, lx_base};
use crate::segment::{Code, Data};

pub(crate) fn build_args16() -> Result<Program> {
    const P: &str = "ARGS16";
    let mut d = Data::new();
    let crlf = d.bytes("crlf", b"\r\n");
    let written = d.word("written", 0);
    let data = d.finish("_DATA", "DATA", NE_DATA);

    let mut c = Code::new(P, 16)?;
    let mut fails = [c.label()];
    let mut exit = c.label();
    c.public("main")?;
    c.op(|a| a.mov(es, ax))?;
    c.op(|a| a.mov(di, bx))?;
    c.op(|a| a.cld())?;
    c.op(|a| a.xor(al, al))?;
    c.op(|a| a.mov(cx, 0xFFFF))?;
    c.public("skip_name")?;
    c.op(|a| a.repne().scasb())?;
    c.op(|a| a.mov(si, di))?;
    c.op(|a| a.mov(cx, 0xFFFF))?;
    c.op(|a| a.repne().scasb())?;
    c.op(|a| a.not(cx))?;
    c.op(|a| a.dec(cx))?;
    let args = [
        Arg::Imm(1),
        Arg::Seg(es),
        Arg::Reg16(si),
        Arg::Reg16(cx),
        Arg::Dgroup(written),
    ];
    Call::pascal(DOSWRITE16, &args)
        .public("call_write_args")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, fails[0])?;
    let args = [
        Arg::Imm(1),
        Arg::Dgroup(crlf),
        Arg::Imm(2),
        Arg::Dgroup(written),
    ];
    Call::pascal(DOSWRITE16, &args).emit(&mut c)?;
    fail_unless_ok(&mut c, fails[0])?;
    epilogue(&mut c, &mut fails, &mut exit, 16)?;
    let code = c.finish("_TEXT", "CODE", NE_CODE)?;

    let exe = Exe {
        name: P,
        file_name: "ARGS16.EXE",
        description: "ARGS16.EXE: writes its arguments (os2trace testprogs)",
        major: 0xCB,
        tracepoints: vec![
            TraceSpec {
                minor: 1,
                retep: false,
                at: "main",
                desc: "ARGS16 start registers",
                fmt: &["env AX=%W cmdline BX=%W"],
                data: &["REGS=(AX,BX)"],
                rpn: &["Push EBX", "Push EAX", "Log WN,2"],
            },
            TraceSpec {
                minor: 2,
                retep: false,
                at: "skip_name",
                desc: "ARGS16 program name",
                fmt: &["name %P%S"],
                data: &["ASCIIZ=(RES+DI,DIRECT,64)"],
                rpn: &["Push W,64", "Push ES", "Push EDI", "Log ARS"],
            },
            TraceSpec {
                minor: 3,
                retep: false,
                at: "call_write_args",
                desc: "ARGS16 arguments",
                fmt: &["length CX=%W", "args %P%S"],
                data: &["REGS=(CX)", "ASCIIZ=(RES+SI,DIRECT,64)"],
                rpn: &[
                    "Push ECX",
                    "Log WN,1",
                    "Push W,64",
                    "Push ES",
                    "Push ESI",
                    "Log ARS",
                ],
            },
        ],
    };
    link(exe.ne(vec![code, data]))
}

pub(crate) fn build_args32() -> Result<Program> {
    const P: &str = "ARGS32";
    let base = lx_base(2);
    let mut d = Data::new();
    let crlf = base + d.bytes("crlf", b"\r\n");
    let written = base + d.dword("written", 0);
    let data = d.finish("DATA32", "DATA", LX_DATA);

    let mut c = Code::new(P, 32)?;
    let mut fails = [c.label()];
    let mut exit = c.label();
    c.public("main")?;
    c.op(|a| a.mov(edi, dword_ptr(esp + 16)))?;
    c.op(|a| a.cld())?;
    c.op(|a| a.xor(eax, eax))?;
    c.op(|a| a.mov(ecx, -1))?;
    c.public("skip_name")?;
    c.op(|a| a.repne().scasb())?;
    c.op(|a| a.mov(esi, edi))?;
    c.op(|a| a.mov(ecx, -1))?;
    c.op(|a| a.repne().scasb())?;
    c.op(|a| a.not(ecx))?;
    c.op(|a| a.dec(ecx))?;
    let args = [
        Arg::Imm(1),
        Arg::Reg32(esi),
        Arg::Reg32(ecx),
        Arg::Address("written", written),
    ];
    Call::system(DOSWRITE32, &args)
        .public("call_write_args")
        .emit(&mut c)?;
    fail_unless_ok(&mut c, fails[0])?;
    let args = [
        Arg::Imm(1),
        Arg::Address("crlf", crlf),
        Arg::Imm(2),
        Arg::Address("written", written),
    ];
    Call::system(DOSWRITE32, &args).emit(&mut c)?;
    fail_unless_ok(&mut c, fails[0])?;
    epilogue(&mut c, &mut fails, &mut exit, 32)?;
    let code = c.finish("CODE32", "CODE", LX_CODE)?;

    let exe = Exe {
        name: P,
        file_name: "ARGS32.EXE",
        description: "ARGS32.EXE: writes its arguments (os2trace testprogs)",
        major: 0xCC,
        tracepoints: vec![
            TraceSpec {
                minor: 1,
                at: "main",
                desc: "ARGS32 start stack",
                fmt: &["ret=%P%F hmod=%D 0=%D env=%F cmdline=%F"],
                ..stack_bytes32!(20)
            },
            TraceSpec {
                minor: 2,
                retep: false,
                at: "skip_name",
                desc: "ARGS32 program name",
                fmt: &["name %P%S"],
                data: &["ASCIIZ32=(FEDI,DIRECT,64)"],
                rpn: &["Push W,64", "Push EDI", "Log ARF"],
            },
            TraceSpec {
                minor: 3,
                retep: false,
                at: "call_write_args",
                desc: "ARGS32 arguments",
                fmt: &["length ECX=%D", "args %P%S"],
                data: &["REGS=(ECX)", "ASCIIZ32=(FESI,DIRECT,64)"],
                rpn: &["Push ECX", "Log DN,1", "Push W,64", "Push ESI", "Log ARF"],
            },
        ],
    };
    link(exe.lx(code, data))
}
