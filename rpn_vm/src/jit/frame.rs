//! The frame: everything a compiled program reads and writes, in one
//! `#[repr(C)]` block whose address the native code keeps in RDI.
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
/// already; a CRMA miss; a log that did not fit), the hit ends incomplete.
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
/// `Log WN,n` that does not fit the log limit: `a` = top of stack, `b` =
/// `n`. Logs what fits; returns the [`NativeExit`] of an incomplete hit (with
/// the stack index and log length it left), packed.
pub(crate) const CB_LOG_WN_PARTIAL: u32 = 11;
/// `Log DN,n` that does not fit: as [`CB_LOG_WN_PARTIAL`].
pub(crate) const CB_LOG_DN_PARTIAL: u32 = 12;

/// What the native code returns (in RAX and RDX): how the hit ended. The
/// final stack index and log length it has stored in the interpreter
/// (`Interpreter::tos`, `LogBuffer::len`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct NativeExit {
    /// A `STATUS_*`.
    pub(crate) status: u64,
    /// The cycles spent.
    pub(crate) cycles: u64,
}

/// What the partial-log callbacks return: `status | tos << 8 | log_len <<
/// 16`, a `STATUS_*`, the top-of-stack index, and the bytes logged (at most
/// `LOG_CAPACITY`, 16 bits); the native code stores the last two in the
/// interpreter.
pub(crate) fn pack(status: u32, tos: u8, log_len: u64) -> u64 {
    u64::from(status) | (u64::from(tos & 15) << 8) | (log_len << 16)
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
/// A variable index out of range: [`Frame::err_index`].
pub(crate) const STATUS_VAR_ERROR: u32 = 5;

/// The frame of one hit.
#[repr(C)]
pub(crate) struct Frame {
    /// The registers the program pushes, indexed by `Reg as usize`
    /// (the others stay zero and are never read).
    pub(crate) regs: [u32; 16],
    /// Bytes logged so far, kept in R9 while running (passed in as zero)
    /// and stored here around callbacks.
    pub(crate) log_len: u64,
    /// Cycles so far, kept in R8 while running (passed in as zero) and
    /// stored here around callbacks.
    pub(crate) cycles: u64,
    /// The interpreter's log buffer: `LOG_CAPACITY` bytes (RDX while
    /// running).
    pub(crate) log: *mut u8,
    /// The log limit, at most `LOG_CAPACITY`.
    pub(crate) logmax: u64,
    /// The interpreter (`repr(C)`): its circular stack (16 slots, zeroed
    /// before the hit) at offset 0, then its stack index and log buffer,
    /// whose length the code sets at every exit. Passed in and kept in RSI
    /// (and here for reloading after callbacks).
    pub(crate) interp: *mut u32,
    /// The DTO's variables (RCX while running).
    pub(crate) vars: *mut u32,
    /// Number of variables.
    pub(crate) vars_len: u64,
    /// The variable index of a [`STATUS_VAR_ERROR`].
    pub(crate) err_index: u32,
    /// Major code, after any SetMaj.
    pub(crate) major: u16,
    /// Minor code, after any SetMin.
    pub(crate) minor: u16,
    /// A `*mut M`: the machine, for the callback only.
    pub(crate) machine: *mut (),
    /// The callback, monomorphized for the machine.
    pub(crate) callback: Callback,
}
