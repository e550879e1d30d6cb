//! Guest memory access: segment checks (limit, expand-down, type), linear
//! to physical translation through [`crate::paging`], page-crossing
//! accesses, and the host's linear/segmented/physical access API.
//!
//! Every segmented access checks the cached descriptor: the offset range
//! against the limit (expand-down segments accept offsets above the limit
//! up to 0xFFFF or 0xFFFFFFFF by their B bit), and in protected mode the
//! type (readable / writable). A failure is #SS(0) for SS and #GP(0)
//! otherwise. Real and V86 mode check only the limit, as the 386 does.

use crate::cpu::{Access, CpuModel, SegReg};
use crate::fault::{Fault, R};
use crate::machine::Machine;
use crate::paging::PageAccess;

impl Machine {
    /// Linear to physical for one byte's page.
    #[inline]
    pub(crate) fn translate(&mut self, lin: u32, acc: PageAccess) -> R<u32> {
        if !self.cpu.paging() {
            return Ok(lin);
        }
        self.tlb.translate(
            &mut self.mem,
            self.cpu.cr0,
            self.cpu.cr3,
            &mut self.cpu.cr2,
            lin,
            acc,
        )
    }

    /// Read `n` bytes at a linear address.
    #[inline]
    pub(crate) fn lin_read(&mut self, lin: u32, n: u32, user: bool) -> R<u32> {
        let acc = PageAccess { write: false, user };
        if (lin & 0xFFF) + n <= 0x1000 {
            let p = self.translate(lin, acc)?;
            return Ok(self.mem.read(p, n));
        }
        let mut v = 0;
        for i in 0..n {
            let p = self.translate(lin.wrapping_add(i), acc)?;
            v |= u32::from(self.mem.read8(p)) << (8 * i);
        }
        Ok(v)
    }

    /// Write `n` bytes at a linear address (all pages are checked first).
    #[inline]
    pub(crate) fn lin_write(&mut self, lin: u32, n: u32, v: u32, user: bool) -> R<()> {
        let acc = PageAccess { write: true, user };
        if (lin & 0xFFF) + n <= 0x1000 {
            let p = self.translate(lin, acc)?;
            self.mem.write(p, n, v);
            return Ok(());
        }
        let p0 = self.translate(lin, acc)?;
        let p1 = self.translate(lin.wrapping_add(n - 1), acc)?;
        for i in 0..n {
            let l = lin.wrapping_add(i);
            let p = if l >> 12 == lin >> 12 {
                p0 + i
            } else {
                (p1 & !0xFFF) | (l & 0xFFF)
            };
            self.mem.write8(p, (v >> (8 * i)) as u8);
        }
        Ok(())
    }

    #[inline]
    fn seg_fault(&self, s: SegReg) -> Fault {
        // The 286 reports real-mode stack limit violations as #GP too.
        if s == SegReg::Ss && (self.model != CpuModel::I286 || self.cpu.protected()) {
            Fault::ss(0)
        } else {
            Fault::gp(0)
        }
    }

    /// Check an access to `s:off` of `n` bytes and return its linear address.
    #[inline]
    pub(crate) fn seg_linear(&self, s: SegReg, off: u32, n: u32, write: bool) -> R<u32> {
        let seg = &self.cpu.seg[s];
        if !seg.contains(off, n) {
            return Err(self.seg_fault(s));
        }
        if self.cpu.protected() && !self.cpu.v86() {
            let access = if write { Access::Write } else { Access::Read };
            if !seg.permits(access) {
                return Err(self.seg_fault(s));
            }
        }
        Ok(seg.base.wrapping_add(off))
    }

    /// Segmented read of `n` (1, 2, 4) bytes.
    #[inline]
    pub(crate) fn read_mem(&mut self, s: SegReg, off: u32, n: u32) -> R<u32> {
        let lin = self.seg_linear(s, off, n, false)?;
        let user = self.cpu.cpl == 3;
        self.lin_read(lin, n, user)
    }

    /// Segmented write of `n` (1, 2, 4) bytes.
    #[inline]
    pub(crate) fn write_mem(&mut self, s: SegReg, off: u32, n: u32, v: u32) -> R<()> {
        let lin = self.seg_linear(s, off, n, true)?;
        let user = self.cpu.cpl == 3;
        self.lin_write(lin, n, v, user)
    }

    /// System (supervisor) linear read: descriptor tables, TSS, IDT.
    pub(crate) fn sys_read(&mut self, lin: u32, n: u32) -> R<u32> {
        self.lin_read(lin, n, false)
    }

    /// System (supervisor) linear write.
    pub(crate) fn sys_write(&mut self, lin: u32, n: u32, v: u32) -> R<()> {
        self.lin_write(lin, n, v, false)
    }

    /// Host: read guest memory at a linear address (supervisor access; page
    /// faults are returned, CR2 is left untouched).
    ///
    /// One translation per page: the bytes before a faulting page are
    /// read, as a byte-by-byte read would leave them.
    pub fn read_linear(&mut self, lin: u32, out: &mut [u8]) -> Result<(), Fault> {
        let cr2 = self.cpu.cr2;
        let access = PageAccess {
            write: false,
            user: false,
        };
        let mut r = Ok(());
        let mut done = 0;
        while done < out.len() {
            let at = lin.wrapping_add(done as u32);
            let n = ((0x1000 - (at & 0xFFF)) as usize).min(out.len() - done);
            match self.translate(at, access) {
                Ok(p) => self.mem.read_bytes(p, &mut out[done..done + n]),
                Err(f) => {
                    r = Err(f);
                    break;
                }
            }
            done += n;
        }
        self.cpu.cr2 = cr2;
        r
    }

    /// Host: read guest memory at a linear address without side effects:
    /// no TLB fill, no accessed bits, CR2 untouched (a supervisor read;
    /// a not-present page is #PF).
    pub(crate) fn peek_linear(&self, lin: u32, out: &mut [u8]) -> Result<(), Fault> {
        for (i, b) in out.iter_mut().enumerate() {
            let l = lin.wrapping_add(i as u32);
            let p = if self.cpu.paging() {
                crate::paging::peek(&self.mem, self.cpu.cr3, l)?
            } else {
                l
            };
            *b = self.mem.read8(p);
        }
        Ok(())
    }

    /// Host: write guest memory at a linear address (supervisor access, so
    /// on a 386 read-only pages are writable unless CR0.WP; page faults are
    /// returned, CR2 is left untouched).
    ///
    /// One translation per page, as a byte-by-byte write would have: after
    /// the first byte's write translation (A and D set, or the fault) the
    /// page's other bytes hit the TLB entry it left. The bytes before a
    /// faulting page are written.
    pub fn write_linear(&mut self, lin: u32, data: &[u8]) -> Result<(), Fault> {
        let cr2 = self.cpu.cr2;
        let access = PageAccess {
            write: true,
            user: false,
        };
        let mut r = Ok(());
        let mut done = 0;
        while done < data.len() {
            let at = lin.wrapping_add(done as u32);
            let n = ((0x1000 - (at & 0xFFF)) as usize).min(data.len() - done);
            match self.translate(at, access) {
                Ok(p) => self.mem.write_bytes(p, &data[done..done + n]),
                Err(f) => {
                    r = Err(f);
                    break;
                }
            }
            done += n;
        }
        self.cpu.cr2 = cr2;
        r
    }

    /// Host: patch code bytes at a linear address regardless of page
    /// protection (like a debugger inserting INT3). Cached decodes of the
    /// bytes are dropped. Not-present pages are an error.
    pub fn patch_code(&mut self, lin: u32, data: &[u8]) -> Result<(), Fault> {
        let cr2 = self.cpu.cr2;
        let mut r = Ok(());
        for (i, b) in data.iter().enumerate() {
            let l = lin.wrapping_add(i as u32);
            match self.translate(
                l,
                PageAccess {
                    write: false,
                    user: false,
                },
            ) {
                Ok(p) => self.mem.write8(p, *b),
                Err(f) => {
                    r = Err(f);
                    break;
                }
            }
        }
        self.cpu.cr2 = cr2;
        let pages = std::mem::take(&mut self.mem.dirty_code);
        for p in pages {
            self.icache.invalidate_page(p);
        }
        r
    }

    /// Host: read through a segment register (limit and type checks as the
    /// guest would see them at CPL 0 paging rights).
    pub fn read_virt(&mut self, s: SegReg, off: u32, out: &mut [u8]) -> Result<(), Fault> {
        for (i, b) in out.iter_mut().enumerate() {
            let lin = self.seg_linear(s, off.wrapping_add(i as u32), 1, false)?;
            let mut x = [0u8];
            self.read_linear(lin, &mut x)?;
            *b = x[0];
        }
        Ok(())
    }

    /// Host: write through a segment register.
    pub fn write_virt(&mut self, s: SegReg, off: u32, data: &[u8]) -> Result<(), Fault> {
        for (i, b) in data.iter().enumerate() {
            let lin = self.seg_linear(s, off.wrapping_add(i as u32), 1, true)?;
            self.write_linear(lin, &[*b])?;
        }
        Ok(())
    }

    /// Host: read physical memory (open bus reads 0xFF).
    pub fn read_phys(&self, addr: u32, out: &mut [u8]) {
        self.mem.read_bytes(addr, out);
    }

    /// Host: write physical memory.
    pub fn write_phys(&mut self, addr: u32, data: &[u8]) {
        self.mem.write_bytes(addr, data);
        let pages = std::mem::take(&mut self.mem.dirty_code);
        for p in pages {
            self.icache.invalidate_page(p);
        }
    }

    /// Host: map a read-only ROM image at a physical address.
    pub fn map_rom(&mut self, base: u32, data: Vec<u8>) {
        self.mem.map_rom(base, data);
        self.flush_caches();
    }
}
