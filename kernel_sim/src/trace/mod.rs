//! Dynamic trace: DTOs, INT3 insertion, TRAP3 dispatch, the trace program
//! run against the interrupted guest, and the original instruction, which
//! OS/2 single-steps (warp-debug-dtrace.txt §1.3.3) and the emulator runs
//! out of line at the same cost.
//!
//! * [`DtoSpec`] / [`Dto`]: a module's tracepoints, variables and limits,
//!   with an [`Instance`] per copy of the module a process has loaded
//!   (inserted at every load and taken out at unload and process end,
//!   `loads.rs`);
//! * [`DynamicTrace`]: applies DTOs to the emulated machine and handles the
//!   #BP and #DB exits they cause, logging into a [`stda::TraceBuffer`];
//! * [`TrapKind`] / [`Dispatch`]: the trap the kernel offers, and the answer
//!   with the hit's cost;
//! * [`GuestView`]: the guest as a trace program sees it;
//! * [`Selection`]: which tracepoints of a TDF `TRACE ON name(spec)` takes;
//! * [`SystemTrace`]: the buffer, the runtime and TRSPOOL, owned by the
//!   kernel ([`crate::Process`]), which hands it every trap and charges
//!   each hit's cost to its clock;
//! * [`TraceCommands`] and the trace commands as kernel methods
//!   (`Process::trace_start`, `trace_on`, `trace_apply`, `trace_off`,
//!   `trace_spool`, `trace_stop`, `traceget`, `trace_report`), with
//!   [`Report`] for QUERY and GETVARS.

mod commands;
mod dto;
mod event;
pub mod fine;
mod guest;
mod loads;
mod runtime;
pub mod select;
pub mod statics;
mod system;

pub use commands::TraceCommands;
pub use dto::{
    ActiveTracepoint, Dto, DtoSpec, Instance, Site, SpecError, TdfSpecError, TracepointSpec,
};
pub use event::{Dispatch, Next, TrapKind};
pub use guest::{GuestView, ObjectMapping};
pub use runtime::{ApplyError, DISPATCH_CYCLES, DynamicTrace, INT3, IRET_CYCLES, TRAP_CYCLES};
pub use select::{SelectError, Selection};
pub use system::{DtoReport, Report, SystemTrace, TraceError, TracepointReport, object_mappings};
