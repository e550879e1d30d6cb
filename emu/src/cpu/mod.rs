//! CPU architectural state: registers, flags, segment caches, control registers.

mod state;

pub use state::{Access, CpuModel, CpuState, DescTable, Gpr, SegReg, Segment, flags};
pub(crate) use state::{CR0_PE, CR0_PG, CR0_TS, CR0_WP};
