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
//! * `PushReg<op>`: `Push <reg>` followed by a two-operand op;
//! * `PushRegImm<op>`: `Push <reg>`, `Push W` or `Push D`, and a
//!   two-operand op (`Push EBP`, `Push W,8`, `Add`: an address).

use crate::machine::Reg;
use crate::opcode::Op;

macro_rules! kinds {
    (
        registers: $($reg:ident),* ;
        ops: $($op:ident),* ;
        fused: $($(#[$doc:meta])* $fused:ident),* $(,)?
    ) => {
        /// What one step executes: one instruction, or a fused run.
        ///
        /// A flat enum, so that the interpreter dispatches on one byte. The
        /// instructions other than the register pushes keep their [`Op`]
        /// names; the sixteen `Push <reg>` are one kind reading the register
        /// from the program's register table. Operands: `PushReg` pushes the
        /// register at `regs[arg]`; `PushRegs` and the `PushRegsLog` forms
        /// push the `n` registers at `regs[arg & 0xFFFF..]`, and the log
        /// forms then log `arg >> 16` items; `PushImm<op>` pushes `arg`;
        /// `PushReg<op>` pushes the register at `regs[arg]`;
        /// `PushRegImm<op>` pushes the register at `regs[n]`, then `arg`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Kind {
            /// One `Push <reg>`.
            PushReg,
            $(
                #[doc = concat!("One `", stringify!($op), "`.")]
                $op,
            )*
            $( $(#[$doc])* $fused, )*
        }

        impl Kind {
            /// The kind of a single instruction.
            pub(crate) fn of(op: Op) -> Kind {
                match op {
                    $( Op::$reg )|* => Kind::PushReg,
                    $( Op::$op => Kind::$op, )*
                }
            }
        }
    };
}

kinds! {
    registers:
        PushEax, PushEcx, PushEdx, PushEbx, PushEsp, PushEbp, PushEsi, PushEdi, PushEs, PushCs,
        PushSs, PushDs, PushEflags, PushEip, PushFs, PushGs;
    ops:
        PushW, PushOxs, PushWis, PushSis, LogWn, LogMrs, Add, Sub, Mul, LogArs, PushD, PushOxf,
        PushFif, CnvrtFxs, CnvrtSxf, CnvrtDxs, CnvrtSxd, LogDn, LogMrf, LogArf, JmpN, JmpNn,
        JmpPn, JmpZn, PushV, PushVii, MoveV, MoveVii, IncV, IncVii, PopN, Abort, OrV, Remove,
        SysDump, And, Or, Xor, Neg, Exit, SetMinW, SetMin, SetMajW, SetMaj, Xchg;
    fused:
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
    /// `Push <reg>`, `Push W/D`, `Add`.
    PushRegImmAdd,
    /// `Push <reg>`, `Push W/D`, `Sub`.
    PushRegImmSub,
    /// `Push <reg>`, `Push W/D`, `Mul`.
    PushRegImmMul,
    /// `Push <reg>`, `Push W/D`, `And`.
    PushRegImmAnd,
    /// `Push <reg>`, `Push W/D`, `Or`.
    PushRegImmOr,
    /// `Push <reg>`, `Push W/D`, `Xor`.
    PushRegImmXor,
}

/// One pre-decoded step. For jumps, `arg` is the index of the target step
/// (the number of steps for the end of the program).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) kind: Kind,
    /// Number of registers a fused push run pushes; for `PushRegImm<op>`
    /// the register's index in the table; 1 otherwise.
    pub(crate) n: u8,
    /// For a jump, the fixed cycles of the steps it skips when taken (see
    /// [`Fused::prefix`]); 0 otherwise.
    pub(crate) skip: u16,
    pub(crate) arg: u32,
}

/// A program's steps, as the interpreter runs them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fused {
    pub(crate) steps: Vec<Step>,
    /// The registers of the register-pushing steps.
    pub(crate) regs: Vec<Reg>,
    /// `prefix[i]`: the fixed cycles of steps `0..i`. Fixed costs are
    /// accounted per straight-line run rather than per step: a hit that
    /// stops after step `i - 1` (or runs off the end, `i` = number of
    /// steps) has spent `prefix[i]`, less the `skip` of every jump it took,
    /// since jumps only go forward.
    pub(crate) prefix: Vec<u32>,
}

/// One decoded instruction as the fusion pass takes it: the opcode and its
/// operand, jump targets as instruction indices.
pub(crate) type Plain = (Op, u32);

/// The fused forms ending in one two-operand op.
#[derive(Clone, Copy)]
struct BinaryForms {
    /// `Push W/D`, op.
    imm: Kind,
    /// `Push <reg>`, op.
    reg: Kind,
    /// `Push <reg>`, `Push W/D`, op.
    reg_imm: Kind,
}

/// The fused forms of a two-operand op.
fn binary_forms(op: Op) -> Option<BinaryForms> {
    use Kind::*;
    let (imm, reg, reg_imm) = match op {
        Op::Add => (PushImmAdd, PushRegAdd, PushRegImmAdd),
        Op::Sub => (PushImmSub, PushRegSub, PushRegImmSub),
        Op::Mul => (PushImmMul, PushRegMul, PushRegImmMul),
        Op::And => (PushImmAnd, PushRegAnd, PushRegImmAnd),
        Op::Or => (PushImmOr, PushRegOr, PushRegImmOr),
        Op::Xor => (PushImmXor, PushRegXor, PushRegImmXor),
        _ => return None,
    };
    Some(BinaryForms { imm, reg, reg_imm })
}

/// The sum of the fixed cycles of `ops`.
fn cycles(ops: &[Plain]) -> u16 {
    ops.iter().map(|(op, _)| op.info().cycles as u16).sum()
}

/// Steps and register table under construction.
#[derive(Default)]
struct Out {
    steps: Vec<Step>,
    regs: Vec<Reg>,
    /// The fixed cycles of each step.
    cycles: Vec<u16>,
}

impl Out {
    /// Appends a step that costs `cycles`.
    fn push(&mut self, kind: Kind, n: u8, cycles: u16, arg: u32) {
        self.steps.push(Step {
            kind,
            n,
            skip: 0,
            arg,
        });
        self.cycles.push(cycles);
    }

    /// The finished steps, with the prefix sums of their cycles and the
    /// cycles each jump skips. Jump targets must be step indices.
    fn finish(mut self) -> Fused {
        let mut prefix = Vec::with_capacity(self.steps.len() + 1);
        let mut total = 0u32;
        prefix.push(0);
        for &cycles in &self.cycles {
            total += u32::from(cycles);
            prefix.push(total);
        }
        for (i, step) in self.steps.iter_mut().enumerate() {
            if is_jump(step.kind) {
                let skipped = prefix[step.arg as usize] - prefix[i + 1];
                step.skip = skipped as u16;
            }
        }
        Fused {
            steps: self.steps,
            regs: self.regs,
            prefix,
        }
    }

    /// Appends the registers `ops` push to the table; returns where they
    /// start.
    fn regs(&mut self, ops: &[Plain]) -> u32 {
        let start = self.regs.len() as u32;
        self.regs
            .extend(ops.iter().filter_map(|(op, _)| op.pushed_register()));
        start
    }

    /// One step for one instruction.
    fn single(&mut self, plain: Plain) {
        let (op, mut arg) = plain;
        if op.pushed_register().is_some() {
            arg = self.regs(&[plain]);
        }
        self.push(Kind::of(op), 1, cycles(&[plain]), arg);
    }
}

/// True for the four jumps.
fn is_jump(kind: Kind) -> bool {
    matches!(kind, Kind::JmpN | Kind::JmpNn | Kind::JmpPn | Kind::JmpZn)
}

/// One step per instruction: the unfused program.
pub(crate) fn plain(ops: &[Plain]) -> Fused {
    let mut out = Out::default();
    for &plain in ops {
        out.single(plain);
    }
    out.finish()
}

/// Fuses `ops` into as few steps as the forms allow, with jump targets
/// renumbered to steps.
pub(crate) fn fuse(ops: &[Plain]) -> Fused {
    let len = ops.len();
    let mut target = vec![false; len + 1];
    for &(op, arg) in ops {
        if op.is_jump() {
            target[arg as usize] = true;
        }
    }
    // `Some(op)` when instruction `i` exists and is not a jump target: it
    // may join the run before it.
    let joins = |i: usize| {
        if target[i] {
            None
        } else {
            ops.get(i).map(|p| p.0)
        }
    };
    let is_reg = |i: usize| ops.get(i).is_some_and(|p| p.0.pushed_register().is_some());

    let mut out = Out::default();
    // new_index[i]: the step instruction i belongs to.
    let mut new_index = vec![0u32; len + 1];
    let mut i = 0;
    while i < len {
        let first = out.steps.len() as u32;
        let mut run = 0;
        if is_reg(i) {
            run = 1;
            while run < 0xFF && !target[i + run] && is_reg(i + run) {
                run += 1;
            }
        }
        let next = joins(i + run);
        // What the last register push of the run starts: `reg op` or
        // `reg imm op`.
        let pair = next.and_then(binary_forms);
        let triple = match next {
            Some(Op::PushW | Op::PushD) => joins(i + run + 1).and_then(binary_forms),
            _ => None,
        };
        let used = match (run, next) {
            (1.., Some(log @ (Op::LogDn | Op::LogWn))) => {
                let kind = if log == Op::LogDn {
                    Kind::PushRegsLogDn
                } else {
                    Kind::PushRegsLogWn
                };
                let start = out.regs(&ops[i..i + run]);
                out.push(
                    kind,
                    run as u8,
                    cycles(&ops[i..=i + run]),
                    start | (ops[i + run].1 << 16),
                );
                run + 1
            }
            (1, _) if triple.is_some() => {
                let kind = triple.map_or(Kind::of(ops[i].0), |f| f.reg_imm);
                let start = out.regs(&ops[i..=i]);
                // The register's table index fits `n`: at most 255 pushes.
                out.push(kind, start as u8, cycles(&ops[i..i + 3]), ops[i + 1].1);
                3
            }
            (1, _) if pair.is_some() => {
                let kind = pair.map_or(Kind::of(ops[i].0), |f| f.reg);
                let start = out.regs(&ops[i..=i]);
                out.push(kind, 1, cycles(&ops[i..i + 2]), start);
                2
            }
            (2.., _) => {
                // Leave the last push to the binary op it starts.
                let take = if pair.is_some() || triple.is_some() {
                    run - 1
                } else {
                    run
                };
                if take == 1 {
                    out.single(ops[i]);
                } else {
                    let start = out.regs(&ops[i..i + take]);
                    out.push(Kind::PushRegs, take as u8, cycles(&ops[i..i + take]), start);
                }
                take
            }
            _ => match (ops[i].0, joins(i + 1).and_then(binary_forms)) {
                (Op::PushW | Op::PushD, Some(forms)) => {
                    out.push(forms.imm, 1, cycles(&ops[i..i + 2]), ops[i].1);
                    2
                }
                _ => {
                    out.single(ops[i]);
                    1
                }
            },
        };
        for slot in &mut new_index[i..i + used] {
            *slot = first;
        }
        i += used;
    }
    new_index[len] = out.steps.len() as u32;
    for step in &mut out.steps {
        if is_jump(step.kind) {
            step.arg = new_index[step.arg as usize];
        }
    }
    out.finish()
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
        // Push EDX; Push EBX; Log DN,2; Push W,3; Xor.
        let code = [
            0x00, 0x10, 0x00, 0x01, 0x17, 0x06, 0x07, 0x01, 0x16, 0x02, 0x03, 0x21, 2, 0x10, 3, 0,
            0x37,
        ];
        assert_eq!(
            kinds(&code),
            [
                (Kind::PushRegImmSub, 0),
                (Kind::PushRegs, 2),
                (Kind::PushRegAdd, 1),
                (Kind::PushRegsLogDn, 2),
                (Kind::PushImmXor, 1),
            ]
        );
        let program = Program::load(&code, 0).unwrap();
        let total: u32 = program
            .instructions()
            .map(|(_, i)| i.op.info().cycles)
            .sum();
        assert_eq!(program.prefix.last(), Some(&total));
        assert_eq!(program.len(), 12);
        assert_eq!(program.unfused().steps.len(), 12);
    }

    #[test]
    fn jump_targets_split_runs_and_are_renumbered() {
        // Jmp ZN over Push EAX onto Push ECX; Push EDX; Log DN,2.
        let code = [0x27, 0x01, 0x00, 0x00, 0x01, 0x02, 0x21, 2];
        assert_eq!(
            kinds(&code),
            [
                (Kind::JmpZn, 1),
                (Kind::PushReg, 1),
                (Kind::PushRegsLogDn, 2),
            ]
        );
        let program = Program::load(&code, 0).unwrap();
        assert_eq!(program.steps[0].arg, 2);
        // Taken, it skips Push EAX.
        assert_eq!(program.steps[0].skip, 4);
        // A jump to the end goes to the end of the fused steps.
        let code = [0x27, 0x02, 0x00, 0x00, 0x01];
        let program = Program::load(&code, 0).unwrap();
        assert_eq!(program.steps.len(), 2);
        assert_eq!(program.steps[0].arg, 2);
    }
}
