//! Executable memory, the call into compiled code, and the callback entry:
//! the only unsafe code of `rpn_vm`.
//!
//! # Audit note: what the generated code touches
//!
//! `compile.rs` emits code that receives a pointer to a [`Frame`] on the
//! Rust stack of `Compiled::run` (or, for the lean entry, to the sixteen
//! registers alone), and the interpreter, log and variable pointers (in
//! registers, so that it needs no prologue), and touches memory only
//! through those:
//!
//! * the frame's own fields, at constant offsets from `offset_of!`
//!   (registers at `regs + 4 * r`, `r < 16`, read only); lean code reads
//!   the registers alone, at the same offsets (`regs` is the frame's first
//!   field), and no other field: `regs + 4 * r` only for the registers `r`
//!   the program pushes, so only the first eight when it pushes no other;
//! * the `Slow` part of the frame, through `frame.slow`, only in code
//!   the compiler marked `slow` (it calls back or checks a variable
//!   index): `Compiled::run` fills it for that code and leaves the pointer
//!   null for other code, which never reads it;
//! * the interpreter's stack through the interpreter pointer (at the
//!   `offset_of!` offset of `Interpreter::stack`): slot `tos & 15` with `tos` a
//!   compile-time constant, so always inside the 16 slots (and, storing
//!   zeros, 16 or 8 bytes at slot `4k` or `2k`, inside them too); and, at every
//!   exit, the interpreter's `tos` (a value below 16) and its log buffer's
//!   `len` (the log length, at most `logmax`), at their `offset_of!`
//!   offsets;
//! * the variables through the variables pointer: an immediate index `i` only when
//!   `Compiled::run` has checked `i < vars_len` before the call (it
//!   interprets the hit otherwise), a stack value only after
//!   `cmp index, vars_len; jae error` (64-bit, the index zero-extended), so
//!   every access is below `vars_len`, the length of the `&mut [u32]`
//!   `Compiled::run` was given;
//! * the log through the log pointer, the interpreter's `LOG_CAPACITY`
//!   (0xFFFF) bytes: `Log WN/DN,n` writes `W * n` bytes at `log_len` only
//!   after checking `log_len + W * n <= logmax`, and `logmax` is at most
//!   `LOG_CAPACITY`; lean code checks nothing, and is called only when
//!   everything the program can log (every `Log WN/DN` once) is at most
//!   the log limit and `LOG_CAPACITY`; a `Log WN/DN` that does not fit ends the hit and
//!   `Compiled::run` logs what fits; memory and string items are logged by
//!   the callback (`log_len` only grows by what was checked or what the
//!   callback logged);
//! * its own machine stack: only RDI, pushed around a callback and popped
//!   right after it. It uses caller-saved registers only (XMM0 among
//!   them, for zeros), so it saves none; every exit returns the
//!   [`NativeExit`] in RAX and RDX.
//!
//! Every other effect goes through `slow.callback`, [`dispatch`], which
//! rebuilds references from the frame and runs the interpreter's helpers
//! (safe code, `callbacks.rs`). Jumps are all forward and to labels the
//! assembler resolved; there is no indirect jump and no computed address
//! outside the checks above. The code is written once, made read-only and
//! executable (`make_exec`), and never changed.

#![allow(unsafe_code)]

use std::ops::Range;
use std::sync::Arc;

use super::callbacks;
use super::frame::{Frame, NativeExit};
use crate::interp::{Interpreter, LOG_CAPACITY};
use crate::machine::TracedMachine;

/// The entry point: `exit = entry(frame, interp, log, vars)`, the
/// pointers passed in registers so that the code needs no prologue; the
/// [`NativeExit`] comes back in RAX and RDX.
type Entry =
    unsafe extern "sysv64" fn(*mut Frame, *mut Interpreter, *mut u8, *mut u32) -> NativeExit;

/// The lean entry point: as [`Entry`], with the sixteen registers alone in
/// place of the frame (the frame starts with them, so the code reads them
/// at the same offsets).
type LeanEntry =
    unsafe extern "sysv64" fn(*const u32, *mut Interpreter, *mut u8, *mut u32) -> NativeExit;

/// A compiled program's machine code, mapped executable.
pub(crate) struct Code {
    /// Keeps the mapping alive as long as `entry` may be called; shared by
    /// the programs compiled together ([`Code::new_many`]).
    map: Arc<memmap2::Mmap>,
    /// This program's bytes within `map`.
    range: Range<usize>,
    entry: Entry,
}

/// A compiled program's code for the lean entry (`compile.rs`'s
/// `Output::lean`), mapped executable.
pub(crate) struct LeanCode {
    /// Keeps the mapping alive as long as `entry` may be called.
    map: Arc<memmap2::Mmap>,
    /// This code's bytes within `map`.
    range: Range<usize>,
    entry: LeanEntry,
}

impl std::fmt::Debug for LeanCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeanCode")
            .field("len", &self.range.len())
            .finish()
    }
}

/// Where each program starts in a shared mapping: a multiple of this.
const ALIGN: usize = 16;

impl std::fmt::Debug for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Code")
            .field("len", &self.range.len())
            .finish()
    }
}

impl Code {
    /// Maps the code of several programs into one read-only, executable
    /// mapping (a page per program would not scale to a TDF's thousands
    /// of tracepoints): `programs`, code emitted for the [`Frame`] entry,
    /// and `lean`, code emitted for the lean entry; `None` if the mapping
    /// fails.
    pub(crate) fn new_many(
        programs: &[&[u8]],
        lean: &[&[u8]],
    ) -> Option<(Vec<Code>, Vec<LeanCode>)> {
        let mut ranges = Vec::with_capacity(programs.len() + lean.len());
        let mut end: usize = 0;
        for bytes in programs.iter().chain(lean) {
            let start = end.next_multiple_of(ALIGN);
            end = start + bytes.len();
            ranges.push(start..end);
        }
        // Padding between programs is INT3, never reached: each program
        // ends in RET.
        let mut map = memmap2::MmapMut::map_anon(end.max(1)).ok()?;
        map.fill(0xCC);
        for (bytes, range) in programs.iter().chain(lean).zip(&ranges) {
            map[range.clone()].copy_from_slice(bytes);
        }
        let map = Arc::new(map.make_exec().ok()?);
        let lean_ranges = ranges.split_off(programs.len());
        let leans = lean_ranges
            .into_iter()
            .map(|range| {
                // SAFETY: as for the frame entries below, with the code
                // `compile.rs` emitted for the lean entry: the body of a
                // sysv64 function of the `LeanEntry` type (registers,
                // interpreter, log, variables) returning a `NativeExit` in
                // RAX:RDX.
                let entry = unsafe {
                    std::mem::transmute::<*const u8, LeanEntry>(map.as_ptr().add(range.start))
                };
                LeanCode {
                    map: Arc::clone(&map),
                    range,
                    entry,
                }
            })
            .collect();
        let codes = ranges
            .into_iter()
            .map(|range| {
                // SAFETY: `range.start` is inside the mapping (or its end,
                // for an empty program, which compile.rs never emits), and
                // the mapping there holds the code `compile.rs` emitted,
                // which starts with the body of a sysv64 function of the
                // `Entry` type (frame, interpreter, log, variables)
                // returning a `NativeExit` in RAX:RDX; the function pointer is
                // only called while `map` (stored beside it) is alive.
                let entry = unsafe {
                    std::mem::transmute::<*const u8, Entry>(map.as_ptr().add(range.start))
                };
                Code {
                    map: Arc::clone(&map),
                    range,
                    entry,
                }
            })
            .collect();
        Some((codes, leans))
    }

    /// The machine code, for disassembly.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.map[self.range.clone()]
    }

    /// Runs the code on `frame`; returns how the hit ended.
    ///
    /// As `Compiled::run` calls it: `interp` pointing at the
    /// `Interpreter`, `log` at its `LOG_CAPACITY` writable bytes, `vars` at
    /// a live `&mut [u32]` of `vars_len` entries; for code marked `slow`,
    /// `frame.slow` pointing at a `Slow` holding the same three pointers,
    /// `vars_len`, `machine` pointing at a live `M` and `callback` being
    /// `dispatch::<M>` for that same `M`.
    pub(crate) fn call(
        &self,
        frame: &mut Frame,
        interp: *mut Interpreter,
        log: *mut u8,
        vars: *mut u32,
    ) -> NativeExit {
        // SAFETY: the code only touches the frame, the interpreter, the
        // variables and the log through these pointers, with the bounds
        // checks listed in the module doc, reads `frame.slow` only when
        // compiled to (and then it is filled), and calls back only through
        // `slow.callback`. The pointers are valid for the whole call: they
        // come from exclusive borrows held by `Compiled::run` across it, and
        // nothing else uses them meanwhile. The code changes no callee-saved
        // register and calls back with the stack aligned as the sysv64 ABI
        // requires.
        unsafe { (self.entry)(frame, interp, log, vars) }
    }
}

impl LeanCode {
    /// The machine code, for disassembly.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.map[self.range.clone()]
    }

    /// Runs the lean code; returns how the hit ended.
    ///
    /// As `Compiled::run` calls it: `regs` pointing at the sixteen
    /// registers, or at the eight general ones for code of a program that
    /// pushes no other register, `interp`, `log` and `vars` as for
    /// [`Code::call`], and a
    /// log limit at least the program's bound (`Output::bound`), so that
    /// every `Log WN/DN` fits in the `LOG_CAPACITY` bytes at `log`.
    pub(crate) fn call(
        &self,
        regs: *const u32,
        interp: *mut Interpreter,
        log: *mut u8,
        vars: *mut u32,
    ) -> NativeExit {
        // SAFETY: as for `Code::call`, except that the code reads only the
        // registers the program pushes at `regs` (valid for the call: a
        // borrow or a local of `Compiled::run`, of all sixteen, or of the
        // eight general ones when the program pushes no other), never a
        // frame field past them, and
        // calls nothing back (`compile.rs` refuses the lean entry for such
        // code); it writes at most the program's bound into the log
        // without checking the limit, and the bound is at most
        // `LOG_CAPACITY` (`compile.rs`) and at most the hit's log limit
        // (`Compiled::run` checks).
        unsafe { (self.entry)(regs, interp, log, vars) }
    }
}

/// The callback the native code calls through `slow.callback`, for a
/// machine of type `M`.
///
/// # Safety
/// `frame` must be the frame [`Code::call`] was given, with `slow` filled:
/// `machine` pointing at a live `M` and `log` at `LOG_CAPACITY` bytes,
/// neither otherwise borrowed during the call.
pub(crate) unsafe extern "sysv64" fn dispatch<M: TracedMachine>(
    frame: *mut Frame,
    op: u64,
    a: u64,
    b: u64,
    c: u64,
) -> u64 {
    // SAFETY: per the contract above, `frame` is the exclusive frame of the
    // running hit (the native code does not touch it during the call).
    let frame = unsafe { &mut *frame };
    // SAFETY: `frame.slow` is not null for code that calls back, and
    // points at the `Slow` of `Compiled::run`, a separate local from the
    // frame, alive and not otherwise used during the call.
    let slow = unsafe { &mut *frame.slow };
    // SAFETY: `slow.machine` is the `&mut M` `Compiled::run` holds across
    // the call, as a raw pointer, not used by anything else while the
    // native code runs.
    let machine: &mut M = unsafe { &mut *slow.machine.cast::<M>() };
    // SAFETY: `slow.log` points at the interpreter's log buffer of
    // `LOG_CAPACITY` bytes, exclusively borrowed by `Compiled::run` for the
    // hit; the native code does not write it during the call. It is a
    // separate allocation from the frame.
    let log = unsafe { std::slice::from_raw_parts_mut(slow.log, LOG_CAPACITY) };
    callbacks::dispatch(slow, frame.logmax, machine, log, op as u32, [a, b, c])
}
