//! Translation of a selected block into x86-64 host code, written with
//! [`asm`](super::asm).
//!
//! Guest registers live in host registers for the whole block (EAX→EAX,
//! ECX→R9D, EDX→EDX, EBX→EBX, ESP→R8D, EBP→EBP, ESI→ESI, EDI→EDI, with
//! their 16- and 8-bit parts; guest CH has none, and CL = R9B needs a REX
//! prefix, which excludes AH/DH/BH from the same instruction, and from any
//! memory operand, addressed with REX registers); R11 holds the
//! [`State`](super::native::State) pointer, RCX the pass budget, R13 the
//! guest RAM, R14 a guest address being checked, R15 saved flags; R10 and
//! R12 are scratch. Each guest op becomes the same host op, so the host's
//! arithmetic flags are the guest's: they stay live in RFLAGS from the
//! entry to the PUSHFQ at exit, and the block's own work (the budget count
//! with LEA and JRCXZ, its branches) leaves them alone. A block that reads
//! a flag before writing it starts with a POPFQ of the guest's flags;
//! otherwise the caller takes from the exit image only the flags the block
//! wrote.
//!
//! A memory operand is checked before its op, as the interpreter's access
//! would be: the offset against the segment's read or write range
//! ([`SegCheck`](super::native::SegCheck), which has the limit,
//! expand-down and type rules), no page crossing, then with paging off the
//! RAM bound, with paging on a hit in the TLB's native entry with the
//! right the access needs at the CPL (so no walk, no A/D write, no fault
//! can be due), and for a store a physical page not marked as code. The
//! checks clobber the flags, so the guest's are saved first (PUSHFQ into
//! R15) where they are live, and restored (POPFQ) after unless the op
//! overwrites them all or nothing reads them before they are overwritten.
//! Any failed check leaves the block just before the op through its side
//! exit, with the guest's flags and everything else as the interpreter
//! has them there; the interpreter then runs the op, fault or not.
//!
//! Layout: prologue, body, the final branch, then one exit stub per way
//! out, each writing the exit kind and the guest EIP before the shared
//! epilogue. A block whose branch targets its own start loops back to the
//! body while the budget lasts.

use super::asm::regs::*;
use super::asm::{Asm, AsmError, Gp, Label, MemOp, Opnd, byte_ptr, dword_ptr, qword_ptr, word_ptr};
use super::native::{
    DE_CHECK, DE_FRAME, DE_KINDS, DE_LIMIT, DE_SHIFT, DE_TAG, DE_TLB_OFF, DE_TLB_TAG, DK_CODE,
    DK_DATA, DK_NO_READ, DK_RET, DK_STACK, Emitted, NE_PHYS, NE_RIGHTS, NE_TAG, OFF_BUDGET,
    OFF_CODE, OFF_CS_LIMIT, OFF_DCACHE, OFF_DTAG, OFF_EIP, OFF_EXIT, OFF_FAR_SEL, OFF_FAST,
    OFF_FLAGS, OFF_GPR, OFF_INDEX, OFF_LOADED, OFF_PAGING, OFF_RAM, OFF_RMASK, OFF_SCRATCH,
    OFF_SEGS, OFF_SEL, OFF_TLB, OFF_WMASK, SEG_BASE, SEG_RHI, SEG_RLO, SEG_SIZE, SEG_WHI, SEG_WLO,
};
use super::select::{End, Far, IndSrc, LoopKind, Mem, Op, Plan, Reg, SelSrc, Src, Str, StrKind};
use crate::cpu::SegReg;
use crate::cpu::flags::AF;
use crate::paging::RIGHT_SUP_READ;
use iced_x86::{ConditionCode, Mnemonic as M};

/// The block looped back until its budget ran out (EIP = its start).
pub(crate) const EXIT_BUDGET: u32 = 0;
/// The final branch was taken to another address.
pub(crate) const EXIT_TAKEN: u32 = 1;
/// The final Jcc was not taken, the block has no branch, or it ended with
/// CALL or RET (whose EIP the exit has).
pub(crate) const EXIT_NEXT: u32 = 2;
/// A memory operand's check failed: the block left just before op
/// `State::index` of the pass.
pub(crate) const EXIT_SIDE: u32 = 3;
/// The block ran its ops and left just before its final REP string op.
pub(crate) const EXIT_REP: u32 = 4;
/// The block ended with a far transfer to `State::far_sel`:`State::eip`.
pub(crate) const EXIT_FAR: u32 = 5;

/// The host register of each guest register.
const GUEST: [Gp; 8] = [eax, r9d, edx, ebx, r8d, ebp, esi, edi];
/// The same as 64-bit registers (for addresses).
const GUEST64: [Gp; 8] = [rax, r9, rdx, rbx, r8, rbp, rsi, rdi];
/// Their 16-bit parts.
const GUEST16: [Gp; 8] = [ax, r9w, dx, bx, r8w, bp, si, di];
/// AL, CL, DL, BL.
const GUEST_LO8: [Gp; 4] = [al, r9b, dl, bl];
/// AH, CH (none: refused), DH, BH.
const GUEST_HI8: [Option<Gp>; 4] = [Some(ah), None, Some(dh), Some(bh)];

/// A guest register operand as the host sees it.
#[derive(Clone, Copy)]
enum Host {
    R32(Gp),
    R16(Gp),
    R8(Gp),
}

fn host(r: Reg) -> Result<Host, EmitError> {
    Ok(match r {
        Reg::R32(n) => Host::R32(GUEST[usize::from(n)]),
        Reg::R16(n) => Host::R16(GUEST16[usize::from(n)]),
        Reg::Lo8(n) => Host::R8(GUEST_LO8[usize::from(n)]),
        Reg::Hi8(n) => Host::R8(GUEST_HI8[usize::from(n)].ok_or(EmitError::NoHostRegister)?),
    })
}

/// Why a block could not be assembled (selection prevents all of them).
#[derive(Debug, thiserror::Error)]
pub(crate) enum EmitError {
    /// The assembler refused an instruction.
    #[error("assembler: {0}")]
    Asm(#[from] AsmError),
    /// A two-operand op with operands of different sizes.
    #[error("operand sizes differ")]
    Sizes,
    /// Guest CH, which has no host register here.
    #[error("no host register for CH")]
    NoHostRegister,
}

/// Host code for `plan`.
pub(crate) fn emit(plan: &Plan) -> Result<Emitted, EmitError> {
    Ok(Emitted::from_emitter(instructions(plan)?.finish()?))
}

/// The host instructions for `plan`, branches to labels not yet encoded.
pub(crate) fn instructions(plan: &Plan) -> Result<Asm, EmitError> {
    let mut a = Asm::default();
    let mut top = a.create_label();
    let mut epilogue = a.create_label();
    let mut epilogue_regs = a.create_label();
    let mut exhausted = a.create_label();
    let mut next = a.create_label();
    let mut taken = a.create_label();

    // R12..R15 serve memory operands and, R12, the shifts' flag fix-up
    // (`blocks_save_every_callee_saved_register_they_write` checks that
    // every callee-saved register a block writes is saved here).
    let scratch = plan.mem || plan.ops.iter().any(|op| matches!(op, Op::Shift { .. }));
    let saved = if scratch { &SAVED[..] } else { &SAVED[..2] };
    for r in saved {
        a.push(*r)?;
    }
    a.mov(r11, rdi)?;
    for (i, r) in GUEST.iter().enumerate() {
        a.mov(*r, dword_ptr(r11 + (OFF_GPR + 4 * i as i32)))?;
    }
    a.mov(rcx, qword_ptr(r11 + OFF_BUDGET))?;
    if plan.mem {
        a.mov(r13, qword_ptr(r11 + OFF_RAM))?;
    }
    if plan.load_flags {
        a.push(qword_ptr(r11 + OFF_FLAGS))?;
        a.popfq()?;
    }

    a.set_label(&mut top)?;
    let mut sides = Vec::new();
    // The flags before op `i` are the guest's (where the caller takes
    // them) if the block loaded them or wrote some, in this pass or,
    // looping, in the last; checks must save them first.
    let save_at = |i: usize| {
        plan.load_flags || plan.side[i].written != 0 || (plan.self_loop() && plan.written != 0)
    };
    for (i, op) in plan.ops.iter().enumerate() {
        if let Op::LoadSeg { seg, src } = *op {
            let save = save_at(i);
            let restore = save && flags_live_after(plan, i);
            let side = a.create_label();
            load_seg(&mut a, (seg, plan.real), src, side, (save, restore))?;
            sides.push((i, side, save));
            continue;
        }
        if let Op::LoadFar { seg, dst, mem } = *op {
            let save = save_at(i);
            let restore = save && flags_live_after(plan, i);
            let side = a.create_label();
            load_far(&mut a, (seg, dst, mem, plan.real), side, (save, restore))?;
            sides.push((i, side, save));
            continue;
        }
        match op.mem() {
            None => emit_op(&mut a, op, None)?,
            Some((mem, write)) => {
                let save = save_at(i);
                let restore = save
                    && (reads_flags(op) || (!overwrites_flags(op) && flags_live_after(plan, i)));
                let side = a.create_label();
                if save {
                    a.pushfq()?;
                    a.pop(r15)?;
                }
                if let Op::Str(Str {
                    kind: StrKind::Movs,
                    src,
                    ..
                })
                | Op::PushMem { mem: src, .. } = *op
                {
                    // The source first, as the interpreter reads it; the
                    // element waits in the State while the destination is
                    // checked.
                    check(&mut a, src, false, side)?;
                    match src.size {
                        4 => a.mov(r12d, dword_ptr(r13 + r14))?,
                        2 => a.movzx(r12d, word_ptr(r13 + r14))?,
                        _ => a.movzx(r12d, byte_ptr(r13 + r14))?,
                    }
                    a.mov(dword_ptr(r11 + OFF_SCRATCH), r12d)?;
                }
                check(&mut a, mem, write, side)?;
                if restore {
                    a.push(r15)?;
                    a.popfq()?;
                }
                emit_op(&mut a, op, Some(mem))?;
                sides.push((i, side, save));
            }
        }
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
        End::Loop { kind, .. } => {
            let mut back = a.create_label();
            loop_end(
                &mut a,
                kind,
                plan.code32,
                (if self_loop { back } else { taken }, next),
            )?;
            if self_loop {
                a.set_label(&mut back)?;
                loop_back(&mut a, top, exhausted)?;
            }
        }
        End::Jmp { .. } if self_loop => loop_back(&mut a, top, exhausted)?,
        End::Jmp { .. } => a.jmp(taken)?,
        End::Call { stack, .. } | End::Ret { stack, .. } => {
            // The branch's stack access, then an exit at the target with
            // the cost of a pass (neither adds the taken-branch cycles).
            let i = plan.ops.len();
            let save = save_at(i);
            let side = a.create_label();
            if save {
                a.pushfq()?;
                a.pop(r15)?;
            }
            let call = matches!(plan.end, End::Call { .. });
            check(&mut a, stack, call, side)?;
            let at = if stack.size == 4 {
                dword_ptr(r13 + r14)
            } else {
                word_ptr(r13 + r14)
            };
            if call {
                let ret = if stack.size == 4 {
                    plan.next_eip as i32
                } else {
                    i32::from(plan.next_eip as u16 as i16)
                };
                a.mov(at, ret)?;
                move_sp(&mut a, stack, -i32::from(stack.size))?;
                a.mov(dword_ptr(r11 + OFF_EIP), plan.target().unwrap_or(0))?;
            } else {
                if stack.size == 4 {
                    a.mov(r12d, at)?;
                } else {
                    a.movzx(r12d, at)?;
                }
                // A target past the CS limit is the interpreter's #GP.
                a.cmp(r12d, dword_ptr(r11 + OFF_CS_LIMIT))?;
                a.ja(side)?;
                let imm = match plan.end {
                    End::Ret { imm, .. } => i32::from(imm),
                    _ => 0,
                };
                move_sp(&mut a, stack, i32::from(stack.size) + imm)?;
                a.mov(dword_ptr(r11 + OFF_EIP), r12d)?;
            }
            if save {
                a.push(r15)?;
                a.popfq()?;
            }
            a.mov(dword_ptr(r11 + OFF_EXIT), EXIT_NEXT)?;
            a.jmp(epilogue)?;
            sides.push((i, side, save));
        }
        End::Ind { src, call } => {
            // The target (past the CS limit: the interpreter's #GP), kept
            // in the State while the CALL's stack slot is checked, then
            // an exit at it with the cost of a pass.
            let i = plan.ops.len();
            let save = save_at(i);
            let side = a.create_label();
            if save {
                a.pushfq()?;
                a.pop(r15)?;
            }
            let wide = plan.code32;
            match src {
                IndSrc::Reg(r) if wide => a.mov(r12d, GUEST[usize::from(r)])?,
                IndSrc::Reg(r) => a.movzx(r12d, GUEST16[usize::from(r)])?,
                IndSrc::Mem(mem) => {
                    check(&mut a, mem, false, side)?;
                    if wide {
                        a.mov(r12d, dword_ptr(r13 + r14))?;
                    } else {
                        a.movzx(r12d, word_ptr(r13 + r14))?;
                    }
                }
            }
            a.cmp(r12d, dword_ptr(r11 + OFF_CS_LIMIT))?;
            a.ja(side)?;
            if let Some(stack) = call {
                a.mov(dword_ptr(r11 + OFF_SCRATCH), r12d)?;
                check(&mut a, stack, true, side)?;
                if stack.size == 4 {
                    a.mov(dword_ptr(r13 + r14), plan.next_eip as i32)?;
                } else {
                    a.mov(word_ptr(r13 + r14), i32::from(plan.next_eip as u16 as i16))?;
                }
                move_sp(&mut a, stack, -i32::from(stack.size))?;
                a.mov(r12d, dword_ptr(r11 + OFF_SCRATCH))?;
            }
            a.mov(dword_ptr(r11 + OFF_EIP), r12d)?;
            if save {
                a.push(r15)?;
                a.popfq()?;
            }
            a.mov(dword_ptr(r11 + OFF_EXIT), EXIT_NEXT)?;
            a.jmp(epilogue)?;
            sides.push((i, side, save));
        }
        End::Rep(_) => {
            let eip = plan.side[plan.ops.len()].eip;
            exit(&mut a, EXIT_REP, eip, epilogue)?;
        }
        End::LoadSs(op) => {
            // The load, then the exit after it (EIP = the next one).
            let i = plan.ops.len();
            let save = save_at(i);
            let side = a.create_label();
            match op {
                Op::LoadSeg { seg, src } => {
                    load_seg(&mut a, (seg, plan.real), src, side, (save, save))?
                }
                Op::LoadFar { seg, dst, mem } => {
                    load_far(&mut a, (seg, dst, mem, plan.real), side, (save, save))?
                }
                _ => return Err(EmitError::Sizes),
            }
            a.jmp(next)?;
            sides.push((i, side, save));
        }
        End::Far(far) => {
            let i = plan.ops.len();
            let save = save_at(i);
            let side = a.create_label();
            let how = (plan.next_eip, plan.real);
            far_transfer(&mut a, far, how, side, save, epilogue)?;
            sides.push((i, side, save));
        }
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
    for (i, mut side, save) in sides {
        a.set_label(&mut side)?;
        if save {
            a.mov(qword_ptr(r11 + OFF_FLAGS), r15)?;
        }
        a.mov(dword_ptr(r11 + OFF_INDEX), i as u32)?;
        exit(&mut a, EXIT_SIDE, plan.side[i].eip, epilogue_regs)?;
    }

    a.set_label(&mut epilogue)?;
    a.pushfq()?;
    a.pop(qword_ptr(r11 + OFF_FLAGS))?;
    a.set_label(&mut epilogue_regs)?;
    for (i, r) in GUEST.iter().enumerate() {
        a.mov(dword_ptr(r11 + (OFF_GPR + 4 * i as i32)), *r)?;
    }
    a.mov(qword_ptr(r11 + OFF_BUDGET), rcx)?;
    for r in saved.iter().rev() {
        a.pop(*r)?;
    }
    a.ret()?;
    Ok(a)
}

/// Callee-saved host registers the block uses, pushed in this order.
const SAVED: [Gp; 6] = [rbx, rbp, r12, r13, r14, r15];

/// Does `op` set all six status flags without reading any?
fn overwrites_flags(op: &Op) -> bool {
    matches!(
        op,
        Op::Bin { m, .. } | Op::Load { m, .. } | Op::Store { m, .. } | Op::UnaryMem { m, .. }
            if matches!(m, M::Add | M::Sub | M::And | M::Or | M::Xor | M::Cmp | M::Test | M::Neg)
    )
}

/// Does `op` read a status flag (CF)?
fn reads_flags(op: &Op) -> bool {
    matches!(
        op,
        Op::Bin { m, .. } | Op::Load { m, .. } | Op::Store { m, .. }
            if matches!(m, M::Adc | M::Sbb)
    )
}

/// Are the flags after op `i` read before all of them are overwritten: by
/// an op that reads one, by a later memory op (whose side exit reports
/// them), or by the block's end?
fn flags_live_after(plan: &Plan, i: usize) -> bool {
    for op in &plan.ops[i + 1..] {
        if reads_flags(op) || op.mem().is_some() || matches!(op, Op::LoadSeg { .. }) {
            return true;
        }
        if overwrites_flags(op) {
            return false;
        }
    }
    true
}

/// Check the access to `mem` and leave its host address's offset from R13
/// in R14, or jump to `side`. Clobbers RCX, R10 and the flags.
fn check(a: &mut Asm, mem: Mem, write: bool, side: Label) -> Result<(), AsmError> {
    check_plus(a, mem, 0, write, side)
}

/// [`check`] of the access `extra` bytes past `mem`'s offset, added after
/// the 16-bit wrap of 16-bit addressing (as the interpreter reads the
/// selector word of a far pointer, at `ea + n`, unwrapped).
fn check_plus(a: &mut Asm, mem: Mem, extra: u32, write: bool, side: Label) -> Result<(), AsmError> {
    let mut paged = a.create_label();
    let mut done = a.create_label();
    let n = u32::from(mem.size);
    // The offset.
    let disp = mem.disp as i32;
    let b = mem.base.map(|r| GUEST64[usize::from(r)]);
    let i = mem
        .index
        .map(|r| GUEST64[usize::from(r)] * u32::from(mem.scale));
    match (b, i) {
        (None, None) => a.mov(r14d, mem.disp)?,
        (Some(b), None) => a.lea(r14d, qword_ptr(b + disp))?,
        (None, Some(i)) => a.lea(r14d, qword_ptr(i + disp))?,
        (Some(b), Some(i)) => a.lea(r14d, qword_ptr(b + i + disp))?,
    }
    if !mem.addr32 {
        a.movzx(r14d, r14w)?;
    }
    if extra != 0 {
        a.lea(r14d, qword_ptr(r14 + extra as i32))?;
    }
    // The segment: lo <= offset and offset + n - 1 <= hi (in 64 bits).
    let seg = OFF_SEGS + SEG_SIZE * mem.seg as i32;
    let (lo, hi) = if write {
        (SEG_WLO, SEG_WHI)
    } else {
        (SEG_RLO, SEG_RHI)
    };
    a.cmp(r14d, dword_ptr(r11 + (seg + lo)))?;
    a.jb(side)?;
    a.lea(r12, qword_ptr(r14 + (n as i32 - 1)))?;
    a.mov(r10d, dword_ptr(r11 + (seg + hi)))?;
    a.cmp(r12, r10)?;
    a.ja(side)?;
    // The linear address, inside one page.
    a.add(r14d, dword_ptr(r11 + (seg + SEG_BASE)))?;
    if n > 1 {
        a.mov(r12d, r14d)?;
        a.and(r12d, 0xFFF)?;
        a.cmp(r12d, (0x1000 - n) as i32)?;
        a.ja(side)?;
    }
    a.cmp(dword_ptr(r11 + OFF_PAGING), 0)?;
    a.jne(paged)?;
    // Paging off: the physical address, inside plain RAM.
    a.lea(r12, qword_ptr(r14 + (n as i32 - 1)))?;
    a.cmp(r12, qword_ptr(r11 + OFF_FAST))?;
    a.jae(side)?;
    a.jmp(done)?;
    // Paging on: a TLB hit with the right for this access at this CPL.
    a.set_label(&mut paged)?;
    a.mov(r12d, r14d)?;
    a.shr(r12d, 12)?;
    a.movzx(r10d, r12b)?;
    a.shl(r10d, 4)?;
    a.add(r10, qword_ptr(r11 + OFF_TLB))?;
    a.inc(r12d)?;
    a.cmp(r12d, dword_ptr(r10 + NE_TAG))?;
    a.jne(side)?;
    a.mov(
        r12d,
        dword_ptr(r11 + if write { OFF_WMASK } else { OFF_RMASK }),
    )?;
    a.test(dword_ptr(r10 + NE_RIGHTS), r12d)?;
    a.je(side)?;
    a.and(r14d, 0xFFF)?;
    a.or(r14d, dword_ptr(r10 + NE_PHYS))?;
    a.set_label(&mut done)?;
    if write {
        // Stores to pages with cached code are the interpreter's (it
        // retires the decodes and blocks there).
        a.mov(r12d, r14d)?;
        a.shr(r12d, 18)?;
        a.mov(r10, qword_ptr(r11 + OFF_CODE))?;
        a.mov(r10, qword_ptr(r10 + r12 * 8))?;
        a.mov(r12d, r14d)?;
        a.shr(r12d, 12)?;
        a.bt(r10, r12)?;
        a.jb(side)?;
    }
    Ok(())
}

/// Count one pass and go round again, or leave through `exhausted` when
/// the budget is spent (flags untouched).
fn loop_back(a: &mut Asm, top: Label, exhausted: Label) -> Result<(), AsmError> {
    a.lea(rcx, qword_ptr(rcx - 1))?;
    a.jrcxz(exhausted)?;
    a.jmp(top)
}

/// LOOP, LOOPE, LOOPNE or JCXZ with a count register of 32 bits
/// (`wide`, ECX = R9D) or 16 (CX): to `taken` when the branch is taken,
/// else to `next`, with the flags untouched (the zero test goes through
/// JRCXZ, RCX and the count swapped around it).
fn loop_end(
    a: &mut Asm,
    kind: LoopKind,
    wide: bool,
    (taken, next): (Label, Label),
) -> Result<(), AsmError> {
    if kind != LoopKind::Jcxz {
        if wide {
            a.lea(r9d, qword_ptr(r9 - 1))?;
        } else {
            a.lea(r10d, qword_ptr(r9 - 1))?;
            a.mov(r9w, r10w)?;
        }
    }
    if wide {
        a.mov(r10d, r9d)?;
    } else {
        a.movzx(r10d, r9w)?;
    }
    let mut zero = a.create_label();
    a.xchg(rcx, r10)?;
    a.jrcxz(zero)?;
    a.xchg(rcx, r10)?;
    match kind {
        LoopKind::Loop => a.jmp(taken)?,
        LoopKind::Loope => {
            a.jne(next)?;
            a.jmp(taken)?;
        }
        LoopKind::Loopne => {
            a.je(next)?;
            a.jmp(taken)?;
        }
        LoopKind::Jcxz => a.jmp(next)?,
    }
    a.set_label(&mut zero)?;
    a.xchg(rcx, r10)?;
    a.jmp(if kind == LoopKind::Jcxz { taken } else { next })
}

fn exit(a: &mut Asm, kind: u32, eip: u32, epilogue: Label) -> Result<(), AsmError> {
    a.mov(dword_ptr(r11 + OFF_EXIT), kind)?;
    a.mov(dword_ptr(r11 + OFF_EIP), eip)?;
    a.jmp(epilogue)
}

fn emit_op(a: &mut Asm, op: &Op, mem: Option<Mem>) -> Result<(), EmitError> {
    // The checked guest operand: RAM at R13 + R14.
    let at = |size: u8| {
        let m = r13 + r14;
        match size {
            4 => dword_ptr(m),
            2 => word_ptr(m),
            _ => byte_ptr(m),
        }
    };
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
        Op::Load { m, dst, .. } => {
            let p = at(mem.ok_or(EmitError::Sizes)?.size);
            match host(dst)? {
                Host::R32(d) => load(a, m, d, p),
                Host::R16(d) => load(a, m, d, p),
                Host::R8(d) => load(a, m, d, p),
            }
        }
        Op::Store { m, src, .. } => {
            let size = mem.ok_or(EmitError::Sizes)?.size;
            let p = at(size);
            match (size, src) {
                (_, Src::Reg(s)) => match host(s)? {
                    Host::R32(s) => bin(a, m, p, s),
                    Host::R16(s) => bin(a, m, p, s),
                    Host::R8(s) => bin(a, m, p, s),
                },
                (4, Src::Imm(v)) => bin(a, m, p, v as i32),
                (2, Src::Imm(v)) => bin(a, m, p, i32::from(v as u16 as i16)),
                (_, Src::Imm(v)) => bin(a, m, p, i32::from(v as u8 as i8)),
            }
        }
        Op::UnaryMem { m, .. } => unary(a, m, at(mem.ok_or(EmitError::Sizes)?.size)),
        Op::Shift { m, dst } => {
            // The host's AF after a shift is undefined; the guest's is
            // unchanged: AF is put back from the flags before it (the
            // others from after it), whoever wrote it.
            let d = match host(dst)? {
                Host::R32(d) | Host::R16(d) | Host::R8(d) => d,
            };
            a.pushfq()?;
            a.pop(r12)?;
            match m {
                M::Shl => a.shl(d, 1)?,
                M::Shr => a.shr(d, 1)?,
                _ => a.sar(d, 1)?,
            }
            a.pushfq()?;
            a.pop(r10)?;
            a.xor(r12, r10)?;
            a.and(r12d, AF as i32)?;
            a.xor(r10, r12)?;
            a.push(r10)?;
            a.popfq()
        }
        Op::Widen { m } => match m {
            M::Cbw => a.cbw(),
            M::Cwde => a.cwde(),
            M::Cwd => a.cwd(),
            _ => a.cdq(),
        },
        Op::Xchg { a: x, b: y } => match (host(x)?, host(y)?) {
            (Host::R32(x), Host::R32(y))
            | (Host::R16(x), Host::R16(y))
            | (Host::R8(x), Host::R8(y)) => a.xchg(x, y),
            _ => return Err(EmitError::Sizes),
        },
        Op::Push { src, stack } => {
            let p = at(stack.size);
            match (src, stack.size) {
                (Src::Reg(r), _) => match host(r)? {
                    Host::R32(r) => a.mov(p, r)?,
                    Host::R16(r) => a.mov(p, r)?,
                    Host::R8(_) => return Err(EmitError::Sizes),
                },
                (Src::Imm(v), 4) => a.mov(p, v as i32)?,
                (Src::Imm(v), _) => a.mov(p, i32::from(v as u16 as i16))?,
            }
            move_sp(a, stack, -i32::from(stack.size))
        }
        Op::Leave { stack } => {
            // The checked slot at (E)BP is read before anything changes;
            // then (E)SP = (E)BP past it, and (E)BP gets the value.
            if stack.size == 4 {
                a.mov(r12d, at(4))?;
            } else {
                a.movzx(r12d, at(2))?;
            }
            if stack.addr32 {
                a.mov(r8d, ebp)?;
            } else {
                a.mov(r8w, bp)?;
            }
            move_sp(a, stack, i32::from(stack.size))?;
            if stack.size == 4 {
                a.mov(ebp, r12d)
            } else {
                a.mov(bp, r12w)
            }
        }
        Op::PushMem { stack, .. } => {
            // (The operand, read first, waits in the State.)
            a.mov(r12d, dword_ptr(r11 + OFF_SCRATCH))?;
            if stack.size == 4 {
                a.mov(at(4), r12d)?;
            } else {
                a.mov(at(2), r12w)?;
            }
            move_sp(a, stack, -i32::from(stack.size))
        }
        Op::PushSeg { seg, stack } => {
            a.movzx(r12d, word_ptr(r11 + sel_off(seg)))?;
            if stack.size == 4 {
                a.mov(at(4), r12d)?;
            } else {
                a.mov(at(2), r12w)?;
            }
            move_sp(a, stack, -i32::from(stack.size))
        }
        Op::LoadSeg { .. } | Op::LoadFar { .. } => return Err(EmitError::Sizes),
        Op::SegToReg { seg, dst } => match host(dst)? {
            // (A 32-bit destination gets the selector zero-extended.)
            Host::R32(d) => a.movzx(d, word_ptr(r11 + sel_off(seg))),
            Host::R16(d) => a.mov(d, word_ptr(r11 + sel_off(seg))),
            Host::R8(_) => return Err(EmitError::Sizes),
        },
        Op::SegToMem { seg, .. } => {
            a.movzx(r12d, word_ptr(r11 + sel_off(seg)))?;
            a.mov(at(2), r12w)
        }
        Op::Pop { dst, stack } => {
            let p = at(stack.size);
            match host(dst)? {
                Host::R32(d) => a.mov(d, p)?,
                Host::R16(d) => a.mov(d, p)?,
                Host::R8(_) => return Err(EmitError::Sizes),
            }
            move_sp(a, stack, i32::from(stack.size))
        }
        Op::LoadX { sign, dst, .. } => {
            let p = at(mem.ok_or(EmitError::Sizes)?.size);
            match (host(dst)?, sign) {
                (Host::R32(d), false) => a.movzx(d, p),
                (Host::R32(d), true) => a.movsx(d, p),
                (Host::R16(d), false) => a.movzx(d, p),
                (Host::R16(d), true) => a.movsx(d, p),
                (Host::R8(_), _) => return Err(EmitError::Sizes),
            }
        }
        Op::Str(s) => {
            let p = at(s.dst.size);
            let acc = at(s.src.size);
            match (s.kind, s.dst.size) {
                (StrKind::Movs, 4) => {
                    a.mov(r12d, dword_ptr(r11 + OFF_SCRATCH))?;
                    a.mov(p, r12d)?;
                }
                (StrKind::Movs, 2) => {
                    a.mov(r12d, dword_ptr(r11 + OFF_SCRATCH))?;
                    a.mov(p, r12w)?;
                }
                (StrKind::Movs, _) => {
                    a.mov(r12d, dword_ptr(r11 + OFF_SCRATCH))?;
                    a.mov(p, r12b)?;
                }
                (StrKind::Stos, 4) => a.mov(p, eax)?,
                (StrKind::Stos, 2) => a.mov(p, ax)?,
                (StrKind::Stos, _) => a.mov(p, al)?,
                (StrKind::Lods, 4) => a.mov(eax, acc)?,
                (StrKind::Lods, 2) => a.mov(ax, acc)?,
                (StrKind::Lods, _) => a.mov(al, acc)?,
            }
            if s.kind != StrKind::Stos {
                step(a, 6, s.src.addr32, s.delta)?;
            }
            if s.kind != StrKind::Lods {
                step(a, 7, s.dst.addr32, s.delta)?;
            }
            Ok(())
        }
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

/// Add `delta` to guest ESI (6) or EDI (7), or to SI or DI alone with
/// 16-bit addressing (no flags).
fn step(a: &mut Asm, reg: usize, addr32: bool, delta: i32) -> Result<(), AsmError> {
    let (r32, r64, r16) = (GUEST[reg], GUEST64[reg], GUEST16[reg]);
    if addr32 {
        a.lea(r32, qword_ptr(r64 + delta))
    } else {
        a.lea(r10d, qword_ptr(r64 + delta))?;
        a.mov(r16, r10w)
    }
}

/// Add `delta` to ESP, or to SP alone for a 16-bit stack (no flags).
fn move_sp(a: &mut Asm, stack: Mem, delta: i32) -> Result<(), AsmError> {
    if stack.addr32 {
        a.lea(r8d, qword_ptr(r8 + delta))
    } else {
        a.lea(r10d, qword_ptr(r8 + delta))?;
        a.mov(r8w, r10w)
    }
}

/// MOV or a two-operand ALU op on host operands of one size.
fn bin(a: &mut Asm, m: M, d: impl Into<Opnd>, s: impl Into<Opnd>) -> Result<(), AsmError> {
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

/// MOV or a two-operand ALU op from memory into a host register (there
/// is no TEST r,m; selection gives TEST m,r instead).
fn load(a: &mut Asm, m: M, d: Gp, s: MemOp) -> Result<(), AsmError> {
    match m {
        M::Mov => a.mov(d, s),
        M::Add => a.add(d, s),
        M::Adc => a.adc(d, s),
        M::Sub => a.sub(d, s),
        M::Sbb => a.sbb(d, s),
        M::And => a.and(d, s),
        M::Or => a.or(d, s),
        M::Xor => a.xor(d, s),
        _ => a.cmp(d, s),
    }
}

/// INC, DEC, NEG or NOT on a host register or memory operand.
fn unary(a: &mut Asm, m: M, d: impl Into<Opnd>) -> Result<(), AsmError> {
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
fn jcc(a: &mut Asm, cc: ConditionCode, l: Label) -> Result<(), AsmError> {
    if cc == ConditionCode::None {
        return Ok(());
    }
    a.jcc(cc, l)
}

/// Offset in the `State` of segment register `seg`'s selector.
fn sel_off(seg: SegReg) -> i32 {
    OFF_SEL + 2 * seg as i32
}

/// Look the selector in R12D up in the descriptor cache for a load of
/// kind `kind` (`DK_*`) at the current CPL, and leave the entry's address
/// in R10; jump to `side` on a miss, or when with paging on the
/// descriptor's page is not in the TLB at the frame it was read from with
/// a supervisor read that hits (the interpreter would walk the tables).
/// Clobbers R12, R14 and the flags.
fn desc_lookup(a: &mut Asm, kind: u32, side: Label) -> Result<(), AsmError> {
    let mut done = a.create_label();
    a.mov(r10d, r12d)?;
    a.shr(r10d, 3)?;
    a.movzx(r10d, r10b)?;
    a.shl(r10d, DE_SHIFT)?;
    a.add(r10, qword_ptr(r11 + OFF_DCACHE))?;
    a.or(r12d, dword_ptr(r11 + OFF_DTAG))?;
    a.cmp(r12d, dword_ptr(r10 + DE_TAG))?;
    a.jne(side)?;
    a.test(dword_ptr(r10 + DE_KINDS), kind)?;
    a.je(side)?;
    a.test(dword_ptr(r10 + DE_KINDS), DK_NO_READ)?;
    a.jne(done)?;
    a.cmp(dword_ptr(r11 + OFF_PAGING), 0)?;
    a.je(done)?;
    a.mov(r14d, dword_ptr(r10 + DE_TLB_OFF))?;
    a.and(r14d, 0xFF0)?;
    a.add(r14, qword_ptr(r11 + OFF_TLB))?;
    a.mov(r12d, dword_ptr(r10 + DE_TLB_TAG))?;
    a.cmp(r12d, dword_ptr(r14 + NE_TAG))?;
    a.jne(side)?;
    a.mov(r12d, dword_ptr(r14 + NE_PHYS))?;
    a.cmp(r12d, dword_ptr(r10 + DE_FRAME))?;
    a.jne(side)?;
    a.test(dword_ptr(r14 + NE_RIGHTS), RIGHT_SUP_READ)?;
    a.je(side)?;
    a.set_label(&mut done)?;
    Ok(())
}

/// MOV or POP to a data segment register: the selector, its cache entry,
/// then the new check and selector in the `State` (and the register in
/// `State::loaded`). `flags`: save the guest's flags first, restore them
/// after.
fn load_seg(
    a: &mut Asm,
    (seg, real): (SegReg, bool),
    src: SelSrc,
    side: Label,
    (save, restore): (bool, bool),
) -> Result<(), AsmError> {
    if save {
        a.pushfq()?;
        a.pop(r15)?;
    }
    match src {
        SelSrc::Reg(r) => a.movzx(r12d, GUEST16[usize::from(r)])?,
        SelSrc::Mem { mem, .. } => {
            check(a, mem, false, side)?;
            a.movzx(r12d, word_ptr(r13 + r14))?;
        }
    }
    commit_load(a, seg, real, side)?;
    if let SelSrc::Mem { mem, pop: true } = src {
        move_sp(a, mem, i32::from(mem.size))?;
    }
    if restore {
        a.push(r15)?;
        a.popfq()?;
    }
    Ok(())
}

/// A far CALL, JMP or RET through the descriptor cache, leaving through
/// `EXIT_FAR` (or `side` before it); `next` is the return address of a
/// CALL. `save`: the guest's flags are live (kept in R15 over the checks).
/// The target's offset goes to `State::eip` and its selector to
/// `State::far_sel` as soon as they are known (a side exit rewrites the
/// one and ignores the other).
fn far_transfer(
    a: &mut Asm,
    far: Far,
    (next, real): (u32, bool),
    side: Label,
    save: bool,
    epilogue: Label,
) -> Result<(), AsmError> {
    if save {
        a.pushfq()?;
        a.pop(r15)?;
    }
    let load = |a: &mut Asm, n: u8| {
        if n == 4 {
            a.mov(r12d, dword_ptr(r13 + r14))
        } else {
            a.movzx(r12d, word_ptr(r13 + r14))
        }
    };
    // The target: the cache entry in R10, the offset checked against
    // its limit.
    match far {
        Far::Call { sel, off, .. } | Far::Jmp { sel, off } if real => {
            // Real mode: the offset inside CS's limit (as it is).
            a.cmp(dword_ptr(r11 + OFF_CS_LIMIT), off as i32)?;
            a.jb(side)?;
            a.mov(dword_ptr(r11 + OFF_EIP), off)?;
            a.mov(dword_ptr(r11 + OFF_FAR_SEL), u32::from(sel))?;
        }
        Far::Call { sel, off, .. } | Far::Jmp { sel, off } => {
            a.mov(r12d, u32::from(sel))?;
            desc_lookup(a, DK_CODE, side)?;
            a.cmp(dword_ptr(r10 + DE_LIMIT), off as i32)?;
            a.jb(side)?;
            a.mov(dword_ptr(r11 + OFF_EIP), off)?;
            a.movzx(r12d, word_ptr(r10 + DE_TAG))?;
            a.mov(dword_ptr(r11 + OFF_FAR_SEL), r12d)?;
        }
        Far::CallM { mem, .. } | Far::JmpM { mem } | Far::Ret { stack: mem, .. } => {
            // The offset, then the selector word past it (a far pointer's
            // at ea + n unwrapped; a return's on the stack, wrapped).
            let n = mem.size;
            check(a, mem, false, side)?;
            load(a, n)?;
            a.mov(dword_ptr(r11 + OFF_EIP), r12d)?;
            if let Far::Ret { .. } = far {
                let sel_slot = Mem {
                    disp: mem.disp.wrapping_add(u32::from(n)),
                    size: 2,
                    ..mem
                };
                check(a, sel_slot, false, side)?;
            } else {
                check_plus(a, Mem { size: 2, ..mem }, u32::from(n), false, side)?;
            }
            a.movzx(r12d, word_ptr(r13 + r14))?;
            if real {
                // Real mode: the offset inside CS's limit (as it is).
                a.mov(dword_ptr(r11 + OFF_FAR_SEL), r12d)?;
                a.mov(r12d, dword_ptr(r11 + OFF_EIP))?;
                a.cmp(r12d, dword_ptr(r11 + OFF_CS_LIMIT))?;
                a.ja(side)?;
            } else {
                let kind = if let Far::Ret { .. } = far {
                    DK_RET
                } else {
                    DK_CODE
                };
                desc_lookup(a, kind, side)?;
                a.mov(r12d, dword_ptr(r11 + OFF_EIP))?;
                a.cmp(r12d, dword_ptr(r10 + DE_LIMIT))?;
                a.ja(side)?;
                a.movzx(r12d, word_ptr(r10 + DE_TAG))?;
                a.mov(dword_ptr(r11 + OFF_FAR_SEL), r12d)?;
            }
        }
    }
    match far {
        Far::Call { stack, .. } | Far::CallM { stack, .. } => {
            // CS's slot, then EIP's below it; written once both pass.
            let n = stack.size;
            check(a, stack, true, side)?;
            a.mov(dword_ptr(r11 + OFF_SCRATCH), r14d)?;
            let eip_slot = Mem {
                disp: stack.disp.wrapping_sub(u32::from(n)),
                ..stack
            };
            check(a, eip_slot, true, side)?;
            let (at, cs_at) = if n == 4 {
                (dword_ptr(r13 + r14), dword_ptr(r13 + r10))
            } else {
                (word_ptr(r13 + r14), word_ptr(r13 + r10))
            };
            let ret = if n == 4 {
                next as i32
            } else {
                i32::from(next as u16 as i16)
            };
            a.mov(at, ret)?;
            a.mov(r10d, dword_ptr(r11 + OFF_SCRATCH))?;
            a.movzx(r12d, word_ptr(r11 + sel_off(SegReg::Cs)))?;
            if n == 4 {
                a.mov(cs_at, r12d)?;
            } else {
                a.mov(cs_at, r12w)?;
            }
            move_sp(a, stack, -2 * i32::from(n))?;
        }
        Far::Ret { stack, imm } => {
            move_sp(a, stack, 2 * i32::from(stack.size) + i32::from(imm))?;
        }
        Far::Jmp { .. } | Far::JmpM { .. } => {}
    }
    if save {
        a.push(r15)?;
        a.popfq()?;
    }
    a.mov(dword_ptr(r11 + OFF_EXIT), EXIT_FAR)?;
    a.jmp(epilogue)
}

/// Load data segment register `seg` from the cache entry at R10 (found
/// by [`desc_lookup`]): its check and selector into the `State`, and its
/// bit in `State::loaded`. Clobbers R12 and the flags.
fn commit_seg(a: &mut Asm, seg: SegReg) -> Result<(), AsmError> {
    let at = OFF_SEGS + SEG_SIZE * seg as i32;
    for k in 0..3 {
        a.mov(r12, qword_ptr(r10 + (DE_CHECK + 8 * k)))?;
        a.mov(qword_ptr(r11 + (at + 8 * k)), r12)?;
    }
    a.mov(r12d, dword_ptr(r10 + DE_TAG))?;
    a.mov(word_ptr(r11 + sel_off(seg)), r12w)?;
    a.or(dword_ptr(r11 + OFF_LOADED), 1 << seg as u32)
}

/// LDS, LES, LFS or LGS: the offset and the selector word past it are
/// read (as the interpreter reads them, the selector at offset `ea + n`
/// without the 16-bit wrap), the selector goes through the cache, then
/// the register gets the offset.
fn load_far(
    a: &mut Asm,
    (seg, dst, mem, real): (SegReg, Reg, Mem, bool),
    side: Label,
    (save, restore): (bool, bool),
) -> Result<(), EmitError> {
    if save {
        a.pushfq()?;
        a.pop(r15)?;
    }
    let n = mem.size;
    check(a, mem, false, side)?;
    if n == 4 {
        a.mov(r12d, dword_ptr(r13 + r14))?;
    } else {
        a.movzx(r12d, word_ptr(r13 + r14))?;
    }
    a.mov(dword_ptr(r11 + OFF_SCRATCH), r12d)?;
    check_plus(a, Mem { size: 2, ..mem }, u32::from(n), false, side)?;
    a.movzx(r12d, word_ptr(r13 + r14))?;
    commit_load(a, seg, real, side)?;
    match host(dst)? {
        Host::R32(d) => a.mov(d, dword_ptr(r11 + OFF_SCRATCH))?,
        Host::R16(d) => a.mov(d, word_ptr(r11 + OFF_SCRATCH))?,
        Host::R8(_) => return Err(EmitError::Sizes),
    }
    if restore {
        a.push(r15)?;
        a.popfq()?;
    }
    Ok(())
}

/// The cache entry kind a load into `seg` needs.
fn load_kind(seg: SegReg) -> u32 {
    if seg == SegReg::Ss { DK_STACK } else { DK_DATA }
}

/// Load data or stack segment register `seg` with the selector in R12D:
/// in protected mode through the descriptor cache ([`desc_lookup`],
/// [`commit_seg`]; `side` on a miss), in real mode as the interpreter
/// does there (selector, base = selector * 16; the limit and type checks
/// stay). Clobbers R10, R12, R14 and the flags.
fn commit_load(a: &mut Asm, seg: SegReg, real: bool, side: Label) -> Result<(), AsmError> {
    if !real {
        desc_lookup(a, load_kind(seg), side)?;
        return commit_seg(a, seg);
    }
    let at = OFF_SEGS + SEG_SIZE * seg as i32;
    a.mov(word_ptr(r11 + sel_off(seg)), r12w)?;
    a.shl(r12d, 4)?;
    a.mov(dword_ptr(r11 + (at + SEG_BASE)), r12d)?;
    a.or(dword_ptr(r11 + OFF_LOADED), 1 << seg as u32)
}
