//! Dynamic trace: DTOs, INT3 insertion, TRAP3 dispatch, the trace program
//! run against the interrupted guest, and the original instruction, which
//! OS/2 single-steps (warp-debug-dtrace.txt §1.3.3) and the emulator runs
//! out of line at the same cost.
//!
//! * [`DtoSpec`] / [`Dto`]: a module's tracepoints, variables and limits;
//! * [`DynamicTrace`]: applies DTOs to the emulated machine and handles the
//!   #BP and #DB exits they cause, logging into a [`stda::TraceBuffer`];
//! * [`TrapKind`] / [`Dispatch`]: the trap the kernel offers, and the answer
//!   with the hit's cost;
//! * [`GuestView`]: the guest as a trace program sees it;
//! * [`Selection`]: which tracepoints of a TDF `TRACE ON name(spec)` takes;
//! * [`TraceSession`]: all of it attached to a [`crate::Process`] as its
//!   trap hook, with the process's clock.

mod dto;
mod event;
mod guest;
mod runtime;
pub mod select;
mod session;

pub use dto::{ActiveTracepoint, Dto, DtoSpec, SpecError, TdfSpecError, TracepointSpec};
pub use event::{Dispatch, Next, TrapKind};
pub use guest::{GuestView, ObjectMapping};
pub use runtime::{
    ApplyError, DISPATCH_CYCLES, DynamicTrace, INT3, IRET_CYCLES, TRAP_CYCLES, UNTRACEABLE,
};
pub use select::{SelectError, Selection};
pub use session::{SessionError, TraceSession, object_mappings};
