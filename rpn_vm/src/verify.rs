//! The load-time verifier, and the verified program it produces.
//!
//! A tracepoint's bytecode is checked once, when it is loaded: every byte
//! decodes, jumps go forward onto instruction boundaries inside the program
//! (or exactly to its end), the program is at most 255 bytes (TRCUST message
//! 83), immediate variable indices are below the DTO's `vars`, and no path
//! leaves more than 16 live entries on the stack (TRCUST message 97). The
//! result, [`Program`], is pre-decoded into interpreter steps, common
//! instruction runs fused into one step (`fuse.rs`), jump targets resolved
//! to step indices and costs summed, so the interpreter runs it without
//! re-checking anything. [`Program::unfused`] gives the same program with
//! one step per instruction.
//!
//! Stack depth is counted as "live entries": pushes minus pops, never below
//! zero (popping past what was pushed reads older slots of the circular
//! stack, which is allowed). Because jumps only go forward, one pass in
//! program order computes the deepest stack at every instruction.

use crate::fuse::{Fused, Plain, Step, fuse, plain};
use crate::instr::{DecodeError, Instr};
use crate::machine::Reg;
use crate::opcode::Op;

/// The most bytes one tracepoint's program may have (TRCUST message 83).
pub const MAX_PROGRAM_LEN: usize = 255;

/// Entries in the circular stack, and the most that may be live (message 97).
pub const STACK_SLOTS: usize = 16;

/// Why a program was rejected; `offset` is the byte offset of the
/// instruction at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("offset {offset}: {kind}")]
pub struct VerifyError {
    /// Byte offset of the offending instruction.
    pub offset: usize,
    /// What is wrong.
    pub kind: VerifyErrorKind,
}

/// The verifier's findings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyErrorKind {
    /// A byte that does not decode, or a truncated last instruction.
    #[error("{0}")]
    Decode(#[from] DecodeError),
    /// Longer than [`MAX_PROGRAM_LEN`].
    #[error("RPN command record exceeds 255 bytes ({len} bytes) (TRCUST message 83)")]
    TooLong {
        /// Program length.
        len: usize,
    },
    /// A jump past the end of the program.
    #[error("jump target {target} is past the end of the program ({len} bytes)")]
    JumpPastEnd {
        /// Target byte offset.
        target: usize,
        /// Program length.
        len: usize,
    },
    /// A jump into the middle of an instruction.
    #[error("jump target {target} is not on an instruction boundary")]
    JumpIntoInstruction {
        /// Target byte offset.
        target: usize,
    },
    /// An immediate variable index at or above `vars`.
    #[error("variable index {index} out of range (vars={vars})")]
    VariableOutOfRange {
        /// The index.
        index: u32,
        /// Number of variables the DTO has.
        vars: u32,
    },
    /// More than 16 live stack entries.
    #[error("RPN stack limit of 16 exceeded ({depth} entries) (TRCUST message 97)")]
    StackOverflow {
        /// Live entries after the instruction.
        depth: u32,
    },
}

/// A verified program, ready to run.
///
/// Two programs are equal when their bytecode is: how the interpreter
/// executes it (fused or not) is not part of a program's identity.
#[derive(Debug, Clone)]
pub struct Program {
    bytes: Box<[u8]>,
    pub(crate) steps: Box<[Step]>,
    /// The registers of register-pushing steps, indexed by their steps.
    pub(crate) regs: Box<[Reg]>,
    /// Fixed cycles of the steps before each step; see `fuse::Fused`.
    pub(crate) prefix: Box<[u32]>,
    offsets: Box<[u16]>,
}

impl PartialEq for Program {
    fn eq(&self, other: &Program) -> bool {
        self.bytes == other.bytes
    }
}

impl Eq for Program {}

impl Program {
    /// Verifies `bytes` for a DTO with `vars` variables.
    ///
    /// # Errors
    /// The first [`VerifyError`] found, in program order.
    pub fn load(bytes: &[u8], vars: u32) -> Result<Program, VerifyError> {
        Program::load_with(bytes, vars, true)
    }

    /// Verifies `bytes` like [`Program::load`], but without the stack-depth
    /// limit: what the kernel itself accepts (DosDynamicTrace runs any
    /// program on its circular stack; the limit is TRCUST's and the
    /// verifier's advice). Used to exercise the stack's wrap-around.
    ///
    /// # Errors
    /// The first [`VerifyError`] found, in program order.
    pub fn load_without_stack_limit(bytes: &[u8], vars: u32) -> Result<Program, VerifyError> {
        Program::load_with(bytes, vars, false)
    }

    fn load_with(bytes: &[u8], vars: u32, check_stack: bool) -> Result<Program, VerifyError> {
        if bytes.len() > MAX_PROGRAM_LEN {
            return Err(VerifyError {
                offset: 0,
                kind: VerifyErrorKind::TooLong { len: bytes.len() },
            });
        }
        let decoded = crate::instr::decode_all(bytes).map_err(|(offset, e)| VerifyError {
            offset,
            kind: e.into(),
        })?;
        let index_of = |target: usize| decoded.binary_search_by_key(&target, |(o, _)| *o);
        let mut steps = Vec::with_capacity(decoded.len());
        for &(offset, instr) in &decoded {
            let fail = |kind| Err(VerifyError { offset, kind });
            let mut arg = instr.operand;
            if instr.op.is_jump() {
                let target = offset + instr.len() + instr.operand as usize;
                arg = if target == bytes.len() {
                    decoded.len() as u32
                } else if target > bytes.len() {
                    return fail(VerifyErrorKind::JumpPastEnd {
                        target,
                        len: bytes.len(),
                    });
                } else {
                    match index_of(target) {
                        Ok(i) => i as u32,
                        Err(_) => return fail(VerifyErrorKind::JumpIntoInstruction { target }),
                    }
                };
            }
            if matches!(instr.op, Op::PushV | Op::MoveV | Op::IncV | Op::OrV)
                && instr.operand >= vars
            {
                return fail(VerifyErrorKind::VariableOutOfRange {
                    index: instr.operand,
                    vars,
                });
            }
            steps.push((instr.op, arg));
        }
        if check_stack {
            check_stack_depth(&decoded, &steps)?;
        }
        let offsets = decoded.iter().map(|(o, _)| *o as u16).collect();
        Ok(Program::with_steps(bytes.into(), offsets, fuse(&steps)))
    }

    /// The same program, executed one instruction per step: without the
    /// superinstructions [`Program::load`] fuses (see `fuse.rs`). It
    /// behaves identically, only slower; it exists so that tests can hold
    /// the fused execution against the plain one.
    pub fn unfused(&self) -> Program {
        let index_of = |offset: usize| self.offsets.partition_point(|&o| usize::from(o) < offset);
        let ops: Vec<Plain> = self
            .instructions()
            .map(|(offset, instr)| {
                let mut arg = instr.operand;
                if instr.op.is_jump() {
                    arg = index_of(offset + instr.len() + instr.operand as usize) as u32;
                }
                (instr.op, arg)
            })
            .collect();
        Program::with_steps(self.bytes.clone(), self.offsets.clone(), plain(&ops))
    }

    fn with_steps(bytes: Box<[u8]>, offsets: Box<[u16]>, fused: Fused) -> Program {
        Program {
            bytes,
            steps: fused.steps.into(),
            regs: fused.regs.into(),
            prefix: fused.prefix.into(),
            offsets,
        }
    }

    /// The empty program: it logs an empty record.
    pub fn empty() -> Program {
        Program::with_steps(Box::new([]), Box::new([]), plain(&[]))
    }

    /// The bytecode.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Number of instructions.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    /// True for the empty program (which logs an empty record).
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// The instructions with their byte offsets, jump operands as distances.
    pub fn instructions(&self) -> impl Iterator<Item = (usize, Instr)> + '_ {
        self.offsets.iter().map(|&o| {
            let o = usize::from(o);
            // Verified at load: every offset decodes.
            let instr = Instr::decode(&self.bytes[o..]).unwrap_or(Instr::new(Op::Exit));
            (o, instr)
        })
    }
}

/// Deepest live stack along any path, in one forward pass.
fn check_stack_depth(decoded: &[(usize, Instr)], steps: &[Plain]) -> Result<(), VerifyError> {
    // depth_in[i]: the most live entries on entry to step i over all paths;
    // None when no path reaches it.
    let mut depth_in: Vec<Option<u32>> = vec![None; steps.len() + 1];
    depth_in[0] = Some(0);
    for (i, &(op, arg)) in steps.iter().enumerate() {
        let Some(depth) = depth_in[i] else { continue };
        let (pops, pushes) = op.stack_effect(arg);
        let after_pops = depth.saturating_sub(pops);
        let peak = after_pops + pushes;
        if peak > STACK_SLOTS as u32 {
            return Err(VerifyError {
                offset: decoded[i].0,
                kind: VerifyErrorKind::StackOverflow { depth: peak },
            });
        }
        let mut reach = |target: usize| {
            let slot = &mut depth_in[target];
            *slot = Some(slot.map_or(peak, |d| d.max(peak)));
        };
        if op.is_jump() {
            reach(arg as usize);
        }
        if op != Op::JmpN && !op.ends_hit() {
            reach(i + 1);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(bytes: &[u8], vars: u32) -> VerifyErrorKind {
        Program::load(bytes, vars).unwrap_err().kind
    }

    #[test]
    fn accepts_trcust_output() {
        let p = Program::load(
            &[0x10, 0x04, 0x00, 0x04, 0x1A, 0x08, 0, 0, 0, 0x16, 0x22],
            0,
        )
        .unwrap();
        assert_eq!(p.len(), 5);
    }

    #[test]
    fn jumps_forward_to_boundaries_or_the_end() {
        // Jmp N,1 over a Push EAX, onto Exit: fine.
        Program::load(&[0x24, 0x01, 0x00, 0x00, 0x39], 0).unwrap();
        // Jmp N,0 is a no-op; a jump to exactly the end is allowed.
        Program::load(&[0x24, 0x00, 0x00], 0).unwrap();
        Program::load(&[0x24, 0x01, 0x00, 0x00], 0).unwrap();
        assert!(matches!(
            kind(&[0x24, 0x02, 0x00, 0x00], 0),
            VerifyErrorKind::JumpPastEnd { target: 5, .. }
        ));
        // Into the middle of Push W.
        assert!(matches!(
            kind(&[0x24, 0x01, 0x00, 0x10, 0x00, 0x00], 0),
            VerifyErrorKind::JumpIntoInstruction { target: 4 }
        ));
    }

    #[test]
    fn rejects_long_truncated_unknown_and_bad_vars() {
        assert!(matches!(
            kind(&[0x00; 256], 0),
            VerifyErrorKind::TooLong { len: 256 }
        ));
        assert!(matches!(
            kind(&[0x10, 0x01], 0),
            VerifyErrorKind::Decode(DecodeError::Truncated { .. })
        ));
        assert!(matches!(
            kind(&[0x2F], 0),
            VerifyErrorKind::Decode(DecodeError::UnknownOpcode { byte: 0x2F })
        ));
        assert_eq!(
            kind(&[0x2C, 0x02, 0x00], 2),
            VerifyErrorKind::VariableOutOfRange { index: 2, vars: 2 }
        );
        Program::load(&[0x2C, 0x01, 0x00], 2).unwrap();
    }

    #[test]
    fn stack_depth_is_checked_along_every_path() {
        let mut sixteen = vec![0x00; 16];
        sixteen.extend([0x21, 16]);
        Program::load(&sixteen, 0).unwrap();
        let mut seventeen = vec![0x00; 17];
        seventeen.extend([0x21, 17]);
        assert_eq!(
            Program::load(&seventeen, 0).unwrap_err(),
            VerifyError {
                offset: 16,
                kind: VerifyErrorKind::StackOverflow { depth: 17 }
            }
        );
        // 15 pushes, a conditional jump over a Pop N: the target sees 15 and,
        // through the jump, 15; then two more pushes make 17.
        let mut branchy = vec![0x00; 15];
        branchy.extend([0x27, 0x02, 0x00, 0x2E, 0x05, 0x00, 0x00]);
        assert!(matches!(
            kind(&branchy, 0),
            VerifyErrorKind::StackOverflow { depth: 17 }
        ));
        // Code after an unconditional jump or Exit starts from what reaches it.
        let mut skipped = vec![0x00; 16];
        skipped.extend([0x39, 0x00]);
        Program::load(&skipped, 0).unwrap();
    }
}
