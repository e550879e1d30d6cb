//! The assembler's operands: host registers by their names ([`regs`]),
//! `[base + index * scale + disp]` addresses built with `+` and `*` on
//! 64-bit registers, memory operands of a size (`dword_ptr(r11 + 8)`) and
//! immediates, as the emitter writes them.

use std::ops::{Add, Mul, Sub};

/// A general host register: its number (0..16) and size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Gp {
    pub(super) num: u8,
    pub(super) size: u8,
    /// AH, CH, DH or BH (`num` 0..3): encoded as 4..7 and never with REX.
    pub(super) high: bool,
}

const fn gp(num: u8, size: u8) -> Gp {
    Gp {
        num,
        size,
        high: false,
    }
}
const fn hi(num: u8) -> Gp {
    Gp {
        num,
        size: 1,
        high: true,
    }
}

/// The registers by their assembler names.
#[allow(non_upper_case_globals, dead_code)]
pub(crate) mod regs {
    use super::{Gp, gp, hi};
    pub const rax: Gp = gp(0, 8);
    pub const rcx: Gp = gp(1, 8);
    pub const rdx: Gp = gp(2, 8);
    pub const rbx: Gp = gp(3, 8);
    pub const rsp: Gp = gp(4, 8);
    pub const rbp: Gp = gp(5, 8);
    pub const rsi: Gp = gp(6, 8);
    pub const rdi: Gp = gp(7, 8);
    pub const r8: Gp = gp(8, 8);
    pub const r9: Gp = gp(9, 8);
    pub const r10: Gp = gp(10, 8);
    pub const r11: Gp = gp(11, 8);
    pub const r12: Gp = gp(12, 8);
    pub const r13: Gp = gp(13, 8);
    pub const r14: Gp = gp(14, 8);
    pub const r15: Gp = gp(15, 8);
    pub const eax: Gp = gp(0, 4);
    pub const ecx: Gp = gp(1, 4);
    pub const edx: Gp = gp(2, 4);
    pub const ebx: Gp = gp(3, 4);
    pub const ebp: Gp = gp(5, 4);
    pub const esi: Gp = gp(6, 4);
    pub const edi: Gp = gp(7, 4);
    pub const r8d: Gp = gp(8, 4);
    pub const r9d: Gp = gp(9, 4);
    pub const r10d: Gp = gp(10, 4);
    pub const r12d: Gp = gp(12, 4);
    pub const r14d: Gp = gp(14, 4);
    pub const ax: Gp = gp(0, 2);
    pub const dx: Gp = gp(2, 2);
    pub const bx: Gp = gp(3, 2);
    pub const bp: Gp = gp(5, 2);
    pub const si: Gp = gp(6, 2);
    pub const di: Gp = gp(7, 2);
    pub const r8w: Gp = gp(8, 2);
    pub const r9w: Gp = gp(9, 2);
    pub const r10w: Gp = gp(10, 2);
    pub const r12w: Gp = gp(12, 2);
    pub const r14w: Gp = gp(14, 2);
    pub const al: Gp = gp(0, 1);
    pub const dl: Gp = gp(2, 1);
    pub const bl: Gp = gp(3, 1);
    pub const ah: Gp = hi(0);
    pub const dh: Gp = hi(2);
    pub const bh: Gp = hi(3);
    pub const r9b: Gp = gp(9, 1);
    pub const r10b: Gp = gp(10, 1);
    pub const r12b: Gp = gp(12, 1);
}

impl Gp {
    /// The register with this number and size (for the tests).
    #[cfg(test)]
    pub(crate) fn new(num: u8, size: u8, high: bool) -> Gp {
        Gp { num, size, high }
    }
    /// SPL, BPL, SIL or DIL, which exist only with a REX prefix.
    pub(super) fn rex_byte(self) -> bool {
        self.size == 1 && !self.high && (4..8).contains(&self.num)
    }
    /// Its 3-bit field and whether it needs REX's extension bit.
    pub(super) fn field(self) -> (u8, bool) {
        if self.high {
            (self.num + 4, false)
        } else {
            (self.num & 7, self.num >= 8)
        }
    }
}

/// `[base + index * scale + disp]` of 64-bit registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Addr {
    pub(super) base: Option<u8>,
    pub(super) index: Option<u8>,
    pub(super) scale: u8,
    pub(super) disp: i32,
}

impl Addr {
    /// The address (for the tests).
    #[cfg(test)]
    pub(crate) fn new(base: Option<u8>, index: Option<u8>, scale: u8, disp: i32) -> Addr {
        Addr {
            base,
            index,
            scale,
            disp,
        }
    }
}

fn addr_reg(r: Gp) -> u8 {
    debug_assert_eq!(r.size, 8, "addresses take 64-bit registers");
    r.num
}

impl From<Gp> for Addr {
    fn from(r: Gp) -> Addr {
        Addr {
            base: Some(addr_reg(r)),
            index: None,
            scale: 1,
            disp: 0,
        }
    }
}
impl Add<i32> for Gp {
    type Output = Addr;
    fn add(self, d: i32) -> Addr {
        Addr::from(self) + d
    }
}
impl Sub<i32> for Gp {
    type Output = Addr;
    fn sub(self, d: i32) -> Addr {
        Addr {
            disp: d.wrapping_neg(),
            ..Addr::from(self)
        }
    }
}
impl Add<Gp> for Gp {
    type Output = Addr;
    fn add(self, i: Gp) -> Addr {
        self + Addr {
            base: None,
            index: Some(addr_reg(i)),
            scale: 1,
            disp: 0,
        }
    }
}
impl Add<Addr> for Gp {
    type Output = Addr;
    fn add(self, a: Addr) -> Addr {
        debug_assert!(a.base.is_none(), "two bases");
        Addr {
            base: Some(addr_reg(self)),
            ..a
        }
    }
}
impl Mul<u32> for Gp {
    type Output = Addr;
    fn mul(self, scale: u32) -> Addr {
        Addr {
            base: None,
            index: Some(addr_reg(self)),
            scale: scale as u8,
            disp: 0,
        }
    }
}
impl Add<i32> for Addr {
    type Output = Addr;
    fn add(self, d: i32) -> Addr {
        Addr {
            disp: self.disp.wrapping_add(d),
            ..self
        }
    }
}

/// A memory operand: an address and the access size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MemOp {
    pub(super) addr: Addr,
    pub(super) size: u8,
}

pub(crate) fn byte_ptr(a: impl Into<Addr>) -> MemOp {
    MemOp {
        addr: a.into(),
        size: 1,
    }
}
pub(crate) fn word_ptr(a: impl Into<Addr>) -> MemOp {
    MemOp {
        addr: a.into(),
        size: 2,
    }
}
pub(crate) fn dword_ptr(a: impl Into<Addr>) -> MemOp {
    MemOp {
        addr: a.into(),
        size: 4,
    }
}
pub(crate) fn qword_ptr(a: impl Into<Addr>) -> MemOp {
    MemOp {
        addr: a.into(),
        size: 8,
    }
}

/// An operand.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Opnd {
    Reg(Gp),
    Mem(MemOp),
    /// An immediate (its bits; the other operand gives its size).
    Imm(i64),
}

impl From<Gp> for Opnd {
    fn from(r: Gp) -> Opnd {
        Opnd::Reg(r)
    }
}
impl From<MemOp> for Opnd {
    fn from(m: MemOp) -> Opnd {
        Opnd::Mem(m)
    }
}
impl From<i32> for Opnd {
    fn from(v: i32) -> Opnd {
        Opnd::Imm(i64::from(v))
    }
}
impl From<u32> for Opnd {
    fn from(v: u32) -> Opnd {
        Opnd::Imm(i64::from(v))
    }
}
