//! Instruction fetch: the decoded-instruction cache lookup (with the CS
//! limit and, under paging, the translation re-checked on every hit), and
//! decoding on a miss from bytes fetched through segmentation and paging
//! (a fetch fault is raised, and CR2 written, only if the decoder needed
//! the missing bytes).

use crate::cpu::{CpuModel, SegReg};
use crate::fault::{Fault, R};
use crate::icache::{Decoded, key};
use crate::machine::Machine;
use crate::paging::PageAccess;
use iced_x86::{Decoder, DecoderError, DecoderOptions, Instruction};

impl Machine {
    /// The cache slot holding the instruction at `lin` (decoding it on a
    /// miss).
    #[inline]
    pub(crate) fn fetch(&mut self, lin: u32, code32: bool) -> R<usize> {
        let k = key(lin, code32);
        if let Some(i) = self.icache.lookup(k) {
            let d = self.icache.at(i);
            let (len, phys) = (d.insn.len() as u64, d.phys);
            if u64::from(self.cpu.eip) + len - 1 > u64::from(self.cpu.seg[SegReg::Cs].limit) {
                return Err(Fault::gp(0));
            }
            if !self.cpu.paging() {
                return Ok(i);
            }
            let user = self.cpu.cpl == 3;
            if self.translate(lin, PageAccess { write: false, user })? == phys {
                return Ok(i);
            }
        }
        self.icache.misses += 1;
        let d = self.decode_at(lin, code32)?;
        Ok(self.icache.insert(k, d))
    }

    fn decode_at(&mut self, lin: u32, code32: bool) -> R<Decoded> {
        let mut buf = [0u8; 15];
        let mut n = 0;
        let mut stop = None;
        let mut phys0 = 0;
        let mut pages_cross = false;
        let user = self.cpu.cpl == 3;
        let limit = u64::from(self.cpu.seg[SegReg::Cs].limit);
        let mut cur_page = u32::MAX;
        let mut cur_phys = 0;
        // A look-ahead walk that fails writes CR2; that only stands if the
        // decoder needed the bytes and the #PF is raised.
        let cr2 = self.cpu.cr2;
        while n < 15 {
            let off = u64::from(self.cpu.eip) + n as u64;
            if off > limit || (!code32 && off > 0xFFFF) {
                stop = Some(Fault::gp(0));
                break;
            }
            let l = lin.wrapping_add(n as u32);
            if l >> 12 != cur_page {
                match self.translate(l, PageAccess { write: false, user }) {
                    Ok(p) => {
                        cur_phys = p & !0xFFF;
                        if cur_page != u32::MAX {
                            pages_cross = true;
                        }
                        cur_page = l >> 12;
                    }
                    Err(f) => {
                        stop = Some(f);
                        break;
                    }
                }
            }
            let p = cur_phys | (l & 0xFFF);
            if n == 0 {
                phys0 = p;
            }
            buf[n] = self.mem.read8(p);
            n += 1;
        }
        // A tracepoint's INT3 still in memory: decode what it replaced.
        let tracepoint = n > 0
            && buf[0] == crate::tracepoint::INT3
            && !self.tracepoints.is_empty()
            && match self.tracepoints.get(&phys0) {
                Some(&original) => {
                    buf[0] = original;
                    true
                }
                None => false,
            };
        let bitness = if code32 { 32 } else { 16 };
        let mut dec = Decoder::with_ip(bitness, &buf[..n], 0, self.decoder_options());
        let mut insn = Instruction::default();
        dec.decode_out(&mut insn);
        if !(insn.is_invalid() && dec.last_error() == DecoderError::NoMoreBytes) {
            self.cpu.cr2 = cr2;
        }
        if insn.is_invalid() {
            if dec.last_error() == DecoderError::NoMoreBytes
                && let Some(f) = stop
            {
                return Err(f);
            }
            return Err(Fault::ud());
        }
        let len = insn.len();
        let mut has67 = false;
        let mut has66 = false;
        let mut has_386_prefix = false;
        for b in &buf[..len] {
            match b {
                0x67 => {
                    has67 = true;
                    has_386_prefix = true;
                }
                0x66 => {
                    has66 = true;
                    has_386_prefix = true;
                }
                0x64 | 0x65 => has_386_prefix = true,
                0x26 | 0x2E | 0x36 | 0x3E | 0xF0 | 0xF2 | 0xF3 => {}
                _ => break,
            }
        }
        if self.model == CpuModel::I286 && len > 10 {
            // The 286 raises #GP (not #UD) past its 10-byte limit.
            return Err(Fault::gp(0));
        }
        if !crate::exec::model_allows(self.model, &insn, has_386_prefix) {
            return Err(Fault::ud());
        }
        let crosses = pages_cross && (lin & 0xFFF) as usize + len > 0x1000;
        // A block never holds a tracepoint (its INT3 is in memory), an
        // instruction that straddles a page, or one whose next EIP wraps
        // to 0 in 16-bit code (the block ends after it); and the boundary
        // before a block start is always offered (see the jit module doc,
        // "Where blocks start"). With the tier off, false costs nothing
        // (and is right if it is switched on).
        #[cfg(target_arch = "x86_64")]
        let in_block = self.jit.enabled
            && !tracepoint
            && !crosses
            && (code32 || u64::from(self.cpu.eip) + (len as u64) <= 0xFFFF)
            && crate::jit::in_block(&buf[..len], code32)
            && !self.jit.starts_block(lin.wrapping_add(len as u32), code32);
        #[cfg(not(target_arch = "x86_64"))]
        let in_block = false;
        let d = Decoded {
            insn,
            phys: phys0,
            cycles: crate::cycles::base_cycles(&insn, u32::from(has67) + u32::from(has66)),
            hostcall: self.hostcalls.contains(&lin),
            tracepoint,
            addr32: code32 ^ has67,
            uncacheable: false,
            in_block,
        };
        if crosses {
            // Straddles a page: never cached (see icache docs).
            return Ok(Decoded {
                uncacheable: true,
                ..d
            });
        }
        self.mem.mark_code(phys0 >> 12);
        Ok(d)
    }

    fn decoder_options(&self) -> u32 {
        match self.model {
            CpuModel::I286 => DecoderOptions::NO_INVALID_CHECK | DecoderOptions::LOADALL286,
            _ => DecoderOptions::NONE,
        }
    }
}
