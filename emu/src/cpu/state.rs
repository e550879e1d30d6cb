//! The register file of an IA-32 CPU (386/486 integer core).
//!
//! Segment registers carry their hidden descriptor cache ([`Segment`]), so a
//! host can set up protected mode directly by writing a cache, the way
//! `LOADALL` or a debugger would. `CpuState` is plain data: the machine is
//! the only thing that interprets it.

use std::ops::{Index, IndexMut};

use iced_x86::Register;

/// EFLAGS bit masks.
pub mod flags {
    /// Carry.
    pub const CF: u32 = 1 << 0;
    /// Always-one bit 1.
    pub const RESERVED1: u32 = 1 << 1;
    /// Parity.
    pub const PF: u32 = 1 << 2;
    /// Auxiliary carry.
    pub const AF: u32 = 1 << 4;
    /// Zero.
    pub const ZF: u32 = 1 << 6;
    /// Sign.
    pub const SF: u32 = 1 << 7;
    /// Trap (single step).
    pub const TF: u32 = 1 << 8;
    /// Interrupt enable.
    pub const IF: u32 = 1 << 9;
    /// Direction.
    pub const DF: u32 = 1 << 10;
    /// Overflow.
    pub const OF: u32 = 1 << 11;
    /// I/O privilege level (two bits).
    pub const IOPL: u32 = 3 << 12;
    /// Nested task.
    pub const NT: u32 = 1 << 14;
    /// Resume.
    pub const RF: u32 = 1 << 16;
    /// Virtual-8086 mode.
    pub const VM: u32 = 1 << 17;
    /// Alignment check (486).
    pub const AC: u32 = 1 << 18;
    /// CPUID available (486 with CPUID).
    pub const ID: u32 = 1 << 21;
    /// The six arithmetic status flags.
    pub const STATUS: u32 = CF | PF | AF | ZF | SF | OF;
}

/// Which processor the machine behaves as where generations differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuModel {
    /// 80286: 16-bit only (0x66/0x67 and 386 opcodes are #UD), 10-byte
    /// instruction limit, FLAGS bits 12..15 read as zero in real mode.
    I286,
    /// 80386: no CPUID, no 486 instructions (BSWAP, XADD, CMPXCHG, INVLPG).
    I386,
    /// 80486 with CPUID (the default).
    I486,
}

/// A general register, in x86 encoding order: `cpu.gpr[Gpr::Esp]` names
/// what `gpr[4]` would only number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Gpr {
    /// EAX
    Eax = 0,
    /// ECX
    Ecx = 1,
    /// EDX
    Edx = 2,
    /// EBX
    Ebx = 3,
    /// ESP
    Esp = 4,
    /// EBP
    Ebp = 5,
    /// ESI
    Esi = 6,
    /// EDI
    Edi = 7,
}

impl Gpr {
    /// All eight, in encoding order.
    pub const ALL: [Gpr; 8] = [
        Gpr::Eax,
        Gpr::Ecx,
        Gpr::Edx,
        Gpr::Ebx,
        Gpr::Esp,
        Gpr::Ebp,
        Gpr::Esi,
        Gpr::Edi,
    ];
}

impl Index<Gpr> for [u32; 8] {
    type Output = u32;
    #[inline]
    fn index(&self, r: Gpr) -> &u32 {
        &self[r as usize]
    }
}

impl IndexMut<Gpr> for [u32; 8] {
    #[inline]
    fn index_mut(&mut self, r: Gpr) -> &mut u32 {
        &mut self[r as usize]
    }
}

/// A segment register index, in x86 encoding order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SegReg {
    /// ES
    Es = 0,
    /// CS
    Cs = 1,
    /// SS
    Ss = 2,
    /// DS
    Ds = 3,
    /// FS
    Fs = 4,
    /// GS
    Gs = 5,
}

impl SegReg {
    /// All six, in encoding order.
    pub const ALL: [SegReg; 6] = [
        SegReg::Es,
        SegReg::Cs,
        SegReg::Ss,
        SegReg::Ds,
        SegReg::Fs,
        SegReg::Gs,
    ];

    /// From an iced-x86 segment register (None for anything else).
    pub fn from_iced(r: Register) -> Option<SegReg> {
        Some(match r {
            Register::ES => SegReg::Es,
            Register::CS => SegReg::Cs,
            Register::SS => SegReg::Ss,
            Register::DS => SegReg::Ds,
            Register::FS => SegReg::Fs,
            Register::GS => SegReg::Gs,
            _ => return None,
        })
    }
}

impl Index<SegReg> for [Segment; 6] {
    type Output = Segment;
    #[inline]
    fn index(&self, s: SegReg) -> &Segment {
        &self[s as usize]
    }
}

impl IndexMut<SegReg> for [Segment; 6] {
    #[inline]
    fn index_mut(&mut self, s: SegReg) -> &mut Segment {
        &mut self[s as usize]
    }
}

/// A segment register with its hidden descriptor cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The visible selector.
    pub selector: u16,
    /// Linear base address.
    pub base: u32,
    /// Byte-granular limit (already scaled by G).
    pub limit: u32,
    /// Access byte of the descriptor: P, DPL, S, type (bit 0 = accessed).
    pub access: u8,
    /// Upper flag nibble: bit 3 G, bit 2 D/B, bit 0 AVL.
    pub flags: u8,
}

impl Segment {
    /// A real-mode style segment: base = selector * 16, 64 KB limit,
    /// present read/write data (or code for CS).
    pub fn real(selector: u16, code: bool) -> Segment {
        Segment {
            selector,
            base: u32::from(selector) << 4,
            limit: 0xFFFF,
            access: if code { 0x9B } else { 0x93 },
            flags: 0,
        }
    }

    /// The "unusable" cache left by loading a null selector.
    pub fn null(selector: u16) -> Segment {
        Segment {
            selector,
            base: 0,
            limit: 0,
            access: 0,
            flags: 0,
        }
    }

    /// D/B bit: 32-bit code, 32-bit stack, or big expand-down limit.
    pub fn big(&self) -> bool {
        self.flags & 4 != 0
    }
    /// Present bit.
    pub fn present(&self) -> bool {
        self.access & 0x80 != 0
    }
    /// Descriptor privilege level.
    pub fn dpl(&self) -> u8 {
        (self.access >> 5) & 3
    }
    /// Code or data (S = 1) rather than a system descriptor.
    pub fn is_code_data(&self) -> bool {
        self.access & 0x10 != 0
    }
    /// A code segment.
    pub fn is_code(&self) -> bool {
        self.access & 0x18 == 0x18
    }
    /// Readable: any data segment, or code with R set.
    pub fn readable(&self) -> bool {
        self.present() && self.is_code_data() && (!self.is_code() || self.access & 2 != 0)
    }
    /// Writable data segment.
    pub fn writable(&self) -> bool {
        self.present() && self.access & 0x1A == 0x12
    }
    /// Expand-down data segment.
    pub fn expand_down(&self) -> bool {
        self.access & 0x1C == 0x14
    }
    /// Conforming code segment.
    pub fn conforming(&self) -> bool {
        self.access & 0x1C == 0x1C
    }

    /// Do the `len` bytes at `offset` lie inside the segment's limit? The
    /// one limit rule, for the CPU's own accesses and the host's checks:
    /// expand-down segments hold the offsets above the limit up to 0xFFFF,
    /// or 0xFFFFFFFF with the B bit. An empty range is always inside.
    #[inline]
    pub fn contains(&self, offset: u32, len: u32) -> bool {
        // One past the last byte, in 64 bits so nothing wraps.
        let end = u64::from(offset) + u64::from(len);
        if self.expand_down() {
            let top: u64 = if self.big() { 1 << 32 } else { 1 << 16 };
            (offset > self.limit || len == 0) && end <= top
        } else {
            len == 0 || end <= u64::from(self.limit) + 1
        }
    }

    /// Does the segment's type allow `access` (protected mode)? Present
    /// is part of it: an absent segment allows nothing.
    #[inline]
    pub fn permits(&self, access: Access) -> bool {
        match access {
            Access::Read => self.readable(),
            Access::Write => self.writable(),
        }
    }
}

/// What a segmented access does, for the segment type check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read: any data segment, or code with R set.
    Read,
    /// Write: writable data segments only.
    Write,
}

// Size checks on the hot structs (as iced-x86 does): the interpreter
// copies segment caches and snapshots the register file on every step.
const _: () = assert!(size_of::<Segment>() == 12);
const _: () = assert!(size_of::<CpuState>() == 208);

/// GDTR / IDTR contents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DescTable {
    /// Linear base.
    pub base: u32,
    /// Byte limit.
    pub limit: u16,
}

/// The complete register file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuState {
    /// EAX, ECX, EDX, EBX, ESP, EBP, ESI, EDI (x86 encoding order).
    pub gpr: [u32; 8],
    /// Instruction pointer (offset in CS).
    pub eip: u32,
    /// EFLAGS.
    pub eflags: u32,
    /// ES, CS, SS, DS, FS, GS with caches.
    pub seg: [Segment; 6],
    /// Local descriptor table register (selector + cache).
    pub ldtr: Segment,
    /// Task register (selector + cache).
    pub tr: Segment,
    /// Global descriptor table register.
    pub gdtr: DescTable,
    /// Interrupt descriptor table register.
    pub idtr: DescTable,
    /// CR0 (PE bit 0, MP 1, EM 2, TS 3, ET 4, NE 5, WP 16, AM 18, PG 31).
    pub cr0: u32,
    /// CR2: last page-fault linear address.
    pub cr2: u32,
    /// CR3: page directory base.
    pub cr3: u32,
    /// CR4 (486: only stored).
    pub cr4: u32,
    /// DR0..DR7 (DR4/DR5 alias DR6/DR7).
    pub dr: [u32; 8],
    /// Current privilege level.
    pub cpl: u8,
    /// x87 control word.
    pub fpu_cw: u16,
    /// x87 status word.
    pub fpu_sw: u16,
    /// x87 register tags, abridged as FXSAVE stores them: bit `i` set
    /// when physical register `i` holds a value. FNINIT empties them;
    /// the registers themselves are the kernel's (it emulates the
    /// arithmetic).
    pub fpu_tags: u8,
}

/// CR0 bits.
pub(crate) const CR0_PE: u32 = 1;
pub(crate) const CR0_TS: u32 = 8;
pub(crate) const CR0_WP: u32 = 1 << 16;
pub(crate) const CR0_PG: u32 = 1 << 31;

impl Default for CpuState {
    fn default() -> Self {
        Self::reset()
    }
}

impl CpuState {
    /// The state after RESET: CS:IP = F000:FFF0 with CS base 0xFFFF0000.
    pub fn reset() -> CpuState {
        let mut cs = Segment::real(0xF000, true);
        cs.base = 0xFFFF_0000;
        CpuState {
            gpr: [0; 8],
            eip: 0xFFF0,
            eflags: flags::RESERVED1,
            seg: [
                Segment::real(0, false),
                cs,
                Segment::real(0, false),
                Segment::real(0, false),
                Segment::real(0, false),
                Segment::real(0, false),
            ],
            ldtr: Segment {
                access: 0x82,
                limit: 0xFFFF,
                ..Segment::null(0)
            },
            tr: Segment {
                access: 0x8B,
                limit: 0xFFFF,
                ..Segment::null(0)
            },
            gdtr: DescTable {
                base: 0,
                limit: 0xFFFF,
            },
            idtr: DescTable {
                base: 0,
                limit: 0x3FF,
            },
            cr0: 0x10,
            cr2: 0,
            cr3: 0,
            cr4: 0,
            dr: [0, 0, 0, 0, 0, 0, 0xFFFF_0FF0, 0x400],
            cpl: 0,
            fpu_cw: 0x37F,
            fpu_sw: 0,
            fpu_tags: 0,
        }
    }

    /// Protected mode enabled (CR0.PE).
    pub fn protected(&self) -> bool {
        self.cr0 & CR0_PE != 0
    }
    /// Virtual-8086 mode.
    pub fn v86(&self) -> bool {
        self.eflags & flags::VM != 0
    }
    /// Paging enabled.
    pub fn paging(&self) -> bool {
        self.cr0 & CR0_PG != 0 && self.protected()
    }
    /// The segment cache of `s`.
    #[inline]
    pub fn sreg(&self, s: SegReg) -> &Segment {
        &self.seg[s]
    }
    /// Current IOPL.
    pub fn iopl(&self) -> u8 {
        ((self.eflags >> 12) & 3) as u8
    }
    /// A general or segment register by iced-x86 name (segment: selector).
    /// Returns None for registers this CPU has no value for.
    pub fn get(&self, r: Register) -> Option<u32> {
        let n = r as u32;
        let al = Register::AL as u32;
        let ax = Register::AX as u32;
        let eax = Register::EAX as u32;
        Some(if (eax..eax + 8).contains(&n) {
            self.gpr[(n - eax) as usize]
        } else if (ax..ax + 8).contains(&n) {
            self.gpr[(n - ax) as usize] & 0xFFFF
        } else if (al..al + 4).contains(&n) {
            self.gpr[(n - al) as usize] & 0xFF
        } else if (al + 4..al + 8).contains(&n) {
            (self.gpr[(n - al - 4) as usize] >> 8) & 0xFF
        } else if let Some(s) = SegReg::from_iced(r) {
            u32::from(self.seg[s].selector)
        } else {
            return None;
        })
    }
}
