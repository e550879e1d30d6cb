//! Physical memory: a bounds-checked byte vector plus read-only ROM windows.
//!
//! Reads outside RAM and ROM return 0xFF (an open bus); writes there are
//! dropped; writes to ROM are dropped. Physical memory also tracks which
//! 4 KB pages hold decoded (cached) instructions, so that any write there,
//! from the guest or the host, can invalidate the decoded-instruction cache.

/// Words of the code-page bitmap: one bit per 4 KB page of 4 GB.
const CODE_WORDS: usize = (1 << 20) / 64;

/// One read-only window in the physical address space.
#[derive(Clone, Debug)]
struct Rom {
    base: u32,
    data: Vec<u8>,
}

/// Physical memory.
#[derive(Clone, Debug)]
pub struct PhysMem {
    ram: Vec<u8>,
    roms: Vec<Rom>,
    /// Lowest ROM base: addresses below it and inside RAM take the fast path.
    rom_floor: u32,
    /// One flag per 4 KB page of the 4 GB space that has cached code
    /// (bit-packed). Words past the end are clear: it grows as pages are
    /// marked (and to all 2^14 words for the native tier's view), so a
    /// machine that runs little code never clears 128 KB of it.
    code_pages: Vec<u64>,
    /// Set when a write hit a code page; the machine drains it.
    pub(crate) dirty_code: Vec<u32>,
}

impl PhysMem {
    /// `size` bytes of zeroed RAM at physical 0.
    pub fn new(size: usize) -> PhysMem {
        PhysMem {
            ram: vec![0; size],
            roms: Vec::new(),
            rom_floor: u32::MAX,
            code_pages: Vec::new(),
            dirty_code: Vec::new(),
        }
    }

    /// RAM size in bytes.
    pub fn ram_size(&self) -> usize {
        self.ram.len()
    }

    /// Map a read-only window at `base` (overlays RAM).
    pub fn map_rom(&mut self, base: u32, data: Vec<u8>) {
        self.rom_floor = self.rom_floor.min(base);
        self.roms.push(Rom { base, data });
    }

    /// One past the last byte of plain RAM below any ROM: the native tier
    /// reads and writes `[0, fast_limit)` directly.
    pub(crate) fn fast_limit(&self) -> u64 {
        u64::from(self.rom_floor).min(self.ram.len() as u64)
    }

    /// The RAM bytes and the code-page bitmap (one bit per 4 KB page), for
    /// the native tier's direct accesses (it leaves stores to marked pages
    /// to the interpreter).
    pub(crate) fn native_view(&mut self) -> (&mut [u8], &[u64]) {
        if self.code_pages.len() < CODE_WORDS {
            self.code_pages.resize(CODE_WORDS, 0);
        }
        (&mut self.ram, &self.code_pages)
    }

    #[inline]
    fn fast(&self, addr: u32) -> bool {
        addr < self.rom_floor && (addr as usize) < self.ram.len()
    }

    /// Read one byte.
    #[inline]
    pub fn read8(&self, addr: u32) -> u8 {
        if self.fast(addr) {
            return self.ram[addr as usize];
        }
        for r in &self.roms {
            if let Some(off) = addr.checked_sub(r.base)
                && let Some(b) = r.data.get(off as usize)
            {
                return *b;
            }
        }
        self.ram.get(addr as usize).copied().unwrap_or(0xFF)
    }

    /// Write one byte.
    #[inline]
    pub fn write8(&mut self, addr: u32, v: u8) {
        self.note_write(addr);
        if self.fast(addr) {
            self.ram[addr as usize] = v;
            return;
        }
        for r in &self.roms {
            if addr >= r.base && ((addr - r.base) as usize) < r.data.len() {
                return;
            }
        }
        if let Some(b) = self.ram.get_mut(addr as usize) {
            *b = v;
        }
    }

    /// Little-endian read of `n` (1..=4) bytes, wrapping at 4 GB.
    #[inline]
    pub fn read(&self, addr: u32, n: u32) -> u32 {
        let a = addr as usize;
        if n == 2 && self.fast(addr.wrapping_add(1)) && a + 1 < self.ram.len() {
            return u32::from(u16::from_le_bytes([self.ram[a], self.ram[a + 1]]));
        }
        if n == 4 && self.fast(addr.wrapping_add(3)) && a + 3 < self.ram.len() {
            return u32::from_le_bytes([
                self.ram[a],
                self.ram[a + 1],
                self.ram[a + 2],
                self.ram[a + 3],
            ]);
        }
        let mut v = 0;
        for i in 0..n {
            v |= u32::from(self.read8(addr.wrapping_add(i))) << (8 * i);
        }
        v
    }

    /// Little-endian write of `n` (1..=4) bytes.
    #[inline]
    pub fn write(&mut self, addr: u32, n: u32, v: u32) {
        for i in 0..n {
            self.write8(addr.wrapping_add(i), (v >> (8 * i)) as u8);
        }
    }

    /// Copy bytes out (open bus beyond RAM).
    pub fn read_bytes(&self, addr: u32, out: &mut [u8]) {
        let (a, n) = (addr as usize, out.len());
        if let Some(last) = u32::try_from(n)
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|k| addr.checked_add(k))
            && self.fast(last)
        {
            // All RAM below the ROMs (`fast` of the last byte covers
            // every byte before it).
            out.copy_from_slice(&self.ram[a..a + n]);
            return;
        }
        for (i, b) in out.iter_mut().enumerate() {
            *b = self.read8(addr.wrapping_add(i as u32));
        }
    }

    /// Copy bytes in (wrapping at 4 GB), with what [`PhysMem::write8`]
    /// does for each byte: a page at a time, one code-page check per page
    /// (the first byte's clears the mark, so the others would find none)
    /// and one copy where the page's bytes are all plain RAM.
    pub fn write_bytes(&mut self, addr: u32, data: &[u8]) {
        let mut done = 0;
        while done < data.len() {
            let at = addr.wrapping_add(done as u32);
            let n = ((0x1000 - (at & 0xFFF)) as usize).min(data.len() - done);
            let chunk = &data[done..done + n];
            // `fast` of the chunk's last byte covers every byte before it
            // (the chunk does not wrap: it stays in one page).
            if self.fast(at + (n as u32 - 1)) {
                self.note_write(at);
                self.ram[at as usize..at as usize + n].copy_from_slice(chunk);
            } else {
                for (i, b) in chunk.iter().enumerate() {
                    self.write8(at + i as u32, *b);
                }
            }
            done += n;
        }
    }

    #[inline]
    fn note_write(&mut self, addr: u32) {
        let page = (addr >> 12) as usize;
        if let Some(w) = self.code_pages.get_mut(page >> 6)
            && *w & (1 << (page & 63)) != 0
        {
            *w &= !(1 << (page & 63));
            self.dirty_code.push(page as u32);
        }
    }

    /// Mark a physical page as holding cached instructions.
    #[inline]
    pub(crate) fn mark_code(&mut self, page: u32) {
        let page = page as usize;
        if page >> 6 >= self.code_pages.len() {
            self.grow_code_pages(page >> 6);
        }
        self.code_pages[page >> 6] |= 1 << (page & 63);
    }

    /// Make the bitmap hold word `word` (a power of two of words, at
    /// least 64).
    #[cold]
    #[inline(never)]
    fn grow_code_pages(&mut self, word: usize) {
        let len = (word + 1).next_power_of_two().clamp(64, CODE_WORDS);
        self.code_pages.resize(len, 0);
    }

    /// Does the physical page hold cached instructions?
    #[inline]
    pub(crate) fn is_code_page(&self, page: u32) -> bool {
        let page = page as usize;
        self.code_pages
            .get(page >> 6)
            .is_some_and(|w| w & (1 << (page & 63)) != 0)
    }

    /// Forget all code marks (after a full cache flush).
    pub(crate) fn clear_code_marks(&mut self) {
        self.code_pages.iter_mut().for_each(|w| *w = 0);
        self.dirty_code.clear();
    }
}
