//! The run loop: runs the guest until it ends, dispatches host calls to
//! the API table, hands INT3 and single-step traps to the system trace
//! (or to a [`TrapHook`] in tests) and adds each hit's cost to the clock,
//! and turns every other guest exception into a handler call (DosSetVec)
//! or an [`Outcome::GuestFault`].
//!
//! Tracepoint hits take a shorter way: the CPU runs with the system trace
//! as its `emu::TrapHandler` ([`emu::Machine::run_with`]), which takes a
//! hit inside the CPU's own loop, so a hit ends no slice. The clock, the
//! records and every cycle are the same on both ways.

use emu::{Exit, Fault, Gpr, Limits, SegReg, vector};

use crate::trace::{Next, TrapKind};

use crate::api::{self, Conv, Stop};
use crate::children::{TC_EXCEPTION, TC_EXIT, TC_TRAP};
use crate::error::Outcome;
use crate::layout::*;
use crate::process::{ApiLogEntry, Process};
use crate::state::Kernel;
use crate::thunks::Slot;

/// What the hook did with a trap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookAction {
    /// Handled: registers and memory are as the hook left them; resume.
    Resume,
    /// Not the hook's: treat it as an ordinary guest exception.
    NotMine,
    /// End the run now with [`Outcome::Stopped`] (e.g. a SysDump).
    Stop,
}

/// Receives the debug traps of a run instead of the system trace, before
/// the kernel treats them as guest exceptions: a seam for tests, which see
/// the whole [`Process`] (registers, memory, modules, clock).
pub trait TrapHook {
    /// Called on INT3 and single-step exits.
    fn on_trap(&mut self, process: &mut Process, kind: TrapKind) -> HookAction;
}

/// Instructions per slice of [`emu::Machine::run`].
const SLICE: u64 = 1 << 20;

/// Instructions an API call is charged against `max_instructions`.
const API_CALL_WEIGHT: u64 = 100;

impl Process {
    /// Run the program to its end.
    pub fn run(&mut self) -> Outcome {
        self.run_with_hook(None)
    }

    /// Run the program to its end, offering INT3 and single-step traps to
    /// `hook` instead of the system trace (a test seam). The DLL
    /// initialization routines run first (`startup`), under the tracing
    /// set up since [`Process::new`].
    pub fn run_with_hook(&mut self, mut hook: Option<&mut dyn TrapHook>) -> Outcome {
        if let Err(outcome) =
            self.run_dll_inits(hook.as_mut().map(|h| &mut **h as &mut dyn TrapHook))
        {
            return outcome;
        }
        self.run_loop(hook)
    }

    pub(crate) fn run_loop(&mut self, mut hook: Option<&mut dyn TrapHook>) -> Outcome {
        let started = *self
            .kernel
            .started
            .get_or_insert_with(std::time::Instant::now);
        if !self.kernel.systable.dispatched {
            // The process's one thread is dispatched (run user, 0A).
            self.kernel.systable.dispatched = true;
            self.systable_event(cptrap::Entry::new(cptrap::TypeNum::DISPATCH));
            if self.kernel.tnf.system.on {
                self.tnf_thread_switch(0, 1);
            }
        }
        loop {
            let remaining = self
                .cfg
                .max_instructions
                .map(|mx| mx.saturating_sub(self.kernel.executed + self.kernel.host_work));
            if remaining == Some(0) {
                return Outcome::InstructionLimit(self.cfg.max_instructions.unwrap_or(0));
            }
            if let Some(o) = self.host_limits(started) {
                return o;
            }
            let before = self.machine.instructions();
            let limits = Limits {
                instructions: Some(
                    remaining
                        .unwrap_or(SLICE)
                        .min(SLICE)
                        .min(self.quantum_left()),
                ),
                cycles: None,
            };
            let mut sysdump = false;
            let exit = if hook.is_none() && self.kernel.trace.is_some() {
                // Tracepoint hits are taken inside the CPU's run loop.
                let mut hits = TraceHits {
                    ids: (self.pcb.pid, self.current_tid() as u16),
                    kernel: &mut self.kernel,
                    sysdump: false,
                };
                let exit = self.machine.run_with(limits, Some(&mut hits));
                sysdump = hits.sysdump;
                exit
            } else {
                self.machine.run(limits)
            };
            self.kernel.executed += self.machine.instructions() - before;
            self.report_progress();
            if sysdump {
                return Outcome::Stopped;
            }
            match exit {
                Exit::HostCall { linear } => {
                    if let Some(o) = self.host_call(linear) {
                        return o;
                    }
                }
                Exit::Exception { fault, .. } => {
                    let zapped = TrapKind::of(&exit) == Some(TrapKind::Breakpoint)
                        && self.systable_zap(
                            self.machine
                                .cpu()
                                .eip
                                .wrapping_sub(1)
                                .wrapping_add(self.machine.cpu().sreg(SegReg::Cs).base),
                        );
                    if let Some(kind) = TrapKind::of(&exit) {
                        match hook.as_mut() {
                            Some(h) => match h.on_trap(self, kind) {
                                HookAction::Resume => continue,
                                HookAction::Stop => return Outcome::Stopped,
                                HookAction::NotMine => {}
                            },
                            None => match self.trace_trap(kind) {
                                Next::Resume => continue,
                                Next::SysDump { .. } => return Outcome::Stopped,
                                Next::NotOurs => {}
                            },
                        }
                    }
                    if zapped {
                        // A CP interface zap alone: the original instruction
                        // runs out of line, as after a tracepoint hit.
                        self.machine.resume_at_tracepoint();
                        continue;
                    }
                    if let Some(o) = self.guest_exception(fault) {
                        let term = if self.machine.cpu().sreg(SegReg::Cs).big() {
                            TC_EXCEPTION
                        } else {
                            TC_TRAP
                        };
                        match o {
                            Outcome::GuestFault { .. } => match self.process_ends(term, 0, o) {
                                Some(o) => return o,
                                None => continue,
                            },
                            o => return o,
                        }
                    }
                }
                Exit::InstructionLimit | Exit::CycleLimit => {
                    if let Some(o) = self.preempt_if_due() {
                        return o;
                    }
                }
                Exit::Halted => return Outcome::CpuStopped("HLT"),
                Exit::Shutdown => return Outcome::CpuStopped("triple fault"),
            }
        }
    }

    /// The limits outside the guest's instruction count: Ctrl-C and the
    /// wall clock, checked between slices and host calls.
    fn host_limits(&self, started: std::time::Instant) -> Option<Outcome> {
        if self
            .cfg
            .interrupt
            .as_ref()
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
        {
            return Some(Outcome::Interrupted);
        }
        match self.cfg.max_wall {
            Some(limit) if started.elapsed() >= limit => Some(Outcome::TimeLimit(limit)),
            _ => None,
        }
    }

    /// A trap offered to the system trace after the CPU exited on it.
    fn trace_trap(&mut self, kind: TrapKind) -> Next {
        let ids = (self.pcb.pid, self.current_tid() as u16);
        trace_trap(&mut self.kernel, &mut self.machine, kind, ids)
    }

    /// An exception the hook did not take: a DosSetVec handler if one is
    /// set for it, else the end of the run.
    fn guest_exception(&mut self, fault: Fault) -> Option<Outcome> {
        // The x87 arithmetic the machine leaves to the kernel.
        if fault.vector == vector::UD && crate::x87::emulate(self) {
            return None;
        }
        let cpu = self.machine.cpu();
        let (cs, eip) = (cpu.sreg(SegReg::Cs).selector, cpu.eip);
        let mut entry = cptrap::Entry::new(cptrap::TypeNum::EXCEPTION);
        entry.frame.aux = u16::from(fault.vector);
        entry.words = [
            cpu.sreg(SegReg::Cs).base.wrapping_add(eip),
            fault.error.unwrap_or(0),
            if fault.vector == vector::PF {
                cpu.cr2
            } else {
                0
            },
            u32::from(cs),
        ];
        self.systable_event(entry);
        let handler = self
            .pcb
            .vectors
            .get(usize::from(fault.vector))
            .copied()
            .unwrap_or(0);
        if handler != 0
            && !self.machine.cpu().sreg(SegReg::Cs).big()
            && self.enter_handler16(handler)
        {
            return None;
        }
        if self.machine.cpu().sreg(SegReg::Cs).big()
            && let Some(handled) = self.dispatch_exception32(fault)
        {
            return handled;
        }
        Some(Outcome::GuestFault {
            vector: fault.vector,
            error: fault.error,
            cs,
            eip,
            cr2: (fault.vector == vector::PF).then_some(self.machine.cpu().cr2),
        })
    }

    /// Enter a 16-bit exception handler as an interrupt would: FLAGS, CS,
    /// IP pushed on the current stack, TF and RF cleared.
    fn enter_handler16(&mut self, handler: u32) -> bool {
        let cpu = self.machine.cpu().clone();
        let words = [
            cpu.eflags as u16,
            cpu.sreg(SegReg::Cs).selector,
            cpu.eip as u16,
        ];
        for w in words {
            if !self.push16(w) {
                return false;
            }
        }
        if !self
            .kernel
            .desc
            .load(&mut self.machine, SegReg::Cs, (handler >> 16) as u16)
        {
            return false;
        }
        self.machine.set_eip(handler & 0xFFFF);
        // As an interrupt gate's entry: the handler runs without the
        // guest's TF (a guest single-stepping itself would trap inside its
        // own handler); the pushed FLAGS keep it, so IRET resumes stepping.
        *self.machine.eflags_mut() &= !(emu::flags::TF | emu::flags::RF);
        true
    }

    /// Push a word on a 16-bit stack.
    pub(crate) fn push16(&mut self, v: u16) -> bool {
        let ss = *self.machine.cpu().sreg(SegReg::Ss);
        let sp = (self.machine.cpu().gpr[Gpr::Esp] as u16).wrapping_sub(2);
        let ok = self
            .machine
            .write_linear(ss.base.wrapping_add(u32::from(sp)), &v.to_le_bytes())
            .is_ok();
        let e = &mut self.machine.gpr_mut()[Gpr::Esp];
        *e = (*e & 0xFFFF_0000) | u32::from(sp);
        ok
    }

    /// Push a dword on a 32-bit stack.
    pub(crate) fn push32(&mut self, v: u32) -> bool {
        let ss = *self.machine.cpu().sreg(SegReg::Ss);
        let esp = self.machine.cpu().gpr[Gpr::Esp].wrapping_sub(4);
        let ok = self
            .machine
            .write_linear(ss.base.wrapping_add(esp), &v.to_le_bytes())
            .is_ok();
        self.machine.gpr_mut()[Gpr::Esp] = esp;
        ok
    }

    /// Reload the data segment registers from the descriptor tables, as
    /// the return from an OS/2 system call does: a DosReallocSeg the
    /// program made is seen at once. A selector whose descriptor is gone
    /// becomes null.
    fn refresh_segments(&mut self) {
        for s in [SegReg::Es, SegReg::Ds, SegReg::Fs, SegReg::Gs, SegReg::Ss] {
            let sel = self.machine.cpu().sreg(s).selector;
            if sel & !3 != 0 && !self.kernel.desc.load(&mut self.machine, s, sel) && s != SegReg::Ss
            {
                self.machine.set_segment(s, emu::Segment::null(0));
            }
        }
    }

    fn stack_word(&mut self, at: u32, n: u32) -> Option<u32> {
        let mut b = [0u8; 4];
        self.machine.read_linear(at, &mut b[..n as usize]).ok()?;
        Some(u32::from_le_bytes(b))
    }

    /// A host call at `linear`: `None` to go on running.
    fn host_call(&mut self, linear: u32) -> Option<Outcome> {
        let off = linear.wrapping_sub(THUNK_BASE);
        let slot = off
            .is_multiple_of(4)
            .then(|| self.kernel.thunks.slot(off / 4))
            .flatten();
        let Some(slot) = slot else {
            return Some(Outcome::HostError(format!(
                "host call at unknown address {linear:#x}"
            )));
        };
        match slot {
            Slot::EntryReturn => {
                let code = self.machine.cpu().gpr[Gpr::Eax];
                self.process_ends(TC_EXIT, code, Outcome::Exited(code))
            }
            Slot::InitReturn => Some(Outcome::Returned(self.machine.cpu().gpr[Gpr::Eax])),
            Slot::ThreadReturn => self.exit_thread(self.machine.cpu().gpr[Gpr::Eax]),
            // A routine that returned: as DosExitList(EXLST_EXIT).
            Slot::ExitListReturn | Slot::TermReturn => {
                self.process_ends(TC_EXIT, 0, Outcome::Exited(0))
            }
            Slot::Api(i) => self.call_api(i),
        }
    }

    fn call_api(&mut self, index: usize) -> Option<Outcome> {
        let bound = self.kernel.thunks.api(index).clone();
        let unimplemented = || Outcome::Unimplemented {
            module: bound.module.clone(),
            ordinal: bound.ordinal,
            name: bound.def.map(|d| d.name),
        };
        let Some(def) = bound.def else {
            return Some(unimplemented());
        };
        let Some(func) = def.func else {
            return Some(unimplemented());
        };
        let far16 = match def.conv {
            Conv::Far16 => true,
            Conv::Sys32 | Conv::Optlink => false,
            Conv::Value(_) | Conv::Data(_) => {
                return Some(Outcome::HostError(format!(
                    "{}.{} is a value, not a function",
                    bound.module, bound.ordinal
                )));
            }
        };
        let cpu = self.machine.cpu();
        let ss = *cpu.sreg(SegReg::Ss);
        let sp = if ss.big() {
            cpu.gpr[Gpr::Esp]
        } else {
            cpu.gpr[Gpr::Esp] & 0xFFFF
        };
        let at = |o: u32| {
            if ss.big() {
                ss.base.wrapping_add(sp.wrapping_add(o))
            } else {
                ss.base.wrapping_add(sp.wrapping_add(o) & 0xFFFF)
            }
        };
        let layout = api::arg_offsets(def.args, far16);
        let mut vals = Vec::with_capacity(layout.len());
        for (off, size) in &layout {
            match self.stack_word(at(*off), *size) {
                Some(v) => vals.push(v),
                None => {
                    return Some(Outcome::HostError(format!(
                        "{}: the caller's stack is not readable",
                        def.name
                    )));
                }
            }
        }
        if def.conv == Conv::Optlink {
            let g = &self.machine.cpu().gpr;
            for (v, r) in vals.iter_mut().zip([g[Gpr::Eax], g[Gpr::Edx], g[Gpr::Ecx]]) {
                *v = r;
            }
        }
        let (ret_ip, ret_cs) = if far16 {
            (self.stack_word(at(0), 2), self.stack_word(at(2), 2))
        } else {
            (
                self.stack_word(at(0), 4),
                Some(u32::from(self.machine.cpu().sreg(SegReg::Cs).selector)),
            )
        };
        let (Some(ret_ip), Some(ret_cs)) = (ret_ip, ret_cs) else {
            return Some(Outcome::HostError(format!(
                "{}: no return address",
                def.name
            )));
        };
        let call = api::Call { vals, far16 };
        // A host call's work counts against the instruction budget, so a
        // loop of (failing) API calls ends like any other loop.
        self.kernel.host_work += API_CALL_WEIGHT;
        let t = self.kernel.clock.now(self.machine.cycles());
        self.kernel.fs.now =
            crate::fs::dos_stamp(t.year, t.month, t.day, t.hour, t.minute, t.second);
        let args_text = self.cfg.api_log.then(|| api::format_args(self, def, &call));
        if let Some(e) = crate::systable::before_call(def.name, &call.vals, far16) {
            self.systable_event(e);
        }
        let result = if self.kernel.tnf.system.on {
            self.tnf_syscall(&bound.module, def, func, &call)
        } else {
            func.call(self, &call)
        };
        // A call that blocks is recorded when it blocks, with code 0 (the
        // code it returns is only known when it wakes).
        let recorded = match &result {
            Ok(rc) => Some(*rc),
            Err(Stop::Block(_)) => Some(0),
            Err(_) => None,
        };
        if let Some(rc) = &recorded {
            let return_address = if far16 {
                (ret_cs << 16) | (ret_ip & 0xFFFF)
            } else {
                ret_ip
            };
            let module = bound.module.clone();
            self.systable_event(cptrap::Entry::api_call(
                &module,
                bound.ordinal as u16,
                *rc,
                return_address,
            ));
            let rc = *rc;
            let after = crate::systable::after_call(def.name, &call.vals, rc, |ptr, len| {
                let lin = self.ptr(ptr, far16, len)?;
                let bytes = self.read_mem(lin, len)?;
                let mut b = [0u8; 4];
                b[..bytes.len().min(4)].copy_from_slice(&bytes[..bytes.len().min(4)]);
                Some(u32::from_le_bytes(b))
            });
            if let Some(e) = after {
                self.systable_event(e);
            }
        }
        if let Some(args) = args_text {
            let entry = ApiLogEntry {
                // A child process's calls name it (the first process's
                // do not, so a one-process log reads as before).
                caller: match self.pcb.pid {
                    1 => format!("{ret_cs:04X}:{ret_ip:04X}"),
                    pid => format!("pid {pid} {ret_cs:04X}:{ret_ip:04X}"),
                },
                module: bound.module.clone(),
                ordinal: bound.ordinal,
                name: def.name,
                args,
                result: match &result {
                    Ok(rc) => format!("rc={rc}"),
                    Err(Stop::Exit(c)) => format!("exit {c}"),
                    Err(Stop::ExitThread(c)) => format!("thread exit {c}"),
                    Err(Stop::Block(w)) => format!("blocks ({w:?})"),
                    Err(Stop::Resumed) => format!("resumes at {:08X}", self.machine.cpu().eip),
                    Err(Stop::Outcome(o)) => o.to_string(),
                },
            };
            match self.host.log_sink.as_mut() {
                Some(sink) => sink(&entry),
                None => self.host.log.push(entry),
            }
        }
        let (rc, wait) = match result {
            Ok(rc) => (rc, None),
            Err(Stop::Block(w)) => (0, Some(w)),
            Err(Stop::Exit(code)) => {
                return self.process_ends(TC_EXIT, code, Outcome::Exited(code));
            }
            Err(Stop::ExitThread(code)) => return self.exit_thread(code),
            Err(Stop::Outcome(o @ Outcome::UnhandledException { .. })) => {
                return self.process_ends(TC_EXCEPTION, 0, o);
            }
            Err(Stop::Outcome(o)) => return Some(o),
            Err(Stop::Resumed) => return None,
        };
        self.refresh_segments();
        if far16 {
            let arg_bytes: u32 = layout.iter().map(|(_, s)| s).sum();
            let new_sp = sp.wrapping_add(4 + arg_bytes);
            if !self
                .kernel
                .desc
                .load(&mut self.machine, SegReg::Cs, ret_cs as u16)
            {
                return Some(Outcome::GuestFault {
                    vector: vector::GP,
                    error: Some(ret_cs & 0xFFFC),
                    cs: ret_cs as u16,
                    eip: ret_ip,
                    cr2: None,
                });
            }
            let gpr = self.machine.gpr_mut();
            gpr[Gpr::Esp] = if ss.big() {
                new_sp
            } else {
                (gpr[Gpr::Esp] & 0xFFFF_0000) | (new_sp & 0xFFFF)
            };
            gpr[Gpr::Eax] = (gpr[Gpr::Eax] & 0xFFFF_0000) | (rc & 0xFFFF);
            self.machine.set_eip(ret_ip & 0xFFFF);
        } else {
            let gpr = self.machine.gpr_mut();
            gpr[Gpr::Esp] = sp.wrapping_add(4);
            gpr[Gpr::Eax] = rc;
            self.machine.set_eip(ret_ip);
        }
        match wait {
            Some(w) => self.block_current(w, far16),
            None => None,
        }
    }

    /// The running thread ends with `code`: the process too if it is
    /// thread 1 or the last; else another thread runs.
    fn exit_thread(&mut self, code: u32) -> Option<Outcome> {
        match self.end_current_thread(code) {
            crate::threads::ExitScope::Process(c) => {
                self.process_ends(TC_EXIT, c, Outcome::Exited(c))
            }
            crate::threads::ExitScope::Thread => self.reschedule(),
        }
    }
}

/// A trap offered to the system trace, on either path: its cost goes on
/// the clock, then TRSPOOL polls if due.
#[inline]
fn trace_trap(
    kernel: &mut Kernel,
    machine: &mut emu::Machine,
    kind: TrapKind,
    (pid, tid): (u16, u16),
) -> Next {
    let Some(trace) = kernel.trace.as_mut() else {
        return Next::NotOurs;
    };
    let clock = &mut kernel.clock;
    let now = trace.stamp(clock, machine.cycles());
    let at = crate::trace::fine::HitClock {
        cycle: clock.cycles(machine.cycles()),
        hz: clock.hz,
        tid,
    };
    let dispatch = trace.on_trap_at(machine, kind, now, pid, Some(at));
    clock.add_cycles(dispatch.cycles);
    if trace.spooling() {
        let cycles = machine.cycles();
        trace.after_hit(clock.millis(cycles), clock.now(cycles));
    }
    dispatch.next
}

/// The system trace as the CPU's [`emu::TrapHandler`]: a tracepoint hit
/// is taken inside `emu::Machine::run_with`, with no exit, no exception
/// delivery and no copy of the CPU. Anything else (a guest's own INT3, a
/// CP interface zap) is declined and takes the exit path.
struct TraceHits<'k> {
    kernel: &'k mut Kernel,
    /// The running process and thread.
    ids: (u16, u16),
    /// A hit's program asked for a system dump: the run stops (the hit
    /// was handled; the CPU's exit is not offered again).
    sysdump: bool,
}

impl emu::TrapHandler for TraceHits<'_> {
    #[inline]
    fn breakpoint(&mut self, machine: &mut emu::Machine, at: u32) -> bool {
        let ours = self
            .kernel
            .trace
            .as_ref()
            .is_some_and(|t| t.runtime().is_tracepoint(machine, at));
        if !ours || self.kernel.systable.zap_at(at).is_some() {
            return false;
        }
        match trace_trap(self.kernel, machine, TrapKind::Breakpoint, self.ids) {
            Next::Resume => true,
            Next::SysDump { .. } => {
                self.sysdump = true;
                false
            }
            Next::NotOurs => false,
        }
    }
}
