//! The interrupted guest as a trace program sees it: [`rpn_vm::TracedMachine`]
//! over the emulated machine at a TRAP3.
//!
//! Registers are the CPU's own, read where the program reads them: at a
//! hit the CPU stands as the trap frame holds it (EIP is the INT3's
//! address plus one, as DynamicTrace saw it), and nothing the program does
//! changes a register, so no copy of the CPU is taken.
//! Flat reads go through the MMU; a page fault becomes the page-not-present
//! token with the address of the first byte that could not be read.
//! Segmented reads look the selector up with `emu::Machine::segment_of`,
//! the CPU's own rule for a data-segment load at ring 0: a null
//! selector, an index past the table's limit, a system descriptor or an
//! execute-only code segment is an invalid selector (token 0xFF); a
//! descriptor that is not present gives token 0xFE; an offset outside the
//! limit (`emu::Segment::contains`, expand-down segments included) gives
//! 0xFF with `sel:off`. In real and V86 mode a selector is a
//! paragraph and only paging can fault.

use emu::{Access, Gpr, Machine as Emu, SegReg, vector};
use rpn_vm::{FaultKind, MemFault, Reg};

/// An object of the traced module: its selector (16:16 view) and flat base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ObjectMapping {
    /// Selector recorded when the tracepoints were inserted (0: none).
    pub selector: u16,
    /// Flat (linear) base address.
    pub flat_base: u32,
}

/// The guest at a tracepoint hit.
pub struct GuestView<'a> {
    emu: &'a mut Emu,
    objects: &'a [ObjectMapping],
}

impl<'a> GuestView<'a> {
    /// A view of `emu` at a hit, with the objects of the traced module.
    pub fn new(emu: &'a mut Emu, objects: &'a [ObjectMapping]) -> GuestView<'a> {
        GuestView { emu, objects }
    }

    fn read_linear(&mut self, address: u32, buf: &mut [u8]) -> Result<(), MemFault> {
        if self.emu.read_linear(address, buf).is_ok() {
            return Ok(());
        }
        // Find the first byte that faults, for the logged address.
        for (i, slot) in buf.iter_mut().enumerate() {
            let at = address.wrapping_add(i as u32);
            let mut byte = [0u8];
            if self.emu.read_linear(at, &mut byte).is_err() {
                return Err(MemFault {
                    kind: FaultKind::PageNotPresent,
                    address: at,
                });
            }
            *slot = byte[0];
        }
        Ok(())
    }
}

impl rpn_vm::TracedMachine for GuestView<'_> {
    fn reg(&self, reg: Reg) -> u32 {
        let f = self.emu.cpu();
        let sreg = |s: SegReg| u32::from(f.sreg(s).selector);
        match reg {
            Reg::Eax => f.gpr[Gpr::Eax],
            Reg::Ecx => f.gpr[Gpr::Ecx],
            Reg::Edx => f.gpr[Gpr::Edx],
            Reg::Ebx => f.gpr[Gpr::Ebx],
            Reg::Esp => f.gpr[Gpr::Esp],
            Reg::Ebp => f.gpr[Gpr::Ebp],
            Reg::Esi => f.gpr[Gpr::Esi],
            Reg::Edi => f.gpr[Gpr::Edi],
            Reg::Es => sreg(SegReg::Es),
            Reg::Cs => sreg(SegReg::Cs),
            Reg::Ss => sreg(SegReg::Ss),
            Reg::Ds => sreg(SegReg::Ds),
            Reg::Fs => sreg(SegReg::Fs),
            Reg::Gs => sreg(SegReg::Gs),
            Reg::Eflags => f.eflags,
            Reg::Eip => f.eip,
        }
    }

    #[inline]
    fn registers(&self) -> [u32; 16] {
        let f = self.emu.cpu();
        let g = &f.gpr;
        let sreg = |s: SegReg| u32::from(f.sreg(s).selector);
        // In `Reg` order (checked against `reg` in the tests).
        [
            g[Gpr::Eax],
            g[Gpr::Ecx],
            g[Gpr::Edx],
            g[Gpr::Ebx],
            g[Gpr::Esp],
            g[Gpr::Ebp],
            g[Gpr::Esi],
            g[Gpr::Edi],
            sreg(SegReg::Es),
            sreg(SegReg::Cs),
            sreg(SegReg::Ss),
            sreg(SegReg::Ds),
            f.eflags,
            f.eip,
            sreg(SegReg::Fs),
            sreg(SegReg::Gs),
        ]
    }

    /// The CPU's own general registers, in `Reg` order (checked in the
    /// tests): lent to the native tier for programs that push no other.
    #[inline]
    fn gpr_file(&self) -> Option<&[u32; 8]> {
        Some(&self.emu.cpu().gpr)
    }

    fn read_flat(&mut self, address: u32, buf: &mut [u8]) -> Result<(), MemFault> {
        self.read_linear(address, buf)
    }

    fn read_segmented(
        &mut self,
        selector: u16,
        offset: u32,
        buf: &mut [u8],
    ) -> Result<(), MemFault> {
        let at = |off: u32| (u32::from(selector) << 16) | (off & 0xFFFF);
        let cpu = self.emu.cpu();
        if !cpu.protected() || cpu.v86() {
            let base = u32::from(selector) << 4;
            return self.read_linear(base.wrapping_add(offset & 0xFFFF), buf);
        }
        // The CPU's own descriptor lookup and limit rule, without side
        // effects (emu::Machine::segment_of).
        let seg = self
            .emu
            .segment_of(selector, Access::Read)
            .map_err(|f| MemFault {
                kind: if f.vector == vector::NP {
                    FaultKind::SelectorNotPresent
                } else {
                    FaultKind::InvalidSelector
                },
                address: at(offset),
            })?;
        if !seg.contains(offset, buf.len() as u32) {
            let first_bad = if seg.expand_down() || offset > seg.limit {
                offset
            } else {
                seg.limit.wrapping_add(1)
            };
            return Err(MemFault {
                kind: FaultKind::InvalidSelector,
                address: at(first_bad),
            });
        }
        self.read_linear(seg.base.wrapping_add(offset), buf)
    }

    fn object_selector(&self, object: u32) -> u16 {
        object
            .checked_sub(1)
            .and_then(|i| self.objects.get(i as usize))
            .map_or(0, |o| o.selector)
    }

    fn object_flat_base(&self, object: u32) -> u32 {
        object
            .checked_sub(1)
            .and_then(|i| self.objects.get(i as usize))
            .map_or(0, |o| o.flat_base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpn_vm::TracedMachine as _;

    #[test]
    fn registers_are_reg_in_reg_order() {
        let mut emu = Emu::new(emu::MachineConfig::default());
        for (i, r) in emu.gpr_mut().iter_mut().enumerate() {
            *r = 0x1111_1111 * (i as u32 + 1);
        }
        let segs = [
            SegReg::Es,
            SegReg::Cs,
            SegReg::Ss,
            SegReg::Ds,
            SegReg::Fs,
            SegReg::Gs,
        ];
        for (i, s) in segs.into_iter().enumerate() {
            emu.set_segment(s, emu::Segment::null(0x100 + i as u16 * 8));
        }
        emu.set_eip(0xE1E1_E1E1);
        *emu.eflags_mut() = 0x0000_0246;
        let view = GuestView::new(&mut emu, &[]);
        let want = Reg::ALL.map(|r| view.reg(r));
        assert_eq!(view.registers(), want);
        assert_eq!(view.gpr_file().map(|g| g.as_slice()), Some(&want[..8]));
        // Every register distinct, so a swap cannot pass.
        let mut sorted = want.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 16);
    }
}
