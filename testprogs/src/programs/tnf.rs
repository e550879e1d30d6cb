//! TNF16.EXE and TNF32.EXE: programs with Solaris TNF probes compiled in
//! (the layout kernel_sim's `tnf` module reads: an exported
//! `TNF_PROBE_LIST` of `'TNFD'` descriptors, each naming its site, the
//! address right after a `call TNFPROBE.TNF_PROBE`).
//!
//! TNF32 (LX; objects 1 `CODE32`, 2 `DATA32`, 3 `STACK`) mirrors the man
//! pages' `cookie2.c` (tnfdump(1), Example 1): rounds of
//! [`COOKIE_ROUNDS`] iterations (5, then 7); each iteration fires `inloop`
//! (keys `cookie main loop`, `sunw%debug in the loop`, file `cookie2.c`
//! line 50) with `tnf_ulong loop_count` (ESI, 0.. within the round) and
//! `tnf_ulong total_iterations` (EBX, counting all rounds). At the end,
//! `end` (keys `cookie main end`, `sunw%debug exiting program`, line 41)
//! logs `node_struct`, a user record of type `node_tnf`
//! (TNF_DECLARE_RECORD) with `tnf_long cur_sum` and `tnf_long max_cnt`,
//! as the man page's does: `{ type: node_tnf cur_sum: 9 max_cnt: 12 }`.
//! The man page does not show cookie2.c's source; ours keeps `cur_sum` as
//! the round's running sum of loop_count modulo `max_cnt` (the iterations
//! of all rounds, [`COOKIE_MAX_CNT`]), which gives the man page's 9. Exit 1
//! if cur_sum is wrong. An OS/2 tracepoint (major 0xD0, minor 1) at
//! `loop_top` logs ESI and EBX, so TNF and OS/2's system trace can record
//! the same run.
//!
//! TNF16 (NE; 1 `_TEXT`, 2 `_DATA`) has a debug probe `start` (keys
//! `tnf16 io`) with `tnf_string program` (a 16:16 pointer in data) and
//! `tnf_int count`, a probe `step` (keys `tnf16 loop`) with `tnf_int i`
//! from a BP frame slot and `tnf_opaque where` (a constant), and `done`
//! with `tnf_ulong sum` (DX:AX is not a location: the sum is stored in
//! data first), then `summary` with `state`, a `tnf16_state` record read
//! through a 16:16 pointer (`tnf_ulong sum` at +0 and `tnf_string program`,
//! a 16:16 pointer at +10). Exit 1 if the sum is wrong. Its stub is far (`retf`), as
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

/// TNF32's cookie rounds: the iterations of each (the man page's 5 and 7).
pub const COOKIE_ROUNDS: [u32; 2] = [5, 7];
/// The iterations of all rounds: `end`'s `max_cnt`.
pub const COOKIE_MAX_CNT: u32 = 12;
/// `end`'s `cur_sum`: the last round's sum of loop_count modulo
/// [`COOKIE_MAX_CNT`], kept as the loop runs.
pub const fn cookie_cur_sum() -> u32 {
    let mut sum = 0;
    let mut r = 0;
    while r < COOKIE_ROUNDS.len() {
        sum = 0;
        let mut i = 0;
        while i < COOKIE_ROUNDS[r] {
            sum = (sum + i) % COOKIE_MAX_CNT;
            i += 1;
        }
        r += 1;
    }
    sum
}
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
    /// The address of a data label as a constant (a pointer argument).
    AddrOf(&'static str),
}

/// A user record type (TNF_DECLARE_RECORD): name and members as (tnf type
/// code, name, byte offset in the structure).
struct RecordDef {
    name: &'static str,
    members: &'static [(u8, &'static str, u32)],
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
    /// The record types of the record arguments, in order.
    records: &'static [RecordDef],
    site: &'static str,
}

/// tnf type codes (tnf::ArgType order).
const TNF_INT: u8 = 0;
const TNF_ULONG: u8 = 3;
const TNF_LONG: u8 = 2;
const TNF_STRING: u8 = 8;
const TNF_OPAQUE: u8 = 9;
const TNF_RECORD: u8 = 10;

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
        // Record type descriptors ('TNFR') first.
        let mut record_at = Vec::new();
        for r in p.records {
            let name = string(d, r.name);
            let member_names: Vec<u32> = r.members.iter().map(|m| string(d, m.1)).collect();
            while !d.here().is_multiple_of(4) {
                d.anon(&[0]);
            }
            let at = d.anon(&0x5246_4E54u32.to_le_bytes());
            d.ptr(
                kind,
                Ref::Local {
                    segment: seg,
                    offset: name,
                },
            );
            d.anon(&[r.members.len() as u8, 0, 0, 0]);
            for ((ty, _, offset), member_name) in r.members.iter().zip(&member_names) {
                d.anon(&[*ty, 0, 0, 0]);
                d.anon(&offset.to_le_bytes());
                d.ptr(
                    kind,
                    Ref::Local {
                        segment: seg,
                        offset: *member_name,
                    },
                );
            }
            for _ in r.members.len()..5 {
                d.anon(&[0; 12]);
            }
            record_at.push(at);
        }
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
        let flags = u8::from(p.debug) | if p.records.is_empty() { 0 } else { 2 };
        d.anon(&[p.args.len() as u8, flags, 0, 0]);
        for i in 0..5 {
            match p.args.get(i).zip(arg_names.get(i)) {
                Some(((ty, _, loc), arg_name)) => {
                    let (k, reg, disp) = match *loc {
                        Loc::Reg(r) => (1u8, r, 0),
                        Loc::Frame(o) => (2, 0, o),
                        Loc::Var(_, o) => (3, 0, o as i32),
                        Loc::Const(v) => (4, 0, v),
                        Loc::AddrOf(_) => (4, 0, 0),
                    };
                    d.anon(&[*ty, k, reg, 0]);
                    match *loc {
                        Loc::Var(sym, _) if !bits16 => {
                            d.ptr(SourceKind::Off32, Ref::Symbol(sym));
                        }
                        Loc::AddrOf(sym) => {
                            d.ptr(kind, Ref::Symbol(sym));
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
        if !p.records.is_empty() {
            let mut records = record_at.into_iter();
            for i in 0..5 {
                match p.args.get(i) {
                    Some((TNF_RECORD, _, _)) => {
                        let r = records.next().unwrap_or(0);
                        d.ptr(
                            kind,
                            Ref::Local {
                                segment: seg,
                                offset: r,
                            },
                        );
                    }
                    _ => {
                        d.anon(&[0; 4]);
                    }
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
        records: &[],
        site: "inloop_site",
    },
    ProbeDef {
        name: "end",
        keys: "cookie main end",
        detail: "sunw%debug exiting program",
        file: "cookie2.c",
        line: 41,
        debug: false,
        args: &[(TNF_RECORD, "node_struct", Loc::AddrOf("node"))],
        records: &[RecordDef {
            name: "node_tnf",
            members: &[(TNF_LONG, "cur_sum", 0), (TNF_LONG, "max_cnt", 4)],
        }],
        site: "end_site",
    },
];

/// TNF32.EXE (or its NPROBE / stub variant).
pub(crate) fn build_tnf32(probes: Probes) -> Result<Program> {
    const P: &str = "TNF32";
    let base = lx_base(2);
    let mut d = Data::new();
    // The node: { long cur_sum; long max_cnt; }.
    let cur_sum = base + d.dword("node", 0);
    d.dword("max_cnt", COOKIE_MAX_CNT);
    if probes == Probes::Tnf {
        probe_table(&mut d, 2, COOKIE_PROBES, false);
    }
    let data = d.finish("DATA32", "DATA", LX_DATA);

    let mut c = Code::new(P, 32)?;
    let mut fails = [c.label()];
    let mut exit = c.label();
    let mut round = c.label();
    let mut top = c.label();
    let mut kept = c.label();
    let mut stub = c.label();
    c.public("main")?;
    c.op(|a| a.xor(ebx, ebx))?;
    // EDI: this round's iterations, 5 then 7.
    c.op(|a| a.mov(edi, COOKIE_ROUNDS[0]))?;
    c.place(&mut round)?;
    c.local("round")?;
    c.data_ref("node")?;
    c.op(|a| a.mov(dword_ptr(u64::from(cur_sum)), 0))?;
    c.op(|a| a.xor(esi, esi))?;
    c.place(&mut top)?;
    c.local("loop_top")?;
    site(&mut c, probes, stub, "inloop_site", false)?;
    c.data_ref("node")?;
    c.op(|a| a.add(dword_ptr(u64::from(cur_sum)), esi))?;
    c.data_ref("node")?;
    c.op(|a| a.cmp(dword_ptr(u64::from(cur_sum)), COOKIE_MAX_CNT))?;
    c.op(|a| a.jb(kept))?;
    c.data_ref("node")?;
    c.op(|a| a.sub(dword_ptr(u64::from(cur_sum)), COOKIE_MAX_CNT))?;
    c.place(&mut kept)?;
    c.op(|a| a.inc(ebx))?;
    c.op(|a| a.inc(esi))?;
    c.op(|a| a.cmp(esi, edi))?;
    c.op(|a| a.jb(top))?;
    c.op(|a| a.add(edi, COOKIE_ROUNDS[1] - COOKIE_ROUNDS[0]))?;
    c.op(|a| a.cmp(edi, COOKIE_ROUNDS[1]))?;
    c.op(|a| a.jbe(round))?;
    site(&mut c, probes, stub, "end_site", false)?;
    c.data_ref("node")?;
    c.op(|a| a.cmp(dword_ptr(u64::from(cur_sum)), cookie_cur_sum()))?;
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
        records: &[],
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
        records: &[],
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
        records: &[],
        site: "done_site",
    },
    ProbeDef {
        name: "summary",
        keys: "tnf16 summary",
        detail: "",
        file: "tnf16.c",
        line: 31,
        debug: false,
        // A 16:16 pointer to the data at `sum`, read as a record.
        args: &[(TNF_RECORD, "state", Loc::AddrOf("sum"))],
        records: &[RecordDef {
            name: "tnf16_state",
            members: &[(TNF_ULONG, "sum", 0), (TNF_STRING, "program", 10)],
        }],
        site: "summary_site",
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
    site(&mut c, probes, stub, "summary_site", true)?;
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

/// How many times TNFLD32 calls `Tick` (without an argument).
pub const TNFLD32_TICKS: u32 = 3;

const TNFDLL32_PROBES: &[ProbeDef] = &[ProbeDef {
    name: "tick",
    keys: "dll tick",
    detail: "XYZ%where 'in a DLL loaded later'",
    file: "tnfdll.c",
    line: 7,
    debug: false,
    args: &[
        (TNF_ULONG, "n", Loc::Frame(8)),
        (TNF_STRING, "module", Loc::AddrOf("module_name")),
    ],
    records: &[],
    site: "tick_site",
}];

/// TNFDLL32.DLL: a DLL with a TNF probe that TNFLD32 loads with
/// DosLoadModule while it runs, so its probe appears after prex has set
/// the probes up (prex replays its history on it). Objects 1 `CODE32`, 2
/// `DATA32`; ordinal 1 `Tick(n)` fires `tick` (keys `dll tick`, `tnf_ulong
/// n` from `[EBP+8]`, `tnf_string module`) and returns 2n; ordinal 2
/// `TNF_PROBE_LIST`; `_DLL_InitTerm` returns 1.
pub(crate) fn build_tnfdll32() -> Result<Program> {
    const P: &str = "TNFDLL32";
    let mut d = Data::new();
    d.bytes("module_name", b"TNFDLL32\0");
    probe_table(&mut d, 2, TNFDLL32_PROBES, false);
    let data = d.finish("DATA32", "DATA", LX_DATA);

    let mut c = Code::new(P, 32)?;
    let stub = c.label();
    c.public("_DLL_InitTerm")?;
    c.op(|a| a.mov(eax, 1))?;
    c.op(|a| a.ret())?;
    c.public("Tick")?;
    c.op(|a| a.push(ebp))?;
    c.op(|a| a.mov(ebp, esp))?;
    site(&mut c, Probes::Tnf, stub, "tick_site", false)?;
    c.op(|a| a.mov(eax, dword_ptr(ebp + 8)))?;
    c.op(|a| a.add(eax, eax))?;
    c.op(|a| a.pop(ebp))?;
    c.op(|a| a.ret())?;
    let code = c.finish("CODE32", "CODE", LX_CODE)?;
    link(Spec {
        format: Format::Lx,
        name: P,
        file_name: "TNFDLL32.DLL",
        description: "TNFDLL32.DLL: a TNF probe in a DLL loaded later (os2trace testprogs)",
        flags: LX_LIBRARY,
        segments: vec![code, data],
        exports: vec![
            Export {
                ordinal: 1,
                symbol: "Tick",
                name: "Tick",
            },
            Export {
                ordinal: 2,
                symbol: "TNF_PROBE_LIST",
                name: "TNF_PROBE_LIST",
            },
        ],
        start: "_DLL_InitTerm",
        stack: None,
        stack_size: 0,
        auto_data: None,
        major: 0xD3,
        tracepoints: Vec::new(),
    })
}

const TNFLD32_PROBES: &[ProbeDef] = &[
    ProbeDef {
        name: "loaded",
        keys: "loader",
        detail: "",
        file: "tnfld.c",
        line: 12,
        debug: false,
        args: &[(TNF_ULONG, "hmod", Loc::Var("hmod", 0))],
        records: &[],
        site: "loaded_site",
    },
    ProbeDef {
        name: "types_a",
        keys: "types",
        detail: "",
        file: "tnfld.c",
        line: 14,
        debug: false,
        args: &[
            (0, "i", Loc::Var("v_int", 0)),
            (1, "u", Loc::Var("v_uint", 0)),
            (TNF_LONG, "l", Loc::Var("v_long", 0)),
            (4, "ll", Loc::Var("v_longlong", 0)),
            (5, "ull", Loc::Var("v_ulonglong", 0)),
        ],
        records: &[],
        site: "types_a_site",
    },
    ProbeDef {
        name: "types_b",
        keys: "types",
        detail: "",
        file: "tnfld.c",
        line: 15,
        debug: false,
        args: &[
            (6, "f", Loc::Var("v_float", 0)),
            (7, "d", Loc::Var("v_double", 0)),
            (TNF_OPAQUE, "o", Loc::Var("v_opaque", 0)),
            (TNF_STRING, "s", Loc::AddrOf("v_string")),
            (TNF_ULONG, "ul", Loc::Const(42)),
        ],
        records: &[],
        site: "types_b_site",
    },
];

/// The values TNFLD32's `types_a` and `types_b` log, one per TNF type.
pub const TNFLD32_TYPES: &str = "i: -5 u: 7 l: -70000 ll: -1099511627776 ull: 9223372036854775813\n\
    f: 1.500000 d: -2.250000 o: 0xdeadbeef s: \"all types\" ul: 42";

/// `DosLoadModule(pszObjNameBuf, cbObjNameBuf, pszModName, phmod)`.
const DOSLOADMODULE32: Ref = doscalls(318, "DosLoadModule");
/// `DosQueryProcAddr(hmod, ordinal, pszProcName, ppfn)`.
const DOSQUERYPROCADDR32: Ref = doscalls(321, "DosQueryProcAddr");

/// TNFLD32.EXE: loads TNFDLL32.DLL with DosLoadModule, fires its own probe
/// `loaded` (keys `loader`, `tnf_ulong hmod`), then `types_a` and
/// `types_b` (keys `types`), which log one value of each predefined TNF
/// type from data ([`TNFLD32_TYPES`]), finds `Tick` (TNFDLL32.1)
/// with DosQueryProcAddr and calls `Tick(i)` for i = 0..[`TNFLD32_TICKS`],
/// checking each returns 2i. A decimal argument N makes it N calls (a
/// workload of probe hits for the bench); any other argument makes it call
/// forever with a busy loop between calls, a target for prex's Ctrl-C. Objects 1
/// `CODE32`, 2 `DATA32`, 3 `STACK`. Exit 2 if the DLL does not load, 3 if
/// Tick is not found, 1 if Tick returns a wrong value.
pub(crate) fn build_tnfld32() -> Result<Program> {
    const P: &str = "TNFLD32";
    let base = lx_base(2);
    let mut d = Data::new();
    let hmod = base + d.dword("hmod", 0);
    let pfn = base + d.dword("pfn", 0);
    let dll_name = base + d.bytes("dll_name", b"TNFDLL32\0");
    d.bytes("v_int", &(-5i32).to_le_bytes());
    d.bytes("v_uint", &7u32.to_le_bytes());
    d.bytes("v_long", &(-70000i32).to_le_bytes());
    d.bytes("v_longlong", &(-(1i64 << 40)).to_le_bytes());
    d.bytes("v_ulonglong", &((1u64 << 63) + 5).to_le_bytes());
    d.bytes("v_float", &1.5f32.to_le_bytes());
    d.bytes("v_double", &(-2.25f64).to_le_bytes());
    d.bytes("v_opaque", &0xDEAD_BEEFu32.to_le_bytes());
    d.bytes("v_string", b"all types\0");
    probe_table(&mut d, 2, TNFLD32_PROBES, false);
    let objbuf = base + d.zeroed("objbuf", 64);
    let data = d.finish("DATA32", "DATA", LX_DATA);

    let mut c = Code::new(P, 32)?;
    let mut fails = [c.label(), c.label(), c.label()];
    let mut exit = c.label();
    let mut top = c.label();
    let mut delay = c.label();
    let mut done = c.label();
    let mut skip = c.label();
    let mut digits = c.label();
    let mut forever = c.label();
    let mut parsed = c.label();
    let stub = c.label();
    c.public("main")?;
    // ESI: how many ticks: 3 without an argument, N for a decimal
    // argument, 0xFFFFFFFF (forever, with a busy delay) for any other.
    c.op(|a| a.mov(edi, dword_ptr(esp + 16)))?;
    c.op(|a| a.cld())?;
    c.op(|a| a.xor(eax, eax))?;
    c.op(|a| a.mov(ecx, -1))?;
    c.op(|a| a.repne().scasb())?;
    c.place(&mut skip)?;
    c.op(|a| a.cmp(byte_ptr(edi), b' ' as i32))?;
    c.op(|a| a.jne(digits))?;
    c.op(|a| a.inc(edi))?;
    c.op(|a| a.jmp(skip))?;
    c.place(&mut digits)?;
    c.op(|a| a.mov(esi, TNFLD32_TICKS))?;
    c.op(|a| a.movzx(eax, byte_ptr(edi)))?;
    c.op(|a| a.test(eax, eax))?;
    c.op(|a| a.jz(parsed))?;
    c.op(|a| a.sub(eax, b'0' as i32))?;
    c.op(|a| a.cmp(eax, 9))?;
    c.op(|a| a.ja(forever))?;
    c.op(|a| a.xor(esi, esi))?;
    let mut digit = c.label();
    c.place(&mut digit)?;
    c.op(|a| a.movzx(eax, byte_ptr(edi)))?;
    c.op(|a| a.sub(eax, b'0' as i32))?;
    c.op(|a| a.cmp(eax, 9))?;
    c.op(|a| a.ja(parsed))?;
    c.op(|a| a.imul_3(esi, esi, 10))?;
    c.op(|a| a.add(esi, eax))?;
    c.op(|a| a.inc(edi))?;
    c.op(|a| a.jmp(digit))?;
    c.place(&mut forever)?;
    c.op(|a| a.mov(esi, -1))?;
    c.place(&mut parsed)?;
    let load = [
        Arg::Address("objbuf", objbuf),
        Arg::Imm(64),
        Arg::Address("dll_name", dll_name),
        Arg::Address("hmod", hmod),
    ];
    Call::system(DOSLOADMODULE32, &load).emit(&mut c)?;
    fail_unless_ok(&mut c, fails[1])?;
    site(&mut c, Probes::Tnf, stub, "loaded_site", false)?;
    site(&mut c, Probes::Tnf, stub, "types_a_site", false)?;
    site(&mut c, Probes::Tnf, stub, "types_b_site", false)?;
    let query = [
        Arg::Dword("hmod", hmod),
        Arg::Imm(1),
        Arg::Imm(0),
        Arg::Address("pfn", pfn),
    ];
    Call::system(DOSQUERYPROCADDR32, &query).emit(&mut c)?;
    fail_unless_ok(&mut c, fails[2])?;
    c.op(|a| a.xor(ebx, ebx))?;
    c.place(&mut top)?;
    c.local("tick_loop")?;
    c.op(|a| a.cmp(ebx, esi))?;
    c.op(|a| a.jae(done))?;
    c.op(|a| a.push(ebx))?;
    c.data_ref("pfn")?;
    c.op(|a| a.call(dword_ptr(u64::from(pfn))))?;
    c.op(|a| a.add(esp, 4))?;
    c.op(|a| a.lea(edx, ebx + ebx))?;
    c.op(|a| a.cmp(eax, edx))?;
    c.op(|a| a.jne(fails[0]))?;
    c.op(|a| a.inc(ebx))?;
    c.op(|a| a.cmp(esi, -1))?;
    c.op(|a| a.jne(top))?;
    c.op(|a| a.mov(ecx, 20_000))?;
    c.place(&mut delay)?;
    c.op(|a| a.dec(ecx))?;
    c.op(|a| a.jnz(delay))?;
    c.op(|a| a.jmp(top))?;
    c.place(&mut done)?;
    epilogue(&mut c, &mut fails, &mut exit, 32)?;
    let code = c.finish("CODE32", "CODE", LX_CODE)?;
    link(Spec {
        format: Format::Lx,
        name: P,
        file_name: "TNFLD32.EXE",
        description: "TNFLD32.EXE: loads TNFDLL32 and calls its probed Tick (os2trace testprogs)",
        flags: LX_PROGRAM,
        segments: vec![code, data, layout::stack32()],
        exports: exports(Probes::Tnf),
        start: "main",
        stack: Some((3, STACK32)),
        stack_size: STACK32,
        auto_data: None,
        major: 0xD2,
        tracepoints: Vec::new(),
    })
}

/// Iterations of each of TNFMT32's two threads.
pub const TNFMT32_ROUNDS: u32 = 3;

const TNFMT32_PROBES: &[ProbeDef] = &[
    ProbeDef {
        name: "main_step",
        keys: "mt main",
        detail: "",
        file: "tnfmt.c",
        line: 20,
        debug: false,
        args: &[(TNF_ULONG, "i", Loc::Reg(EBX))],
        records: &[],
        site: "main_step_site",
    },
    ProbeDef {
        name: "worker_step",
        keys: "mt worker",
        detail: "",
        file: "tnfmt.c",
        line: 10,
        debug: false,
        args: &[
            (TNF_ULONG, "i", Loc::Reg(EBX)),
            (TNF_ULONG, "param", Loc::Frame(8)),
        ],
        records: &[],
        site: "worker_step_site",
    },
];

/// `DosCreateThread(ptid, pfn, param, flag, cbStack)`.
const DOSCREATETHREAD32: Ref = doscalls(311, "DosCreateThread");
/// `DosWaitThread(ptid, option)`.
const DOSWAITTHREAD32: Ref = doscalls(349, "DosWaitThread");
/// `DosSleep(msec)`.
const DOSSLEEP32: Ref = doscalls(229, "DosSleep");

/// TNFMT32.EXE: TNF probes in two threads. `main` creates a thread running
/// `worker(7)`; each thread loops [`TNFMT32_ROUNDS`] times, firing its
/// probe (`main_step`: `i`; `worker_step`: `i` and `param` from its frame)
/// and sleeping 1 ms, which switches threads; main then waits for the
/// worker (DosWaitThread) and exits 0 (1 if a call fails). Objects 1
/// `CODE32`, 2 `DATA32`, 3 `STACK`.
pub(crate) fn build_tnfmt32() -> Result<Program> {
    const P: &str = "TNFMT32";
    let base = lx_base(2);
    let mut d = Data::new();
    let tid = base + d.dword("tid", 0);
    probe_table(&mut d, 2, TNFMT32_PROBES, false);
    let data = d.finish("DATA32", "DATA", LX_DATA);

    let mut c = Code::new(P, 32)?;
    let mut fails = [c.label()];
    let mut exit = c.label();
    let mut main_top = c.label();
    let mut worker_top = c.label();
    let stub = c.label();
    let sleep = [Arg::Imm(1)];

    c.public("worker")?;
    c.op(|a| a.push(ebp))?;
    c.op(|a| a.mov(ebp, esp))?;
    c.op(|a| a.push(ebx))?;
    c.op(|a| a.xor(ebx, ebx))?;
    c.place(&mut worker_top)?;
    site(&mut c, Probes::Tnf, stub, "worker_step_site", false)?;
    Call::system(DOSSLEEP32, &sleep).emit(&mut c)?;
    c.op(|a| a.inc(ebx))?;
    c.op(|a| a.cmp(ebx, TNFMT32_ROUNDS))?;
    c.op(|a| a.jb(worker_top))?;
    c.op(|a| a.pop(ebx))?;
    c.op(|a| a.pop(ebp))?;
    c.op(|a| a.xor(eax, eax))?;
    c.op(|a| a.ret())?;

    c.public("main")?;
    let create = [
        Arg::Address("tid", tid),
        Arg::Address("worker", 0),
        Arg::Imm(7),
        Arg::Imm(0),
        Arg::Imm(0x4000),
    ];
    Call::system(DOSCREATETHREAD32, &create).emit(&mut c)?;
    fail_unless_ok(&mut c, fails[0])?;
    c.op(|a| a.xor(ebx, ebx))?;
    c.place(&mut main_top)?;
    site(&mut c, Probes::Tnf, stub, "main_step_site", false)?;
    Call::system(DOSSLEEP32, &sleep).emit(&mut c)?;
    c.op(|a| a.inc(ebx))?;
    c.op(|a| a.cmp(ebx, TNFMT32_ROUNDS))?;
    c.op(|a| a.jb(main_top))?;
    let wait = [Arg::Address("tid", tid), Arg::Imm(0)];
    Call::system(DOSWAITTHREAD32, &wait).emit(&mut c)?;
    fail_unless_ok(&mut c, fails[0])?;
    epilogue(&mut c, &mut fails, &mut exit, 32)?;
    let code = c.finish("CODE32", "CODE", LX_CODE)?;
    link(Spec {
        format: Format::Lx,
        name: P,
        file_name: "TNFMT32.EXE",
        description: "TNFMT32.EXE: TNF probes in two threads (os2trace testprogs)",
        flags: LX_PROGRAM,
        segments: vec![code, data, layout::stack32()],
        exports: exports(Probes::Tnf),
        start: "main",
        stack: Some((3, STACK32)),
        stack_size: STACK32,
        auto_data: None,
        major: 0xD4,
        tracepoints: Vec::new(),
    })
}
