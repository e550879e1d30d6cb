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
//!   It also saves and restores R12..R15, which it uses.
//! - Its memory operands are `[r11 + k]` with R11 = the `State` pointer
//!   and `k` one of the `OFF_*` constants below (checked against the
//!   `#[repr(C)]` layout at compile time), each access inside
//!   `size_of::<State>()`; its own stack pushes and pops; and, for guest
//!   memory operands, three areas whose pointers and bounds the caller puts
//!   in the `State` from live borrows of the machine, which it holds
//!   (`&mut`) for the whole call, so nothing else touches them meanwhile:
//!   - `ram`: guest RAM, read and written at `ram + p` for an access of
//!     `n` (1, 2, 4) bytes only after checking `p + n <= fast` (paging
//!     off) or, with paging, taking `p` from a TLB entry whose rights are
//!     non-zero, which [`crate::paging`] gives only to pages wholly below
//!     `fast`, with the access inside that page; `fast` is at most the
//!     RAM's length ([`crate::mem::PhysMem::fast_limit`]);
//!   - `tlb`: the 256 [`NativeEntry`]s of the machine's TLB, read only, at
//!     `tlb + 16 * slot` with `slot < 256` (a byte);
//!   - `code_pages`: the code-page bitmap of 2^14 words, read only, at word
//!     `p >> 18` of a physical address `p` (a 32-bit value, so below 2^14);
//!   - `dcache`: the [`DCACHE_SLOTS`] (256) [`DescEntry`]s of the
//!     descriptor cache, read only, at `dcache + 64 * slot` with `slot` a
//!     byte (`(selector >> 3) & 0xFF`); the TLB is read at a slot offset
//!     from an entry masked to `0xFF0` (so `16 * slot`, `slot < 256`).
//!     Blocks that read it have memory operands, so they always get a
//!     [`Guest`].
//!
//!   [`Arena::call`] hands it a `State` that lives on the Rust stack, and
//!   the caller copies registers in and out around the call.
//! - Its branches are relative and land inside the block: [`super::emit`]
//!   encodes them itself (`assemble`), each to a label of the same block
//!   whose offset it knows, and refuses the block if a label is missing
//!   or a rel8 is out of range; the code has no RIP-relative operand (also
//!   refused), so it runs the same wherever the arena puts it. It calls
//!   nothing and jumps to no other block.
//!   Every loop decrements the pass budget (RCX) and leaves when it reaches
//!   zero, so it returns once `State::budget` passes are spent.
//! - The code lives in an [`Arena`] of large chunks, each block copied
//!   to the next 16-byte-aligned offset of the last chunk (or to a chunk
//!   of its own if larger than one). No mapping is ever writable and
//!   executable at once: on Linux a chunk is a memfd mapped twice, one
//!   view read+write that only [`Arena::put`] writes (bytes past every
//!   block handed out so far, so no block's bytes change while it may
//!   run), one view read+exec that only [`Arena::call`] jumps into; the
//!   memfd is the process's own (close-on-exec, closed right after
//!   mapping) and never truncated. Elsewhere (or if the memfd cannot be
//!   made) a chunk is one mapping,
//!   read+exec, switched to read+write for the copy and back before `put`
//!   returns (`put` holds the arena `&mut`, so no call runs meanwhile).
//!   x86 keeps instruction fetch coherent with stores to the same
//!   physical page through another view, and the call comes after the
//!   copy in program order on the same thread.
//! - A block is a [`Code`] (address, length, epoch). [`Arena::call`] runs
//!   it only if its epoch is the arena's; chunks are unmapped or reused
//!   only by [`Arena::reset`] (or a failed `mprotect`, which resets),
//!   which starts a new epoch, or after their arena is dropped (a
//!   dropped arena's chunks may serve a later arena, which runs only the
//!   blocks it wrote there itself), so a call never reaches memory that
//!   is unmapped or holds other bytes. Epochs are unique in the process,
//!   so one machine's block is refused by another machine's arena.

#![allow(unsafe_code)]

use crate::paging::NativeEntry;
use memmap2::{Mmap, MmapMut};
use std::mem::offset_of;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// A segment register as the host code checks it: the offsets an access
/// of `n` bytes may start at are `lo..=hi - (n - 1)` (a range with
/// `lo > hi` allows none), separately for reads and writes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SegCheck {
    /// Lowest readable offset.
    pub rlo: u32,
    /// Highest readable offset.
    pub rhi: u32,
    /// Lowest writable offset.
    pub wlo: u32,
    /// Highest writable offset.
    pub whi: u32,
    /// Linear base.
    pub base: u32,
    pub(crate) _pad: u32,
}

/// Offsets inside a [`SegCheck`].
pub(crate) const SEG_RLO: i32 = 0;
/// See [`SEG_RLO`].
pub(crate) const SEG_RHI: i32 = 4;
/// See [`SEG_RLO`].
pub(crate) const SEG_WLO: i32 = 8;
/// See [`SEG_RLO`].
pub(crate) const SEG_WHI: i32 = 12;
/// See [`SEG_RLO`].
pub(crate) const SEG_BASE: i32 = 16;
/// Size of a [`SegCheck`].
pub(crate) const SEG_SIZE: i32 = 24;

/// Registers and budgets exchanged with a translated block.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
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
    /// Guest RAM (null when the block has no memory operand).
    pub ram: *mut u8,
    /// The TLB's native entries.
    pub tlb: *const NativeEntry,
    /// The code-page bitmap.
    pub code_pages: *const u64,
    /// Bytes of RAM the host code may access directly (paging off).
    pub fast: u64,
    /// ES, CS, SS, DS, FS, GS.
    pub segs: [SegCheck; 6],
    /// Paging is on.
    pub paging: u32,
    /// The TLB right a read needs at the current CPL.
    pub rmask: u32,
    /// The TLB right a write needs at the current CPL.
    pub wmask: u32,
    /// Out: after an exit before an op (`EXIT_SIDE`), its index.
    pub index: u32,
    /// CS's limit (a RET's target must be inside).
    pub cs_limit: u32,
    /// Scratch for the host code (a MOVS element between its two checks).
    pub scratch: u32,
    /// The descriptor cache (read only; see [`DescEntry`]).
    pub dcache: *const DescEntry,
    /// In: the tag bits of the current CPL a cache entry must carry
    /// ([`DescEntry::tag`] without the selector).
    pub dtag: u32,
    /// In: the selectors of ES, CS, SS, DS, FS, GS; out: with the loads
    /// the block made.
    pub sel: [u16; 6],
    /// Out: the segment registers the block loaded (bit `SegReg as u8`).
    pub loaded: u32,
    /// Out: after a far transfer (`EXIT_FAR`), the selector of the target
    /// (its cache entry has the descriptor).
    pub far_sel: u32,
    pub(crate) _pad2: u32,
}

impl Default for State {
    fn default() -> Self {
        State {
            gpr: [0; 8],
            eip: 0,
            exit: 0,
            flags: 0,
            budget: 0,
            ram: std::ptr::null_mut(),
            tlb: std::ptr::null(),
            code_pages: std::ptr::null(),
            fast: 0,
            segs: [SegCheck::default(); 6],
            paging: 0,
            rmask: 0,
            wmask: 0,
            index: 0,
            cs_limit: 0,
            scratch: 0,
            dcache: std::ptr::null(),
            dtag: 0,
            sel: [0; 6],
            loaded: 0,
            far_sel: 0,
            _pad2: 0,
        }
    }
}

/// One slot of the descriptor cache as the host code reads it: what a
/// segment load of selector `tag & 0xFFFF` at the CPL of `tag` would do
/// when it needs no more than the descriptor read (see `super::desc`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DescEntry {
    /// Selector | CPL << 16 | [`DTAG_VALID`] (0: empty).
    pub tag: u32,
    /// `DK_*` bits: which loads the selector passes.
    pub kinds: u32,
    /// The data segment register check after a load ([`DK_DATA`]).
    pub check: SegCheck,
    /// Byte-granular limit (a far transfer's offset must be inside).
    pub limit: u32,
    /// The descriptor's linear page + 1, as the TLB tags it.
    pub tlb_tag: u32,
    /// Byte offset of its TLB slot in the native TLB.
    pub tlb_off: u32,
    /// The physical page base the descriptor was read from.
    pub frame: u32,
    pub(crate) _pad: [u32; 4],
}

/// [`DescEntry::tag`]: the slot holds an entry.
pub(crate) const DTAG_VALID: u32 = 1 << 18;
/// [`DescEntry::kinds`]: MOV/POP to DS, ES, FS or GS loads it.
pub(crate) const DK_DATA: u32 = 1;
/// A far CALL or JMP to it stays at the CPL.
pub(crate) const DK_CODE: u32 = 2;
/// A far RET to it stays at the CPL (its RPL is the CPL).
pub(crate) const DK_RET: u32 = 4;
/// The load reads no descriptor (a null selector): no TLB check.
pub(crate) const DK_NO_READ: u32 = 8;
/// MOV/POP/LSS to SS loads it (RPL = DPL = CPL, writable data).
pub(crate) const DK_STACK: u32 = 16;
/// Slots of the descriptor cache (indexed by selector >> 3).
pub(crate) const DCACHE_SLOTS: usize = 256;
/// Offsets inside a [`DescEntry`].
pub(crate) const DE_TAG: i32 = 0;
/// See [`DE_TAG`].
pub(crate) const DE_KINDS: i32 = 4;
/// See [`DE_TAG`].
pub(crate) const DE_CHECK: i32 = 8;
/// See [`DE_TAG`].
pub(crate) const DE_LIMIT: i32 = 32;
/// See [`DE_TAG`].
pub(crate) const DE_TLB_TAG: i32 = 36;
/// See [`DE_TAG`].
pub(crate) const DE_TLB_OFF: i32 = 40;
/// See [`DE_TAG`].
pub(crate) const DE_FRAME: i32 = 44;
/// log2 of the size of a [`DescEntry`].
pub(crate) const DE_SHIFT: u32 = 6;

/// Offsets inside a [`NativeEntry`].
pub(crate) const NE_TAG: i32 = 0;
/// See [`NE_TAG`].
pub(crate) const NE_PHYS: i32 = 4;
/// See [`NE_TAG`].
pub(crate) const NE_RIGHTS: i32 = 8;

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
/// Offset of `State::ram`.
pub(crate) const OFF_RAM: i32 = 56;
/// Offset of `State::tlb`.
pub(crate) const OFF_TLB: i32 = 64;
/// Offset of `State::code_pages`.
pub(crate) const OFF_CODE: i32 = 72;
/// Offset of `State::fast`.
pub(crate) const OFF_FAST: i32 = 80;
/// Offset of `State::segs`.
pub(crate) const OFF_SEGS: i32 = 88;
/// Offset of `State::paging`.
pub(crate) const OFF_PAGING: i32 = 232;
/// Offset of `State::rmask`.
pub(crate) const OFF_RMASK: i32 = 236;
/// Offset of `State::wmask`.
pub(crate) const OFF_WMASK: i32 = 240;
/// Offset of `State::index`.
pub(crate) const OFF_INDEX: i32 = 244;
/// Offset of `State::cs_limit`.
pub(crate) const OFF_CS_LIMIT: i32 = 248;
/// Offset of `State::scratch`.
pub(crate) const OFF_SCRATCH: i32 = 252;
/// Offset of `State::dcache`.
pub(crate) const OFF_DCACHE: i32 = 256;
/// Offset of `State::dtag`.
pub(crate) const OFF_DTAG: i32 = 264;
/// Offset of `State::sel`.
pub(crate) const OFF_SEL: i32 = 268;
/// Offset of `State::loaded`.
pub(crate) const OFF_LOADED: i32 = 280;
/// Offset of `State::far_sel`.
pub(crate) const OFF_FAR_SEL: i32 = 284;

const _: () = {
    assert!(offset_of!(State, gpr) == OFF_GPR as usize);
    assert!(offset_of!(State, eip) == OFF_EIP as usize);
    assert!(offset_of!(State, exit) == OFF_EXIT as usize);
    assert!(offset_of!(State, flags) == OFF_FLAGS as usize);
    assert!(offset_of!(State, budget) == OFF_BUDGET as usize);
    assert!(offset_of!(State, ram) == OFF_RAM as usize);
    assert!(offset_of!(State, tlb) == OFF_TLB as usize);
    assert!(offset_of!(State, code_pages) == OFF_CODE as usize);
    assert!(offset_of!(State, fast) == OFF_FAST as usize);
    assert!(offset_of!(State, segs) == OFF_SEGS as usize);
    assert!(offset_of!(State, paging) == OFF_PAGING as usize);
    assert!(offset_of!(State, rmask) == OFF_RMASK as usize);
    assert!(offset_of!(State, wmask) == OFF_WMASK as usize);
    assert!(offset_of!(State, index) == OFF_INDEX as usize);
    assert!(offset_of!(State, cs_limit) == OFF_CS_LIMIT as usize);
    assert!(offset_of!(State, scratch) == OFF_SCRATCH as usize);
    assert!(offset_of!(State, dcache) == OFF_DCACHE as usize);
    assert!(offset_of!(State, dtag) == OFF_DTAG as usize);
    assert!(offset_of!(State, sel) == OFF_SEL as usize);
    assert!(offset_of!(State, loaded) == OFF_LOADED as usize);
    assert!(offset_of!(State, far_sel) == OFF_FAR_SEL as usize);
    assert!(size_of::<State>() == 296);
    assert!(size_of::<DescEntry>() == 1 << DE_SHIFT);
    assert!(offset_of!(DescEntry, tag) == DE_TAG as usize);
    assert!(offset_of!(DescEntry, kinds) == DE_KINDS as usize);
    assert!(offset_of!(DescEntry, check) == DE_CHECK as usize);
    assert!(offset_of!(DescEntry, limit) == DE_LIMIT as usize);
    assert!(offset_of!(DescEntry, tlb_tag) == DE_TLB_TAG as usize);
    assert!(offset_of!(DescEntry, tlb_off) == DE_TLB_OFF as usize);
    assert!(offset_of!(DescEntry, frame) == DE_FRAME as usize);
    assert!(offset_of!(SegCheck, rlo) == SEG_RLO as usize);
    assert!(offset_of!(SegCheck, rhi) == SEG_RHI as usize);
    assert!(offset_of!(SegCheck, wlo) == SEG_WLO as usize);
    assert!(offset_of!(SegCheck, whi) == SEG_WHI as usize);
    assert!(offset_of!(SegCheck, base) == SEG_BASE as usize);
    assert!(size_of::<SegCheck>() == SEG_SIZE as usize);
    assert!(size_of::<NativeEntry>() == 16);
    assert!(offset_of!(NativeEntry, tag) == NE_TAG as usize);
    assert!(offset_of!(NativeEntry, phys) == NE_PHYS as usize);
    assert!(offset_of!(NativeEntry, rights) == NE_RIGHTS as usize);
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

/// Bytes of a shared arena chunk (a block larger than this gets a chunk
/// of its own).
const CHUNK: usize = 256 << 10;
/// Host code bytes the arena may map before the block cache is cleared and
/// the arena reset (retired blocks leave their bytes behind until then).
pub(crate) const ARENA_CAP: usize = 64 << 20;
/// Alignment of a block's first byte.
const ALIGN: usize = 16;

/// Epochs handed out to arenas, unique in the process, so a [`Code`] is
/// only ever run by the arena (and reset) that wrote it.
static EPOCHS: AtomicU64 = AtomicU64::new(1);

/// Shared-size chunks of dropped arenas, for the next arenas of the
/// process: a host process that runs many short guest programs (a bench,
/// a test suite, a parent and its children) maps and faults in its chunks
/// once, not once per machine (a memfd, its size, two mappings, their
/// page faults and unmapping cost as much as a few translations).
static SPARE: Mutex<Vec<Chunk>> = Mutex::new(Vec::new());
/// Chunks [`SPARE`] keeps at most.
const SPARE_MAX: usize = 4;

/// One chunk of the arena. On Linux, a memfd mapped twice, read+write
/// for copying blocks in and read+exec for running them (no `mprotect`
/// per block); elsewhere, or if that fails, one anonymous mapping,
/// read+exec except while [`Chunk::write`] copies a block in.
struct Chunk {
    /// The read+write view of a double mapping.
    rw: Option<MmapMut>,
    /// The read+exec view; None only after a failed switch, which resets
    /// the arena.
    rx: Option<Mmap>,
}

impl Chunk {
    /// A chunk of `len` bytes: a double mapping where there is one, else
    /// a single one; a spare one of a dropped arena if there is one of
    /// that size and kind.
    fn new(len: usize, double: bool) -> std::io::Result<Chunk> {
        if len == CHUNK
            && let Ok(mut spare) = SPARE.lock()
            && let Some(i) = spare.iter().rposition(|c| c.rw.is_some() == double)
        {
            return Ok(spare.swap_remove(i));
        }
        #[cfg(target_os = "linux")]
        if double && let Ok(c) = Chunk::double(len) {
            return Ok(c);
        }
        let _ = double;
        Ok(Chunk {
            rw: None,
            rx: Some(MmapMut::map_anon(len)?.make_exec()?),
        })
    }

    /// A memfd of `len` bytes mapped read+write and read+exec.
    #[cfg(target_os = "linux")]
    fn double(len: usize) -> std::io::Result<Chunk> {
        use std::os::fd::FromRawFd;
        // SAFETY: memfd_create takes a NUL-terminated name and flags; it
        // returns a new descriptor that nothing else owns, or -1.
        let fd = unsafe { libc::memfd_create(c"os2trace-jit".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor owned by nobody else.
        let file = unsafe { std::fs::File::from_raw_fd(fd) };
        file.set_len(len as u64)?;
        let opts = memmap2::MmapOptions::new();
        // SAFETY: the memfd is this process's alone (not inherited across
        // exec, never shared, closed when `file` drops below) and these two
        // mappings are its only users: nothing changes or truncates it
        // behind the arena's back.
        let rw = unsafe { opts.map_mut(&file)? };
        // SAFETY: as above.
        let rx = unsafe { opts.map_exec(&file)? };
        Ok(Chunk {
            rw: Some(rw),
            rx: Some(rx),
        })
    }

    /// Copy `bytes` in at `offset` (the caller checked they fit): through
    /// the read+write view, or by switching the one mapping to read+write
    /// and back.
    fn write(&mut self, offset: usize, bytes: &[u8]) -> std::io::Result<()> {
        if let Some(rw) = &mut self.rw {
            rw[offset..offset + bytes.len()].copy_from_slice(bytes);
            return Ok(());
        }
        let Some(rx) = self.rx.take() else {
            return Err(std::io::Error::other("arena chunk lost"));
        };
        let mut rw = rx.make_mut()?;
        rw[offset..offset + bytes.len()].copy_from_slice(bytes);
        self.rx = Some(rw.make_exec()?);
        Ok(())
    }

    /// The read+exec view's first byte (0 if lost).
    fn base(&self) -> usize {
        self.rx.as_ref().map_or(0, |m| m.as_ptr() as usize)
    }

    fn len(&self) -> usize {
        self.rx.as_ref().map_or(0, |m| m.len())
    }
}

/// Executable memory for a machine's blocks: large chunks handed out by
/// bumping an offset, so translating a block costs a copy (on Linux;
/// elsewhere two `mprotect`s of one chunk) instead of a mapping of its
/// own (an `mmap`, its page faults, an `mprotect` and an `munmap` each).
/// No mapping is ever writable and executable at once. Bytes are reclaimed
/// all at once by [`Arena::reset`] (the block cache's clear), which starts
/// a new epoch: a [`Code`] of an older epoch is refused by [`Arena::call`],
/// so no call can reach unmapped or rewritten memory.
pub(crate) struct Arena {
    /// Mappings; the last one is being filled.
    chunks: Vec<Chunk>,
    /// Bytes used in the last chunk.
    used: usize,
    /// Bytes mapped in all chunks.
    mapped: usize,
    epoch: u64,
    /// Chunks are double mappings where possible (tests turn it off to
    /// run the single mapping's path).
    double: bool,
}

impl Default for Arena {
    fn default() -> Self {
        Arena {
            chunks: Vec::new(),
            used: 0,
            mapped: 0,
            epoch: EPOCHS.fetch_add(1, Ordering::Relaxed),
            double: true,
        }
    }
}

impl Drop for Arena {
    /// Keep the chunks of the shared size for the next arena (see
    /// [`SPARE`]). Their bytes stay, but no block can reach them: a
    /// [`Code`] runs only in the arena of its epoch, which is gone, and an
    /// arena that takes a chunk writes every block it runs there itself.
    fn drop(&mut self) {
        let Ok(mut spare) = SPARE.lock() else {
            return;
        };
        for c in self.chunks.drain(..) {
            if spare.len() < SPARE_MAX && c.len() == CHUNK && c.rx.is_some() {
                spare.push(c);
            }
        }
    }
}

/// A translated block: where its host code is in an [`Arena`].
#[derive(Debug)]
pub(crate) struct Code {
    addr: usize,
    len: usize,
    epoch: u64,
}

impl Arena {
    /// An arena whose chunks are single mappings switched between
    /// read+write and read+exec.
    #[cfg(test)]
    pub fn single_mapped() -> Arena {
        let mut a = Arena::default();
        a.double = false;
        a
    }

    /// Bytes mapped so far in this epoch.
    pub fn mapped(&self) -> usize {
        self.mapped
    }

    /// Forget every block: they can no longer be called. The first chunk
    /// is kept for the next epoch's blocks (nothing can run its old ones).
    pub fn reset(&mut self) {
        self.epoch = EPOCHS.fetch_add(1, Ordering::Relaxed);
        self.chunks.truncate(1);
        if self.chunks.first().is_some_and(|c| c.len() != CHUNK) {
            self.chunks.clear();
        }
        self.mapped = self.chunks.iter().map(Chunk::len).sum();
        self.used = 0;
    }

    /// Copy `code` into executable memory.
    pub fn put(&mut self, code: &Emitted) -> std::io::Result<Code> {
        let len = code.0.len().max(1);
        let at = self.used.next_multiple_of(ALIGN);
        let fits = self.chunks.last().is_some_and(|c| c.len() >= at + len);
        let (i, offset) = if fits {
            (self.chunks.len() - 1, at)
        } else {
            let chunk = Chunk::new(len.max(CHUNK), self.double)?;
            self.mapped += chunk.len();
            if len > CHUNK && !self.chunks.is_empty() {
                // A chunk of its own: the last one is still the one to fill.
                let last = self.chunks.len() - 1;
                self.chunks.insert(last, chunk);
                (last, 0)
            } else {
                self.chunks.push(chunk);
                (self.chunks.len() - 1, 0)
            }
        };
        if let Err(e) = self.chunks[i].write(offset, &code.0) {
            // The chunk may be gone: no block of this epoch may run now.
            self.reset();
            return Err(e);
        }
        if i == self.chunks.len() - 1 {
            self.used = offset + len;
        }
        Ok(Code {
            addr: self.chunks[i].base() + offset,
            len,
            epoch: self.epoch,
        })
    }

    /// Run the block `code` on `st`, with `guest` the memory its memory
    /// operands may access (without it, every such op leaves the block
    /// before it).
    ///
    /// # Panics
    ///
    /// If `code` is not of this arena's current epoch (a block that
    /// outlived the cache clear that retired it).
    pub fn call(&self, code: &Code, st: &mut State, guest: Option<Guest<'_>>) {
        assert_eq!(code.epoch, self.epoch, "a retired block was called");
        debug_assert!(self.chunks.iter().any(|c| c.base() != 0
            && c.base() <= code.addr
            && code.addr + code.len <= c.base() + c.len()));
        match guest {
            Some(g) => {
                assert!(g.code_pages.len() >= 1 << 14, "code-page bitmap too short");
                st.fast = g.fast.min(g.ram.len() as u64);
                st.ram = g.ram.as_mut_ptr();
                st.tlb = g.tlb.as_ptr();
                st.code_pages = g.code_pages.as_ptr();
                st.dcache = g.dcache.as_ptr();
            }
            None => {
                // Paging off and nothing fast: every check fails.
                st.fast = 0;
                st.paging = 0;
                st.ram = std::ptr::null_mut();
                st.tlb = std::ptr::null();
                st.code_pages = std::ptr::null();
                st.dcache = std::ptr::null();
            }
        }
        let entry = code.addr as *const u8;
        // SAFETY: `code` is of this arena's epoch, so `entry` is inside a
        // chunk this arena still maps read+exec (chunks are only unmapped
        // or rewritten by a reset, which starts a new epoch, and are
        // read+exec outside `put`, which holds `&mut self`), at the start
        // of the bytes `put` copied there from an emitter-built leaf
        // function with the System V ABI and the signature below (see the
        // module doc); it reads and writes only `*st` at in-bounds
        // offsets, its own stack frame, and the guest areas set just above
        // from `guest`'s borrows (alive and exclusive for this call)
        // inside the bounds the module doc lists.
        let f = unsafe { std::mem::transmute::<*const u8, extern "sysv64" fn(*mut State)>(entry) };
        f(st);
    }
}

/// The guest memory a block's memory operands may access.
pub(crate) struct Guest<'a> {
    /// Guest RAM.
    pub ram: &'a mut [u8],
    /// Bytes of it below any ROM (`PhysMem::fast_limit`).
    pub fast: u64,
    /// The TLB's native entries.
    pub tlb: &'a [NativeEntry; 256],
    /// The code-page bitmap (2^14 words).
    pub code_pages: &'a [u64],
    /// The descriptor cache.
    pub dcache: &'a [DescEntry; DCACHE_SLOTS],
}
