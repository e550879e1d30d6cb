//! The x87 arithmetic the machine does not execute, emulated by the
//! kernel as OS/2's coprocessor emulator did on machines without one:
//! `emu` runs FNINIT, FNSTSW, FNSTCW, FLDCW, WAIT and the other probes
//! itself and raises #UD for every other ESC instruction; the kernel
//! takes that #UD, decodes the instruction at CS:EIP and, when it is one
//! of the instructions here, does it and goes on after it. Compiled C
//! (VisualAge C++'s rc.exe converting 64-bit integers, for one) needs
//! loads, stores, arithmetic and comparisons.
//!
//! Decisions:
//! - **Precision.** The registers hold `f64`: results are IEEE double
//!   precision, not the 80-bit extended precision of a real x87 (an
//!   80-bit operand is rounded to double when loaded).
//! - **State.** TOP and the condition codes live in the machine's status
//!   word (so FNSTSW shows them); the eight registers are per thread in
//!   the process. FNINIT (run by the machine) sets TOP to 0; the
//!   registers keep their values, and tags are not kept (no stack
//!   overflow or underflow faults).
//! - **Exceptions** are masked, as the C runtime's default control word
//!   has them: invalid operations give NaN, division by zero infinity,
//!   an integer store out of range the integer indefinite (the lowest
//!   value). Rounding of integer stores and FRNDINT follows the control
//!   word's RC field.
//! - The transcendental instructions (FSIN, FCOS, FSINCOS, FPTAN, FPATAN,
//!   F2XM1, FYL2X, FYL2XP1) and FXTRACT compute in f64 with Rust's
//!   functions; C2 (argument out of range) is never set.
//! - **Tags** are abridged in the machine's `fpu_tags` (FNINIT, run by
//!   the machine, empties them; loads push a register into use, pops and
//!   FFREE take it out), so FSAVE and FSTENV store a real tag word: empty,
//!   zero, special (NaN, infinity) or valid, from each register's value.
//! - **FSAVE/FNSAVE, FRSTOR, FSTENV/FNSTENV, FLDENV** use the
//!   protected-mode layouts (OS/2 programs run in protected mode): 14-
//!   and 94-byte images with a 16-bit operand size, 28 and 108 with a
//!   32-bit one; the registers follow the environment as ST(0)..ST(7) in
//!   the 80-bit format. The 32-bit environment's reserved upper halves
//!   are stored as 0. FSAVE then initializes the unit as FNINIT does;
//!   FSTENV masks every exception. The instruction and data pointers and
//!   the opcode are those of the last instruction emulated here that is
//!   not one of these four (the machine's own x87 instructions, FNINIT
//!   among them, leave them as they were; FSAVE clears them); an
//!   instruction without a memory operand keeps the data pointer.
//! - **FBLD/FBSTP**: 18-digit packed BCD. FBLD is exact up to 2^53 and
//!   rounds to nearest above; FBSTP rounds by RC and stores the BCD
//!   indefinite (`FFFF C000 0000 0000 0000`) for a NaN or a value of more
//!   than 18 digits.
//! - **FCOMI, FCOMIP, FUCOMI, FUCOMIP** set ZF, PF, CF (all three when
//!   unordered) and clear OF, SF, AF and C1; **FCMOVcc** test CF, ZF, PF.
//! - **80-bit memory operands** (FLD/FSTP m80, FSAVE images): storing is
//!   exact (every double is an extended value); loading is exact for
//!   every extended value a double holds and rounds to nearest otherwise
//!   (twice in double's subnormal range); NaNs keep their sign and the
//!   top 52 bits of their payload, made quiet; pseudo-NaNs,
//!   pseudo-infinities and unnormals load as the indefinite. No crate
//!   for 80-bit arithmetic is used: the registers stay `f64` (see
//!   Precision); a soft-float extended type would change every result's
//!   rounding, which the programs run here have not needed.

use iced_x86::{Decoder, DecoderOptions, Instruction, MemorySize, Mnemonic as M, OpKind, Register};

use crate::process::Process;

/// One thread's registers (physical order; ST(i) is `regs[(top + i) & 7]`)
/// and the pointers to its last emulated instruction.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Regs {
    regs: [f64; 8],
    last: Pointers,
}

/// What FSTENV and FSAVE store of the last non-control instruction: its
/// address (offset and CS selector), its opcode (the low 3 bits of the
/// ESC byte and the ModR/M byte) and its memory operand (offset and
/// selector).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Pointers {
    fip: u32,
    fcs: u16,
    fop: u16,
    fdp: u32,
    fds: u16,
}

const C0: u16 = 1 << 8;
const C1: u16 = 1 << 9;
const C2: u16 = 1 << 10;
const C3: u16 = 1 << 14;

/// Emulates the x87 instruction at CS:EIP; false when it is none of
/// those emulated (or its memory operand is not there), and the #UD
/// stands.
pub(crate) fn emulate(p: &mut Process) -> bool {
    let cpu = p.machine.cpu();
    let cs = *cpu.sreg(emu::SegReg::Cs);
    let eip = cpu.eip;
    let Some(bytes) = p.read_mem(cs.base.wrapping_add(eip), 15).or_else(|| {
        // An instruction near the end of a mapped page.
        let room = 0x1000 - (cs.base.wrapping_add(eip) & 0xFFF);
        p.read_mem(cs.base.wrapping_add(eip), room.min(15))
    }) else {
        return false;
    };
    let bits = if cs.big() { 32 } else { 16 };
    let mut d = Decoder::with_ip(bits, &bytes, u64::from(eip), DecoderOptions::NONE);
    let insn = d.decode();
    if insn.is_invalid() {
        return false;
    }
    let tid = p.current_tid();
    let mut regs = p.pcb.x87.get(&tid).copied().unwrap_or_default();
    let cpu = p.machine.cpu();
    let mut f = Fpu {
        regs: &mut regs,
        sw: cpu.fpu_sw,
        cw: cpu.fpu_cw,
        tags: cpu.fpu_tags,
    };
    if !is_control(insn.mnemonic()) {
        f.regs.last = pointers(p, &insn, &bytes, cs.selector, eip);
    }
    if step(p, &insn, &mut f).is_none() {
        return false;
    }
    let (sw, cw, tags) = (f.sw, f.cw, f.tags);
    p.pcb.x87.insert(tid, regs);
    let next = eip.wrapping_add(insn.len() as u32);
    let cpu = p.machine.cpu_mut_flush_tlb();
    cpu.fpu_sw = sw;
    cpu.fpu_cw = cw;
    cpu.fpu_tags = tags;
    let next = if cs.big() { next } else { next & 0xFFFF };
    p.machine.set_eip(next);
    true
}

struct Fpu<'a> {
    regs: &'a mut Regs,
    sw: u16,
    cw: u16,
    /// Abridged tags: bit `i` set when physical register `i` is in use.
    tags: u8,
}

impl Fpu<'_> {
    fn top(&self) -> usize {
        usize::from((self.sw >> 11) & 7)
    }
    fn set_top(&mut self, t: usize) {
        self.sw = (self.sw & !(7 << 11)) | (((t & 7) as u16) << 11);
    }
    fn st(&self, i: usize) -> f64 {
        self.regs.regs[(self.top() + i) & 7]
    }
    fn set_st(&mut self, i: usize, v: f64) {
        let t = self.top();
        self.regs.regs[(t + i) & 7] = v;
    }
    fn push(&mut self, v: f64) {
        let t = (self.top() + 7) & 7;
        self.set_top(t);
        self.regs.regs[t] = v;
        self.tags |= 1 << t;
    }
    fn pop(&mut self) {
        let t = self.top();
        self.tags &= !(1 << t);
        self.set_top(t + 1);
    }
    fn set_cc(&mut self, cc: u16) {
        self.sw = (self.sw & !(C0 | C1 | C2 | C3)) | cc;
    }
    /// As FNINIT after FSAVE: the control word's default, status and
    /// pointers cleared, every register empty (their values kept).
    fn init(&mut self) {
        self.cw = 0x037F;
        self.sw = 0;
        self.tags = 0;
        self.regs.last = Pointers::default();
    }
    /// The full tag word: per physical register 00 valid, 01 zero, 10
    /// special (NaN, infinity), 11 empty.
    fn tag_word(&self) -> u16 {
        (0..8).fold(0u16, |w, i| {
            let v = self.regs.regs[i];
            let t = if self.tags & (1 << i) == 0 {
                3
            } else if v == 0.0 {
                1
            } else if !v.is_finite() {
                2
            } else {
                0
            };
            w | (t << (2 * i))
        })
    }
    /// Rounds by the control word's RC field.
    fn round(&self, v: f64) -> f64 {
        match (self.cw >> 10) & 3 {
            0 => v.round_ties_even(),
            1 => v.floor(),
            2 => v.ceil(),
            _ => v.trunc(),
        }
    }
}

/// The ST index of a register operand.
fn st_index(r: Register) -> Option<usize> {
    let i = (r as u32).checked_sub(Register::ST0 as u32)?;
    (i < 8).then_some(i as usize)
}

/// The linear address of the memory operand.
fn address(p: &Process, insn: &Instruction) -> Option<u32> {
    let cpu = p.machine.cpu();
    let addr = insn.virtual_address(0, 0, |reg, _, _| {
        use emu::Gpr;
        let g = &cpu.gpr;
        let seg = |s: emu::SegReg| u64::from(cpu.sreg(s).base);
        Some(match reg {
            Register::ES => seg(emu::SegReg::Es),
            Register::CS => seg(emu::SegReg::Cs),
            Register::SS => seg(emu::SegReg::Ss),
            Register::DS => seg(emu::SegReg::Ds),
            Register::FS => seg(emu::SegReg::Fs),
            Register::GS => seg(emu::SegReg::Gs),
            Register::EAX => u64::from(g[Gpr::Eax]),
            Register::ECX => u64::from(g[Gpr::Ecx]),
            Register::EDX => u64::from(g[Gpr::Edx]),
            Register::EBX => u64::from(g[Gpr::Ebx]),
            Register::ESP => u64::from(g[Gpr::Esp]),
            Register::EBP => u64::from(g[Gpr::Ebp]),
            Register::ESI => u64::from(g[Gpr::Esi]),
            Register::EDI => u64::from(g[Gpr::Edi]),
            Register::AX => u64::from(g[Gpr::Eax] & 0xFFFF),
            Register::CX => u64::from(g[Gpr::Ecx] & 0xFFFF),
            Register::DX => u64::from(g[Gpr::Edx] & 0xFFFF),
            Register::BX => u64::from(g[Gpr::Ebx] & 0xFFFF),
            Register::SP => u64::from(g[Gpr::Esp] & 0xFFFF),
            Register::BP => u64::from(g[Gpr::Ebp] & 0xFFFF),
            Register::SI => u64::from(g[Gpr::Esi] & 0xFFFF),
            Register::DI => u64::from(g[Gpr::Edi] & 0xFFFF),
            _ => return None,
        })
    })?;
    Some(addr as u32)
}

/// FSTENV, FLDENV, FSAVE and FRSTOR: the control instructions that
/// leave the instruction and data pointers as they were.
fn is_control(m: M) -> bool {
    matches!(
        m,
        M::Fnsave | M::Fsave | M::Frstor | M::Fnstenv | M::Fstenv | M::Fldenv
    )
}

/// The pointers of instruction `insn` at `cs:eip` (`bytes` its bytes).
fn pointers(p: &Process, insn: &Instruction, bytes: &[u8], cs: u16, eip: u32) -> Pointers {
    // The opcode: the ESC byte's low 3 bits and the byte after it.
    let esc = bytes.iter().position(|b| (0xD8..=0xDF).contains(b));
    let fop = esc.map_or(0, |i| {
        (u16::from(bytes[i] & 7) << 8) | u16::from(bytes.get(i + 1).copied().unwrap_or(0))
    });
    let mut ptr = Pointers {
        fip: eip,
        fcs: cs,
        fop,
        ..p.pcb
            .x87
            .get(&p.current_tid())
            .map(|r| r.last)
            .unwrap_or_default()
    };
    let mem = (0..insn.op_count()).any(|i| insn.op_kind(i) == OpKind::Memory);
    if mem && let Some(lin) = address(p, insn) {
        let sreg = match insn.memory_segment() {
            Register::ES => emu::SegReg::Es,
            Register::CS => emu::SegReg::Cs,
            Register::SS => emu::SegReg::Ss,
            Register::FS => emu::SegReg::Fs,
            Register::GS => emu::SegReg::Gs,
            _ => emu::SegReg::Ds,
        };
        let seg = p.machine.cpu().sreg(sreg);
        ptr.fdp = lin.wrapping_sub(seg.base);
        ptr.fds = seg.selector;
    }
    ptr
}

/// FSTENV / FSAVE: the environment (14 bytes with a 16-bit operand
/// size, 28 with a 32-bit one, in the protected-mode layouts) and, for
/// FSAVE, ST(0) to ST(7) as 80-bit values after it.
fn save_state(p: &mut Process, insn: &Instruction, f: &Fpu<'_>) -> Option<()> {
    let at = address(p, insn)?;
    let (wide, regs) = match insn.memory_size() {
        MemorySize::FpuEnv14 => (false, false),
        MemorySize::FpuEnv28 => (true, false),
        MemorySize::FpuState94 => (false, true),
        MemorySize::FpuState108 => (true, true),
        _ => return None,
    };
    let l = &f.regs.last;
    let mut b = Vec::with_capacity(108);
    if wide {
        for v in [
            u32::from(f.cw),
            u32::from(f.sw),
            u32::from(f.tag_word()),
            l.fip,
            u32::from(l.fcs) | (u32::from(l.fop & 0x7FF) << 16),
            l.fdp,
            u32::from(l.fds),
        ] {
            b.extend(v.to_le_bytes());
        }
    } else {
        for v in [
            f.cw,
            f.sw,
            f.tag_word(),
            l.fip as u16,
            l.fcs,
            l.fdp as u16,
            l.fds,
        ] {
            b.extend(v.to_le_bytes());
        }
    }
    if regs {
        for i in 0..8 {
            b.extend(to_ext(f.st(i)));
        }
    }
    p.write_mem(at, &b).then_some(())
}

/// FLDENV / FRSTOR: the inverse of [`save_state`]. The tag word says
/// which registers are empty (11) and which hold a value (anything else:
/// the kind is the value's own).
fn restore_state(p: &mut Process, insn: &Instruction, f: &mut Fpu<'_>) -> Option<()> {
    let at = address(p, insn)?;
    let size = insn.memory_size();
    let (wide, regs) = match size {
        MemorySize::FpuEnv14 => (false, false),
        MemorySize::FpuEnv28 => (true, false),
        MemorySize::FpuState94 => (false, true),
        MemorySize::FpuState108 => (true, true),
        _ => return None,
    };
    let b = p.read_mem(at, size.size() as u32)?;
    let w = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
    let d = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let (env, last) = if wide {
        let sel_op = d(16);
        (
            [w(0), w(4), w(8)],
            Pointers {
                fip: d(12),
                fcs: sel_op as u16,
                fop: ((sel_op >> 16) & 0x7FF) as u16,
                fdp: d(20),
                fds: w(24),
            },
        )
    } else {
        (
            [w(0), w(2), w(4)],
            Pointers {
                fip: u32::from(w(6)),
                fcs: w(8),
                fop: 0,
                fdp: u32::from(w(10)),
                fds: w(12),
            },
        )
    };
    // Bit 6 of the control word reads as 1, as FLDCW leaves it.
    f.cw = env[0] | 0x40;
    f.sw = env[1];
    f.tags = (0..8).fold(0u8, |t, i| {
        t | if (env[2] >> (2 * i)) & 3 == 3 {
            0
        } else {
            1 << i
        }
    });
    f.regs.last = last;
    if regs {
        let base = if wide { 28 } else { 14 };
        for i in 0..8 {
            let v = from_ext(&b[base + 10 * i..base + 10 * i + 10]);
            f.set_st(i, v);
        }
    }
    Some(())
}

/// An 18-digit packed BCD integer (FBLD's operand): nine bytes of two
/// digits each, the low digit in the low nibble, then the sign in bit 7
/// of the tenth. A nibble above 9 (undefined on a real x87) counts with
/// its value.
fn from_bcd(b: &[u8]) -> f64 {
    let n = b[..9].iter().rev().fold(0u64, |n, &x| {
        n * 100 + u64::from(x >> 4) * 10 + u64::from(x & 15)
    });
    let v = n as f64;
    if b[9] & 0x80 != 0 { -v } else { v }
}

/// FBSTP's store of `v` rounded by the control word: the packed BCD
/// integer, or the BCD indefinite when it has more than 18 digits or is
/// a NaN (the invalid-operation exception being masked).
fn to_bcd(f: &Fpu<'_>, v: f64) -> [u8; 10] {
    let r = f.round(v);
    if r.is_nan() || r.abs() >= 1e18 {
        return [0, 0, 0, 0, 0, 0, 0, 0xC0, 0xFF, 0xFF];
    }
    let mut n = r.abs() as u64;
    let mut out = [0u8; 10];
    for byte in out.iter_mut().take(9) {
        let lo = (n % 10) as u8;
        n /= 10;
        let hi = (n % 10) as u8;
        n /= 10;
        *byte = (hi << 4) | lo;
    }
    if r.is_sign_negative() {
        out[9] = 0x80;
    }
    out
}

/// EFLAGS after FCOMI and its kin: ZF, PF and CF as the comparison says
/// (all three when unordered), OF, SF and AF clear.
fn comi_flags(eflags: u32, a: f64, b: f64) -> u32 {
    const CF: u32 = 0x01;
    const PF: u32 = 0x04;
    const AF: u32 = 0x10;
    const ZF: u32 = 0x40;
    const SF: u32 = 0x80;
    const OF: u32 = 0x800;
    let set = if a.is_nan() || b.is_nan() {
        ZF | PF | CF
    } else if a < b {
        CF
    } else if a > b {
        0
    } else {
        ZF
    };
    (eflags & !(CF | PF | AF | ZF | SF | OF)) | set
}

/// Does FCMOVcc `m` move, with `eflags`?
fn fcmov_taken(m: M, eflags: u32) -> Option<bool> {
    let cf = eflags & 0x01 != 0;
    let pf = eflags & 0x04 != 0;
    let zf = eflags & 0x40 != 0;
    Some(match m {
        M::Fcmovb => cf,
        M::Fcmove => zf,
        M::Fcmovbe => cf || zf,
        M::Fcmovu => pf,
        M::Fcmovnb => !cf,
        M::Fcmovne => !zf,
        M::Fcmovnbe => !cf && !zf,
        M::Fcmovnu => !pf,
        _ => return None,
    })
}

/// The memory operand as a number.
fn load(p: &mut Process, insn: &Instruction) -> Option<f64> {
    let at = address(p, insn)?;
    let size = insn.memory_size();
    let b = p.read_mem(at, size.size() as u32)?;
    Some(match size {
        MemorySize::Float32 => f64::from(f32::from_le_bytes(b[..4].try_into().ok()?)),
        MemorySize::Float64 => f64::from_le_bytes(b[..8].try_into().ok()?),
        MemorySize::Float80 => from_ext(&b),
        MemorySize::Int16 => f64::from(i16::from_le_bytes(b[..2].try_into().ok()?)),
        MemorySize::Int32 => f64::from(i32::from_le_bytes(b[..4].try_into().ok()?)),
        MemorySize::Int64 => i64::from_le_bytes(b[..8].try_into().ok()?) as f64,
        _ => return None,
    })
}

/// Stores `v` into the memory operand in its format.
fn store(p: &mut Process, insn: &Instruction, f: &Fpu<'_>, v: f64) -> Option<()> {
    let at = address(p, insn)?;
    let bytes = match insn.memory_size() {
        MemorySize::Float32 => (v as f32).to_le_bytes().to_vec(),
        MemorySize::Float64 => v.to_le_bytes().to_vec(),
        MemorySize::Float80 => to_ext(v).to_vec(),
        MemorySize::Int16 => int_of(f, v, i64::from(i16::MIN), i64::from(i16::MAX))
            .map_or(i16::MIN, |x| x as i16)
            .to_le_bytes()
            .to_vec(),
        MemorySize::Int32 => int_of(f, v, i64::from(i32::MIN), i64::from(i32::MAX))
            .map_or(i32::MIN, |x| x as i32)
            .to_le_bytes()
            .to_vec(),
        MemorySize::Int64 => int_of(f, v, i64::MIN, i64::MAX)
            .unwrap_or(i64::MIN)
            .to_le_bytes()
            .to_vec(),
        _ => return None,
    };
    p.write_mem(at, &bytes).then_some(())
}

/// `v` rounded by the control word, if it fits in [lo, hi].
fn int_of(f: &Fpu<'_>, v: f64, lo: i64, hi: i64) -> Option<i64> {
    let r = f.round(v);
    (r.is_finite() && r >= lo as f64 && r <= hi as f64).then_some(r as i64)
}

/// An 80-bit extended value as f64.
fn from_ext(b: &[u8]) -> f64 {
    let mant = u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8]));
    let se = u16::from_le_bytes([b[8], b[9]]);
    let sign = if se & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from(se & 0x7FFF);
    let integer = mant >> 63 != 0;
    // The invalid encodings of the 387 and later (pseudo-NaNs,
    // pseudo-infinities, unnormals) load as the indefinite, as with the
    // invalid-operation exception masked.
    if (exp == 0x7FFF || exp != 0) && !integer {
        return f64::from_bits(0xFFF8_0000_0000_0000);
    }
    if exp == 0x7FFF {
        if mant << 1 == 0 {
            return sign * f64::INFINITY;
        }
        // A NaN keeps its sign and the top of its payload, quiet.
        let frac = ((mant >> 11) & ((1 << 52) - 1)) | (1 << 51);
        return f64::from_bits((u64::from(se >> 15) << 63) | (0x7FF << 52) | frac);
    }
    if mant == 0 {
        return sign * 0.0;
    }
    // value = mant * 2^(exp - 16383 - 63), scaled in two steps so that a
    // result in double's subnormal range does not underflow on the way.
    let k = exp - 16383 - 63;
    sign * (mant as f64) * 2f64.powi(k / 2) * 2f64.powi(k - k / 2)
}

/// f64 as an 80-bit extended value.
fn to_ext(v: f64) -> [u8; 10] {
    let bits = v.to_bits();
    let sign = ((bits >> 63) as u16) << 15;
    let exp = ((bits >> 52) & 0x7FF) as i32;
    let frac = bits & ((1 << 52) - 1);
    let (e, m) = if exp == 0x7FF {
        (
            0x7FFF,
            if frac == 0 {
                1 << 63
            } else {
                (1 << 63) | (frac << 11)
            },
        )
    } else if exp == 0 && frac == 0 {
        (0, 0)
    } else if exp == 0 {
        // Subnormal double: normalize.
        let shift = frac.leading_zeros();
        let m = frac << shift;
        (((-1022 - (shift as i32 - 11)) + 16383) as u16 as i32, m)
    } else {
        (exp - 1023 + 16383, (1 << 63) | (frac << 11))
    };
    let mut out = [0u8; 10];
    out[..8].copy_from_slice(&m.to_le_bytes());
    out[8..].copy_from_slice(&(sign | e as u16).to_le_bytes());
    out
}

/// The condition codes of comparing `a` with `b`.
fn compare(a: f64, b: f64) -> u16 {
    if a.is_nan() || b.is_nan() {
        C0 | C2 | C3
    } else if a < b {
        C0
    } else if a > b {
        0
    } else {
        C3
    }
}

fn arith(m: M, a: f64, b: f64) -> Option<f64> {
    Some(match m {
        M::Fadd | M::Faddp | M::Fiadd => a + b,
        M::Fsub | M::Fsubp | M::Fisub => a - b,
        M::Fsubr | M::Fsubrp | M::Fisubr => b - a,
        M::Fmul | M::Fmulp | M::Fimul => a * b,
        M::Fdiv | M::Fdivp | M::Fidiv => a / b,
        M::Fdivr | M::Fdivrp | M::Fidivr => b / a,
        _ => return None,
    })
}

/// One instruction; `None` when it is not emulated.
fn step(p: &mut Process, insn: &Instruction, f: &mut Fpu<'_>) -> Option<()> {
    let m = insn.mnemonic();
    let mem = (0..insn.op_count()).any(|i| insn.op_kind(i) == OpKind::Memory);
    let reg = |i: u32| st_index(insn.op_register(i));
    match m {
        M::Fld | M::Fild => {
            let v = if mem { load(p, insn)? } else { f.st(reg(0)?) };
            f.push(v);
        }
        M::Fld1 => f.push(1.0),
        M::Fldz => f.push(0.0),
        M::Fldpi => f.push(std::f64::consts::PI),
        M::Fldl2e => f.push(std::f64::consts::LOG2_E),
        M::Fldl2t => f.push(std::f64::consts::LOG2_10),
        M::Fldlg2 => f.push(std::f64::consts::LOG10_2),
        M::Fldln2 => f.push(std::f64::consts::LN_2),
        M::Fst | M::Fstp | M::Fist | M::Fistp => {
            let v = f.st(0);
            if mem {
                store(p, insn, f, v)?;
            } else {
                f.set_st(reg(0)?, v);
            }
            if matches!(m, M::Fstp | M::Fistp) {
                f.pop();
            }
        }
        M::Fadd
        | M::Fsub
        | M::Fsubr
        | M::Fmul
        | M::Fdiv
        | M::Fdivr
        | M::Fiadd
        | M::Fisub
        | M::Fisubr
        | M::Fimul
        | M::Fidiv
        | M::Fidivr
        | M::Faddp
        | M::Fsubp
        | M::Fsubrp
        | M::Fmulp
        | M::Fdivp
        | M::Fdivrp => {
            let (dst, src) = if mem {
                (0, load(p, insn)?)
            } else if insn.op_count() == 2 {
                (reg(0)?, f.st(reg(1)?))
            } else {
                (1, f.st(0))
            };
            let v = arith(m, f.st(dst), src)?;
            f.set_st(dst, v);
            if matches!(
                m,
                M::Faddp | M::Fsubp | M::Fsubrp | M::Fmulp | M::Fdivp | M::Fdivrp
            ) {
                f.pop();
            }
        }
        M::Fcom | M::Fcomp | M::Fucom | M::Fucomp | M::Ficom | M::Ficomp => {
            let b = if mem {
                load(p, insn)?
            } else if insn.op_count() == 2 {
                f.st(reg(1)?)
            } else if insn.op_count() == 1 {
                f.st(reg(0)?)
            } else {
                f.st(1)
            };
            let cc = compare(f.st(0), b);
            f.set_cc(cc);
            if matches!(m, M::Fcomp | M::Fucomp | M::Ficomp) {
                f.pop();
            }
        }
        M::Fcompp | M::Fucompp => {
            let cc = compare(f.st(0), f.st(1));
            f.set_cc(cc);
            f.pop();
            f.pop();
        }
        M::Ftst => {
            let cc = compare(f.st(0), 0.0);
            f.set_cc(cc);
        }
        M::Fxam => {
            let v = f.st(0);
            let mut cc = if v.is_nan() {
                C0
            } else if v.is_infinite() {
                C0 | C2
            } else if v == 0.0 {
                C3
            } else if v.is_subnormal() {
                C2 | C3
            } else {
                C2
            };
            if v.is_sign_negative() {
                cc |= C1;
            }
            f.set_cc(cc);
        }
        M::Fchs => f.set_st(0, -f.st(0)),
        M::Fabs => f.set_st(0, f.st(0).abs()),
        M::Fsqrt => f.set_st(0, f.st(0).sqrt()),
        M::Frndint => f.set_st(0, f.round(f.st(0))),
        M::Fscale => {
            let s = f.st(1).trunc();
            f.set_st(0, f.st(0) * 2f64.powf(s));
        }
        M::Fprem | M::Fprem1 => {
            let (a, b) = (f.st(0), f.st(1));
            let r = if m == M::Fprem {
                a % b
            } else {
                a - b * (a / b).round_ties_even()
            };
            f.set_st(0, r);
            f.set_cc(0);
        }
        M::Fxch => {
            let i = if insn.op_count() == 2 {
                reg(1)?
            } else if insn.op_count() == 1 {
                reg(0)?
            } else {
                1
            };
            let (a, b) = (f.st(0), f.st(i));
            f.set_st(0, b);
            f.set_st(i, a);
        }
        M::Ffree | M::Ffreep => {
            let t = (f.top() + reg(0)?) & 7;
            f.tags &= !(1 << t);
            if m == M::Ffreep {
                f.pop();
            }
        }
        M::Fsin => f.set_st(0, f.st(0).sin()),
        M::Fcos => f.set_st(0, f.st(0).cos()),
        M::Fsincos => {
            let v = f.st(0);
            f.set_st(0, v.sin());
            f.push(v.cos());
        }
        M::Fptan => {
            f.set_st(0, f.st(0).tan());
            f.push(1.0);
        }
        M::Fpatan => {
            let v = f.st(1).atan2(f.st(0));
            f.set_st(1, v);
            f.pop();
        }
        M::F2xm1 => f.set_st(0, f.st(0).exp2() - 1.0),
        M::Fyl2x => {
            let v = f.st(1) * f.st(0).log2();
            f.set_st(1, v);
            f.pop();
        }
        M::Fyl2xp1 => {
            let v = f.st(1) * f.st(0).ln_1p() / std::f64::consts::LN_2;
            f.set_st(1, v);
            f.pop();
        }
        M::Fxtract => {
            let v = f.st(0);
            if v == 0.0 || !v.is_finite() {
                f.set_st(0, if v == 0.0 { f64::NEG_INFINITY } else { v.abs() });
                f.push(v);
            } else {
                let e = v.abs().log2().floor();
                let m = v / 2f64.powf(e);
                f.set_st(0, e);
                f.push(m);
            }
        }
        M::Fnsave | M::Fsave => {
            save_state(p, insn, f)?;
            f.init();
        }
        M::Fnstenv | M::Fstenv => {
            save_state(p, insn, f)?;
            // FSTENV then masks every exception.
            f.cw |= 0x3F;
        }
        M::Frstor | M::Fldenv => restore_state(p, insn, f)?,
        M::Fbld => {
            let at = address(p, insn)?;
            let b = p.read_mem(at, 10)?;
            f.push(from_bcd(&b));
        }
        M::Fbstp => {
            let at = address(p, insn)?;
            let b = to_bcd(f, f.st(0));
            if !p.write_mem(at, &b) {
                return None;
            }
            f.pop();
        }
        M::Fcomi | M::Fcomip | M::Fucomi | M::Fucomip => {
            let b = f.st(reg(1)?);
            let e = comi_flags(p.machine.cpu().eflags, f.st(0), b);
            *p.machine.eflags_mut() = e;
            // C1 cleared; C0, C2 and C3 as they were.
            f.sw &= !C1;
            if matches!(m, M::Fcomip | M::Fucomip) {
                f.pop();
            }
        }
        M::Fcmovb
        | M::Fcmove
        | M::Fcmovbe
        | M::Fcmovu
        | M::Fcmovnb
        | M::Fcmovne
        | M::Fcmovnbe
        | M::Fcmovnu => {
            if fcmov_taken(m, p.machine.cpu().eflags)? {
                let v = f.st(reg(1)?);
                f.set_st(0, v);
            }
        }
        M::Fincstp => {
            let t = f.top() + 1;
            f.set_top(t);
        }
        M::Fdecstp => {
            let t = f.top() + 7;
            f.set_top(t);
        }
        _ => return None,
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extended_round_trips() {
        for v in [
            0.0,
            -0.0,
            1.0,
            -2.5,
            1e300,
            3.0e-310,
            f64::INFINITY,
            123456789.125,
        ] {
            let e = to_ext(v);
            let back = from_ext(&e);
            assert_eq!(back.to_bits(), v.to_bits(), "{v}");
        }
        assert!(from_ext(&to_ext(f64::NAN)).is_nan());
        // 1.0 in extended: mantissa 0x8000..., exponent 0x3FFF.
        assert_eq!(to_ext(1.0), [0, 0, 0, 0, 0, 0, 0, 0x80, 0xFF, 0x3F]);
    }

    #[test]
    fn extended_special_encodings() {
        let ext = |mant: u64, se: u16| {
            let mut b = mant.to_le_bytes().to_vec();
            b.extend(se.to_le_bytes());
            from_ext(&b)
        };
        // A quiet NaN keeps its sign and payload top; a signalling one is
        // made quiet.
        let q = ext(0xC000_0000_0000_0800, 0xFFFF);
        assert_eq!(q.to_bits(), 0xFFF8_0000_0000_0001);
        let s = ext(0x8000_0000_0000_0800, 0x7FFF);
        assert_eq!(s.to_bits(), 0x7FF8_0000_0000_0001);
        assert_eq!(ext(1 << 63, 0xFFFF), f64::NEG_INFINITY);
        // Pseudo-infinity, pseudo-NaN, unnormal: the indefinite.
        for (m, se) in [(0, 0x7FFF), (1, 0x7FFF), (0x4000_0000_0000_0000, 0x3FFF)] {
            assert_eq!(ext(m, se).to_bits(), 0xFFF8_0000_0000_0000);
        }
        // A NaN stored as extended: the payload shifted, nothing added.
        assert_eq!(
            to_ext(f64::from_bits(0x7FF8_0000_0000_0001)),
            [0, 0x08, 0, 0, 0, 0, 0, 0xC0, 0xFF, 0x7F]
        );
        // An extended value a double cannot hold: rounded to nearest.
        assert_eq!(ext(0xFFFF_FFFF_FFFF_FFFF, 0x3FFF), 2.0);
    }

    #[test]
    fn bcd_and_comi() {
        let f = Fpu {
            regs: &mut Regs::default(),
            sw: 0,
            cw: 0x037F,
            tags: 0,
        };
        let b = to_bcd(&f, 99.5);
        assert_eq!(b, [0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0], "nearest even: 100");
        assert_eq!(from_bcd(&b), 100.0);
        assert_eq!(to_bcd(&f, f64::NAN)[7..], [0xC0, 0xFF, 0xFF]);
        assert_eq!(to_bcd(&f, -0.0)[9], 0x80);
        assert_eq!(comi_flags(0x8D5, 2.0, 1.0), 0);
        assert_eq!(comi_flags(0, f64::NAN, 1.0), 0x45);
    }

    #[test]
    fn stack_and_rounding() {
        let mut regs = Regs::default();
        let mut f = Fpu {
            regs: &mut regs,
            sw: 0,
            cw: 0x037F,
            tags: 0,
        };
        f.push(1.5);
        f.push(2.5);
        assert_eq!((f.st(0), f.st(1), f.top()), (2.5, 1.5, 6));
        assert_eq!(f.round(2.5), 2.0, "nearest even");
        f.cw = 0x0F7F;
        assert_eq!(f.round(-2.5), -2.0, "truncate");
        assert_eq!(
            int_of(&f, 1e20, i64::from(i32::MIN), i64::from(i32::MAX)),
            None
        );
        f.pop();
        assert_eq!(f.st(0), 1.5);
        assert_eq!(compare(1.0, 2.0), C0);
        assert_eq!(compare(2.0, 2.0), C3);
        assert_eq!(compare(f64::NAN, 2.0), C0 | C2 | C3);
    }
}
