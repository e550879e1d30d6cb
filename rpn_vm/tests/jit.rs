//! The native-code tier returns exactly what the interpreter returns: for
//! random verified programs, the seed's examples and the benchmark program,
//! on machines with faults, not-present pages and selectors, small and
//! large log limits, and variable indices out of range.
#![cfg(target_arch = "x86_64")]

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use rpn_vm::examples::{EXAMPLES, sample_machine};
use rpn_vm::jit::Compiled;
use rpn_vm::opcode::{OPCODES, Op};
use rpn_vm::{Hit, HitOutcome, Instr, Interpreter, Program, Reg, parse};

mod support;

use support::{after, both, hit, summary};

/// Register values that make reads, selectors and CRMA hit every case.
const VALUES: [u32; 16] = [
    0,
    1,
    2,
    3,
    0x17,
    0x1F,
    0x27,
    0x2F,
    0x3_FF00,
    0x2_0040,
    0x1_0000,
    0x6_0010,
    0x3_FFFC,
    0xFFFF_FFFF,
    0x8000_0000,
    0x2000_0000,
];

/// A random instruction; never a jump when `jumps` is false. Variable
/// indices below 5 (some beyond the variables), counts mostly below 6,
/// sometimes up to 39 (past the 16 slots).
fn arb_instr(jumps: bool) -> impl Strategy<Value = Instr> {
    (any::<prop::sample::Index>(), any::<u32>()).prop_map(move |(index, operand)| {
        let ops: Vec<Op> = OPCODES
            .iter()
            .map(|i| i.op)
            .filter(|op| jumps || !op.is_jump())
            .collect();
        let op = ops[index.index(ops.len())];
        let mut operand = operand & op.operand().max();
        if matches!(op, Op::PushV | Op::MoveV | Op::IncV | Op::OrV) {
            operand %= 5;
        }
        if matches!(op, Op::LogDn | Op::LogWn | Op::PopN) {
            operand = if operand & 0x80 != 0 {
                operand % 40
            } else {
                operand % 6
            };
        }
        if matches!(op, Op::PushW | Op::PushD) && operand & 1 == 0 {
            operand %= 8;
        }
        Instr::with(op, operand)
    })
}

/// A program made of random instructions and guarded regions: a
/// conditional or plain jump over random non-jump instructions padded to
/// leave the stack index as it was, so that most programs compile. Loose
/// jumps are fixed up to land forward on a boundary or the end.
fn arb_program() -> impl Strategy<Value = Vec<u8>> {
    let jump = prop::sample::select(vec![Op::JmpZn, Op::JmpNn, Op::JmpPn, Op::JmpN]);
    let region = (jump, prop::collection::vec(arb_instr(false), 0..6));
    let piece = prop_oneof![
        3 => arb_instr(true).prop_map(|i| vec![i]),
        2 => region.prop_map(|(jump, body)| {
            let mut delta: i32 = 0;
            for i in &body {
                let (pops, pushes) = i.op.stack_effect(i.operand);
                delta += pushes as i32 - pops as i32;
            }
            let mut body = body;
            let delta = delta.rem_euclid(16);
            if delta != 0 {
                body.push(Instr::with(Op::PopN, delta as u32));
            }
            let len: usize = body.iter().map(Instr::len).sum();
            let mut out = vec![Instr::with(jump, len as u32)];
            out.extend(body);
            out
        }),
    ];
    prop::collection::vec(piece, 0..14).prop_map(|pieces| {
        let mut instrs: Vec<Instr> = Vec::new();
        // Loose jumps, and the end of each instruction.
        let mut loose = Vec::new();
        let mut ends = Vec::new();
        let mut len = 0;
        for piece in pieces {
            let piece_len: usize = piece.iter().map(Instr::len).sum();
            if len + piece_len > 255 {
                break;
            }
            if piece.len() == 1 && piece[0].op.is_jump() {
                loose.push(instrs.len());
            }
            for i in piece {
                len += i.len();
                ends.push(len);
                instrs.push(i);
            }
        }
        for i in loose {
            let later = &ends[i..];
            let pick = later[instrs[i].operand as usize % later.len()];
            instrs[i].operand = (pick - ends[i]) as u32;
        }
        rpn_vm::instr::encode_all(&instrs)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(4000)))]

    #[test]
    fn native_runs_are_the_interpreters(
        code in arb_program(),
        picks in prop::collection::vec(0usize..16, 16),
        raw in any::<[u32; 16]>(),
        nvars in 0usize..5,
        logmax in prop_oneof![0usize..48, Just(512usize), Just(100_000usize)],
    ) {
        let regs: [u32; 16] = std::array::from_fn(|i| {
            if picks[i] < 14 { VALUES[picks[i]] } else { raw[i] }
        });
        let vars: Vec<u32> = (0..nvars as u32).map(|i| i % 3).collect();
        // Verified for 4 variables, run with `nvars`: indices out of range
        // at run time too.
        let loads = [Program::load(&code, 4), Program::load_without_stack_limit(&code, 4)];
        for program in loads.into_iter().flatten() {
            let (interpreted, native) = both(&program, &regs, &vars, hit(logmax));
            if let Some(native) = native {
                prop_assert_eq!(native, interpreted, "program {:02X?}", code);
            }
        }
    }
}

/// A compiled program can live beside its program in shared state.
#[test]
fn compiled_programs_are_send_and_sync() {
    fn shareable<T: Send + Sync>(_: &T) {}
    let (program, _, _) = assemble("minor=1\nPush EAX\nLog DN,1\n");
    let compiled = Compiled::new(&program).unwrap();
    shareable(&compiled);
    // And runs the same on another thread.
    let result = std::thread::spawn(move || {
        let mut interp = Interpreter::new();
        let mut m = sample_machine();
        summary(compiled.run(&mut interp, &mut m, &mut [], hit(512)))
    })
    .join()
    .unwrap();
    assert_eq!(
        result.0,
        "logged 0010/0007 incomplete=false [34, 12, 00, 00]"
    );
}

/// Most programs of the generator compile, so the property above tests the
/// native code rather than skipping it.
#[test]
fn most_generated_programs_compile() {
    let mut runner = TestRunner::deterministic();
    let strategy = arb_program();
    let (mut loaded, mut compiled) = (0, 0);
    for _ in 0..2000 {
        let code = strategy.new_tree(&mut runner).unwrap().current();
        if let Ok(program) = Program::load_without_stack_limit(&code, 4) {
            loaded += 1;
            compiled += usize::from(Compiled::new(&program).is_some());
        }
    }
    assert!(loaded > 1500, "{loaded} loaded");
    assert!(
        compiled * 10 > loaded * 6,
        "{compiled} of {loaded} compiled"
    );
}

fn assemble(src: &str) -> (Program, Hit, usize) {
    let file = parse("t.rpn", src).unwrap();
    let tp = &file.tracepoints[0];
    let hit = Hit {
        major: 0xC8,
        minor: tp.minor,
        logmax: file.header.logmax() as usize,
    };
    (tp.program.clone(), hit, file.header.vars() as usize)
}

/// The registers of the sample machine.
fn sample_regs() -> [u32; 16] {
    let m = sample_machine();
    Reg::ALL.map(|r| rpn_vm::TracedMachine::reg(&m, r))
}

#[test]
fn the_seed_examples_compile_and_match() {
    for (i, example) in EXAMPLES.iter().enumerate() {
        let (program, hit, _) = assemble(example.source);
        assert!(Compiled::new(&program).is_some(), "example {}", i + 1);
        for logmax in [0, 3, 5, 9, 12, 19, 512] {
            let (interpreted, native) = both(&program, &sample_regs(), &[], Hit { logmax, ..hit });
            assert_eq!(native.as_ref(), Some(&interpreted), "example {}", i + 1);
        }
        // The full record is logged.
        let (interpreted, _) = both(&program, &sample_regs(), &[], hit);
        assert!(interpreted.outcome.contains("incomplete=false"));
    }
}

/// The benchmark program (benches/benches/rpn.rs).
const SIXTEEN: &str = "vars=2\nmajor=0xC8\nminor=0x10\n\
    Push EAX\nPush W,0x100\nSub\nJmp ZN,skip\nInc V,0\nskip: Pop N,1\nPush V,0\nPush EBX\nAdd\n\
    Move V,1\nPush ESI\nPush EDI\nPush ECX\nPush EDX\nLog DN,4\nLog WN,1\n";

#[test]
fn the_sixteen_program_compiles_and_matches() {
    let (program, hit, nvars) = assemble(SIXTEEN);
    assert_eq!(program.len(), 16);
    let compiled = Compiled::new(&program).expect("compiles");
    // Without callbacks or SetMaj/SetMin it has a lean entry, taken from a
    // log limit of 18 up (the tests below run both sides of it).
    assert!(compiled.lean_code().is_some());
    let mut regs = sample_regs();
    for eax in [0x100, 0x1234] {
        regs[0] = eax;
        for vars in [vec![0; nvars], vec![7, 9], vec![5], vec![]] {
            for logmax in [0, 2, 4, 16, 17, 18, 512] {
                let (interpreted, native) = both(&program, &regs, &vars, Hit { logmax, ..hit });
                assert_eq!(
                    native,
                    Some(interpreted),
                    "eax {eax:#x} vars {vars:?} logmax {logmax}"
                );
            }
        }
    }
    // Repeated hits on one interpreter accumulate in the variables.
    let mut m = sample_machine();
    let mut vars = vec![0u32; 2];
    let mut interp = Interpreter::new();
    for _ in 0..3 {
        let r = compiled.run(&mut interp, &mut m, &mut vars, hit);
        let HitOutcome::Logged(record) = r.outcome else {
            panic!("{:?}", r.outcome)
        };
        assert_eq!(record.data.len(), 18);
    }
    assert_eq!(vars, [3, 3 + 0xABCD]);
}

/// Which programs have a lean entry: none that calls back, checks a
/// variable index or sets a code.
#[test]
fn lean_entries_are_for_programs_without_callbacks() {
    let lean = |src: &str| {
        let (program, _, _) = assemble(&format!("vars=2\nmajor=1\nminor=1\n{src}"));
        Compiled::new(&program).unwrap().lean_code().is_some()
    };
    assert!(lean("Push EAX\nPush V,1\nAdd\nMove V,0\nLog DN,1\n"));
    assert!(lean(
        "Push EAX\nJmp ZN,l\nPush ECX\nLog WN,1\nl: Push EBX\nLog DN,2\nRemove\n"
    ));
    assert!(!lean("Push W,20\nPush D,0x10000\nLog MRF\n"));
    assert!(!lean("Push W,1\nPush VIi\nLog DN,1\n"));
    assert!(!lean("Push EAX\nSetMaj\nLog DN,1\n"));
    assert!(!lean("SetMin W,3\n"));
    assert!(!lean("Push OXS,1\nLog DN,1\n"));
}

/// Hand-picked rare paths: faults on each kind of read, CRMA failures,
/// string logs, logs past the limit, variable errors, every ending.
#[test]
fn rare_paths_match() {
    let cases = [
        // Push WIS through a not-present selector, a bad one, a good one.
        "Push W,0x27\nPush W,0\nPush WIS\nLog DN,1\n",
        "Push W,0x33\nPush W,0\nPush WIS\nLog DN,1\n",
        "Push SS\nPush ESP\nPush SIS\nLog DN,2\n",
        "Push W,0x2F\nPush W,0x10\nPush SIS\nLog DN,2\n",
        "Push D,0x3FFFC\nPush FIF\nLog DN,1\n",
        "Push D,0x40000\nPush FIF\nLog DN,1\n",
        "Push D,0x20000000\nCnvrt FXS\nLog DN,2\n",
        "Push D,0x3FF00\nCnvrt FXS\nXchg\nCnvrt SXF\nLog DN,1\n",
        "Push W,0x10\nPush W,0x17\nCnvrt SXF\nLog DN,1\n",
        "Push W,20\nPush D,0x10000\nLog ARF\nPush W,4\nPush W,0x0F\nPush W,0\nLog ARS\n",
        "Push W,20\nPush D,0x3FFF8\nLog MRF\n",
        "Push W,4\nPush W,0x27\nPush W,0\nLog MRS\n",
        "Push OXS,1\nPush OXF,2\nPush OXS,9\nLog DN,3\n",
        "Push W,9\nPush VIi\nLog DN,1\n",
        "Push W,1\nInc VIi\nPush W,3\nPush W,1\nMove VIi\nPush V,1\nLog DN,3\n",
        "Push W,1\nSetMin\nSetMaj W,0x1234\nAbort\n",
        "Remove\n",
        "SysDump\n",
        "Push EAX\nPush EBX\nPush ECX\nLog WN,20\n",
        "Push D,-1\nJmp NN,neg\nAbort\nneg: Push W,1\nJmp PN,end\nAbort\nend: Exit\n",
        "Push D,0x12345678\nCnvrt DXS\nCnvrt SXD\nNeg\nPush W,3\nMul\nLog DN,1\n",
        // Jumps over code that leaves the slots alone (the target keeps
        // what is known of them), that changes a slot in place, or that
        // writes a slot and pops it; slots never written, read and logged.
        "Push EAX\nPush W,5\nJmp ZN,l\nInc V,0\nl: Add\nMove V,1\nLog DN,3\n",
        "Push EAX\nPush W,5\nJmp ZN,l\nNeg\nl: Log DN,2\n",
        "Push EBX\nPush ECX\nJmp PN,l\nPush EDX\nPop N,1\nl: Log DN,4\n",
        "Push EAX\nJmp ZN,l\nPush W,1\nPop N,1\nJmp ZN,l\nInc V,1\nl: Push V,0\nLog DN,2\n",
        "Push W,0\nJmp ZN,l\nAbort\nl: Pop N,3\nLog WN,5\n",
    ];
    for src in cases {
        let (program, _, _) = assemble(&format!("vars=2\nmajor=1\nminor=1\n{src}"));
        assert!(Compiled::new(&program).is_some(), "{src}");
        for logmax in [0, 3, 6, 7, 8, 10, 13, 30, 512] {
            for vars in [vec![1, 2], vec![]] {
                let (interpreted, native) = both(&program, &sample_regs(), &vars, hit(logmax));
                assert_eq!(native, Some(interpreted), "{src} logmax {logmax}");
            }
        }
    }
}

/// A jump over a push reaches its target with two stack indices: the
/// compiler refuses rather than guess; the interpreter runs it.
#[test]
fn a_join_with_two_stack_indices_is_refused() {
    let (program, _, _) = assemble("minor=1\nPush EAX\nJmp ZN,l\nPush EBX\nl: Log DN,1\n");
    assert!(Compiled::new(&program).is_none());
    // The same shape, balanced, compiles.
    let (program, _, _) = assemble("minor=1\nPush EAX\nJmp ZN,l\nPush EBX\nPop N,1\nl: Log DN,1\n");
    assert!(Compiled::new(&program).is_some());
    assert!(Compiled::new(&Program::empty()).is_some());
}

/// Programs compiled together share one mapping and behave as if each
/// were compiled alone; those `new` refuses, `new_many` refuses too.
#[test]
fn programs_compiled_together_match_programs_compiled_alone() {
    let mut sources: Vec<String> = EXAMPLES.iter().map(|e| e.source.to_string()).collect();
    sources.insert(
        2,
        "minor=1\nPush EAX\nJmp ZN,l\nPush EBX\nl: Log DN,1\n".into(),
    );
    sources.push(SIXTEEN.into());
    let programs: Vec<(Program, Hit, usize)> = sources.iter().map(|s| assemble(s)).collect();
    let together = Compiled::new_many(programs.iter().map(|(p, _, _)| p));
    assert_eq!(together.len(), programs.len());
    for ((program, hit, nvars), shared) in programs.iter().zip(&together) {
        let alone = Compiled::new(program);
        assert_eq!(shared.is_some(), alone.is_some());
        let (Some(shared), Some(alone)) = (shared, alone) else {
            continue;
        };
        assert_eq!(shared.code(), alone.code(), "same code, another place");
        let run = |compiled: &Compiled| {
            let mut interp = Interpreter::new();
            let mut vars = vec![0; *nvars];
            let result = summary(compiled.run(&mut interp, &mut sample_machine(), &mut vars, *hit));
            after(result, vars, &interp)
        };
        let (interpreted, _) = both(program, &sample_regs(), &vec![0; *nvars], *hit);
        assert_eq!(run(shared), interpreted);
        assert_eq!(run(&alone), interpreted);
    }
    assert_eq!(together.iter().filter(|c| c.is_none()).count(), 1);
}
