//! The compiler's helpers: 64-bit multiply and divide (`__multi64`,
//! `__divi64`, `__divu64`: a in EDX:EAX, b low in ECX and high on the
//! stack, the result in EDX:EAX; dividing by 0 is the guest's #DE), and
//! the FPU as the runtime starts it (`_fpreset`, `_fpninit`).

use super::stack_arg;
use crate::api::{Call, Stop};
use crate::process::Process;

/// __divi64: a / b, signed (b's high dword in the fourth argument).
pub(super) fn divi64(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let a = (u64::from(c.l(1)) << 32 | u64::from(c.l(0))) as i64;
    let b = (u64::from(c.l(3)) << 32 | u64::from(c.l(2))) as i64;
    if b == 0 {
        return Err(divide_error(p));
    }
    ret64(p, a.wrapping_div(b) as u64)
}

/// __divu64: a / b, unsigned.
pub(super) fn divu64(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let a = u64::from(c.l(1)) << 32 | u64::from(c.l(0));
    let b = u64::from(stack_arg(p, 4)?) << 32 | u64::from(c.l(2));
    if b == 0 {
        return Err(divide_error(p));
    }
    ret64(p, a / b)
}

/// __multi64: a * b, the low 64 bits.
pub(super) fn multi64(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let a = u64::from(c.l(1)) << 32 | u64::from(c.l(0));
    let b = u64::from(stack_arg(p, 4)?) << 32 | u64::from(c.l(2));
    ret64(p, a.wrapping_mul(b))
}

/// Returns a 64-bit result in EDX:EAX.
fn ret64(p: &mut Process, v: u64) -> Result<u32, Stop> {
    p.machine.gpr_mut()[emu::Gpr::Edx] = (v >> 32) as u32;
    Ok(v as u32)
}

fn divide_error(p: &mut Process) -> Stop {
    let cs = p.machine.cpu().sreg(emu::SegReg::Cs).selector;
    let eip = stack_arg(p, 0).unwrap_or(0);
    Stop::Outcome(crate::error::Outcome::GuestFault {
        vector: emu::vector::DE,
        error: None,
        cs,
        eip,
        cr2: None,
    })
}

/// _fpreset/_fpninit: the FPU as VisualAge C++ starts it (FNINIT's
/// control word, every exception masked).
pub(super) fn fpreset(p: &mut Process, _c: &Call) -> Result<u32, Stop> {
    let cpu = p.machine.cpu_mut_flush_tlb();
    cpu.fpu_cw = 0x037F;
    cpu.fpu_sw = 0;
    Ok(0)
}
