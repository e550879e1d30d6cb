//! Translation of a selected block into x86-64 host code with iced-x86's
//! `CodeAssembler`.
//!
//! Guest registers live in host registers for the whole block (EAX→EAX,
//! ECX→R9D, EDX→EDX, EBX→EBX, ESP→R8D, EBP→EBP, ESI→ESI, EDI→EDI, with
//! their 16- and 8-bit parts; guest CH has none, and CL = R9B needs a REX
//! prefix, which excludes AH/DH/BH from the same instruction); R11
//! holds the [`State`](super::native::State) pointer and RCX the pass
//! budget. Each guest op becomes the same host op, so the host's
//! arithmetic flags are the guest's: they stay live in RFLAGS from the
//! entry to the PUSHFQ at exit, and everything else the block does (loads,
//! stores, the budget count with LEA and JRCXZ, its branches) leaves them
//! alone. A block that reads a flag before writing it starts with a POPFQ
//! of the guest's flags; otherwise the caller takes from the exit image
//! only the flags the block wrote.
//!
//! Layout: prologue, body, the final branch, then one exit stub per way
//! out, each writing the exit kind and the guest EIP before the shared
//! epilogue. A block whose branch targets its own start loops back to the
//! body while the budget lasts.

use super::native::{Emitted, OFF_BUDGET, OFF_EIP, OFF_EXIT, OFF_FLAGS, OFF_GPR};
use super::select::{End, Op, Plan, Reg, Src};
use iced_x86::code_asm::asm_traits::*;
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
/// The same as 64-bit registers (for addresses).
const GUEST64: [AsmRegister64; 8] = [rax, r9, rdx, rbx, r8, rbp, rsi, rdi];
/// Their 16-bit parts.
const GUEST16: [AsmRegister16; 8] = [ax, r9w, dx, bx, r8w, bp, si, di];
/// AL, CL, DL, BL.
const GUEST_LO8: [AsmRegister8; 4] = [al, r9b, dl, bl];
/// AH, CH (none: refused), DH, BH.
const GUEST_HI8: [Option<AsmRegister8>; 4] = [Some(ah), None, Some(dh), Some(bh)];

/// A guest register operand as the host sees it.
#[derive(Clone, Copy)]
enum Host {
    R32(AsmRegister32),
    R16(AsmRegister16),
    R8(AsmRegister8),
}

fn host(r: Reg) -> Result<Host, EmitError> {
    Ok(match r {
        Reg::R32(n) => Host::R32(GUEST[usize::from(n)]),
        Reg::R16(n) => Host::R16(GUEST16[usize::from(n)]),
        Reg::Lo8(n) => Host::R8(GUEST_LO8[usize::from(n)]),
        Reg::Hi8(n) => Host::R8(GUEST_HI8[usize::from(n)].ok_or(EmitError::NoHostRegister)?),
    })
}

/// Why a block could not be assembled (selection prevents all three).
#[derive(Debug, thiserror::Error)]
pub(crate) enum EmitError {
    /// The assembler refused an instruction.
    #[error("assembler: {0}")]
    Asm(#[from] IcedError),
    /// A two-operand op with operands of different sizes.
    #[error("operand sizes differ")]
    Sizes,
    /// Guest CH, which has no host register here.
    #[error("no host register for CH")]
    NoHostRegister,
}

/// Host code for `plan`.
pub(crate) fn emit(plan: &Plan) -> Result<Emitted, EmitError> {
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
    if plan.load_flags {
        a.push(qword_ptr(r11 + OFF_FLAGS))?;
        a.popfq()?;
    }

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

fn emit_op(a: &mut CodeAssembler, op: &Op) -> Result<(), EmitError> {
    let r = match *op {
        Op::Bin { m, dst, src } => match (host(dst)?, src) {
            (Host::R32(d), Src::Reg(s)) => match host(s)? {
                Host::R32(s) => bin(a, m, d, s),
                _ => return Err(EmitError::Sizes),
            },
            (Host::R16(d), Src::Reg(s)) => match host(s)? {
                Host::R16(s) => bin(a, m, d, s),
                _ => return Err(EmitError::Sizes),
            },
            (Host::R8(d), Src::Reg(s)) => match host(s)? {
                Host::R8(s) => bin(a, m, d, s),
                _ => return Err(EmitError::Sizes),
            },
            (Host::R32(d), Src::Imm(v)) => bin(a, m, d, v as i32),
            (Host::R16(d), Src::Imm(v)) => bin(a, m, d, i32::from(v as u16 as i16)),
            (Host::R8(d), Src::Imm(v)) => bin(a, m, d, i32::from(v as u8 as i8)),
        },
        Op::Unary { m, dst } => match host(dst)? {
            Host::R32(d) => unary(a, m, d),
            Host::R16(d) => unary(a, m, d),
            Host::R8(d) => unary(a, m, d),
        },
        Op::Lea {
            dst,
            base,
            index,
            scale,
            disp,
        } => {
            // The sum in 64 bits, truncated by the 32-bit destination, is
            // the guest's 32-bit wrapping sum.
            let d = GUEST[usize::from(dst)];
            let disp = disp as i32;
            let b = base.map(|r| GUEST64[usize::from(r)]);
            let i = index.map(|r| GUEST64[usize::from(r)] * u32::from(scale));
            match (b, i) {
                (None, None) => a.mov(d, disp),
                (Some(b), None) => a.lea(d, qword_ptr(b + disp)),
                (None, Some(i)) => a.lea(d, qword_ptr(i + disp)),
                (Some(b), Some(i)) => a.lea(d, qword_ptr(b + i + disp)),
            }
        }
    };
    Ok(r?)
}

/// MOV or a two-operand ALU op on host operands of one size.
fn bin<D, S>(a: &mut CodeAssembler, m: M, d: D, s: S) -> Result<(), IcedError>
where
    CodeAssembler: CodeAsmMov<D, S>
        + CodeAsmAdd<D, S>
        + CodeAsmAdc<D, S>
        + CodeAsmSub<D, S>
        + CodeAsmSbb<D, S>
        + CodeAsmAnd<D, S>
        + CodeAsmOr<D, S>
        + CodeAsmXor<D, S>
        + CodeAsmCmp<D, S>
        + CodeAsmTest<D, S>,
{
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

/// INC, DEC, NEG or NOT on a host register.
fn unary<D>(a: &mut CodeAssembler, m: M, d: D) -> Result<(), IcedError>
where
    CodeAssembler: CodeAsmInc<D> + CodeAsmDec<D> + CodeAsmNeg<D> + CodeAsmNot<D>,
{
    match m {
        M::Inc => a.inc(d),
        M::Dec => a.dec(d),
        M::Neg => a.neg(d),
        _ => a.not(d),
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
