//! SYSTRC32.EXE: a 32-bit LX program that logs a static record with
//! DosSysTrace, a 16-bit entry, through a 16-bit thunk of its own, as the
//! code IBM's compilers generate for `Dos16SysTrace` does.
//!
//! Objects: 1 `CODE32`, 2 `DATA32`, 3 `STACK`, 4 `CODE16` (a 16-bit code
//! object: the loader gives it a tiled selector).
//!
//! `main` turns the flat address of [`MESSAGE`] into its 16:16 alias by
//! the tiling rule (`sel = (lin >> 16) << 3 | 7`, `off = lin & 0xFFFF`),
//! pushes a 32-bit far return address and jumps to `thunk16` (`jmp far
//! ptr16:16`). The thunk, on the same flat stack, makes the far pascal
//! call `Dos16SysTrace(0xF7, len, 1, msg16)` and returns with `retf`
//! (32-bit operand). The exit code is the call's result: 0 when TRACE ON
//! selected major 0xF7, else 150.

use iced_x86::{Code as Op, Instruction};

use super::*;
use crate::Program;
use crate::error::{BuildError, Result};
use crate::link::{Spec, link, lx_base};
use crate::segment::{Code, Data, Field, Ref};
use loader::{Format, SourceKind};

/// The data of the record.
pub const MESSAGE: &[u8] = b"static record from SYSTRC32";

const DOSSYSTRACE16: Ref = doscalls(90, "DOSSYSTRACE");
/// LX object flags of 16-bit code: readable, executable, 16:16 alias.
const LX_CODE16: u32 = 0x1005;

pub(crate) fn build() -> Result<Program> {
    const P: &str = "SYSTRC32";
    let base = lx_base(2);
    let mut d = Data::new();
    let msg = base + d.bytes("msg", MESSAGE);
    let data = d.finish("DATA32", "DATA", LX_DATA);

    let mut c = Code::new(P, 32)?;
    let mut back = c.label();
    c.public("main")?;
    // EAX = flat msg; DX:AX = its 16:16 alias.
    c.mov_address(eax, "msg", msg)?;
    c.op(|a| a.mov(edx, eax))?;
    c.op(|a| a.shr(edx, 16))?;
    c.op(|a| a.shl(edx, 3))?;
    c.op(|a| a.or(edx, 7))?;
    c.op(|a| a.push(cs))?;
    c.push_address("back", 0)?;
    c.fixup(Field::Imm, SourceKind::Ptr1616, Ref::Symbol("thunk16"))?;
    let jump =
        Instruction::with_far_branch(Op::Jmp_ptr1616, 0, 0).map_err(|e| BuildError::Asm {
            program: P,
            message: e.to_string(),
        })?;
    c.instr(jump)?;
    c.place(&mut back)?;
    c.local("back")?;
    c.op(|a| a.movzx(eax, ax))?;
    c.public("exit")?;
    exit32(&mut c)?;
    let code = c.finish("CODE32", "CODE", LX_CODE)?;

    let mut t = Code::new(P, 16)?;
    t.public("thunk16")?;
    let args = [
        Arg::Imm(0xF7),
        Arg::Imm(MESSAGE.len() as i32),
        Arg::Imm(1),
        Arg::Reg16(dx),
        Arg::Reg16(ax),
    ];
    Call::pascal(DOSSYSTRACE16, &args)
        .public("call_systrace")
        .emit(&mut t)?;
    // `retf` with a 32-bit operand (66 CB): pops the EIP and CS that
    // `main` pushed.
    t.instr(Instruction::with(Op::Retfd))?;
    let code16 = t.finish("CODE16", "CODE", LX_CODE16)?;

    link(Spec {
        format: Format::Lx,
        name: P,
        file_name: "SYSTRC32.EXE",
        description: "SYSTRC32.EXE: DosSysTrace through a 16-bit thunk (os2trace testprogs)",
        flags: LX_PROGRAM,
        segments: vec![code, data, layout::stack32(), code16],
        exports: Vec::new(),
        start: "main",
        stack: Some((3, STACK32)),
        stack_size: STACK32,
        auto_data: None,
        major: 0xF7,
        tracepoints: vec![exit_rc32(1, "SYSTRC32 exit code")],
    })
}
