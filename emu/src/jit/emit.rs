//! Translation of a selected block into x86-64 host code with iced-x86's
//! `CodeAssembler`.
//!
//! Guest registers live in host registers for the whole block (EAX→EAX,
//! ECX→R9D, EDX→EDX, EBX→EBX, ESP→R8D, EBP→EBP, ESI→ESI, EDI→EDI); R11
//! holds the [`State`](super::native::State) pointer and RCX the pass
//! budget. Each guest op becomes the same 32-bit host op, so the host's
//! arithmetic flags are the guest's: they stay live in RFLAGS from the
//! POPFQ at entry (which loads the guest's) to the PUSHFQ at exit, and
//! everything else the block does (loads, stores, the budget count with LEA
//! and JRCXZ, its branches) leaves them alone.
//!
//! Layout: prologue, body, the final branch, then one exit stub per way
//! out, each writing the exit kind and the guest EIP before the shared
//! epilogue. A block whose branch targets its own start loops back to the
//! body while the budget lasts.

use super::native::{Emitted, OFF_BUDGET, OFF_EIP, OFF_EXIT, OFF_FLAGS, OFF_GPR};
use super::select::{End, Op, Plan, Src};
use iced_x86::code_asm::*;
use iced_x86::{ConditionCode, IcedError, Mnemonic as M};

/// The block looped back until its budget ran out (EIP = its start).
pub(crate) const EXIT_BUDGET: u32 = 0;
/// The final branch was taken to another address.
pub(crate) const EXIT_TAKEN: u32 = 1;
/// The final Jcc was not taken, or the block has no branch.
pub(crate) const EXIT_NEXT: u32 = 2;

/// The host register of each guest register.
const GUEST: [AsmRegister32; 8] = [eax, r9d, edx, ebx, r8d, ebp, esi, edi];

/// Host code for `plan`.
pub(crate) fn emit(plan: &Plan) -> Result<Emitted, IcedError> {
    let mut a = CodeAssembler::new(64)?;
    let mut top = a.create_label();
    let mut epilogue = a.create_label();
    let mut exhausted = a.create_label();
    let mut next = a.create_label();
    let mut taken = a.create_label();

    a.push(rbx)?;
    a.push(rbp)?;
    a.mov(r11, rdi)?;
    for (i, r) in GUEST.iter().enumerate() {
        a.mov(*r, dword_ptr(r11 + (OFF_GPR + 4 * i as i32)))?;
    }
    a.mov(rcx, qword_ptr(r11 + OFF_BUDGET))?;
    a.push(qword_ptr(r11 + OFF_FLAGS))?;
    a.popfq()?;

    a.set_label(&mut top)?;
    for op in &plan.ops {
        emit_op(&mut a, op)?;
    }
    let self_loop = plan.self_loop();
    match plan.end {
        End::Fall => a.jmp(next)?,
        End::Jcc { cc, .. } if self_loop => {
            jcc(&mut a, negate(cc), next)?;
            loop_back(&mut a, top, exhausted)?;
        }
        End::Jcc { cc, .. } => {
            jcc(&mut a, cc, taken)?;
            a.jmp(next)?;
        }
        End::Jmp { .. } if self_loop => loop_back(&mut a, top, exhausted)?,
        End::Jmp { .. } => a.jmp(taken)?,
    }
    // Exit stubs (a stub with no way in is harmless).
    a.set_label(&mut exhausted)?;
    exit(&mut a, EXIT_BUDGET, plan.start_eip, epilogue)?;
    a.set_label(&mut taken)?;
    exit(
        &mut a,
        EXIT_TAKEN,
        plan.target().unwrap_or(plan.next_eip),
        epilogue,
    )?;
    a.set_label(&mut next)?;
    exit(&mut a, EXIT_NEXT, plan.next_eip, epilogue)?;

    a.set_label(&mut epilogue)?;
    for (i, r) in GUEST.iter().enumerate() {
        a.mov(dword_ptr(r11 + (OFF_GPR + 4 * i as i32)), *r)?;
    }
    a.mov(qword_ptr(r11 + OFF_BUDGET), rcx)?;
    a.pushfq()?;
    a.pop(qword_ptr(r11 + OFF_FLAGS))?;
    a.pop(rbp)?;
    a.pop(rbx)?;
    a.ret()?;
    Ok(Emitted::from_emitter(a.assemble(0)?))
}

/// Count one pass and go round again, or leave through `exhausted` when
/// the budget is spent (flags untouched).
fn loop_back(a: &mut CodeAssembler, top: CodeLabel, exhausted: CodeLabel) -> Result<(), IcedError> {
    a.lea(rcx, qword_ptr(rcx - 1))?;
    a.jrcxz(exhausted)?;
    a.jmp(top)
}

fn exit(a: &mut CodeAssembler, kind: u32, eip: u32, epilogue: CodeLabel) -> Result<(), IcedError> {
    a.mov(dword_ptr(r11 + OFF_EXIT), kind)?;
    a.mov(dword_ptr(r11 + OFF_EIP), eip)?;
    a.jmp(epilogue)
}

fn emit_op(a: &mut CodeAssembler, op: &Op) -> Result<(), IcedError> {
    match *op {
        Op::Bin { m, dst, src } => {
            let d = GUEST[usize::from(dst)];
            match src {
                Src::Reg(s) => {
                    let s = GUEST[usize::from(s)];
                    match m {
                        M::Mov => a.mov(d, s),
                        M::Add => a.add(d, s),
                        M::Adc => a.adc(d, s),
                        M::Sub => a.sub(d, s),
                        M::Sbb => a.sbb(d, s),
                        M::And => a.and(d, s),
                        M::Or => a.or(d, s),
                        M::Xor => a.xor(d, s),
                        M::Cmp => a.cmp(d, s),
                        _ => a.test(d, s),
                    }
                }
                Src::Imm(v) => {
                    let v = v as i32;
                    match m {
                        M::Mov => a.mov(d, v),
                        M::Add => a.add(d, v),
                        M::Adc => a.adc(d, v),
                        M::Sub => a.sub(d, v),
                        M::Sbb => a.sbb(d, v),
                        M::And => a.and(d, v),
                        M::Or => a.or(d, v),
                        M::Xor => a.xor(d, v),
                        M::Cmp => a.cmp(d, v),
                        _ => a.test(d, v),
                    }
                }
            }
        }
        Op::Unary { m, dst } => {
            let d = GUEST[usize::from(dst)];
            match m {
                M::Inc => a.inc(d),
                M::Dec => a.dec(d),
                M::Neg => a.neg(d),
                _ => a.not(d),
            }
        }
    }
}

/// The opposite condition.
fn negate(cc: ConditionCode) -> ConditionCode {
    use ConditionCode as C;
    match cc {
        C::o => C::no,
        C::no => C::o,
        C::b => C::ae,
        C::ae => C::b,
        C::e => C::ne,
        C::ne => C::e,
        C::be => C::a,
        C::a => C::be,
        C::s => C::ns,
        C::ns => C::s,
        C::p => C::np,
        C::np => C::p,
        C::l => C::ge,
        C::ge => C::l,
        C::le => C::g,
        C::g => C::le,
        C::None => C::None,
    }
}

/// Jcc to `l` (`None` never jumps; selection never produces it).
fn jcc(a: &mut CodeAssembler, cc: ConditionCode, l: CodeLabel) -> Result<(), IcedError> {
    use ConditionCode as C;
    match cc {
        C::o => a.jo(l),
        C::no => a.jno(l),
        C::b => a.jb(l),
        C::ae => a.jae(l),
        C::e => a.je(l),
        C::ne => a.jne(l),
        C::be => a.jbe(l),
        C::a => a.ja(l),
        C::s => a.js(l),
        C::ns => a.jns(l),
        C::p => a.jp(l),
        C::np => a.jnp(l),
        C::l => a.jl(l),
        C::ge => a.jge(l),
        C::le => a.jle(l),
        C::g => a.jg(l),
        C::None => Ok(()),
    }
}
