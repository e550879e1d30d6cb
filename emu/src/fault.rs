//! Guest exceptions. Every error a guest can cause is one of these and is
//! delivered to the guest (or to the host, if it asked to intercept it);
//! nothing a guest does panics the host.

/// Exception vectors.
pub mod vector {
    /// Divide error.
    pub const DE: u8 = 0;
    /// Debug (single step, breakpoints).
    pub const DB: u8 = 1;
    /// Non-maskable interrupt.
    pub const NMI: u8 = 2;
    /// Breakpoint (INT3).
    pub const BP: u8 = 3;
    /// Overflow (INTO).
    pub const OF: u8 = 4;
    /// BOUND range exceeded.
    pub const BR: u8 = 5;
    /// Invalid opcode.
    pub const UD: u8 = 6;
    /// Device not available.
    pub const NM: u8 = 7;
    /// Double fault.
    pub const DF: u8 = 8;
    /// Invalid TSS.
    pub const TS: u8 = 10;
    /// Segment not present.
    pub const NP: u8 = 11;
    /// Stack fault.
    pub const SS: u8 = 12;
    /// General protection.
    pub const GP: u8 = 13;
    /// Page fault.
    pub const PF: u8 = 14;
    /// x87 floating-point error.
    pub const MF: u8 = 16;
    /// Alignment check.
    pub const AC: u8 = 17;
}

/// An exception raised by an instruction (or by delivering one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// Vector number (see [`vector`]).
    pub vector: u8,
    /// Error code pushed with it, if the vector has one.
    pub error: Option<u32>,
}

impl Fault {
    /// Without error code.
    pub const fn new(vector: u8) -> Fault {
        Fault {
            vector,
            error: None,
        }
    }
    /// With error code.
    pub const fn code(vector: u8, error: u32) -> Fault {
        Fault {
            vector,
            error: Some(error),
        }
    }
    /// #GP(code).
    pub const fn gp(error: u32) -> Fault {
        Fault::code(vector::GP, error)
    }
    /// #SS(code).
    pub const fn ss(error: u32) -> Fault {
        Fault::code(vector::SS, error)
    }
    /// #NP(code).
    pub const fn np(error: u32) -> Fault {
        Fault::code(vector::NP, error)
    }
    /// #TS(code).
    pub const fn ts(error: u32) -> Fault {
        Fault::code(vector::TS, error)
    }
    /// #UD.
    pub const fn ud() -> Fault {
        Fault::new(vector::UD)
    }
    /// #DE.
    pub const fn de() -> Fault {
        Fault::new(vector::DE)
    }
    /// Traps report the address of the next instruction; faults restart.
    pub fn is_trap(&self) -> bool {
        matches!(self.vector, vector::BP | vector::OF)
    }
    /// Contributory exceptions for the double-fault rule.
    pub(crate) fn contributory(&self) -> bool {
        matches!(
            self.vector,
            vector::DE | vector::TS | vector::NP | vector::SS | vector::GP
        )
    }
}

/// Result of an operation that can raise a guest exception.
pub type R<T> = Result<T, Fault>;
