//! REP MOVS/STOS/LODS at the end of a block: one chunk of the interpreter's
//! (at most [`REP_CHUNK`] elements, one retired instruction) run from
//! Rust on guest RAM directly, when every element's access passes, up
//! front, the checks the host code makes for a single access: the
//! segment's read or write range, no element across a page, plain RAM
//! (paging off) or TLB native entries with the right the access needs at
//! the CPL, and no store to a page holding cached code. Then nothing can
//! fault, set an A/D bit or retire cached code, and the result is the
//! interpreter's: the elements in its order (overlapping copies element
//! by element), the index registers and (E)CX stepped, EIP at the next
//! instruction or, with (E)CX left after a full chunk, at the REP again,
//! and its cycles (base, plus 4 per element). Otherwise the interpreter
//! runs the whole instruction, fault or not.

use super::native::SegCheck;
use super::select::{Mem, Str, StrKind};
use crate::cpu::Gpr;
use crate::exec::string::REP_CHUNK;
use crate::machine::Machine;

/// Most pages one operand of a chunk can touch: 4096 dwords, unaligned
/// start.
const MAX_PAGES: usize = 5;

/// One operand of a chunk, checked: the physical frame of each linear page
/// it touches.
struct Operand {
    /// Linear address of element 0.
    lin0: u32,
    /// First linear page number touched.
    first_page: u32,
    /// Frames of the pages from `first_page` on.
    frames: [u32; MAX_PAGES],
}

impl Operand {
    /// Physical address of the element at linear `lin`.
    fn phys(&self, lin: u32) -> usize {
        let page = ((lin >> 12) - self.first_page) as usize;
        (self.frames[page] | (lin & 0xFFF)) as usize
    }
}

impl Machine {
    /// Run one chunk of the REP string op `s` (whose base cycles are
    /// `base` and whose next instruction is at `next_eip`) if all of it
    /// passes the checks; false (nothing changed) otherwise.
    pub(super) fn jit_rep(&mut self, s: Str, base: u64, next_eip: u32) -> bool {
        let addr32 = s.dst.addr32;
        let mask = if addr32 { u32::MAX } else { 0xFFFF };
        let count = self.cpu.gpr[Gpr::Ecx] & mask;
        let k = count.min(REP_CHUNK);
        let n = u32::from(s.dst.size);
        let mut ops: [Option<Operand>; 2] = [None, None];
        for (slot, (mem, write)) in ops.iter_mut().zip(s.accesses()) {
            if k == 0 {
                break;
            }
            match self.rep_operand(mem, write, k, s.delta) {
                Some(o) => *slot = Some(o),
                None => return false,
            }
        }
        let up = s.delta > 0;
        // Element j of an operand starting at linear `lin0`.
        let at = |lin0: u32, j: u32| {
            if up {
                lin0.wrapping_add(j * n)
            } else {
                lin0.wrapping_sub(j * n)
            }
        };
        let (ram, _) = self.mem.native_view();
        match (s.kind, &ops) {
            (_, [None, _]) => {}
            (StrKind::Movs, [Some(src), Some(dst)]) => {
                let mut j = 0;
                while j < k {
                    let (ls, ld) = (at(src.lin0, j), at(dst.lin0, j));
                    // Elements left inside both current pages.
                    let room = |lin: u32| {
                        if up {
                            (0x1000 - (lin & 0xFFF)) / n
                        } else {
                            (lin & 0xFFF) / n + 1
                        }
                    };
                    let run = (k - j).min(room(ls)).min(room(ld)).max(1);
                    let (ps, pd) = (src.phys(ls), dst.phys(ld));
                    let bytes = (run * n) as usize;
                    let back = ((run - 1) * n) as usize;
                    let (s_lo, d_lo) = if up { (ps, pd) } else { (ps - back, pd - back) };
                    if s_lo + bytes <= d_lo || d_lo + bytes <= s_lo {
                        ram.copy_within(s_lo..s_lo + bytes, d_lo);
                    } else {
                        // Overlapping: element by element, in order.
                        for e in 0..run {
                            let (a, b) = (src.phys(at(ls, e)), dst.phys(at(ld, e)));
                            let mut v = [0u8; 4];
                            v[..n as usize].copy_from_slice(&ram[a..a + n as usize]);
                            ram[b..b + n as usize].copy_from_slice(&v[..n as usize]);
                        }
                    }
                    j += run;
                }
            }
            (StrKind::Stos, [Some(dst), _]) => {
                let v = self.cpu.gpr[Gpr::Eax].to_le_bytes();
                for j in 0..k {
                    let p = dst.phys(at(dst.lin0, j));
                    ram[p..p + n as usize].copy_from_slice(&v[..n as usize]);
                }
            }
            (StrKind::Lods, [Some(src), _]) => {
                let p = src.phys(at(src.lin0, k - 1));
                let mut v = [0u8; 4];
                v[..n as usize].copy_from_slice(&ram[p..p + n as usize]);
                let v = u32::from_le_bytes(v);
                let keep = if n == 4 { 0 } else { u32::MAX << (8 * n) };
                let eax = &mut self.cpu.gpr[Gpr::Eax];
                *eax = (*eax & keep) | v;
            }
            _ => return false,
        }
        let step = |g: u32, by: u32| (g & !mask) | (g.wrapping_add(by) & mask);
        let moved = (k as i32).wrapping_mul(s.delta) as u32;
        if s.kind != StrKind::Stos {
            self.cpu.gpr[Gpr::Esi] = step(self.cpu.gpr[Gpr::Esi], moved);
        }
        if s.kind != StrKind::Lods {
            self.cpu.gpr[Gpr::Edi] = step(self.cpu.gpr[Gpr::Edi], moved);
        }
        let ecx = step(self.cpu.gpr[Gpr::Ecx], k.wrapping_neg());
        self.cpu.gpr[Gpr::Ecx] = ecx;
        if ecx & mask == 0 {
            self.cpu.eip = next_eip;
        }
        self.cycles += base + 4 * u64::from(k);
        self.steps += 1;
        self.instructions += 1;
        self.jit.stats.instructions += 1;
        true
    }

    /// Check the `k` elements of `mem` (stepping by `delta`) as the host
    /// code checks one access; their frames if all pass.
    fn rep_operand(&self, mem: Mem, write: bool, k: u32, delta: i32) -> Option<Operand> {
        let n = u64::from(mem.size);
        let top: u64 = if mem.addr32 { 0xFFFF_FFFF } else { 0xFFFF };
        let reg = usize::from(mem.base?);
        let idx = u64::from(self.cpu.gpr[reg]) & top;
        let span = u64::from(k - 1) * n;
        // Offsets covered, without wrapping in the address size.
        let (lo, hi) = if delta > 0 {
            (idx, idx + span + n - 1)
        } else {
            (idx.checked_sub(span)?, idx + n - 1)
        };
        if hi > top {
            return None;
        }
        let c: SegCheck = self.seg_check(mem.seg as usize);
        let (rlo, rhi) = if write {
            (c.wlo, c.whi)
        } else {
            (c.rlo, c.rhi)
        };
        if lo < u64::from(rlo) || hi > u64::from(rhi) {
            return None;
        }
        let lin_lo = u64::from(c.base) + lo;
        let lin_hi = u64::from(c.base) + hi;
        if lin_hi > 0xFFFF_FFFF {
            return None;
        }
        let first_page = (lin_lo >> 12) as u32;
        let pages = ((lin_hi >> 12) as u32 - first_page + 1) as usize;
        // An unaligned element may straddle a page: only within one page.
        if !(u64::from(c.base) + idx).is_multiple_of(n) && pages > 1 {
            return None;
        }
        if pages > MAX_PAGES {
            return None;
        }
        let user = self.cpu.cpl == 3;
        let need = match (user, write) {
            (false, false) => crate::paging::RIGHT_SUP_READ,
            (false, true) => crate::paging::RIGHT_SUP_WRITE,
            (true, false) => crate::paging::RIGHT_USER_READ,
            (true, true) => crate::paging::RIGHT_USER_WRITE,
        };
        let fast = self.mem.fast_limit();
        let tlb = self.tlb.native();
        let mut frames = [0u32; MAX_PAGES];
        for (i, f) in frames.iter_mut().enumerate().take(pages) {
            let page = first_page + i as u32;
            let frame = if self.cpu.paging() {
                let e = tlb[(page as usize) % tlb.len()];
                if e.tag != page.wrapping_add(1) || e.rights & need == 0 {
                    return None;
                }
                e.phys
            } else if lin_hi < fast {
                page << 12
            } else {
                return None;
            };
            if write && self.mem.is_code_page(frame >> 12) {
                return None;
            }
            *f = frame;
        }
        Some(Operand {
            lin0: (u64::from(c.base) + idx) as u32,
            first_page,
            frames,
        })
    }
}
