//! The emitter's assembler: the x86-64 instructions [`emit`](super::emit)
//! writes, encoded straight into bytes as they are called, with branches
//! to labels patched once the block is done.
//!
//! Why not iced-x86's `CodeAssembler`: it builds a boxed instruction per
//! call, picks its encoding again in a second pass and checks operands
//! meant for every mode and every instruction; a block of a few guest
//! instructions is about a hundred host instructions, and that cost was
//! most of a translation (some 58,000 host instructions a block, against
//! the few hundred a block's run saves over the interpreter), so a short
//! real run lost more to translating than the tier won. Here a call is a
//! few byte pushes.
//!
//! The encodings are the ones iced's `CodeAssembler` picks for the same
//! call (the tests compare the two on every method and operand form, and
//! `emitted_code_is_unchanged` on 4,000 whole blocks): the accumulator
//! forms of the ALU ops with an immediate, `imm8` when the immediate fits
//! it sign-extended, `D1` for a shift by one, `FF /0` for INC, the
//! `rm, r` forms between registers, and every branch to a label in its
//! rel32 form (JRCXZ has only rel8), so sizes never depend on distances.
//! Only the forms the emitter needs are taken; anything else (a high byte
//! register beside a REX prefix, a memory operand without a base or
//! index, a size mismatch) is an [`AsmError`], never a wrong encoding.

mod operand;
#[cfg(test)]
mod tests;

pub(crate) use operand::*;

use iced_x86::ConditionCode;

/// Why an instruction could not be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum AsmError {
    /// Operands this assembler has no encoding for.
    #[error("{0}: operands not encodable")]
    Operands(&'static str),
    /// A branch to a label that was never set, or a rel8 out of range.
    #[error("branch not encodable")]
    Branch,
}

type Res = Result<(), AsmError>;

/// The ModRM.rm operand.
#[derive(Clone, Copy)]
enum Rm {
    Reg(Gp),
    Mem(Addr),
}

/// The ModRM.reg field: a register or an opcode extension.
#[derive(Clone, Copy)]
enum Field {
    Reg(Gp),
    Digit(u8),
}

/// One instruction's bytes (at most 12 here; room for an 8-byte write
/// past them).
#[derive(Default)]
struct Insn {
    b: [u8; 24],
    n: usize,
}

impl Insn {
    #[inline]
    fn push(&mut self, x: u8) {
        self.b[self.n] = x;
        self.n += 1;
    }
    /// The low `len` bytes of `v`, little-endian.
    #[inline]
    fn le(&mut self, v: i64, len: u8) {
        self.b[self.n..self.n + 8].copy_from_slice(&v.to_le_bytes());
        self.n += usize::from(len);
    }
}

/// A branch target, set with [`Asm::set_label`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Label(usize);

/// Does `v` (of an operand of `size` bytes) fit a sign-extended imm8?
fn fits8(v: i64, size: u8) -> bool {
    let t = truncate(v, size);
    (-128..=127).contains(&t)
}

/// `v`'s low `size` bytes, sign-extended.
fn truncate(v: i64, size: u8) -> i64 {
    match size {
        1 => i64::from(v as i8),
        2 => i64::from(v as i16),
        4 => i64::from(v as i32),
        _ => v,
    }
}

/// SIB's scale field.
fn scale_bits(scale: u8) -> Result<u8, AsmError> {
    Ok(match scale {
        1 => 0,
        2 => 1,
        4 => 2,
        8 => 3,
        _ => return Err(AsmError::Operands("scale")),
    })
}

/// SIB's index field (RSP is "no index").
fn index_bits(i: u8) -> Result<u8, AsmError> {
    if i == 4 {
        return Err(AsmError::Operands("RSP as an index"));
    }
    Ok(i & 7)
}

/// The ALU group's index: ADD, OR, ADC, SBB, AND, SUB, XOR, CMP.
#[derive(Clone, Copy)]
enum Alu {
    Add = 0,
    Or = 1,
    Adc = 2,
    Sbb = 3,
    And = 4,
    Sub = 5,
    Xor = 6,
    Cmp = 7,
}

/// The ALU group's methods: `name => Alu variant`, each two operands.
macro_rules! alu_ops {
    ($($name:ident => $k:ident,)*) => {
        $(
            pub fn $name(&mut self, d: impl Into<Opnd>, s: impl Into<Opnd>) -> Res {
                self.alu(Alu::$k, d.into(), s.into())
            }
        )*
    };
}

/// The assembler: bytes so far, labels and the branches to patch.
pub(crate) struct Asm {
    out: Vec<u8>,
    /// Each label's offset, once set.
    labels: Vec<Option<usize>>,
    /// (field position, label, end of the branch, rel8?)
    fixups: Vec<(usize, usize, usize, bool)>,
}

impl Default for Asm {
    fn default() -> Self {
        Asm {
            out: Vec::with_capacity(1024),
            labels: Vec::with_capacity(32),
            fixups: Vec::with_capacity(32),
        }
    }
}

impl Asm {
    pub fn create_label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    /// Set `l` at the next instruction.
    pub fn set_label(&mut self, l: &mut Label) -> Res {
        self.labels[l.0] = Some(self.out.len());
        Ok(())
    }

    /// The bytes, with every branch patched.
    pub fn finish(mut self) -> Result<Vec<u8>, AsmError> {
        for &(at, label, end, rel8) in &self.fixups {
            let target = self.labels[label].ok_or(AsmError::Branch)?;
            let rel = target as i64 - end as i64;
            if rel8 {
                self.out[at] = i8::try_from(rel).map_err(|_| AsmError::Branch)? as u8;
            } else {
                let rel = i32::try_from(rel).map_err(|_| AsmError::Branch)?;
                self.out[at..at + 4].copy_from_slice(&rel.to_le_bytes());
            }
        }
        Ok(self.out)
    }

    /// The bytes so far (unpatched branches read 0; for the tests).
    #[cfg(test)]
    pub fn bytes(&self) -> &[u8] {
        &self.out
    }

    /// Opcode `op` (one byte, or 0x0F and one) with ModRM `reg`, `rm`,
    /// REX.W for `w`, 0x66 for `p66`, then `imm_len` bytes of `imm`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn modrm(
        &mut self,
        p66: bool,
        w: bool,
        op: u16,
        reg: Field,
        rm: Rm,
        imm: i64,
        imm_len: u8,
    ) -> Res {
        let mut rex = if w { 0x48u8 } else { 0 };
        let mut high = false;
        let reg_bits = match reg {
            Field::Reg(r) => {
                let (f, ext) = r.field();
                high |= r.high;
                if ext {
                    rex |= 0x44;
                }
                if r.rex_byte() {
                    rex |= 0x40;
                }
                f
            }
            Field::Digit(d) => d,
        };
        // mod, rm, SIB, displacement length, displacement.
        let (md, rm_bits, sib, disp_len, disp) = match rm {
            Rm::Reg(r) => {
                let (f, ext) = r.field();
                high |= r.high;
                if ext {
                    rex |= 0x41;
                }
                if r.rex_byte() {
                    rex |= 0x40;
                }
                (0xC0, f, None, 0, 0)
            }
            Rm::Mem(Addr {
                base: None,
                index: Some(i),
                scale,
                disp,
            }) => {
                // An index without a base: SIB base 101 with mod 00 is
                // "no base, disp32".
                if i >= 8 {
                    rex |= 0x42;
                }
                let sib = (scale_bits(scale)? << 6) | (index_bits(i)? << 3) | 5;
                (0x00, 4, Some(sib), 4, disp)
            }
            Rm::Mem(a) => {
                let base = a
                    .base
                    .ok_or(AsmError::Operands("memory without a base or index"))?;
                if base >= 8 {
                    rex |= 0x41;
                }
                // As iced: a displacement of 0 has none, unless the base
                // is RBP or R13 (whose mod 00 means something else).
                let disp_len = if a.disp == 0 && base & 7 != 5 {
                    0
                } else if i8::try_from(a.disp).is_ok() {
                    1
                } else {
                    4
                };
                let md = [0x00, 0x40, 0, 0, 0x80][disp_len];
                let sib = match a.index {
                    Some(i) => {
                        if i >= 8 {
                            rex |= 0x42;
                        }
                        Some((scale_bits(a.scale)? << 6) | (index_bits(i)? << 3) | (base & 7))
                    }
                    None if base & 7 == 4 => Some(0x24),
                    None => None,
                };
                let rm_bits = if sib.is_some() { 4 } else { base & 7 };
                (md, rm_bits, sib, disp_len, a.disp)
            }
        };
        if rex != 0 && high {
            return Err(AsmError::Operands("AH..BH with a REX prefix"));
        }
        // Built in place, then appended at once: a push per byte into the
        // vector was most of an instruction's cost.
        let mut b = Insn::default();
        if p66 {
            b.push(0x66);
        }
        if rex != 0 {
            b.push(rex);
        }
        if op > 0xFF {
            b.push((op >> 8) as u8);
        }
        b.push(op as u8);
        b.push(md | (reg_bits << 3) | rm_bits);
        if let Some(sib) = sib {
            b.push(sib);
        }
        b.le(i64::from(disp), disp_len as u8);
        b.le(imm, imm_len);
        self.put(&b);
        Ok(())
    }

    /// Append `b`: a copy of a constant 16 bytes, cut back to its
    /// length (a copy of a variable length is a call to memcpy, which
    /// cost more than building the instruction).
    #[inline]
    fn put(&mut self, b: &Insn) {
        let len = self.out.len();
        self.out.extend_from_slice(&b.b[..16]);
        self.out.truncate(len + b.n.min(16));
    }

    #[inline]
    fn imm(&mut self, v: i64, len: u8) {
        let mut b = Insn::default();
        b.le(v, len);
        self.put(&b);
    }

    /// The accumulator form `op8` (AL) or `op8 + 1` (AX, EAX, RAX) with
    /// its full immediate.
    fn acc(&mut self, size: u8, op8: u8, v: i64) -> Res {
        let (p66, w) = Self::size_bits(size);
        if p66 {
            self.out.push(0x66);
        }
        if w {
            self.out.push(0x48);
        }
        self.out.push(if size == 1 { op8 } else { op8 + 1 });
        self.imm(v, Self::full_imm(size));
        Ok(())
    }

    /// The prefixes of an operand size: (0x66, REX.W).
    fn size_bits(size: u8) -> (bool, bool) {
        (size == 2, size == 8)
    }

    /// A register-sized op: `op8` for bytes, `op8 + 1` otherwise.
    #[inline]
    fn sized(&mut self, size: u8, op8: u16, reg: Field, rm: Rm, imm: i64, imm_len: u8) -> Res {
        let (p66, w) = Self::size_bits(size);
        let op = if size == 1 { op8 } else { op8 + 1 };
        self.modrm(p66, w, op, reg, rm, imm, imm_len)
    }

    /// The immediate's length for an operand of `size` (imm16 at most
    /// for 16 bits, imm32 at most otherwise).
    fn full_imm(size: u8) -> u8 {
        size.min(4)
    }

    #[inline]
    fn alu(&mut self, k: Alu, d: Opnd, s: Opnd) -> Res {
        let k = k as u8;
        let base = u16::from(k) * 8;
        match (d, s) {
            (Opnd::Reg(d), Opnd::Reg(s)) if d.size == s.size => {
                self.sized(d.size, base, Field::Reg(s), Rm::Reg(d), 0, 0)
            }
            (Opnd::Mem(m), Opnd::Reg(s)) if m.size == s.size => {
                self.sized(s.size, base, Field::Reg(s), Rm::Mem(m.addr), 0, 0)
            }
            (Opnd::Reg(d), Opnd::Mem(m)) if m.size == d.size => {
                self.sized(d.size, base + 2, Field::Reg(d), Rm::Mem(m.addr), 0, 0)
            }
            (Opnd::Reg(d), Opnd::Imm(v)) if d.num == 0 && !d.high => {
                self.acc(d.size, base as u8 + 4, v)
            }
            (Opnd::Reg(_) | Opnd::Mem(_), Opnd::Imm(v)) => {
                let (size, rm) = match d {
                    Opnd::Reg(r) => (r.size, Rm::Reg(r)),
                    Opnd::Mem(m) => (m.size, Rm::Mem(m.addr)),
                    Opnd::Imm(_) => unreachable!(),
                };
                let (p66, w) = Self::size_bits(size);
                let (op, len) = if size == 1 {
                    (0x80, 1)
                } else if fits8(v, size) {
                    (0x83, 1)
                } else {
                    (0x81, Self::full_imm(size))
                };
                self.modrm(p66, w, op, Field::Digit(k), rm, v, len)
            }
            _ => Err(AsmError::Operands("alu")),
        }
    }

    alu_ops! {
        add => Add,
        or => Or,
        adc => Adc,
        sbb => Sbb,
        and => And,
        sub => Sub,
        xor => Xor,
        cmp => Cmp,
    }

    #[inline]
    pub fn test(&mut self, d: impl Into<Opnd>, s: impl Into<Opnd>) -> Res {
        match (d.into(), s.into()) {
            (Opnd::Reg(d), Opnd::Reg(s)) if d.size == s.size => {
                self.sized(d.size, 0x84, Field::Reg(s), Rm::Reg(d), 0, 0)
            }
            (Opnd::Mem(m), Opnd::Reg(s)) if m.size == s.size => {
                self.sized(s.size, 0x84, Field::Reg(s), Rm::Mem(m.addr), 0, 0)
            }
            (Opnd::Reg(d), Opnd::Imm(v)) if d.num == 0 && !d.high => self.acc(d.size, 0xA8, v),
            (Opnd::Reg(r), Opnd::Imm(v)) => self.sized(
                r.size,
                0xF6,
                Field::Digit(0),
                Rm::Reg(r),
                v,
                Self::full_imm(r.size),
            ),
            (Opnd::Mem(m), Opnd::Imm(v)) => self.sized(
                m.size,
                0xF6,
                Field::Digit(0),
                Rm::Mem(m.addr),
                v,
                Self::full_imm(m.size),
            ),
            _ => Err(AsmError::Operands("test")),
        }
    }

    #[inline]
    pub fn mov(&mut self, d: impl Into<Opnd>, s: impl Into<Opnd>) -> Res {
        match (d.into(), s.into()) {
            (Opnd::Reg(d), Opnd::Reg(s)) if d.size == s.size => {
                self.sized(d.size, 0x88, Field::Reg(s), Rm::Reg(d), 0, 0)
            }
            (Opnd::Mem(m), Opnd::Reg(s)) if m.size == s.size => {
                self.sized(s.size, 0x88, Field::Reg(s), Rm::Mem(m.addr), 0, 0)
            }
            (Opnd::Reg(d), Opnd::Mem(m)) if m.size == d.size => {
                self.sized(d.size, 0x8A, Field::Reg(d), Rm::Mem(m.addr), 0, 0)
            }
            (Opnd::Reg(d), Opnd::Imm(v)) if d.size != 8 => {
                // B0+r / B8+r with a full immediate.
                let (f, ext) = d.field();
                let rex = if ext {
                    0x41
                } else if d.rex_byte() {
                    0x40
                } else {
                    0
                };
                if rex != 0 && d.high {
                    return Err(AsmError::Operands("mov"));
                }
                if d.size == 2 {
                    self.out.push(0x66);
                }
                if rex != 0 {
                    self.out.push(rex);
                }
                self.out.push(if d.size == 1 { 0xB0 } else { 0xB8 } + f);
                self.imm(v, d.size);
                Ok(())
            }
            (Opnd::Mem(m), Opnd::Imm(v)) => self.sized(
                m.size,
                0xC6,
                Field::Digit(0),
                Rm::Mem(m.addr),
                v,
                Self::full_imm(m.size),
            ),
            _ => Err(AsmError::Operands("mov")),
        }
    }

    /// MOVZX (`sign` false) or MOVSX from a byte or word register or
    /// memory operand.
    #[inline]
    fn extend(&mut self, sign: bool, d: Gp, s: Opnd) -> Res {
        let (size, rm) = match s {
            Opnd::Reg(r) => (r.size, Rm::Reg(r)),
            Opnd::Mem(m) => (m.size, Rm::Mem(m.addr)),
            Opnd::Imm(_) => return Err(AsmError::Operands("movzx")),
        };
        if size > d.size || size > 2 {
            return Err(AsmError::Operands("movzx"));
        }
        let op = match (sign, size) {
            (false, 1) => 0x0FB6,
            (false, _) => 0x0FB7,
            (true, 1) => 0x0FBE,
            (true, _) => 0x0FBF,
        };
        let (p66, w) = Self::size_bits(d.size);
        self.modrm(p66, w, op, Field::Reg(d), rm, 0, 0)
    }
    pub fn movzx(&mut self, d: Gp, s: impl Into<Opnd>) -> Res {
        self.extend(false, d, s.into())
    }
    pub fn movsx(&mut self, d: Gp, s: impl Into<Opnd>) -> Res {
        self.extend(true, d, s.into())
    }

    #[inline]
    pub fn lea(&mut self, d: Gp, m: MemOp) -> Res {
        if d.size < 2 {
            return Err(AsmError::Operands("lea"));
        }
        let (p66, w) = Self::size_bits(d.size);
        self.modrm(p66, w, 0x8D, Field::Reg(d), Rm::Mem(m.addr), 0, 0)
    }

    /// SHL (4) or SHR (5) of a register by an immediate.
    #[inline]
    fn shift(&mut self, digit: u8, d: Gp, n: i64) -> Res {
        if n == 1 {
            self.sized(d.size, 0xD0, Field::Digit(digit), Rm::Reg(d), 0, 0)
        } else {
            self.sized(d.size, 0xC0, Field::Digit(digit), Rm::Reg(d), n, 1)
        }
    }
    pub fn shl(&mut self, d: Gp, n: impl Into<Opnd>) -> Res {
        match n.into() {
            Opnd::Imm(n) => self.shift(4, d, n),
            _ => Err(AsmError::Operands("shl")),
        }
    }
    pub fn shr(&mut self, d: Gp, n: impl Into<Opnd>) -> Res {
        match n.into() {
            Opnd::Imm(n) => self.shift(5, d, n),
            _ => Err(AsmError::Operands("shr")),
        }
    }
    pub fn sar(&mut self, d: Gp, n: impl Into<Opnd>) -> Res {
        match n.into() {
            Opnd::Imm(n) => self.shift(7, d, n),
            _ => Err(AsmError::Operands("sar")),
        }
    }

    /// XCHG of two registers of one size: `90+r` when the second is the
    /// accumulator (as iced picks), else `86/87 /r`.
    pub fn xchg(&mut self, d: Gp, s: Gp) -> Res {
        if d.size != s.size {
            return Err(AsmError::Operands("xchg"));
        }
        if s.size > 1 && s.num == 0 {
            if d.size == 2 {
                self.out.push(0x66);
            }
            if d.size == 8 || d.num >= 8 {
                self.out
                    .push(0x40 | if d.size == 8 { 8 } else { 0 } | u8::from(d.num >= 8));
            }
            self.out.push(0x90 + (d.num & 7));
            return Ok(());
        }
        self.sized(d.size, 0x86, Field::Reg(s), Rm::Reg(d), 0, 0)
    }

    pub fn cbw(&mut self) -> Res {
        self.out.extend_from_slice(&[0x66, 0x98]);
        Ok(())
    }
    pub fn cwde(&mut self) -> Res {
        self.out.push(0x98);
        Ok(())
    }
    pub fn cwd(&mut self) -> Res {
        self.out.extend_from_slice(&[0x66, 0x99]);
        Ok(())
    }
    pub fn cdq(&mut self) -> Res {
        self.out.push(0x99);
        Ok(())
    }

    /// INC (FE/FF /0), DEC (/1), NOT (F6/F7 /2), NEG (/3).
    #[inline]
    fn unary(&mut self, op8: u16, digit: u8, d: Opnd) -> Res {
        match d {
            Opnd::Reg(r) => self.sized(r.size, op8, Field::Digit(digit), Rm::Reg(r), 0, 0),
            Opnd::Mem(m) => self.sized(m.size, op8, Field::Digit(digit), Rm::Mem(m.addr), 0, 0),
            Opnd::Imm(_) => Err(AsmError::Operands("unary")),
        }
    }
    pub fn inc(&mut self, d: impl Into<Opnd>) -> Res {
        self.unary(0xFE, 0, d.into())
    }
    pub fn dec(&mut self, d: impl Into<Opnd>) -> Res {
        self.unary(0xFE, 1, d.into())
    }
    pub fn not(&mut self, d: impl Into<Opnd>) -> Res {
        self.unary(0xF6, 2, d.into())
    }
    pub fn neg(&mut self, d: impl Into<Opnd>) -> Res {
        self.unary(0xF6, 3, d.into())
    }

    /// BT r/m64, r64.
    pub fn bt(&mut self, d: Gp, s: Gp) -> Res {
        if d.size != 8 || s.size != 8 {
            return Err(AsmError::Operands("bt"));
        }
        self.modrm(false, true, 0x0FA3, Field::Reg(s), Rm::Reg(d), 0, 0)
    }

    /// PUSH of a 64-bit register or a qword in memory.
    pub fn push(&mut self, s: impl Into<Opnd>) -> Res {
        match s.into() {
            Opnd::Reg(r) if r.size == 8 => {
                self.plus(0x50, r);
                Ok(())
            }
            Opnd::Mem(m) if m.size == 8 => {
                self.modrm(false, false, 0xFF, Field::Digit(6), Rm::Mem(m.addr), 0, 0)
            }
            _ => Err(AsmError::Operands("push")),
        }
    }
    /// POP to a 64-bit register or a qword in memory.
    pub fn pop(&mut self, d: impl Into<Opnd>) -> Res {
        match d.into() {
            Opnd::Reg(r) if r.size == 8 => {
                self.plus(0x58, r);
                Ok(())
            }
            Opnd::Mem(m) if m.size == 8 => {
                self.modrm(false, false, 0x8F, Field::Digit(0), Rm::Mem(m.addr), 0, 0)
            }
            _ => Err(AsmError::Operands("pop")),
        }
    }
    /// `op + r` with REX.B for R8..R15.
    #[inline]
    fn plus(&mut self, op: u8, r: Gp) {
        if r.num >= 8 {
            self.out.push(0x41);
        }
        self.out.push(op + (r.num & 7));
    }

    pub fn pushfq(&mut self) -> Res {
        self.out.push(0x9C);
        Ok(())
    }
    pub fn popfq(&mut self) -> Res {
        self.out.push(0x9D);
        Ok(())
    }
    pub fn ret(&mut self) -> Res {
        self.out.push(0xC3);
        Ok(())
    }

    /// A branch whose rel32 (or rel8) field is patched to `l`.
    #[inline]
    fn branch(&mut self, head: &[u8], l: Label, rel8: bool) -> Res {
        self.out.extend_from_slice(head);
        let at = self.out.len();
        self.out
            .extend_from_slice(if rel8 { &[0][..] } else { &[0; 4][..] });
        self.fixups.push((at, l.0, self.out.len(), rel8));
        Ok(())
    }
    pub fn jmp(&mut self, l: Label) -> Res {
        self.branch(&[0xE9], l, false)
    }
    pub fn jrcxz(&mut self, l: Label) -> Res {
        self.branch(&[0xE3], l, true)
    }
    /// Jcc to `l` (iced's condition numbering: `o` is 1).
    pub fn jcc(&mut self, cc: ConditionCode, l: Label) -> Res {
        let cc = cc as u8;
        if cc == 0 {
            return Err(AsmError::Branch);
        }
        self.branch(&[0x0F, 0x7F + cc], l, false)
    }
    pub fn je(&mut self, l: Label) -> Res {
        self.jcc(ConditionCode::e, l)
    }
    pub fn jne(&mut self, l: Label) -> Res {
        self.jcc(ConditionCode::ne, l)
    }
    pub fn jb(&mut self, l: Label) -> Res {
        self.jcc(ConditionCode::b, l)
    }
    pub fn jae(&mut self, l: Label) -> Res {
        self.jcc(ConditionCode::ae, l)
    }
    pub fn ja(&mut self, l: Label) -> Res {
        self.jcc(ConditionCode::a, l)
    }
}
