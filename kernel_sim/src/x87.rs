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
//! - Not emulated (still #UD): FBLD/FBSTP, FSAVE/FRSTOR/FSTENV/FLDENV and
//!   the P6 FCOMI family.

use iced_x86::{Decoder, DecoderOptions, Instruction, MemorySize, Mnemonic as M, OpKind, Register};

use crate::process::Process;

/// One thread's registers (physical order; ST(i) is `regs[(top + i) & 7]`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Regs {
    regs: [f64; 8],
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
    let mut sw = p.machine.cpu().fpu_sw;
    let cw = p.machine.cpu().fpu_cw;
    let mut f = Fpu {
        regs: &mut regs,
        sw: &mut sw,
        cw,
    };
    if step(p, &insn, &mut f).is_none() {
        return false;
    }
    p.pcb.x87.insert(tid, regs);
    let next = eip.wrapping_add(insn.len() as u32);
    let cpu = p.machine.cpu_mut_flush_tlb();
    cpu.fpu_sw = sw;
    let next = if cs.big() { next } else { next & 0xFFFF };
    p.machine.set_eip(next);
    true
}

struct Fpu<'a> {
    regs: &'a mut Regs,
    sw: &'a mut u16,
    cw: u16,
}

impl Fpu<'_> {
    fn top(&self) -> usize {
        usize::from((*self.sw >> 11) & 7)
    }
    fn set_top(&mut self, t: usize) {
        *self.sw = (*self.sw & !(7 << 11)) | (((t & 7) as u16) << 11);
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
    }
    fn pop(&mut self) {
        let t = self.top() + 1;
        self.set_top(t);
    }
    fn set_cc(&mut self, cc: u16) {
        *self.sw = (*self.sw & !(C0 | C1 | C2 | C3)) | cc;
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
    if exp == 0x7FFF {
        return if mant << 1 == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
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
                (1 << 63) | (frac << 11) | 1
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
    fn stack_and_rounding() {
        let mut regs = Regs::default();
        let mut sw = 0u16;
        let mut f = Fpu {
            regs: &mut regs,
            sw: &mut sw,
            cw: 0x037F,
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
