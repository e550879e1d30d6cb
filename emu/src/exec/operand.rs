//! Operand access for decoded instructions: registers, effective addresses,
//! memory operands, immediates and the stack.

use crate::cpu::{Gpr, SegReg};
use crate::fault::R;
use crate::machine::Machine;
use iced_x86::{Instruction, OpKind, Register};

const AL: u32 = Register::AL as u32;
const AH: u32 = Register::AH as u32;
const AX: u32 = Register::AX as u32;
const EAX: u32 = Register::EAX as u32;

/// Register classes in [`REGS`]: (kind, index).
const R_NONE: u8 = 0;
const R_LO8: u8 = 1;
const R_HI8: u8 = 2;
const R_16: u8 = 3;
const R_32: u8 = 4;
const R_SEG: u8 = 5;

const fn reg_table() -> [(u8, u8); 256] {
    let mut t = [(R_NONE, 0u8); 256];
    let mut i = 0;
    while i < 8 {
        t[EAX as usize + i] = (R_32, i as u8);
        t[AX as usize + i] = (R_16, i as u8);
        if i < 4 {
            t[AL as usize + i] = (R_LO8, i as u8);
            t[AH as usize + i] = (R_HI8, i as u8);
        }
        i += 1;
    }
    let es = Register::ES as usize;
    let mut s = 0;
    while s < 6 {
        t[es + s] = (R_SEG, s as u8);
        s += 1;
    }
    t
}

/// Class and index of every iced register number below 256.
static REGS: [(u8, u8); 256] = reg_table();

#[inline]
fn class(r: Register) -> (u8, usize) {
    let (k, i) = REGS[(r as usize) & 0xFF];
    (k, i as usize)
}

/// Where an operand lives.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Loc {
    Reg(Register),
    Mem(SegReg, u32),
}

/// Size in bytes of an iced general register (0 if not a GPR).
#[inline]
pub(crate) fn reg_size(r: Register) -> u32 {
    match class(r).0 {
        R_32 => 4,
        R_16 | R_SEG => 2,
        R_LO8 | R_HI8 => 1,
        _ => 0,
    }
}

/// Mask for an operand size in bytes.
#[inline]
pub(crate) fn mask(n: u32) -> u32 {
    match n {
        1 => 0xFF,
        2 => 0xFFFF,
        _ => 0xFFFF_FFFF,
    }
}

/// Sign bit for an operand size in bytes.
#[inline]
pub(crate) fn sign(n: u32) -> u32 {
    1 << (n * 8 - 1)
}

/// Sign-extend the low `n` bytes of `v` to 32 bits.
#[inline]
pub(crate) fn sext(v: u32, n: u32) -> u32 {
    match n {
        1 => v as u8 as i8 as i32 as u32,
        2 => v as u16 as i16 as i32 as u32,
        _ => v,
    }
}

impl Machine {
    /// Read a general or segment register.
    #[inline]
    pub(crate) fn reg(&self, r: Register) -> u32 {
        let (k, i) = class(r);
        let g = self.cpu.gpr[i & 7];
        match k {
            R_32 => g,
            R_16 => g & 0xFFFF,
            R_LO8 => g & 0xFF,
            R_HI8 => (g >> 8) & 0xFF,
            R_SEG => u32::from(self.cpu.seg[i % 6].selector),
            _ => 0,
        }
    }

    /// Write a general register (segment registers go through load_sreg).
    #[inline]
    pub(crate) fn set_reg(&mut self, r: Register, v: u32) {
        let (k, i) = class(r);
        let g = &mut self.cpu.gpr[i & 7];
        match k {
            R_32 => *g = v,
            R_16 => *g = (*g & 0xFFFF_0000) | (v & 0xFFFF),
            R_LO8 => *g = (*g & !0xFF) | (v & 0xFF),
            R_HI8 => *g = (*g & !0xFF00) | ((v & 0xFF) << 8),
            _ => {}
        }
    }

    /// The offset of the instruction's memory operand.
    #[inline]
    pub(crate) fn ea(&self, insn: &Instruction) -> u32 {
        let mut a = insn.memory_displacement32();
        let b = insn.memory_base();
        if b != Register::None {
            a = a.wrapping_add(self.reg(b));
        }
        let i = insn.memory_index();
        if i != Register::None {
            a = a.wrapping_add(self.reg(i) << insn.memory_index_scale().trailing_zeros());
        }
        if self.addr32 { a } else { a & 0xFFFF }
    }

    /// The segment of the instruction's memory operand.
    #[inline]
    pub(crate) fn mseg(insn: &Instruction) -> SegReg {
        SegReg::from_iced(insn.memory_segment()).unwrap_or(SegReg::Ds)
    }

    /// Location of operand `i` (register or memory).
    #[inline]
    pub(crate) fn loc(&self, insn: &Instruction, i: u32) -> Loc {
        match insn.op_kind(i) {
            OpKind::Register => Loc::Reg(insn.op_register(i)),
            _ => Loc::Mem(Self::mseg(insn), self.ea(insn)),
        }
    }

    /// Size in bytes of operand `i`.
    #[inline]
    pub(crate) fn op_size(insn: &Instruction, i: u32) -> u32 {
        match insn.op_kind(i) {
            OpKind::Register => reg_size(insn.op_register(i)),
            OpKind::Immediate8 => 1,
            OpKind::Immediate16 | OpKind::Immediate8to16 => 2,
            OpKind::Immediate32 | OpKind::Immediate8to32 => 4,
            _ => insn.memory_size().size() as u32,
        }
    }

    #[inline]
    pub(crate) fn read_loc(&mut self, l: Loc, n: u32) -> R<u32> {
        match l {
            Loc::Reg(r) => Ok(self.reg(r)),
            Loc::Mem(s, off) => self.read_mem(s, off, n),
        }
    }

    #[inline]
    pub(crate) fn write_loc(&mut self, l: Loc, n: u32, v: u32) -> R<()> {
        match l {
            Loc::Reg(r) => {
                self.set_reg(r, v);
                Ok(())
            }
            Loc::Mem(s, off) => self.write_mem(s, off, n, v),
        }
    }

    /// Read operand `i` (register, memory or immediate).
    #[inline]
    pub(crate) fn read_op(&mut self, insn: &Instruction, i: u32) -> R<u32> {
        match insn.op_kind(i) {
            OpKind::Register => Ok(self.reg(insn.op_register(i))),
            OpKind::Memory => {
                let n = insn.memory_size().size() as u32;
                self.read_mem(Self::mseg(insn), self.ea(insn), n)
            }
            _ => Ok(insn.immediate(i) as u32),
        }
    }

    /// Current stack pointer (SP or ESP by SS.B).
    #[inline]
    pub(crate) fn sp(&self) -> u32 {
        if self.cpu.seg[SegReg::Ss].big() {
            self.cpu.gpr[Gpr::Esp]
        } else {
            self.cpu.gpr[Gpr::Esp] & 0xFFFF
        }
    }

    #[inline]
    pub(crate) fn set_sp(&mut self, v: u32) {
        if self.cpu.seg[SegReg::Ss].big() {
            self.cpu.gpr[Gpr::Esp] = v;
        } else {
            self.cpu.gpr[Gpr::Esp] = (self.cpu.gpr[Gpr::Esp] & 0xFFFF_0000) | (v & 0xFFFF);
        }
    }

    /// Push `n` bytes.
    #[inline]
    pub(crate) fn push(&mut self, v: u32, n: u32) -> R<()> {
        let sp = self.sp().wrapping_sub(n);
        let sp = if self.cpu.seg[SegReg::Ss].big() {
            sp
        } else {
            sp & 0xFFFF
        };
        self.write_mem(SegReg::Ss, sp, n, v)?;
        self.set_sp(sp);
        Ok(())
    }

    /// Pop `n` bytes.
    #[inline]
    pub(crate) fn pop(&mut self, n: u32) -> R<u32> {
        let sp = self.sp();
        let v = self.read_mem(SegReg::Ss, sp, n)?;
        self.set_sp(sp.wrapping_add(n));
        Ok(v)
    }

    /// Operand size (2 or 4) of a stack instruction, from iced's SP delta.
    #[inline]
    pub(crate) fn stack_size(insn: &Instruction) -> u32 {
        insn.stack_pointer_increment().unsigned_abs().clamp(2, 4)
    }
}
