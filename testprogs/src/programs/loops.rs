//! LOOP16.EXE and LOOP32.EXE: a hot loop for tracing cost measurements.
//!
//! Each calls a small routine `STEP(i)` / `Step(i)` once per iteration,
//! i = N down to 1, and adds what it returns (i) to a sum; at the end the
//! sum must be N(N+1)/2, else exit 1. A tracepoint on the routine is hit N
//! times, so the cost of a tracepoint hit can be measured against the
//! untraced run.
//!
//! LOOP16 (NE; segments 1 `_TEXT`, 2 `_DATA`): N = [`LOOP16_COUNT`];
//! `STEP` is near pascal (`ret 2`), the sum is in BX.
//!
//! LOOP32 (LX; objects 1 `CODE32`, 2 `DATA32`, 3 `STACK`): N =
//! [`LOOP32_COUNT`]; `Step` is near `_System` (the caller pops), the sum is
//! in EBX.

use iced_x86::code_asm::*;

use super::*;
use crate::Program;
use crate::error::Result;
use crate::link::{TraceSpec, link};
use crate::segment::{Code, Data};

/// Iterations of LOOP16 (the sum, 45150, fits 16 bits).
pub const LOOP16_COUNT: u32 = 300;
/// Iterations of LOOP32.
pub const LOOP32_COUNT: u32 = 1000;

pub(crate) fn build_loop16() -> Result<Program> {
    const P: &str = "LOOP16";
    let n = LOOP16_COUNT;
    let mut d = Data::new();
    d.word("count", n as u16);
    let data = d.finish("_DATA", "DATA", NE_DATA);

    let mut c = Code::new(P, 16)?;
    let mut fails = [c.label()];
    let mut exit = c.label();
    let mut top = c.label();
    let mut step = c.label();
    c.public("main")?;
    c.op(|a| a.xor(bx, bx))?;
    c.op(|a| a.mov(cx, word_ptr(0)))?;
    c.place(&mut top)?;
    c.local("loop_top")?;
    c.op(|a| a.push(cx))?;
    c.op(|a| a.call(step))?;
    c.op(|a| a.add(bx, ax))?;
    c.op(|a| a.loop_(top))?;
    c.op(|a| a.cmp(bx, (n * (n + 1) / 2) as i32))?;
    c.op(|a| a.jne(fails[0]))?;
    epilogue(&mut c, &mut fails, &mut exit, 16)?;
    // STEP(i): AX = i.
    c.place(&mut step)?;
    routine16(&mut c, "STEP", Ret16::Near(2), |c| {
        c.op(|a| a.mov(ax, word_ptr(bp + 4)))
    })?;
    let code = c.finish("_TEXT", "CODE", NE_CODE)?;

    let exe = Exe {
        name: P,
        file_name: "LOOP16.EXE",
        description: "LOOP16.EXE: a hot loop (os2trace testprogs)",
        major: 0xCD,
        tracepoints: vec![
            TraceSpec {
                minor: 1,
                at: "STEP",
                desc: "LOOP16 STEP",
                fmt: &["return %P%W i=%W"],
                ..stack_bytes16!(4)
            },
            TraceSpec {
                minor: 2,
                retep: false,
                at: "exit",
                desc: "LOOP16 exit code",
                fmt: &["rc=%W sum=%W"],
                data: &["REGS=(AX,BX)"],
                rpn: &["Push EBX", "Push EAX", "Log WN,2"],
            },
        ],
    };
    link(exe.ne(vec![code, data]))
}

pub(crate) fn build_loop32() -> Result<Program> {
    const P: &str = "LOOP32";
    let n = LOOP32_COUNT;
    let mut d = Data::new();
    d.dword("count", n);
    let data = d.finish("DATA32", "DATA", LX_DATA);

    let mut c = Code::new(P, 32)?;
    let mut fails = [c.label()];
    let mut exit = c.label();
    let mut top = c.label();
    let mut step = c.label();
    c.public("main")?;
    c.op(|a| a.xor(ebx, ebx))?;
    c.data_ref("count")?;
    c.op(|a| a.mov(ecx, dword_ptr(u64::from(crate::link::lx_base(2)))))?;
    c.place(&mut top)?;
    c.local("loop_top")?;
    c.op(|a| a.push(ecx))?;
    c.op(|a| a.call(step))?;
    c.op(|a| a.add(esp, 4))?;
    c.op(|a| a.add(ebx, eax))?;
    c.op(|a| a.dec(ecx))?;
    c.op(|a| a.jnz(top))?;
    c.op(|a| a.cmp(ebx, (n * (n + 1) / 2) as i32))?;
    c.op(|a| a.jne(fails[0]))?;
    epilogue(&mut c, &mut fails, &mut exit, 32)?;
    // Step(i): EAX = i.
    c.place(&mut step)?;
    c.public("Step")?;
    c.op(|a| a.mov(eax, dword_ptr(esp + 4)))?;
    c.op(|a| a.ret())?;
    let code = c.finish("CODE32", "CODE", LX_CODE)?;

    let exe = Exe {
        name: P,
        file_name: "LOOP32.EXE",
        description: "LOOP32.EXE: a hot loop (os2trace testprogs)",
        major: 0xCE,
        tracepoints: vec![
            TraceSpec {
                minor: 1,
                retep: false,
                at: "Step",
                desc: "LOOP32 Step",
                fmt: &["i=%P%D"],
                data: &["MEM32=(FESP+4,DIRECT,4)"],
                rpn: &["Push W,4", "Push ESP", "Push D,4", "Add", "Log MRF"],
            },
            TraceSpec {
                minor: 2,
                retep: false,
                at: "exit",
                desc: "LOOP32 exit code",
                fmt: &["rc=%D sum=%D"],
                data: &["REGS=(EAX,EBX)"],
                rpn: &["Push EBX", "Push EAX", "Log DN,2"],
            },
        ],
    };
    link(exe.lx(code, data))
}
