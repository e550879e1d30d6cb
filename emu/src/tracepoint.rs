//! Tracepoints: INT3s the host inserts whose original instruction the
//! emulator keeps and runs out of line, so that a hit never puts the
//! original byte back.
//!
//! [`Machine::insert_tracepoint`] writes 0xCC at a linear address (guest
//! memory holds the INT3, so a program that reads its code sees it, as on
//! OS/2) and remembers the byte it replaced. The decoder, on a miss at that
//! address while the byte is still 0xCC, decodes the *original* instruction
//! instead and marks the cache entry a tracepoint; it is decoded once and
//! stays cached until its page is written, like any other instruction.
//!
//! A step at a tracepoint entry runs an INT3 (same cycles, the same
//! instruction count, the same #BP exit or delivery, EIP after it), unless
//! the host asked with [`Machine::resume_at_tracepoint`] to run the
//! original there: then the original runs, with the guest's own TF, and
//! nothing is patched or invalidated. A tracepoint therefore costs nothing
//! where it is not reached: it only changes the one decoded entry, and the
//! native tier ends its blocks at the 0xCC it reads from memory.
//!
//! A guest that writes another byte over the INT3 removes the tracepoint
//! in effect (the entry is decoded from memory again), as it would on the
//! hardware; writing 0xCC keeps it.

use crate::cpu::SegReg;
use crate::fault::Fault;
use crate::machine::Machine;
use crate::paging::PageAccess;

/// The INT3 opcode.
pub const INT3: u8 = 0xCC;

impl Machine {
    /// Inserts a tracepoint at `linear`: writes INT3 there (regardless of
    /// page protection, as [`Machine::patch_code`]) and keeps the byte it
    /// replaced, which it returns. Inserting at an address that already
    /// has one returns the original byte kept then and changes nothing.
    ///
    /// # Errors
    /// The page is not present.
    pub fn insert_tracepoint(&mut self, linear: u32) -> Result<u8, Fault> {
        if let Some(&original) = self.tracepoints.get(&linear) {
            return Ok(original);
        }
        let mut byte = [0u8];
        self.read_code_byte(linear, &mut byte)?;
        self.patch_code(linear, &[INT3])?;
        self.tracepoints.insert(linear, byte[0]);
        Ok(byte[0])
    }

    /// Removes the tracepoint at `linear`, writing back the byte it
    /// replaced. Returns that byte, or `None` where there was none.
    ///
    /// # Errors
    /// The page is no longer present (the tracepoint is forgotten anyway).
    pub fn remove_tracepoint(&mut self, linear: u32) -> Result<Option<u8>, Fault> {
        let Some(original) = self.tracepoints.remove(&linear) else {
            return Ok(None);
        };
        if self.skip_tracepoint == Some(linear) {
            self.skip_tracepoint = None;
        }
        self.patch_code(linear, &[original])?;
        Ok(Some(original))
    }

    /// The original byte of the tracepoint at `linear`, if there is one.
    pub fn tracepoint(&self, linear: u32) -> Option<u8> {
        self.tracepoints.get(&linear).copied()
    }

    /// After the #BP of a tracepoint (EIP just past the INT3): moves EIP
    /// back onto the tracepoint and has the next step there run the
    /// original instruction instead of the INT3. No cache is flushed.
    /// Returns the tracepoint's linear address.
    pub fn resume_at_tracepoint(&mut self) -> u32 {
        let cs = self.cpu.seg[SegReg::Cs];
        let eip = self.cpu.eip.wrapping_sub(1);
        self.cpu.eip = if cs.big() { eip } else { eip & 0xFFFF };
        let linear = cs.base.wrapping_add(self.cpu.eip);
        self.skip_tracepoint = Some(linear);
        linear
    }

    /// Reads a byte of code as the host (supervisor, no protection check).
    fn read_code_byte(&mut self, linear: u32, out: &mut [u8; 1]) -> Result<(), Fault> {
        let cr2 = self.cpu.cr2;
        let access = PageAccess {
            write: false,
            user: false,
        };
        let r = self.translate(linear, access);
        self.cpu.cr2 = cr2;
        out[0] = self.mem.read8(r?);
        Ok(())
    }
}
