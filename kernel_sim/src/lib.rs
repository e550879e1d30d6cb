//! The OS/2 personality of os2trace: it runs real OS/2 programs, 16-bit NE
//! and 32-bit LX, unmodified in the [`emu`] machine.
//!
//! A [`Process`] owns one emulated machine in protected mode with paging, a
//! GDT with flat ring-3 selectors for 32-bit code, an LDT tiled over the low
//! 512 MB (CRMA: selector `(lin >> 16) << 3 | 7` maps the 64 KB at
//! `lin & 0xFFFF0000`), the loaded modules (the EXE and its DLLs, found in
//! the sandbox), the system DLLs implemented in Rust as host calls, a
//! sandboxed file system and an emulated clock.
//!
//! Who owns which state (`state.rs` has the details):
//! - `Process::machine`: the emulated hardware (CPU, physical memory,
//!   TLB), one per system;
//! - `Kernel` (`Process::kernel`), the whole system's: clock, sandbox file
//!   system (with file time stamps and the write budget), thunk slots, semaphores, descriptor tables, the system trace
//!   ([`trace::SystemTrace`]), the trace table and CPTRAP, TNF, instruction
//!   accounting;
//! - `Pcb` (`Process::pcb`), one process's: address space, modules,
//!   environment, PIB/TIB, exception handlers, exit list, PID, and file
//!   handles, find handles and current directory;
//! - `Host` (`Process::host`): console streams, API log, beeps.
//!
//! Threads are `Pcb::threads` ([`threads`]: TID, saved CPU state, stack,
//! TIB, what it waits on), switched by a deterministic scheduler at
//! blocking calls and fixed instruction quanta. Child processes
//! (DosExecPgm, DosWaitChild, DosKillProcess; `children.rs`) are other
//! `Pcb`s in `Kernel::procs`, each with its own page directory and LDT in
//! the same machine, scheduled with the threads; `Process::pcb` is the
//! one on the CPU. The built-in CMD.EXE (`cmd.rs`) is such a process: a
//! kernel-built program in `C:\OS2` whose loop calls the interpreter.
//! `Process` stays the public handle of the running system, and the run
//! is its first process's.
//!
//! Tracepoints and processes: a DTO is the module's, not an address's
//! (`trace/loads.rs`). TRACE ON and APPLY insert its tracepoints into
//! every copy of the module a live process has loaded, and the kernel
//! inserts them into each copy loaded later (a child's program and DLLs,
//! at whatever addresses they land; DosLoadModule), each copy an
//! instance with its own addresses, found by the physical address of its
//! INT3. Records of every process go to the one buffer with their PID
//! (and the sidecar has the TID); a copy goes out of the trace when
//! DosFreeModule frees it or its process ends, and TRACE OFF or a
//! program's Remove takes a tracepoint out of every copy. A module no
//! process has loaded yet is traced from its first load.
//!
//! Entry points:
//! - [`Process::new`] with a [`ProcessConfig`] (sandbox root, program path
//!   inside it, arguments, environment), then [`Process::run`] to an
//!   [`Outcome`].
//! - The system trace is a kernel service: [`Process::trace_start`]
//!   configures the buffer, [`Process::trace_on`] / [`Process::trace_apply`]
//!   (or [`trace::TraceCommands`]) insert tracepoints, and the run loop
//!   hands every INT3 (#BP) and single-step (#DB) trap to the process's
//!   [`trace::SystemTrace`], charging each hit's cost to the clock.
//!   [`Process::run_with_hook`] with a [`TrapHook`] takes those traps
//!   instead: a seam for tests.
//! - [`Process::modules`] lists the loaded modules with each object's or
//!   segment's selector and flat base; [`Process::read_guest`],
//!   [`Process::write_guest`] and [`Process::patch_code`] reach guest
//!   memory; [`Process::clock`] is the emulated clock.
//! - [`fs::Sandbox`] maps OS/2 paths onto a host directory with no way
//!   out.
//!
//! Module docs say what each part decides where OS/2's documents leave
//! room: [`layout`] (the address space), [`loading`] (placement, fixups),
//! `startup` (start state, DLL initialization), [`api`] (calling
//! conventions, the API table), [`fs`] (path mapping).

pub mod api;
mod children;
pub mod clock;
mod cmd;
mod desc;
pub mod error;
pub mod exitlist;
pub mod fs;
pub mod layout;
pub mod loading;
mod memory;
mod process;
pub mod progress;
pub mod rc;
mod run;
mod semaphores;
mod startup;
mod state;
pub mod systable;
pub mod threads;
pub mod thunks;
pub mod tnf;
pub mod trace;
mod x87;
mod xcpt;

pub use clock::Clock;
pub use error::{KernelError, Outcome};
pub use layout::tile_selector;
pub use loading::{LoadedModule, LoadedObject};
pub use process::{ApiLogEntry, ApiLogSink, ConsoleBuffer, Process, ProcessConfig};
pub use run::{HookAction, TrapHook};
