//! TNF16.EXE and TNF32.EXE: programs with Solaris TNF probes compiled in
//! (the layout kernel_sim's `tnf` module reads: an exported
//! `TNF_PROBE_LIST` of `'TNFD'` descriptors, each naming its site, the
//! address right after a `call TNFPROBE.TNF_PROBE`).
//!
//! TNF32 (LX; objects 1 `CODE32`, 2 `DATA32`, 3 `STACK`) mirrors the man
//! pages' `cookie2.c`: [`COOKIE_ROUNDS`] rounds of [`COOKIE_LOOPS`]
//! iterations; each iteration fires `inloop` (keys `cookie main loop`,
//! `sunw%debug in the loop`, file `cookie2.c` line 50) with `tnf_ulong
//! loop_count` (ESI, 0.. within the round) and `tnf_ulong total_iterations`
//! (EBX, counting all rounds), and adds loop_count to `cur_sum`; at the end
//! `end` (line 60) fires with `tnf_long cur_sum` (from data) and `tnf_long
//! max_cnt` (a constant, the iterations). Exit 1 if cur_sum is wrong. An
//! OS/2 tracepoint (major 0xD0, minor 1) at `loop_top` logs ESI and EBX,
//! so TNF and OS/2's system trace can record the same run.
//!
//! TNF16 (NE; 1 `_TEXT`, 2 `_DATA`) has a debug probe `start` (keys
//! `tnf16 io`) with `tnf_string program` (a 16:16 pointer in data) and
//! `tnf_int count`, a probe `step` (keys `tnf16 loop`) with `tnf_int i`
//! from a BP frame slot and `tnf_opaque where` (a constant), and `done`
//! with `tnf_ulong sum` (DX:AX is not a location: the sum is stored in
//! data first). Exit 1 if the sum is wrong. Its stub is far (`retf`), as
//! the site's call is.
//!
//! [`Probes::Nprobe`] builds the same programs with no probe sites (as
//! `-DNPROBE` does), and [`Probes::Stub`] with each site calling a local
//! `ret`: the bench measures a disabled probe against both.

use iced_x86::code_asm::*;
use loader::{Format, SourceKind};

use super::*;
use crate::Program;
use crate::error::Result;
use crate::link::{Export, Spec, TraceSpec, link, lx_base};
use crate::segment::{Code, Data};

/// Rounds of TNF32's cookie loop.
pub const COOKIE_ROUNDS: u32 = 3;
/// Iterations per round.
pub const COOKIE_LOOPS: u32 = 4;
/// Iterations of TNF16's loop.
pub const TNF16_COUNT: u32 = 5;

/// How the probe sites are built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probes {
    /// Calls to TNFPROBE, with the probe table.
    Tnf,
    /// No sites and no table (`-DNPROBE`).
    Nprobe,
    /// Each site calls a local routine that only returns.
    Stub,
}

/// `TNFPROBE.1 TNF_PROBE` (32-bit) and `TNFPROBE.2 TNF_PROBE16`.
const TNF_PROBE32: Ref = Ref::Ordinal {
    module: "TNFPROBE",
    ordinal: 1,
    name: "TNF_PROBE",
};
const TNF_PROBE16: Ref = Ref::Ordinal {
    module: "TNFPROBE",
    ordinal: 2,
    name: "TNF_PROBE16",
};

/// Where an argument is when the site calls (the descriptor's codes).
#[derive(Clone, Copy)]
enum Loc {
    Reg(u8),
    Frame(i32),
    /// A data variable: its label and its offset in the data segment (a
    /// 32-bit descriptor gets its flat address through an off32 fixup).
    Var(&'static str, u32),
    Const(i32),
}

/// One probe: what TNF_PROBE_n declares, and the label after its call.
struct ProbeDef {
    name: &'static str,
    keys: &'static str,
    detail: &'static str,
    file: &'static str,
    line: u32,
    debug: bool,
    /// (tnf type code, name, location)
    args: &'static [(u8, &'static str, Loc)],
    site: &'static str,
}

/// tnf type codes (tnf::ArgType order).
const TNF_INT: u8 = 0;
const TNF_ULONG: u8 = 3;
const TNF_LONG: u8 = 2;
const TNF_STRING: u8 = 8;
const TNF_OPAQUE: u8 = 9;

const ESI: u8 = 6;
const EBX: u8 = 3;

/// Appends the probe table to `d` (segment `seg`): strings, descriptors,
/// then `TNF_PROBE_LIST`.
fn probe_table(d: &mut Data, seg: u16, probes: &[ProbeDef], bits16: bool) {
    let kind = if bits16 {
        SourceKind::Ptr1616
    } else {
        SourceKind::Off32
    };
    let string = |d: &mut Data, s: &str| {
        let mut b = s.as_bytes().to_vec();
        b.push(0);
        d.anon(&b)
    };
    let mut descs = Vec::new();
    for p in probes {
        let name = string(d, p.name);
        let keys = string(d, p.keys);
        let detail = string(d, p.detail);
        let file = string(d, p.file);
        let arg_names: Vec<u32> = p.args.iter().map(|a| string(d, a.1)).collect();
        while !d.here().is_multiple_of(4) {
            d.anon(&[0]);
        }
        let at = d.anon(&0x4446_4E54u32.to_le_bytes());
        d.ptr(kind, Ref::Symbol(p.site));
        for s in [name, keys, detail, file] {
            d.ptr(
                kind,
                Ref::Local {
                    segment: seg,
                    offset: s,
                },
            );
        }
        d.anon(&p.line.to_le_bytes());
        d.anon(&[p.args.len() as u8, u8::from(p.debug), 0, 0]);
        for i in 0..5 {
            match p.args.get(i).zip(arg_names.get(i)) {
                Some(((ty, _, loc), arg_name)) => {
                    let (k, reg, disp) = match *loc {
                        Loc::Reg(r) => (1u8, r, 0),
                        Loc::Frame(o) => (2, 0, o),
                        Loc::Var(_, o) => (3, 0, o as i32),
                        Loc::Const(v) => (4, 0, v),
                    };
                    d.anon(&[*ty, k, reg, 0]);
                    match *loc {
                        Loc::Var(sym, _) if !bits16 => {
                            d.ptr(SourceKind::Off32, Ref::Symbol(sym));
                        }
                        _ => {
                            d.anon(&disp.to_le_bytes());
                        }
                    }
                    d.ptr(
                        kind,
                        Ref::Local {
                            segment: seg,
                            offset: *arg_name,
                        },
                    );
                }
                None => {
                    d.anon(&[0; 12]);
                }
            }
        }
        descs.push(at);
    }
    let mut head = 0x4C46_4E54u32.to_le_bytes().to_vec();
    head.extend((probes.len() as u32).to_le_bytes());
    d.bytes("TNF_PROBE_LIST", &head);
    for at in descs {
        d.ptr(
            kind,
            Ref::Local {
                segment: seg,
                offset: at,
            },
        );
    }
}

/// A probe site: the call (or nothing, or a call to the stub), then the
/// site label.
fn site(
    c: &mut Code,
    probes: Probes,
    stub: CodeLabel,
    label: &'static str,
    bits16: bool,
) -> Result<()> {
    match probes {
        Probes::Tnf if bits16 => c.call_far_import(TNF_PROBE16)?,
        Probes::Tnf => c.call_rel32_import(TNF_PROBE32)?,
        Probes::Stub if bits16 => c.call_far_import(Ref::Symbol("stub"))?,
        Probes::Stub => c.op(|a| a.call(stub))?,
        Probes::Nprobe => {}
    }
    c.local(label)
}

fn exports(probes: Probes) -> Vec<Export> {
    if probes == Probes::Tnf {
        vec![Export {
            ordinal: 1,
            symbol: "TNF_PROBE_LIST",
            name: "TNF_PROBE_LIST",
        }]
    } else {
        Vec::new()
    }
}

const COOKIE_PROBES: &[ProbeDef] = &[
    ProbeDef {
        name: "inloop",
        keys: "cookie main loop",
        detail: "sunw%debug in the loop",
        file: "cookie2.c",
        line: 50,
        debug: false,
        args: &[
            (TNF_ULONG, "loop_count", Loc::Reg(ESI)),
            (TNF_ULONG, "total_iterations", Loc::Reg(EBX)),
        ],
        site: "inloop_site",
    },
    ProbeDef {
        name: "end",
        keys: "cookie main",
        detail: "sunw%debug 'at the end'",
        file: "cookie2.c",
        line: 60,
        debug: false,
        args: &[
            (TNF_LONG, "cur_sum", Loc::Var("cur_sum", 0)),
            (
                TNF_LONG,
                "max_cnt",
                Loc::Const((COOKIE_ROUNDS * COOKIE_LOOPS) as i32),
            ),
        ],
        site: "end_site",
    },
];

/// TNF32.EXE (or its NPROBE / stub variant).
pub(crate) fn build_tnf32(probes: Probes) -> Result<Program> {
    const P: &str = "TNF32";
    let base = lx_base(2);
    let mut d = Data::new();
    let cur_sum = base + d.dword("cur_sum", 0);
    if probes == Probes::Tnf {
        probe_table(&mut d, 2, COOKIE_PROBES, false);
    }
    let data = d.finish("DATA32", "DATA", LX_DATA);

    let mut c = Code::new(P, 32)?;
    let mut fails = [c.label()];
    let mut exit = c.label();
    let mut round = c.label();
    let mut top = c.label();
    let mut stub = c.label();
    c.public("main")?;
    c.op(|a| a.xor(ebx, ebx))?;
    c.op(|a| a.mov(edi, COOKIE_ROUNDS))?;
    c.place(&mut round)?;
    c.local("round")?;
    c.op(|a| a.xor(esi, esi))?;
    c.place(&mut top)?;
    c.local("loop_top")?;
    site(&mut c, probes, stub, "inloop_site", false)?;
    c.data_ref("cur_sum")?;
    c.op(|a| a.add(dword_ptr(u64::from(cur_sum)), esi))?;
    c.op(|a| a.inc(ebx))?;
    c.op(|a| a.inc(esi))?;
    c.op(|a| a.cmp(esi, COOKIE_LOOPS))?;
    c.op(|a| a.jb(top))?;
    c.op(|a| a.dec(edi))?;
    c.op(|a| a.jnz(round))?;
    site(&mut c, probes, stub, "end_site", false)?;
    let want = COOKIE_ROUNDS * COOKIE_LOOPS * (COOKIE_LOOPS - 1) / 2;
    c.data_ref("cur_sum")?;
    c.op(|a| a.cmp(dword_ptr(u64::from(cur_sum)), want))?;
    c.op(|a| a.jne(fails[0]))?;
    epilogue(&mut c, &mut fails, &mut exit, 32)?;
    c.place(&mut stub)?;
    c.local("stub")?;
    c.op(|a| a.ret())?;
    let code = c.finish("CODE32", "CODE", LX_CODE)?;
    link(Spec {
        format: Format::Lx,
        name: P,
        file_name: "TNF32.EXE",
        description: "TNF32.EXE: TNF probes, cookie2 (os2trace testprogs)",
        flags: LX_PROGRAM,
        segments: vec![code, data, layout::stack32()],
        exports: exports(probes),
        start: "main",
        stack: Some((3, STACK32)),
        stack_size: STACK32,
        auto_data: None,
        major: 0xD0,
        // An OS/2 tracepoint beside the TNF probe, for runs with both.
        tracepoints: if probes == Probes::Tnf {
            vec![TraceSpec {
                minor: 1,
                retep: false,
                at: "loop_top",
                desc: "TNF32 loop",
                fmt: &["loop_count=%D total_iterations=%D"],
                data: &["REGS=(ESI,EBX)"],
                rpn: &["Push EBX", "Push ESI", "Log DN,2"],
            }]
        } else {
            Vec::new()
        },
    })
}

const TNF16_PROBES: &[ProbeDef] = &[
    ProbeDef {
        name: "start",
        keys: "tnf16 io",
        detail: "sunw%debug 'starting up'",
        file: "tnf16.c",
        line: 10,
        debug: true,
        args: &[
            (TNF_STRING, "program", Loc::Var("program_name_ptr", 10)),
            (TNF_INT, "count", Loc::Const(TNF16_COUNT as i32)),
        ],
        site: "start_site",
    },
    ProbeDef {
        name: "step",
        keys: "tnf16 loop",
        detail: "XYZ%color red blue",
        file: "tnf16.c",
        line: 20,
        debug: false,
        args: &[
            (TNF_INT, "i", Loc::Frame(-2)),
            (TNF_OPAQUE, "where", Loc::Const(0x1234)),
        ],
        site: "step_site",
    },
    ProbeDef {
        name: "done",
        keys: "tnf16",
        detail: "",
        file: "tnf16.c",
        line: 30,
        debug: false,
        args: &[(TNF_ULONG, "sum", Loc::Var("sum", 0))],
        site: "done_site",
    },
];

/// TNF16.EXE (or its NPROBE / stub variant).
pub(crate) fn build_tnf16(probes: Probes) -> Result<Program> {
    const P: &str = "TNF16";
    let mut d = Data::new();
    let sum = d.word("sum", 0);
    d.word("sum_hi", 0);
    if probes == Probes::Tnf {
        d.bytes("program_name", b"TNF16\0");
        let name_ptr = d.far_ptr(Some("program_name_ptr"), "program_name");
        debug_assert_eq!((sum, name_ptr), (0, 10));
        probe_table(&mut d, 2, TNF16_PROBES, true);
    }
    let data = d.finish("_DATA", "DATA", NE_DATA);

    let mut c = Code::new(P, 16)?;
    let mut fails = [c.label()];
    let mut exit = c.label();
    let mut top = c.label();
    let mut stub = c.label();
    c.public("main")?;
    site(&mut c, probes, stub, "start_site", true)?;
    // A frame with the loop counter at [bp-2].
    c.op(|a| a.push(bp))?;
    c.op(|a| a.mov(bp, sp))?;
    c.op(|a| a.push(0))?;
    c.place(&mut top)?;
    c.local("loop_top")?;
    site(&mut c, probes, stub, "step_site", true)?;
    c.op(|a| a.mov(ax, word_ptr(bp - 2)))?;
    c.op(|a| a.add(word_ptr(u64::from(sum)), ax))?;
    c.op(|a| a.inc(word_ptr(bp - 2)))?;
    c.op(|a| a.cmp(word_ptr(bp - 2), TNF16_COUNT as i32))?;
    c.op(|a| a.jb(top))?;
    c.op(|a| a.mov(sp, bp))?;
    c.op(|a| a.pop(bp))?;
    site(&mut c, probes, stub, "done_site", true)?;
    let want = TNF16_COUNT * (TNF16_COUNT - 1) / 2;
    c.op(|a| a.cmp(word_ptr(u64::from(sum)), want as i32))?;
    c.op(|a| a.jne(fails[0]))?;
    epilogue(&mut c, &mut fails, &mut exit, 16)?;
    c.place(&mut stub)?;
    c.local("stub")?;
    c.op(|a| a.retf())?;
    let code = c.finish("_TEXT", "CODE", NE_CODE)?;
    let mut spec = layout::Exe {
        name: P,
        file_name: "TNF16.EXE",
        description: "TNF16.EXE: TNF probes (os2trace testprogs)",
        major: 0xD1,
        tracepoints: Vec::new(),
    }
    .ne(vec![code, data]);
    spec.exports = exports(probes);
    link(spec)
}
