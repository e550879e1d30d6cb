//! DBG16.EXE and DBG32.EXE: programs that carry CodeView debug
//! information (`NB09`), for `TP=@file,line`, `REGS=(.var)` and
//! `RETEP=CV`.
//!
//! Each is the code a C compiler would make of [`DBG16_C`] / [`DBG32_C`]
//! (given in full, with the line numbers the debug information maps):
//! `main` calls `add2(2, 3)` (`Add2` in DBG32), stores the result in the
//! global `total` and exits with 0 when it is 5, else 1. `add2` keeps
//! `sum` in a register (SI / ESI) and `scratch` on the stack
//! (`[bp-2]` / `[ebp-4]`); its parameters `a` and `b` are on the stack too.
//!
//! DBG16 (NE; 1 `_TEXT`, 2 `_DATA`): `add2` is near pascal (`ret 4`), `a`
//! at `[bp+6]`, `b` at `[bp+4]`. The debug information is appended to the
//! file, as LINK and WLINK do for NE modules.
//!
//! DBG32 (LX; 1 `CODE32`, 2 `DATA32`, 3 `STACK`): `Add2` is `_System`
//! (the caller pops), `a` at `[ebp+8]`, `b` at `[ebp+12]`. The debug
//! information is the LX debug section (header's debug info offset and
//! length), at the end of the file, so the `NB09` trailer is also the
//! file's last 8 bytes.
//!
//! Labels: `main`, `add2`/`Add2`, `exit` are public; `line_N` (local)
//! marks the first instruction of source line N; `add2_body` and
//! `add2_epilogue` (local) are the procedure's debug start and end.
//!
//! DBGH32 is DBG32 with IBM HLL (`NB04`) information instead, as LINK386
//! /CO writes it for IBM's compilers (crate `hll` writer; the format's
//! details are partly inferred, see `tdf::debuginfo::hll`).
//!
//! Tracepoints (MAP form, majors 0xCE, 0xCF and 0xD0): 1 at `main` (AX),
//! 2 at `exit` (AX).

use iced_x86::code_asm::asm_traits::{CodeAsmAdd, CodeAsmMov, CodeAsmPop, CodeAsmPush, CodeAsmSub};
use iced_x86::code_asm::*;

use super::*;
use crate::Program;
use crate::codeview::{CvModule, Proc, Var, nb09, reg, ty};
use crate::error::{Result, link_error};
use crate::link::{TraceSpec, link};
use crate::segment::{Code, Data};

/// The C source DBG16 is compiled from (as its line numbers say).
pub const DBG16_C: &str = "\
/* dbg16.c: os2trace testprogs, a 16-bit program with CodeView */
int total;

int near pascal add2(int a, int b)
{
    register int sum;
    int scratch;
    sum = a;
    sum += b;
    scratch = sum;
    return scratch;
}

void main(void)
{
    total = add2(2, 3);
    DosExit(1, total != 5);
}
";

/// The C source DBG32 is compiled from.
pub const DBG32_C: &str = "\
/* dbg32.c: os2trace testprogs, a 32-bit program with CodeView */
int total;

int _System Add2(int a, int b)
{
    register int sum;
    int scratch;
    sum = a;
    sum += b;
    scratch = sum;
    return scratch;
}

void main(void)
{
    total = Add2(2, 3);
    DosExit(1, total != 5);
}
";

/// Source lines with code, and their labels.
const LINES: [(u16, &str); 9] = [
    (5, "line_5"),
    (8, "line_8"),
    (9, "line_9"),
    (10, "line_10"),
    (11, "line_11"),
    (12, "line_12"),
    (15, "line_15"),
    (16, "line_16"),
    (17, "line_17"),
];

/// Where `add2`'s parameters and `scratch` lie in its BP frame: the
/// offsets its code uses and its debug information names.
struct Frame {
    a: i32,
    b: i32,
    scratch: i32,
    /// The argument bytes the routine pops: 4 (pascal) or 0 (`_System`).
    pops: u32,
}

/// DBG16's `add2` (near pascal): `a` above `b`.
const FRAME16: Frame = Frame {
    a: 6,
    b: 4,
    scratch: -2,
    pops: 4,
};

/// DBG32's `Add2` (`_System`): `a` below `b`.
const FRAME32: Frame = Frame {
    a: 8,
    b: 12,
    scratch: -4,
    pops: 0,
};

/// The registers `add2` uses in 16-bit (BP, SP, SI, AX) or 32-bit code
/// (EBP, ...), and the size of its memory operands (`word_ptr` or
/// `dword_ptr`).
struct Regs<R> {
    /// BP / EBP.
    base: R,
    /// SP / ESP.
    stack: R,
    /// The register variable `sum`: SI / ESI.
    sum: R,
    /// The return value: AX / EAX.
    result: R,
    /// `word_ptr` / `dword_ptr`.
    ptr: fn(AsmMemoryOperand) -> AsmMemoryOperand,
}

/// DBG16's registers.
const REGS16: Regs<AsmRegister16> = Regs {
    base: bp,
    stack: sp,
    sum: si,
    result: ax,
    ptr: word_ptr,
};

/// DBG32's registers.
const REGS32: Regs<AsmRegister32> = Regs {
    base: ebp,
    stack: esp,
    sum: esi,
    result: eax,
    ptr: dword_ptr,
};

/// `int name(int a, int b)`: the frame, `sum = a; sum += b; scratch =
/// sum; return scratch;` with the `line_N`, `add2_body` and
/// `add2_epilogue` labels of [`LINES`]; returns with `ret`, popping
/// [`Frame::pops`] bytes. Gives the routine's label, for `call`.
fn emit_add2<R>(c: &mut Code, name: &'static str, r: Regs<R>, f: &Frame) -> Result<CodeLabel>
where
    R: Copy + std::ops::Add<i32, Output = AsmMemoryOperand>,
    CodeAssembler: CodeAsmPush<R>
        + CodeAsmPop<R>
        + CodeAsmMov<R, R>
        + CodeAsmSub<R, i32>
        + CodeAsmMov<R, AsmMemoryOperand>
        + CodeAsmAdd<R, AsmMemoryOperand>
        + CodeAsmMov<AsmMemoryOperand, R>,
{
    let Regs {
        base,
        stack,
        sum,
        result,
        ptr,
    } = r;
    let mut label = c.label();
    c.place(&mut label)?;
    c.public(name)?;
    c.local("line_5")?;
    c.op(|a| a.push(base))?;
    c.op(|a| a.mov(base, stack))?;
    c.op(|a| a.sub(stack, -f.scratch))?;
    c.op(|a| a.push(sum))?;
    c.local("add2_body")?;
    c.local("line_8")?;
    c.op(|a| a.mov(sum, ptr(base + f.a)))?;
    c.local("line_9")?;
    c.op(|a| a.add(sum, ptr(base + f.b)))?;
    c.local("line_10")?;
    c.op(|a| a.mov(ptr(base + f.scratch), sum))?;
    c.local("line_11")?;
    c.op(|a| a.mov(result, ptr(base + f.scratch)))?;
    c.local("add2_epilogue")?;
    c.local("line_12")?;
    c.op(|a| a.pop(sum))?;
    c.op(|a| a.mov(stack, base))?;
    c.op(|a| a.pop(base))?;
    if f.pops > 0 {
        c.op(|a| a.ret_1(f.pops))?;
    } else {
        c.op(|a| a.ret())?;
    }
    Ok(label)
}

pub(crate) fn build_dbg16() -> Result<Program> {
    const P: &str = "DBG16";
    let mut d = Data::new();
    let total = d.word("total", 0);
    let data = d.finish("_DATA", "DATA", NE_DATA);

    let mut c = Code::new(P, 16)?;
    let mut ok = c.label();
    // int add2(int a, int b)
    let add2 = emit_add2(&mut c, "add2", REGS16, &FRAME16)?;
    // void main(void)
    c.public("main")?;
    c.local("line_15")?;
    c.local("line_16")?;
    c.op(|a| a.push(2))?;
    c.op(|a| a.push(3))?;
    c.op(|a| a.call(add2))?;
    c.op(|a| a.mov(word_ptr(u64::from(total)), ax))?;
    c.local("line_17")?;
    c.op(|a| a.xor(ax, ax))?;
    c.op(|a| a.cmp(word_ptr(u64::from(total)), 5))?;
    c.op(|a| a.je(ok))?;
    c.op(|a| a.inc(ax))?;
    c.place(&mut ok)?;
    c.public("exit")?;
    exit16(&mut c)?;
    let code = c.finish("_TEXT", "CODE", NE_CODE)?;

    let exe = Exe {
        name: P,
        file_name: "DBG16.EXE",
        description: "DBG16.EXE: CodeView line numbers and symbols (os2trace testprogs)",
        major: 0xCE,
        tracepoints: tracepoints("DBG16"),
    };
    let mut p = link(exe.ne(vec![code, data]))?;
    let m = debug_module(&p, false, "dbg16.obj", "dbg16.c", "add2", total)?;
    p.bytes.extend_from_slice(&nb09(&m));
    p.source = Some(("dbg16.c", DBG16_C));
    Ok(p)
}

pub(crate) fn build_dbg32() -> Result<Program> {
    dbg32_with("DBG32", "DBG32.EXE", 0xCF, false)
}

pub(crate) fn build_dbgh32() -> Result<Program> {
    dbg32_with("DBGH32", "DBGH32.EXE", 0xD0, true)
}

/// DBG32's code with CodeView (`hll` false) or IBM HLL information.
fn dbg32_with(
    name: &'static str,
    file_name: &'static str,
    major: u16,
    hll: bool,
) -> Result<Program> {
    let p_name = name;
    let mut d = Data::new();
    let total = d.dword("total", 0);
    let data = d.finish("DATA32", "DATA", LX_DATA);
    let total_at = u64::from(crate::link::lx_base(2) + total);

    let mut c = Code::new(p_name, 32)?;
    let mut ok = c.label();
    let add2 = emit_add2(&mut c, "Add2", REGS32, &FRAME32)?;
    c.public("main")?;
    c.local("line_15")?;
    c.local("line_16")?;
    c.op(|a| a.push(3))?;
    c.op(|a| a.push(2))?;
    c.op(|a| a.call(add2))?;
    c.op(|a| a.add(esp, 8))?;
    c.data_ref("total")?;
    c.op(|a| a.mov(dword_ptr(total_at), eax))?;
    c.local("line_17")?;
    c.op(|a| a.xor(eax, eax))?;
    c.data_ref("total")?;
    c.op(|a| a.cmp(dword_ptr(total_at), 5))?;
    c.op(|a| a.je(ok))?;
    c.op(|a| a.inc(eax))?;
    c.place(&mut ok)?;
    c.public("exit")?;
    exit32(&mut c)?;
    let code = c.finish("CODE32", "CODE", LX_CODE)?;

    let exe = Exe {
        name: p_name,
        file_name,
        description: if hll {
            "DBGH32.EXE: HLL line numbers and symbols (os2trace testprogs)"
        } else {
            "DBG32.EXE: CodeView line numbers and symbols (os2trace testprogs)"
        },
        major,
        tracepoints: tracepoints("DBG32"),
    };
    let mut p = link(exe.lx(code, data))?;
    let m = debug_module(&p, true, "dbg32.obj", "dbg32.c", "Add2", total)?;
    let debug = if hll { crate::hll::nb04(&m) } else { nb09(&m) };
    if let Some(lx) = p.module.lx.as_mut() {
        lx.debug_info = debug;
    }
    p.bytes = loader::write(&p.module).map_err(|source| crate::error::BuildError::Write {
        program: p_name,
        source,
    })?;
    p.source = Some(("dbg32.c", DBG32_C));
    Ok(p)
}

fn tracepoints(p: &'static str) -> Vec<TraceSpec> {
    let (d1, d2) = match p {
        "DBG16" => ("DBG16 start", "DBG16 exit code"),
        _ => ("DBG32 start", "DBG32 exit code"),
    };
    vec![
        TraceSpec {
            minor: 1,
            retep: false,
            at: "main",
            desc: d1,
            fmt: &["AX=%W"],
            data: &["REGS=(AX)"],
            rpn: &["Push EAX", "Log WN,1"],
        },
        exit_rc16(2, d2),
    ]
}

/// What the debug information of a linked DBG program describes.
fn debug_module(
    p: &Program,
    big: bool,
    object_name: &'static str,
    source: &'static str,
    add2: &'static str,
    total: u32,
) -> Result<CvModule> {
    let at = |name: &str| -> Result<u32> {
        p.symbol(name)
            .map(|s| s.offset)
            .ok_or_else(|| link_error(p.name, format!("no label {name}")))
    };
    let code_size = p.module.objects[0].virtual_size;
    let start = at(add2)?;
    let main = at("main")?;
    let exit = at("exit")?;
    let mut lines = Vec::with_capacity(LINES.len());
    for (line, label) in LINES {
        lines.push((line, at(label)?));
    }
    let (reg, int, f) = if big {
        (reg::ESI, ty::INT4, FRAME32)
    } else {
        (reg::SI, ty::SHORT, FRAME16)
    };
    Ok(CvModule {
        object_name,
        source,
        segment: 1,
        code_size,
        big,
        base: if big { crate::link::lx_base(1) } else { 0 },
        lines,
        procs: vec![
            Proc {
                name: add2,
                offset: start,
                length: main - start,
                debug_start: at("add2_body")? - start,
                debug_end: at("add2_epilogue")? - start,
                vars: vec![
                    Var::BpRel {
                        name: "a",
                        offset: f.a,
                        ty: int,
                    },
                    Var::BpRel {
                        name: "b",
                        offset: f.b,
                        ty: int,
                    },
                    Var::Register {
                        name: "sum",
                        reg,
                        ty: int,
                    },
                    Var::BpRel {
                        name: "scratch",
                        offset: f.scratch,
                        ty: int,
                    },
                ],
            },
            Proc {
                name: "main",
                offset: main,
                length: code_size - main,
                debug_start: 0,
                debug_end: exit - main,
                vars: Vec::new(),
            },
        ],
        data: vec![("total", 2, total, int)],
    })
}
