//! Random valid instructions for the differential test: random bytes
//! (with random 0x66/0x67/segment prefixes) decoded by iced-x86 for the
//! current mode, kept when iced decodes them and they pass [`allowed`].
//!
//! Left out, and why:
//! - control transfers (JMP/CALL/RET/IRET/Jcc/LOOP), HLT, segment register
//!   loads, POPF: they leave the straight-line code area or change the
//!   mode; the small programs cover them;
//! - IN/OUT/INS/OUTS (no common port model), CPUID and RDTSC (model
//!   values), x87 and WAIT, privileged and system instructions (CRn, DRn,
//!   descriptor tables, LAR/LSL/VERR/VERW, INVD/WBINVD/INVLPG);
//! - LOCK and REP/REPNE prefixes (REP lengths come from random CX, so
//!   they would run off the segment; the programs run REP strings);
//! - undocumented encodings: SALC (D6), INT1/ICEBP (F1), the SAL alias
//!   (D0-D3/C0/C1 /6), the TEST alias F6/F7 /1 (real CPUs run it as
//!   TEST, QEMU raises #UD: unicorn is wrong there);
//! - instructions whose result Intel leaves undefined or model-specific:
//!   BSWAP with a 16-bit operand, SHLD/SHRD of 16-bit operands by more
//!   than 16, MOV r32,Sreg and PUSH Sreg with a 32-bit operand size (upper
//!   half model-specific on the 386/486), SMSW r32;
//! - BT/BTS/BTR/BTC mem,reg (the access is not at the operand iced reports),
//! - any memory operand outside its segment's 64 KB limit: QEMU does not
//!   check segment limits on data accesses (the interpreter raises #GP or
//!   #SS as the hardware does), so those cases would only measure QEMU.

use super::{Pair, is_bt_mem_reg};
use emu::Gpr;
use iced_x86::{Decoder, DecoderOptions, Instruction, Mnemonic as M, OpKind, Register};

/// xorshift64* (deterministic, no dependency).
pub struct Rng(u64);

impl Rng {
    /// Seeded.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// Next 64 random bits.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// 0..n.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// A GPR value biased to small numbers and edge values.
    pub fn value(&mut self) -> u32 {
        match self.below(6) {
            0 => self.next() as u32,
            1 => [
                0,
                1,
                0x7F,
                0x80,
                0xFF,
                0x7FFF,
                0x8000,
                0xFFFF,
                0x7FFF_FFFF,
                0x8000_0000,
                0xFFFF_FFFF,
            ][self.below(11) as usize],
            2 => self.below(0x100) as u32,
            _ => self.below(0x1_0000) as u32,
        }
    }
}

/// Mnemonics the random generator may produce.
fn allowed_mnemonic(m: M) -> bool {
    matches!(
        m,
        M::Add
            | M::Adc
            | M::Sub
            | M::Sbb
            | M::And
            | M::Or
            | M::Xor
            | M::Cmp
            | M::Test
            | M::Inc
            | M::Dec
            | M::Neg
            | M::Not
            | M::Mov
            | M::Movzx
            | M::Movsx
            | M::Lea
            | M::Xchg
            | M::Cbw
            | M::Cwde
            | M::Cwd
            | M::Cdq
            | M::Lahf
            | M::Sahf
            | M::Clc
            | M::Stc
            | M::Cmc
            | M::Cld
            | M::Std
            | M::Cli
            | M::Sti
            | M::Nop
            | M::Push
            | M::Pop
            | M::Pushf
            | M::Pushfd
            | M::Pusha
            | M::Pushad
            | M::Popa
            | M::Popad
            | M::Rol
            | M::Ror
            | M::Rcl
            | M::Rcr
            | M::Shl
            | M::Shr
            | M::Sar
            | M::Shld
            | M::Shrd
            | M::Mul
            | M::Imul
            | M::Div
            | M::Idiv
            | M::Aaa
            | M::Aas
            | M::Daa
            | M::Das
            | M::Aam
            | M::Aad
            | M::Bt
            | M::Bts
            | M::Btr
            | M::Btc
            | M::Bsf
            | M::Bsr
            | M::Seto
            | M::Setno
            | M::Setb
            | M::Setae
            | M::Sete
            | M::Setne
            | M::Setbe
            | M::Seta
            | M::Sets
            | M::Setns
            | M::Setp
            | M::Setnp
            | M::Setl
            | M::Setge
            | M::Setle
            | M::Setg
            | M::Bswap
            | M::Xadd
            | M::Cmpxchg
            | M::Xlatb
            | M::Movsb
            | M::Movsw
            | M::Movsd
            | M::Cmpsb
            | M::Cmpsw
            | M::Cmpsd
            | M::Stosb
            | M::Stosw
            | M::Stosd
            | M::Lodsb
            | M::Lodsw
            | M::Lodsd
            | M::Scasb
            | M::Scasw
            | M::Scasd
            | M::Bound
            | M::Int3
            | M::Into
            | M::Int
    )
}

fn is_sreg(r: Register) -> bool {
    r.is_segment_register()
}

/// Is the decoded `insn` (with `bytes`) one the test may run now?
pub fn allowed(insn: &Instruction, bytes: &[u8], pair: &Pair) -> bool {
    if insn.is_invalid() || !allowed_mnemonic(insn.mnemonic()) {
        return false;
    }
    if insn.has_lock_prefix() || insn.has_rep_prefix() || insn.has_repne_prefix() {
        return false;
    }
    // Raw F2/F3 bytes iced may fold into other meanings.
    if bytes[..insn.len()]
        .iter()
        .any(|&b| b == 0xF0 || b == 0xF2 || b == 0xF3)
    {
        return false;
    }
    let o32 = insn.op_count() > 0
        && insn.op0_kind() == OpKind::Register
        && insn.op0_register().size() == 4;
    let special_reg = |i: u32| {
        let r = insn.op_register(i);
        insn.op_kind(i) == OpKind::Register && (is_sreg(r) || r.is_cr() || r.is_dr() || r.is_tr())
    };
    let reject = match insn.mnemonic() {
        // Only MOV r/m16, Sreg among the segment/control register moves.
        M::Mov | M::Pop => {
            (0..insn.op_count()).any(special_reg)
                && !(insn.mnemonic() == M::Mov
                    && insn.op1_kind() == OpKind::Register
                    && is_sreg(insn.op1_register())
                    && !o32)
        }
        M::Push => {
            insn.op0_kind() == OpKind::Register
                && is_sreg(insn.op0_register())
                && insn.stack_pointer_increment() != -2
        }
        M::Sal => true,
        M::Bswap => !o32,
        M::Shld | M::Shrd => {
            let c = match insn.op2_kind() {
                OpKind::Immediate8 => u32::from(insn.immediate8()),
                _ => pair.m.cpu().gpr[Gpr::Ecx] & 0xFF,
            };
            let word = (insn.op0_kind() != OpKind::Memory && insn.op0_register().size() == 2)
                || insn.memory_size().size() == 2;
            word && c & 31 > 16
        }
        _ => false,
    };
    if reject {
        return false;
    }
    if test_alias(insn, bytes) {
        return false;
    }
    if is_bt_mem_reg(insn) {
        return false;
    }
    pair.accesses_checked(insn).is_some()
}

/// TEST r/m, imm encoded as F6 /1 or F7 /1: undocumented (the 8086..486
/// run it as TEST; QEMU raises #UD).
fn test_alias(insn: &Instruction, bytes: &[u8]) -> bool {
    if insn.mnemonic() != M::Test {
        return false;
    }
    let mut i = 0;
    while i < bytes.len()
        && matches!(
            bytes[i],
            0x26 | 0x2E | 0x36 | 0x3E | 0x64 | 0x65 | 0x66 | 0x67
        )
    {
        i += 1;
    }
    matches!(bytes.get(i), Some(0xF6 | 0xF7)) && bytes.get(i + 1).is_some_and(|m| (m >> 3) & 7 == 1)
}

/// A random allowed instruction for the pair's mode at its EIP.
pub fn instruction(rng: &mut Rng, pair: &Pair) -> Vec<u8> {
    let bitness = pair.mode.bitness();
    let eip = u64::from(pair.m.cpu().eip);
    loop {
        let mut b = Vec::with_capacity(15);
        if rng.below(8) == 0 {
            b.push(0x66);
        }
        if rng.below(10) == 0 {
            b.push(0x67);
        }
        if rng.below(8) == 0 {
            b.push([0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65][rng.below(6) as usize]);
        }
        if rng.below(5) == 0 {
            b.push(0x0F);
        }
        while b.len() < 15 {
            b.push(rng.next() as u8);
        }
        let mut d = Decoder::with_ip(bitness, &b, eip, DecoderOptions::NONE);
        let insn = d.decode();
        if allowed(&insn, &b, pair) {
            b.truncate(insn.len());
            return b;
        }
    }
}

/// Keep the machines where the generator can work: EIP back to 0x100
/// near the end of the code area, SP inside its segment, now and then a
/// register reset to a fresh (often small) value so memory operands stay
/// within their segments.
pub fn tend(rng: &mut Rng, pair: &mut Pair) {
    let c = pair.m.cpu_mut_flush_tlb();
    if c.eip > 0xF000 || c.eip < 0x100 {
        c.eip = 0x100;
    }
    let sp = c.gpr[Gpr::Esp];
    if !(0x400..=0xF000).contains(&sp) {
        c.gpr[Gpr::Esp] = 0x8000;
    }
    if rng.below(16) == 0 {
        let r = rng.below(8) as usize;
        if r != 4 {
            c.gpr[r] = rng.value();
        }
    }
    pair.sync();
}
