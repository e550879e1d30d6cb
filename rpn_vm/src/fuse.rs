//! Superinstructions: the load-time fusion of common instruction runs into
//! one interpreter step.
//!
//! Fusion is an execution detail of a verified [`crate::Program`]: the
//! bytecode, the opcode table, the assembler and the disassembler know
//! nothing of it. A fused step does exactly what the instructions it stands
//! for do, in order, leaving the same circular stack, variables, log and
//! cycle count; it only saves the interpreter's dispatch between them. Its
//! `cycles` are the sum of the fixed cycles of those instructions, and the
//! per-unit cycles of a fused log are added as the log runs.
//!
//! Runs are fused only where no jump lands inside them (a jump may land on
//! the first instruction of a run), so every jump target stays a step. The
//! forms:
//!
//! * [`Kind::PushRegs`]: two or more `Push <reg>` in a row;
//! * [`Kind::PushRegsLogDn`], [`Kind::PushRegsLogWn`]: one or more
//!   `Push <reg>` followed by a `Log DN,n` or `Log WN,n` (any `n`);
//! * `PushImm<op>`: `Push W` or `Push D` followed by a two-operand op;
//! * `PushReg<op>`: `Push <reg>` followed by a two-operand op.

use crate::machine::Reg;
use crate::opcode::Op;

/// What one step executes: a single instruction, or a fused run.
///
/// Operands of the fused forms: `PushRegs` and the `PushRegsLog` forms push
/// the `n` registers at `regs[arg & 0xFFFF..]` of the program's register
/// table, and the log forms then log `arg >> 16` items; `PushImm<op>`
/// pushes `arg`; `PushReg<op>` pushes the register at `regs[arg]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// One instruction.
    Op(Op),
    /// A run of register pushes.
    PushRegs,
    /// Register pushes, then `Log DN`.
    PushRegsLogDn,
    /// Register pushes, then `Log WN`.
    PushRegsLogWn,
    /// `Push W/D`, `Add`.
    PushImmAdd,
    /// `Push W/D`, `Sub`.
    PushImmSub,
    /// `Push W/D`, `Mul`.
    PushImmMul,
    /// `Push W/D`, `And`.
    PushImmAnd,
    /// `Push W/D`, `Or`.
    PushImmOr,
    /// `Push W/D`, `Xor`.
    PushImmXor,
    /// `Push <reg>`, `Add`.
    PushRegAdd,
    /// `Push <reg>`, `Sub`.
    PushRegSub,
    /// `Push <reg>`, `Mul`.
    PushRegMul,
    /// `Push <reg>`, `And`.
    PushRegAnd,
    /// `Push <reg>`, `Or`.
    PushRegOr,
    /// `Push <reg>`, `Xor`.
    PushRegXor,
}

/// One pre-decoded step. For jumps, `arg` is the index of the target step
/// (the number of steps for the end of the program).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) kind: Kind,
    /// Number of registers a fused push run pushes; 1 otherwise.
    pub(crate) n: u8,
    /// The fixed cost of every instruction the step stands for.
    pub(crate) cycles: u16,
    pub(crate) arg: u32,
}

impl Step {
    /// The step of one instruction.
    pub(crate) fn single(op: Op, arg: u32) -> Step {
        Step {
            kind: Kind::Op(op),
            n: 1,
            cycles: op.info().cycles as u16,
            arg,
        }
    }
}

/// The fused form of a two-operand op after an immediate and after a
/// register push.
fn binary_forms(op: Op) -> Option<(Kind, Kind)> {
    Some(match op {
        Op::Add => (Kind::PushImmAdd, Kind::PushRegAdd),
        Op::Sub => (Kind::PushImmSub, Kind::PushRegSub),
        Op::Mul => (Kind::PushImmMul, Kind::PushRegMul),
        Op::And => (Kind::PushImmAnd, Kind::PushRegAnd),
        Op::Or => (Kind::PushImmOr, Kind::PushRegOr),
        Op::Xor => (Kind::PushImmXor, Kind::PushRegXor),
        _ => None?,
    })
}

/// Fuses `steps` (one per instruction, jump targets as instruction
/// indices) into fewer steps, with jump targets renumbered. Returns the
/// steps and the register table of the push runs.
pub(crate) fn fuse(steps: &[Step]) -> (Vec<Step>, Vec<Reg>) {
    let len = steps.len();
    let mut target = vec![false; len + 1];
    for step in steps {
        if matches!(step.kind, Kind::Op(op) if op.is_jump()) {
            target[step.arg as usize] = true;
        }
    }
    let op_at = |i: usize| match steps.get(i) {
        Some(Step {
            kind: Kind::Op(op), ..
        }) => Some(*op),
        _ => None,
    };
    // `Some(op)` when instruction `i` exists, is not a jump target, and is
    // `op`: it may join the run before it.
    let joins = |i: usize| if target[i] { None } else { op_at(i) };
    let reg_at = |i: usize| op_at(i).and_then(Op::pushed_register);

    let mut out = Vec::with_capacity(len);
    let mut regs = Vec::new();
    // new_index[i]: the step instruction i belongs to.
    let mut new_index = vec![0u32; len + 1];
    let mut i = 0;
    while i < len {
        let first = out.len() as u32;
        let cycles =
            |range: std::ops::Range<usize>| steps[range].iter().map(|s| s.cycles).sum::<u16>();
        let mut run = 0;
        if reg_at(i).is_some() {
            run = 1;
            while !target[i + run] && reg_at(i + run).is_some() {
                run += 1;
            }
        }
        let next = joins(i + run);
        let (step, used) = match (run, next) {
            (1.., Some(op @ (Op::LogDn | Op::LogWn))) if run <= 0xFF && regs.len() <= 0xFFFF => {
                let kind = if op == Op::LogDn {
                    Kind::PushRegsLogDn
                } else {
                    Kind::PushRegsLogWn
                };
                let count = steps[i + run].arg;
                let start = regs.len() as u32;
                regs.extend((i..i + run).filter_map(reg_at));
                let step = Step {
                    kind,
                    n: run as u8,
                    cycles: cycles(i..i + run + 1),
                    arg: start | (count << 16),
                };
                (step, run + 1)
            }
            (1, Some(op)) if binary_forms(op).is_some() => {
                let (_, kind) = binary_forms(op).unwrap_or((Kind::Op(op), Kind::Op(op)));
                let start = regs.len() as u32;
                regs.extend(reg_at(i));
                let step = Step {
                    kind,
                    n: 1,
                    cycles: cycles(i..i + 2),
                    arg: start,
                };
                (step, 2)
            }
            (2.., _) if regs.len() <= 0xFFFF => {
                // Leave the last push to pair with a following binary op.
                let take = if next.and_then(binary_forms).is_some() {
                    run - 1
                } else {
                    run
                }
                .min(0xFF);
                if take == 1 {
                    (steps[i], 1)
                } else {
                    let start = regs.len() as u32;
                    regs.extend((i..i + take).filter_map(reg_at));
                    let step = Step {
                        kind: Kind::PushRegs,
                        n: take as u8,
                        cycles: cycles(i..i + take),
                        arg: start,
                    };
                    (step, take)
                }
            }
            _ => match (op_at(i), joins(i + 1).and_then(binary_forms)) {
                (Some(Op::PushW | Op::PushD), Some((kind, _))) => {
                    let step = Step {
                        kind,
                        n: 1,
                        cycles: cycles(i..i + 2),
                        arg: steps[i].arg,
                    };
                    (step, 2)
                }
                _ => (steps[i], 1),
            },
        };
        out.push(step);
        for slot in &mut new_index[i..i + used] {
            *slot = first;
        }
        i += used;
    }
    new_index[len] = out.len() as u32;
    for step in &mut out {
        if matches!(step.kind, Kind::Op(op) if op.is_jump()) {
            step.arg = new_index[step.arg as usize];
        }
    }
    (out, regs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::Program;

    fn kinds(code: &[u8]) -> Vec<(Kind, u8)> {
        let program = Program::load(code, 2).unwrap();
        program.steps.iter().map(|s| (s.kind, s.n)).collect()
    }

    #[test]
    fn runs_fuse_and_keep_their_cycles() {
        // Push EAX; Push W,0x100; Sub; Push ESI; Push EDI; Push ECX; Add;
        // Push EDX; Push EBX; Log DN,2.
        let code = [
            0x00, 0x10, 0x00, 0x01, 0x17, 0x06, 0x07, 0x01, 0x16, 0x02, 0x03, 0x21, 2,
        ];
        assert_eq!(
            kinds(&code),
            [
                (Kind::Op(Op::PushEax), 1),
                (Kind::PushImmSub, 1),
                (Kind::PushRegs, 2),
                (Kind::PushRegAdd, 1),
                (Kind::PushRegsLogDn, 2),
            ]
        );
        let program = Program::load(&code, 0).unwrap();
        let total: u32 = program
            .instructions()
            .map(|(_, i)| i.op.info().cycles)
            .sum();
        let fused: u32 = program.steps.iter().map(|s| u32::from(s.cycles)).sum();
        assert_eq!(fused, total);
        assert_eq!(program.len(), 10);
        assert_eq!(program.unfused().steps.len(), 10);
    }

    #[test]
    fn jump_targets_split_runs_and_are_renumbered() {
        // Jmp ZN over Push EAX onto Push ECX; Push EDX; Log DN,2.
        let code = [0x27, 0x01, 0x00, 0x00, 0x01, 0x02, 0x21, 2];
        assert_eq!(
            kinds(&code),
            [
                (Kind::Op(Op::JmpZn), 1),
                (Kind::Op(Op::PushEax), 1),
                (Kind::PushRegsLogDn, 2),
            ]
        );
        let program = Program::load(&code, 0).unwrap();
        assert_eq!(program.steps[0].arg, 2);
        // A jump to the end goes to the end of the fused steps.
        let code = [0x27, 0x02, 0x00, 0x00, 0x01];
        let program = Program::load(&code, 0).unwrap();
        assert_eq!(program.steps.len(), 2);
        assert_eq!(program.steps[0].arg, 2);
    }
}
