//! TPDLL32.DLL, a 32-bit LX DLL, and DLLCAL32.EXE, which calls it.
//!
//! TPDLL32 (objects 1 `CODE32`, 2 `DATA32`; module flags 0x8000):
//! - `_DLL_InitTerm(hmod, flag)` (EIP, not exported, `_System`): stores
//!   hmod in `hmod`; when flag is 0 (init) increments `initcount`;
//!   returns EAX = 1.
//! - ordinal 1 `AddNums(a, b)`: EAX = a + b.
//! - ordinal 2 `PutMsg(psz)`: measures the string with `repne scasb` and
//!   writes it to handle 1 with DOSCALLS.282 (DosWrite); EAX = its rc.
//! - ordinal 3 `GetCount()`: EAX = `initcount`.
//!
//! All `_System`: arguments right to left, the caller pops. Data accesses
//! are absolute addresses with off32 fixups.
//!
//! Tracepoints (major 0xC3): 1 `_DLL_InitTerm` (its arguments), 2
//! `AddNums` (its arguments), 3 PutMsg's DosWrite call (length and
//! string), 4 `GetCount` (EIP), and 5 and 6 at the `ret` of AddNums and
//! PutMsg (EAX), which the TSF names with `RETEP=RET`.
//!
//! DLLCAL32 (objects 1 `CODE32`, 2 `DATA32`, 3 `STACK`) imports PutMsg and
//! GetCount by name and AddNums by ordinal (TPDLL32.1), all as rel32
//! fixups of `call` instructions.

use iced_x86::code_asm::*;
use loader::Format;

use super::dllcal::{Dll, call_dll};
use super::*;
use crate::Program;
use crate::error::Result;
use crate::link::{Export, Spec, TraceSpec, link, lx_base};
use crate::segment::{Code, Data};

/// The line DLLCAL32 passes to PutMsg (without its terminating NUL).
pub const GREETING: &[u8] = b"DLLCAL32 calls TPDLL32: PutMsg by name, AddNums by ordinal\r\n";

pub(crate) fn build_dll() -> Result<Program> {
    const P: &str = "TPDLL32";
    let base = lx_base(2);
    let mut d = Data::new();
    let hmod = base + d.dword("hmod", 0);
    let initcount = base + d.dword("initcount", 0);
    let written = base + d.dword("written", 0);
    let data = d.finish("DATA32", "DATA", LX_DATA);

    let mut c = Code::new(P, 32)?;
    let mut done = c.label();
    c.public("_DLL_InitTerm")?;
    c.op(|a| a.mov(eax, dword_ptr(esp + 4)))?;
    c.data_ref("hmod")?;
    c.op(|a| a.mov(dword_ptr(u64::from(hmod)), eax))?;
    c.op(|a| a.cmp(dword_ptr(esp + 8), 0))?;
    c.op(|a| a.jne(done))?;
    c.local("init_count")?;
    c.data_ref("initcount")?;
    c.op(|a| a.inc(dword_ptr(u64::from(initcount))))?;
    c.place(&mut done)?;
    c.op(|a| a.mov(eax, 1))?;
    c.op(|a| a.ret())?;

    c.public("AddNums")?;
    c.op(|a| a.mov(eax, dword_ptr(esp + 4)))?;
    c.op(|a| a.add(eax, dword_ptr(esp + 8)))?;
    c.local("addnums_ret")?;
    c.op(|a| a.ret())?;

    c.public("PutMsg")?;
    c.op(|a| a.push(ebp))?;
    c.op(|a| a.mov(ebp, esp))?;
    c.op(|a| a.push(edi))?;
    c.op(|a| a.mov(edi, dword_ptr(ebp + 8)))?;
    c.op(|a| a.xor(eax, eax))?;
    c.op(|a| a.mov(ecx, -1))?;
    c.op(|a| a.cld())?;
    c.op(|a| a.repne().scasb())?;
    c.op(|a| a.not(ecx))?;
    c.op(|a| a.dec(ecx))?;
    let args = [
        Arg::Imm(1),
        Arg::Mem(dword_ptr(ebp + 8)),
        Arg::Reg32(ecx),
        Arg::Address("written", written),
    ];
    Call::system(DOSWRITE32, &args)
        .local("putmsg_doswrite")
        .emit(&mut c)?;
    c.op(|a| a.pop(edi))?;
    c.op(|a| a.pop(ebp))?;
    c.local("putmsg_ret")?;
    c.op(|a| a.ret())?;

    c.public("GetCount")?;
    c.data_ref("initcount")?;
    c.op(|a| a.mov(eax, dword_ptr(u64::from(initcount))))?;
    c.op(|a| a.ret())?;
    let code = c.finish("CODE32", "CODE", LX_CODE)?;

    link(Spec {
        format: Format::Lx,
        name: P,
        file_name: "TPDLL32.DLL",
        description: "TPDLL32.DLL: exports and init routine (os2trace testprogs)",
        flags: LX_LIBRARY,
        segments: vec![code, data],
        exports: vec![
            Export {
                ordinal: 1,
                symbol: "AddNums",
                name: "AddNums",
            },
            Export {
                ordinal: 2,
                symbol: "PutMsg",
                name: "PutMsg",
            },
            Export {
                ordinal: 3,
                symbol: "GetCount",
                name: "GetCount",
            },
        ],
        start: "_DLL_InitTerm",
        stack: None,
        stack_size: 0,
        auto_data: None,
        major: 0xC3,
        tracepoints: vec![
            TraceSpec {
                minor: 1,
                at: "_DLL_InitTerm",
                desc: "TPDLL32 init/term arguments",
                fmt: &["ret=%P%F hmod=%D flag=%D"],
                ..stack_bytes32!(12)
            },
            TraceSpec {
                minor: 2,
                retep: false,
                at: "AddNums",
                desc: "TPDLL32 AddNums arguments",
                fmt: &["a=%P%D b=%D"],
                data: &["MEM32=(FESP+4,DIRECT,8)"],
                rpn: &["Push W,8", "Push ESP", "Push D,4", "Add", "Log MRF"],
            },
            TraceSpec {
                minor: 3,
                retep: false,
                at: "putmsg_doswrite",
                desc: "TPDLL32 PutMsg string",
                fmt: &["length ECX=%D", "string %P%S"],
                data: &["REGS=(ECX)", "ASCIIZ32=(FESP+4,INDIRECT,80)"],
                rpn: &[
                    "Push ECX",
                    "Log DN,1",
                    "Push W,80",
                    "Push ESP",
                    "Push D,4",
                    "Add",
                    "Push FIF",
                    "Log ARF",
                ],
            },
            TraceSpec {
                minor: 4,
                retep: false,
                at: "GetCount",
                desc: "TPDLL32 GetCount entered",
                fmt: &["EIP=%F"],
                data: &["REGS=(EIP)"],
                rpn: &["Push EIP", "Log DN,1"],
            },
            TraceSpec {
                minor: 5,
                retep: true,
                at: "addnums_ret",
                desc: "TPDLL32 AddNums result",
                fmt: &["sum EAX=%D"],
                data: &["REGS=(EAX)"],
                rpn: &["Push EAX", "Log DN,1"],
            },
            TraceSpec {
                minor: 6,
                retep: true,
                at: "putmsg_ret",
                desc: "TPDLL32 PutMsg result",
                fmt: &["rc EAX=%D"],
                data: &["REGS=(EAX)"],
                rpn: &["Push EAX", "Log DN,1"],
            },
        ],
    })
}

pub(crate) fn build_exe() -> Result<Program> {
    const P: &str = "DLLCAL32";
    let base = lx_base(2);
    let mut d = Data::new();
    let mut greeting = GREETING.to_vec();
    greeting.push(0);
    let greet = base + d.bytes("greeting", &greeting);
    let data = d.finish("DATA32", "DATA", LX_DATA);

    let mut c = Code::new(P, 32)?;
    let mut fails = [c.label(), c.label(), c.label()];
    let mut exit = c.label();
    let tpdll32 = Dll {
        module: "TPDLL32",
        putmsg: "PutMsg",
        addnums: "AddNums",
        getcount: "GetCount",
        after_addnums: "after_addnums",
    };
    call_dll(&mut c, &tpdll32, Arg::Address("greeting", greet), &fails)?;
    epilogue(&mut c, &mut fails, &mut exit, 32)?;
    let code = c.finish("CODE32", "CODE", LX_CODE)?;

    let exe = Exe {
        name: P,
        file_name: "DLLCAL32.EXE",
        description: "DLLCAL32.EXE: calls TPDLL32 (os2trace testprogs)",
        major: 0xC5,
        tracepoints: vec![
            TraceSpec {
                minor: 1,
                at: "call_addnums",
                desc: "DLLCAL32 AddNums arguments",
                fmt: &["a=%P%D b=%D"],
                ..stack_bytes32!(8)
            },
            TraceSpec {
                minor: 2,
                retep: false,
                at: "after_addnums",
                desc: "DLLCAL32 AddNums result",
                fmt: &["sum=%D"],
                data: &["REGS=(EAX)"],
                rpn: &["Push EAX", "Log DN,1"],
            },
            exit_rc32(3, "DLLCAL32 exit code"),
        ],
    };
    link(exe.lx(code, data))
}
