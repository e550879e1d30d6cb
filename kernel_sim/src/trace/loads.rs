//! The dynamic trace as modules load and processes end.
//!
//! A DTO is the module's (warp-debug-dtrace §1.3.4: DTRACE names a module
//! by its handle or name, never by an address), so its tracepoints go into
//! every copy of the module that is loaded while it is applied: the
//! program or DLL a child process loads (DosExecPgm, DosStartSession,
//! CMD.EXE and the programs NMAKE's recipes run), a DLL that DosLoadModule
//! brings in later, and the copies loaded before TRACE ON, in whichever
//! process. Here every process loads its own copy, possibly at other
//! addresses than its parent's (where OS/2 shares one copy of a DLL's
//! code); each copy is an instance of the DTO with the tracepoints at its
//! own addresses, and what is kept per module (variables, hit counts, the
//! log limit, the Remove opcode's effect) is the same however many copies
//! there are. A hit logs its record into the one system trace buffer with
//! the PID of the process that hit it, and its fine time (the sidecar)
//! with that thread's TID.
//!
//! Decisions where the seeds are silent:
//! - A copy where a tracepoint cannot go in (another version of the
//!   module, whose opcode differs) is not traced at all, and the DTO
//!   keeps the PID and the reason ([`super::Dto::refused`]); the load
//!   itself goes on, as a program does not fail to start because someone
//!   traces it.
//! - A module that no process has loaded when TRACE ON or DTRACE APPLY is
//!   given is traced from its first load; one never loaded shows as such
//!   in the report ([`super::DtoReport::pids`] empty).
//! - Inserting happens when the module and everything it imports are
//!   loaded and fixed up, before any of its code runs (a DLL's
//!   initialization routine included).
//! - A copy stays traced until DosFreeModule frees it (after its
//!   termination routine, which is traced, has run) or its process ends;
//!   then its instances go and their INT3s with them, before the frames
//!   can hold anything else. A copy loaded again is a new instance.

use super::system::object_mappings;
use crate::process::Process;

impl Process {
    /// Module `index` of the running process has just loaded: the DTOs
    /// applied to its name go into it.
    pub(crate) fn trace_module_loaded(&mut self, index: usize) {
        let Some(trace) = self.kernel.trace.as_mut() else {
            return;
        };
        let Some(module) = self.pcb.modules.get(index) else {
            return;
        };
        let runtime = trace.runtime_mut();
        let wanted: Vec<usize> = runtime
            .dtos()
            .iter()
            .enumerate()
            .filter(|(_, d)| d.traces(&module.name))
            .map(|(i, _)| i)
            .collect();
        let pid = self.pcb.pid;
        let mem = &self.pcb.mem;
        for d in wanted {
            let objects = object_mappings(module);
            if let Err(why) = runtime.attach(&mut self.machine, d, pid, objects, &|l| mem.phys(l)) {
                runtime.refuse(d, pid, why);
            }
        }
    }

    /// Module `index` of the running process was freed (DosFreeModule):
    /// its copy is traced no more.
    pub(crate) fn trace_module_freed(&mut self, index: usize) {
        let (Some(trace), Some(module)) = (self.kernel.trace.as_mut(), self.pcb.modules.get(index))
        else {
            return;
        };
        let first = module.objects.first().map_or(0, |o| o.base);
        trace
            .runtime_mut()
            .detach_copy(&mut self.machine, self.pcb.pid, first);
    }

    /// Process `pid` is ending and its address space goes: its copies of
    /// traced modules are traced no more.
    pub(crate) fn trace_process_gone(&mut self, pid: u16) {
        if let Some(trace) = self.kernel.trace.as_mut() {
            trace.runtime_mut().detach(&mut self.machine, pid);
        }
    }
}
