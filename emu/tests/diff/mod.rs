//! The lockstep harness of the differential test: one interpreter
//! [`Machine`] and one [`UnicornMachine`] with the same memory image and
//! registers, stepped one instruction at a time and compared after each.
//!
//! Layout (the same in every mode): GDT at 0x800; code at base 0x10000,
//! DS 0x20000, ES 0x30000, SS 0x40000, FS 0x50000, GS 0x60000, every limit
//! 0xFFFF. Real mode uses selectors 0x1000..0x6000 for those bases. All
//! descriptors have their accessed bit set, so loads do not write the GDT.
//!
//! What is compared after each step: the exit (kind, vector, software
//! bit; unicorn has no error codes), the eight GPRs, EIP, the selectors,
//! EFLAGS (CF PF AF ZF SF TF IF DF OF IOPL NT) minus the flags the
//! instruction leaves undefined (iced-x86's `rflags_undefined`, plus the
//! cases listed in [`undefined_extra`]), and the bytes of every memory
//! operand the instruction uses (iced-x86's used-memory list, addresses
//! taken before the step). After the comparison unicorn is given the
//! interpreter's registers, so an undefined difference cannot spread.
#![allow(dead_code)]

pub mod random;

use crate::common::desc;
use emu::unicorn::UnicornMachine;
use emu::{
    CpuModel, Descriptor, Exit, Gpr, Limits, Machine, MachineConfig, SegReg, Segment, flags,
};
use iced_x86::{
    Decoder, DecoderOptions, Instruction, InstructionInfoFactory, Mnemonic, OpAccess, OpKind,
    Register,
};

/// Processor mode of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Real mode, 16-bit code.
    Real,
    /// Protected mode, 16-bit code and stack segments.
    Prot16,
    /// Protected mode, 32-bit code and stack segments.
    Prot32,
}

impl Mode {
    /// Code bitness.
    pub fn bitness(self) -> u32 {
        if self == Mode::Prot32 { 32 } else { 16 }
    }
}

/// GDT location.
pub const GDT: u32 = 0x800;
/// Code segment base.
pub const CODE_BASE: u32 = 0x10000;
/// Data segment bases: ES, CS, SS, DS, FS, GS order.
pub const BASES: [u32; 6] = [0x30000, CODE_BASE, 0x40000, 0x20000, 0x50000, 0x60000];
/// GDT selectors: 0x08 code16, 0x10 code32, 0x18 ES, 0x20 SS16, 0x28 SS32,
/// 0x30 DS, 0x38 FS, 0x40 GS.
pub const SEL_CODE16: u16 = 0x08;
/// 32-bit code.
pub const SEL_CODE32: u16 = 0x10;

fn gdt() -> Vec<u64> {
    vec![
        0,
        desc(CODE_BASE, 0xFFFF, 0x9B, 0),
        desc(CODE_BASE, 0xFFFF, 0x9B, 4),
        desc(BASES[0], 0xFFFF, 0x93, 0),
        desc(BASES[2], 0xFFFF, 0x93, 0),
        desc(BASES[2], 0xFFFF, 0x93, 4),
        desc(BASES[3], 0xFFFF, 0x93, 0),
        desc(BASES[4], 0xFFFF, 0x93, 0),
        desc(BASES[5], 0xFFFF, 0x93, 0),
    ]
}

/// Selectors for ES, CS, SS, DS, FS, GS in `mode`.
pub fn selectors(mode: Mode) -> [u16; 6] {
    match mode {
        Mode::Real => BASES.map(|b| (b >> 4) as u16),
        Mode::Prot16 => [0x18, SEL_CODE16, 0x20, 0x30, 0x38, 0x40],
        Mode::Prot32 => [0x18, SEL_CODE32, 0x28, 0x30, 0x38, 0x40],
    }
}

/// The two machines in lockstep.
pub struct Pair {
    /// The interpreter.
    pub m: Machine,
    /// The reference.
    pub u: UnicornMachine,
    /// The mode.
    pub mode: Mode,
    /// Steps compared.
    pub steps: u64,
}

/// A divergence, described for the failure message.
pub type Divergence = String;

impl Pair {
    /// Both machines in `mode`, EIP 0x100, SP 0x8000, the given GPRs and
    /// status flags, every vector intercepted.
    pub fn new(mode: Mode, gpr: [u32; 8], status: u32) -> Pair {
        let cfg = MachineConfig {
            ram_size: 1 << 20,
            model: CpuModel::I486,
        };
        let mut m = Machine::new(cfg);
        let mut u = UnicornMachine::new(cfg).expect("unicorn");
        let table = gdt();
        for (i, e) in table.iter().enumerate() {
            let a = GDT + 8 * i as u32;
            m.write_phys(a, &e.to_le_bytes());
            u.write_phys(a, &e.to_le_bytes()).expect("gdt");
        }
        let sels = selectors(mode);
        {
            let c = m.cpu_mut_flush_tlb();
            c.gdtr.base = GDT;
            c.gdtr.limit = (table.len() * 8 - 1) as u16;
            c.cr0 = if mode == Mode::Real { 0x10 } else { 0x11 };
            c.gpr = gpr;
            c.gpr[Gpr::Esp] = 0x8000;
            c.eflags = flags::RESERVED1 | (status & flags::STATUS);
            c.eip = 0x100;
        }
        for s in SegReg::ALL {
            let sel = sels[s as usize];
            let seg = if mode == Mode::Real {
                Segment::real(sel, s == SegReg::Cs)
            } else {
                Descriptor(table[usize::from(sel >> 3)]).to_segment(sel)
            };
            m.set_segment(s, seg);
        }
        for v in 0..=255u8 {
            m.intercept(v, true);
            u.intercept(v, true);
        }
        u.set_cpu(m.cpu()).expect("set_cpu");
        Pair {
            m,
            u,
            mode,
            steps: 0,
        }
    }

    /// Write `bytes` at physical `addr` in both.
    pub fn write(&mut self, addr: u32, bytes: &[u8]) {
        self.m.write_phys(addr, bytes);
        self.u.write_phys(addr, bytes).expect("write_phys");
    }

    /// Give unicorn the interpreter's registers.
    pub fn sync(&mut self) {
        self.u.set_cpu(self.m.cpu()).expect("sync");
    }

    /// The instruction at CS:EIP of the interpreter.
    pub fn current(&mut self) -> Instruction {
        let lin = self.m.cpu().seg[SegReg::Cs]
            .base
            .wrapping_add(self.m.cpu().eip);
        let mut buf = [0u8; 15];
        self.m.read_phys(lin, &mut buf);
        let mut d = Decoder::with_ip(
            self.mode.bitness(),
            &buf,
            u64::from(self.m.cpu().eip),
            DecoderOptions::NONE,
        );
        d.decode()
    }

    /// Step both once and compare.
    pub fn step(&mut self) -> Result<Exit, Divergence> {
        let insn = self.current();
        let accesses = self.accesses(&insn);
        let before = self.m.cpu().clone();
        let one = Limits {
            instructions: Some(1),
            cycles: None,
        };
        // A REP string instruction is one step per iteration in unicorn
        // and one per 4096 in the interpreter, and QEMU restarts (and
        // counts again) an instruction that writes into its own code page:
        // both run until EIP moves (no generated instruction jumps to
        // itself).
        let rep = true;
        let mut em = self.m.run(one);
        while rep && em == Exit::InstructionLimit && self.m.cpu().eip == before.eip {
            em = self.m.run(one);
        }
        let mut eu = self.u.run(one).map_err(|e| format!("unicorn error {e}"))?;
        while rep && eu == Exit::InstructionLimit && self.u.eip() == before.eip {
            eu = self.u.run(one).map_err(|e| format!("unicorn error {e}"))?;
        }
        self.steps += 1;
        let ctx = || {
            format!(
                "{:?} step {} at {:04X}: {} ({:02X?})\nbefore: {:08X?} eflags {:08X}",
                self.mode,
                self.steps,
                before.eip,
                insn,
                self.bytes(&before, &insn),
                before.gpr,
                before.eflags
            )
        };
        let same_exit = match (em, eu) {
            (
                Exit::Exception {
                    fault: a,
                    software: sa,
                },
                Exit::Exception {
                    fault: b,
                    software: sb,
                },
            ) => a.vector == b.vector && sa == sb,
            (a, b) => a == b,
        };
        if !same_exit {
            return Err(format!("{}\nexit: emu {em:?}, unicorn {eu:?}", ctx()));
        }
        let a = self.m.cpu().clone();
        let b = self.u.cpu().map_err(|e| format!("unicorn error {e}"))?;
        let mut gmask = [u32::MAX; 8];
        let fmask = defined_flags(&insn, &before, &a, &mut gmask);
        let mut diffs = Vec::new();
        for (i, m) in gmask.iter().enumerate() {
            if (a.gpr[i] ^ b.gpr[i]) & m != 0 {
                diffs.push(format!(
                    "gpr{i}: emu {:08X} unicorn {:08X}",
                    a.gpr[i], b.gpr[i]
                ));
            }
        }
        if a.eip != b.eip {
            diffs.push(format!("eip: emu {:08X} unicorn {:08X}", a.eip, b.eip));
        }
        if (a.eflags ^ b.eflags) & fmask != 0 {
            diffs.push(format!(
                "eflags (mask {fmask:04X}): emu {:08X} unicorn {:08X}",
                a.eflags, b.eflags
            ));
        }
        for s in 0..6 {
            if a.seg[s].selector != b.seg[s].selector {
                diffs.push(format!(
                    "sreg{s}: emu {:04X} unicorn {:04X}",
                    a.seg[s].selector, b.seg[s].selector
                ));
            }
        }
        for (lin, len) in accesses {
            let mut x = vec![0u8; len];
            let mut y = vec![0u8; len];
            self.m.read_phys(lin, &mut x);
            self.u.read_phys(lin, &mut y).map_err(|e| e.to_string())?;
            if x != y {
                diffs.push(format!("memory {lin:08X}: emu {x:02X?} unicorn {y:02X?}"));
            }
        }
        if !diffs.is_empty() {
            return Err(format!("{}\n{}", ctx(), diffs.join("\n")));
        }
        self.sync();
        Ok(em)
    }

    fn bytes(&self, before: &emu::CpuState, insn: &Instruction) -> Vec<u8> {
        let mut b = vec![0u8; insn.len()];
        self.m
            .read_phys(before.seg[SegReg::Cs].base.wrapping_add(before.eip), &mut b);
        b
    }

    /// Linear addresses and sizes of the memory `insn` uses, with the
    /// interpreter's registers now. None if one cannot be computed or lies
    /// outside its segment's 64 KB limit (the callers avoid those: QEMU does
    /// not check segment limits on data accesses).
    pub fn accesses_checked(&self, insn: &Instruction) -> Option<Vec<(u32, usize)>> {
        let cpu = self.m.cpu();
        let mut f = InstructionInfoFactory::new();
        let info = f.info(insn);
        let mut out = Vec::new();
        for mem in info.used_memory() {
            let off = mem.virtual_address(0, |r, _, _| {
                if SegReg::from_iced(r).is_some() {
                    Some(0)
                } else {
                    cpu.get(r).map(u64::from)
                }
            })?;
            let size = mem.memory_size().size().max(1);
            if off + size as u64 > 0x10000 {
                return None;
            }
            let seg = SegReg::from_iced(mem.segment())?;
            // QEMU does not check segment types on data accesses: a write
            // through CS in protected mode is #GP on the CPU, a write there.
            let writes = !matches!(
                mem.access(),
                OpAccess::Read | OpAccess::CondRead | OpAccess::NoMemAccess
            );
            if seg == SegReg::Cs && writes && self.mode != Mode::Real {
                return None;
            }
            out.push((cpu.seg[seg as usize].base + off as u32, size));
        }
        Some(out)
    }

    fn accesses(&self, insn: &Instruction) -> Vec<(u32, usize)> {
        self.accesses_checked(insn).unwrap_or_default()
    }
}

/// EFLAGS bits compared.
const COMPARED: u32 = flags::STATUS | flags::TF | flags::IF | flags::DF | flags::IOPL | flags::NT;

/// The EFLAGS bits `insn` defines, and (in `gmask`) the GPR bits it
/// defines, given the state before and the interpreter's state after.
fn defined_flags(
    insn: &Instruction,
    before: &emu::CpuState,
    after: &emu::CpuState,
    gmask: &mut [u32; 8],
) -> u32 {
    let mut undef = insn.rflags_undefined();
    undef |= undefined_extra(insn, before, after, gmask);
    let mut m = COMPARED;
    // iced's RflagsBits: OF 1, SF 2, ZF 4, AF 8, CF 0x10, PF 0x20.
    for (bit, fl) in [
        (1, flags::OF),
        (2, flags::SF),
        (4, flags::ZF),
        (8, flags::AF),
        (0x10, flags::CF),
        (0x20, flags::PF),
    ] {
        if undef & bit != 0 {
            m &= !fl;
        }
    }
    m
}

fn gpr_index(r: Register) -> Option<usize> {
    let full = r.full_register32();
    let n = full as u32;
    let e = Register::EAX as u32;
    (e..e + 8).contains(&n).then(|| (n - e) as usize)
}

/// Undefined results iced's tables do not express (count-dependent):
/// - shifts: CF is undefined for SHL/SHR/SAL/SAR counts >= the operand size
///   (8 and 16 bit; Intel SDM "SAL/SAR/SHL/SHR"), OF for counts other than 1;
/// - rotates: OF for counts other than 1;
/// - SHLD/SHRD: OF for counts other than 1; the generator avoids the
///   undefined 16-bit counts above 16;
/// - BSF/BSR with a zero source: the destination is undefined (Intel SDM;
///   486 and QEMU keep it, the SDM does not promise it).
fn undefined_extra(
    insn: &Instruction,
    before: &emu::CpuState,
    after: &emu::CpuState,
    gmask: &mut [u32; 8],
) -> u32 {
    use Mnemonic as M;
    let count = || -> u32 {
        let last = insn.op_count() - 1;
        match insn.op_kind(last) {
            OpKind::Immediate8 => insn.immediate8().into(),
            OpKind::Register if insn.op_register(last) == Register::CL => {
                before.gpr[Gpr::Ecx] & 0xFF
            }
            _ => 1,
        }
    };
    match insn.mnemonic() {
        M::Shl | M::Shr | M::Sar | M::Sal => {
            let c = count() & 31;
            let size = insn.memory_size().size().max(reg_size(insn)) as u32 * 8;
            let mut u = 0;
            if c != 1 {
                u |= 1;
            }
            if c >= size {
                u |= 0x10;
            }
            u
        }
        M::Rol | M::Ror | M::Rcl | M::Rcr | M::Shld | M::Shrd => u32::from(count() & 31 != 1),
        M::Bsf | M::Bsr => {
            if after.eflags & flags::ZF != 0
                && let Some(i) = gpr_index(insn.op0_register())
            {
                gmask[i] = 0;
            }
            0
        }
        _ => 0,
    }
}

fn reg_size(insn: &Instruction) -> usize {
    if insn.op0_kind() == OpKind::Register {
        insn.op0_register().size()
    } else {
        0
    }
}

/// BT/BTS/BTR/BTC with a memory operand and a register bit offset: the
/// access can lie far from the operand iced-x86 reports.
pub fn is_bt_mem_reg(insn: &Instruction) -> bool {
    matches!(
        insn.mnemonic(),
        Mnemonic::Bt | Mnemonic::Bts | Mnemonic::Btr | Mnemonic::Btc
    ) && insn.op0_kind() == OpKind::Memory
        && insn.op1_kind() == OpKind::Register
}
