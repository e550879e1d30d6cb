//! Exit lists: the routines DosExitList adds, run in guest code when a
//! process ends, as OS/2 runs them.
//!
//! What OS/2 documents, and this does:
//! - The list is kept in call order: by invocation order (the high byte
//!   of the function code's low word, 0x00 first, 0xFF last), and among
//!   routines of the same order the last added first (LIFO).
//! - When the process ends (DosExit, thread 1's return, the last thread's
//!   end, an unhandled fault, DosKillProcess), every other thread ends
//!   and thread 1 runs the routines, each with the stack reset to the
//!   program's initial stack and the termination code (TC_EXIT,
//!   TC_TRAP, TC_KILLPROCESS, TC_EXCEPTION) as its one argument: a dword
//!   at ESP+4 for a 32-bit routine (DosExitList, DOSCALLS.296), a word
//!   at SS:SP+4 for a 16-bit one (DOSCALLS.7, a 16:16 address). A
//!   routine ends with DosExitList(EXLST_EXIT), which runs the next; the
//!   process ends after the last. Each routine leaves the list as it is
//!   called, so one that faults is not called again.
//!
//! Decisions, where the documents leave room:
//! - A routine that returns instead of calling EXLST_EXIT (OS/2 hangs
//!   the process) returns to a kernel address that does EXLST_EXIT.
//! - DosExit and an unhandled fault inside a routine go on with the
//!   next routine as EXLST_EXIT does; the process's codes stay those of
//!   its first end.
//! - A routine's registers: CS:EIP the routine, SS:ESP the initial
//!   stack (a 16-bit routine in a 32-bit program gets the tiled
//!   selector of the flat stack, a 32-bit routine in a 16-bit program
//!   the flat address of its stack), DS and ES the flat data selector
//!   for a 32-bit routine and the program's automatic data segment for a
//!   16-bit one, FS the TIB, the other registers zero, interrupts on.
//!   The thread's exception handler chain is emptied (its records were
//!   on the stack that was reset).
//! - TC_HARDERROR is never given: no hard error ends a process here.
//! - Errors: an action other than EXLST_ADD, EXLST_REMOVE and EXLST_EXIT
//!   is ERROR_INVALID_FUNCTION, as are EXLST_REMOVE of a routine not on
//!   the list and EXLST_EXIT outside exit-list processing; an order byte
//!   with REMOVE or EXIT, or a nonzero high word (32-bit), is
//!   ERROR_INVALID_DATA; more than [`MAX_EXIT_ROUTINES`] routines is
//!   ERROR_NOT_ENOUGH_MEMORY. Adding a routine already on the list adds
//!   it again (it runs twice); REMOVE takes out the first in call order.
//!
//! DLL termination (the LX format's §3.3, and "all DosExitList routines
//! are called before DLL termination routines"):
//! - After the last exit-list routine, thread 1 calls the termination
//!   routine of each LX DLL whose entry object is 32-bit and whose
//!   initialization succeeded, in the reverse of the order their
//!   initialization ran (a DLL ends before the DLLs it imports). Each
//!   gets the library termination registers: EAX to EBP zero but ESP,
//!   CS/DS/ES/SS flat, FS the TIB, GS 0, interrupts on, on the initial
//!   stack as above, with `[ESP]` a kernel return address, `[ESP+4]` the
//!   module handle and `[ESP+8]` 1.
//! - Per-process termination (module flag 0x40000000) and global
//!   termination (the flag clear) both run here. OS/2 calls a global
//!   routine once, when the last process using the DLL frees it; here
//!   every process has its own instance of each DLL (`children.rs`),
//!   initialized when that process loads it, so the process's end is the
//!   last use of its instance, as it is on OS/2 for a DLL one process
//!   uses.
//! - 16-bit DLLs (NE, or an LX entry in a 16-bit object) have no
//!   termination; they use DosExitList.
//! - What a routine returns is not looked at (the process is ending).
//!   A routine that faults, calls DosExit or is killed goes on with the
//!   next routine, as an exit-list routine does; DosExitList(EXLST_EXIT)
//!   from a termination routine is ERROR_INVALID_FUNCTION, as outside
//!   exit-list processing.
//! - A DLL that DosFreeModule frees runs its routine inside that call
//!   (`api/modules.rs`) and is taken off the list.

use emu::{Gpr, SegReg};

use crate::error::Outcome;
use crate::layout::*;
use crate::process::Process;
use crate::rc::*;
use crate::thunks::Slot;

/// Routines one process's exit list holds.
pub const MAX_EXIT_ROUTINES: usize = 256;

/// DosExitList's actions.
pub(crate) const EXLST_ADD: u32 = 1;
pub(crate) const EXLST_REMOVE: u32 = 2;
pub(crate) const EXLST_EXIT: u32 = 3;

/// One routine on the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ExitRoutine {
    /// A flat address (32-bit) or a 16:16 one.
    pub(crate) addr: u32,
    /// The invocation order (0 first).
    pub(crate) order: u8,
    /// Added by the 16-bit DosExitList.
    pub(crate) far16: bool,
}

/// A process running its exit list: how it ended.
#[derive(Clone, Debug)]
pub(crate) struct Exiting {
    /// TC_* and the DosExit code.
    pub(crate) term: u32,
    pub(crate) code: u32,
    /// How the run ends when this is the first process.
    pub(crate) outcome: Outcome,
    /// The initial stack: SS and ESP.
    stack: (u16, u32),
    /// Running a DLL termination routine (the exit list is done).
    pub(crate) in_dll_term: bool,
}

/// Add `r` to `list` in call order (LIFO within an order).
pub(crate) fn add(list: &mut Vec<ExitRoutine>, r: ExitRoutine) -> Result<(), u32> {
    if list.len() >= MAX_EXIT_ROUTINES {
        return Err(ERROR_NOT_ENOUGH_MEMORY);
    }
    let at = list
        .iter()
        .position(|x| x.order >= r.order)
        .unwrap_or(list.len());
    list.insert(at, r);
    Ok(())
}

impl Process {
    /// The running process ends with `term`, `code` and `outcome`: if it
    /// has exit-list routines left, the next one is entered (on thread
    /// 1, the others ended the first time) and `None` is returned; else
    /// the codes the process ends with (its first end's).
    pub(crate) fn exit_list_next(
        &mut self,
        term: u32,
        code: u32,
        outcome: Outcome,
    ) -> Result<(), (u32, u32, Outcome)> {
        let ex = match self.pcb.exiting.take() {
            Some(ex) => ex,
            None if self.pcb.exit_list.is_empty() && self.pcb.terms.is_empty() => {
                return Err((term, code, outcome));
            }
            None => {
                let Some(stack) = self.initial_sp() else {
                    return Err((term, code, outcome));
                };
                self.exit_threads(code);
                Box::new(Exiting {
                    term,
                    code,
                    outcome,
                    stack,
                    in_dll_term: false,
                })
            }
        };
        let mut ex = ex;
        while !self.pcb.exit_list.is_empty() {
            let r = self.pcb.exit_list.remove(0);
            // (A termination routine may have added one.)
            ex.in_dll_term = false;
            if self.enter_exit_routine(r, &ex) {
                self.pcb.exiting = Some(ex);
                return Ok(());
            }
        }
        while let Some(mi) = self.pcb.terms.pop() {
            ex.in_dll_term = true;
            if self.enter_dll_term(mi, &ex) {
                self.pcb.exiting = Some(ex);
                return Ok(());
            }
        }
        Err((ex.term, ex.code, ex.outcome))
    }

    /// The process could still run guest code as it ends: exit-list or
    /// DLL termination routines.
    pub(crate) fn has_end_routines(pcb: &crate::state::Pcb) -> bool {
        !pcb.exit_list.is_empty() || !pcb.terms.is_empty()
    }

    /// Enter the termination routine of module `mi` on the initial stack:
    /// false if it has none or it cannot be set up.
    fn enter_dll_term(&mut self, mi: usize, ex: &Exiting) -> bool {
        let (ss, sp) = ex.stack;
        let esp = if ss == FLAT_DS {
            sp
        } else {
            tile_base(ss).wrapping_add(sp)
        };
        let slot = self.kernel.thunks.special(Slot::TermReturn);
        *self.machine.eflags_mut() = 0x202;
        self.machine.gpr_mut()[Gpr::Esp] = esp;
        let d = &self.kernel.desc;
        if !d.load(&mut self.machine, SegReg::Ss, FLAT_DS) {
            return false;
        }
        self.enter_term_routine(mi, THUNK_BASE + 4 * slot)
    }

    /// Set the registers for module `mi`'s termination routine on the
    /// current (flat) stack, returning to `ret`: false if it has no
    /// 32-bit routine or the stack cannot take its arguments.
    pub(crate) fn enter_term_routine(&mut self, mi: usize, ret: u32) -> bool {
        let Some(lm) = self.pcb.modules.get(mi) else {
            return false;
        };
        let Some(start) = lm.module.start else {
            return false;
        };
        let Some(o) = lm.object(start.object).filter(|o| o.bits32) else {
            return false;
        };
        let (eip, handle) = (o.base.wrapping_add(start.offset), u32::from(lm.handle));
        self.machine.add_host_call(ret);
        let esp = self.machine.cpu().gpr[Gpr::Esp];
        *self.machine.gpr_mut() = [0; 8];
        self.machine.gpr_mut()[Gpr::Esp] = esp;
        let d = &self.kernel.desc;
        let m = &mut self.machine;
        let ok = d.load(m, SegReg::Cs, FLAT_CS)
            && d.load(m, SegReg::Ds, FLAT_DS)
            && d.load(m, SegReg::Es, FLAT_DS)
            && d.load(m, SegReg::Fs, TIB_SEL)
            && d.load(m, SegReg::Gs, 0);
        let ok = ok && self.push32(1) && self.push32(handle) && self.push32(ret);
        self.machine.set_eip(eip);
        ok
    }

    /// Every thread but thread 1 (or the running one, if thread 1 has
    /// gone) ends; that one is put on the CPU, ready.
    fn exit_threads(&mut self, code: u32) {
        let keep = self
            .thread_index(1)
            .filter(|&i| !matches!(self.pcb.threads[i].state, crate::threads::State::Ended(_)))
            .unwrap_or(self.pcb.current);
        for i in 0..self.pcb.threads.len() {
            if i != keep && !matches!(self.pcb.threads[i].state, crate::threads::State::Ended(_)) {
                self.end_thread(i, code);
            }
        }
        self.pcb.critsec = 0;
        if let Some(t) = self.pcb.threads.get_mut(keep) {
            t.state = crate::threads::State::Ready;
            t.suspended = false;
        }
        let to = self
            .pcb
            .threads
            .get(keep)
            .map_or(1, |t| self.sem_owner(t.tid));
        self.kernel.sys_sems.transfer(self.pcb.pid, to);
        let parked = self.pcb.threads.get(keep).is_some_and(|t| t.cpu.is_some());
        if keep != self.pcb.current || parked {
            self.switch_to(keep);
        }
        // The registration records were on the stack that is reset.
        let _ = self
            .machine
            .write_linear(self.pcb.tib, &u32::MAX.to_le_bytes());
        self.pcb.xcpt_active.clear();
    }

    /// Enter routine `r` on the initial stack: false if its stack or
    /// selectors cannot be set up (the next routine is tried).
    fn enter_exit_routine(&mut self, r: ExitRoutine, ex: &Exiting) -> bool {
        let (ss, sp) = ex.stack;
        let flat_stack = ss == FLAT_DS;
        let slot = self.kernel.thunks.special(Slot::ExitListReturn);
        let ret = THUNK_BASE + 4 * slot;
        self.machine.add_host_call(ret);
        {
            let gpr = self.machine.gpr_mut();
            *gpr = [0; 8];
        }
        *self.machine.eflags_mut() = 0x202;
        let d = &self.kernel.desc;
        let m = &mut self.machine;
        let mut ok;
        if r.far16 {
            let (ss16, sp16) = if flat_stack {
                let Some(sel) = tile_selector(sp.wrapping_sub(1)) else {
                    return false;
                };
                (sel, sp.wrapping_sub(tile_base(sel)))
            } else {
                (ss, sp)
            };
            let ds = self.pcb.modules.get(self.pcb.exe).map_or(0, |exe| {
                exe.module
                    .auto_data
                    .and_then(|a| exe.object(a))
                    .filter(|o| !o.bits32)
                    .map_or(0, |o| o.selector)
            });
            ok = d.load(m, SegReg::Ss, ss16)
                && d.load(m, SegReg::Cs, (r.addr >> 16) as u16)
                && d.load(m, SegReg::Ds, ds)
                && d.load(m, SegReg::Es, 0)
                && d.load(m, SegReg::Fs, TIB_SEL)
                && d.load(m, SegReg::Gs, 0);
            m.gpr_mut()[Gpr::Esp] = sp16 & 0xFFFF;
            ok = ok
                && self.push16(ex.term as u16)
                && self.push16(THUNK_CS)
                && self.push16((4 * slot) as u16);
            self.machine.set_eip(r.addr & 0xFFFF);
        } else {
            let esp = if flat_stack {
                sp
            } else {
                tile_base(ss).wrapping_add(sp)
            };
            ok = d.load(m, SegReg::Ss, FLAT_DS)
                && d.load(m, SegReg::Cs, FLAT_CS)
                && d.load(m, SegReg::Ds, FLAT_DS)
                && d.load(m, SegReg::Es, FLAT_DS)
                && d.load(m, SegReg::Fs, TIB_SEL)
                && d.load(m, SegReg::Gs, 0);
            m.gpr_mut()[Gpr::Esp] = esp;
            ok = ok && self.push32(ex.term) && self.push32(ret);
            self.machine.set_eip(r.addr);
        }
        ok
    }
}
