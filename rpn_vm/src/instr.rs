//! One RPN instruction: an opcode and its immediate operand, encoded and
//! decoded through the opcode table.

use crate::opcode::{Op, Operand};

/// An instruction: opcode and operand (zero when the opcode has none).
///
/// Jump operands are distances in bytes from the end of the jump, as in the
/// bytecode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Instr {
    /// The opcode.
    pub op: Op,
    /// The immediate operand, zero-extended.
    pub operand: u32,
}

// Size check on a hot struct (as iced-x86 does): programs are decoded into
// vectors of these and the interpreter walks them on every hit.
const _: () = assert!(size_of::<Instr>() == 8);

/// Why bytes could not be decoded as an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The byte is not in the opcode table.
    #[error("unknown opcode byte 0x{byte:02X}")]
    UnknownOpcode {
        /// The byte found.
        byte: u8,
    },
    /// The operand runs past the end of the program.
    #[error("truncated instruction: {name} needs {needed} bytes, {available} left")]
    Truncated {
        /// Canonical name of the opcode.
        name: &'static str,
        /// Instruction length.
        needed: usize,
        /// Bytes left in the program.
        available: usize,
    },
}

impl Instr {
    /// An instruction without operand.
    pub const fn new(op: Op) -> Instr {
        Instr { op, operand: 0 }
    }

    /// An instruction with an operand.
    pub const fn with(op: Op, operand: u32) -> Instr {
        Instr { op, operand }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.op.len()
    }

    /// Always false: an instruction has at least its opcode byte.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Appends the encoding to `out`. The operand is truncated to its size;
    /// the assembler checks ranges before it gets here.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.op.byte());
        let bytes = self.operand.to_le_bytes();
        out.extend_from_slice(&bytes[..self.op.operand().size()]);
    }

    /// Decodes the instruction at the start of `bytes`.
    ///
    /// # Errors
    /// [`DecodeError`] for an unknown byte or a truncated operand.
    pub fn decode(bytes: &[u8]) -> Result<Instr, DecodeError> {
        let byte = *bytes
            .first()
            .ok_or(DecodeError::UnknownOpcode { byte: 0 })?;
        let op = Op::from_byte(byte).ok_or(DecodeError::UnknownOpcode { byte })?;
        let needed = op.len();
        if bytes.len() < needed {
            return Err(DecodeError::Truncated {
                name: op_static_name(op),
                needed,
                available: bytes.len(),
            });
        }
        let operand = match op.operand() {
            Operand::None => 0,
            Operand::Byte => u32::from(bytes[1]),
            Operand::Word => u32::from(u16::from_le_bytes([bytes[1], bytes[2]])),
            Operand::Dword => u32::from_le_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]),
        };
        Ok(Instr { op, operand })
    }
}

fn op_static_name(op: Op) -> &'static str {
    let info = op.info();
    if info.form.is_empty() {
        info.mnemonic
    } else {
        info.form
    }
}

/// Decodes a whole program into (byte offset, instruction) pairs.
///
/// # Errors
/// The offset and [`DecodeError`] of the first bad instruction.
pub fn decode_all(bytes: &[u8]) -> Result<Vec<(usize, Instr)>, (usize, DecodeError)> {
    let mut out = Vec::new();
    let mut offset = 0;
    while offset < bytes.len() {
        let instr = Instr::decode(&bytes[offset..]).map_err(|e| (offset, e))?;
        out.push((offset, instr));
        offset += instr.len();
    }
    Ok(out)
}

/// Encodes a sequence of instructions.
pub fn encode_all(instrs: &[Instr]) -> Vec<u8> {
    let mut out = Vec::new();
    for instr in instrs {
        instr.encode(&mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_opcode_round_trips() {
        for op in Op::all() {
            let operand = op.operand().max() & 0x1234_5678;
            let instr = Instr::with(op, operand);
            let mut bytes = Vec::new();
            instr.encode(&mut bytes);
            assert_eq!(bytes.len(), op.len());
            assert_eq!(Instr::decode(&bytes), Ok(instr));
            if op.len() > 1 {
                assert!(matches!(
                    Instr::decode(&bytes[..op.len() - 1]),
                    Err(DecodeError::Truncated { .. })
                ));
            }
        }
    }

    #[test]
    fn trcust_fragment_decodes() {
        // m32_d_fesp8: MEM32=(FESP+8,DIRECT,4)
        let bytes = [
            0x10, 0x04, 0x00, 0x04, 0x1A, 0x08, 0x00, 0x00, 0x00, 0x16, 0x22,
        ];
        let ops: Vec<Op> = decode_all(&bytes)
            .unwrap()
            .into_iter()
            .map(|(_, i)| i.op)
            .collect();
        assert_eq!(
            ops,
            [Op::PushW, Op::PushEsp, Op::PushD, Op::Add, Op::LogMrf]
        );
        assert_eq!(
            decode_all(&[0x2F]),
            Err((0, DecodeError::UnknownOpcode { byte: 0x2F }))
        );
    }
}
