//! The GDT and LDT: a Rust model of every descriptor, mirrored into guest
//! memory so the CPU reads the same values. LDT selectors are tiled
//! (see [`crate::layout::tile_selector`]).

use emu::{Descriptor, Machine, SegReg, Segment};

use crate::error::KernelError;
use crate::layout::*;
use crate::memory::Memory;

/// Access byte: present ring-3 read/write data (accessed).
pub(crate) const DATA3: u8 = 0xF3;
/// Access byte: present ring-3 execute/read code (accessed).
pub(crate) const CODE3: u8 = 0xFB;

/// Encode a code/data descriptor; limits above 1 MB use 4 KB granularity.
pub(crate) fn make(base: u32, limit: u32, access: u8, big: bool) -> u64 {
    Descriptor::encode(base, limit, access, if big { 0x4 } else { 0 }).0
}

/// Both descriptor tables. Each model holds the entries up to the highest
/// one ever set (at most [`GDT_ENTRIES`] / [`LDT_ENTRIES`]); those past its
/// end are zero, as in guest memory, so a process that uses a few
/// selectors does not clear a 64 KB LDT model.
#[derive(Debug)]
pub(crate) struct Descriptors {
    gdt: Vec<u64>,
    ldt: Vec<u64>,
}

impl Descriptors {
    pub fn new() -> Descriptors {
        Descriptors {
            gdt: Vec::new(),
            ldt: Vec::new(),
        }
    }

    /// Map the tables, write the fixed GDT entries, load GDTR and LDTR.
    pub fn install(&mut self, m: &mut Machine, mem: &mut Memory) -> Result<(), KernelError> {
        mem.map(m, GDT_BASE, (GDT_ENTRIES * 8) as u32, false)?;
        mem.map(m, LDT_BASE, (LDT_ENTRIES * 8) as u32, false)?;
        self.set(m, FLAT_CS, make(0, u32::MAX, CODE3, true));
        self.set(m, FLAT_DS, make(0, u32::MAX, DATA3, true));
        self.set(m, THUNK_CS, make(THUNK_BASE, 0xFFFF, CODE3, false));
        self.set(
            m,
            LDT_SEL,
            make(LDT_BASE, (LDT_ENTRIES * 8 - 1) as u32, 0x82, false),
        );
        let cpu = m.cpu_mut_flush_tlb();
        cpu.gdtr = emu::DescTable {
            base: GDT_BASE,
            limit: (GDT_ENTRIES * 8 - 1) as u16,
        };
        cpu.ldtr = Descriptor(self.gdt[usize::from(LDT_SEL >> 3)]).to_segment(LDT_SEL);
        Ok(())
    }

    /// Exchange the model of the LDT with `other` (a process switch: the
    /// LDT pages themselves are each process's own).
    pub fn swap_ldt(&mut self, other: &mut Vec<u64>) {
        std::mem::swap(&mut self.ldt, other);
    }

    /// Set the descriptor of `sel` (GDT or LDT by its TI bit).
    pub fn set(&mut self, m: &mut Machine, sel: u16, d: u64) {
        let idx = usize::from(sel >> 3);
        let (table, base, entries) = if sel & 4 != 0 {
            (&mut self.ldt, LDT_BASE, LDT_ENTRIES)
        } else {
            (&mut self.gdt, GDT_BASE, GDT_ENTRIES)
        };
        if idx < entries {
            if idx >= table.len() {
                table.resize(idx + 1, 0);
            }
            table[idx] = d;
            // The tables are mapped at install; a failure here is a kernel bug
            // that the CPU will report as #GP on use.
            let _ = m.write_linear(base + (idx as u32) * 8, &d.to_le_bytes());
        }
    }

    /// The raw descriptor of `sel`, if present.
    pub fn get(&self, sel: u16) -> Option<Descriptor> {
        let idx = usize::from(sel >> 3);
        let d = if sel & 4 != 0 {
            *self.ldt.get(idx)?
        } else {
            if idx == 0 {
                return None;
            }
            *self.gdt.get(idx)?
        };
        let d = Descriptor(d);
        d.present().then_some(d)
    }

    /// The segment cache the CPU would load for `sel`.
    pub fn segment(&self, sel: u16) -> Option<Segment> {
        Some(self.get(sel)?.to_segment(sel))
    }

    /// Load a segment register of the CPU from the model.
    pub fn load(&self, m: &mut Machine, s: SegReg, sel: u16) -> bool {
        if sel & !3 == 0 && s != SegReg::Cs && s != SegReg::Ss {
            m.set_segment(s, Segment::null(sel));
            return true;
        }
        match self.segment(sel) {
            Some(seg) => {
                m.set_segment(s, seg);
                true
            }
            None => false,
        }
    }

    /// Create the tiled LDT descriptors for `[base, base+size)`: each 64 KB
    /// tile gets a selector whose limit reaches the end of the range (at
    /// most 64 KB). Returns the first tile's selector.
    pub fn tile(&mut self, m: &mut Machine, base: u32, size: u32, access: u8) -> Option<u16> {
        let first = tile_selector(base)?;
        let end = u64::from(base) + u64::from(size.max(1));
        let mut t = u64::from(base & !(TILE - 1));
        while t < end {
            let sel = tile_selector(t as u32)?;
            let limit = (end - t).min(u64::from(TILE)) as u32 - 1;
            self.set(m, sel, make(t as u32, limit, access, false));
            t += u64::from(TILE);
        }
        Some(first)
    }

    /// Remove the tiled descriptors of `[base, base+size)`.
    pub fn untile(&mut self, m: &mut Machine, base: u32, size: u32) {
        let end = u64::from(base) + u64::from(size.max(1));
        let mut t = u64::from(base & !(TILE - 1));
        while t < end {
            if let Some(sel) = tile_selector(t as u32) {
                self.set(m, sel, 0);
            }
            t += u64::from(TILE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The models grow to the highest entry set; the entries past their
    /// end, and between, read as not present, and guest memory holds what
    /// was set.
    #[test]
    fn models_hold_what_was_set_and_nothing_else() {
        let mut m = Machine::new(emu::MachineConfig {
            ram_size: 1 << 20,
            ..Default::default()
        });
        let mut mem = Memory::new(1 << 20);
        mem.init(&mut m);
        let cpu = m.cpu_mut_flush_tlb();
        cpu.cr3 = mem.cr3();
        cpu.cr0 |= 0x8000_0001;
        let mut d = Descriptors::new();
        d.install(&mut m, &mut mem).unwrap();
        let high = ((LDT_ENTRIES as u16 - 1) << 3) | 7;
        assert!(d.get(high).is_none());
        assert!(d.get(0x1007).is_none());
        let data = make(0x1_0000, 0xFFFF, DATA3, false);
        d.set(&mut m, 0x1007, data);
        assert_eq!(d.get(0x1007).map(|x| x.0), Some(data));
        assert!(d.get(0x0FFF).is_none(), "below it: empty");
        assert!(d.get(high).is_none(), "past it: empty");
        d.set(&mut m, high, data);
        assert_eq!(d.get(high).map(|x| x.0), Some(data));
        // Past the table: ignored.
        d.set(&mut m, 0x0008 | ((GDT_ENTRIES as u16) << 3), data);
        assert!(d.get((GDT_ENTRIES as u16) << 3).is_none());
        // The CPU's view: the LDT entries in guest memory, the GDT's fixed
        // entries from install.
        let mut b = [0u8; 8];
        m.read_linear(LDT_BASE + 0x1000, &mut b).unwrap();
        assert_eq!(u64::from_le_bytes(b), data);
        m.read_linear(LDT_BASE + (LDT_ENTRIES as u32 - 1) * 8, &mut b)
            .unwrap();
        assert_eq!(u64::from_le_bytes(b), data);
        m.read_linear(GDT_BASE + u32::from(FLAT_CS & !7), &mut b)
            .unwrap();
        assert_eq!(u64::from_le_bytes(b), make(0, u32::MAX, CODE3, true));
        // An empty model swapped in (a new process) has nothing.
        let mut other = Vec::new();
        d.swap_ldt(&mut other);
        assert!(d.get(0x1007).is_none());
        d.swap_ldt(&mut other);
        assert_eq!(d.get(0x1007).map(|x| x.0), Some(data));
    }

    #[test]
    fn descriptor_round_trip() {
        let d = Descriptor(make(0x0123_4567, 0xFFFF, DATA3, false));
        assert_eq!(
            (d.base(), d.limit(), d.access()),
            (0x0123_4567, 0xFFFF, DATA3)
        );
        let f = Descriptor(make(0, u32::MAX, CODE3, true));
        assert_eq!((f.base(), f.limit()), (0, u32::MAX));
        assert!(f.to_segment(FLAT_CS).big());
    }
}
