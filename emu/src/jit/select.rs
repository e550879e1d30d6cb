//! Block selection: which guest instructions the native tier runs.
//!
//! A block is a straight run of the instructions below, in 32- or 16-bit
//! code, decoded from one 4 KB page (and, in 16-bit code, below offset
//! 64 KB: an instruction ending at offset 0xFFFF ends the block, as the
//! next one is at CS:0) and ending at a relative JMP or Jcc (included) or
//! just before the first instruction the tier does not take (which the
//! interpreter then executes):
//!
//! - MOV r,r / r,imm / r,m / m,r / m,imm;
//! - ADD ADC SUB SBB AND OR XOR CMP r,r / r,imm / r,m / m,r / m,imm, and
//!   TEST r,r / r,imm / m,r / m,imm;
//! - INC DEC NEG NOT r / m;
//! - MOVZX MOVSX r16/r32, m8/m16 (narrower than the register);
//! - PUSH r16/r32/imm, POP r16/r32 but (E)SP, with the stack size SS had
//!   at translation (the block is entered only while SS keeps it);
//! - LEA r32 with a 32-bit address (32-bit code only);
//! - MOVS, STOS, LODS of any element size, stepping by the DF of
//!   translation (the block is entered only while DF keeps it); with REP or
//!   REPNE they end the block (see [`End::Rep`]);
//! - Jcc and JMP rel8/rel16/rel32, CALL rel16/rel32 and RET/RET imm16 near,
//!   of the code size (no 0x66 or 0x67);
//! - PUSH ES/CS/SS/DS/FS/GS and MOV r16/r32/m16 from them (any mode);
//! - in protected or real mode (the block is then entered only in the
//!   mode it was translated in, never in V86 mode): MOV DS/ES/
//!   FS/GS from r16 or m16, POP DS/ES/FS/GS, LDS/LES/LFS/LGS, and to end
//!   the block MOV/POP/LSS to SS, far CALL/JMP
//!   ptr16:16/ptr16:32/m16:16/m16:32 and RETF [imm16] (see
//!   `super::desc` for which of them the host code completes);
//!
//! with 32-, 16- or 8-bit registers (at most one 0x66 prefix, none on 8-bit
//! forms), except the 8-bit forms the host cannot encode with its register
//! assignment (see [`super::emit`]: CH at all, CL together with AH/DH/BH,
//! AH/DH/BH with a memory operand). Memory operands use 16- or 32-bit
//! addressing (one 0x67 prefix allowed) and any segment (one override
//! prefix allowed). Any other prefix (LOCK, REP but on a string op, a
//! second prefix of a kind) or a host-call address ends the block. Every instruction lies
//! inside the page, so selection never touches the paging unit and has no
//! side effect on the guest.
//!
//! Register-only instructions cannot fault. An instruction with a memory
//! operand may: the host code checks it first (segment limit and type,
//! page, code page for stores) and, where the interpreter could do
//! anything but a plain access, leaves the block just before it, which the
//! interpreter then runs (see [`super::emit`]). [`Plan::side`] has what an
//! exit before each op must report.

use crate::cpu::SegReg;
use crate::cpu::flags::{AF, CF, OF, PF, SF, STATUS, ZF};
use crate::cycles::base_cycles;
use iced_x86::{
    Code, ConditionCode, Decoder, DecoderOptions, Instruction, Mnemonic as M, OpKind, Register,
};

/// Longest block, in guest instructions.
pub(crate) const MAX_INSNS: usize = 64;

/// A guest register operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reg {
    /// EAX..EDI (0..7).
    R32(u8),
    /// AX..DI (0..7).
    R16(u8),
    /// AL, CL, DL, BL (0..3).
    Lo8(u8),
    /// AH, CH, DH, BH (of register 0..3).
    Hi8(u8),
}

impl Reg {
    fn of(r: Register) -> Option<Reg> {
        let n = r as u32;
        let at = |base: Register| n.wrapping_sub(base as u32);
        Some(if at(Register::EAX) < 8 {
            Reg::R32(at(Register::EAX) as u8)
        } else if at(Register::AX) < 8 {
            Reg::R16(at(Register::AX) as u8)
        } else if at(Register::AL) < 4 {
            Reg::Lo8(at(Register::AL) as u8)
        } else if at(Register::AH) < 4 {
            Reg::Hi8(at(Register::AH) as u8)
        } else {
            return None;
        })
    }
}

/// The code of a block, as [`select`] gets it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Source<'a> {
    /// The bytes from the block's first one to the end of its page.
    pub bytes: &'a [u8],
    /// EIP of the first byte.
    pub eip: u32,
    /// 32-bit code segment (else 16-bit).
    pub code32: bool,
    /// SS has the B bit (ESP, else SP, is the stack pointer).
    pub stack32: bool,
    /// EFLAGS.DF is set (string instructions step down).
    pub df: bool,
}

/// The second operand of a two-operand op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Src {
    /// A guest register of the destination's size.
    Reg(Reg),
    /// An immediate (sign-extended as the instruction does; the emitter
    /// uses the destination's width of it).
    Imm(u32),
}

/// A guest memory operand: `seg:(disp + base + index << shift)`, the sum
/// truncated to 16 bits with 16-bit addressing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mem {
    /// The segment (default or override).
    pub seg: SegReg,
    /// Base register number, if any.
    pub base: Option<u8>,
    /// Index register number, if any.
    pub index: Option<u8>,
    /// Index scale (1, 2, 4, 8).
    pub scale: u8,
    /// Displacement.
    pub disp: u32,
    /// 32-bit addressing (else 16-bit).
    pub addr32: bool,
    /// Access size in bytes (1, 2, 4).
    pub size: u8,
}

/// One straight-line guest instruction of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// MOV, ADD, ADC, SUB, SBB, AND, OR, XOR, CMP or TEST `dst, src`.
    Bin {
        /// The mnemonic.
        m: M,
        /// Destination.
        dst: Reg,
        /// Source.
        src: Src,
    },
    /// INC, DEC, NEG or NOT `dst`.
    Unary {
        /// The mnemonic.
        m: M,
        /// The operand.
        dst: Reg,
    },
    /// SHL (SAL), SHR or SAR `dst` by one (a count whose low five bits
    /// are 1): the only count whose OF every x86 defines as the
    /// interpreter computes it. AF stays the guest's (the interpreter
    /// leaves it; the host's is undefined).
    Shift {
        /// SHL, SHR or SAR.
        m: M,
        /// The operand.
        dst: Reg,
    },
    /// CBW, CWDE, CWD or CDQ (EAX and EDX are the host's own).
    Widen {
        /// The mnemonic.
        m: M,
    },
    /// XCHG of two registers of one size (no flags).
    Xchg {
        /// The first operand.
        a: Reg,
        /// The second.
        b: Reg,
    },
    /// LEA r32 of `disp + base + index << shift` (32-bit address).
    Lea {
        /// Destination EAX..EDI.
        dst: u8,
        /// Base EAX..EDI, if any.
        base: Option<u8>,
        /// Index EAX..EDI, if any.
        index: Option<u8>,
        /// Index scale (1, 2, 4, 8).
        scale: u8,
        /// Displacement.
        disp: u32,
    },
    /// MOV, ADD, ADC, SUB, SBB, AND, OR, XOR or CMP `dst, mem`.
    Load {
        /// The mnemonic.
        m: M,
        /// Destination (same size as the access).
        dst: Reg,
        /// Source operand.
        mem: Mem,
    },
    /// MOV, ADD, ADC, SUB, SBB, AND, OR, XOR, CMP or TEST `mem, src`.
    Store {
        /// The mnemonic.
        m: M,
        /// Destination operand (only read by CMP and TEST).
        mem: Mem,
        /// Source.
        src: Src,
    },
    /// MOVZX or MOVSX `dst, mem` (a byte or word into a wider register).
    LoadX {
        /// MOVSX (else MOVZX).
        sign: bool,
        /// Destination (16- or 32-bit).
        dst: Reg,
        /// Source operand.
        mem: Mem,
    },
    /// PUSH of a register or an immediate (`stack` is the store).
    Push {
        /// The value pushed (a register of the operand size, or an
        /// immediate already extended to it).
        src: Src,
        /// The stack slot written.
        stack: Mem,
    },
    /// PUSH of a word or dword in memory: `mem` is read first (with the
    /// (E)SP before the push), then `stack` written.
    PushMem {
        /// The operand read (of the operand size).
        mem: Mem,
        /// The stack slot written.
        stack: Mem,
    },
    /// LEAVE: (E)SP (by the stack size) from (E)BP, then a POP of (E)BP
    /// (by the operand size); `stack` is the load, at (E)BP.
    Leave {
        /// The stack slot read.
        stack: Mem,
    },
    /// POP into a register other than (E)SP (`stack` is the load).
    Pop {
        /// Destination (16- or 32-bit).
        dst: Reg,
        /// The stack slot read.
        stack: Mem,
    },
    /// INC, DEC, NEG or NOT `mem`.
    UnaryMem {
        /// The mnemonic.
        m: M,
        /// The operand.
        mem: Mem,
    },
    /// MOVS, STOS or LODS without a repeat prefix.
    Str(Str),
    /// MOV r16/r32, Sreg: the selector, zero-extended into a 32-bit
    /// register (any mode).
    SegToReg {
        /// The segment register.
        seg: SegReg,
        /// The destination (16- or 32-bit).
        dst: Reg,
    },
    /// MOV m16, Sreg (any mode; `mem` is the store).
    SegToMem {
        /// The segment register.
        seg: SegReg,
        /// The word written.
        mem: Mem,
    },
    /// PUSH of a segment register's selector (`stack` is the store).
    PushSeg {
        /// The segment register.
        seg: SegReg,
        /// The stack slot written (2 or 4 bytes, the selector
        /// zero-extended, as the interpreter writes it).
        stack: Mem,
    },
    /// LDS, LES, LFS or LGS in protected mode: the offset (`mem`, of the
    /// register's size) into `dst`, the selector word just past it into
    /// `seg` (through the descriptor cache, as [`Op::LoadSeg`]).
    LoadFar {
        /// The segment register.
        seg: SegReg,
        /// The offset's register (16- or 32-bit).
        dst: Reg,
        /// The offset's operand.
        mem: Mem,
    },
    /// MOV or POP to DS, ES, FS or GS in protected mode: through the
    /// descriptor cache (see `super::desc`), or an exit before it.
    LoadSeg {
        /// The segment register.
        seg: SegReg,
        /// Where the selector comes from.
        src: SelSrc,
    },
}

/// The selector of a [`Op::LoadSeg`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SelSrc {
    /// A 16-bit register (number 0..7).
    Reg(u8),
    /// A word in memory (MOV Sreg,m16), or the stack slot a POP reads (2
    /// or 4 bytes, of which the low word is the selector; (E)SP then
    /// moves past it).
    Mem {
        /// The operand.
        mem: Mem,
        /// POP (else MOV).
        pop: bool,
    },
}

/// A far transfer in protected mode to a code segment at the CPL (the
/// descriptor cache has the target; anything else leaves the block just
/// before it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Far {
    /// CALL ptr16:16 or ptr16:32: pushes CS, then `Plan::next_eip`.
    Call {
        /// Target selector.
        sel: u16,
        /// Target offset.
        off: u32,
        /// The first slot written (CS; the EIP goes below it), of the
        /// operand size.
        stack: Mem,
    },
    /// CALL m16:16 or m16:32: the offset at `mem` (of the operand size),
    /// the selector word past it, then as [`Far::Call`].
    CallM {
        /// The far pointer's offset.
        mem: Mem,
        /// As [`Far::Call`]'s.
        stack: Mem,
    },
    /// JMP m16:16 or m16:32.
    JmpM {
        /// The far pointer's offset.
        mem: Mem,
    },
    /// JMP ptr16:16 or ptr16:32.
    Jmp {
        /// Target selector.
        sel: u16,
        /// Target offset.
        off: u32,
    },
    /// RETF [imm16]: pops the offset, then the selector, then `imm` more
    /// bytes.
    Ret {
        /// The offset's slot (of the operand size; the selector's word is
        /// just above it).
        stack: Mem,
        /// Bytes released after CS.
        imm: u16,
    },
}

/// The string instructions the tier takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StrKind {
    /// MOVS: `dst` = `src`.
    Movs,
    /// STOS: `dst` = AL/AX/EAX.
    Stos,
    /// LODS: AL/AX/EAX = `src`.
    Lods,
}

/// A MOVS, STOS or LODS: its operands (`seg:[(E)SI]` and `ES:[(E)DI]`,
/// of its element size and address size) and the step of the index
/// registers (the element size, negated when DF is set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Str {
    /// Which instruction.
    pub kind: StrKind,
    /// The source (MOVS, LODS; for STOS unused, a copy of `dst`).
    pub src: Mem,
    /// The destination (MOVS, STOS; for LODS unused, a copy of `src`).
    pub dst: Mem,
    /// Added to (E)SI and (E)DI after each element.
    pub delta: i32,
}

impl Str {
    /// The accesses of one element in the interpreter's order (the
    /// destination's is a write).
    pub fn accesses(&self) -> impl Iterator<Item = (Mem, bool)> {
        let src = (!matches!(self.kind, StrKind::Stos)).then_some((self.src, false));
        let dst = (!matches!(self.kind, StrKind::Lods)).then_some((self.dst, true));
        src.into_iter().chain(dst)
    }
}

impl Op {
    /// The mnemonic of an op with one (LEA has none here).
    fn mnemonic(&self) -> Option<M> {
        match *self {
            Op::Bin { m, .. }
            | Op::Unary { m, .. }
            | Op::Load { m, .. }
            | Op::Store { m, .. }
            | Op::UnaryMem { m, .. } => Some(m),
            // (None of these touches AF.)
            Op::Shift { .. } | Op::Widen { .. } | Op::Xchg { .. } => None,
            Op::Lea { .. }
            | Op::Push { .. }
            | Op::PushMem { .. }
            | Op::Pop { .. }
            | Op::Leave { .. }
            | Op::Str(_)
            | Op::PushSeg { .. }
            | Op::LoadSeg { .. }
            | Op::LoadFar { .. }
            | Op::SegToReg { .. }
            | Op::SegToMem { .. } => None,
            Op::LoadX { sign, .. } => Some(if sign { M::Movsx } else { M::Movzx }),
        }
    }

    /// The memory operand and whether the op writes it.
    pub fn mem(&self) -> Option<(Mem, bool)> {
        match *self {
            Op::Load { mem, .. } | Op::LoadX { mem, .. } => Some((mem, false)),
            Op::Store { m, mem, .. } => Some((mem, !matches!(m, M::Cmp | M::Test))),
            // (PUSH m reads its operand first, separately, as MOVS.)
            Op::UnaryMem { mem, .. }
            | Op::Push { stack: mem, .. }
            | Op::PushMem { stack: mem, .. }
            | Op::PushSeg { stack: mem, .. }
            | Op::SegToMem { mem, .. } => Some((mem, true)),
            Op::Pop { stack: mem, .. } | Op::Leave { stack: mem } | Op::LoadFar { mem, .. } => {
                Some((mem, false))
            }
            Op::LoadSeg {
                src: SelSrc::Mem { mem, .. },
                ..
            } => Some((mem, false)),
            // The last access (MOVS checks its source first, separately).
            Op::Str(s) => s.accesses().last(),
            _ => None,
        }
    }
}

/// What an exit just before op `i` of a pass reports (`Plan::side[i]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Side {
    /// EIP of op `i`.
    pub eip: u32,
    /// Base cycles of ops `0..i`.
    pub cycles: u64,
    /// Status flags ops `0..i` write.
    pub written: u32,
    /// The last of ops `0..i` that writes AF is AND/OR/XOR/TEST.
    pub clear_af: bool,
}

/// How a block ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// No branch: execution continues at `Plan::next_eip` in the interpreter.
    Fall,
    /// A conditional branch to `target` (else `Plan::next_eip`).
    Jcc {
        /// The condition.
        cc: ConditionCode,
        /// Branch target (an EIP).
        target: u32,
    },
    /// LOOP, LOOPE, LOOPNE (CX or ECX, by the code size, counted down
    /// first) or JCXZ/JECXZ to `target` (else `Plan::next_eip`).
    Loop {
        /// Which one.
        kind: LoopKind,
        /// Branch target (an EIP).
        target: u32,
    },
    /// An unconditional relative JMP.
    Jmp {
        /// Branch target (an EIP).
        target: u32,
    },
    /// A relative near CALL of the code size: pushes `Plan::next_eip`.
    Call {
        /// Branch target (an EIP).
        target: u32,
        /// The stack slot written.
        stack: Mem,
    },
    /// A near RET of the code size: pops the EIP, then `imm` more bytes.
    Ret {
        /// The stack slot read.
        stack: Mem,
        /// Bytes released after the return address.
        imm: u16,
    },
    /// A far CALL, JMP or RET (see [`Far`]); the exit has the target.
    Far(Far),
    /// MOV, POP or LSS to SS in protected mode (an [`Op::LoadSeg`] or
    /// [`Op::LoadFar`]): the stack size may change, and after MOV or POP
    /// the next instruction runs with interrupts held off (the caller
    /// sets the interrupt shadow), so it ends the block.
    LoadSs(Op),
    /// REP (or REPNE) MOVS, STOS or LODS: the host code leaves just before
    /// it (EIP = `Plan::side[ops.len()].eip`) and the tier runs one chunk
    /// of it from Rust when every element's access passes the checks up
    /// front (see `super::rep`); otherwise the interpreter runs it.
    Rep(Str),
    /// JMP or CALL r/m of the code size (near, indirect): the target from
    /// a register or memory, checked against CS's limit; a CALL then
    /// pushes `Plan::next_eip`. The exit has the target.
    Ind {
        /// Where the target is.
        src: IndSrc,
        /// CALL: the stack slot written (JMP: None).
        call: Option<Mem>,
    },
}

/// The branch of an [`End::Loop`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LoopKind {
    /// LOOP: taken while the count is not zero.
    Loop,
    /// LOOPE: and ZF is set.
    Loope,
    /// LOOPNE: and ZF is clear.
    Loopne,
    /// JCXZ/JECXZ: taken when the count is zero (which it leaves).
    Jcxz,
}

/// Where the target of an [`End::Ind`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IndSrc {
    /// A general register of the code size (guest number).
    Reg(u8),
    /// A memory operand of the code size.
    Mem(Mem),
}

/// A selected block: what to translate and what the interpreter would have
/// charged for it.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// EIP of the first instruction.
    pub start_eip: u32,
    /// Selected as 32-bit code (else 16-bit).
    pub code32: bool,
    /// The straight-line instructions (the branch is in `end`).
    pub ops: Vec<Op>,
    /// The final branch, if any.
    pub end: End,
    /// EIP after the last instruction of the block.
    pub next_eip: u32,
    /// Guest instructions in one pass, the branch included.
    pub insns: u64,
    /// Base cycles of one pass (cycles.rs), the branch's not-taken cost
    /// included; a taken branch adds [`TAKEN_EXTRA`].
    pub body_cycles: u64,
    /// Offset of the last byte of the block in CS (the fetch limit check).
    pub last_byte: u64,
    /// The last instruction that writes AF is AND/OR/XOR/TEST, whose AF the
    /// interpreter clears (the host leaves it undefined).
    pub clear_af: bool,
    /// Status flags some op of the block writes; at an exit the others
    /// are still the guest's.
    pub written: u32,
    /// Some op reads a status flag before the block has written it (so the
    /// host must start from the guest's flags).
    pub load_flags: bool,
    /// Per op (and for the final branch, last), what leaving just before
    /// it reports (used by ops with a memory operand, CALL and RET).
    pub side: Vec<Side>,
    /// Some op has a memory operand.
    pub mem: bool,
    /// The segment registers of the memory operands (bit `SegReg as u8`).
    pub segs: u8,
    /// Some op uses the stack, in the size SS had at translation (B bit).
    pub stack32: Option<bool>,
    /// Some string op steps its index registers by the DF of translation.
    pub df: Option<bool>,
    /// Some op loads a segment register or transfers far: the block runs
    /// only in the mode it was translated for (see `real`), never in V86.
    pub prot: bool,
    /// With `prot`: translated for real mode (segment loads set selector
    /// and base = selector * 16, far transfers check the offset against
    /// CS's limit), else for protected mode (through the descriptor
    /// cache). Set by the translator.
    pub real: bool,
}

/// Cycles a taken branch adds (exec::flow::branch).
pub(crate) const TAKEN_EXTRA: u64 = 4;

impl Plan {
    /// The block's branch jumps back to its own first instruction.
    pub fn self_loop(&self) -> bool {
        match self.end {
            End::Jcc { target, .. } | End::Loop { target, .. } | End::Jmp { target } => {
                target == self.start_eip
            }
            End::Fall
            | End::Call { .. }
            | End::Ret { .. }
            | End::Rep(_)
            | End::Far(_)
            | End::LoadSs(_)
            | End::Ind { .. } => false,
        }
    }
    /// The branch target, if the block ends in a branch with one.
    pub fn target(&self) -> Option<u32> {
        match self.end {
            End::Jcc { target, .. }
            | End::Loop { target, .. }
            | End::Jmp { target }
            | End::Call { target, .. } => Some(target),
            End::Fall
            | End::Ret { .. }
            | End::Rep(_)
            | End::Far(_)
            | End::LoadSs(_)
            | End::Ind { .. } => None,
        }
    }
}

/// Guest register number of a 32-bit general register.
fn gpr32(r: Register) -> Option<u8> {
    match Reg::of(r)? {
        Reg::R32(n) => Some(n),
        _ => None,
    }
}

/// Can the host encode an 8-bit op on these registers? Guest CL lives in
/// R9B (REX needed), which no instruction can pair with AH/DH/BH, and CH
/// has no host counterpart.
fn encodable(regs: &[Reg]) -> bool {
    let hi = regs.iter().any(|r| matches!(r, Reg::Hi8(_)));
    let bad = |r: &Reg| *r == Reg::Hi8(1) || (hi && *r == Reg::Lo8(1));
    !regs.iter().any(bad)
}

fn is_prefix(b: u8) -> bool {
    matches!(
        b,
        0x26 | 0x2E | 0x36 | 0x3E | 0x64 | 0x65 | 0x66 | 0x67 | 0xF0 | 0xF2 | 0xF3
    )
}

/// MOVS, STOS or LODS (any size), as a [`Str`] with these address size
/// and DF; `rep` tells whether it carries REP or REPNE.
fn string_op(insn: &Instruction, addr32: bool, df: bool) -> Option<(Str, bool)> {
    // By code, not mnemonic: SSE2's MOVSD (F2 0F 10/11) shares the
    // string op's mnemonic, and the interpreter (a 486) raises #UD there.
    let (kind, n) = match insn.code() {
        Code::Movsb_m8_m8 => (StrKind::Movs, 1),
        Code::Movsw_m16_m16 => (StrKind::Movs, 2),
        Code::Movsd_m32_m32 => (StrKind::Movs, 4),
        Code::Stosb_m8_AL => (StrKind::Stos, 1),
        Code::Stosw_m16_AX => (StrKind::Stos, 2),
        Code::Stosd_m32_EAX => (StrKind::Stos, 4),
        Code::Lodsb_AL_m8 => (StrKind::Lods, 1),
        Code::Lodsw_AX_m16 => (StrKind::Lods, 2),
        Code::Lodsd_EAX_m32 => (StrKind::Lods, 4),
        _ => return None,
    };
    let at = |seg, reg| Mem {
        seg,
        base: Some(reg),
        index: None,
        scale: 1,
        disp: 0,
        addr32,
        size: n as u8,
    };
    // (The source's segment, with any override: iced gives it for the
    // DS:SI operand; STOS has none.)
    let seg = if kind == StrKind::Stos {
        SegReg::Es
    } else {
        SegReg::from_iced(insn.memory_segment())?
    };
    let src = at(seg, 6);
    let dst = at(SegReg::Es, 7);
    let s = Str {
        kind,
        src: if kind == StrKind::Stos { dst } else { src },
        dst: if kind == StrKind::Lods { src } else { dst },
        delta: if df { -n } else { n },
    };
    Some((s, insn.has_rep_prefix() || insn.has_repne_prefix()))
}

/// What one decoded instruction becomes.
enum Kind {
    Op(Op),
    End(End),
}

/// The memory operand of `insn` as the tier takes it (`addr32`: the
/// address size).
fn mem_operand(insn: &Instruction, addr32: bool) -> Option<Mem> {
    let size = insn.memory_size().size();
    if !matches!(size, 1 | 2 | 4) {
        return None;
    }
    mem_sized(insn, addr32, size as u8)
}

/// The memory operand of `insn` with an access of `size` bytes.
fn mem_sized(insn: &Instruction, addr32: bool, size: u8) -> Option<Mem> {
    let num = |r: Register| -> Option<Option<u8>> {
        match (r, Reg::of(r)) {
            (Register::None, _) => Some(None),
            (_, Some(Reg::R32(n))) if addr32 => Some(Some(n)),
            (_, Some(Reg::R16(n))) if !addr32 => Some(Some(n)),
            _ => None,
        }
    };
    Some(Mem {
        seg: SegReg::from_iced(insn.memory_segment())?,
        base: num(insn.memory_base())?,
        index: num(insn.memory_index())?,
        scale: insn.memory_index_scale() as u8,
        disp: insn.memory_displacement32(),
        addr32,
        size,
    })
}

/// Classify an instruction decoded at IP 0 whose EIP is `eip`, with
/// `has66` if it carries an operand-size prefix and `other` if it carries
/// an address-size or segment prefix, in 32- or 16-bit code.
fn classify(
    insn: &Instruction,
    eip: u32,
    has66: bool,
    has67: bool,
    (code32, stack32, df): (bool, bool, bool),
) -> Option<Kind> {
    let m = insn.mnemonic();
    // String ops (0x66 and 0x67 pick their sizes), the only ones a repeat
    // prefix may carry.
    if let Some((s, rep)) = string_op(insn, code32 != has67, df) {
        return Some(if rep {
            Kind::End(End::Rep(s))
        } else {
            Kind::Op(Op::Str(s))
        });
    }
    if insn.has_rep_prefix() || insn.has_repne_prefix() {
        return None;
    }
    let reg0 = || {
        (insn.op_count() >= 1 && insn.op0_kind() == OpKind::Register)
            .then(|| Reg::of(insn.op0_register()))
            .flatten()
    };
    // The operand size must be the register's (no 0x66 on 8-bit forms).
    let op32 = code32 != has66;
    let sized = |r: Reg| match r {
        Reg::R32(_) => op32,
        Reg::R16(_) => !op32,
        Reg::Lo8(_) | Reg::Hi8(_) => !has66,
    };
    // As exec::flow::rel_target.
    let rel_target = || {
        let t = eip.wrapping_add(insn.near_branch_target() as u32);
        if code32 { t } else { t & 0xFFFF }
    };
    let (jmp_short, jmp_near, near) = if code32 {
        (Code::Jmp_rel8_32, Code::Jmp_rel32_32, OpKind::NearBranch32)
    } else {
        (Code::Jmp_rel8_16, Code::Jmp_rel16, OpKind::NearBranch16)
    };
    let imm = |i: u32| match insn.op_kind(i) {
        OpKind::Immediate8
        | OpKind::Immediate16
        | OpKind::Immediate32
        | OpKind::Immediate8to16
        | OpKind::Immediate8to32 => Some(Src::Imm(insn.immediate(i) as u32)),
        _ => None,
    };
    // A memory operand: the host addresses guest RAM with REX registers,
    // which AH/DH/BH cannot be used with.
    let no_hi8 = |r: Reg| !matches!(r, Reg::Hi8(_));
    let has_mem = (0..insn.op_count()).any(|i| insn.op_kind(i) == OpKind::Memory);
    if let M::Lds | M::Les | M::Lfs | M::Lgs | M::Lss = m {
        let seg = match m {
            M::Lds => SegReg::Ds,
            M::Les => SegReg::Es,
            M::Lfs => SegReg::Fs,
            M::Lss => SegReg::Ss,
            _ => SegReg::Gs,
        };
        let dst = reg0()?;
        let n = match dst {
            Reg::R32(_) => 4,
            Reg::R16(_) => 2,
            _ => return None,
        };
        if !has_mem || !sized(dst) {
            return None;
        }
        let mem = mem_sized(insn, code32 != has67, n)?;
        return Some(ss_end(Op::LoadFar { seg, dst, mem }));
    }
    if let Code::Call_m1616 | Code::Call_m1632 | Code::Jmp_m1616 | Code::Jmp_m1632 = insn.code() {
        let n = if matches!(insn.code(), Code::Call_m1632 | Code::Jmp_m1632) {
            4
        } else {
            2
        };
        let mem = mem_sized(insn, code32 != has67, n)?;
        let stack = Mem {
            seg: SegReg::Ss,
            base: Some(4),
            index: None,
            scale: 1,
            disp: u32::from(n).wrapping_neg(),
            addr32: stack32,
            size: n,
        };
        return Some(Kind::End(End::Far(if m == M::Call {
            Far::CallM { mem, stack }
        } else {
            Far::JmpM { mem }
        })));
    }
    // JMP or CALL r/m of the code size.
    let (jmp_rm, call_rm) = if code32 {
        (Code::Jmp_rm32, Code::Call_rm32)
    } else {
        (Code::Jmp_rm16, Code::Call_rm16)
    };
    if !has66 && (insn.code() == jmp_rm || insn.code() == call_rm) {
        let n: u8 = if code32 { 4 } else { 2 };
        let src = if has_mem {
            IndSrc::Mem(mem_sized(insn, code32 != has67, n)?)
        } else {
            match reg0()? {
                Reg::R32(r) if code32 && !has67 => IndSrc::Reg(r),
                Reg::R16(r) if !code32 && !has67 => IndSrc::Reg(r),
                _ => return None,
            }
        };
        let call = (insn.code() == call_rm).then_some(Mem {
            seg: SegReg::Ss,
            base: Some(4),
            index: None,
            scale: 1,
            disp: u32::from(n).wrapping_neg(),
            addr32: stack32,
            size: n,
        });
        return Some(Kind::End(End::Ind { src, call }));
    }
    if has_mem && m != M::Lea {
        let mem = mem_operand(insn, code32 != has67)?;
        let fits = |r: Reg| {
            let n = match r {
                Reg::R32(_) => 4,
                Reg::R16(_) => 2,
                Reg::Lo8(_) | Reg::Hi8(_) => 1,
            };
            sized(r) && encodable(&[r]) && no_hi8(r) && n == mem.size
        };
        let sreg0 = (insn.op0_kind() == OpKind::Register)
            .then(|| SegReg::from_iced(insn.op0_register()))
            .flatten();
        let sreg1 = (insn.op_count() == 2 && insn.op1_kind() == OpKind::Register)
            .then(|| SegReg::from_iced(insn.op1_register()))
            .flatten();
        let op = match m {
            M::Mov if sreg1.is_some() => {
                // (The store is a word whatever the operand size.)
                (insn.op0_kind() == OpKind::Memory && mem.size == 2)
                    .then_some(Op::SegToMem { seg: sreg1?, mem })?
            }
            M::Mov if sreg0.is_some() => {
                let seg = sreg0?;
                let op = (seg != SegReg::Cs && !has66 && mem.size == 2).then_some(Op::LoadSeg {
                    seg,
                    src: SelSrc::Mem { mem, pop: false },
                })?;
                return Some(ss_end(op));
            }
            M::Mov
            | M::Add
            | M::Adc
            | M::Sub
            | M::Sbb
            | M::And
            | M::Or
            | M::Xor
            | M::Cmp
            | M::Test
                if insn.op_count() == 2 =>
            {
                if insn.op0_kind() == OpKind::Memory {
                    let src = match insn.op1_kind() {
                        OpKind::Register => {
                            let r = Reg::of(insn.op1_register())?;
                            fits(r).then_some(Src::Reg(r))?
                        }
                        _ => imm(1)?,
                    };
                    let op32 = code32 != has66;
                    let sized_mem = match mem.size {
                        4 => op32,
                        2 => !op32,
                        _ => !has66,
                    };
                    sized_mem.then_some(Op::Store { m, mem, src })?
                } else if m != M::Test {
                    let dst = reg0()?;
                    fits(dst).then_some(Op::Load { m, dst, mem })?
                } else {
                    return None;
                }
            }
            M::Movzx | M::Movsx if insn.op_count() == 2 => {
                let dst = reg0()?;
                let wider = match dst {
                    Reg::R32(_) => mem.size < 4,
                    Reg::R16(_) => mem.size < 2,
                    _ => false,
                };
                (sized(dst) && wider).then_some(Op::LoadX {
                    sign: m == M::Movsx,
                    dst,
                    mem,
                })?
            }
            M::Push if insn.op_count() == 1 => {
                let n = insn.stack_pointer_increment().unsigned_abs();
                let op32 = code32 != has66;
                (matches!(n, 2 | 4) && u32::from(mem.size) == n && (n == 4) == op32).then_some(
                    Op::PushMem {
                        mem,
                        stack: Mem {
                            seg: SegReg::Ss,
                            base: Some(4),
                            index: None,
                            scale: 1,
                            disp: n.wrapping_neg(),
                            addr32: stack32,
                            size: n as u8,
                        },
                    },
                )?
            }
            M::Inc | M::Dec | M::Neg | M::Not if insn.op_count() == 1 => {
                let op32 = code32 != has66;
                let sized_mem = match mem.size {
                    4 => op32,
                    2 => !op32,
                    _ => !has66,
                };
                sized_mem.then_some(Op::UnaryMem { m, mem })?
            }
            _ => return None,
        };
        return Some(Kind::Op(op));
    }
    // Address-size and segment prefixes only on memory forms.
    if has67 {
        return None;
    }
    // The stack slot of a PUSH (below SP) or POP (at SP) of `n` bytes, in
    // the stack's address size.
    let stack = |n: u32, push: bool| Mem {
        seg: SegReg::Ss,
        base: Some(4),
        index: None,
        scale: 1,
        disp: if push { n.wrapping_neg() } else { 0 },
        addr32: stack32,
        size: n as u8,
    };
    let n = insn.stack_pointer_increment().unsigned_abs();
    let (call_near, ret, ret_imm) = if code32 {
        (Code::Call_rel32_32, Code::Retnd, Code::Retnd_imm16)
    } else {
        (Code::Call_rel16, Code::Retnw, Code::Retnw_imm16)
    };
    let size = if code32 { 4 } else { 2 };
    if let Some(k) = seg_or_far(insn, m, has66, stack) {
        return Some(k);
    }
    if m == M::Mov
        && insn.op_count() == 2
        && insn.op1_kind() == OpKind::Register
        && let Some(seg) = SegReg::from_iced(insn.op1_register())
    {
        let dst = reg0()?;
        return matches!(dst, Reg::R16(_) | Reg::R32(_))
            .then_some(Kind::Op(Op::SegToReg { seg, dst }));
    }
    match m {
        M::Call if !has66 && insn.code() == call_near => {
            return Some(Kind::End(End::Call {
                target: rel_target(),
                stack: stack(size, true),
            }));
        }
        M::Ret if !has66 && (insn.code() == ret || insn.code() == ret_imm) => {
            let imm = if insn.op_count() > 0 {
                insn.immediate16()
            } else {
                0
            };
            return Some(Kind::End(End::Ret {
                stack: stack(size, false),
                imm,
            }));
        }
        M::Push if insn.op_count() == 1 && matches!(n, 2 | 4) => {
            let src = match insn.op0_kind() {
                OpKind::Register => {
                    let r = reg0()?;
                    (sized(r) && matches!(r, Reg::R32(_) | Reg::R16(_))).then_some(Src::Reg(r))?
                }
                _ => imm(0)?,
            };
            if (n == 4) != op32 {
                return None;
            }
            return Some(Kind::Op(Op::Push {
                src,
                stack: stack(n, true),
            }));
        }
        M::Leave if matches!(insn.code(), Code::Leavew | Code::Leaved) => {
            let n = if insn.code() == Code::Leaved { 4 } else { 2 };
            return Some(Kind::Op(Op::Leave {
                stack: Mem {
                    seg: SegReg::Ss,
                    base: Some(5),
                    index: None,
                    scale: 1,
                    disp: 0,
                    addr32: stack32,
                    size: n,
                },
            }));
        }
        M::Pop if insn.op_count() == 1 && matches!(n, 2 | 4) => {
            let dst = reg0()?;
            let ok = match dst {
                Reg::R32(r) | Reg::R16(r) => r != 4 && sized(dst),
                _ => false,
            };
            return ok.then_some(Kind::Op(Op::Pop {
                dst,
                stack: stack(n, false),
            }));
        }
        _ => {}
    }
    match m {
        M::Mov | M::Add | M::Adc | M::Sub | M::Sbb | M::And | M::Or | M::Xor | M::Cmp | M::Test => {
            if insn.op_count() != 2 {
                return None;
            }
            let dst = reg0()?;
            let src = match insn.op1_kind() {
                OpKind::Register => {
                    let s = Reg::of(insn.op1_register())?;
                    encodable(&[dst, s]).then_some(Src::Reg(s))?
                }
                _ => imm(1)?,
            };
            (sized(dst) && encodable(&[dst])).then_some(Kind::Op(Op::Bin { m, dst, src }))
        }
        M::Inc | M::Dec | M::Neg | M::Not if insn.op_count() == 1 => {
            let dst = reg0()?;
            (sized(dst) && encodable(&[dst])).then_some(Kind::Op(Op::Unary { m, dst }))
        }
        M::Lea if code32 && !has66 && insn.op1_kind() == OpKind::Memory => {
            let opt = |r: Register| match r {
                Register::None => Some(None),
                r => gpr32(r).map(Some),
            };
            Some(Kind::Op(Op::Lea {
                dst: gpr32(insn.op0_register())?,
                base: opt(insn.memory_base())?,
                index: opt(insn.memory_index())?,
                scale: insn.memory_index_scale() as u8,
                disp: insn.memory_displacement32(),
            }))
        }
        M::Shl | M::Sal | M::Shr | M::Sar
            if insn.op_count() == 2
                && matches!(insn.op1_kind(), OpKind::Immediate8)
                && insn.immediate8() & 0x1F == 1 =>
        {
            let dst = reg0()?;
            let m = if m == M::Sal { M::Shl } else { m };
            (sized(dst) && encodable(&[dst])).then_some(Kind::Op(Op::Shift { m, dst }))
        }
        // (The mnemonic already says the operand size.)
        M::Cbw | M::Cwde | M::Cwd | M::Cdq => Some(Kind::Op(Op::Widen { m })),
        M::Xchg if insn.op_count() == 2 && insn.op1_kind() == OpKind::Register => {
            let a = reg0()?;
            let b = Reg::of(insn.op1_register())?;
            let same = std::mem::discriminant(&a) == std::mem::discriminant(&b)
                || matches!(
                    (a, b),
                    (Reg::Lo8(_) | Reg::Hi8(_), Reg::Lo8(_) | Reg::Hi8(_))
                );
            (same && sized(a) && encodable(&[a, b])).then_some(Kind::Op(Op::Xchg { a, b }))
        }
        _ if has66 => None,
        M::Jmp if insn.code() == jmp_short || insn.code() == jmp_near => {
            Some(Kind::End(End::Jmp {
                target: rel_target(),
            }))
        }
        // (Without 0x67 the count register is the code size's.)
        M::Loop | M::Loope | M::Loopne | M::Jcxz | M::Jecxz if insn.op0_kind() == near => {
            let kind = match m {
                M::Loop => LoopKind::Loop,
                M::Loope => LoopKind::Loope,
                M::Loopne => LoopKind::Loopne,
                _ => LoopKind::Jcxz,
            };
            Some(Kind::End(End::Loop {
                kind,
                target: rel_target(),
            }))
        }
        _ if insn.is_jcc_short_or_near() && insn.op0_kind() == near => Some(Kind::End(End::Jcc {
            cc: insn.condition_code(),
            target: rel_target(),
        })),
        _ => None,
    }
}

/// A segment load as the block takes it: one into SS ends it.
fn ss_end(op: Op) -> Kind {
    match op {
        Op::LoadSeg {
            seg: SegReg::Ss, ..
        }
        | Op::LoadFar {
            seg: SegReg::Ss, ..
        } => Kind::End(End::LoadSs(op)),
        _ => Kind::Op(op),
    }
}

/// PUSH Sreg, POP and MOV to a data segment register, and far CALL, JMP
/// (direct) and RET. `stack(n, push)` is the stack slot of a push or pop
/// of `n` bytes.
fn seg_or_far(
    insn: &Instruction,
    m: M,
    has66: bool,
    stack: impl Fn(u32, bool) -> Mem,
) -> Option<Kind> {
    let sreg = |i: u32| {
        (insn.op_count() > i && insn.op_kind(i) == OpKind::Register)
            .then(|| SegReg::from_iced(insn.op_register(i)))
            .flatten()
    };
    let n = insn.stack_pointer_increment().unsigned_abs();
    Some(match (m, insn.code()) {
        (M::Push, _) if matches!(n, 2 | 4) => Kind::Op(Op::PushSeg {
            seg: sreg(0)?,
            stack: stack(n, true),
        }),
        (M::Pop, _) if matches!(n, 2 | 4) => {
            let seg = sreg(0)?;
            (seg != SegReg::Cs).then_some(ss_end(Op::LoadSeg {
                seg,
                src: SelSrc::Mem {
                    mem: stack(n, false),
                    pop: true,
                },
            }))?
        }
        (M::Mov, _) if !has66 => {
            let seg = sreg(0)?;
            let src = match Reg::of(insn.op1_register()) {
                Some(Reg::R16(r)) if insn.op1_kind() == OpKind::Register => r,
                _ => return None,
            };
            (seg != SegReg::Cs).then_some(ss_end(Op::LoadSeg {
                seg,
                src: SelSrc::Reg(src),
            }))?
        }
        (
            M::Call | M::Jmp,
            Code::Call_ptr1616 | Code::Call_ptr1632 | Code::Jmp_ptr1616 | Code::Jmp_ptr1632,
        ) => {
            let (sel, off) = match insn.op0_kind() {
                OpKind::FarBranch16 => (insn.far_branch_selector(), u32::from(insn.far_branch16())),
                OpKind::FarBranch32 => (insn.far_branch_selector(), insn.far_branch32()),
                _ => return None,
            };
            let n = if matches!(insn.code(), Code::Call_ptr1632 | Code::Jmp_ptr1632) {
                4
            } else {
                2
            };
            Kind::End(End::Far(if m == M::Call {
                Far::Call {
                    sel,
                    off,
                    stack: stack(n, true),
                }
            } else {
                Far::Jmp { sel, off }
            }))
        }
        (M::Retf, c) => {
            let n = if matches!(c, Code::Retfd | Code::Retfd_imm16) {
                4
            } else {
                2
            };
            let imm = if insn.op_count() > 0 {
                insn.immediate16()
            } else {
                0
            };
            Kind::End(End::Far(Far::Ret {
                stack: stack(n, false),
                imm,
            }))
        }
        _ => return None,
    })
}

/// The status flags an instruction reads and writes.
fn flag_use(k: &Kind) -> (u32, u32) {
    use ConditionCode as C;
    match *k {
        Kind::Op(
            Op::Bin { m, .. }
            | Op::Unary { m, .. }
            | Op::Load { m, .. }
            | Op::Store { m, .. }
            | Op::UnaryMem { m, .. },
        ) => match m {
            M::Mov | M::Not => (0, 0),
            M::Inc | M::Dec => (0, STATUS & !CF),
            M::Adc | M::Sbb => (CF, STATUS),
            _ => (0, STATUS),
        },
        Kind::Op(Op::Shift { .. }) => (0, STATUS & !AF),
        Kind::Op(
            Op::Lea { .. }
            | Op::Widen { .. }
            | Op::Xchg { .. }
            | Op::LoadX { .. }
            | Op::Push { .. }
            | Op::PushMem { .. }
            | Op::Pop { .. }
            | Op::Leave { .. }
            | Op::Str(_)
            | Op::PushSeg { .. }
            | Op::LoadSeg { .. }
            | Op::LoadFar { .. }
            | Op::SegToReg { .. }
            | Op::SegToMem { .. },
        )
        | Kind::End(
            End::Fall
            | End::Jmp { .. }
            | End::Call { .. }
            | End::Ret { .. }
            | End::Rep(_)
            | End::Far(_)
            | End::LoadSs(_)
            | End::Ind { .. },
        ) => (0, 0),
        Kind::End(End::Loop { kind, .. }) => match kind {
            LoopKind::Loope | LoopKind::Loopne => (ZF, 0),
            LoopKind::Loop | LoopKind::Jcxz => (0, 0),
        },
        Kind::End(End::Jcc { cc, .. }) => {
            let r = match cc {
                C::o | C::no => OF,
                C::b | C::ae => CF,
                C::e | C::ne => ZF,
                C::be | C::a => CF | ZF,
                C::s | C::ns => SF,
                C::p | C::np => PF,
                C::l | C::ge => SF | OF,
                C::le | C::g => ZF | SF | OF,
                C::None => 0,
            };
            (r, 0)
        }
    }
}

/// Select the block at the start of `src`. `hostcall(i)` says whether byte
/// `i` is a registered host-call address. None when the first instruction
/// is not eligible.
pub(crate) fn select(src: Source<'_>, hostcall: impl Fn(usize) -> bool) -> Option<Plan> {
    let Source {
        bytes,
        eip: start_eip,
        code32,
        stack32,
        df,
    } = src;
    let mut plan = Plan {
        start_eip,
        code32,
        ops: Vec::new(),
        end: End::Fall,
        next_eip: start_eip,
        insns: 0,
        body_cycles: 0,
        last_byte: 0,
        clear_af: false,
        written: 0,
        load_flags: false,
        side: Vec::new(),
        mem: false,
        segs: 0,
        stack32: None,
        df: None,
        prot: false,
        real: false,
    };
    let mut pos = 0usize;
    let mut insn = Instruction::default();
    while (plan.insns as usize) < MAX_INSNS && pos < bytes.len() {
        if hostcall(pos) {
            break;
        }
        // At most one 0x66, one 0x67, one segment override and one repeat
        // prefix (on a string op only).
        let (mut has66, mut has67, mut has_seg, mut has_rep) = (false, false, false, false);
        let mut ok = true;
        for &b in bytes[pos..].iter().take_while(|&&b| is_prefix(b)) {
            let seen = match b {
                0x66 => &mut has66,
                0x67 => &mut has67,
                0x26 | 0x2E | 0x36 | 0x3E | 0x64 | 0x65 => &mut has_seg,
                0xF2 | 0xF3 => &mut has_rep,
                _ => {
                    ok = false;
                    break;
                }
            };
            ok &= !*seen;
            *seen = true;
        }
        if !ok {
            break;
        }
        let bitness = if code32 { 32 } else { 16 };
        let mut dec = Decoder::with_ip(bitness, &bytes[pos..], 0, DecoderOptions::NONE);
        dec.decode_out(&mut insn);
        if insn.is_invalid() {
            // Also when the instruction would run past the page.
            break;
        }
        let eip = plan.next_eip;
        let last = u64::from(eip) + insn.len() as u64 - 1;
        // The fetch faults past 4 GB, and past 64 KB in 16-bit code.
        if last > u64::from(if code32 { u32::MAX } else { 0xFFFF }) {
            break;
        }
        let Some(kind) = classify(&insn, eip, has66, has67, (code32, stack32, df)) else {
            break;
        };
        let seg_ok = match kind {
            Kind::Op(ref op) => op.mem().is_some(),
            Kind::End(End::LoadSs(ref op)) => op.mem().is_some(),
            Kind::End(ref end) => {
                matches!(
                    end,
                    End::Rep(_)
                        | End::Far(Far::CallM { .. } | Far::JmpM { .. })
                        | End::Ind {
                            src: IndSrc::Mem(_),
                            ..
                        }
                )
            }
        };
        if has_seg && !seg_ok {
            break;
        }
        pos += insn.len();
        plan.insns += 1;
        // (The final branch has one too: CALL and RET may leave before
        // their stack access.)
        plan.side.push(Side {
            eip,
            cycles: plan.body_cycles,
            written: plan.written,
            clear_af: plan.clear_af,
        });
        plan.body_cycles += u64::from(base_cycles(&insn, u32::from(has66) + u32::from(has67)));
        plan.last_byte = last;
        plan.next_eip = eip.wrapping_add(insn.len() as u32);
        if !code32 {
            plan.next_eip &= 0xFFFF;
        }
        let (reads, writes) = flag_use(&kind);
        plan.load_flags |= reads & !plan.written != 0;
        plan.written |= writes;
        match kind {
            Kind::Op(op) => {
                match op.mnemonic() {
                    Some(M::And | M::Or | M::Xor | M::Test) => plan.clear_af = true,
                    Some(M::Mov | M::Not | M::Movzx | M::Movsx) | None => {}
                    Some(_) => plan.clear_af = false,
                }
                if let Some((mem, _)) = op.mem() {
                    plan.mem = true;
                    plan.segs |= 1 << mem.seg as u8;
                }
                if let Op::Str(s) = op {
                    plan.segs |= 1 << s.src.seg as u8;
                    plan.df = Some(df);
                }
                if let Op::PushMem { mem, .. } = op {
                    plan.segs |= 1 << mem.seg as u8;
                }
                if matches!(
                    op,
                    Op::Push { .. }
                        | Op::PushMem { .. }
                        | Op::Pop { .. }
                        | Op::Leave { .. }
                        | Op::PushSeg { .. }
                        | Op::LoadSeg {
                            src: SelSrc::Mem { pop: true, .. },
                            ..
                        }
                ) {
                    plan.stack32 = Some(stack32);
                }
                if let Op::LoadSeg { .. } | Op::LoadFar { .. } = op {
                    plan.prot = true;
                    plan.mem = true;
                }
                plan.ops.push(op);
                // 16-bit code wrapped to offset 0: the next instruction is
                // at CS:0, not at the next byte of this page.
                if plan.next_eip < eip {
                    break;
                }
            }
            Kind::End(end) => {
                if let End::LoadSs(op) = end {
                    plan.prot = true;
                    plan.mem = true;
                    if let Some((mem, _)) = op.mem() {
                        plan.segs |= 1 << mem.seg as u8;
                    }
                    if let Op::LoadSeg {
                        src: SelSrc::Mem { pop: true, .. },
                        ..
                    } = op
                    {
                        plan.stack32 = Some(stack32);
                    }
                }
                if let End::Far(far) = end {
                    plan.prot = true;
                    plan.mem = true;
                    if let Far::CallM { mem, .. } | Far::JmpM { mem } = far {
                        plan.segs |= 1 << mem.seg as u8;
                    }
                    if !matches!(end, End::Far(Far::Jmp { .. } | Far::JmpM { .. })) {
                        plan.segs |= 1 << SegReg::Ss as u8;
                        plan.stack32 = Some(stack32);
                    }
                }
                if let End::Call { .. } | End::Ret { .. } = end {
                    plan.mem = true;
                    plan.segs |= 1 << SegReg::Ss as u8;
                    plan.stack32 = Some(stack32);
                }
                if let End::Ind { src, call } = end {
                    // (Also for the CS limit the host code compares with.)
                    plan.mem = true;
                    if let IndSrc::Mem(mem) = src {
                        plan.segs |= 1 << mem.seg as u8;
                    }
                    if call.is_some() {
                        plan.segs |= 1 << SegReg::Ss as u8;
                        plan.stack32 = Some(stack32);
                    }
                }
                if let End::Rep(s) = end {
                    plan.df = Some(df);
                    plan.segs |= (1 << s.src.seg as u8) | (1 << s.dst.seg as u8);
                }
                plan.end = end;
                break;
            }
        }
    }
    (plan.insns > 0).then_some(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src32(bytes: &[u8], eip: u32) -> Source<'_> {
        Source {
            bytes,
            eip,
            code32: true,
            stack32: true,
            df: false,
        }
    }

    #[test]
    fn indirect_jumps_and_calls() {
        let ind = |bytes: &[u8], code32: bool| {
            let src = Source {
                bytes,
                eip: 0x100,
                code32,
                stack32: code32,
                df: false,
            };
            select(src, |_| false).map(|p| (p.insns, p.end, p.mem, p.segs, p.stack32))
        };
        let ss = 1 << SegReg::Ss as u8;
        let ds = 1 << SegReg::Ds as u8;
        // inc eax; jmp ecx
        let (n, end, mem, segs, stack) = ind(&[0x40, 0xFF, 0xE1], true).expect("block");
        assert_eq!((n, mem, segs, stack), (2, true, 0, None));
        assert_eq!(
            end,
            End::Ind {
                src: IndSrc::Reg(1),
                call: None
            }
        );
        // call [ebx+8]: a memory target and the stack
        let (_, end, _, segs, stack) = ind(&[0xFF, 0x53, 0x08], true).expect("block");
        let End::Ind {
            src: IndSrc::Mem(m),
            call: Some(slot),
        } = end
        else {
            panic!("{end:?}")
        };
        assert_eq!((m.base, m.disp, m.size, m.seg), (Some(3), 8, 4, SegReg::Ds));
        assert_eq!(
            (slot.size, slot.disp, segs, stack),
            (4, (-4i32) as u32, ds | ss, Some(true))
        );
        // 16-bit: call si, jmp word [es:bx]
        let (_, end, _, _, _) = ind(&[0xFF, 0xD6], false).expect("block");
        assert!(matches!(end, End::Ind { src: IndSrc::Reg(6), call: Some(s) } if s.size == 2));
        let (_, end, _, segs, _) = ind(&[0x26, 0xFF, 0x27], false).expect("block");
        assert!(matches!(end, End::Ind { src: IndSrc::Mem(m), call: None } if m.seg == SegReg::Es));
        assert_eq!(segs, 1 << SegReg::Es as u8);
        // not of the code size (0x66), or far: not taken
        assert!(ind(&[0x66, 0xFF, 0xE1], true).is_none());
        assert!(ind(&[0x66, 0xFF, 0xE1], false).is_none());
        assert!(ind(&[0xFF, 0x2B], true).is_none_or(|(_, e, ..)| !matches!(e, End::Ind { .. })));
    }

    #[test]
    fn sixteen_bit_code() {
        let src = |bytes| Source {
            bytes,
            eip: 0xFFF0,
            code32: false,
            stack32: false,
            df: false,
        };
        // add ax,cx; 66 add eax,ecx; dec cx; jnz -8
        let p = select(
            src(&[0x01, 0xC8, 0x66, 0x01, 0xC8, 0x49, 0x75, 0xF8]),
            |_| false,
        )
        .expect("block");
        assert_eq!(p.insns, 4);
        assert_eq!(p.body_cycles, 2 + 3 + 2 + 3);
        assert!(p.self_loop(), "{p:?}");
        // lea (16-bit address) and a 0x66 branch are not taken
        assert!(select(src(&[0x8D, 0x00]), |_| false).is_none());
        assert!(select(src(&[0x66, 0xEB, 0x00]), |_| false).is_none());
        // nothing may end past 0xFFFF
        let p = Source {
            bytes: &[0x40, 0x40, 0xB8, 0, 0],
            eip: 0xFFFC,
            code32: false,
            stack32: false,
            df: false,
        };
        assert_eq!(select(p, |_| false).expect("block").insns, 2);
        // an instruction ending at 0xFFFF ends the block: the next one is
        // at CS:0, not at the following byte of the page
        let p = Source {
            bytes: &[0x00, 0x00, 0x00, 0x00, 0x40, 0x40],
            eip: 0xFFFC,
            code32: false,
            stack32: false,
            df: false,
        };
        let p = select(p, |_| false).expect("block");
        assert_eq!((p.insns, p.next_eip, p.last_byte), (2, 0, 0xFFFF));
    }

    #[test]
    fn tight_loop_is_one_self_loop() {
        // add eax,ecx; xor ebx,eax; dec ecx; jnz -7
        let code = [0x01, 0xC8, 0x31, 0xC3, 0x49, 0x75, 0xF9, 0xF4];
        let p = select(src32(&code, 0x1005), |_| false).expect("block");
        assert_eq!(p.insns, 4);
        assert_eq!(p.ops.len(), 3);
        assert!(p.self_loop());
        assert_eq!(p.next_eip, 0x100C);
        assert_eq!(p.last_byte, 0x100B);
        assert_eq!(p.body_cycles, 2 + 2 + 2 + 3);
        assert!(!p.clear_af, "DEC is the last AF writer");
        assert_eq!((p.written, p.load_flags), (STATUS, false));
        // inc eax; adc ebx,eax: CF read before any write
        let p = select(src32(&[0x40, 0x11, 0xC3], 0), |_| false).expect("block");
        assert!(p.load_flags);
        // add; adc; jbe: all written first
        let p = select(src32(&[0x01, 0xC3, 0x11, 0xC3, 0x76, 0x00], 0), |_| false).unwrap();
        assert!(!p.load_flags);
        // inc; jc / mov; jz: the guest's flags
        assert!(
            select(src32(&[0x40, 0x72, 0x00], 0), |_| false)
                .unwrap()
                .load_flags
        );
        assert!(
            !select(src32(&[0x40, 0x74, 0x00], 0), |_| false)
                .unwrap()
                .load_flags
        );
        let p = select(src32(&[0x89, 0xC3, 0x74, 0x00], 0), |_| false).unwrap();
        assert_eq!((p.written, p.load_flags), (0, true));
    }

    #[test]
    fn string_ops() {
        // movsb; 66 stosw; fs: lodsd; 67 rep movsd
        let code = [0xA4, 0x66, 0xAB, 0x64, 0xAD, 0x67, 0xF3, 0xA5, 0x40];
        let p = select(src32(&code, 0), |_| false).expect("block");
        assert_eq!(p.insns, 4);
        assert_eq!(p.df, Some(false));
        let Op::Str(s) = p.ops[0] else {
            panic!("{:?}", p.ops[0])
        };
        assert_eq!(
            (s.kind, s.src.seg, s.dst.seg, s.delta),
            (StrKind::Movs, SegReg::Ds, SegReg::Es, 1)
        );
        assert_eq!(s.accesses().count(), 2);
        let Op::Str(s) = p.ops[1] else { panic!() };
        assert_eq!(
            (s.kind, s.dst.size, s.dst.base),
            (StrKind::Stos, 2, Some(7))
        );
        let Op::Str(s) = p.ops[2] else { panic!() };
        assert_eq!(
            (s.kind, s.src.seg, s.src.base),
            (StrKind::Lods, SegReg::Fs, Some(6))
        );
        let End::Rep(s) = p.end else {
            panic!("{:?}", p.end)
        };
        assert_eq!((s.kind, s.src.addr32, s.delta), (StrKind::Movs, false, 4));
        assert_eq!(p.side[3].eip, 5);
        assert_eq!(p.next_eip, 8);
        assert_eq!(
            p.segs,
            (1 << SegReg::Ds as u8) | (1 << SegReg::Es as u8) | (1 << SegReg::Fs as u8)
        );
        // DF set: steps down
        let mut src = src32(&[0xA5], 0);
        src.df = true;
        let Op::Str(s) = select(src, |_| false).unwrap().ops[0] else {
            panic!()
        };
        assert_eq!(s.delta, -4);
        // SSE2's MOVSD (F2 0F 10/11) shares the mnemonic; it is no string
        // op (and #UD on the 486): nothing is taken.
        for sse in [[0xF2, 0x0F, 0x10, 0x00], [0xF2, 0x0F, 0x11, 0x00]] {
            assert!(select(src32(&sse, 0), |_| false).is_none(), "{sse:02X?}");
        }
    }

    #[test]
    fn memory_forms_and_prefixes() {
        // mov eax,ebx; mov eax,[esi]; add [edi+4],ax (66); inc byte [bx] (67)
        let code = [
            0x89, 0xD8, 0x8B, 0x06, 0x66, 0x01, 0x47, 0x04, 0x67, 0xFE, 0x07,
        ];
        let p = select(src32(&code, 0x10), |_| false).expect("block");
        assert_eq!((p.insns, p.end), (4, End::Fall));
        assert!(p.mem);
        assert_eq!(p.body_cycles, 2 + 4 + 8 + 7);
        let m = p.ops[2].mem().expect("memory operand");
        assert_eq!(
            (m.0.seg, m.0.base, m.0.disp, m.0.size, m.1),
            (SegReg::Ds, Some(7), 4, 2, true)
        );
        let m = p.ops[3].mem().expect("memory operand").0;
        assert_eq!((m.base, m.addr32, m.size), (Some(3), false, 1));
        // side exits report what ran before each op
        let eips: Vec<u32> = p.side.iter().map(|s| s.eip).collect();
        assert_eq!(eips, [0x10, 0x12, 0x14, 0x18]);
        assert_eq!(p.side[3].cycles, 2 + 4 + 8);
        assert_eq!(p.side[3].written, STATUS);
        // [ebp] is SS; es: overrides; cmp [m],r only reads
        let p = select(src32(&[0x8B, 0x45, 0x00, 0x26, 0x39, 0x06], 0), |_| false).unwrap();
        assert_eq!(p.ops[0].mem().unwrap().0.seg, SegReg::Ss);
        assert_eq!(
            p.ops[1].mem().unwrap(),
            (
                Mem {
                    seg: SegReg::Es,
                    base: Some(6),
                    index: None,
                    scale: 1,
                    disp: 0,
                    addr32: true,
                    size: 4
                },
                false
            )
        );
        // not taken: LOCK, REP, two segment prefixes, AH with memory, a
        // segment prefix without a memory operand
        assert!(select(src32(&[0xF0, 0x01, 0x06], 0), |_| false).is_none());
        assert!(select(src32(&[0xF3, 0x01, 0x06], 0), |_| false).is_none());
        assert!(select(src32(&[0xF3, 0xF2, 0xA5], 0), |_| false).is_none());
        assert!(select(src32(&[0x26, 0x2E, 0x8B, 0x06], 0), |_| false).is_none());
        assert!(
            select(src32(&[0x8A, 0x26], 0), |_| false).is_none(),
            "mov ah,[esi]"
        );
        assert!(select(src32(&[0x2E, 0x40], 0), |_| false).is_none());
        // 16-bit ops with 0x66; other prefixes end the block
        let p = select(src32(&[0x66, 0x01, 0xC8, 0xF0, 0x40], 0), |_| false).expect("block");
        assert_eq!((p.insns, p.body_cycles), (1, 3));
        assert!(select(src32(&[0x66, 0x66, 0x01, 0xC8], 0), |_| false).is_none());
        assert!(select(src32(&[0x67, 0x8D, 0x00], 0), |_| false).is_none());
        // 8-bit: CH never, CL not with AH/DH/BH
        assert!(
            select(src32(&[0x00, 0xE8], 0), |_| false).is_none(),
            "add al,ch"
        );
        assert!(
            select(src32(&[0x00, 0xE1], 0), |_| false).is_none(),
            "add cl,ah"
        );
        assert!(
            select(src32(&[0x00, 0xC1], 0), |_| false).is_some(),
            "add cl,al"
        );
        assert!(
            select(src32(&[0x00, 0xDC], 0), |_| false).is_some(),
            "add ah,bl"
        );
        // host call on the second instruction
        let p = select(src32(&[0x21, 0xC8, 0x40], 0), |i| i == 2).expect("block");
        assert_eq!(p.insns, 1);
        assert!(p.clear_af);
        // an instruction cut by the page end is not taken
        let p = select(src32(&[0x40, 0xB8, 0x01], 0), |_| false).expect("block");
        assert_eq!(p.insns, 1);
    }

    #[test]
    fn segment_loads_and_far_transfers() {
        let src16 = |bytes| Source {
            bytes,
            eip: 0,
            code32: false,
            stack32: false,
            df: false,
        };
        // push ds; mov ax,20h; mov ds,ax; inc word [0]; pop ds; retf
        let code = [
            0x1E, 0xB8, 0x20, 0x00, 0x8E, 0xD8, 0xFF, 0x06, 0, 0, 0x1F, 0xCB,
        ];
        let p = select(src16(&code), |_| false).expect("block");
        assert_eq!(p.insns, 6);
        assert!(p.prot && p.mem);
        assert_eq!(p.body_cycles, 2 + 2 + 2 + 6 + 4 + 18);
        assert!(matches!(
            p.ops[0],
            Op::PushSeg {
                seg: SegReg::Ds,
                ..
            }
        ));
        assert_eq!(
            p.ops[2],
            Op::LoadSeg {
                seg: SegReg::Ds,
                src: SelSrc::Reg(0)
            }
        );
        let Op::LoadSeg {
            src: SelSrc::Mem { mem, pop: true },
            ..
        } = p.ops[4]
        else {
            panic!("{:?}", p.ops[4])
        };
        assert_eq!((mem.seg, mem.size, mem.disp), (SegReg::Ss, 2, 0));
        let End::Far(Far::Ret { stack, imm: 0 }) = p.end else {
            panic!("{:?}", p.end)
        };
        assert_eq!(stack.size, 2);
        // call far 18h:0 (a block of its own); 66 call far ptr16:32
        let p = select(src16(&[0x9A, 0, 0, 0x18, 0]), |_| false).expect("block");
        assert_eq!(
            p.end,
            End::Far(Far::Call {
                sel: 0x18,
                off: 0,
                stack: Mem {
                    seg: SegReg::Ss,
                    base: Some(4),
                    index: None,
                    scale: 1,
                    disp: 2u32.wrapping_neg(),
                    addr32: false,
                    size: 2
                }
            })
        );
        let p = select(src16(&[0x66, 0x9A, 0, 0, 1, 0, 0x18, 0]), |_| false).unwrap();
        assert!(
            matches!(p.end, End::Far(Far::Call { off: 0x10000, stack, .. }) if stack.size == 4)
        );
        // les bx,[bp+2]; lss sp,[0] ends the block; mov ss,ax too
        let p = select(
            src16(&[0xC4, 0x5E, 0x02, 0x0F, 0xB2, 0x26, 0, 0, 0x40]),
            |_| false,
        )
        .unwrap();
        assert_eq!(p.insns, 2);
        assert!(
            matches!(p.ops[0], Op::LoadFar { seg: SegReg::Es, dst: Reg::R16(3), mem } if mem.seg == SegReg::Ss && mem.size == 2)
        );
        assert!(matches!(
            p.end,
            End::LoadSs(Op::LoadFar {
                seg: SegReg::Ss,
                ..
            })
        ));
        let p = select(src16(&[0x8E, 0xD0, 0x40]), |_| false).unwrap();
        assert_eq!((p.insns, p.next_eip), (1, 2));
        // call far [bx] (m16:16) with a segment override; jmp far ptr
        let p = select(src16(&[0x26, 0xFF, 0x1F]), |_| false).unwrap();
        assert!(matches!(p.end, End::Far(Far::CallM { mem, .. }) if mem.seg == SegReg::Es));
        assert!(matches!(
            select(src16(&[0xEA, 4, 0, 8, 0]), |_| false).unwrap().end,
            End::Far(Far::Jmp { sel: 8, off: 4 })
        ));
        // not taken: MOV CS, a 0x66 MOV Sreg
        assert!(select(src16(&[0x8E, 0xC8]), |_| false).is_none());
        assert!(select(src16(&[0x66, 0x8E, 0xD8]), |_| false).is_none());
        // mov ax,ds; 66 mov eax,ss; mov [bx],es (any mode)
        let p = select(src16(&[0x8C, 0xD8, 0x66, 0x8C, 0xD0, 0x8C, 0x07]), |_| {
            false
        })
        .unwrap();
        assert_eq!(
            p.ops[..2],
            [
                Op::SegToReg {
                    seg: SegReg::Ds,
                    dst: Reg::R16(0)
                },
                Op::SegToReg {
                    seg: SegReg::Ss,
                    dst: Reg::R32(0)
                }
            ]
        );
        assert!(matches!(p.ops[2], Op::SegToMem { seg: SegReg::Es, mem } if mem.size == 2));
        assert!(!p.prot);
        // PUSH Sreg alone needs no protected mode
        let p = select(src16(&[0x0E, 0x16, 0x40]), |_| false).unwrap();
        assert!(!p.prot);
    }
}
