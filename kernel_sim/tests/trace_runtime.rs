//! The runtime against the emulated CPU: tracepoints hit, log, run the
//! original instruction out of line and stay inserted.

use emu::{Exit, Gpr, Limits, Machine, MachineConfig, SegReg, Segment};
use kernel_sim::trace::{
    ApplyError, Dispatch, DtoSpec, DynamicTrace, Next, ObjectMapping, TrapKind,
};
use rpn_vm::parse;
use stda::{Stda, StdaFormat, Timestamp, TraceBuffer};

const CODE_BASE: u32 = 0x1_0000;

/// Real mode, code at 1000:0000, stack at 2000:FFFE.
fn machine(code: &[u8]) -> Machine {
    let mut m = Machine::new(MachineConfig::default());
    m.write_phys(CODE_BASE, code);
    m.set_segment(SegReg::Cs, Segment::real(0x1000, true));
    m.set_segment(SegReg::Ss, Segment::real(0x2000, false));
    m.set_segment(SegReg::Ds, Segment::real(0x3000, false));
    m.set_eip(0);
    m.gpr_mut()[Gpr::Esp] = 0xFFFE;
    m
}

fn spec(src: &str) -> DtoSpec {
    let file = parse("t.rpn", src).unwrap();
    DtoSpec::from_trace_program(
        &file,
        "TEST.EXE",
        vec![ObjectMapping {
            selector: 0x1000,
            flat_base: CODE_BASE,
        }],
        None,
        None,
    )
    .unwrap()
}

/// Runs to HLT, handing every exit to the runtime.
fn run(m: &mut Machine, rt: &mut DynamicTrace, buf: &mut TraceBuffer) -> Vec<Dispatch> {
    let mut seen = Vec::new();
    for _ in 0..1000 {
        let exit = m.run(Limits {
            instructions: Some(10_000),
            cycles: None,
        });
        if exit == Exit::Halted {
            return seen;
        }
        let kind = TrapKind::of(&exit).unwrap_or_else(|| panic!("unexpected exit {exit:?}"));
        let d = rt.on_trap(m, kind, buf, Timestamp::new(1, 2, 3, 4), 7);
        assert_ne!(d.next, Next::NotOurs, "unexpected exit {exit:?}");
        seen.push(d);
    }
    panic!("no HLT");
}

fn records(buf: &mut TraceBuffer) -> Vec<(u16, u16, Vec<u8>, u8)> {
    let snap = buf.get_stda();
    Stda::parse(&snap.stda)
        .unwrap()
        .records()
        .into_iter()
        .map(|r| (u16::from(r.major), r.minor, r.data, r.flags.bits()))
        .collect()
}

#[test]
fn a_tracepoint_in_a_loop_logs_every_hit_and_the_instruction_still_runs() {
    // mov ax,0x1234 / mov bx,0xABCD / mov cx,5 / L: inc ax / loop L / hlt
    let code = [
        0xB8, 0x34, 0x12, 0xBB, 0xCD, 0xAB, 0xB9, 0x05, 0x00, 0x40, 0xE2, 0xFD, 0xF4,
    ];
    let mut m = machine(&code);
    let mut rt = DynamicTrace::new();
    let mut buf = TraceBuffer::new(StdaFormat::New, 4).unwrap();
    let dto = rt.apply(&mut m, &spec("vars=1\nmajor=0xC8\nminor=1\nobject=1\noffset=9\nopcode=0x40\nPush EBX\nPush EAX\nLog WN,2\nInc V,0\n")).unwrap();
    let mut byte = [0u8];
    m.read_linear(CODE_BASE + 9, &mut byte).unwrap();
    assert_eq!(byte[0], 0xCC, "INT3 inserted");
    let seen = run(&mut m, &mut rt, &mut buf);
    assert_eq!(
        m.cpu().gpr[Gpr::Eax] & 0xFFFF,
        0x1234 + 5,
        "inc ax ran five times"
    );
    let recs = records(&mut buf);
    assert_eq!(recs.len(), 5);
    for (i, (major, minor, data, flags)) in recs.iter().enumerate() {
        let ax = 0x1234 + i as u16;
        assert_eq!((*major, *minor), (0xC8, 1));
        assert_eq!(data, &[ax as u8, (ax >> 8) as u8, 0xCD, 0xAB]);
        assert_eq!(flags & 0x08, 0x08, "dynamic flag");
    }
    let t = &rt.dtos()[dto].tracepoints[0];
    assert_eq!((t.hits, t.logged), (5, 5));
    assert_eq!(rt.dtos()[dto].vars, [5]);
    assert!(rt.overhead_cycles() >= 5 * 2 * 81);
    assert_eq!(seen.len(), 5, "five INT3s, no single steps");
    let charged: u64 = seen.iter().map(|d| d.cycles).sum();
    assert_eq!(
        charged,
        rt.overhead_cycles(),
        "each hit returns its own cost"
    );
    assert_eq!(charged, t.cycles);
    assert!(
        seen.iter()
            .all(|d| d.cycles == seen[0].cycles && d.cycles > 2 * 81 + 120),
        "every hit is charged the traps, IRETs, dispatch and its program"
    );
    m.read_linear(CODE_BASE + 9, &mut byte).unwrap();
    assert_eq!(byte[0], 0xCC, "the INT3 never left memory");
    rt.remove(&mut m, dto);
    m.read_linear(CODE_BASE + 9, &mut byte).unwrap();
    assert_eq!(byte[0], 0x40, "original restored");
}

#[test]
fn remove_and_abort_outcomes() {
    let code = [0xB9, 0x03, 0x00, 0x40, 0xE2, 0xFD, 0xF4];
    let mut m = machine(&code);
    let mut rt = DynamicTrace::new();
    let mut buf = TraceBuffer::new(StdaFormat::New, 4).unwrap();
    let dto = rt
        .apply(
            &mut m,
            &spec("major=1\nminor=1\nobject=1\noffset=3\nPush EAX\nLog DN,1\nRemove\n"),
        )
        .unwrap();
    run(&mut m, &mut rt, &mut buf);
    assert_eq!(m.cpu().gpr[Gpr::Eax] & 0xFFFF, 3);
    assert_eq!(rt.dtos()[dto].tracepoints[0].hits, 1);
    assert!(!rt.dtos()[dto].tracepoints[0].active);
    assert!(records(&mut buf).is_empty(), "Remove logs nothing");

    let mut m = machine(&code);
    let mut rt = DynamicTrace::new();
    rt.apply(
        &mut m,
        &spec("major=1\nminor=1\nobject=1\noffset=3\nAbort\n"),
    )
    .unwrap();
    run(&mut m, &mut rt, &mut buf);
    assert_eq!(rt.dtos()[0].tracepoints[0].hits, 3);
    assert!(records(&mut buf).is_empty());
}

#[test]
fn memory_is_read_through_the_guest_segments() {
    // mov ax,ds:[0] ; hlt — traced: log 4 bytes at DS:0 and the string at DS:4.
    let code = [0xA1, 0x00, 0x00, 0xF4];
    let mut m = machine(&code);
    m.write_phys(0x3_0000, b"\x11\x22\x33\x44OS/2\0");
    let mut rt = DynamicTrace::new();
    let mut buf = TraceBuffer::new(StdaFormat::New, 4).unwrap();
    rt.apply(&mut m, &spec("major=2\nminor=9\nobject=1\noffset=0\nPush W,4\nPush DS\nPush W,0\nLog MRS\nPush W,20\nPush DS\nPush W,4\nLog ARS\n")).unwrap();
    run(&mut m, &mut rt, &mut buf);
    let recs = records(&mut buf);
    assert_eq!(recs[0].2, b"\x00\x04\x00\x11\x22\x33\x44\x01\x04\x00OS/2");
    assert_eq!(m.cpu().gpr[Gpr::Eax] & 0xFFFF, 0x2211);
}

#[test]
fn applying_checks_opcodes_and_duplicates_and_patches_nothing_on_error() {
    let code = [0x9C, 0x40, 0xF4];
    let mut m = machine(&code);
    let mut rt = DynamicTrace::new();
    let bad = rt
        .apply(
            &mut m,
            &spec("major=1\nminor=1\nobject=1\noffset=1\nminor=2\nobject=1\noffset=0\n"),
        )
        .unwrap_err();
    assert!(matches!(
        bad,
        ApplyError::Untraceable {
            minor: 2,
            opcode: 0x9C,
            ..
        }
    ));
    let mut byte = [0u8];
    m.read_linear(CODE_BASE + 1, &mut byte).unwrap();
    assert_eq!(
        byte[0], 0x40,
        "first tracepoint not patched after the error"
    );
    let bad = rt
        .apply(
            &mut m,
            &spec("major=1\nminor=1\nobject=1\noffset=1\nopcode=0x41\n"),
        )
        .unwrap_err();
    assert!(matches!(
        bad,
        ApplyError::OpcodeMismatch {
            found: 0x40,
            expected: 0x41,
            ..
        }
    ));
    rt.apply(&mut m, &spec("major=1\nminor=1\nobject=1\noffset=1\n"))
        .unwrap();
    let dup = rt
        .apply(&mut m, &spec("major=1\nminor=5\nobject=1\noffset=1\n"))
        .unwrap_err();
    assert!(matches!(dup, ApplyError::DuplicateAddress { minor: 5, .. }));
    let none = rt
        .apply(&mut m, &spec("major=1\nminor=5\nobject=2\noffset=1\n"))
        .unwrap_err();
    assert!(matches!(none, ApplyError::NoSuchObject { object: 2, .. }));
}

#[test]
fn a_guest_breakpoint_that_is_not_a_tracepoint_is_the_guests() {
    let code = [0xCC, 0xF4];
    let mut m = machine(&code);
    let mut rt = DynamicTrace::new();
    let mut buf = TraceBuffer::new(StdaFormat::New, 4).unwrap();
    rt.apply(&mut m, &spec("major=1\nminor=1\nobject=1\noffset=0\n"))
        .unwrap_err();
    m.intercept(emu::vector::BP, true);
    let exit = m.run(Limits::default());
    assert_eq!(TrapKind::of(&exit), Some(TrapKind::Breakpoint));
    assert_eq!(
        rt.on_trap(
            &mut m,
            TrapKind::Breakpoint,
            &mut buf,
            Timestamp::new(0, 0, 0, 0),
            1
        ),
        Dispatch::NOT_OURS
    );
}

fn descriptor(base: u32, limit: u32, access: u8) -> [u8; 8] {
    let mut d = [0u8; 8];
    d[0..2].copy_from_slice(&(limit as u16).to_le_bytes());
    d[2..4].copy_from_slice(&(base as u16).to_le_bytes());
    d[4] = (base >> 16) as u8;
    d[5] = access;
    d[6] = ((limit >> 16) & 0xF) as u8;
    d[7] = (base >> 24) as u8;
    d
}

#[test]
fn protected_mode_selectors_fault_with_their_tokens() {
    let code = [0x40, 0xF4]; // inc ax ; hlt
    let mut m = machine(&code);
    // GDT at 0x500: null, code 0x08, stack 0x10, LDT 0x18.
    let gdt = [
        descriptor(0, 0, 0),
        descriptor(CODE_BASE, 0xFFFF, 0x9B),
        descriptor(0x2_0000, 0xFFFF, 0x93),
        descriptor(0x600, 0x1F, 0x82),
    ];
    // LDT at 0x600: 0x04 data (limit 0xFF), 0x0C not present, 0x14 execute-only code.
    let ldt = [
        descriptor(0x3_0000, 0xFF, 0x93),
        descriptor(0x3_1000, 0xFF, 0x13),
        descriptor(0x3_2000, 0xFF, 0x99),
    ];
    m.write_phys(0x500, &gdt.concat());
    m.write_phys(0x600, &ldt.concat());
    m.write_phys(0x3_0000, b"LDT!");
    {
        let cpu = m.cpu_mut_flush_tlb();
        cpu.cr0 |= 1;
        cpu.gdtr = emu::DescTable {
            base: 0x500,
            limit: 0x1F,
        };
        cpu.ldtr = Segment {
            selector: 0x18,
            base: 0x600,
            limit: 0x17,
            access: 0x82,
            flags: 0,
        };
    }
    m.set_segment(
        SegReg::Cs,
        Segment {
            selector: 0x08,
            base: CODE_BASE,
            limit: 0xFFFF,
            access: 0x9B,
            flags: 0,
        },
    );
    m.set_segment(
        SegReg::Ss,
        Segment {
            selector: 0x10,
            base: 0x2_0000,
            limit: 0xFFFF,
            access: 0x93,
            flags: 0,
        },
    );
    let mut rt = DynamicTrace::new();
    let mut buf = TraceBuffer::new(StdaFormat::New, 4).unwrap();
    let cases = [
        (
            "Push W,4\nPush W,0x04\nPush W,0\nLog MRS",
            vec![0, 4, 0, b'L', b'D', b'T', b'!'],
        ),
        (
            "Push W,4\nPush W,0x0C\nPush W,0x10\nLog MRS",
            vec![0xFE, 4, 0, 0x10, 0, 0x0C, 0],
        ),
        (
            "Push W,4\nPush W,0x04\nPush W,0xFE\nLog MRS",
            vec![0xFF, 4, 0, 0x00, 0x01, 0x04, 0],
        ),
        (
            "Push W,4\nPush W,0x14\nPush W,0\nLog MRS",
            vec![0xFF, 4, 0, 0, 0, 0x14, 0],
        ),
        (
            "Push W,4\nPush W,0x24\nPush W,0\nLog MRS",
            vec![0xFF, 4, 0, 0, 0, 0x24, 0],
        ),
        (
            "Push W,4\nPush W,0x00\nPush W,0\nLog MRS",
            vec![0xFF, 4, 0, 0, 0, 0, 0],
        ),
    ];
    for (i, (body, want)) in cases.iter().enumerate() {
        let minor = i as u16 + 1;
        let src = format!("major=3\nminor={minor}\nobject=1\noffset=0\n{body}\n");
        let dto = rt.apply(&mut m, &spec(&src)).unwrap();
        m.set_eip(0);
        m.set_halted(false);
        run(&mut m, &mut rt, &mut buf);
        rt.remove(&mut m, dto);
        let recs = records(&mut buf);
        assert_eq!(recs.len(), 1, "{body}");
        assert_eq!(&recs[0].2, want, "{body}");
        let incomplete = recs[0].3 & 0x10 != 0;
        assert_eq!(incomplete, i > 0, "{body}");
        assert_eq!(recs[0].3 & 0x04, 0x04, "protect-mode flag");
    }
}

#[test]
fn trace_on_selections_by_minor_group_and_type() {
    use kernel_sim::trace::{SelectError, Selection, select::split_operand};
    let corpus = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/formats/trcust-corpus/tg_both_use/expect/TG_BOTH_USE.TDF"
    );
    let tdf = tdf::Tdf::parse(&std::fs::read(corpus).unwrap()).unwrap();
    // TYPE=(API,PRE) = 0x0A, GROUP=FS = 3, minor 1.
    let record = &tdf.records[0];
    let sel = |spec: &str| Selection::parse(spec, &tdf).unwrap().matches(record);
    assert!(sel(""));
    assert!(sel("1"));
    assert!(sel("0x1-5,9"));
    assert!(!sel("2-10"));
    assert!(sel("fs"));
    assert!(!sel("MEM"));
    assert!(sel("FS:PRE+POST"));
    assert!(!sel("FS:POST"));
    assert!(sel("API"));
    assert!(!sel("SYS,POST"));
    assert_eq!(
        Selection::parse("NOPE", &tdf),
        Err(SelectError::UnknownName {
            item: 1,
            name: "NOPE".into()
        })
    );
    assert_eq!(
        Selection::parse("1,PRE:API", &tdf),
        Err(SelectError::NotAGroup {
            item: 2,
            name: "PRE".into()
        })
    );
    assert!(matches!(
        Selection::parse("5-2", &tdf),
        Err(SelectError::BadMinor { item: 1, .. })
    ));
    assert_eq!(
        split_operand("KERNEL(FS,TK:PRE+POST)"),
        ("KERNEL", Some("FS,TK:PRE+POST"))
    );
    assert_eq!(split_operand("HELLO"), ("HELLO", None));
    let spec = DtoSpec::from_tdf(&tdf, &Selection::parse("FS", &tdf).unwrap(), vec![]).unwrap();
    assert_eq!(spec.tracepoints.len(), 1);
    assert_eq!(
        (spec.tracepoints[0].major, spec.tracepoints[0].object),
        (0xC6, record.object)
    );
    let none = DtoSpec::from_tdf(&tdf, &Selection::parse("MEM", &tdf).unwrap(), vec![]).unwrap();
    assert!(none.tracepoints.is_empty());
}

/// A DTO is the module's: a second copy of the code (another address
/// space's, here other physical memory at the same linear address) is a
/// second instance; Remove at a hit in one copy takes the tracepoint out
/// of both, TRACE OFF (`remove`) and a process's end (`detach`) restore
/// every byte they inserted.
#[test]
fn remove_and_trace_off_take_a_tracepoint_out_of_every_copy() {
    const OTHER: u32 = 0x4_0000;
    let code = [0xB9, 0x03, 0x00, 0x40, 0xE2, 0xFD, 0xF4];
    let byte = |m: &Machine, at: u32| {
        let mut b = [0u8];
        m.read_phys(at, &mut b);
        b[0]
    };
    let objects = vec![ObjectMapping {
        selector: 0x1000,
        flat_base: CODE_BASE,
    }];
    let twice = |m: &mut Machine, rt: &mut DynamicTrace, src: &str| {
        m.write_phys(CODE_BASE + OTHER, &code);
        let d = rt.define(&spec(src), "TEST");
        rt.attach(m, d, 1, objects.clone(), &|l| Some(l)).unwrap();
        rt.attach(m, d, 2, objects.clone(), &|l| Some(l + OTHER))
            .unwrap();
        assert_eq!(byte(m, CODE_BASE + 3), 0xCC);
        assert_eq!(byte(m, CODE_BASE + OTHER + 3), 0xCC);
        assert_eq!(rt.dtos()[d].pids, [1, 2]);
        d
    };
    // Remove at a hit in the first copy: both copies are themselves again.
    let mut m = machine(&code);
    let mut rt = DynamicTrace::new();
    let mut buf = TraceBuffer::new(StdaFormat::New, 4).unwrap();
    let d = twice(
        &mut m,
        &mut rt,
        "major=1\nminor=1\nobject=1\noffset=3\nRemove\n",
    );
    run(&mut m, &mut rt, &mut buf);
    assert_eq!(rt.dtos()[d].tracepoints[0].hits, 1);
    assert_eq!(byte(&m, CODE_BASE + 3), 0x40);
    assert_eq!(byte(&m, CODE_BASE + OTHER + 3), 0x40, "the other copy too");
    assert_eq!(m.tracepoint_phys(CODE_BASE + OTHER + 3), None);
    // TRACE OFF, and the end of the second copy's process.
    let mut m = machine(&code);
    let mut rt = DynamicTrace::new();
    let d = twice(&mut m, &mut rt, "major=1\nminor=1\nobject=1\noffset=3\n");
    rt.detach(&mut m, 2);
    assert_eq!(byte(&m, CODE_BASE + OTHER + 3), 0x40);
    assert_eq!(byte(&m, CODE_BASE + 3), 0xCC, "the first copy stays");
    assert_eq!(rt.dtos()[d].instances.len(), 1);
    rt.remove(&mut m, d);
    assert_eq!(byte(&m, CODE_BASE + 3), 0x40);
    assert!(!rt.dtos()[d].tracepoints[0].active);
    // A copy loaded after TRACE OFF gets nothing.
    rt.attach(&mut m, d, 3, objects, &|l| Some(l + OTHER))
        .unwrap();
    assert_eq!(byte(&m, CODE_BASE + OTHER + 3), 0x40);
    assert_eq!(rt.dtos()[d].pids, [1, 2]);
    let left: Vec<(u16, bool)> = rt.dtos()[d]
        .instances
        .values()
        .map(|i| (i.pid, i.sites.iter().any(|s| s.inserted)))
        .collect();
    assert_eq!(left, [(1, false)], "the first copy, with nothing in it");
}
