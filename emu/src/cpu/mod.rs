//! CPU architectural state: registers, flags, segment caches, control registers.

mod state;

pub(crate) use state::{CR0_PE, CR0_PG, CR0_TS, CR0_WP};
pub use state::{CpuModel, CpuState, DescTable, SegReg, Segment, flags};
