//! The interpreter, instruction by instruction, written as trace programs.

use rpn_vm::examples::{EXAMPLES, SAMPLE_MESSAGE, sample_machine};
use rpn_vm::{
    FakeMachine, FakeSegment, FaultKind, Hit, HitOutcome, Interpreter, Program, Reg, parse,
};

/// What one hit produced, owned.
#[derive(Debug, PartialEq)]
struct Ran {
    outcome: &'static str,
    major: u16,
    minor: u16,
    data: Vec<u8>,
    incomplete: bool,
    cycles: u64,
}

fn run_on(machine: &mut FakeMachine, body: &str, vars: &mut [u32], logmax: usize) -> Ran {
    let src = format!("vars={}\nmajor=0x10\nminor=7\n{body}", vars.len());
    let file = parse("t.rpn", &src).unwrap_or_else(|e| panic!("{e}"));
    let program = &file.tracepoints[0].program;
    run_program(machine, program, vars, logmax)
}

fn run_program(
    machine: &mut FakeMachine,
    program: &Program,
    vars: &mut [u32],
    logmax: usize,
) -> Ran {
    let mut interp = Interpreter::new();
    let result = interp.run(
        program,
        machine,
        vars,
        Hit {
            major: 0x10,
            minor: 7,
            logmax,
        },
    );
    let name = result.outcome.name();
    match result.outcome {
        HitOutcome::Logged(r) => Ran {
            outcome: name,
            major: r.major,
            minor: r.minor,
            data: r.data.to_vec(),
            incomplete: r.incomplete,
            cycles: result.cycles,
        },
        _ => Ran {
            outcome: name,
            major: 0,
            minor: 0,
            data: vec![],
            incomplete: false,
            cycles: result.cycles,
        },
    }
}

fn run(body: &str) -> Ran {
    run_on(&mut sample_machine(), body, &mut [0; 4], 512)
}

fn dwords(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn examples_of_the_seed_log_what_they_say() {
    let expected: [Vec<u8>; 5] = [
        vec![0x34, 0x12, 0xCD, 0xAB],
        dwords(&[0x2A11, 0x3FF20, 0x1234]),
        [vec![0, 4, 0], 0xCAFE_F00Du32.to_le_bytes().to_vec()].concat(),
        vec![
            0, 9, 0, 0x34, 0x12, 0x0F, 0x00, 0x01, 0x00, 0x02, 0x00, 0x40,
        ],
        [vec![0, 16, 0], SAMPLE_MESSAGE.to_vec()].concat(),
    ];
    for (example, want) in EXAMPLES.iter().zip(expected) {
        let file = parse("ex.rpn", example.source).unwrap();
        let ran = run_program(
            &mut sample_machine(),
            &file.tracepoints[0].program,
            &mut [],
            512,
        );
        assert_eq!(ran.outcome, "logged", "{}", example.title);
        assert!(!ran.incomplete, "{}", example.title);
        assert_eq!(ran.data, want, "{}", example.title);
        assert!(ran.cycles > 0);
    }
}

#[test]
fn every_register_is_pushed_as_the_trap_frame_holds_it() {
    let mut m = FakeMachine::new();
    for (i, reg) in Reg::ALL.iter().enumerate() {
        m.set_reg(*reg, 0x1000 + i as u32);
    }
    let names = [
        "EAX", "ECX", "EDX", "EBX", "ESP", "EBP", "ESI", "EDI", "ES", "CS", "SS", "DS", "EFlags",
        "EIP", "FS", "GS",
    ];
    for (i, name) in names.iter().enumerate() {
        let ran = run_on(&mut m, &format!("Push {name}\nLog DN,1\n"), &mut [], 512);
        assert_eq!(ran.data, dwords(&[0x1000 + i as u32]), "{name}");
    }
}

#[test]
fn immediates_and_arithmetic() {
    assert_eq!(run("Push W,7\nPush W,5\nSub\nLog DN,1").data, dwords(&[2]));
    assert_eq!(
        run("Push W,5\nPush W,7\nSub\nLog DN,1").data,
        dwords(&[0xFFFF_FFFE])
    );
    assert_eq!(
        run("Push D,0xFFFFFFFF\nPush W,2\nAdd\nLog DN,1").data,
        dwords(&[1])
    );
    assert_eq!(
        run("Push D,0x10000\nPush D,0x10001\nMul\nLog DN,1").data,
        dwords(&[0x10000])
    );
    assert_eq!(
        run("Push W,0xF0F\nPush W,0xFF\nAnd\nLog DN,1").data,
        dwords(&[0x0F])
    );
    assert_eq!(
        run("Push W,0xF00\nPush W,0xF\nOr\nLog DN,1").data,
        dwords(&[0xF0F])
    );
    assert_eq!(
        run("Push W,0xFF\nPush W,0xF\nXor\nLog DN,1").data,
        dwords(&[0xF0])
    );
    assert_eq!(run("Push W,0\nNeg\nLog DN,1").data, dwords(&[0xFFFF_FFFF]));
    assert_eq!(
        run("Push W,1\nPush W,2\nXchg\nLog DN,2").data,
        dwords(&[1, 2])
    );
    assert_eq!(run("Push D,-2\nLog DN,1").data, dwords(&[0xFFFF_FFFE]));
}

#[test]
fn conversions() {
    assert_eq!(
        run("Push D,0x12345678\nCnvrt DXS\nLog DN,2").data,
        dwords(&[0x5678, 0x1234])
    );
    assert_eq!(
        run("Push W,0x1234\nPush W,0x5678\nCnvrt SXD\nLog DN,1").data,
        dwords(&[0x1234_5678])
    );
    // FXS pushes selector then offset: tiled selector of 0x3F123 is 0x1F.
    assert_eq!(
        run("Push D,0x3F123\nCnvrt FXS\nLog DN,2").data,
        dwords(&[0xF123, 0x1F])
    );
    // SXF pops the selector first, then the offset.
    assert_eq!(
        run("Push W,0xF123\nPush W,0x1F\nCnvrt SXF\nLog DN,1").data,
        dwords(&[0x3F123])
    );
    // Outside the compatibility region: the hit ends as Exit, incomplete.
    let ran = run("Push W,1\nLog DN,1\nPush D,0x20000000\nCnvrt FXS\nPush W,2\nLog DN,1");
    assert_eq!(
        (ran.outcome, ran.incomplete, ran.data),
        ("logged", true, dwords(&[1]))
    );
    let ran = run("Push W,0\nPush W,0x10\nCnvrt SXF\nLog DN,1");
    assert_eq!(
        (ran.outcome, ran.incomplete, ran.data.len()),
        ("logged", true, 0)
    );
}

#[test]
fn variables_immediate_and_indexed() {
    let mut vars = [0u32; 4];
    let mut m = sample_machine();
    let ran = run_on(
        &mut m,
        "Push W,9\nMove V,2\nInc V,2\nInc V,3\nPush V,2\nLog DN,2",
        &mut vars,
        512,
    );
    assert_eq!(ran.data, dwords(&[10, 9]));
    assert_eq!(vars, [0, 0, 10, 1]);
    // Or V ORs TOS in without popping it.
    let ran = run_on(&mut m, "Push W,0x30\nOr V,0\nLog DN,1", &mut vars, 512);
    assert_eq!((ran.data, vars[0]), (dwords(&[0x30]), 0x30));
    // Push VIi and Inc VIi peek the index.
    let ran = run_on(
        &mut m,
        "Push W,2\nInc VIi\nPush VIi\nLog DN,2",
        &mut vars,
        512,
    );
    assert_eq!((ran.data, vars[2]), (dwords(&[11, 2]), 11));
}

#[test]
fn move_vii_leaves_the_stack_as_it_was() {
    let mut vars = [0u32; 4];
    let ran = run_on(
        &mut sample_machine(),
        "Push W,0x77\nPush W,1\nMove VIi\nLog DN,2",
        &mut vars,
        512,
    );
    assert_eq!(ran.data, dwords(&[1, 0x77]));
    assert_eq!(vars, [0, 0x77, 0, 0]);
}

#[test]
fn indexed_variable_out_of_range_is_an_error_that_keeps_earlier_changes() {
    let mut vars = [0u32; 2];
    let ran = run_on(
        &mut sample_machine(),
        "Inc V,0\nPush W,2\nInc VIi\nLog DN,1",
        &mut vars,
        512,
    );
    assert_eq!(ran.outcome, "error");
    assert_eq!(vars, [1, 0]);
    for body in ["Push W,9\nPush VIi", "Push W,1\nPush W,5\nMove VIi"] {
        assert_eq!(
            run_on(&mut sample_machine(), body, &mut [0; 2], 512).outcome,
            "error"
        );
    }
}

#[test]
fn more_than_sixteen_pushes_wrap_around_the_circular_stack() {
    // Seventeen pushes overwrite the first; the kernel accepts it, the
    // verifier (TRCUST message 97) does not.
    let mut src = String::new();
    for v in 1..=17 {
        src.push_str(&format!("Push W,{v}\n"));
    }
    src.push_str("Log DN,17\n");
    let full = format!("minor=1\n{src}");
    let err = parse("wrap.rpn", &full).unwrap_err();
    assert!(
        err.to_string().contains("RPN stack limit of 16 exceeded"),
        "{err}"
    );
    let mut code = Vec::new();
    for v in 1..=17u8 {
        code.extend([0x10, v, 0]);
    }
    code.extend([0x21, 17]);
    let program = Program::load_without_stack_limit(&code, 0).unwrap();
    let ran = run_program(&mut sample_machine(), &program, &mut [], 512);
    let mut want: Vec<u32> = (2..=17).rev().collect();
    want.push(17);
    assert_eq!(ran.data, dwords(&want));
}

#[test]
fn pop_n_rotates_and_popping_past_the_bottom_reads_older_slots() {
    assert_eq!(
        run("Push W,1\nPush W,2\nPush W,3\nPop N,1\nLog DN,1").data,
        dwords(&[2])
    );
    // Pop N,2 then a push overwrites the slot of the 2.
    assert_eq!(
        run("Push W,1\nPush W,2\nPush W,3\nPop N,2\nPush W,9\nLog DN,2").data,
        dwords(&[9, 1])
    );
    // Popping past what was pushed reads the zeroed slots, then wraps.
    assert_eq!(run("Push W,5\nLog DN,3").data, dwords(&[5, 0, 0]));
    assert_eq!(run("Push W,5\nPop N,16\nLog DN,1").data, dwords(&[5]));
}

#[test]
fn jumps_are_forward_and_conditional_ones_peek() {
    assert_eq!(run("Jmp N,0\nPush W,1\nLog DN,1").data, dwords(&[1]));
    assert_eq!(
        run("Jmp N,over\nPush W,1\nover: Push W,2\nLog DN,1").data,
        dwords(&[2])
    );
    // The tested value stays on the stack.
    assert_eq!(
        run("Push W,0\nJmp ZN,z\nPush W,1\nz: Log DN,1").data,
        dwords(&[0])
    );
    assert_eq!(
        run("Push W,3\nJmp ZN,z\nPush W,1\nz: Log DN,1").data,
        dwords(&[1])
    );
    assert_eq!(
        run("Push D,-1\nJmp NN,n\nAbort\nn: Log DN,1").data,
        dwords(&[0xFFFF_FFFF])
    );
    assert_eq!(
        run("Push D,0x80000000\nJmp PN,p\nLog DN,1\nExit\np: Abort").data,
        dwords(&[0x8000_0000])
    );
    assert_eq!(
        run("Push W,1\nJmp PN,p\nAbort\np: Log DN,1").data,
        dwords(&[1])
    );
    // A jump to exactly the end ends the program, logging what there is.
    assert_eq!(run("Push W,4\nLog DN,1\nJmp N,1\nAbort").data, dwords(&[4]));
}

#[test]
fn log_wn_past_the_limit_logs_what_fits_and_marks_incomplete() {
    let ran = run_on(
        &mut sample_machine(),
        "Push W,3\nPush W,2\nPush W,1\nLog WN,3\nPush W,9\nLog WN,1",
        &mut [],
        5,
    );
    assert_eq!((ran.data, ran.incomplete), (vec![1, 0, 2, 0], true));
    let ran = run_on(
        &mut sample_machine(),
        "Push W,1\nPush W,2\nLog DN,2",
        &mut [],
        7,
    );
    assert_eq!((ran.data, ran.incomplete), (dwords(&[2]), true));
}

#[test]
fn a_memory_item_that_does_not_fit_logs_nothing() {
    let body = "Push W,1\nLog WN,1\nPush W,8\nPush SS\nPush ESP\nLog MRS\nPush W,7\nLog WN,1";
    let ran = run_on(&mut sample_machine(), body, &mut [], 12);
    assert_eq!((ran.data, ran.incomplete), (vec![1, 0], true));
    // Exactly fitting is fine: 2 + 3 + 8 = 13.
    let ran = run_on(&mut sample_machine(), body, &mut [], 15);
    assert_eq!(ran.data.len(), 2 + 11 + 2);
    assert!(!ran.incomplete);
}

#[test]
fn an_empty_item_still_needs_room_for_its_prefix() {
    // Regression (found by the robust proptest): Log MRF of length 0 with
    // no room left logged its 3-byte prefix past the limit.
    for logmax in 0..3 {
        let ran = run_on(&mut sample_machine(), "Log MRF", &mut [], logmax);
        assert_eq!((ran.data.len(), ran.incomplete), (0, true));
        let ran = run_on(&mut sample_machine(), "Log ARS", &mut [], logmax);
        assert_eq!((ran.data.len(), ran.incomplete), (0, true));
    }
    let ran = run_on(&mut sample_machine(), "Log MRF", &mut [], 3);
    assert_eq!((ran.data, ran.incomplete), (vec![0, 0, 0], false));
}

#[test]
fn strings_stop_at_nul_which_is_not_logged() {
    let mut m = sample_machine();
    m.write(0x20100, b"C:\\CONFIG.SYS\0junk");
    let ran = run_on(&mut m, "Push W,64\nPush D,0x20100\nLog ARF", &mut [], 512);
    assert_eq!(ran.data, [&[1u8, 13, 0][..], b"C:\\CONFIG.SYS"].concat());
    let ran = run_on(
        &mut m,
        "Push W,6\nPush DS\nPush W,0x100\nLog ARS",
        &mut [],
        512,
    );
    assert_eq!(ran.data, [&[1u8, 6, 0][..], b"C:\\CON"].concat());
    // A string longer than the room left is not logged at all.
    let ran = run_on(&mut m, "Push W,64\nPush D,0x20100\nLog ARF", &mut [], 10);
    assert_eq!((ran.data.len(), ran.incomplete), (0, true));
}

#[test]
fn each_fault_token_logs_its_address_and_ends_the_hit() {
    let mut m = sample_machine();
    m.add_selector(
        0x0027,
        FakeSegment {
            base: 0x5_0000,
            limit: 0xFF,
            present: false,
        },
    );
    m.add_selector(
        0x002F,
        FakeSegment {
            base: 0x6_0000,
            limit: 0x1FFF,
            present: true,
        },
    );
    m.mark_not_present(0x6_1000);
    let cases: [(&str, FaultKind, u32); 6] = [
        (
            "Push W,4\nPush W,0x33\nPush W,0x10\nLog MRS",
            FaultKind::InvalidSelector,
            0x0033_0010,
        ),
        (
            "Push W,4\nPush W,0x27\nPush W,0x10\nLog MRS",
            FaultKind::SelectorNotPresent,
            0x0027_0010,
        ),
        (
            "Push W,4\nPush W,0x2F\nPush W,0x0FFE\nLog MRS",
            FaultKind::PageNotPresent,
            0x0006_1000,
        ),
        (
            "Push W,4\nPush W,0x2F\nPush W,0x2000\nLog MRS",
            FaultKind::InvalidSelector,
            0x002F_2000,
        ),
        (
            "Push W,4\nPush D,0x61010\nLog MRF",
            FaultKind::PageNotPresent,
            0x0006_1010,
        ),
        (
            "Push W,0x2F\nPush W,0x1000\nPush WIS",
            FaultKind::PageNotPresent,
            0x0006_1000,
        ),
    ];
    for (body, kind, address) in cases {
        let ran = run_on(
            &mut m,
            &format!("Push W,0xAA\nLog WN,1\n{body}\nPush W,0xBB\nLog WN,1"),
            &mut [],
            512,
        );
        let mut want = vec![0xAA, 0, kind.token(), 4, 0];
        want.extend(address.to_le_bytes());
        assert_eq!(
            (ran.outcome, ran.incomplete, &ran.data),
            ("logged", true, &want),
            "{body}"
        );
    }
    for body in [
        "Push W,0x33\nPush W,0\nPush SIS",
        "Push D,0x61000\nPush FIF",
        "Push W,9\nPush W,0x33\nPush W,0\nLog ARS",
    ] {
        let ran = run_on(&mut m, body, &mut [], 512);
        assert_eq!(ran.data.len(), 7, "{body}");
        assert!(ran.incomplete);
    }
}

#[test]
fn indirect_pushes_fetch_words_and_pointers() {
    let mut m = sample_machine();
    m.add_object(3, 0x002F, 0x6_0000);
    // WIS: the word at SS:SP.
    assert_eq!(
        run_on(
            &mut m,
            "Push SS\nPush ESP\nPush WIS\nLog DN,1",
            &mut [],
            512
        )
        .data,
        dwords(&[0x1234])
    );
    // SIS: the dword 0002:0001 at SS:SP+4, selector pushed first, so the
    // offset pops first.
    let ran = run_on(
        &mut m,
        "Push SS\nPush ESP\nPush W,4\nAdd\nPush SIS\nLog DN,2",
        &mut [],
        512,
    );
    assert_eq!(ran.data, dwords(&[0x0001, 0x0002]));
    // FIF: the dword at a flat address.
    assert_eq!(
        run_on(&mut m, "Push D,0x3FF30\nPush FIF\nLog DN,1", &mut [], 512).data,
        dwords(&[0xCAFE_F00D])
    );
    // OXS and OXF give an object's selector and flat base; unknown gives 0.
    assert_eq!(
        run_on(
            &mut m,
            "Push OXS,3\nPush OXF,3\nPush OXS,9\nLog DN,3",
            &mut [],
            512
        )
        .data,
        dwords(&[0, 0x6_0000, 0x2F])
    );
}

#[test]
fn setmaj_and_setmin_override_the_codes() {
    let ran = run("SetMaj W,0x1C5\nSetMin W,0x42");
    assert_eq!((ran.major, ran.minor), (0x1C5, 0x42));
    let ran = run("Push D,0x12345678\nSetMin\nSetMaj\nLog DN,1");
    assert_eq!(
        (ran.major, ran.minor, ran.data),
        (0x5678, 0x5678, dwords(&[0x1234_5678]))
    );
    let ran = run("Push W,1");
    assert_eq!((ran.major, ran.minor), (0x10, 7));
}

#[test]
fn abort_remove_sysdump_and_exit() {
    let mut vars = [0u32; 1];
    let ran = run_on(
        &mut sample_machine(),
        "Inc V,0\nPush W,1\nLog DN,1\nAbort",
        &mut vars,
        512,
    );
    assert_eq!((ran.outcome, vars[0]), ("aborted", 1));
    assert_eq!(run("Remove\nPush W,1").outcome, "removed");
    assert_eq!(run("Push W,1\nLog DN,1\nSysDump").outcome, "sysdump");
    let ran = run("Push W,1\nLog DN,1\nExit\nPush W,2\nLog DN,1");
    assert_eq!(
        (ran.outcome, ran.data, ran.incomplete),
        ("logged", dwords(&[1]), false)
    );
    let ran = run("");
    assert_eq!((ran.outcome, ran.data.len()), ("logged", 0));
}

#[test]
fn cycles_follow_the_table() {
    let push = run("Push W,1").cycles;
    let two = run("Push W,1\nPush W,2").cycles;
    assert_eq!(two, 2 * push);
    let short = run("Push W,1\nPush D,0x20040\nLog MRF").cycles;
    let long = run("Push W,16\nPush D,0x20040\nLog MRF").cycles;
    assert_eq!(
        long - short,
        15 * u64::from(rpn_vm::Op::LogMrf.info().cycles_per_unit)
    );
}
