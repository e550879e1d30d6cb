//! The data statements of a TRACE, as parsed (trcust-trace-customizer.txt
//! §1.3.5.8 to §1.3.5.15, TRCUST-FORMATS.md §5.2).

use rpn_vm::Op;

/// A register a TSF may name: the RPN push that fetches it and whether it
/// is logged as a dword (the E registers) or a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Register {
    /// The push opcode (a 16-bit register uses its 32-bit register's).
    pub push: Op,
    /// Logged as a dword.
    pub wide: bool,
}

/// The registers by name.
const REGISTERS: &[(&str, Op, bool)] = &[
    ("EAX", Op::PushEax, true),
    ("ECX", Op::PushEcx, true),
    ("EDX", Op::PushEdx, true),
    ("EBX", Op::PushEbx, true),
    ("ESP", Op::PushEsp, true),
    ("EBP", Op::PushEbp, true),
    ("ESI", Op::PushEsi, true),
    ("EDI", Op::PushEdi, true),
    ("EFLAGS", Op::PushEflags, true),
    ("EIP", Op::PushEip, true),
    ("AX", Op::PushEax, false),
    ("CX", Op::PushEcx, false),
    ("DX", Op::PushEdx, false),
    ("BX", Op::PushEbx, false),
    ("SP", Op::PushEsp, false),
    ("BP", Op::PushEbp, false),
    ("SI", Op::PushEsi, false),
    ("DI", Op::PushEdi, false),
    ("FLAGS", Op::PushEflags, false),
    ("IP", Op::PushEip, false),
    ("ES", Op::PushEs, false),
    ("CS", Op::PushCs, false),
    ("SS", Op::PushSs, false),
    ("DS", Op::PushDs, false),
    ("FS", Op::PushFs, false),
    ("GS", Op::PushGs, false),
];

/// The register called `name` (case-insensitive).
pub fn register(name: &str) -> Option<Register> {
    REGISTERS
        .iter()
        .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        .map(|&(_, push, wide)| Register { push, wide })
}

/// Whether `r` is a segment register.
pub fn is_segment(r: Register) -> bool {
    matches!(
        r.push,
        Op::PushEs | Op::PushCs | Op::PushSs | Op::PushDs | Op::PushFs | Op::PushGs
    )
}

/// Whether `r` may be a flat base or index (the eight general E registers).
pub fn is_flat_general(r: Register) -> bool {
    r.wide && !matches!(r.push, Op::PushEflags | Op::PushEip)
}

/// Whether `r` may be a segmented offset register (the eight general word
/// registers).
pub fn is_word_general(r: Register) -> bool {
    !r.wide && !is_segment(r) && !matches!(r.push, Op::PushEflags | Op::PushEip)
}

/// One `REGS=` item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegItem {
    /// A machine register.
    Reg(Register),
    /// `.name`: a C register variable, which needs debug information.
    Variable(String),
}

/// A term after the base of an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Term {
    /// `+reg`.
    Add(Register),
    /// `-reg`.
    Sub(Register),
    /// `±n`.
    Disp(i64),
}

/// The base of an address specification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base {
    /// `.name` (or a bare name in LEN=), with its summed displacements.
    Symbol {
        /// The name.
        name: String,
        /// Sum of the `±n` after it.
        disp: i64,
    },
    /// `Fbreg...`: flat register form.
    Flat(Register),
    /// `Rsreg...`: segment register form.
    Seg(Register),
}

/// An address specification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    /// The base.
    pub base: Base,
    /// Register and displacement terms (register forms only).
    pub terms: Vec<Term>,
    /// `±(n)` displacements from the final (indirect) address.
    pub post: Vec<i64>,
}

/// The indirection flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flag {
    /// `D[IRECT]`.
    Direct,
    /// `I[NDIRECT][*[±n]...]...`: one entry per fetch, with the offsets added
    /// after it.
    Indirect(Vec<Vec<i64>>),
    /// `IS`: indirect through a 16:16 pointer (flat statements).
    IndirectSegmented,
    /// `IF`: indirect through a flat pointer (segmented statements).
    IndirectFlat,
}

/// MEM32, MEM, ASCIIZ32 or ASCIIZ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataKind {
    /// `MEM32=`.
    Mem32,
    /// `MEM=`.
    Mem,
    /// `ASCIIZ32=`.
    Asciiz32,
    /// `ASCIIZ=`.
    Asciiz,
}

impl DataKind {
    /// Flat (32-bit) addressing.
    pub fn flat(self) -> bool {
        matches!(self, DataKind::Mem32 | DataKind::Asciiz32)
    }

    /// A string statement.
    pub fn string(self) -> bool {
        matches!(self, DataKind::Asciiz32 | DataKind::Asciiz)
    }

    /// The keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            DataKind::Mem32 => "MEM32",
            DataKind::Mem => "MEM",
            DataKind::Asciiz32 => "ASCIIZ32",
            DataKind::Asciiz => "ASCIIZ",
        }
    }
}

/// The length of a memory statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    /// A constant.
    Fixed(u64),
    /// `LEN`: from the preceding `LEN=` statement.
    Variable,
}
