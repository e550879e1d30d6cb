//! The x86 machine of os2trace: an interpreter of the 386/486 integer
//! instruction set built on iced-x86's decoder, with real, protected and
//! virtual-8086 mode, 16- and 32-bit code and stack segments, descriptor
//! tables, paging, exceptions, a decoded-instruction cache and a 386 cycle
//! clock.
//!
//! Entry points: [`Machine`] (construction, [`Machine::run`] to an
//! [`Exit`], registers through [`Machine::cpu`]/[`Machine::cpu_mut`],
//! guest memory through [`Machine::read_linear`], [`Machine::write_virt`],
//! [`Machine::read_phys`], [`Machine::patch_code`], events through
//! [`Machine::deliver_interrupt`] and [`Machine::intercept`]).
//!
//! Decisions where the manuals leave room are written down in the module
//! docs: [`cycles`] (clock table), `exec` submodules (undefined flags),
//! `mmu` (segment checks), `paging` (TLB flush points).
//!
//! Guest memory is a bounds-checked byte vector; no guest action can
//! panic the host or reach host memory: every guest error becomes a guest
//! exception ([`Fault`]).

mod bus;
mod cpu;
pub mod cycles;
mod exec;
mod fault;
mod icache;
mod machine;
mod mem;
mod mmu;
mod paging;
mod seg;
#[cfg(feature = "unicorn")]
pub mod unicorn;

pub use bus::{NullBus, PortBus, RecordingBus};
pub use cpu::{CpuModel, CpuState, DescTable, SegReg, Segment, flags};
pub use fault::{Fault, vector};
pub use machine::{Exit, Limits, Machine, MachineConfig};
pub use mem::PhysMem;
pub use seg::Descriptor;
