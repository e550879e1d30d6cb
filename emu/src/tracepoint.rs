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
//!
//! Tracepoints belong to physical memory, as the INT3 does: one inserted
//! through a linear address is in the page that address maps to now (with
//! the current CR3), and the same linear address in another address space
//! is another byte, which is not a tracepoint unless one is inserted there
//! too. A host that keeps several address spaces (an operating system with
//! processes) inserts and removes by physical address
//! ([`Machine::insert_tracepoint_phys`]), including in the address spaces
//! that are not on the CPU at the time, and must remove the tracepoints of
//! a frame before it reuses it for something else.

use crate::cpu::SegReg;
use crate::fault::Fault;
use crate::machine::Machine;
use crate::paging::PageAccess;

/// The INT3 opcode.
pub const INT3: u8 = 0xCC;

impl Machine {
    /// The physical address `linear` maps to now (through CR3's tables
    /// when paging is on), as the host sees it: no TLB fill, no accessed
    /// bit, CR2 untouched. `None` when the page is not present.
    pub fn phys_of(&self, linear: u32) -> Option<u32> {
        if self.cpu.paging() {
            crate::paging::peek(&self.mem, self.cpu.cr3, linear).ok()
        } else {
            Some(linear)
        }
    }

    /// The physical address of the code byte at `linear` at a trap: as
    /// [`Machine::phys_of`], through the TLB, where the page of an
    /// instruction just run is (a miss walks the tables and fills it, as
    /// the fetch would have). CR2 is untouched.
    #[inline]
    pub fn code_phys(&mut self, linear: u32) -> Option<u32> {
        let cr2 = self.cpu.cr2;
        let access = PageAccess {
            write: false,
            user: false,
        };
        let phys = self.translate(linear, access).ok();
        self.cpu.cr2 = cr2;
        phys
    }

    /// Inserts a tracepoint at `linear`, that is at the physical byte it
    /// maps to now: writes INT3 there (regardless of page protection, as
    /// [`Machine::patch_code`]) and keeps the byte it replaced, which it
    /// returns. Inserting where there is one already returns the original
    /// byte kept then and changes nothing.
    ///
    /// # Errors
    /// The page is not present.
    pub fn insert_tracepoint(&mut self, linear: u32) -> Result<u8, Fault> {
        let phys = self
            .phys_of(linear)
            .ok_or(Fault::code(crate::fault::vector::PF, 0))?;
        Ok(self.insert_tracepoint_phys(phys))
    }

    /// Inserts a tracepoint at physical address `phys` (in any address
    /// space, on the CPU or not): writes INT3 there and keeps the byte it
    /// replaced, which it returns. Cached decodes of the page drop.
    pub fn insert_tracepoint_phys(&mut self, phys: u32) -> u8 {
        if let Some(&original) = self.tracepoints.get(&phys) {
            return original;
        }
        let mut byte = [0u8];
        self.read_phys(phys, &mut byte);
        self.write_phys(phys, &[INT3]);
        self.tracepoints.insert(phys, byte[0]);
        byte[0]
    }

    /// Removes the tracepoint at `linear` (the physical byte it maps to
    /// now), writing back the byte it replaced. Returns that byte, or
    /// `None` where there was none.
    ///
    /// # Errors
    /// The page is not present: nothing is removed (a host that knows the
    /// frame removes it with [`Machine::remove_tracepoint_phys`]).
    pub fn remove_tracepoint(&mut self, linear: u32) -> Result<Option<u8>, Fault> {
        let phys = self
            .phys_of(linear)
            .ok_or(Fault::code(crate::fault::vector::PF, 0))?;
        Ok(self.remove_tracepoint_phys(phys))
    }

    /// Removes the tracepoint at physical address `phys`, writing back the
    /// byte it replaced. Returns that byte, or `None` where there was none.
    pub fn remove_tracepoint_phys(&mut self, phys: u32) -> Option<u8> {
        let original = self.tracepoints.remove(&phys)?;
        if let Some(lin) = self.skip_tracepoint
            && self.phys_of(lin).is_none_or(|p| p == phys)
        {
            self.skip_tracepoint = None;
        }
        self.write_phys(phys, &[original]);
        Some(original)
    }

    /// The original byte of the tracepoint at `linear` (where it maps to
    /// now), if there is one.
    pub fn tracepoint(&self, linear: u32) -> Option<u8> {
        self.tracepoint_phys(self.phys_of(linear)?)
    }

    /// The original byte of the tracepoint at physical address `phys`, if
    /// there is one.
    pub fn tracepoint_phys(&self, phys: u32) -> Option<u8> {
        self.tracepoints.get(&phys).copied()
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
}
