//! The x86 machine of os2trace: an interpreter of the 386/486 integer
//! instruction set built on iced-x86's decoder, with real, protected and
//! virtual-8086 mode, 16- and 32-bit code and stack segments, descriptor
//! tables, paging, exceptions, a decoded-instruction cache and a 386 cycle
//! clock.
//!
//! Entry points: [`Machine`] (construction, [`Machine::run`] to an
//! [`Exit`], registers through [`Machine::cpu`], [`Machine::set_eip`],
//! [`Machine::eflags_mut`], [`Machine::gpr_mut`] (cheap) and
//! [`Machine::cpu_mut_flush_tlb`] (control registers; flushes the TLB),
//! host-side address checks through [`Machine::resolve`], guest memory
//! through [`Machine::read_linear`], [`Machine::write_virt`],
//! [`Machine::read_phys`], [`Machine::patch_code`], events through
//! [`Machine::deliver_interrupt`] and [`Machine::intercept`]).
//!
//! Decisions where the manuals leave room are written down in the module
//! docs: [`cycles`] (clock table), `exec` submodules (undefined flags),
//! `mmu` (segment checks), `paging` (TLB flush points), `icache` (decode
//! cache invalidation). In short:
//!
//! - Models ([`CpuModel`]): `I486` (default, CPUID) and `I386` follow the
//!   Intel 386/486 manuals; `I286` adds what the SingleStepTests 80286
//!   captures show of real hardware: 16-bit only (0x66/0x67, FS/GS and 386
//!   opcodes are #UD), #GP past 10 instruction bytes, FLAGS bits 12..15
//!   stuck at zero in real mode, real-mode stack limit faults reported as
//!   #GP, string instructions that finish their pointer updates before a
//!   limit fault, ESC opcodes that only check their operand's limit.
//! - Undefined flags: logic ops clear AF; MUL/IMUL set SF/ZF/PF from the low
//!   half; DIV/IDIV leave flags alone; shifts compute OF with the one-bit
//!   rule. test386.asm's arithmetic log (POST EE) matches the 386 reference.
//! - Protected mode: GDT/LDT descriptors, limit/expand-down/type/privilege
//!   checks, far JMP/CALL/RET/IRET with call gates and the TSS inner-stack
//!   switch, IDT interrupt/trap gates, task switches (far JMP/CALL to a TSS
//!   or task gate, IDT task gates, IRET with NT) for 386 and 286 TSSs,
//!   V86 entry by IRET and exit by interrupt, IOPL rules and the TSS I/O
//!   bitmap. Not modelled: debug-register breakpoints (DR0..DR7 are stored
//!   only), alignment check (#AC), SMM, the A20 gate (no 1 MB wrap), V86
//!   interrupt redirection beyond the IOPL rule.
//! - x87: only the probe subset (see `exec::x87`): FNINIT, FNCLEX, FNSTSW,
//!   FNSTCW, FLDCW, FNOP, FSETPM/FNENI/FNDISI, WAIT. CR0.EM/TS give #NM.
//! - Native tier (`jit`, x86-64 hosts): hot straight runs of 16- and
//!   32-bit ALU/MOV code on registers and memory, PUSH/POP, shifts by one,
//!   CBW and kin, XCHG of registers, LOOP/JCXZ, near CALL/RET and
//!   MOVS/STOS/LODS (a REP one ends a block) are translated to host
//!   code (self-loops loop there) with the same registers, EFLAGS, EIP,
//!   cycles, memory, faults and budget stops as the interpreter;
//!   [`Machine::set_jit`] turns it off, [`Machine::jit_stats`] counts it.
//! - A REP string instruction runs at most 4096 iterations per step, then
//!   restarts, so budgets and host exits are never held off; the step budget
//!   of [`Limits`] counts faulting attempts too.
//!
mod bus;
mod cpu;
pub mod cycles;
mod exec;
mod fault;
mod fetch;
mod icache;
#[cfg(target_arch = "x86_64")]
mod jit;
mod machine;
mod mem;
mod mmu;
mod paging;
mod seg;
mod tracepoint;
#[cfg(feature = "unicorn")]
pub mod unicorn;

pub use bus::{NullBus, PortBus, RecordingBus};
pub use cpu::{Access, CpuModel, CpuState, DescTable, Gpr, SegReg, Segment, flags};
pub use fault::{Fault, vector};
pub use machine::{Exit, JitStats, Limits, Machine, MachineConfig, TrapHandler};
pub use mem::PhysMem;
pub use seg::Descriptor;
pub use tracepoint::INT3;
