//! Child processes: what DosExecPgm, DosWaitChild and DosKillProcess do
//! to the system (their API entries are in `api/exec.rs`), the process
//! switch the scheduler makes, and the end of a process.
//!
//! Decisions, where OS/2's documents leave room:
//! - **One machine.** Every process runs in the one emulated machine with
//!   its own page directory and LDT ([`crate::memory::Memory::child`]);
//!   the GDT, the thunk page, the clock, the sandbox, the semaphore table
//!   and the system trace are the system's. A traced module the child
//!   loads gets the tracepoints at its copy's addresses as it loads,
//!   before its DLLs' initialization runs (`trace/loads.rs`); its hits
//!   are logged with its PID. A process switch is a thread
//!   switch that also loads CR3 and the LDT.
//! - **Scheduling.** Processes share the threads' round robin
//!   (`threads.rs`): when the running thread blocks or its quantum ends,
//!   the other threads of its process come first, then the other
//!   processes in PID order after it (wrapping), then the thread itself.
//!   Nothing depends on host time, so children are as deterministic as
//!   threads.
//! - **Loading.** DosExecPgm loads the child and runs its DLLs'
//!   initialization routines (in the child, no other process running)
//!   before it returns; a failure is the call's error code, with the
//!   failing module's name in the object buffer. The child's environment
//!   segment is the given environment (or a copy of the parent's), the
//!   program's full path, then the argument strings exactly as given.
//! - **Exec flags.** EXEC_SYNC blocks the calling thread until the child
//!   ends; EXEC_ASYNC returns its PID and drops its codes; EXEC_ASYNCRESULT
//!   keeps them for DosWaitChild. EXEC_TRACE, EXEC_ASYNCRESULTDB and
//!   EXEC_LOAD run as EXEC_ASYNCRESULT (no debugger interface is
//!   modelled, and the session manager dispatches at once).
//!   EXEC_BACKGROUND's process is detached: nobody's child.
//! - **Results.** DosWaitChild with PID 0 collects only the codes of
//!   children started with a result (EXEC_ASYNCRESULT and the like), as
//!   documented; with a PID, any child's (an EXEC_ASYNC child's codes are
//!   kept until its parent collects them or ends). A killed process ends
//!   with TC_KILLPROCESS, one that faults with TC_TRAP (16-bit code) or
//!   TC_EXCEPTION (32-bit), both with result code 0.
//! - **The first process** is the run: when it ends, the run ends with
//!   its outcome, whatever its children are doing.
//! - **Bounds.** PIDs are never reused in a run; at most
//!   [`MAX_PROCESSES`] live at once, and a DosExecPgm made by a DLL's
//!   initialization routine while its own process loads nests at most
//!   [`MAX_LOAD_NESTING`] deep (both ERROR_NO_PROC_SLOTS).
//! - A mutex semaphore's owner is a process's thread (PID and TID,
//!   `Process::sem_owner`); a process that ends frees the mutexes its
//!   threads held, and the next owner gets ERROR_SEM_OWNER_DIED.
//! - **The end of a process** (after its exit list, `exitlist.rs`):
//!   its copies of traced modules leave the trace before its frames are
//!   freed; its opens of 32-bit and 16-bit system semaphores are closed
//!   (those nobody else has open go), its access to shared memory goes (an
//!   object nobody else has goes, its frames freed), and its handle
//!   table is closed (files; a pipe's last write end gives its reader
//!   end of file). A killed process's are released the same way.

use std::path::PathBuf;

use crate::error::{KernelError, Outcome};
use crate::layout::*;
use crate::process::Process;
use crate::rc::*;
use crate::state::Pcb;
use crate::threads::State;

/// Live processes at once.
pub const MAX_PROCESSES: usize = 64;
/// DosExecPgm calls nested inside a loading child's DLL initialization.
pub const MAX_LOAD_NESTING: u32 = 4;

/// DosExecPgm's execFlag values.
pub(crate) const EXEC_SYNC: u32 = 0;
pub(crate) const EXEC_ASYNCRESULT: u32 = 2;
pub(crate) const EXEC_BACKGROUND: u32 = 4;
pub(crate) const EXEC_ASYNCRESULTDB: u32 = 6;

/// Termination codes (RESULTCODES.codeTerminate).
pub(crate) const TC_EXIT: u32 = 0;
pub(crate) const TC_TRAP: u32 = 2;
pub(crate) const TC_KILLPROCESS: u32 = 3;
pub(crate) const TC_EXCEPTION: u32 = 4;

/// The codes of an ended child, kept for its parent.
#[derive(Clone, Debug)]
pub(crate) struct ChildResult {
    pub(crate) pid: u16,
    pub(crate) parent: u16,
    /// Why it ended (TC_*).
    pub(crate) term: u32,
    /// Its DosExit code.
    pub(crate) code: u32,
    /// Started with a result (EXEC_ASYNCRESULT): a wait for any child
    /// takes it.
    pub(crate) any: bool,
}

/// What DosExecPgm starts.
pub(crate) struct ExecRequest {
    /// The program's host file and full OS/2 path.
    pub(crate) host: PathBuf,
    pub(crate) os2: String,
    /// The environment strings and their extra NUL.
    pub(crate) env: Vec<u8>,
    /// The argument strings and their extra NUL.
    pub(crate) args: Vec<u8>,
    /// execFlag.
    pub(crate) flag: u32,
}

/// Why DosExecPgm failed.
pub(crate) enum ExecError {
    /// An error code and the name of the object that caused it.
    Code(u32, String),
    /// A limit of the whole run (instructions, time, Ctrl-C) ran out
    /// while the child loaded.
    Run(Outcome),
}

impl ExecError {
    fn of(e: &KernelError, program: &str) -> ExecError {
        let (rc, object) = match e {
            KernelError::ModuleNotFound(name, _) => (ERROR_FILE_NOT_FOUND, name.clone()),
            KernelError::Parse { path, .. } => (ERROR_BAD_EXE_FORMAT, path.clone()),
            KernelError::Load { module, .. } => (ERROR_BAD_EXE_FORMAT, module.clone()),
            KernelError::NoMemory(_) => (ERROR_NOT_ENOUGH_MEMORY, program.to_string()),
            _ => (ERROR_ACCESS_DENIED, program.to_string()),
        };
        ExecError::Code(rc, object)
    }
}

impl Process {
    /// The running process and every other live one.
    pub(crate) fn processes(&self) -> impl Iterator<Item = &Pcb> {
        std::iter::once(&self.pcb).chain(self.kernel.procs.iter())
    }

    /// Is a process with this PID running or ready to run?
    pub(crate) fn process_alive(&self, pid: u16) -> bool {
        self.processes().any(|p| p.pid == pid && !p.dead)
    }

    /// Is `pid` a descendant of `of` (its child, grandchild, ...)? Parent
    /// links of ended processes count.
    pub(crate) fn is_descendant(&self, pid: u16, of: u16) -> bool {
        let mut at = pid;
        for _ in 0..=self.kernel.lineage.len() {
            match self.kernel.lineage.get(&at) {
                Some(&parent) if parent == of => return true,
                Some(&parent) if parent != 0 => at = parent,
                _ => return false,
            }
        }
        false
    }

    /// Live descendants of `of`.
    fn live_descendants(&self, of: u16) -> Vec<u16> {
        let mut v: Vec<u16> = self
            .processes()
            .filter(|p| !p.dead && self.is_descendant(p.pid, of))
            .map(|p| p.pid)
            .collect();
        v.sort_unstable();
        v
    }

    /// Run `incoming` on the machine in place of the running process;
    /// returns the one it replaces. CR3 and the LDT are the incoming
    /// process's at once; its thread's registers are loaded by
    /// `switch_to`.
    fn enter_pcb(&mut self, incoming: Pcb) -> Pcb {
        let mut old = std::mem::replace(&mut self.pcb, incoming);
        self.kernel.desc.swap_ldt(&mut self.pcb.ldt);
        old.ldt = std::mem::take(&mut self.pcb.ldt);
        self.machine.cpu_mut_flush_tlb().cr3 = self.pcb.mem.cr3();
        old
    }

    /// Make process `pid` (waiting in `Kernel::procs`) the running one:
    /// the running thread's registers are saved first. A process that
    /// has ended is freed as it leaves the machine.
    pub(crate) fn switch_process(&mut self, pid: u16) -> bool {
        let Some(i) = self.kernel.procs.iter().position(|p| p.pid == pid) else {
            return false;
        };
        self.park_running_thread();
        let incoming = self.kernel.procs.remove(i);
        let mut old = self.enter_pcb(incoming);
        if std::mem::take(&mut self.pcb.kill_pending) {
            // DosKillProcess ended it: its exit list runs now.
            let outcome = Outcome::Exited(0);
            if self.exit_list_next(TC_KILLPROCESS, 0, outcome).is_err() {
                let pid = self.pcb.pid;
                self.retire(pid, TC_KILLPROCESS, 0);
                self.pcb.files.close_all();
                self.pcb.dead = true;
                for t in &mut self.pcb.threads {
                    t.state = State::Ended(0);
                }
            }
        }
        if old.dead {
            self.trace_process_gone(old.pid);
            old.mem.destroy(&mut self.machine);
        } else {
            let at = self
                .kernel
                .procs
                .iter()
                .position(|p| p.pid > old.pid)
                .unwrap_or(self.kernel.procs.len());
            self.kernel.procs.insert(at, old);
        }
        true
    }

    /// The other processes' PIDs in the order the scheduler visits them:
    /// those after the running one, then those before it.
    pub(crate) fn process_order(&self) -> Vec<u16> {
        let me = self.pcb.pid;
        let (mut after, before): (Vec<u16>, Vec<u16>) = self
            .kernel
            .procs
            .iter()
            .map(|p| p.pid)
            .partition(|&p| p > me);
        after.extend(before);
        after
    }

    /// DosExecPgm's work: load `req` as a child of the running process
    /// and make it ready to run; its PID. The running thread's registers
    /// are as they were.
    pub(crate) fn exec(&mut self, req: ExecRequest) -> Result<u16, ExecError> {
        let slots = ExecError::Code(ERROR_NO_PROC_SLOTS, req.os2.clone());
        if self.kernel.procs.len() + 1 >= MAX_PROCESSES
            || self.kernel.next_pid == u16::MAX
            || self.kernel.loading_child >= MAX_LOAD_NESTING
        {
            return Err(slots);
        }
        let pid = self.kernel.next_pid;
        let mem = self
            .pcb
            .mem
            .child(
                &mut self.machine,
                GDT_BASE,
                LDT_BASE,
                (LDT_ENTRIES * 8) as u32,
            )
            .map_err(|_| ExecError::Code(ERROR_NOT_ENOUGH_MEMORY, req.os2.clone()))?;
        let mut child = Pcb::new(pid, mem, self.pcb.files.inherit());
        child.parent = if req.flag == EXEC_BACKGROUND {
            0
        } else {
            self.pcb.pid
        };
        child.exec_flag = req.flag;
        // Its own copy of the extended LIBPATHs, as documented.
        child.ext_libpath = self.pcb.ext_libpath.clone();
        // An empty model: no descriptors (see `Descriptors`).
        child.ldt = Vec::new();
        let alone = self.pcb.threads.len() < 2 && self.kernel.procs.is_empty();
        let saved = self.machine.cpu().clone();
        let parent = self.enter_pcb(child);
        self.kernel.loading_child += 1;
        let others = std::mem::take(&mut self.kernel.procs);
        let loaded = self.load_child(&req);
        self.kernel.procs = others;
        self.kernel.loading_child -= 1;
        if loaded.is_ok()
            && let Some(t) = self.pcb.threads.first_mut()
        {
            t.cpu = Some(Box::new(self.machine.cpu().clone()));
        }
        let mut child = self.enter_pcb(parent);
        *self.machine.cpu_mut_flush_tlb() = saved;
        self.kernel.desc.set(
            &mut self.machine,
            TIB_SEL,
            crate::desc::make(self.pcb.tib, PAGE - 1, crate::desc::DATA3, false),
        );
        if let Err(e) = loaded {
            self.trace_process_gone(pid);
            child.mem.destroy(&mut self.machine);
            return Err(e);
        }
        self.kernel.next_pid += 1;
        self.kernel.lineage.insert(pid, child.parent);
        self.kernel.procs.push(child);
        self.kernel.procs.sort_by_key(|p| p.pid);
        if alone {
            // The first quantum starts now that there is someone to share with.
            self.pcb.slice_end = self.kernel.executed + crate::threads::QUANTUM;
        }
        Ok(pid)
    }

    /// Load the child that is on the machine: its modules, environment,
    /// information blocks and start state, then its DLLs' initialization.
    fn load_child(&mut self, req: &ExecRequest) -> Result<(), ExecError> {
        let name = req.os2.clone();
        let err = |e: KernelError| ExecError::of(&e, &name);
        self.pcb.exe = self.load_file(&req.host, &req.os2, true, 0).map_err(err)?;
        self.install_environment(&req.env, &req.os2.to_ascii_uppercase(), &req.args)
            .map_err(err)?;
        self.init_info_blocks().map_err(err)?;
        self.set_start_state().map_err(err)?;
        match self.run_dll_inits(None) {
            Ok(()) => Ok(()),
            Err(
                o @ (Outcome::InstructionLimit(_)
                | Outcome::TimeLimit(_)
                | Outcome::Interrupted
                | Outcome::Stopped),
            ) => Err(ExecError::Run(o)),
            Err(Outcome::InitFailed { module, .. }) => {
                Err(ExecError::Code(ERROR_INIT_ROUTINE_FAILED, module))
            }
            Err(_) => Err(ExecError::Code(ERROR_INIT_ROUTINE_FAILED, name.clone())),
        }
    }

    /// The running process ends with `term` and `code`. The first
    /// process ends the run with `outcome`; a child leaves its codes for
    /// its parent and another process runs.
    pub(crate) fn process_ends(
        &mut self,
        term: u32,
        code: u32,
        outcome: Outcome,
    ) -> Option<Outcome> {
        if self.kernel.loading_child > 0 {
            return Some(outcome);
        }
        // Its exit list runs first (`exitlist.rs`).
        let (term, code, outcome) = match self.exit_list_next(term, code, outcome) {
            Ok(()) => return None,
            Err(end) => end,
        };
        if self.pcb.pid == 1 {
            return Some(outcome);
        }
        let pid = self.pcb.pid;
        self.retire(pid, term, code);
        let pcb = &mut self.pcb;
        pcb.files.close_all();
        pcb.dead = true;
        pcb.critsec = 0;
        for t in &mut pcb.threads {
            t.state = State::Ended(code);
        }
        self.reschedule()
    }

    /// Record the end of process `pid` for its parent, forget the codes
    /// of its own children nobody will collect now, and free the mutex
    /// semaphores its threads owned (their next owner is told the owner
    /// died).
    fn retire(&mut self, pid: u16, term: u32, code: u32) {
        let Some(p) = self.processes().find(|p| p.pid == pid) else {
            return;
        };
        let (parent, flag) = (p.parent, p.exec_flag);
        let owners: Vec<u32> = p
            .threads
            .iter()
            .map(|t| (u32::from(pid) << 16) | (t.tid & 0xFFFF))
            .collect();
        for owner in owners {
            self.kernel.sems.owner_died(owner);
        }
        // What it had open of the system's goes (its files and pipe ends
        // go with its handle table when it leaves the machine).
        self.kernel.sems.process_ended(pid);
        self.kernel.sys_sems.process_ended(pid);
        self.kernel.queues.process_ended(pid);
        let frames = self.kernel.shared_mem.process_ended(pid);
        self.pcb.mem.free_frames(frames);
        self.kernel.results.retain(|r| r.parent != pid);
        if parent != 0 && self.process_alive(parent) {
            self.kernel.results.push(ChildResult {
                pid,
                parent,
                term,
                code,
                any: (EXEC_ASYNCRESULT..=EXEC_ASYNCRESULTDB).contains(&flag)
                    && flag != EXEC_BACKGROUND,
            });
        }
    }

    /// DosKillProcess's work: end process `pid` (and with `tree` its
    /// descendants), which must descend from the running process.
    pub(crate) fn kill_process(&mut self, pid: u16, tree: bool) -> Result<(), u32> {
        let me = self.pcb.pid;
        if !self.process_alive(pid) {
            let zombie = self.kernel.results.iter().any(|r| r.pid == pid);
            return Err(if zombie {
                ERROR_ZOMBIE_PROCESS
            } else {
                ERROR_INVALID_PROCID
            });
        }
        if !self.is_descendant(pid, me) {
            return Err(ERROR_NOT_DESCENDANT);
        }
        self.end_processes(pid, tree);
        Ok(())
    }

    /// End process `pid` (and with `tree` its live descendants) as
    /// DosKillProcess does, without asking whose it is (DosStopSession
    /// ends a session's process this way).
    pub(crate) fn end_processes(&mut self, pid: u16, tree: bool) {
        let mut victims = vec![pid];
        if tree {
            victims.extend(self.live_descendants(pid));
        }
        victims.sort_unstable();
        victims.dedup();
        for v in victims {
            let Some(i) = self.kernel.procs.iter().position(|p| p.pid == v) else {
                continue;
            };
            let p = &mut self.kernel.procs[i];
            if p.exiting.is_some() {
                // Already running its exit list: it ends when that is done.
                continue;
            }
            if Process::has_end_routines(p) {
                // It runs its exit list and DLL terminations when it is
                // next scheduled.
                p.kill_pending = true;
                for t in &mut p.threads {
                    if t.tid == 1 && !matches!(t.state, State::Ended(_)) {
                        t.state = State::Ready;
                        t.suspended = false;
                    }
                }
                continue;
            }
            self.retire(v, TC_KILLPROCESS, 0);
            let mut p = self.kernel.procs.remove(i);
            self.trace_process_gone(v);
            p.mem.destroy(&mut self.machine);
        }
        // Codes for a parent that was killed too are nobody's now.
        let kernel = &mut self.kernel;
        let alive: Vec<u16> = std::iter::once(self.pcb.pid)
            .chain(kernel.procs.iter().map(|p| p.pid))
            .collect();
        kernel.results.retain(|r| alive.contains(&r.parent));
    }

    /// DosWaitChild's wake condition for the running process: the code
    /// to return once a matching child has ended (its codes are written
    /// to `pres` and its PID to `ppid`, dwords if `wide`, else words), or
    /// `None` while the wait goes on.
    pub(crate) fn collect_child(
        &mut self,
        pid: u16,
        tree: bool,
        out: (u32, u32),
        wide: bool,
    ) -> Option<u32> {
        let me = self.pcb.pid;
        let found = self.kernel.results.iter().position(|r| {
            r.parent == me
                && if pid == 0 { r.any } else { r.pid == pid }
                && (!tree || self.live_descendants(r.pid).is_empty())
        });
        if let Some(i) = found {
            let r = self.kernel.results.remove(i);
            let (pres, ppid) = out;
            let mut codes = Vec::new();
            if wide {
                codes.extend(r.term.to_le_bytes());
                codes.extend(r.code.to_le_bytes());
            } else {
                codes.extend((r.term as u16).to_le_bytes());
                codes.extend((r.code as u16).to_le_bytes());
            }
            let _ = self.machine.write_linear(pres, &codes);
            if ppid != 0 {
                let id = u32::from(r.pid).to_le_bytes();
                let _ = self
                    .machine
                    .write_linear(ppid, &id[..if wide { 4 } else { 2 }]);
            }
            return Some(NO_ERROR);
        }
        let child_alive = |p: &Pcb| p.parent == me && !p.dead && (pid == 0 || p.pid == pid);
        let waiting = self.kernel.procs.iter().any(child_alive)
            || self
                .kernel
                .results
                .iter()
                .any(|r| r.parent == me && if pid == 0 { r.any } else { r.pid == pid });
        match (waiting, pid) {
            (true, _) => None,
            (false, 0) => Some(ERROR_WAIT_NO_CHILDREN),
            (false, _) => Some(ERROR_INVALID_PROCID),
        }
    }
}
