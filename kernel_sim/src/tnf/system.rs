//! os2trace's own TNF probes, the "kernel probes" `prex -k` controls:
//! which exist ([`system_probes`]), the kernel buffer they record into,
//! and the hooks the kernel calls (API dispatch, module loading, thread
//! dispatch).
//!
//! The probes, all under the key `kernel`:
//!
//! | probe | keys | arguments |
//! |---|---|---|
//! | `syscall_start` | `syscall` | `tnf_string module`, `tnf_ulong ordinal`, `tnf_string name` |
//! | `syscall_end` | `syscall` | `tnf_ulong rc` |
//! | `module_load` | `module loader` | `tnf_string name`, `tnf_string path`, `tnf_ulong hmod` |
//! | `thread_switch` | `thread sched` | `tnf_ulong from`, `tnf_ulong to` |
//!
//! `syscall_*` fire around every call through the API table (TNFPROBE's
//! own included: it is a system call like any other); a call that ends
//! the process (DosExit) has no `syscall_end` but a `thread_switch` to 0.
//! `module_load` fires for every module loaded while the program runs
//! (DosLoadModule and the DLLs it pulls in); the EXE and its load-time DLLs
//! are loaded before prex takes control, so they are not recorded, as a
//! Solaris kernel buffer allocated after boot does not hold boot's events.
//! `thread_switch` fires when a thread is dispatched: the process's first
//! thread at the start of the run (from 0) and its end at DosExit (to 0).
//!
//! The cost while nothing records is one test of [`SystemTnf::on`] at each
//! hook, a flag computed when prex changes the control (`ktrace`, `buffer`,
//! `pfilter`, enable/trace): on only with tracing on, a buffer, at least
//! one probe enabled and traced, and the process in the filter.

use std::collections::BTreeSet;

use tnf::{ArgType, ArgValue, ProbeDesc, TnfWriter, WriteError};

use crate::api::{ApiDef, Call, Func, Stop};
use crate::process::Process;

/// `syscall_start`'s index in [`system_probes`].
pub const SYSCALL_START: usize = 0;
/// `syscall_end`'s index.
pub const SYSCALL_END: usize = 1;
/// `module_load`'s index.
pub const MODULE_LOAD: usize = 2;
/// `thread_switch`'s index.
pub const THREAD_SWITCH: usize = 3;
/// How many system probes there are.
pub const SYSTEM_PROBES: usize = 4;

/// The object name prex shows for the system probes.
pub const SYSTEM_OBJECT: &str = "kernel_sim";

/// The system probes, in index order.
pub fn system_probes() -> Vec<ProbeDesc> {
    let p = |name: &str, keys: &str, line: u32, args: &[(ArgType, &str)]| ProbeDesc {
        name: name.into(),
        keys: keys.into(),
        detail: String::new(),
        file: "kernel_sim".into(),
        line,
        args: args.iter().map(|(t, n)| (*t, (*n).to_string())).collect(),
        debug: false,
        records: Vec::new(),
    };
    vec![
        p(
            "syscall_start",
            "syscall",
            1,
            &[
                (ArgType::String, "module"),
                (ArgType::ULong, "ordinal"),
                (ArgType::String, "name"),
            ],
        ),
        p("syscall_end", "syscall", 2, &[(ArgType::ULong, "rc")]),
        p(
            "module_load",
            "module loader",
            3,
            &[
                (ArgType::String, "name"),
                (ArgType::String, "path"),
                (ArgType::ULong, "hmod"),
            ],
        ),
        p(
            "thread_switch",
            "thread sched",
            4,
            &[(ArgType::ULong, "from"), (ArgType::ULong, "to")],
        ),
    ]
}

/// What `prex -k` has set: the kernel-mode state of a prex session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelControl {
    /// The buffer's size in bytes (`buffer alloc`), or none.
    pub buffer: Option<u64>,
    /// `ktrace on`.
    pub tracing: bool,
    /// `pfilter on` with its set: only these processes record.
    pub filter: Option<BTreeSet<u64>>,
    /// Which system probes record (enabled and traced), by index.
    pub record: [bool; SYSTEM_PROBES],
}

/// The kernel buffer and the hot flag.
#[derive(Default)]
pub(crate) struct SystemTnf {
    /// Some system probe records: the one test on the hot paths.
    pub(crate) on: bool,
    record: [bool; SYSTEM_PROBES],
    descs: Vec<ProbeDesc>,
    writer: Option<TnfWriter>,
    /// Events the buffer refused, and the first reason.
    dropped: u64,
    first_error: Option<String>,
}

impl Process {
    /// Applies prex's kernel-mode state. A buffer of another size (or none)
    /// drops what the old one held, as `buffer dealloc` does.
    pub fn tnf_kernel_control(&mut self, c: &KernelControl) -> Result<(), WriteError> {
        let sys = &mut self.kernel.tnf.system;
        match c.buffer {
            None => sys.writer = None,
            Some(size) => {
                let same = sys
                    .writer
                    .as_ref()
                    .is_some_and(|w| w.bytes().len() as u64 == size & !511);
                if !same {
                    sys.writer = Some(TnfWriter::new(size, tnf::Endian::Little)?);
                }
            }
        }
        if sys.descs.is_empty() {
            sys.descs = system_probes();
        }
        sys.record = c.record;
        let pid = u64::from(self.pcb.pid);
        sys.on = c.tracing
            && sys.writer.is_some()
            && c.record.iter().any(|r| *r)
            && c.filter.as_ref().is_none_or(|f| f.contains(&pid));
        Ok(())
    }

    /// The kernel buffer's contents (what tnfxtract copies), if allocated.
    pub fn tnf_kernel_buffer(&self) -> Option<&[u8]> {
        self.kernel.tnf.system.writer.as_ref().map(|w| w.bytes())
    }

    /// Events the kernel buffer refused, with the first reason.
    pub fn tnf_kernel_dropped(&self) -> (u64, Option<&str>) {
        let s = &self.kernel.tnf.system;
        (s.dropped, s.first_error.as_deref())
    }

    /// Records system probe `index` if it records.
    fn tnf_system_event(&mut self, index: usize, values: &[ArgValue]) {
        if !self.kernel.tnf.system.record[index] {
            return;
        }
        let now = self.tnf_now();
        let thread = self.tnf_thread();
        let sys = &mut self.kernel.tnf.system;
        if let Some(w) = sys.writer.as_mut()
            && let Err(e) = w.event(index as u64, &sys.descs[index], thread, now, values)
        {
            sys.dropped += 1;
            sys.first_error.get_or_insert_with(|| e.to_string());
        }
    }

    /// An API call while system probes are on: `syscall_start`, the call,
    /// then `syscall_end` with its code, or `thread_switch` to 0 if it ends
    /// the process.
    pub(crate) fn tnf_syscall(
        &mut self,
        module: &str,
        def: &ApiDef,
        func: Func,
        call: &Call,
    ) -> Result<u32, Stop> {
        self.tnf_system_event(
            SYSCALL_START,
            &[
                ArgValue::Str(module.as_bytes().to_vec()),
                ArgValue::UInt(u64::from(def.ordinal)),
                ArgValue::Str(def.name.as_bytes().to_vec()),
            ],
        );
        let result = func.call(self, call);
        match &result {
            Ok(rc) => self.tnf_system_event(SYSCALL_END, &[ArgValue::UInt(u64::from(*rc))]),
            Err(Stop::Exit(_)) => self.tnf_thread_switch(self.tnf_thread().2, 0),
            Err(Stop::ExitThread(_)) => self.tnf_thread_switch(self.tnf_thread().2, 0),
            Err(Stop::Resumed) => {
                let eax = self.machine.cpu().gpr[emu::Gpr::Eax];
                self.tnf_system_event(SYSCALL_END, &[ArgValue::UInt(u64::from(eax))]);
            }
            Err(Stop::Outcome(_)) | Err(Stop::Block(_)) => {}
        }
        result
    }

    /// Module `index` was loaded.
    pub(crate) fn tnf_module_load(&mut self, index: usize) {
        let Some(m) = self.pcb.modules.get(index) else {
            return;
        };
        let values = [
            ArgValue::Str(m.name.as_bytes().to_vec()),
            ArgValue::Str(m.path.as_bytes().to_vec()),
            ArgValue::UInt(u64::from(m.handle)),
        ];
        self.tnf_system_event(MODULE_LOAD, &values);
    }

    /// The processor went from thread `from` to thread `to` (0: none).
    pub(crate) fn tnf_thread_switch(&mut self, from: u32, to: u32) {
        let values = [
            ArgValue::UInt(u64::from(from)),
            ArgValue::UInt(u64::from(to)),
        ];
        self.tnf_system_event(THREAD_SWITCH, &values);
    }
}
