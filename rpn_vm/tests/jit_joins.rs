//! The native-code tier where paths meet: random programs made of jumps
//! and the labels they reach, run against the interpreter.
//!
//! The compiler carries knowledge along a straight line (the stack index,
//! which slot EAX holds, which slots hold a constant, the log length, the
//! fixed cycles not yet added) and must merge it where jumps land. The
//! generator here aims at those merges: several jumps to one label, jumps
//! out of regions that pushed constants or left a value in EAX, jumps over
//! `Log WN/DN` (so the log length differs by path), regions balanced by
//! `Pop N`, `Log WN/DN` or pushes, nested and overlapping jumps, `Jmp N,0`
//! and jumps to the end; each program runs with several register and
//! variable sets so that conditions go both ways. Nearly every jump lands
//! where the straight-line stack index equals its own, so that most
//! programs compile; the few others check that two indices at a join are
//! refused. `jit_join_regressions.rs` pins the shapes this found when
//! mistakes were planted in the merge logic.
#![cfg(target_arch = "x86_64")]

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use rpn_vm::jit::Compiled;
use rpn_vm::opcode::{OPCODES, Op};
use rpn_vm::{Instr, Program};

mod support;

use support::{After, both, hit, listing};

/// Where a loose jump lands.
#[derive(Clone, Copy, Debug)]
enum Aim {
    /// The next instruction (`Jmp N,0`).
    Next,
    /// The end of the program.
    End,
    /// A label another jump reaches, if one fits.
    Shared,
    /// Any later instruction with the same stack index.
    Later,
    /// Any later instruction: the stack indices may differ, and then the
    /// compiler must refuse the program.
    Anywhere,
}

/// One step of the generator.
#[derive(Clone, Debug)]
enum Token {
    /// A non-jump instruction.
    Plain(Instr),
    /// A jump whose target is picked once the program is laid out (the
    /// `u32` picks among the candidates).
    Loose(Op, Aim, u32),
    /// A jump to the end of the region it opens.
    Open(Op),
    /// Several jumps to one label, right after the last, each testing a
    /// value it pushed; each but the last is followed by an instruction
    /// that pops it: `Log DN,1` or `Log WN,1` (so that each jump brings
    /// another log length) or `Pop N,1` (the same length as the next way
    /// in). Some are `Jmp N`: the label after a last `Jmp N,0` only jumps
    /// reach.
    Fan(Vec<(Instr, Op, u8)>),
    /// Ends the innermost open region, first bringing the stack index
    /// back to where the region began: by `Pop N`, `Log DN` or `Log WN`
    /// (chosen by the `u8`) when it grew, by pushes when it shrank.
    Close(u8),
}

/// A laid-out instruction's jump target.
#[derive(Clone, Copy)]
enum Target {
    None,
    At(usize),
    Loose(Aim, u32),
}

/// Constants the programs push: zero, positive and negative, so that the
/// jumps on them go every way.
const CONSTANTS: [u32; 8] = [
    0,
    1,
    2,
    0x7FFF,
    0x8000,
    0xFFFF_FFFF,
    0x8000_0000,
    0x7FFF_FFFF,
];

/// Register and variable values of the runs: mostly zero, one, negative
/// and positive, so that conditions on them vary between runs; small
/// variable indices for `VIi`; and a few addresses and selectors.
const RUN_VALUES: [u32; 14] = [
    0,
    0,
    0,
    1,
    2,
    3,
    0xFFFF_FFFF,
    0xFFFF_FFFE,
    0x8000_0000,
    0x7FFF_FFFF,
    0x17,
    0x1_0000,
    0x3_FFFC,
    0x2_0040,
];

fn ops(keep: impl Fn(Op) -> bool) -> Vec<Op> {
    OPCODES
        .iter()
        .map(|i| i.op)
        .filter(|&op| keep(op))
        .collect()
}

/// A non-jump instruction, weighted towards what the compiler caches:
/// constant pushes, register pushes (EAX), logs and pops.
fn arb_plain() -> impl Strategy<Value = Instr> {
    let constant = (any::<bool>(), prop::sample::select(CONSTANTS.to_vec())).prop_map(|(d, v)| {
        if d {
            Instr::with(Op::PushD, v)
        } else {
            Instr::with(Op::PushW, v & 0xFFFF)
        }
    });
    let register =
        prop::sample::select(ops(|op| op.pushed_register().is_some())).prop_map(Instr::new);
    let with = |list: Vec<Op>, counts: std::ops::Range<u32>| {
        (prop::sample::select(list), counts).prop_map(|(op, n)| Instr::with(op, n))
    };
    let plain = |list: Vec<Op>| prop::sample::select(list).prop_map(Instr::new);
    prop_oneof![
        5 => constant,
        5 => register,
        2 => with(vec![Op::PushV, Op::MoveV, Op::IncV, Op::OrV], 0..4),
        3 => plain(vec![Op::Add, Op::Sub, Op::Mul, Op::And, Op::Or, Op::Xor]),
        3 => plain(vec![Op::Neg, Op::Xchg, Op::CnvrtDxs, Op::CnvrtSxd]),
        2 => with(vec![Op::PopN], 0..4),
        4 => with(vec![Op::LogDn, Op::LogWn], 0..4),
        2 => plain(vec![Op::SetMin, Op::SetMaj, Op::MoveVii, Op::IncVii, Op::PushVii]),
        1 => with(vec![Op::SetMinW, Op::SetMajW], 0..0x10000),
        1 => plain(vec![Op::LogMrf, Op::LogArf, Op::LogMrs, Op::LogArs, Op::PushFif, Op::CnvrtFxs]),
        1 => (any::<prop::sample::Index>(), any::<u32>()).prop_map(|(index, operand)| {
            // Anything else that is not a jump, small counts.
            let list = ops(|op| !op.is_jump());
            let op = list[index.index(list.len())];
            let mut operand = operand & op.operand().max();
            if matches!(op, Op::PushV | Op::MoveV | Op::IncV | Op::OrV) {
                operand %= 4;
            }
            if matches!(op, Op::LogDn | Op::LogWn | Op::PopN) {
                operand %= 18;
            }
            Instr::with(op, operand)
        }),
    ]
}

/// A few tokens: an instruction, a jump, a region opened (some after a
/// push of a value that varies between runs) or closed, a memory log.
fn arb_tokens() -> impl Strategy<Value = Vec<Token>> {
    let jump = prop::sample::select(vec![
        Op::JmpZn,
        Op::JmpNn,
        Op::JmpPn,
        Op::JmpZn,
        Op::JmpNn,
        Op::JmpPn,
        Op::JmpN,
    ]);
    let cond = || prop::sample::select(vec![Op::JmpZn, Op::JmpNn, Op::JmpPn, Op::JmpZn, Op::JmpN]);
    let aim = prop::sample::select(vec![
        Aim::Next,
        Aim::End,
        Aim::Shared,
        Aim::Shared,
        Aim::Shared,
        Aim::Later,
        Aim::Later,
        Aim::Anywhere,
    ]);
    // A value that differs between runs, for a condition to test.
    let varying = || {
        prop_oneof![
            prop::sample::select(ops(|op| op.pushed_register().is_some())).prop_map(Instr::new),
            (0u32..4).prop_map(|i| Instr::with(Op::PushV, i)),
        ]
    };
    prop_oneof![
        8 => arb_plain().prop_map(|i| vec![Token::Plain(i)]),
        2 => (jump, aim, any::<u32>()).prop_map(|(op, aim, pick)| vec![Token::Loose(op, aim, pick)]),
        2 => cond().prop_map(|op| vec![Token::Open(op)]),
        2 => (varying(), cond()).prop_map(|(i, op)| vec![Token::Plain(i), Token::Open(op)]),
        // A memory or string log that succeeds (the test machine has a
        // string at 0x10000 and at 0x0F:0): its length is known at run
        // time only.
        1 => (0u32..8, prop::sample::select(vec![Op::LogMrf, Op::LogArf, Op::LogMrs, Op::LogArs]))
            .prop_map(|(len, op)| {
                let mut list = vec![Instr::with(Op::PushW, len)];
                if matches!(op, Op::LogMrf | Op::LogArf) {
                    list.push(Instr::with(Op::PushD, 0x1_0000));
                } else {
                    list.extend([Instr::with(Op::PushW, 0x0F), Instr::with(Op::PushW, 0)]);
                }
                list.push(Instr::new(op));
                list.into_iter().map(Token::Plain).collect()
            }),
        // Jumps bringing different log lengths to one label.
        1 => prop::collection::vec((varying(), cond(), any::<u8>()), 2..5)
            .prop_map(|ways| vec![Token::Fan(ways)]),
        3 => any::<u8>().prop_map(|pad| vec![Token::Close(pad)]),
        // Two regions ending at one label.
        1 => any::<u8>().prop_map(|pad| vec![Token::Close(pad), Token::Close(pad / 3)]),
    ]
}

/// Lays out `tokens`: regions padded and closed, loose jumps aimed at a
/// later instruction with the same straight-line stack index (or the end).
fn lay_out(tokens: &[Token]) -> Vec<Instr> {
    fn put(out: &mut Vec<(Instr, Target)>, depth: &mut u8, instr: Instr, target: Target) {
        let (pops, pushes) = instr.op.stack_effect(instr.operand);
        *depth = depth.wrapping_add(pushes as u8).wrapping_sub(pops as u8);
        out.push((instr, target));
    }
    /// Brings the stack index back to `start` (see [`Token::Close`]) and
    /// aims the region's `jump` at the next instruction.
    fn close(out: &mut Vec<(Instr, Target)>, depth: &mut u8, jump: usize, start: u8, pad: u8) {
        let grown = depth.wrapping_sub(start);
        if grown != 0 && grown < 128 {
            let op = [Op::PopN, Op::LogDn, Op::LogWn][usize::from(pad % 3)];
            put(out, depth, Instr::with(op, u32::from(grown)), Target::None);
        }
        let shrunk = if grown >= 128 {
            grown.wrapping_neg()
        } else {
            0
        };
        for k in 0..shrunk {
            // Constants and registers, so that the label sees cached
            // slots and EAX from the straight line.
            let instr = if (pad ^ k) & 1 == 0 {
                Instr::with(Op::PushW, u32::from(pad))
            } else {
                Instr::new(Op::PushEbx)
            };
            put(out, depth, instr, Target::None);
        }
        out[jump].1 = Target::At(out.len());
    }
    let mut out: Vec<(Instr, Target)> = Vec::new();
    // The jump opening each region, and the stack index there.
    let mut open: Vec<(usize, u8)> = Vec::new();
    // The compiler's static index is a u8 that wraps at 256, not 16.
    let mut depth = 0u8;
    for token in tokens {
        match *token {
            Token::Plain(instr) => put(&mut out, &mut depth, instr, Target::None),
            Token::Loose(op, aim, pick) => put(
                &mut out,
                &mut depth,
                Instr::new(op),
                Target::Loose(aim, pick),
            ),
            Token::Open(op) => {
                open.push((out.len(), depth));
                put(&mut out, &mut depth, Instr::new(op), Target::At(0));
            }
            Token::Fan(ref ways) => {
                let jumps: Vec<usize> = ways
                    .iter()
                    .enumerate()
                    .map(|(k, &(push, op, pop))| {
                        put(&mut out, &mut depth, push, Target::None);
                        let jump = out.len();
                        put(&mut out, &mut depth, Instr::new(op), Target::At(0));
                        // The last falls through to the label.
                        if k + 1 < ways.len() {
                            let pop = [Op::LogDn, Op::LogWn, Op::PopN][usize::from(pop % 3)];
                            put(&mut out, &mut depth, Instr::with(pop, 1), Target::None);
                        }
                        jump
                    })
                    .collect();
                for jump in jumps {
                    out[jump].1 = Target::At(out.len());
                }
            }
            Token::Close(pad) => {
                // Not an empty region: `Aim::Next` makes those.
                let Some(&(jump, start)) = open.last() else {
                    continue;
                };
                if jump + 1 == out.len() {
                    continue;
                }
                open.pop();
                close(&mut out, &mut depth, jump, start, pad);
            }
        }
    }
    // Regions still open end at the end, nested.
    while let Some((jump, start)) = open.pop() {
        close(&mut out, &mut depth, jump, start, jump as u8);
    }
    let n = out.len();
    // The straight-line stack index before each instruction (and the end).
    let mut depth_at = vec![0u8; n + 1];
    for (i, (instr, _)) in out.iter().enumerate() {
        let (pops, pushes) = instr.op.stack_effect(instr.operand);
        depth_at[i + 1] = depth_at[i]
            .wrapping_add(pushes as u8)
            .wrapping_sub(pops as u8);
    }
    let mut targets: Vec<usize> = out
        .iter()
        .filter_map(|(_, t)| match t {
            Target::At(t) => Some(*t),
            _ => None,
        })
        .collect();
    let mut resolved = vec![0usize; n];
    for i in 0..n {
        let fits = |t: usize| t == n || (t > i && depth_at[t] == depth_at[i]);
        resolved[i] = match out[i].1 {
            Target::None => continue,
            Target::At(t) => t,
            Target::Loose(aim, pick) => {
                let later: Vec<usize> = (i + 1..=n).filter(|&t| fits(t)).collect();
                let shared: Vec<usize> = targets
                    .iter()
                    .copied()
                    .filter(|&t| t > i && fits(t))
                    .collect();
                let from = |list: &[usize]| list[pick as usize % list.len()];
                let t = match aim {
                    Aim::Next => i + 1,
                    Aim::End => n,
                    Aim::Shared if !shared.is_empty() => from(&shared),
                    Aim::Shared | Aim::Later => from(&later),
                    Aim::Anywhere => i + 1 + pick as usize % (n - i),
                };
                targets.push(t);
                t
            }
        };
    }
    let mut offsets = vec![0usize; n + 1];
    for (i, (instr, _)) in out.iter().enumerate() {
        offsets[i + 1] = offsets[i] + instr.len();
    }
    out.iter()
        .enumerate()
        .map(|(i, &(instr, target))| match target {
            Target::None => instr,
            _ => Instr::with(instr.op, (offsets[resolved[i]] - offsets[i + 1]) as u32),
        })
        .collect()
}

/// A join-rich program, at most 255 bytes (tokens dropped from the end
/// until it fits).
fn arb_join_program() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(arb_tokens(), 4..40).prop_map(|pieces| {
        let mut tokens: Vec<Token> = pieces.into_iter().flatten().collect();
        loop {
            let code = rpn_vm::instr::encode_all(&lay_out(&tokens));
            if code.len() <= rpn_vm::verify::MAX_PROGRAM_LEN {
                return code;
            }
            tokens.pop();
        }
    })
}

/// One hit's inputs: registers, variables (some runs have fewer than the
/// program names) and the log limit (mostly near the lengths logged).
fn arb_run() -> impl Strategy<Value = ([u32; 16], Vec<u32>, usize)> {
    let value = || prop::sample::select(RUN_VALUES.to_vec());
    (
        prop::array::uniform16(value()),
        prop::collection::vec(value(), 4),
        prop_oneof![4 => Just(4usize), 1 => 0usize..4],
        prop_oneof![3 => 0usize..40, 1 => Just(512usize)],
    )
        .prop_map(|(regs, mut vars, nvars, logmax)| {
            vars.truncate(nvars);
            (regs, vars, logmax)
        })
}

/// Both loads of `code` (with and without the stack limit), verified for
/// four variables.
fn loads(code: &[u8]) -> Vec<Program> {
    [
        Program::load(code, 4),
        Program::load_without_stack_limit(code, 4),
    ]
    .into_iter()
    .flatten()
    .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(5000)))]

    #[test]
    fn native_runs_at_joins_are_the_interpreters(
        code in arb_join_program(),
        runs in prop::collection::vec(arb_run(), 4),
    ) {
        for program in loads(&code) {
            for (regs, vars, logmax) in &runs {
                let (interpreted, native) = both(&program, regs, vars, hit(*logmax));
                if let Some(native) = native {
                    prop_assert_eq!(
                        native, interpreted,
                        "program {:02X?}\n{}vars {:?} logmax {}", code, listing(&code), vars, logmax
                    );
                }
            }
        }
    }
}

/// `count` programs of the generator, deterministic.
fn sample(count: usize) -> Vec<Vec<u8>> {
    let mut runner = TestRunner::deterministic();
    let strategy = arb_join_program();
    (0..count)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect()
}

/// The generator's programs load and compile, so the property above runs
/// native code rather than skipping it.
#[test]
fn join_programs_load_and_compile() {
    let codes = sample(2000);
    let (mut loaded, mut compiled) = (0, 0);
    for code in &codes {
        if let Ok(program) = Program::load_without_stack_limit(code, 4) {
            loaded += 1;
            compiled += usize::from(Compiled::new(&program).is_some());
        }
    }
    assert_eq!(loaded, codes.len());
    assert!(
        compiled * 100 >= loaded * 80,
        "{compiled} of {loaded} compiled"
    );
}

/// The shapes the generator is for occur often: a label several jumps
/// reach, a jump over a log, `Jmp N,0`, a jump to the end, nested and
/// overlapping jumps; and the runs of one program take different paths.
#[test]
fn join_programs_have_the_shapes_aimed_at() {
    let codes = sample(1000);
    let mut shapes = [0usize; 6];
    for code in &codes {
        let decoded = rpn_vm::instr::decode_all(code).unwrap();
        // (from, to) byte offsets of every jump: from its end.
        let jumps: Vec<(usize, usize)> = decoded
            .iter()
            .filter(|(_, i)| i.op.is_jump())
            .map(|&(o, i)| (o + i.len(), o + i.len() + i.operand as usize))
            .collect();
        let shared = jumps
            .iter()
            .any(|&(_, to)| to < code.len() && jumps.iter().filter(|j| j.1 == to).count() > 1);
        let over_log = jumps.iter().any(|&(from, to)| {
            decoded.iter().any(|&(o, i)| {
                (from..to).contains(&o) && matches!(i.op, Op::LogDn | Op::LogWn) && i.operand > 0
            })
        });
        let zero = jumps.iter().any(|&(from, to)| from == to);
        let end = jumps.iter().any(|&(_, to)| to == code.len());
        let nested = jumps
            .iter()
            .any(|&(f1, t1)| jumps.iter().any(|&(f2, t2)| f1 < f2 && t2 < t1));
        let overlapping = jumps
            .iter()
            .any(|&(f1, t1)| jumps.iter().any(|&(f2, t2)| f1 < f2 && f2 < t1 && t1 < t2));
        for (count, seen) in
            shapes
                .iter_mut()
                .zip([shared, over_log, zero, end, nested, overlapping])
        {
            *count += usize::from(seen);
        }
    }
    let names = [
        "shared label",
        "jump over a log",
        "zero distance",
        "to the end",
        "nested",
        "overlapping",
    ];
    let report: Vec<String> = names
        .iter()
        .zip(shapes)
        .map(|(name, count)| format!("{name}: {count}"))
        .collect();
    assert!(
        shapes.iter().all(|&count| count * 4 > codes.len()),
        "of {}: {report:?}",
        codes.len()
    );

    // Runs with different registers and variables take different paths:
    // the interpreter's cycles differ between the four runs of a program
    // (for about half of them; the others end early or branch on
    // constants).
    let mut runner = TestRunner::deterministic();
    let runs = prop::collection::vec(arb_run(), 4);
    let mut varied = 0;
    for code in &codes {
        let program = Program::load_without_stack_limit(code, 4).unwrap();
        let runs = runs.new_tree(&mut runner).unwrap().current();
        // All four variables: a variable error would hide the paths.
        let results: Vec<After> = runs
            .iter()
            .map(|(regs, vars, _)| {
                let vars: Vec<u32> = (0..4).map(|i| vars.get(i).copied().unwrap_or(0)).collect();
                both(&program, regs, &vars, hit(512)).0
            })
            .collect();
        varied += usize::from(results.iter().any(|r| r.cycles != results[0].cycles));
    }
    assert!(
        varied * 5 > codes.len() * 2,
        "{varied} of {} varied",
        codes.len()
    );
}
