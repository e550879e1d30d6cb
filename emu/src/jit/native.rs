//! Executable memory for translated blocks and the call into them: the only
//! module of the crate with `unsafe` code.
//!
//! # Safety audit
//!
//! - The bytes come only from [`super::emit::emit`], as an [`Emitted`] that
//!   no other module can build. That code is a leaf function with the
//!   System V x86-64 calling convention: it takes one argument, a pointer to
//!   a [`State`] (in RDI), pushes RBX and RBP and pops them before its single
//!   `ret`, and restores nothing else because it touches only caller-saved
//!   registers besides those two (RAX RCX RDX RSI RDI R8 R9 R11, and RFLAGS,
//!   which it leaves with DF clear as it found it: its one POPFQ, if any, loads
//!   the six arithmetic flags plus the always-one bit and IF).
//! - Its only memory operands are `[r11 + k]` with R11 = the `State`
//!   pointer and `k` one of the `OFF_*` constants below (checked against
//!   the `#[repr(C)]` layout at compile time), each access inside
//!   `size_of::<State>()`, plus its own stack pushes and pops. It never
//!   sees a pointer into the machine or into guest memory: [`Code::call`]
//!   hands it a `State` that lives on the Rust stack, and the caller copies
//!   registers in and out around the call.
//! - Its branches are label-relative inside the block; it calls nothing.
//!   Every loop decrements the pass budget (RCX) and leaves when it reaches
//!   zero, so it returns once `State::budget` passes are spent.
//! - The memory is mapped writable, filled, and then switched to read+exec
//!   (never writable and executable at once); it is unmapped when the
//!   [`Code`] is dropped, which the block cache only does outside a call.

#![allow(unsafe_code)]

use memmap2::{Mmap, MmapMut};
use std::mem::offset_of;

/// Registers and budgets exchanged with a translated block.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct State {
    /// EAX..EDI in and out.
    pub gpr: [u32; 8],
    /// Out: the guest EIP where the block left.
    pub eip: u32,
    /// Out: which exit the block took (`EXIT_*` in the emitter).
    pub exit: u32,
    /// In: the host RFLAGS image to start with (guest arithmetic flags,
    /// bit 1, IF); out: the host RFLAGS at the exit.
    pub flags: u64,
    /// In: passes the block may loop back for (at least 1); out: what is
    /// left of it.
    pub budget: u64,
}

/// Offset of `State::gpr`.
pub(crate) const OFF_GPR: i32 = 0;
/// Offset of `State::eip`.
pub(crate) const OFF_EIP: i32 = 32;
/// Offset of `State::exit`.
pub(crate) const OFF_EXIT: i32 = 36;
/// Offset of `State::flags`.
pub(crate) const OFF_FLAGS: i32 = 40;
/// Offset of `State::budget`.
pub(crate) const OFF_BUDGET: i32 = 48;

const _: () = {
    assert!(offset_of!(State, gpr) == OFF_GPR as usize);
    assert!(offset_of!(State, eip) == OFF_EIP as usize);
    assert!(offset_of!(State, exit) == OFF_EXIT as usize);
    assert!(offset_of!(State, flags) == OFF_FLAGS as usize);
    assert!(offset_of!(State, budget) == OFF_BUDGET as usize);
    assert!(size_of::<State>() == 56);
};

/// Machine code produced by the emitter (the only way to build a [`Code`]).
pub(crate) struct Emitted(Vec<u8>);

impl Emitted {
    /// Wrap the emitter's output. Only `emit` calls this.
    pub(super) fn from_emitter(bytes: Vec<u8>) -> Emitted {
        Emitted(bytes)
    }
    /// The code bytes.
    #[cfg(test)]
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// A translated block in read+exec memory.
pub(crate) struct Code {
    map: Mmap,
}

impl Code {
    /// Map `code` executable.
    pub fn new(code: &Emitted) -> std::io::Result<Code> {
        let mut m = MmapMut::map_anon(code.0.len().max(1))?;
        m[..code.0.len()].copy_from_slice(&code.0);
        Ok(Code {
            map: m.make_exec()?,
        })
    }

    /// Run the block on `st`.
    pub fn call(&self, st: &mut State) {
        let entry = self.map.as_ptr();
        // SAFETY: `entry` is the start of a live read+exec mapping holding
        // an emitter-built leaf function with the System V ABI and the
        // signature below (see the module doc); it reads and writes only
        // `*st` at in-bounds offsets and its own stack frame.
        let f = unsafe { std::mem::transmute::<*const u8, extern "sysv64" fn(*mut State)>(entry) };
        f(st);
    }
}
