//! The two events of a tracepoint hit besides the CPU's own [`emu::Exit`]:
//! the [`TrapKind`] the kernel hands to the trace, and the [`Dispatch`] the
//! trace hands back, with what the hit cost.
//!
//! A tracepoint hit is taken inside the CPU's run loop: the kernel's
//! `emu::TrapHandler` gets the INT3's address, and calls
//! [`super::DynamicTrace::on_trap`] → [`Dispatch`] with no exit from the
//! CPU. Any other trap travels `emu::Exit` (the CPU stopped on #BP or #DB)
//! → [`TrapKind::of`] in the kernel's run loop → the same call. Either way
//! the kernel adds [`Dispatch::cycles`] to the clock and does what
//! [`Dispatch::next`] says. No other type sits on the path.

use emu::{Exit, vector};

/// Which debug exception the guest raised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrapKind {
    /// INT3 executed: EIP is the byte after the INT3.
    Breakpoint,
    /// Single-step trap (#DB with TF): EIP is the next instruction.
    SingleStep,
}

impl TrapKind {
    /// The trap an exit of the CPU is, if it is one: an INT3 the guest
    /// executed (#BP raised by software) or a #DB.
    pub fn of(exit: &Exit) -> Option<TrapKind> {
        match *exit {
            Exit::Exception { fault, software } => match fault.vector {
                vector::BP if software => Some(TrapKind::Breakpoint),
                vector::DB => Some(TrapKind::SingleStep),
                _ => None,
            },
            _ => None,
        }
    }
}

/// What the kernel does after offering a trap to the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// The trap was not the trace's: deliver it to the guest as usual.
    NotOurs,
    /// Handled; resume the guest.
    Resume,
    /// A tracepoint's program asked for a system dump: stop the system.
    SysDump {
        /// The tracepoint's linear address.
        linear: u32,
    },
}

/// The answer to a trap: what to do next, and what the hit cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dispatch {
    /// What the kernel does next.
    pub next: Next,
    /// Cycles the hit cost a 386 (traps, IRETs, dispatch, the program),
    /// which the kernel adds to its clock; 0 for a trap that was not the
    /// trace's or a single step.
    pub cycles: u64,
}

impl Dispatch {
    /// Not the trace's trap, and free.
    pub const NOT_OURS: Dispatch = Dispatch {
        next: Next::NotOurs,
        cycles: 0,
    };

    /// Handled at `cycles`' cost.
    pub fn resume(cycles: u64) -> Dispatch {
        Dispatch {
            next: Next::Resume,
            cycles,
        }
    }
}

// The hit path passes these by value on every trap: keep them two words
// at most (as iced-x86 checks its hot structs).
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(std::mem::size_of::<TrapKind>() == 1);
    assert!(std::mem::size_of::<Next>() == 8);
    assert!(std::mem::size_of::<Dispatch>() == 16);
};
