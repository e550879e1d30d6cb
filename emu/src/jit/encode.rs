//! A fast path for encoding the host instructions the emitter builds most:
//! the legacy forms of MOV, the ALU group, TEST, LEA, MOVZX/MOVSX, the
//! unary and shift groups, BT, PUSH/POP and a few bare ones, with
//! registers or a `[base + index * scale + disp]` operand of 64-bit
//! registers. iced-x86's `Encoder` takes everything else (and anything
//! unusual about these: prefixes, other address forms, a register of the
//! wrong size or a high byte register beside a REX prefix, which it
//! refuses).
//!
//! iced's encoder is general (every encoding, every mode, operand checks
//! per instruction), and it was most of a block's translation time: a
//! block of a few guest instructions is a hundred or more host
//! instructions. Here an instruction is a table lookup and a few byte
//! pushes. The output is iced's byte for byte: `tests.rs` compares the
//! two on every table entry with random operands, and debug builds
//! compare them on every instruction the emitter assembles.

use iced_x86::{Code, Instruction, OpKind, Register};
use std::sync::OnceLock;

/// How an instruction's operands are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// No operand.
    Bare,
    /// A register in the opcode's low three bits (and REX.B), then the
    /// immediate, if any.
    Plus,
    /// Operand 0 in ModRM.reg, operand 1 in ModRM.rm.
    RegRm,
    /// Operand 0 in ModRM.rm, operand 1 in ModRM.reg.
    RmReg,
    /// Operand 0 in ModRM.rm, this digit in ModRM.reg, then the
    /// immediate, if any.
    Rm(u8),
    /// The accumulator (operand 0, not encoded), then the immediate.
    Acc,
}
pub(crate) use Form::*;

/// Operand-size prefix 0x66.
pub(crate) const P66: u8 = 1;
/// REX.W.
const W: u8 = 2;

/// One instruction form.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spec {
    /// The opcode: one byte, or 0x0F and a byte (`0x0Fxx`).
    pub(crate) op: u16,
    /// [`P66`] and [`W`].
    pub(crate) flags: u8,
    pub(crate) form: Form,
    /// Bytes of the register operand (ModRM.reg, or in the opcode).
    pub(crate) reg: u8,
    /// Bytes of the r/m operand when it is a register (0: memory only).
    pub(crate) rm: u8,
    /// Bytes of the immediate.
    pub(crate) imm: u8,
}

const fn s(op: u16, flags: u8, form: Form, reg: u8, rm: u8, imm: u8) -> Spec {
    Spec {
        op,
        flags,
        form,
        reg,
        rm,
        imm,
    }
}

const SPECS: [(Code, Spec); 238] = [
    (Code::Add_rm8_r8, s(0x00, 0, RmReg, 1, 1, 0)),
    (Code::Add_rm16_r16, s(0x01, P66, RmReg, 2, 2, 0)),
    (Code::Add_rm32_r32, s(0x01, 0, RmReg, 4, 4, 0)),
    (Code::Add_rm64_r64, s(0x01, W, RmReg, 8, 8, 0)),
    (Code::Add_r8_rm8, s(0x02, 0, RegRm, 1, 1, 0)),
    (Code::Add_r16_rm16, s(0x03, P66, RegRm, 2, 2, 0)),
    (Code::Add_r32_rm32, s(0x03, 0, RegRm, 4, 4, 0)),
    (Code::Add_r64_rm64, s(0x03, W, RegRm, 8, 8, 0)),
    (Code::Add_AL_imm8, s(0x04, 0, Acc, 1, 0, 1)),
    (Code::Add_AX_imm16, s(0x05, P66, Acc, 2, 0, 2)),
    (Code::Add_EAX_imm32, s(0x05, 0, Acc, 4, 0, 4)),
    (Code::Add_RAX_imm32, s(0x05, W, Acc, 8, 0, 4)),
    (Code::Add_rm8_imm8, s(0x80, 0, Rm(0), 0, 1, 1)),
    (Code::Add_rm16_imm16, s(0x81, P66, Rm(0), 0, 2, 2)),
    (Code::Add_rm32_imm32, s(0x81, 0, Rm(0), 0, 4, 4)),
    (Code::Add_rm64_imm32, s(0x81, W, Rm(0), 0, 8, 4)),
    (Code::Add_rm16_imm8, s(0x83, P66, Rm(0), 0, 2, 1)),
    (Code::Add_rm32_imm8, s(0x83, 0, Rm(0), 0, 4, 1)),
    (Code::Add_rm64_imm8, s(0x83, W, Rm(0), 0, 8, 1)),
    (Code::Or_rm8_r8, s(0x08, 0, RmReg, 1, 1, 0)),
    (Code::Or_rm16_r16, s(0x09, P66, RmReg, 2, 2, 0)),
    (Code::Or_rm32_r32, s(0x09, 0, RmReg, 4, 4, 0)),
    (Code::Or_rm64_r64, s(0x09, W, RmReg, 8, 8, 0)),
    (Code::Or_r8_rm8, s(0x0A, 0, RegRm, 1, 1, 0)),
    (Code::Or_r16_rm16, s(0x0B, P66, RegRm, 2, 2, 0)),
    (Code::Or_r32_rm32, s(0x0B, 0, RegRm, 4, 4, 0)),
    (Code::Or_r64_rm64, s(0x0B, W, RegRm, 8, 8, 0)),
    (Code::Or_AL_imm8, s(0x0C, 0, Acc, 1, 0, 1)),
    (Code::Or_AX_imm16, s(0x0D, P66, Acc, 2, 0, 2)),
    (Code::Or_EAX_imm32, s(0x0D, 0, Acc, 4, 0, 4)),
    (Code::Or_RAX_imm32, s(0x0D, W, Acc, 8, 0, 4)),
    (Code::Or_rm8_imm8, s(0x80, 0, Rm(1), 0, 1, 1)),
    (Code::Or_rm16_imm16, s(0x81, P66, Rm(1), 0, 2, 2)),
    (Code::Or_rm32_imm32, s(0x81, 0, Rm(1), 0, 4, 4)),
    (Code::Or_rm64_imm32, s(0x81, W, Rm(1), 0, 8, 4)),
    (Code::Or_rm16_imm8, s(0x83, P66, Rm(1), 0, 2, 1)),
    (Code::Or_rm32_imm8, s(0x83, 0, Rm(1), 0, 4, 1)),
    (Code::Or_rm64_imm8, s(0x83, W, Rm(1), 0, 8, 1)),
    (Code::Adc_rm8_r8, s(0x10, 0, RmReg, 1, 1, 0)),
    (Code::Adc_rm16_r16, s(0x11, P66, RmReg, 2, 2, 0)),
    (Code::Adc_rm32_r32, s(0x11, 0, RmReg, 4, 4, 0)),
    (Code::Adc_rm64_r64, s(0x11, W, RmReg, 8, 8, 0)),
    (Code::Adc_r8_rm8, s(0x12, 0, RegRm, 1, 1, 0)),
    (Code::Adc_r16_rm16, s(0x13, P66, RegRm, 2, 2, 0)),
    (Code::Adc_r32_rm32, s(0x13, 0, RegRm, 4, 4, 0)),
    (Code::Adc_r64_rm64, s(0x13, W, RegRm, 8, 8, 0)),
    (Code::Adc_AL_imm8, s(0x14, 0, Acc, 1, 0, 1)),
    (Code::Adc_AX_imm16, s(0x15, P66, Acc, 2, 0, 2)),
    (Code::Adc_EAX_imm32, s(0x15, 0, Acc, 4, 0, 4)),
    (Code::Adc_RAX_imm32, s(0x15, W, Acc, 8, 0, 4)),
    (Code::Adc_rm8_imm8, s(0x80, 0, Rm(2), 0, 1, 1)),
    (Code::Adc_rm16_imm16, s(0x81, P66, Rm(2), 0, 2, 2)),
    (Code::Adc_rm32_imm32, s(0x81, 0, Rm(2), 0, 4, 4)),
    (Code::Adc_rm64_imm32, s(0x81, W, Rm(2), 0, 8, 4)),
    (Code::Adc_rm16_imm8, s(0x83, P66, Rm(2), 0, 2, 1)),
    (Code::Adc_rm32_imm8, s(0x83, 0, Rm(2), 0, 4, 1)),
    (Code::Adc_rm64_imm8, s(0x83, W, Rm(2), 0, 8, 1)),
    (Code::Sbb_rm8_r8, s(0x18, 0, RmReg, 1, 1, 0)),
    (Code::Sbb_rm16_r16, s(0x19, P66, RmReg, 2, 2, 0)),
    (Code::Sbb_rm32_r32, s(0x19, 0, RmReg, 4, 4, 0)),
    (Code::Sbb_rm64_r64, s(0x19, W, RmReg, 8, 8, 0)),
    (Code::Sbb_r8_rm8, s(0x1A, 0, RegRm, 1, 1, 0)),
    (Code::Sbb_r16_rm16, s(0x1B, P66, RegRm, 2, 2, 0)),
    (Code::Sbb_r32_rm32, s(0x1B, 0, RegRm, 4, 4, 0)),
    (Code::Sbb_r64_rm64, s(0x1B, W, RegRm, 8, 8, 0)),
    (Code::Sbb_AL_imm8, s(0x1C, 0, Acc, 1, 0, 1)),
    (Code::Sbb_AX_imm16, s(0x1D, P66, Acc, 2, 0, 2)),
    (Code::Sbb_EAX_imm32, s(0x1D, 0, Acc, 4, 0, 4)),
    (Code::Sbb_RAX_imm32, s(0x1D, W, Acc, 8, 0, 4)),
    (Code::Sbb_rm8_imm8, s(0x80, 0, Rm(3), 0, 1, 1)),
    (Code::Sbb_rm16_imm16, s(0x81, P66, Rm(3), 0, 2, 2)),
    (Code::Sbb_rm32_imm32, s(0x81, 0, Rm(3), 0, 4, 4)),
    (Code::Sbb_rm64_imm32, s(0x81, W, Rm(3), 0, 8, 4)),
    (Code::Sbb_rm16_imm8, s(0x83, P66, Rm(3), 0, 2, 1)),
    (Code::Sbb_rm32_imm8, s(0x83, 0, Rm(3), 0, 4, 1)),
    (Code::Sbb_rm64_imm8, s(0x83, W, Rm(3), 0, 8, 1)),
    (Code::And_rm8_r8, s(0x20, 0, RmReg, 1, 1, 0)),
    (Code::And_rm16_r16, s(0x21, P66, RmReg, 2, 2, 0)),
    (Code::And_rm32_r32, s(0x21, 0, RmReg, 4, 4, 0)),
    (Code::And_rm64_r64, s(0x21, W, RmReg, 8, 8, 0)),
    (Code::And_r8_rm8, s(0x22, 0, RegRm, 1, 1, 0)),
    (Code::And_r16_rm16, s(0x23, P66, RegRm, 2, 2, 0)),
    (Code::And_r32_rm32, s(0x23, 0, RegRm, 4, 4, 0)),
    (Code::And_r64_rm64, s(0x23, W, RegRm, 8, 8, 0)),
    (Code::And_AL_imm8, s(0x24, 0, Acc, 1, 0, 1)),
    (Code::And_AX_imm16, s(0x25, P66, Acc, 2, 0, 2)),
    (Code::And_EAX_imm32, s(0x25, 0, Acc, 4, 0, 4)),
    (Code::And_RAX_imm32, s(0x25, W, Acc, 8, 0, 4)),
    (Code::And_rm8_imm8, s(0x80, 0, Rm(4), 0, 1, 1)),
    (Code::And_rm16_imm16, s(0x81, P66, Rm(4), 0, 2, 2)),
    (Code::And_rm32_imm32, s(0x81, 0, Rm(4), 0, 4, 4)),
    (Code::And_rm64_imm32, s(0x81, W, Rm(4), 0, 8, 4)),
    (Code::And_rm16_imm8, s(0x83, P66, Rm(4), 0, 2, 1)),
    (Code::And_rm32_imm8, s(0x83, 0, Rm(4), 0, 4, 1)),
    (Code::And_rm64_imm8, s(0x83, W, Rm(4), 0, 8, 1)),
    (Code::Sub_rm8_r8, s(0x28, 0, RmReg, 1, 1, 0)),
    (Code::Sub_rm16_r16, s(0x29, P66, RmReg, 2, 2, 0)),
    (Code::Sub_rm32_r32, s(0x29, 0, RmReg, 4, 4, 0)),
    (Code::Sub_rm64_r64, s(0x29, W, RmReg, 8, 8, 0)),
    (Code::Sub_r8_rm8, s(0x2A, 0, RegRm, 1, 1, 0)),
    (Code::Sub_r16_rm16, s(0x2B, P66, RegRm, 2, 2, 0)),
    (Code::Sub_r32_rm32, s(0x2B, 0, RegRm, 4, 4, 0)),
    (Code::Sub_r64_rm64, s(0x2B, W, RegRm, 8, 8, 0)),
    (Code::Sub_AL_imm8, s(0x2C, 0, Acc, 1, 0, 1)),
    (Code::Sub_AX_imm16, s(0x2D, P66, Acc, 2, 0, 2)),
    (Code::Sub_EAX_imm32, s(0x2D, 0, Acc, 4, 0, 4)),
    (Code::Sub_RAX_imm32, s(0x2D, W, Acc, 8, 0, 4)),
    (Code::Sub_rm8_imm8, s(0x80, 0, Rm(5), 0, 1, 1)),
    (Code::Sub_rm16_imm16, s(0x81, P66, Rm(5), 0, 2, 2)),
    (Code::Sub_rm32_imm32, s(0x81, 0, Rm(5), 0, 4, 4)),
    (Code::Sub_rm64_imm32, s(0x81, W, Rm(5), 0, 8, 4)),
    (Code::Sub_rm16_imm8, s(0x83, P66, Rm(5), 0, 2, 1)),
    (Code::Sub_rm32_imm8, s(0x83, 0, Rm(5), 0, 4, 1)),
    (Code::Sub_rm64_imm8, s(0x83, W, Rm(5), 0, 8, 1)),
    (Code::Xor_rm8_r8, s(0x30, 0, RmReg, 1, 1, 0)),
    (Code::Xor_rm16_r16, s(0x31, P66, RmReg, 2, 2, 0)),
    (Code::Xor_rm32_r32, s(0x31, 0, RmReg, 4, 4, 0)),
    (Code::Xor_rm64_r64, s(0x31, W, RmReg, 8, 8, 0)),
    (Code::Xor_r8_rm8, s(0x32, 0, RegRm, 1, 1, 0)),
    (Code::Xor_r16_rm16, s(0x33, P66, RegRm, 2, 2, 0)),
    (Code::Xor_r32_rm32, s(0x33, 0, RegRm, 4, 4, 0)),
    (Code::Xor_r64_rm64, s(0x33, W, RegRm, 8, 8, 0)),
    (Code::Xor_AL_imm8, s(0x34, 0, Acc, 1, 0, 1)),
    (Code::Xor_AX_imm16, s(0x35, P66, Acc, 2, 0, 2)),
    (Code::Xor_EAX_imm32, s(0x35, 0, Acc, 4, 0, 4)),
    (Code::Xor_RAX_imm32, s(0x35, W, Acc, 8, 0, 4)),
    (Code::Xor_rm8_imm8, s(0x80, 0, Rm(6), 0, 1, 1)),
    (Code::Xor_rm16_imm16, s(0x81, P66, Rm(6), 0, 2, 2)),
    (Code::Xor_rm32_imm32, s(0x81, 0, Rm(6), 0, 4, 4)),
    (Code::Xor_rm64_imm32, s(0x81, W, Rm(6), 0, 8, 4)),
    (Code::Xor_rm16_imm8, s(0x83, P66, Rm(6), 0, 2, 1)),
    (Code::Xor_rm32_imm8, s(0x83, 0, Rm(6), 0, 4, 1)),
    (Code::Xor_rm64_imm8, s(0x83, W, Rm(6), 0, 8, 1)),
    (Code::Cmp_rm8_r8, s(0x38, 0, RmReg, 1, 1, 0)),
    (Code::Cmp_rm16_r16, s(0x39, P66, RmReg, 2, 2, 0)),
    (Code::Cmp_rm32_r32, s(0x39, 0, RmReg, 4, 4, 0)),
    (Code::Cmp_rm64_r64, s(0x39, W, RmReg, 8, 8, 0)),
    (Code::Cmp_r8_rm8, s(0x3A, 0, RegRm, 1, 1, 0)),
    (Code::Cmp_r16_rm16, s(0x3B, P66, RegRm, 2, 2, 0)),
    (Code::Cmp_r32_rm32, s(0x3B, 0, RegRm, 4, 4, 0)),
    (Code::Cmp_r64_rm64, s(0x3B, W, RegRm, 8, 8, 0)),
    (Code::Cmp_AL_imm8, s(0x3C, 0, Acc, 1, 0, 1)),
    (Code::Cmp_AX_imm16, s(0x3D, P66, Acc, 2, 0, 2)),
    (Code::Cmp_EAX_imm32, s(0x3D, 0, Acc, 4, 0, 4)),
    (Code::Cmp_RAX_imm32, s(0x3D, W, Acc, 8, 0, 4)),
    (Code::Cmp_rm8_imm8, s(0x80, 0, Rm(7), 0, 1, 1)),
    (Code::Cmp_rm16_imm16, s(0x81, P66, Rm(7), 0, 2, 2)),
    (Code::Cmp_rm32_imm32, s(0x81, 0, Rm(7), 0, 4, 4)),
    (Code::Cmp_rm64_imm32, s(0x81, W, Rm(7), 0, 8, 4)),
    (Code::Cmp_rm16_imm8, s(0x83, P66, Rm(7), 0, 2, 1)),
    (Code::Cmp_rm32_imm8, s(0x83, 0, Rm(7), 0, 4, 1)),
    (Code::Cmp_rm64_imm8, s(0x83, W, Rm(7), 0, 8, 1)),
    (Code::Mov_rm8_r8, s(0x88, 0, RmReg, 1, 1, 0)),
    (Code::Mov_rm16_r16, s(0x89, P66, RmReg, 2, 2, 0)),
    (Code::Mov_rm32_r32, s(0x89, 0, RmReg, 4, 4, 0)),
    (Code::Mov_rm64_r64, s(0x89, W, RmReg, 8, 8, 0)),
    (Code::Mov_r8_rm8, s(0x8A, 0, RegRm, 1, 1, 0)),
    (Code::Mov_r16_rm16, s(0x8B, P66, RegRm, 2, 2, 0)),
    (Code::Mov_r32_rm32, s(0x8B, 0, RegRm, 4, 4, 0)),
    (Code::Mov_r64_rm64, s(0x8B, W, RegRm, 8, 8, 0)),
    (Code::Mov_rm8_imm8, s(0xC6, 0, Rm(0), 0, 1, 1)),
    (Code::Mov_rm16_imm16, s(0xC7, P66, Rm(0), 0, 2, 2)),
    (Code::Mov_rm32_imm32, s(0xC7, 0, Rm(0), 0, 4, 4)),
    (Code::Mov_rm64_imm32, s(0xC7, W, Rm(0), 0, 8, 4)),
    (Code::Mov_r32_imm32, s(0xB8, 0, Plus, 4, 0, 4)),
    (Code::Test_rm8_r8, s(0x84, 0, RmReg, 1, 1, 0)),
    (Code::Test_rm16_r16, s(0x85, P66, RmReg, 2, 2, 0)),
    (Code::Test_rm32_r32, s(0x85, 0, RmReg, 4, 4, 0)),
    (Code::Test_rm64_r64, s(0x85, W, RmReg, 8, 8, 0)),
    (Code::Test_AL_imm8, s(0xA8, 0, Acc, 1, 0, 1)),
    (Code::Test_AX_imm16, s(0xA9, P66, Acc, 2, 0, 2)),
    (Code::Test_EAX_imm32, s(0xA9, 0, Acc, 4, 0, 4)),
    (Code::Test_RAX_imm32, s(0xA9, W, Acc, 8, 0, 4)),
    (Code::Test_rm8_imm8, s(0xF6, 0, Rm(0), 0, 1, 1)),
    (Code::Test_rm16_imm16, s(0xF7, P66, Rm(0), 0, 2, 2)),
    (Code::Test_rm32_imm32, s(0xF7, 0, Rm(0), 0, 4, 4)),
    (Code::Test_rm64_imm32, s(0xF7, W, Rm(0), 0, 8, 4)),
    (Code::Lea_r16_m, s(0x8D, P66, RegRm, 2, 0, 0)),
    (Code::Lea_r32_m, s(0x8D, 0, RegRm, 4, 0, 0)),
    (Code::Lea_r64_m, s(0x8D, W, RegRm, 8, 0, 0)),
    (Code::Movzx_r16_rm8, s(0x0FB6, P66, RegRm, 2, 1, 0)),
    (Code::Movzx_r32_rm8, s(0x0FB6, 0, RegRm, 4, 1, 0)),
    (Code::Movzx_r64_rm8, s(0x0FB6, W, RegRm, 8, 1, 0)),
    (Code::Movzx_r16_rm16, s(0x0FB7, P66, RegRm, 2, 2, 0)),
    (Code::Movzx_r32_rm16, s(0x0FB7, 0, RegRm, 4, 2, 0)),
    (Code::Movzx_r64_rm16, s(0x0FB7, W, RegRm, 8, 2, 0)),
    (Code::Movsx_r16_rm8, s(0x0FBE, P66, RegRm, 2, 1, 0)),
    (Code::Movsx_r32_rm8, s(0x0FBE, 0, RegRm, 4, 1, 0)),
    (Code::Movsx_r64_rm8, s(0x0FBE, W, RegRm, 8, 1, 0)),
    (Code::Movsx_r16_rm16, s(0x0FBF, P66, RegRm, 2, 2, 0)),
    (Code::Movsx_r32_rm16, s(0x0FBF, 0, RegRm, 4, 2, 0)),
    (Code::Movsx_r64_rm16, s(0x0FBF, W, RegRm, 8, 2, 0)),
    (Code::Inc_rm8, s(0xFE, 0, Rm(0), 0, 1, 0)),
    (Code::Inc_rm16, s(0xFF, P66, Rm(0), 0, 2, 0)),
    (Code::Inc_rm32, s(0xFF, 0, Rm(0), 0, 4, 0)),
    (Code::Inc_rm64, s(0xFF, W, Rm(0), 0, 8, 0)),
    (Code::Dec_rm8, s(0xFE, 0, Rm(1), 0, 1, 0)),
    (Code::Dec_rm16, s(0xFF, P66, Rm(1), 0, 2, 0)),
    (Code::Dec_rm32, s(0xFF, 0, Rm(1), 0, 4, 0)),
    (Code::Dec_rm64, s(0xFF, W, Rm(1), 0, 8, 0)),
    (Code::Not_rm8, s(0xF6, 0, Rm(2), 0, 1, 0)),
    (Code::Not_rm16, s(0xF7, P66, Rm(2), 0, 2, 0)),
    (Code::Not_rm32, s(0xF7, 0, Rm(2), 0, 4, 0)),
    (Code::Not_rm64, s(0xF7, W, Rm(2), 0, 8, 0)),
    (Code::Neg_rm8, s(0xF6, 0, Rm(3), 0, 1, 0)),
    (Code::Neg_rm16, s(0xF7, P66, Rm(3), 0, 2, 0)),
    (Code::Neg_rm32, s(0xF7, 0, Rm(3), 0, 4, 0)),
    (Code::Neg_rm64, s(0xF7, W, Rm(3), 0, 8, 0)),
    (Code::Rol_rm8_imm8, s(0xC0, 0, Rm(0), 0, 1, 1)),
    (Code::Rol_rm16_imm8, s(0xC1, P66, Rm(0), 0, 2, 1)),
    (Code::Rol_rm32_imm8, s(0xC1, 0, Rm(0), 0, 4, 1)),
    (Code::Rol_rm64_imm8, s(0xC1, W, Rm(0), 0, 8, 1)),
    (Code::Ror_rm8_imm8, s(0xC0, 0, Rm(1), 0, 1, 1)),
    (Code::Ror_rm16_imm8, s(0xC1, P66, Rm(1), 0, 2, 1)),
    (Code::Ror_rm32_imm8, s(0xC1, 0, Rm(1), 0, 4, 1)),
    (Code::Ror_rm64_imm8, s(0xC1, W, Rm(1), 0, 8, 1)),
    (Code::Shl_rm8_imm8, s(0xC0, 0, Rm(4), 0, 1, 1)),
    (Code::Shl_rm16_imm8, s(0xC1, P66, Rm(4), 0, 2, 1)),
    (Code::Shl_rm32_imm8, s(0xC1, 0, Rm(4), 0, 4, 1)),
    (Code::Shl_rm64_imm8, s(0xC1, W, Rm(4), 0, 8, 1)),
    (Code::Shr_rm8_imm8, s(0xC0, 0, Rm(5), 0, 1, 1)),
    (Code::Shr_rm16_imm8, s(0xC1, P66, Rm(5), 0, 2, 1)),
    (Code::Shr_rm32_imm8, s(0xC1, 0, Rm(5), 0, 4, 1)),
    (Code::Shr_rm64_imm8, s(0xC1, W, Rm(5), 0, 8, 1)),
    (Code::Sar_rm8_imm8, s(0xC0, 0, Rm(7), 0, 1, 1)),
    (Code::Sar_rm16_imm8, s(0xC1, P66, Rm(7), 0, 2, 1)),
    (Code::Sar_rm32_imm8, s(0xC1, 0, Rm(7), 0, 4, 1)),
    (Code::Sar_rm64_imm8, s(0xC1, W, Rm(7), 0, 8, 1)),
    (Code::Bt_rm16_r16, s(0x0FA3, P66, RmReg, 2, 2, 0)),
    (Code::Bt_rm32_r32, s(0x0FA3, 0, RmReg, 4, 4, 0)),
    (Code::Bt_rm64_r64, s(0x0FA3, W, RmReg, 8, 8, 0)),
    (Code::Push_r64, s(0x50, 0, Plus, 8, 0, 0)),
    (Code::Pop_r64, s(0x58, 0, Plus, 8, 0, 0)),
    (Code::Push_rm64, s(0xFF, 0, Rm(6), 0, 8, 0)),
    (Code::Pop_rm64, s(0x8F, 0, Rm(0), 0, 8, 0)),
    (Code::Pushfq, s(0x9C, 0, Bare, 0, 0, 0)),
    (Code::Popfq, s(0x9D, 0, Bare, 0, 0, 0)),
    (Code::Retnq, s(0xC3, 0, Bare, 0, 0, 0)),
];

/// The forms, indexed by `Code`.
fn specs() -> &'static [Option<Spec>] {
    static TABLE: OnceLock<Vec<Option<Spec>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let len = SPECS
            .iter()
            .map(|&(c, _)| c as usize + 1)
            .max()
            .unwrap_or(0);
        let mut t = vec![None; len];
        for (code, spec) in SPECS {
            t[code as usize] = Some(spec);
        }
        t
    })
}

/// The forms the fast path encodes (for the tests).
#[cfg(test)]
pub(crate) fn specs_for_tests() -> impl Iterator<Item = (Code, Spec)> {
    SPECS.into_iter()
}

/// A general register's number (0..16), for a register of `size` bytes;
/// for byte registers also whether it needs a REX prefix (SPL..DIL,
/// R8L..R15L) or forbids one (AH..BH).
fn gpr(r: Register, size: u8) -> Option<(u8, Rex)> {
    if !r.is_gpr() || r.size() != usize::from(size) {
        return None;
    }
    if size != 1 {
        return Some((r.number() as u8, Rex::Any));
    }
    let i = r as u32 - Register::AL as u32;
    Some(match i {
        0..=3 => (i as u8, Rex::Any),
        4..=7 => (i as u8, Rex::Never),
        8..=11 => (i as u8 - 4, Rex::Always),
        _ => (i as u8 - 4, Rex::Any),
    })
}

/// What a byte register asks of the REX prefix.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rex {
    Any,
    /// SPL, BPL, SIL, DIL (without REX they are AH..BH).
    Always,
    /// AH, CH, DH, BH.
    Never,
}

/// Append `i`'s encoding to `out` if the fast path takes it; false (and
/// `out` unchanged) if iced's encoder must.
pub(crate) fn encode(i: &Instruction, out: &mut Vec<u8>) -> bool {
    let Some(Some(spec)) = specs().get(i.code() as usize).copied() else {
        return false;
    };
    if i.has_segment_prefix()
        || i.has_lock_prefix()
        || i.has_rep_prefix()
        || i.has_repne_prefix()
        || i.has_xacquire_prefix()
        || i.has_xrelease_prefix()
    {
        return false;
    }
    let start = out.len();
    if encode_spec(i, spec, out).is_none() {
        out.truncate(start);
        return false;
    }
    true
}

/// The ModRM.rm side of an instruction: a register or a memory operand.
enum RmOp {
    Reg(u8),
    /// mod bits, rm bits, SIB, displacement bytes (0, 1, 4), the
    /// displacement, REX.X, REX.B.
    Mem {
        md: u8,
        rm: u8,
        sib: Option<u8>,
        disp_len: u8,
        disp: i32,
        x: bool,
        b: bool,
    },
}

/// A memory operand `[base + index * scale + disp]` of 64-bit registers,
/// encoded as iced does.
fn mem(i: &Instruction) -> Option<RmOp> {
    let base = i.memory_base();
    let index = i.memory_index();
    if !base.is_gpr64()
        || (index != Register::None && (!index.is_gpr64() || index == Register::RSP))
    {
        return None;
    }
    let disp = i32::try_from(i.memory_displacement64() as i64).ok()?;
    let base_n = base.number() as u8;
    let mut displ_size = i.memory_displ_size();
    if displ_size == 0 && base_n & 7 == 5 {
        displ_size = 1;
    }
    let disp_len = match displ_size {
        0 if disp == 0 => 0,
        1 if i8::try_from(disp).is_ok() => 1,
        1 | 8 => 4,
        _ => return None,
    };
    let scale = match i.memory_index_scale() {
        1 => 0,
        2 => 1,
        4 => 2,
        8 => 3,
        _ => return None,
    };
    let md = match disp_len {
        0 => 0x00,
        1 => 0x40,
        _ => 0x80,
    };
    let (sib, x) = if index != Register::None {
        let n = index.number() as u8;
        (Some((scale << 6) | ((n & 7) << 3) | (base_n & 7)), n >= 8)
    } else if scale != 0 {
        return None;
    } else if base_n & 7 == 4 {
        (Some(0x24), false)
    } else {
        (None, false)
    };
    Some(RmOp::Mem {
        md,
        rm: if sib.is_some() { 4 } else { base_n & 7 },
        sib,
        disp_len,
        disp,
        x,
        b: base_n >= 8,
    })
}

fn encode_spec(i: &Instruction, spec: Spec, out: &mut Vec<u8>) -> Option<()> {
    let mut rex = if spec.flags & W != 0 { 0x48u8 } else { 0 };
    let mut need = Rex::Any;
    let mut byte_reg = |r: Register, size: u8| -> Option<u8> {
        let (n, k) = gpr(r, size)?;
        if k != Rex::Any {
            if need != Rex::Any && need != k {
                return None;
            }
            need = k;
        }
        Some(n)
    };
    // (ModRM.reg, the r/m operand); `reg` None for Bare/Plus/Acc.
    let (reg, rm): (Option<u8>, Option<RmOp>) = match spec.form {
        Bare => {
            if i.op_count() != 0 {
                return None;
            }
            (None, None)
        }
        Plus | Acc => {
            if i.op0_kind() != OpKind::Register {
                return None;
            }
            let n = byte_reg(i.op0_register(), spec.reg)?;
            if spec.form == Acc && n != 0 {
                return None;
            }
            (Some(n), None)
        }
        RegRm | RmReg | Rm(_) => {
            let (reg_op, rm_op) = match spec.form {
                RegRm => (Some(0), 1),
                RmReg => (Some(1), 0),
                _ => (None, 0),
            };
            let reg = match (spec.form, reg_op) {
                (Rm(d), _) => d,
                (_, Some(k)) => {
                    if i.op_kind(k) != OpKind::Register {
                        return None;
                    }
                    byte_reg(i.op_register(k), spec.reg)?
                }
                _ => return None,
            };
            let rm = match i.op_kind(rm_op) {
                OpKind::Register if spec.rm != 0 => {
                    RmOp::Reg(byte_reg(i.op_register(rm_op), spec.rm)?)
                }
                OpKind::Memory => mem(i)?,
                _ => return None,
            };
            (Some(reg), Some(rm))
        }
    };
    // The register fields' high bits.
    match (spec.form, reg) {
        (Plus, Some(n)) | (RegRm | RmReg, Some(n)) if n >= 8 => {
            rex |= if spec.form == Plus { 0x41 } else { 0x44 };
        }
        _ => {}
    }
    match &rm {
        Some(RmOp::Reg(n)) if *n >= 8 => rex |= 0x41,
        Some(RmOp::Mem { x, b, .. }) => {
            if *x {
                rex |= 0x42;
            }
            if *b {
                rex |= 0x41;
            }
        }
        _ => {}
    }
    if need == Rex::Always {
        rex |= 0x40;
    }
    if rex != 0 && need == Rex::Never {
        return None;
    }
    let imm_kind_ok = match spec.imm {
        0 => {
            i.op_count()
                == if matches!(spec.form, Bare) {
                    0
                } else if matches!(spec.form, Plus | Rm(_)) {
                    1
                } else {
                    2
                }
        }
        _ => {
            let k = i.op_kind(i.op_count().checked_sub(1)?);
            matches!(
                (spec.imm, k),
                (
                    1,
                    OpKind::Immediate8
                        | OpKind::Immediate8to16
                        | OpKind::Immediate8to32
                        | OpKind::Immediate8to64
                ) | (2, OpKind::Immediate16)
                    | (4, OpKind::Immediate32 | OpKind::Immediate32to64)
            )
        }
    };
    if !imm_kind_ok {
        return None;
    }
    if spec.flags & P66 != 0 {
        out.push(0x66);
    }
    if rex != 0 {
        out.push(rex);
    }
    if spec.op > 0xFF {
        out.push((spec.op >> 8) as u8);
    }
    let op = spec.op as u8;
    match (spec.form, reg, rm) {
        (Bare | Acc, _, _) => out.push(op),
        (Plus, Some(n), _) => out.push(op + (n & 7)),
        (_, Some(r), Some(RmOp::Reg(n))) => {
            out.push(op);
            out.push(0xC0 | ((r & 7) << 3) | (n & 7));
        }
        (
            _,
            Some(r),
            Some(RmOp::Mem {
                md,
                rm,
                sib,
                disp_len,
                disp,
                ..
            }),
        ) => {
            out.push(op);
            out.push(md | ((r & 7) << 3) | rm);
            if let Some(sib) = sib {
                out.push(sib);
            }
            out.extend_from_slice(&disp.to_le_bytes()[..usize::from(disp_len)]);
        }
        _ => return None,
    }
    if spec.imm != 0 {
        let imm = i.immediate(i.op_count() - 1);
        out.extend_from_slice(&imm.to_le_bytes()[..usize::from(spec.imm)]);
    }
    Some(())
}
