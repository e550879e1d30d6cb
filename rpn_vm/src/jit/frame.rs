//! The frame: everything a compiled program reads and writes, in one
//! `#[repr(C)]` block whose address the native code keeps in RDI, and a
//! second block ([`Slow`]) that only code with callbacks or variable index
//! checks reads, which `Compiled::run` fills only for such code.
//!
//! The native code addresses the fields at the fixed offsets
//! [`std::mem::offset_of!`] gives, so this struct is the whole contract
//! between `compile.rs` (which emits those offsets), `native.rs` (which
//! calls the code and the callbacks) and `mod.rs` (which fills the frame
//! before a hit and reads the outcome from it after).

/// The one callback of the native code: `dispatch(frame, op, a, b, c)`,
/// `op` one of the `CB_*` numbers below. It returns a value in the low 32
/// bits and [`FAIL`] when the hit is to end incomplete.
pub(crate) type Callback = unsafe extern "sysv64" fn(*mut Frame, u64, u64, u64, u64) -> u64;

/// Set in a callback's result: the operation failed (a fault, logged
/// already; a CRMA miss; a memory item that did not fit), the hit ends
/// incomplete.
pub(crate) const FAIL: u64 = 1 << 32;

/// `Push OXS`: `a` = object; returns its selector.
pub(crate) const CB_OBJECT_SELECTOR: u32 = 0;
/// `Push OXF`: `a` = object; returns its flat base.
pub(crate) const CB_OBJECT_FLAT_BASE: u32 = 1;
/// `Push WIS`: `a` = selector, `b` = offset; returns the word.
pub(crate) const CB_READ_SEGMENTED_WORD: u32 = 2;
/// `Push SIS`: `a` = selector, `b` = offset; returns the dword.
pub(crate) const CB_READ_SEGMENTED_DWORD: u32 = 3;
/// `Push FIF`: `a` = address; returns the dword.
pub(crate) const CB_READ_FLAT_DWORD: u32 = 4;
/// `Cnvrt FXS`: `a` = address; returns `selector << 16 | offset`.
pub(crate) const CB_FLAT_TO_SEGMENTED: u32 = 5;
/// `Cnvrt SXF`: `a` = selector, `b` = offset; returns the address.
pub(crate) const CB_SEGMENTED_TO_FLAT: u32 = 6;
/// `Log MRS`: `a` = offset, `b` = selector, `c` = length.
pub(crate) const CB_LOG_MRS: u32 = 7;
/// `Log ARS`: as `Log MRS`.
pub(crate) const CB_LOG_ARS: u32 = 8;
/// `Log MRF`: `a` = address, `c` = length.
pub(crate) const CB_LOG_MRF: u32 = 9;
/// `Log ARF`: as `Log MRF`.
pub(crate) const CB_LOG_ARF: u32 = 10;
/// What the native code returns (in RAX and RDX): how the hit ended. The
/// final stack index and log length it has stored in the interpreter
/// (`Interpreter::tos`, `LogBuffer::len`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct NativeExit {
    /// A `STATUS_*` in the low 32 bits; the high 32 bits hold the variable
    /// index of a [`STATUS_VAR_ERROR`] and the item count of a
    /// [`STATUS_PARTIAL_WN`] or [`STATUS_PARTIAL_DN`].
    pub(crate) status: u64,
    /// The cycles spent.
    pub(crate) cycles: u64,
}

/// How the native code ended the hit: logged.
pub(crate) const STATUS_LOGGED: u32 = 0;
/// Logged, marked incomplete.
pub(crate) const STATUS_INCOMPLETE: u32 = 1;
/// `Abort`.
pub(crate) const STATUS_ABORTED: u32 = 2;
/// `Remove`.
pub(crate) const STATUS_REMOVED: u32 = 3;
/// `SysDump`.
pub(crate) const STATUS_SYSDUMP: u32 = 4;
/// A variable index out of range (the index in the high half).
pub(crate) const STATUS_VAR_ERROR: u32 = 5;
/// `Log WN,n` past the log limit (`n` in the high half), with the stack
/// index and log length before it: `Compiled::run` logs what fits, and
/// the hit ends incomplete.
pub(crate) const STATUS_PARTIAL_WN: u32 = 6;
/// `Log DN,n` past the log limit: as [`STATUS_PARTIAL_WN`].
pub(crate) const STATUS_PARTIAL_DN: u32 = 7;

/// The frame of one hit: what every program reads.
#[repr(C)]
pub(crate) struct Frame {
    /// The registers the program pushes, indexed by `Reg as usize`
    /// (the others stay zero and are never read).
    pub(crate) regs: [u32; 16],
    /// The log limit, at most `LOG_CAPACITY`.
    pub(crate) logmax: u64,
    /// Major code, after any SetMaj.
    pub(crate) major: u16,
    /// Minor code, after any SetMin.
    pub(crate) minor: u16,
    /// What callbacks and variable index checks need; null (and never
    /// read) for code that has neither (`Output::slow`).
    pub(crate) slow: *mut Slow,
}

/// The part of the frame only callbacks and variable index checks read.
#[repr(C)]
pub(crate) struct Slow {
    /// Bytes logged so far, kept in R9 while running (passed in as zero)
    /// and stored here around callbacks.
    pub(crate) log_len: u64,
    /// Cycles so far, kept in R8 while running (passed in as zero) and
    /// stored here around callbacks.
    pub(crate) cycles: u64,
    /// The interpreter's log buffer: `LOG_CAPACITY` bytes (RDX while
    /// running, reloaded from here after callbacks).
    pub(crate) log: *mut u8,
    /// The interpreter: its circular stack (16 slots, zeroed before the
    /// hit), its stack index and log buffer,
    /// whose length the code sets at every exit (RSI while running).
    pub(crate) interp: *mut crate::interp::Interpreter,
    /// The DTO's variables (RCX while running).
    pub(crate) vars: *mut u32,
    /// Number of variables.
    pub(crate) vars_len: u64,
    /// A `*mut M`: the machine, for the callback only.
    pub(crate) machine: *mut (),
    /// The callback, monomorphized for the machine.
    pub(crate) callback: Callback,
}
