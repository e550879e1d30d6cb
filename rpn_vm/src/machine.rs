//! The interrupted machine, as the RPN interpreter sees it.
//!
//! `rpn_vm` knows nothing of the emulator. Everything a trace program can
//! observe goes through [`TracedMachine`]: the registers of the interrupted context
//! (as the trap frame holds them), segmented and flat reads that can fail
//! with a [`MemFault`], the selectors and flat bases of the traced module's
//! objects, and CRMA, the compatibility-region mapping between flat and
//! 16:16 addresses. `kernel_sim` implements it over the emulated machine;
//! [`crate::FakeMachine`] implements it for tests and `os2trace rpn run`.

/// A register of the interrupted context, in the order of the `Push <reg>`
/// opcodes. Segment registers and EFlags read as zero-extended dwords.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reg {
    /// EAX.
    Eax,
    /// ECX.
    Ecx,
    /// EDX.
    Edx,
    /// EBX.
    Ebx,
    /// ESP of the interrupted context.
    Esp,
    /// EBP.
    Ebp,
    /// ESI.
    Esi,
    /// EDI.
    Edi,
    /// ES.
    Es,
    /// CS.
    Cs,
    /// SS of the interrupted context.
    Ss,
    /// DS.
    Ds,
    /// EFLAGS.
    Eflags,
    /// EIP as the trap frame holds it: the address of the INT3 plus one.
    Eip,
    /// FS.
    Fs,
    /// GS.
    Gs,
}

impl Reg {
    /// All registers, in `Push` opcode order.
    pub const ALL: [Reg; 16] = [
        Reg::Eax,
        Reg::Ecx,
        Reg::Edx,
        Reg::Ebx,
        Reg::Esp,
        Reg::Ebp,
        Reg::Esi,
        Reg::Edi,
        Reg::Es,
        Reg::Cs,
        Reg::Ss,
        Reg::Ds,
        Reg::Eflags,
        Reg::Eip,
        Reg::Fs,
        Reg::Gs,
    ];

    /// Lower-case name (`eax`, `eflags`).
    pub fn name(self) -> &'static str {
        match self {
            Reg::Eax => "eax",
            Reg::Ecx => "ecx",
            Reg::Edx => "edx",
            Reg::Ebx => "ebx",
            Reg::Esp => "esp",
            Reg::Ebp => "ebp",
            Reg::Esi => "esi",
            Reg::Edi => "edi",
            Reg::Es => "es",
            Reg::Cs => "cs",
            Reg::Ss => "ss",
            Reg::Ds => "ds",
            Reg::Eflags => "eflags",
            Reg::Eip => "eip",
            Reg::Fs => "fs",
            Reg::Gs => "gs",
        }
    }

    /// The register with this name, case-insensitive.
    pub fn from_name(name: &str) -> Option<Reg> {
        Reg::ALL
            .into_iter()
            .find(|r| r.name().eq_ignore_ascii_case(name))
    }
}

/// Why a memory reference failed; each kind has its fault token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// The selector is not valid, or the offset is outside its limit (a GP
    /// fault). Token 0xFF (-1).
    InvalidSelector,
    /// The selector's segment is not present. Token 0xFE (-2).
    SelectorNotPresent,
    /// The page is not present. Token 0xFD (-3).
    PageNotPresent,
}

impl FaultKind {
    /// The token byte logged in place of a data item's token.
    pub fn token(self) -> u8 {
        match self {
            FaultKind::InvalidSelector => 0xFF,
            FaultKind::SelectorNotPresent => 0xFE,
            FaultKind::PageNotPresent => 0xFD,
        }
    }

    /// The fault a token byte stands for.
    pub fn from_token(token: u8) -> Option<FaultKind> {
        match token {
            0xFF => Some(FaultKind::InvalidSelector),
            0xFE => Some(FaultKind::SelectorNotPresent),
            0xFD => Some(FaultKind::PageNotPresent),
            _ => None,
        }
    }
}

/// A failed memory reference: its kind and the address logged with it.
///
/// The address is `selector << 16 | offset` for selector faults, and the
/// linear address of the first byte that is not present for page faults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MemFault {
    /// What went wrong.
    pub kind: FaultKind,
    /// The faulting address, as it is logged.
    pub address: u32,
}

/// The interrupted machine.
pub trait TracedMachine {
    /// A register of the interrupted context.
    fn reg(&self, reg: Reg) -> u32;

    /// All sixteen registers, indexed by `Reg as usize`, as
    /// [`TracedMachine::reg`] gives them: what the native tier reads once per
    /// hit. Machines override it where straight-line reads beat sixteen
    /// calls of [`TracedMachine::reg`] through a `match`.
    #[inline]
    fn registers(&self) -> [u32; 16] {
        Reg::ALL.map(|reg| self.reg(reg))
    }

    /// The sixteen registers of [`TracedMachine::registers`], borrowed
    /// where the machine keeps them in that order: the native tier then
    /// reads them in place rather than copying them at each hit. `None`
    /// (the default) where they are gathered.
    #[inline]
    fn register_file(&self) -> Option<&[u32; 16]> {
        None
    }

    /// The eight general registers (EAX, ECX, EDX, EBX, ESP, EBP, ESI, EDI:
    /// the first eight of [`TracedMachine::registers`]), borrowed where the
    /// machine keeps them in that order: the native tier reads them in
    /// place for programs that push no other register. `None` (the
    /// default) where they are gathered.
    #[inline]
    fn gpr_file(&self) -> Option<&[u32; 8]> {
        None
    }

    /// Reads `buf.len()` bytes at a flat (linear) address.
    ///
    /// # Errors
    /// A [`MemFault`] naming the first byte that could not be read.
    fn read_flat(&mut self, address: u32, buf: &mut [u8]) -> Result<(), MemFault>;

    /// Reads `buf.len()` bytes at `selector:offset`.
    ///
    /// # Errors
    /// A [`MemFault`] for an invalid or not-present selector, an offset past
    /// the limit, or a page that is not present.
    fn read_segmented(
        &mut self,
        selector: u16,
        offset: u32,
        buf: &mut [u8],
    ) -> Result<(), MemFault>;

    /// The selector of object `object` (numbered from 1) of the traced
    /// module, as recorded when the tracepoints were inserted; 0 if none.
    fn object_selector(&self, object: u32) -> u16;

    /// The flat base address of object `object` of the traced module; 0 if
    /// none.
    fn object_flat_base(&self, object: u32) -> u32;

    /// CRMA: a flat address to 16:16, or `None` outside the compatibility
    /// region. The default is the LDT tiling of DESIGN.md.
    fn flat_to_segmented(&self, address: u32) -> Option<(u16, u16)> {
        crma_flat_to_segmented(address)
    }

    /// CRMA: a 16:16 address to flat, or `None` for a selector outside the
    /// compatibility region (a GDT selector). The default is the LDT tiling.
    fn segmented_to_flat(&self, selector: u16, offset: u16) -> Option<u32> {
        crma_segmented_to_flat(selector, offset)
    }
}

/// The end of the compatibility region: tiled selectors map below 512 MB.
pub const CRMA_LIMIT: u32 = 0x2000_0000;

/// LDT tiling: selector `(lin >> 16) << 3 | 7` maps the 64 KB containing
/// `lin`. `None` at or above [`CRMA_LIMIT`].
pub fn crma_flat_to_segmented(address: u32) -> Option<(u16, u16)> {
    if address >= CRMA_LIMIT {
        return None;
    }
    let selector = (((address >> 16) << 3) | 7) as u16;
    Some((selector, (address & 0xFFFF) as u16))
}

/// The inverse of the tiling, for LDT selectors (TI bit set) only.
pub fn crma_segmented_to_flat(selector: u16, offset: u16) -> Option<u32> {
    if selector & 4 == 0 {
        return None;
    }
    Some((u32::from(selector >> 3) << 16) | u32::from(offset))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiling_round_trips_inside_the_region() {
        for lin in [0x0001_0000u32, 0x0003_F123, 0x1BFF_FFFF, CRMA_LIMIT - 1] {
            let (sel, off) = crma_flat_to_segmented(lin).unwrap();
            assert_eq!(sel & 7, 7);
            assert_eq!(crma_segmented_to_flat(sel, off), Some(lin));
        }
        assert_eq!(crma_flat_to_segmented(CRMA_LIMIT), None);
        assert_eq!(crma_segmented_to_flat(0x0010, 0), None, "GDT selector");
        assert_eq!(crma_flat_to_segmented(0x0003_F000), Some((0x1F, 0xF000)));
    }

    #[test]
    fn tokens_round_trip() {
        for kind in [
            FaultKind::InvalidSelector,
            FaultKind::SelectorNotPresent,
            FaultKind::PageNotPresent,
        ] {
            assert_eq!(FaultKind::from_token(kind.token()), Some(kind));
        }
        assert_eq!(FaultKind::from_token(0), None);
    }
}
