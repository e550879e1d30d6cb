//! Who owns which state: the parts of a running system that
//! [`crate::Process`] holds, split by lifetime and sharing.
//!
//! - the **machine** (`Process::machine`, an [`emu::Machine`]): the
//!   emulated hardware, CPU registers, physical memory, TLB. There is one;
//!   a process switch (or a thread switch) swaps what is in it.
//! - [`Kernel`]: state of the whole system, shared by every process and
//!   thread: the clock, the sandbox file system, the thunk slots of the
//!   system DLLs, the semaphore table, the descriptor tables (GDT; the LDT
//!   too while one process runs), the system trace, the trace table and
//!   CPTRAP, TNF, and the run's accounting (instructions, limits). Its
//!   file system ([`crate::fs::FileSystem`]) is the sandbox, the time
//!   stamps of files written in the run and the run's write budget: what
//!   every process sees alike.
//! - [`Pcb`]: one process: its address space (page tables and regions),
//!   its modules, environment, PIB/TIB, exception handlers (DosSetVec),
//!   exit list, process ID, and its files ([`crate::fs::FileTable`]:
//!   current directory, open handles and their limit, find handles). A
//!   file API call sees both halves through `Process::files`; calls on a
//!   handle alone (DosRead, DosClose, DosChgFilePtr) go to the table.
//! - [`Host`]: the host plumbing: where the console goes and comes from,
//!   the API log, the beeps a program made.
//!
//! Where the next features go, so that they need no further reshuffle:
//! - **Threads** (DosCreateThread, `threads.rs`): `Pcb::threads` with
//!   the running one's index `Pcb::current`: TID, the saved
//!   [`emu::CpuState`] while it is not on the CPU, its stack region and
//!   its TIB/TIB2 (`Pcb::tib` is the running thread's), its 32-bit
//!   exception registration chain (in its TIB), and its blocking state.
//!   The scheduler is called from the run loop at a blocking call and at
//!   the end of a quantum.
//! - **Child processes** (DosExecPgm, CMD.EXE; `children.rs`): the
//!   running process is `Process::pcb`, the others wait in
//!   `Kernel::procs` (by PID), and the codes of ended children in
//!   `Kernel::results` until DosWaitChild collects them. Each `Pcb` has
//!   its own page directory ([`crate::memory::Memory`]) and LDT: the LDT
//!   pages are the process's own, and the host's model of the running
//!   process's LDT is `Kernel::desc`, swapped with `Pcb::ldt` at a
//!   process switch. DosExecPgm gives the child a copy of the parent's
//!   inheritable handles (each host `File` duplicated with `try_clone`,
//!   so they share the position as OS/2's inherited handles do) and the
//!   parent's current directory. Trace records take the PID from the
//!   running `Pcb`.

use std::io::{Read, Write};

use crate::clock::Clock;
use crate::desc::Descriptors;
use crate::fs::{FileSystem, FileTable};
use crate::loading::LoadedModule;
use crate::memory::Memory;
use crate::process::{ApiLogEntry, ApiLogSink};
use crate::semaphores::Semaphores;
use crate::thunks::Thunks;
use crate::trace::SystemTrace;

/// The state of the whole system. See the module docs.
pub(crate) struct Kernel {
    /// The emulated clock.
    pub(crate) clock: Clock,
    /// The sandbox file system: drive C:, file time stamps, the write
    /// budget.
    pub(crate) fs: FileSystem,
    /// System DLL entries bound to thunk slots.
    pub(crate) thunks: Thunks,
    /// Event and mutex semaphores (handle 0x1000 + index).
    pub(crate) sems: Semaphores,
    /// The queues (QUECALLS).
    pub(crate) queues: crate::api::queues::Queues,
    /// The GDT and (while one process runs) the LDT.
    pub(crate) desc: Descriptors,
    /// The system trace, once configured.
    pub(crate) trace: Option<SystemTrace>,
    /// TNF probes and their recorder.
    pub(crate) tnf: crate::tnf::TnfRuntime,
    /// The always-on trace table and CPTRAP.
    pub(crate) systable: crate::systable::SystemTable,
    /// Instructions executed so far.
    pub(crate) executed: u64,
    /// Instructions charged for host calls (API work), counted against
    /// `max_instructions` with `executed` but not reported as executed.
    pub(crate) host_work: u64,
    /// When the run started on the host (for `max_wall`).
    pub(crate) started: Option<std::time::Instant>,
    /// The processes that are not running, by PID (`children.rs`).
    pub(crate) procs: Vec<Pcb>,
    /// The codes of ended child processes not yet collected.
    pub(crate) results: Vec<crate::children::ChildResult>,
    /// The PID the next process gets.
    pub(crate) next_pid: u16,
    /// Children being loaded (their DLLs' initialization runs), nested:
    /// while any is, no other process runs, and a process's end is the
    /// loader's business.
    pub(crate) loading_child: u32,
    /// Every process's parent (0: none) by PID, ended ones too, for
    /// DosKillProcess's and DosWaitChild's process trees.
    pub(crate) lineage: std::collections::HashMap<u16, u16>,
    /// Shared memory objects (DosAllocSharedMem).
    pub(crate) shared_mem: crate::api::sharedmem::SharedObjects,
    /// 16-bit system semaphores (DosCreateSem).
    pub(crate) sys_sems: crate::api::syssem::SysSems,
    /// Named pipe instances (DosCreateNPipe).
    pub(crate) npipes: crate::api::npipes::NamedPipes,
    /// Sessions DosStartSession started.
    pub(crate) sessions: crate::api::sessions::Sessions,
}

/// One process. See the module docs.
pub(crate) struct Pcb {
    /// Process ID (DosGetPID, the PIB, trace records).
    pub(crate) pid: u16,
    /// The address space: page tables and regions.
    pub(crate) mem: Memory,
    /// The loaded modules, the EXE first.
    pub(crate) modules: Vec<LoadedModule>,
    /// Index of the EXE in `modules`.
    pub(crate) exe: usize,
    /// DLLs whose initialization routine must run, in order.
    pub(crate) pending_init: Vec<usize>,
    /// DLLs whose termination routine runs when they are freed, in the
    /// order their initialization ran (`exitlist.rs` runs them from the
    /// last).
    pub(crate) terms: Vec<usize>,
    /// DosLoadModule references per module index (DosFreeModule takes
    /// them back).
    pub(crate) load_refs: std::collections::BTreeMap<usize, u32>,
    /// Linear address and selector of the environment segment, and the
    /// offset of the command line (program name) in it.
    pub(crate) env_base: u32,
    pub(crate) env_sel: u16,
    pub(crate) cmd_offset: u16,
    /// Linear addresses of the (main thread's) TIB and the PIB.
    pub(crate) tib: u32,
    pub(crate) pib: u32,
    /// DosSetVec handlers (16:16) by vector 0..=7.
    pub(crate) vectors: [u32; 8],
    /// DosExitList routines, in call order (`exitlist.rs`).
    pub(crate) exit_list: Vec<crate::exitlist::ExitRoutine>,
    /// Running its exit list: how it ended.
    pub(crate) exiting: Option<Box<crate::exitlist::Exiting>>,
    /// DosKillProcess ended it while it was not running: its exit list
    /// runs when it is next scheduled.
    pub(crate) kill_pending: bool,
    /// Current directory, open file handles and find handles.
    pub(crate) files: FileTable,
    /// Signal focus and must-complete counters.
    pub(crate) signals: crate::api::signals::SignalState,
    /// DosSubSetMem pools.
    pub(crate) sub: crate::api::submem::Pools,
    /// The threads, in creation order (`threads.rs`).
    pub(crate) threads: Vec<crate::threads::Thread>,
    /// Index of the running thread in `threads`.
    pub(crate) current: usize,
    /// `Kernel::executed` at which the running thread's quantum ends.
    pub(crate) slice_end: u64,
    /// The information-block page (thread 1's TIB, the PIB, the
    /// thread-local memory area).
    pub(crate) tib_page: u32,
    /// Thread-local memory blocks.
    pub(crate) tlm: crate::threads::TlmMap,
    /// DosEnterCritSec nesting.
    pub(crate) critsec: u32,
    /// Threads that called WinInitialize (their TIDs).
    pub(crate) anchor_blocks: Vec<u32>,
    /// The registration records whose 32-bit exception handlers are
    /// running, innermost last (`xcpt.rs`: EH_NESTED_CALL).
    pub(crate) xcpt_active: Vec<u32>,
    /// Unicode API objects (UCONV conversion objects, LIBUNI locales).
    pub(crate) uni: crate::api::uconv::UniObjects,
    /// BEGINLIBPATH and ENDLIBPATH (DosSetExtLIBPATH).
    pub(crate) ext_libpath: crate::api::libpath::ExtLibpath,
    /// The keyboard's status and a byte KbdPeek read ahead.
    pub(crate) kbd: crate::api::kbd::KbdState,
    /// Device monitors (MONCALLS).
    pub(crate) mon: crate::api::moncalls::MonState,
    /// The screen's characters and pop-up (`vio.rs`).
    pub(crate) screen: crate::api::vio::Screen,
    /// The emulated x87 registers per thread (`x87.rs`).
    pub(crate) x87: std::collections::BTreeMap<u32, crate::x87::Regs>,
    /// The C runtime's state (LIBCM, LIBCS), made on first use.
    pub(crate) libc: Option<Box<crate::api::libc::Runtime>>,
    /// UniStrtok's position per thread.
    pub(crate) uni_tok: crate::api::libuni::TokState,
    /// TCP32DLL's inet_ntoa buffer (0 until the first call).
    pub(crate) inet_ntoa_buf: u32,
    /// The parent's PID (0 for the first process).
    pub(crate) parent: u16,
    /// How the parent started it (DosExecPgm's execFlag).
    pub(crate) exec_flag: u32,
    /// The host's model of this process's LDT while another process runs
    /// (empty while it runs: then it is `Kernel::desc`'s).
    pub(crate) ldt: Vec<u64>,
    /// It has ended; it is freed when it leaves the machine.
    pub(crate) dead: bool,
    /// The built-in command processor's state, when this process is
    /// CMD.EXE (`cmd.rs`).
    pub(crate) shell: Option<Box<crate::cmd::Shell>>,
}

impl Pcb {
    /// A process with no modules, threads or memory in use yet.
    pub(crate) fn new(pid: u16, mem: Memory, files: FileTable) -> Pcb {
        Pcb {
            pid,
            mem,
            modules: Vec::new(),
            exe: 0,
            pending_init: Vec::new(),
            terms: Vec::new(),
            load_refs: Default::default(),
            env_base: 0,
            env_sel: 0,
            cmd_offset: 0,
            tib: 0,
            pib: 0,
            vectors: [0; 8],
            exit_list: Vec::new(),
            exiting: None,
            kill_pending: false,
            files,
            signals: Default::default(),
            sub: Default::default(),
            threads: Vec::new(),
            current: 0,
            slice_end: 0,
            tib_page: 0,
            tlm: Default::default(),
            critsec: 0,
            anchor_blocks: Vec::new(),
            xcpt_active: Vec::new(),
            parent: 0,
            exec_flag: 0,
            ldt: Vec::new(),
            dead: false,
            shell: None,
            uni: Default::default(),
            uni_tok: Default::default(),
            inet_ntoa_buf: 0,
            libc: None,
            x87: Default::default(),
            kbd: Default::default(),
            mon: Default::default(),
            screen: Default::default(),
            ext_libpath: Default::default(),
        }
    }
}

/// The host side of a run. See the module docs.
pub(crate) struct Host {
    /// Where handle 1 goes.
    pub(crate) stdout: Box<dyn Write>,
    /// Where handle 2 goes.
    pub(crate) stderr: Box<dyn Write>,
    /// Where handle 0 comes from.
    pub(crate) stdin: Box<dyn Read>,
    /// API calls recorded (when no sink is set).
    pub(crate) log: Vec<ApiLogEntry>,
    /// Where API log entries go as they happen (instead of `log`).
    pub(crate) log_sink: Option<ApiLogSink>,
    /// DosBeep calls: (frequency, duration).
    pub(crate) beeps: Vec<(u32, u32)>,
    /// Where progress snapshots go, and the instruction count of the next.
    pub(crate) progress: Option<crate::progress::ProgressSink>,
    pub(crate) next_progress: u64,
}

// One of these is built per run, but the machine is moved through them:
// keep the per-process and host parts small.
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(std::mem::size_of::<Host>() <= 144);
};
