//! OS/2 2.x exception handling for 32-bit code: a guest exception walks
//! the registration chain at FS:[0] (the TIB), calling each handler as
//! `_System handler(report, registration, context, dispatcher)`.
//!
//! Decisions: the EXCEPTIONREPORTRECORD and CONTEXTRECORD (all of
//! integer, segment and control registers; the x87 part zero) are built
//! on the faulting thread's stack below ESP; a handler returning
//! XCPT_CONTINUE_EXECUTION (0xFFFFFFFF) resumes with the registers from
//! the context record as the handler left them; XCPT_CONTINUE_SEARCH (0)
//! goes to the next record; the end of the chain (0xFFFFFFFF) or a chain
//! that leaves readable memory ends the run with the original fault. A
//! handler that never returns (it longjmps or exits) simply runs on. At
//! most 64 handlers are tried. Handlers run without the trap hook, and
//! without TF (a guest single-stepping itself gets XCPT_SINGLE_STEP after
//! each instruction, not inside its handler); the context record holds
//! the EFLAGS of the exception, TF included, but only the status flags and
//! DF are taken back from it, so a handler's CONTINUE_EXECUTION ends the
//! stepping (it sets TF again in its own code to go on).
//!
//! DosRaiseException (DOSCALLS.356), as the Control Program Programming
//! Guide describes it: the caller's report record is copied (at most 64
//! parameters; of its flags only EH_NONCONTINUABLE, the one a caller may
//! set; ExceptionAddress becomes the call's return address) below the
//! caller's stack and the same chain is walked with a context record of
//! the caller as it returns from the call (EIP the return address, ESP
//! above it, EAX 0 = NO_ERROR). A handler's XCPT_CONTINUE_EXECUTION
//! returns from the call with the context record's registers; for a
//! non-continuable exception it instead raises
//! XCPT_NONCONTINUABLE_EXCEPTION (itself non-continuable, its nested
//! record the first one), and continuing that one too ends the process
//! (the guide: "the process is terminated"). A raised exception no
//! handler takes ends the process ([`Outcome::UnhandledException`]):
//! the guide's action for user exceptions; system exceptions whose
//! default action is to continue are not told apart (they end it too). A handler is called with EH_NESTED_CALL when the
//! walk reaches a record whose handler is already running (an exception
//! raised inside a handler, from there on down the chain).
//!
//! DosUnwindException(target, ip, report) (DOSCALLS.357) calls each
//! handler from the head of the chain down to, not including, `target`
//! with EH_UNWINDING, unlinking each record after its call; their
//! answers are ignored. `target` END_OF_CHAIN (0xFFFFFFFF) unwinds the
//! whole chain; UNWIND_ALL (0) does too with EH_EXIT_UNWIND as well, and
//! then ends the thread (code 0; the process when it is thread 1 or the
//! last). The report is the caller's (copied, the flags added) or, when
//! NULL, one of XCPT_UNWIND. Then the caller runs on with its registers
//! of the call (ESP above the return address, the arguments left for the
//! target), at `ip`; `ip` 0, which the reference leaves open, returns
//! after the call. A target that is not on the chain unwinds nothing and
//! raises XCPT_INVALID_UNWIND_TARGET (non-continuable). Colliding unwinds
//! (an unwind from an unwinding handler) are not detected. An unreadable report
//! record makes either call fail with ERROR_INVALID_ADDRESS.

use emu::{CpuState, Fault, Gpr, SegReg, vector};

use crate::api::{Call, Stop};
use crate::error::Outcome;
use crate::layout::THUNK_BASE;
use crate::process::Process;
use crate::thunks::Slot;

/// XCPT_CONTINUE_EXECUTION.
const CONTINUE_EXECUTION: u32 = 0xFFFF_FFFF;
/// Size of CONTEXTRECORD.
const CONTEXT_SIZE: u32 = 176;
/// CONTEXT_CONTROL | CONTEXT_INTEGER | CONTEXT_SEGMENTS.
const CONTEXT_FLAGS: u32 = 0x7;
/// The end of the registration chain.
const END_OF_CHAIN: u32 = 0xFFFF_FFFF;
/// EH_NONCONTINUABLE.
const EH_NONCONTINUABLE: u32 = 0x1;
/// EH_UNWINDING.
const EH_UNWINDING: u32 = 0x2;
/// EH_EXIT_UNWIND.
const EH_EXIT_UNWIND: u32 = 0x4;
/// EH_NESTED_CALL.
const EH_NESTED_CALL: u32 = 0x10;
/// XCPT_NONCONTINUABLE_EXCEPTION.
const XCPT_NONCONTINUABLE_EXCEPTION: u32 = 0xC000_0024;
/// XCPT_UNWIND.
const XCPT_UNWIND: u32 = 0xC000_0026;
/// XCPT_INVALID_UNWIND_TARGET.
const XCPT_INVALID_UNWIND_TARGET: u32 = 0xC000_0028;
/// Most parameters copied from a caller's report record.
const MAX_PARAMETERS: u32 = 64;
/// Most nested XCPT_NONCONTINUABLE_EXCEPTIONs of one raise: continuing
/// that one ends the process.
const MAX_NESTED_RAISE: u32 = 1;
/// Most handlers one walk calls.
const MAX_HANDLERS: usize = 64;
/// ERROR_INVALID_ADDRESS.
const ERROR_INVALID_ADDRESS: u32 = crate::rc::ERROR_INVALID_ADDRESS;

/// How a walk of the chain ended.
enum Walk {
    /// A handler continued: the CPU holds its context record's registers.
    Handled,
    /// No handler took the exception (this number): the CPU is as before.
    Unhandled(u32),
    /// The run ended while a handler ran.
    Ended(Outcome),
}

/// An EXCEPTIONREPORTRECORD's bytes: at least the four parameters of the
/// C structure, more when `info` has them.
fn report_bytes(num: u32, flags: u32, nested: u32, address: u32, info: &[u32]) -> Vec<u8> {
    let mut r = Vec::new();
    for v in [num, flags, nested, address, info.len() as u32] {
        r.extend(v.to_le_bytes());
    }
    for i in 0..info.len().max(4) {
        r.extend(info.get(i).copied().unwrap_or(0).to_le_bytes());
    }
    r
}

/// A CONTEXTRECORD of `saved`.
fn context_bytes(saved: &CpuState) -> Vec<u8> {
    let mut c = vec![0u8; CONTEXT_SIZE as usize];
    let mut put = |off: usize, v: u32| c[off..off + 4].copy_from_slice(&v.to_le_bytes());
    put(0, CONTEXT_FLAGS);
    let s = |r: SegReg| u32::from(saved.seg[r as usize].selector);
    let g = &saved.gpr;
    for (i, v) in [
        s(SegReg::Gs),
        s(SegReg::Fs),
        s(SegReg::Es),
        s(SegReg::Ds),
        g[7],
        g[6],
        g[0],
        g[3],
        g[1],
        g[2],
        g[5],
        saved.eip,
        s(SegReg::Cs),
        saved.eflags,
        g[4],
        s(SegReg::Ss),
    ]
    .into_iter()
    .enumerate()
    {
        put(112 + 4 * i, v);
    }
    c
}

/// The OS/2 exception number and parameters of a CPU exception.
fn exception_number(f: Fault, cr2: u32) -> (u32, Vec<u32>) {
    match f.vector {
        vector::DE => (0xC000_009B, vec![]),
        vector::DB => (0x8000_000C, vec![]),
        vector::BP => (0x8000_000B, vec![]),
        vector::OF => (0xC000_009C, vec![]),
        vector::BR => (0xC000_0093, vec![]),
        vector::UD => (0xC000_001C, vec![]),
        vector::PF => {
            let write = f.error.unwrap_or(0) & 2 != 0;
            (0xC000_0005, vec![if write { 2 } else { 1 }, cr2])
        }
        _ => (0xC000_0005, vec![0, u32::MAX]),
    }
}

impl Process {
    /// Offer a 32-bit guest exception to the registered handlers:
    /// `Some(None)` when one handled it, `Some(Some(outcome))` when the
    /// run ended while a handler ran, `None` when nobody took it.
    pub(crate) fn dispatch_exception32(&mut self, fault: Fault) -> Option<Option<Outcome>> {
        let saved = self.machine.cpu().clone();
        let (num, info) = exception_number(fault, saved.cr2);
        let report = report_bytes(num, 0, 0, saved.eip, &info);
        match self.walk32(&saved, &report, 0) {
            Walk::Handled => Some(None),
            Walk::Ended(o) => Some(Some(o)),
            Walk::Unhandled(_) => None,
        }
    }

    /// Build the report and a context record of `saved` below its ESP and
    /// offer them to each handler of the chain in turn (`depth`: how many
    /// XCPT_NONCONTINUABLE_EXCEPTIONs led here).
    fn walk32(&mut self, saved: &CpuState, report: &[u8], depth: u32) -> Walk {
        let num = u32::from_le_bytes([report[0], report[1], report[2], report[3]]);
        let flags = u32::from_le_bytes([report[4], report[5], report[6], report[7]]);
        let esp = saved.gpr[Gpr::Esp] & !3;
        let ctx = esp.wrapping_sub(0x100 + CONTEXT_SIZE);
        let at = ctx.wrapping_sub(report.len() as u32);
        if !self.write_mem(at, report) || !self.write_mem(ctx, &context_bytes(saved)) {
            *self.machine.cpu_mut_flush_tlb() = saved.clone();
            return Walk::Unhandled(num);
        }
        let mut rec = self.read_u32(self.pcb.tib).unwrap_or(END_OF_CHAIN);
        let mut nested = false;
        for _ in 0..MAX_HANDLERS {
            if rec == END_OF_CHAIN || rec == 0 {
                break;
            }
            let Some(handler) = self.read_u32(rec.wrapping_add(4)) else {
                break;
            };
            nested |= self.pcb.xcpt_active.contains(&rec);
            let f = flags | if nested { EH_NESTED_CALL } else { 0 };
            if !self.write_mem(at.wrapping_add(4), &f.to_le_bytes()) {
                break;
            }
            let answer = match self.call_handler(saved, at, handler, [at, rec, ctx, 0]) {
                Some(Outcome::Returned(v)) => v,
                Some(other) => return Walk::Ended(other),
                None => break,
            };
            if answer != CONTINUE_EXECUTION {
                match self.read_u32(rec) {
                    Some(next) => rec = next,
                    None => break,
                }
                continue;
            }
            if flags & EH_NONCONTINUABLE != 0 {
                // Continuing a non-continuable exception is an exception.
                if depth >= MAX_NESTED_RAISE {
                    break;
                }
                let mut below = saved.clone();
                below.gpr[Gpr::Esp] = at;
                let address = u32::from_le_bytes([report[12], report[13], report[14], report[15]]);
                let again = report_bytes(
                    XCPT_NONCONTINUABLE_EXCEPTION,
                    EH_NONCONTINUABLE,
                    at,
                    address,
                    &[],
                );
                return match self.walk32(&below, &again, depth + 1) {
                    Walk::Unhandled(n) => {
                        *self.machine.cpu_mut_flush_tlb() = saved.clone();
                        Walk::Unhandled(n)
                    }
                    other => other,
                };
            }
            if self.restore_context(ctx) {
                return Walk::Handled;
            }
            let why = "the exception context record is unreadable";
            return Walk::Ended(Outcome::HostError(why.into()));
        }
        *self.machine.cpu_mut_flush_tlb() = saved.clone();
        Walk::Unhandled(num)
    }

    /// Run `handler(args...)` (`_System`) from the state `saved` with its
    /// stack just below `below`: how it ended, `None` when the stack is
    /// not writable.
    fn call_handler(
        &mut self,
        saved: &CpuState,
        below: u32,
        handler: u32,
        args: [u32; 4],
    ) -> Option<Outcome> {
        let ret = THUNK_BASE + 4 * self.kernel.thunks.special(Slot::InitReturn);
        self.machine.add_host_call(ret);
        {
            let cpu = self.machine.cpu_mut_flush_tlb();
            *cpu = saved.clone();
            cpu.gpr[Gpr::Esp] = below.wrapping_sub(4);
            // As the CPU's own exception entry: the handler runs
            // without the guest's TF (its single steps would trap
            // inside the handler); the context record keeps it.
            cpu.eflags &= !(emu::flags::TF | emu::flags::RF);
        }
        let ok = args.into_iter().rev().chain([ret]).all(|v| self.push32(v));
        if !ok {
            return None;
        }
        self.machine.set_eip(handler);
        let rec = args[1];
        self.pcb.xcpt_active.push(rec);
        let o = self.run_loop(None);
        self.pcb.xcpt_active.pop();
        Some(o)
    }

    /// The caller of a `_System` API as it returns from the call: EIP
    /// the return address, ESP above it, EAX 0.
    fn returning_state(&mut self) -> Option<CpuState> {
        let mut s = self.machine.cpu().clone();
        let esp = s.gpr[Gpr::Esp];
        let ret = self.read_u32(s.seg[SegReg::Ss as usize].base.wrapping_add(esp))?;
        s.gpr[Gpr::Esp] = esp.wrapping_add(4);
        s.gpr[Gpr::Eax] = 0;
        s.eip = ret;
        Some(s)
    }

    /// A caller's EXCEPTIONREPORTRECORD, its flags masked with `keep`.
    fn caller_report(&mut self, lin: u32, keep: u32) -> Option<Vec<u8>> {
        let b = self.read_mem(lin, 20)?;
        let v = |i: usize| u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
        let n = v(4);
        if n > MAX_PARAMETERS {
            return None;
        }
        let p = self.read_mem(lin.wrapping_add(20), 4 * n)?;
        let info: Vec<u32> = p
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Some(report_bytes(v(0), v(1) & keep, v(2), v(3), &info))
    }

    /// The end of DosRaiseException's walk.
    fn raised(&mut self, w: Walk, eip: u32) -> Result<u32, Stop> {
        match w {
            Walk::Handled => Err(Stop::Resumed),
            Walk::Ended(o) => Err(Stop::Outcome(o)),
            Walk::Unhandled(number) => {
                let cs = self.machine.cpu().sreg(SegReg::Cs).selector;
                Err(Stop::Outcome(Outcome::UnhandledException {
                    number,
                    cs,
                    eip,
                }))
            }
        }
    }
}

/// DosRaiseException(report): see the module docs.
pub(crate) fn raise_exception(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let Some(mut report) = p.caller_report(c.l(0), EH_NONCONTINUABLE) else {
        return Ok(ERROR_INVALID_ADDRESS);
    };
    let Some(saved) = p.returning_state() else {
        return Ok(ERROR_INVALID_ADDRESS);
    };
    report[12..16].copy_from_slice(&saved.eip.to_le_bytes());
    let w = p.walk32(&saved, &report, 0);
    p.raised(w, saved.eip)
}

/// DosUnwindException(target, ip, report): see the module docs.
pub(crate) fn unwind_exception(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let (target, ip, rep) = (c.l(0), c.l(1), c.l(2));
    let Some(saved) = p.returning_state() else {
        return Ok(ERROR_INVALID_ADDRESS);
    };
    let exit = target == 0;
    let all = exit || target == END_OF_CHAIN;
    let mut flags = EH_UNWINDING;
    if exit {
        flags |= EH_EXIT_UNWIND;
    }
    let report = if rep == 0 {
        report_bytes(XCPT_UNWIND, flags, 0, saved.eip, &[])
    } else {
        match p.caller_report(rep, u32::MAX) {
            Some(mut r) => {
                let f = u32::from_le_bytes([r[4], r[5], r[6], r[7]]) | flags;
                r[4..8].copy_from_slice(&f.to_le_bytes());
                r
            }
            None => return Ok(ERROR_INVALID_ADDRESS),
        }
    };
    // Is the target on the chain?
    let mut rec = p.read_u32(p.pcb.tib).unwrap_or(END_OF_CHAIN);
    for _ in 0..MAX_HANDLERS {
        if rec == target || rec == END_OF_CHAIN || rec == 0 {
            break;
        }
        match p.read_u32(rec) {
            Some(next) => rec = next,
            None => break,
        }
    }
    if !all && rec != target {
        let bad = report_bytes(
            XCPT_INVALID_UNWIND_TARGET,
            EH_NONCONTINUABLE,
            0,
            saved.eip,
            &[],
        );
        let w = p.walk32(&saved, &bad, 0);
        return p.raised(w, saved.eip);
    }
    let esp = saved.gpr[Gpr::Esp] & !3;
    let ctx = esp.wrapping_sub(0x100 + CONTEXT_SIZE);
    let at = ctx.wrapping_sub(report.len() as u32);
    if !p.write_mem(at, &report) || !p.write_mem(ctx, &context_bytes(&saved)) {
        return Ok(ERROR_INVALID_ADDRESS);
    }
    let mut rec = p.read_u32(p.pcb.tib).unwrap_or(END_OF_CHAIN);
    for _ in 0..MAX_HANDLERS {
        if rec == target || rec == END_OF_CHAIN || rec == 0 {
            break;
        }
        let Some(handler) = p.read_u32(rec.wrapping_add(4)) else {
            break;
        };
        if !p.write_mem(at.wrapping_add(4), &flags_of(&report).to_le_bytes()) {
            break;
        }
        match p.call_handler(&saved, at, handler, [at, rec, ctx, 0]) {
            Some(Outcome::Returned(_)) | None => {}
            Some(other) => return Err(Stop::Outcome(other)),
        }
        let Some(next) = p.read_u32(rec) else {
            break;
        };
        if !p.write_mem(p.pcb.tib, &next.to_le_bytes()) {
            break;
        }
        rec = next;
    }
    if exit {
        return Err(Stop::ExitThread(0));
    }
    let resume = if ip != 0 { ip } else { saved.eip };
    *p.machine.cpu_mut_flush_tlb() = saved;
    p.machine.set_eip(resume);
    Err(Stop::Resumed)
}

/// An EXCEPTIONREPORTRECORD's fHandlerFlags.
fn flags_of(report: &[u8]) -> u32 {
    u32::from_le_bytes([report[4], report[5], report[6], report[7]])
}

impl Process {
    fn read_u32(&mut self, lin: u32) -> Option<u32> {
        let b = self.read_mem(lin, 4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Load the registers from a CONTEXTRECORD.
    fn restore_context(&mut self, ctx: u32) -> bool {
        let Some(b) = self.read_mem(ctx + 112, 64) else {
            return false;
        };
        let v = |i: usize| u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
        let segs = [
            (SegReg::Gs, 0),
            (SegReg::Fs, 1),
            (SegReg::Es, 2),
            (SegReg::Ds, 3),
        ];
        let mut ok = true;
        for (s, i) in segs {
            ok &= self.kernel.desc.load(&mut self.machine, s, v(i) as u16);
        }
        ok &= self
            .kernel
            .desc
            .load(&mut self.machine, SegReg::Cs, v(12) as u16)
            && self
                .kernel
                .desc
                .load(&mut self.machine, SegReg::Ss, v(15) as u16);
        *self.machine.gpr_mut() = [v(6), v(8), v(9), v(7), v(14), v(10), v(5), v(4)];
        self.machine.set_eip(v(11));
        *self.machine.eflags_mut() = (v(13) & 0x0000_0CD5) | emu::flags::RESERVED1 | emu::flags::IF;
        ok
    }
}
