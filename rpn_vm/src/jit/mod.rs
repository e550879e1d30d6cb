//! A native-code tier for verified programs, on x86-64 hosts.
//!
//! [`Compiled::new`] translates a verified [`Program`] into x86-64 machine
//! code once (with iced-x86's `CodeAssembler`, mapped executable with
//! `memmap2`); [`Compiled::run`] then runs a hit and returns exactly what
//! [`Interpreter::run`] returns for the same inputs: the outcome, the record
//! (bytes, major, minor, incomplete flag), the cycles, the variable updates,
//! and the interpreter's final stack ([`Interpreter::stack`]).
//!
//! How: the top-of-stack index is known at compile time at every
//! instruction, so every push and pop is a load or store at a constant
//! offset of the interpreter's own stack, or no memory access at all where
//! the compiler knows the value (a constant, a guest register, EAX) and a
//! later write replaces it before the code can leave the straight line;
//! `Log WN/DN` write the interpreter's log buffer directly; memory reads,
//! object lookups, CRMA, memory and string logs call back into the
//! interpreter's own helpers. See `compile.rs` for the translation and
//! `native.rs` for the (only) unsafe code and its audit note.
//!
//! Two entries. Most programs (no callbacks, no variable index read from
//! the stack, no SetMaj/SetMin) also get *lean* code, run when the hit's
//! log limit is at least everything the program can log (each `Log WN/DN`
//! once: jumps only go forward): one comparison per hit instead of one per
//! `Log WN/DN`, no frame to fill, and the registers read in place where
//! the machine lends them ([`TracedMachine::register_file`], or
//! [`TracedMachine::gpr_file`] for a program that pushes only general
//! registers; a machine that gathers them has them copied once per
//! hit). Other hits, and other
//! programs, run the frame entry.
//!
//! [`Compiled::new`] returns `None`, and callers keep the interpreter,
//! when:
//! * the host is not x86-64;
//! * two paths reach an instruction with different top-of-stack indices
//!   (a jump over a push, say): the compiler keeps the index static
//!   rather than track it at run time. Programs TRCUST writes, and most
//!   hand-written ones, have one index per instruction;
//! * executable memory cannot be mapped.
//!
//! Use: compile once when a tracepoint's program is loaded
//! (`Compiled::new(&program)`), keep it beside the program (it is `Send`
//! and `Sync`), and at each hit call `compiled.run(&mut interp, machine,
//! vars, hit)` where `interp.run(&program, machine, vars, hit)` was called;
//! the result borrows `interp` the same way.
//!
//! Every opcode is compiled. A hit whose variables are fewer than an
//! immediate index of the program (`Push V,i` with `i >= vars.len()`)
//! is run by the interpreter: it ends in an error, and the native code
//! does not check immediate indices (the verifier checked them against the
//! DTO's variables).

#[cfg(target_arch = "x86_64")]
mod callbacks;
#[cfg(target_arch = "x86_64")]
mod compile;
#[cfg(target_arch = "x86_64")]
mod frame;
#[cfg(target_arch = "x86_64")]
mod native;
#[cfg(target_arch = "x86_64")]
mod ops;

use crate::interp::{Hit, Interpreter, RunResult};
use crate::machine::TracedMachine;
use crate::verify::Program;

/// A program compiled to native code.
#[derive(Debug)]
pub struct Compiled {
    #[cfg(target_arch = "x86_64")]
    code: native::Code,
    /// The lean code, run when the hit's log limit is at least `bound`.
    #[cfg(target_arch = "x86_64")]
    lean: Option<native::LeanCode>,
    /// The most the program can log.
    #[cfg(target_arch = "x86_64")]
    bound: u32,
    /// Whether the program reads only the eight general registers.
    #[cfg(target_arch = "x86_64")]
    gprs_only: bool,
    /// The variables the code assumes (one more than the largest
    /// immediate index); with fewer, `run` interprets `program`.
    #[cfg(target_arch = "x86_64")]
    vars: usize,
    /// Whether the code reads the frame's `Slow` block.
    #[cfg(target_arch = "x86_64")]
    slow: bool,
    /// The program, for hits with fewer variables than it names.
    #[cfg(target_arch = "x86_64")]
    program: Program,
    #[cfg(not(target_arch = "x86_64"))]
    never: std::convert::Infallible,
}

impl Compiled {
    /// Compiles `program`; `None` where the interpreter must run it (see
    /// the module doc).
    #[cfg(target_arch = "x86_64")]
    pub fn new(program: &Program) -> Option<Compiled> {
        Compiled::new_many([program]).pop().flatten()
    }

    /// Compiles `program`; always `None` on this host.
    #[cfg(not(target_arch = "x86_64"))]
    pub fn new(_program: &Program) -> Option<Compiled> {
        None
    }

    /// Compiles several programs into one executable mapping (a DTO's
    /// tracepoints, say), giving each the result [`Compiled::new`] would.
    #[cfg(target_arch = "x86_64")]
    pub fn new_many<'p>(programs: impl IntoIterator<Item = &'p Program>) -> Vec<Option<Compiled>> {
        let compiled: Vec<(&Program, Option<compile::Output>)> = programs
            .into_iter()
            .map(|program| (program, compile::compile(program)))
            .collect();
        let outs = || compiled.iter().filter_map(|(_, out)| out.as_ref());
        let bytes: Vec<&[u8]> = outs().map(|out| out.code.as_slice()).collect();
        let lean: Vec<&[u8]> = outs().filter_map(|out| out.lean.as_deref()).collect();
        let (codes, leans) = native::Code::new_many(&bytes, &lean).unwrap_or_default();
        let (mut codes, mut leans) = (codes.into_iter(), leans.into_iter());
        compiled
            .iter()
            .map(|(program, out)| {
                let out = out.as_ref()?;
                // Taken in order, so that a failed mapping gives `None`s.
                let code = codes.next()?;
                let lean = match out.lean {
                    Some(_) => Some(leans.next()?),
                    None => None,
                };
                Some(Compiled {
                    code,
                    lean,
                    bound: out.bound,
                    gprs_only: out.gprs_only,
                    vars: out.vars,
                    slow: out.slow,
                    program: (*program).clone(),
                })
            })
            .collect()
    }

    /// Compiles several programs; always `None`s on this host.
    #[cfg(not(target_arch = "x86_64"))]
    pub fn new_many<'p>(programs: impl IntoIterator<Item = &'p Program>) -> Vec<Option<Compiled>> {
        programs.into_iter().map(|_| None).collect()
    }

    /// The machine code of the lean entry (x86-64), run when the hit's log
    /// limit is at least what the program can log and the program needs
    /// neither callbacks, variable index checks nor SetMaj/SetMin; `None`
    /// where there is none.
    pub fn lean_code(&self) -> Option<&[u8]> {
        #[cfg(target_arch = "x86_64")]
        return self.lean.as_ref().map(native::LeanCode::bytes);
        #[cfg(not(target_arch = "x86_64"))]
        match self.never {}
    }

    /// The machine code (x86-64), for inspection and disassembly.
    pub fn code(&self) -> &[u8] {
        #[cfg(target_arch = "x86_64")]
        return self.code.bytes();
        #[cfg(not(target_arch = "x86_64"))]
        match self.never {}
    }

    /// Runs one hit, with the same inputs and the same result as
    /// [`Interpreter::run`] on the program this was compiled from; leaves
    /// `interp` in the state that run would (its stack and log buffer).
    #[cfg(target_arch = "x86_64")]
    #[inline]
    pub fn run<'s, M: TracedMachine>(
        &self,
        interp: &'s mut Interpreter,
        machine: &mut M,
        vars: &mut [u32],
        hit: Hit,
    ) -> RunResult<'s> {
        use crate::interp::{HitOutcome, Record};
        use frame::*;

        if let Some(lean) = &self.lean
            && vars.len() >= self.vars
            && hit.logmax >= self.bound as usize
        {
            // Everything the program can log fits: the code checks no
            // limit, reads the registers where the machine keeps them when
            // it can, needs no frame (no callbacks, no SetMaj/SetMin), and
            // writes all sixteen stack slots (zeros where the program
            // leaves them).
            let copy: [u32; 16];
            let regs: *const u32 = match (self.gprs_only, machine.gpr_file()) {
                (true, Some(gprs)) => gprs.as_ptr(),
                _ => match machine.register_file() {
                    Some(regs) => regs.as_ptr(),
                    None => {
                        copy = machine.registers();
                        copy.as_ptr()
                    }
                },
            };
            let log = interp.data.bytes.as_mut_ptr();
            let exit = lean.call(regs, &raw mut *interp, log, vars.as_mut_ptr());
            // The record first and on its own, as below.
            if exit.status == u64::from(STATUS_LOGGED) {
                return RunResult {
                    outcome: HitOutcome::Logged(Record {
                        major: hit.major,
                        minor: hit.minor,
                        data: interp.data.as_slice(),
                        incomplete: false,
                    }),
                    cycles: exit.cycles,
                };
            }
            return RunResult {
                outcome: lean_ending(exit.status as u32),
                cycles: exit.cycles,
            };
        }
        self.run_frame(interp, machine, vars, hit)
    }

    /// [`Compiled::run`] through the frame entry, or the interpreter for
    /// a hit with fewer variables than the program names. Out of line, so
    /// that the lean path's result stays in registers where `run` is
    /// inlined.
    #[cfg(target_arch = "x86_64")]
    #[inline(never)]
    fn run_frame<'s, M: TracedMachine>(
        &self,
        interp: &'s mut Interpreter,
        machine: &mut M,
        vars: &mut [u32],
        hit: Hit,
    ) -> RunResult<'s> {
        use crate::interp::{HitOutcome, LOG_CAPACITY, Record, RunError};
        use crate::verify::STACK_SLOTS;
        use frame::*;

        if vars.len() < self.vars {
            // An immediate index is out of range: a rare error hit, which
            // the interpreter runs (the native code does not check them).
            return interp.run(&self.program, machine, vars, hit);
        }
        let vars_len = vars.len();
        let vars_ptr = vars.as_mut_ptr();
        let logmax = hit.logmax.min(LOG_CAPACITY);
        // The frame entry's code counts on a zeroed stack (the lean code
        // writes every slot itself).
        interp.stack = [0; STACK_SLOTS];
        let log = interp.data.bytes.as_mut_ptr();
        // The whole interpreter: the code writes its final stack index and
        // log length there too.
        let base: *mut Interpreter = &raw mut *interp;
        // Filled only for code that reads it (most programs neither call
        // back nor check a variable index).
        let mut slow_block: Slow;
        let slow = if self.slow {
            slow_block = Slow {
                log_len: 0,
                cycles: 0,
                log,
                interp: base,
                vars: vars_ptr,
                vars_len: vars_len as u64,
                machine: (machine as *mut M).cast(),
                callback: native::dispatch::<M>,
            };
            &raw mut slow_block
        } else {
            std::ptr::null_mut()
        };
        let mut frame = Frame {
            // All sixteen: straight-line reads beat testing which are
            // needed. Straight into the frame: the native code reads them
            // as dwords.
            regs: machine.registers(),
            logmax: logmax as u64,
            major: hit.major,
            minor: hit.minor,
            slow,
        };
        let exit = self.code.call(&mut frame, base, log, vars_ptr);
        // The code set `interp.tos` and `interp.data.len` (at most
        // `logmax`; `as_slice` would catch a code generator bug).
        let status = exit.status as u32;
        let mut cycles = exit.cycles;
        // A logged record is returned from here rather than from one
        // `match` for all outcomes: built once for every outcome, the
        // compiler assembles the record through narrow stores and copies it
        // with a wide load, a store-forwarding stall that costs as much as
        // the hit itself.
        if status <= STATUS_INCOMPLETE {
            return RunResult {
                outcome: HitOutcome::Logged(Record {
                    major: frame.major,
                    minor: frame.minor,
                    data: interp.data.as_slice(),
                    incomplete: status == STATUS_INCOMPLETE,
                }),
                cycles,
            };
        }
        let outcome = match status {
            STATUS_ABORTED => HitOutcome::Aborted,
            STATUS_REMOVED => HitOutcome::Removed,
            STATUS_SYSDUMP => HitOutcome::SysDump,
            STATUS_PARTIAL_WN | STATUS_PARTIAL_DN => {
                let n = (exit.status >> 32) as u32;
                cycles += log_partial(interp, status == STATUS_PARTIAL_DN, n, logmax);
                HitOutcome::Logged(Record {
                    major: frame.major,
                    minor: frame.minor,
                    data: interp.data.as_slice(),
                    incomplete: true,
                })
            }
            _ => HitOutcome::Error(RunError::VariableOutOfRange {
                index: (exit.status >> 32) as u32,
                vars: vars_len,
            }),
        };
        RunResult { outcome, cycles }
    }

    /// Runs one hit; never called on this host ([`Compiled::new`] is
    /// always `None`).
    #[cfg(not(target_arch = "x86_64"))]
    pub fn run<'s, M: TracedMachine>(
        &self,
        _interp: &'s mut Interpreter,
        _machine: &mut M,
        _vars: &mut [u32],
        _hit: Hit,
    ) -> RunResult<'s> {
        match self.never {}
    }
}

/// How a lean run that logged nothing ended: the lean code ends only by
/// logging, `Abort`, `Remove` or `SysDump` (no callback can fail, no log
/// overruns, no variable index is checked).
#[cfg(target_arch = "x86_64")]
#[cold]
fn lean_ending<'s>(status: u32) -> crate::interp::HitOutcome<'s> {
    use crate::interp::HitOutcome;
    match status {
        frame::STATUS_ABORTED => HitOutcome::Aborted,
        frame::STATUS_REMOVED => HitOutcome::Removed,
        _ => HitOutcome::SysDump,
    }
}

/// `Log DN,n` (`dn`) or `Log WN,n` that does not fit the log limit, from
/// the stack index and log length the native code left: logs what fits,
/// as the interpreter does, and returns the cycles it adds. The hit ends
/// incomplete after it.
#[cfg(target_arch = "x86_64")]
#[cold]
#[inline(never)]
fn log_partial(interp: &mut Interpreter, dn: bool, n: u32, logmax: usize) -> u64 {
    let mut st = crate::interp::Stack {
        slots: interp.stack,
        tos: interp.tos,
    };
    let mut cycles = 0;
    // Always fails: the native code ends the hit here only when the items
    // do not all fit.
    let _ = if dn {
        interp.data.log_items::<4>(&mut st, n, logmax, &mut cycles)
    } else {
        interp.data.log_items::<2>(&mut st, n, logmax, &mut cycles)
    };
    interp.tos = st.tos;
    cycles
}
