//! Superinstructions change nothing: every random verified program runs to
//! the same outcome, record, cycles, variables and stack whether it is
//! executed fused ([`Program::load`]) or one instruction per step
//! ([`Program::unfused`]).

mod support;

use proptest::prelude::*;
use rpn_vm::examples::sample_machine;
use rpn_vm::opcode::{OPCODES, Op};
use rpn_vm::{Hit, Instr, Interpreter, Program, Reg};
use support::{After, after, summary};

fn run(program: &Program, regs: &[u32; 16], vars: &[u32], logmax: usize) -> After {
    let mut machine = sample_machine();
    for (reg, value) in Reg::ALL.into_iter().zip(regs) {
        machine.set_reg(reg, *value);
    }
    let mut vars = vars.to_vec();
    let mut interp = Interpreter::new();
    let hit = Hit {
        major: 0x10,
        minor: 7,
        logmax,
    };
    let result = summary(interp.run(program, &mut machine, &mut vars, hit));
    after(result, vars, &interp)
}

/// Ops the fusion pass looks for, so that random programs are full of the
/// runs it fuses.
fn fusible() -> Vec<Op> {
    let mut ops: Vec<Op> = Op::all()
        .filter(|op| op.pushed_register().is_some())
        .collect();
    ops.extend([
        Op::PushW,
        Op::PushD,
        Op::Add,
        Op::Sub,
        Op::Mul,
        Op::And,
        Op::Or,
        Op::Xor,
        Op::LogDn,
        Op::LogWn,
        Op::JmpZn,
        Op::JmpN,
    ]);
    ops
}

/// A random program: half fusible ops, half any op, small counts for the
/// `N,byte` forms, variable indices below 4, and jumps fixed up to land
/// forward on a boundary or the end (so that some land inside would-be
/// runs). At most 255 bytes, cut on an instruction boundary.
fn arb_program() -> impl Strategy<Value = Vec<u8>> {
    let fusible = fusible();
    let op = (
        any::<bool>(),
        any::<prop::sample::Index>(),
        any::<u32>(),
        any::<u16>(),
    );
    prop::collection::vec(op, 0..48).prop_map(move |raw| {
        let mut instrs: Vec<Instr> = Vec::new();
        for (pick_fusible, index, operand, jump_seed) in raw {
            let op = if pick_fusible {
                fusible[index.index(fusible.len())]
            } else {
                OPCODES[index.index(OPCODES.len())].op
            };
            let mut operand = operand & op.operand().max();
            if matches!(op, Op::PushV | Op::MoveV | Op::IncV | Op::OrV) {
                operand %= 4;
            }
            if matches!(op, Op::LogDn | Op::LogWn | Op::PopN) {
                operand %= 6;
            }
            if op.is_jump() {
                operand = u32::from(jump_seed);
            }
            instrs.push(Instr::with(op, operand));
        }
        let mut len = 0;
        let keep = instrs
            .iter()
            .take_while(|i| {
                len += i.len();
                len <= 255
            })
            .count();
        instrs.truncate(keep);
        // Jumps go to a later boundary chosen by their seed.
        support::aim_jumps(&mut instrs);
        rpn_vm::instr::encode_all(&instrs)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn fused_and_unfused_runs_are_identical(
        code in arb_program(),
        regs in any::<[u32; 16]>(),
        small in prop::collection::vec(0u32..3, 16),
        vars in prop::collection::vec(0u32..5, 0..5),
        logmax in prop_oneof![0usize..40, Just(512usize)],
    ) {
        // Small register values make zero tests and variable indices hit.
        let regs: [u32; 16] = std::array::from_fn(|i| if i % 2 == 0 { small[i] } else { regs[i] });
        let loads = [
            Program::load(&code, vars.len() as u32),
            Program::load_without_stack_limit(&code, 4),
        ];
        for program in loads.into_iter().flatten() {
            let plain = program.unfused();
            prop_assert_eq!(&plain, &program);
            prop_assert_eq!(plain.len(), program.len());
            prop_assert_eq!(
                run(&program, &regs, &vars, logmax),
                run(&plain, &regs, &vars, logmax),
                "program {:02X?}", code
            );
        }
    }
}

/// Each fused form by hand, with log limits that cut the logs anywhere.
#[test]
fn push_runs_log_exactly_as_their_instructions_do() {
    let regs: [u32; 16] = std::array::from_fn(|i| (0x1111_1111 * i as u32).wrapping_add(3));
    // Push ESI, EDI, ECX, EDX; Log DN,4; Push EAX; Log WN,1; Push W,5; Sub;
    // Push EBX; Add; Push ECX; Push EDX; Log DN,3 (one more than pushed).
    let code = [
        0x06, 0x07, 0x01, 0x02, 0x21, 4, 0x00, 0x14, 1, 0x10, 5, 0, 0x17, 0x03, 0x16, 0x01, 0x02,
        0x21, 3,
    ];
    let program = Program::load(&code, 0).unwrap();
    for logmax in [0, 5, 16, 18, 21, 512] {
        assert_eq!(
            run(&program, &regs, &[], logmax),
            run(&program.unfused(), &regs, &[], logmax),
            "logmax {logmax}"
        );
    }
}

/// Regression (cargo fuzz, verify_run): a run of more than 16 register
/// pushes wraps the circular stack; the fused push-and-log must log what
/// the slots then hold, as the unfused instructions do.
#[test]
fn a_push_run_longer_than_the_stack_wraps_as_the_instructions_do() {
    let input = include_bytes!("regressions/verify_run-c36f363e.bin");
    let (first, code) = input.split_first().unwrap();
    let vars = vec![0u32; usize::from(*first % 8)];
    let logmax = usize::from(*first >> 3) * 4;
    let program = Program::load_without_stack_limit(code, vars.len() as u32).unwrap();
    let regs = [
        0x1234, 0x10, 0x3F8, 0xABCD, 0xFF00, 0x3_FF20, 0x10, 0x40, 0x17, 0xF, 0x1F, 0x17, 0x246,
        0x2A11, 0, 0,
    ];
    assert_eq!(
        run(&program, &regs, &vars, logmax),
        run(&program.unfused(), &regs, &vars, logmax)
    );
}
