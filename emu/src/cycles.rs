//! The 386 cycle table.
//!
//! Source: the Intel386 DX Programmer's Reference Manual (1990), chapter
//! 17 instruction clock counts, taking the real-mode figure and assuming
//! zero wait states, a hit in the prefetch queue and aligned operands.
//! Each instruction form gets `(register form, memory form)`; the memory
//! figure already includes the memory-operand adder of the manual. Other
//! adders applied:
//!
//! - +1 per operand-size or address-size prefix (segment, REP and LOCK
//!   prefixes cost 0, as the manual lists for the 386);
//! - taken branches add 4 (the manual's `7+m` versus 3 when not taken,
//!   with `m` approximated as 1 component);
//! - each REP iteration adds 4 (MOVS `7+4n`; CMPS/SCAS use the same adder);
//! - delivering an interrupt or exception adds 37 (INT n in real mode).
//!
//! Approximations: data-dependent counts (MUL/IMUL `9-38`, BSF/BSR) use a
//! fixed mid value; protected-mode extras for segment loads, far transfers
//! and gates are not added; the x87 subset counts as 3.

use iced_x86::{Instruction, Mnemonic as M, OpKind};

fn has_mem(insn: &Instruction) -> bool {
    (0..insn.op_count()).any(|i| insn.op_kind(i) == OpKind::Memory)
}

fn mem_is_dest(insn: &Instruction) -> bool {
    insn.op_count() > 0 && insn.op0_kind() == OpKind::Memory
}

/// Base cycles for one execution of `insn` with `size_prefixes` 0x66/0x67
/// prefix bytes.
pub fn base_cycles(insn: &Instruction, size_prefixes: u32) -> u16 {
    let mem = has_mem(insn);
    let dst = mem_is_dest(insn);
    let pick = |r: u16, m: u16| if mem { m } else { r };
    let c = match insn.mnemonic() {
        M::Mov => {
            if dst {
                2
            } else {
                pick(2, 4)
            }
        }
        M::Add | M::Adc | M::Sub | M::Sbb | M::And | M::Or | M::Xor => {
            if dst {
                7
            } else {
                pick(2, 6)
            }
        }
        M::Cmp | M::Test => {
            if dst {
                5
            } else {
                pick(2, 6)
            }
        }
        M::Inc | M::Dec | M::Neg | M::Not => pick(2, 6),
        M::Push => pick(2, 5),
        M::Pop => pick(4, 5),
        M::Pusha | M::Pushad => 18,
        M::Popa | M::Popad => 24,
        M::Pushf | M::Pushfd => 4,
        M::Popf | M::Popfd => 5,
        M::Xchg => pick(3, 5),
        M::Lea => 2,
        M::Lds | M::Les | M::Lss | M::Lfs | M::Lgs => 7,
        M::Movzx | M::Movsx => pick(3, 6),
        M::Mul | M::Imul => pick(22, 25),
        M::Div => pick(22, 25),
        M::Idiv => pick(27, 30),
        M::Rol | M::Ror | M::Shl | M::Sal | M::Shr | M::Sar | M::Shld | M::Shrd => pick(3, 7),
        M::Rcl | M::Rcr => pick(9, 10),
        M::Jmp => match insn.op0_kind() {
            OpKind::FarBranch16 | OpKind::FarBranch32 => 12,
            _ => pick(7, 10),
        },
        M::Call => match insn.op0_kind() {
            OpKind::FarBranch16 | OpKind::FarBranch32 => 17,
            _ => pick(7, 10),
        },
        M::Ret => 10,
        M::Retf => 18,
        M::Loop | M::Loope | M::Loopne => 7,
        M::Jcxz | M::Jecxz => 5,
        M::Int => 0,
        M::Int3 => 0,
        M::Into => 3,
        M::Iret | M::Iretd => 22,
        M::Enter => 10,
        M::Leave => 4,
        M::Bound => 10,
        M::Movsb | M::Movsw | M::Movsd => 7,
        M::Cmpsb | M::Cmpsw | M::Cmpsd => 10,
        M::Scasb | M::Scasw | M::Scasd => 7,
        M::Lodsb | M::Lodsw | M::Lodsd => 5,
        M::Stosb | M::Stosw | M::Stosd => 4,
        M::Insb | M::Insw | M::Insd => 15,
        M::Outsb | M::Outsw | M::Outsd => 14,
        M::In => 12,
        M::Out => 10,
        M::Aaa | M::Aas | M::Daa | M::Das => 4,
        M::Aam => 17,
        M::Aad => 19,
        M::Cbw | M::Cwde => 3,
        M::Cwd | M::Cdq => 2,
        M::Lahf => 2,
        M::Sahf | M::Cli | M::Sti | M::Nop => 3,
        M::Hlt => 5,
        M::Bt => pick(3, 12),
        M::Bts | M::Btr | M::Btc => pick(6, 13),
        M::Bsf | M::Bsr => 11,
        M::Xadd => pick(3, 4),
        M::Cmpxchg => pick(6, 8),
        M::Bswap => 1,
        M::Xlatb => 5,
        M::Lgdt | M::Lidt => 11,
        M::Sgdt | M::Sidt => 9,
        M::Lldt => 20,
        M::Sldt | M::Str => 2,
        M::Ltr => 23,
        M::Lar => 15,
        M::Lsl => 21,
        M::Verr | M::Verw => 10,
        M::Arpl => 20,
        M::Clts => 5,
        M::Lmsw => 10,
        M::Smsw => 2,
        M::Cpuid => 14,
        m if (M::Seta as u32..=M::Sets as u32).contains(&(m as u32)) => pick(4, 5),
        _ => {
            if insn.mnemonic() == M::Mov {
                2
            } else {
                3
            }
        }
    };
    let c = if insn.is_jcc_short_or_near() { 3 } else { c };
    c + size_prefixes as u16
}
