//! The native tier (x86-64 hosts only): hot straight runs of 32- or 16-bit
//! code (MOV, ALU, INC/DEC/NEG/NOT, MOVZX/MOVSX on registers and memory
//! operands, LEA, PUSH/POP, SHL/SHR/SAR of a register by one, CBW/CWDE/
//! CWD/CDQ, XCHG of registers, relative jumps, LOOP/LOOPE/LOOPNE/JCXZ,
//! near CALL/RET, near JMP/CALL through a register or memory,
//! MOVS/STOS/LODS)
//! are translated to host code and run there, with exactly the registers,
//! EFLAGS, EIP, cycles, instruction counts and memory the interpreter would
//! produce; a block may end in REP MOVS/STOS/LODS, whose chunks [`rep`]
//! runs from Rust. PUSH Sreg and MOV r/m from Sreg are taken in any mode.
//! In protected and real mode (not V86) a block also takes MOV/POP to
//! DS, ES, FS and GS, LDS/LES/LFS/LGS, and ends with a far
//! CALL/JMP (direct or through a far pointer), a far RET, or MOV/POP/LSS
//! to SS (after MOV and POP the caller sets the interrupt shadow): the
//! loads that need nothing but a descriptor read go through [`desc`]'s
//! per-selector cache, the others leave the block (in real mode a load
//! sets selector and base, and a far transfer checks the offset against
//! CS's limit; a block runs only in the mode it was translated in). The
//! interpreter stays
//! the reference: everything the tier does not take (other stack, string
//! and system instructions, gates, privilege changes, V86 segment loads
//! and far transfers, the
//! 286 model, any pending event) runs there, and so does every memory access the host
//! code's checks do not pass as a plain access (a limit or type violation,
//! a TLB miss or a page the access would fault on or set A/D in, a page
//! crossing, ROM or open bus, a store to a page holding cached code): the
//! block leaves just before that instruction with the interpreter's state
//! there (see [`emit`]), and the interpreter runs it, fault or not.
//!
//! - [`select`]: which instructions a block takes and what one pass costs.
//! - [`emit`]: host code for a block (flags kept live in host RFLAGS).
//! - [`asm`]: the x86-64 assembler the emitter writes with.
//! - [`cache`]: the block table, heat counts and retirement by page
//!   generation.
//! - [`desc`]: the descriptor cache of segment loads and far transfers.
//! - [`rep`]: a REP string op's chunk, checked up front and run on RAM.
//! - [`native`]: executable memory and the call (the crate's only unsafe).
//! - [`offer`]: which instructions a block would go on after.
//!
//! Where blocks start. The run loop (`Machine::run_with`, whose loop is
//! compiled twice: with the tier on, and without any of this) offers an
//! instruction boundary to [`Machine::jit_run`] (which counts heat there,
//! translates, and enters a block) only where a block could usefully
//! start; elsewhere the boundary costs a bit test. A block is a straight
//! run that ends at a control transfer, at an instruction the tier does
//! not take, at its size limit or page end, or at a side exit; so a block
//! worth having starts where the interpreter arrives other than by falling
//! through an instruction a block would have taken and gone on after.
//! Such an instruction is marked once, at decode ([`offer::in_block`],
//! a cheap subset of what `select` takes, kept in the icache's `Decoded`),
//! and a step that runs one reports it (`Machine::straight`). The run loop
//! offers:
//!
//! - the first boundary of every run (the host may have set anything);
//! - the boundary after any other step: every control transfer, taken or
//!   not; every instruction the tier refuses (and the few it takes that
//!   the cheap test does not accept); a tracepoint; a fault, trap or
//!   exception; a trap handler's return; an instruction whose decode
//!   found a block (or a memo) starting right after it, and one decoded
//!   before a block was translated there (`jit_translate` clears the flag
//!   of the instruction that ends where the block starts), so a block
//!   start reached by falling through is still entered from the run loop;
//! - the boundary where a block starts, and the next one, whether the
//!   block ran or not ([`Offer::Block`], [`Offer::Ran`]): so the boundary
//!   where a chain returned (size limit, page end, side exit, REP chunk,
//!   budget) and the one after the instruction the interpreter then runs
//!   are offered.
//!
//! Exactness does not depend on it: `jit_run` is exact at any boundary,
//! so this only moves where heat is counted and blocks are entered. Not
//! offered (taken as the price): the boundary after the first instruction
//! of an interrupt handler (run in the step that delivers it) and after an
//! instruction in an interrupt shadow; and a start past a size-limit end
//! gets heat only once the block before it runs. A start that only a
//! fall-through reaches gets no heat from it: on IBM's TRCUST.EXE (corpus
//! TSF, 40,860 guest instructions) 78 blocks are translated instead of 84,
//! and 25,971 guest instructions run natively instead of 26,094.
//! Measured there in host instructions (callgrind, 5 whole runs, before
//! -> after): with nothing translated (a third of the boundaries
//! offered) 163.1M -> 160.4M; the interpreter alone 154.5M -> 152.4M (its
//! loop no longer asks the tier); the default threshold 124.6M -> 123.9M.
//! Offering only branch targets was measured to lose the blocks that
//! start at fall-throughs (27% slower on the generated 5,000-tracepoint
//! run, where nearly every boundary the run loop sees follows a block or
//! a refused instruction, so is offered anyway).
//!
//! A block is entered only where the interpreter would run all of it
//! without an event: no TF, no deliverable IRQ, not halted,
//! no interrupt shadow, the whole block and its branch target inside the
//! CS limit, the start still mapped to the same physical address, and a
//! budget that covers whole passes. The pass count is cut to what the
//! instruction and cycle budgets allow (a pass charged at its taken-branch
//! cost), so the interpreter takes the remainder and stops exactly where it
//! would have alone.
//!
//! Chaining. A block that leaves at its branch (taken or not), at its end,
//! after a near CALL or RET, or after a far transfer does not go back to
//! the run loop: [`Machine::jit_next`] looks up the block at the new CS:EIP
//! and enters it if `jit_run` would, with the same pass budget, so a chain
//! stops at exactly the instruction and cycle counts of the run loop, and
//! therefore of the interpreter. It repeats only the checks a block can
//! falsify (the interrupt shadow after MOV/POP SS; IRQ, TF and HLT are
//! checked too, though no block changes them; CS and EIP; the entry, its
//! plan's conditions and its page generation; the budgets; the mapping of
//! a start on another linear page), and carries what holds from block to
//! block in a [`Link`]: the guest registers stay in the host state (copied
//! in and out once per chain) and a segment register's check is made
//! only when a block uses it and it changed (or was never made).
//! Everything else (a side exit, a REP, a spent budget, a missing or
//! stale entry) ends the chain, and the run loop's `jit_run` then does the
//! full work (heat, translation, retirement). A retired block is never entered: the generation of its
//! page is compared before every entry, chained or not, and a store into
//! code leaves the block that makes it (side exit), so the next entry sees
//! the new generation.
//!
//! Why in Rust and not as patched host jumps: entering a block costs a
//! few tens of nanoseconds, most of it in Rust's bookkeeping around the
//! call (registers and segment checks in and out of the host state, the
//! exit's instruction and cycle counts); host-to-host jumps would also
//! need the budgets, the page generations and the far transfers' segment
//! loads in host code, and links patched out of every block that jumps to
//! a retired one. The chain in Rust removes most of that cost with none of
//! the patching: the far-call bench (three blocks per loop, each ending in
//! a far CALL, a far RET or a Jcc) runs about 25% faster.
//! Returns (near and far) and JMP/CALL through a register or memory find
//! their target by the same lookup as direct jumps: the block table is
//! direct-mapped by linear address and code size, with the plan checked
//! against CS's size and mode, so it is the target cache, dropped with the
//! table.

mod asm;
mod cache;
mod desc;
mod emit;
mod native;
mod offer;
mod rep;
mod select;

pub(crate) use offer::in_block;

use crate::cpu::flags::{AF, DF, IF, STATUS, TF};
use crate::cpu::{CpuModel, SegReg};
use crate::icache::key;
use crate::machine::{JitStats, Machine};
use crate::paging::{
    PageAccess, RIGHT_SUP_READ, RIGHT_SUP_WRITE, RIGHT_USER_READ, RIGHT_USER_WRITE,
};
use cache::{Block, Cache, Entry};
use select::{MAX_INSNS, TAKEN_EXTRA};

/// Host RFLAGS bits set when entering a block besides the guest's
/// arithmetic flags: the always-one bit 1 and IF (as user code runs).
const HOST_FLAGS: u64 = 0x202;

/// The tier's state in a [`Machine`].
pub(crate) struct Jit {
    /// Switched on (the default).
    pub enabled: bool,
    cache: Cache,
    /// The descriptor cache of segment loads and far transfers.
    desc: desc::DescCache,
    pub stats: JitStats,
}

impl Default for Jit {
    fn default() -> Self {
        Jit {
            enabled: true,
            cache: Cache::default(),
            desc: desc::DescCache::default(),
            stats: JitStats::default(),
        }
    }
}

impl Jit {
    /// Retire every block (cache flush, host-call list change).
    pub fn clear(&mut self) {
        self.cache.clear();
        self.desc.clear();
    }
    /// Executions of a start address before it is translated.
    pub fn set_threshold(&mut self, n: u16) {
        self.cache.hot = n.max(1);
    }
    /// Blocks held.
    pub fn blocks(&self) -> usize {
        self.cache.blocks()
    }
    /// Might a block (or a memo) start at `lin` in 32- or 16-bit code?
    #[inline]
    pub fn starts_block(&self, lin: u32, code32: bool) -> bool {
        self.cache.filled(key(lin, code32))
    }
}

impl Machine {
    /// Run the block at CS:EIP if there is a valid one and the budgets
    /// allow at least one pass; count heat and translate otherwise.
    #[inline]
    pub(crate) fn jit_run(&mut self, istop: Option<u64>, cstop: Option<u64>) -> Offer {
        if !self.jit.enabled {
            return Offer::Miss;
        }
        let cs = self.cpu.seg[SegReg::Cs];
        let eip = self.cpu.eip;
        let lin = cs.base.wrapping_add(eip);
        let code32 = cs.big();
        let k = key(lin, code32);
        // Most boundaries have no entry: a bit of the cache's occupancy
        // map and a heat count are all they cost.
        let miss = !self.jit.cache.filled(k);
        if miss && !self.jit.cache.heat(lin) {
            return Offer::Miss;
        }
        let fl = self.cpu.eflags;
        if fl & TF != 0
            || self.halted
            || self.inhibit
            || (self.pending_irq.is_some() && fl & IF != 0)
            || self.model == CpuModel::I286
            || eip > cs.limit
            || (!code32 && eip > 0xFFFF)
        {
            // (Past the limit, the fetch raises #GP without a page walk;
            // so must we.)
            return Offer::Miss;
        }
        self.flush_dirty();
        if miss {
            self.jit_translate(lin, eip, code32, k);
            return Offer::Miss;
        }
        let Some(e) = self.jit.cache.get(k, eip) else {
            if self.jit.cache.heat(lin) {
                self.jit_translate(lin, eip, code32, k);
            }
            return Offer::Miss;
        };
        let (phys, generation) = (e.phys, e.generation);
        let Some(b) = e.block.as_deref() else {
            // A memo: forget it when its page changed, and (checked as
            // rarely as translations happen) when paging maps the address
            // to another frame, which may hold a block.
            let stale = generation != self.icache.generation(phys >> 12)
                || (self.cpu.paging()
                    && self.jit.cache.heat(lin)
                    && self.translate(
                        lin,
                        PageAccess {
                            write: false,
                            user: self.cpu.cpl == 3,
                        },
                    ) != Ok(phys));
            if stale {
                self.jit.cache.remove(k);
            }
            return Offer::Miss;
        };
        let prot = b.plan.prot;
        let Some(budget) = self.passes_for(&b.plan, code32, fl, cs.limit, istop, cstop) else {
            return Offer::Block;
        };
        if generation != self.icache.generation(phys >> 12) {
            self.jit.cache.remove(k);
            return Offer::Block;
        }
        if self.cpu.paging() {
            let user = self.cpu.cpl == 3;
            if self.translate(lin, PageAccess { write: false, user }) != Ok(phys) {
                self.jit.cache.remove(k);
                return Offer::Block;
            }
        }
        if prot {
            self.dcache_validate();
        }
        let page = (lin >> 12, phys >> 12);
        if self.jit_chain(k, eip, budget, page, prot, istop, cstop) {
            Offer::Ran
        } else {
            Offer::Block
        }
    }

    /// How many passes of block `p` may run here: `None` when the block
    /// does not fit the CPU's state (code and stack size, DF, the CS limit,
    /// the mode) or the instruction and cycle budgets leave no whole pass
    /// (a pass charged at its taken-branch cost). The key already has the
    /// code size; the plan's EIPs depend on it.
    #[inline]
    fn passes_for(
        &self,
        p: &select::Plan,
        code32: bool,
        fl: u32,
        cs_limit: u32,
        istop: Option<u64>,
        cstop: Option<u64>,
    ) -> Option<u64> {
        let limit = u64::from(cs_limit);
        if p.code32 != code32
            || p.stack32
                .is_some_and(|b| b != self.cpu.seg[SegReg::Ss].big())
            || p.df.is_some_and(|d| d != (fl & DF != 0))
            || p.last_byte > limit
            || p.target().is_some_and(|t| u64::from(t) > limit)
            || (p.prot && (self.cpu.v86() || p.real == self.cpu.protected()))
        {
            return None;
        }
        let pass_max = p.body_cycles + if p.target().is_some() { TAKEN_EXTRA } else { 0 };
        let mut budget = if p.self_loop() { u64::MAX } else { 1 };
        if let Some(s) = istop {
            budget = budget.min(s.saturating_sub(self.steps) / p.insns);
        }
        if let Some(c) = cstop {
            budget = budget.min(c.saturating_sub(self.cycles) / pass_max);
        }
        (budget > 0).then_some(budget)
    }

    /// Run the checked block for `k`, then, while each block leaves at a
    /// branch, far transfer or its end with nothing pending, the block at
    /// the new CS:EIP when [`Machine::jit_next`] finds that `jit_run`
    /// would enter it: block to block without going back to the run loop
    /// (see the module doc, "Chaining"). `page` is the linear and
    /// physical page of the first block's start, whose mapping was
    /// checked; `validated`: the descriptor cache was validated. False
    /// when the first block left before its first instruction.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn jit_chain(
        &mut self,
        k: u64,
        eip: u32,
        budget: u64,
        mut page: (u32, u32),
        mut validated: bool,
        istop: Option<u64>,
        cstop: Option<u64>,
    ) -> bool {
        let mut link = Link {
            st: native::State {
                dtag: desc::tag_of(0, self.cpu.cpl),
                segs: [DENY; 6],
                ..native::State::default()
            },
            stale: 0x3F,
        };
        link.st.gpr = self.cpu.gpr;
        let mut next = self.jit_enter(&mut link, k, eip, budget);
        if next == Ran::No {
            return false;
        }
        while next == Ran::Chain {
            let Some((k, eip, budget, prot)) = self.jit_next(istop, cstop, &mut page) else {
                break;
            };
            if prot && !validated {
                self.dcache_validate();
                validated = true;
            }
            next = self.jit_enter(&mut link, k, eip, budget);
            if next == Ran::No {
                break;
            }
            self.jit.stats.chained += 1;
        }
        self.cpu.gpr = link.st.gpr;
        true
    }

    /// The block `jit_run` would enter at CS:EIP right after a block that
    /// allowed chaining, and its pass budget, with the checks of
    /// `jit_run` that can have changed since: events (the block may have
    /// set the interrupt shadow), CS and EIP, the entry and its plan, the
    /// budgets, the page generation and, when the start is on another
    /// linear page than `page` (the last one checked), its mapping. The
    /// others hold for the whole chain: the model and V86 mode do not
    /// change, no code page is dirty (host code leaves before a store to
    /// one; a chunk of REP ends the chain), and the TLB is unchanged (the
    /// host code only reads it; far transfers stay at the CPL). None: go
    /// back to the run loop, whose `jit_run` then does everything,
    /// heat and retirement included. Has no effect on the machine but
    /// the translation `jit_run` would make at the same point.
    #[inline]
    fn jit_next(
        &mut self,
        istop: Option<u64>,
        cstop: Option<u64>,
        page: &mut (u32, u32),
    ) -> Option<(u64, u32, u64, bool)> {
        let fl = self.cpu.eflags;
        if fl & TF != 0
            || self.halted
            || self.inhibit
            || (self.pending_irq.is_some() && fl & IF != 0)
        {
            return None;
        }
        debug_assert!(self.mem.dirty_code.is_empty(), "a chain dirtied code");
        let cs = self.cpu.seg[SegReg::Cs];
        let eip = self.cpu.eip;
        let code32 = cs.big();
        if eip > cs.limit || (!code32 && eip > 0xFFFF) {
            return None;
        }
        let lin = cs.base.wrapping_add(eip);
        let k = key(lin, code32);
        let e = self.jit.cache.get(k, eip)?;
        let (phys, generation) = (e.phys, e.generation);
        let b = e.block.as_deref()?;
        let prot = b.plan.prot;
        let budget = self.passes_for(&b.plan, code32, fl, cs.limit, istop, cstop)?;
        if generation != self.icache.generation(phys >> 12) {
            return None;
        }
        if self.cpu.paging() && *page != (lin >> 12, phys >> 12) {
            let user = self.cpu.cpl == 3;
            if self.translate(lin, PageAccess { write: false, user }) != Ok(phys) {
                return None;
            }
            *page = (lin >> 12, phys >> 12);
        }
        Some((k, eip, budget, prot))
    }

    /// The host code's check of segment register `i`: its read and write
    /// offset ranges (as `Segment::contains` and, in protected mode outside
    /// V86, `Segment::permits`) and its base.
    fn seg_check(&self, i: usize) -> native::SegCheck {
        let typed = self.cpu.protected() && !self.cpu.v86();
        desc::seg_check_of(&self.cpu.seg[i], typed)
    }

    /// Run the (checked) block for `k` with a budget of `budget` passes,
    /// on the registers of `link` (see [`Link`]). [`Ran::No`] when it
    /// left before its first instruction (the interpreter must run that
    /// one).
    fn jit_enter(&mut self, link: &mut Link, k: u64, eip: u32, budget: u64) -> Ran {
        let Some(b) = self.jit.cache.get(k, eip).and_then(|e| e.block.as_deref()) else {
            return Ran::No;
        };
        let st = &mut link.st;
        st.flags = u64::from(self.cpu.eflags & STATUS) | HOST_FLAGS;
        st.budget = budget;
        st.sel = std::array::from_fn(|i| self.cpu.seg[i].selector);
        st.loaded = 0;
        let guest = if b.plan.mem {
            let user = self.cpu.cpl == 3;
            // The checks of the registers the block uses, made where they
            // are out of date (in place: a copy of the whole array is a
            // call to memcpy); see `Link` for the others.
            let todo = link.stale & b.plan.segs;
            if todo != 0 {
                for i in 0..6 {
                    if todo & (1 << i) != 0 {
                        st.segs[i] = self.seg_check(i);
                    }
                }
                link.stale &= !todo;
            }
            st.paging = u32::from(self.cpu.paging());
            st.cs_limit = self.cpu.seg[SegReg::Cs].limit;
            st.rmask = if user {
                RIGHT_USER_READ
            } else {
                RIGHT_SUP_READ
            };
            st.wmask = if user {
                RIGHT_USER_WRITE
            } else {
                RIGHT_SUP_WRITE
            };
            let fast = self.mem.fast_limit();
            let (ram, code_pages) = self.mem.native_view();
            Some(native::Guest {
                ram,
                fast,
                tlb: self.tlb.native(),
                code_pages,
                dcache: &self.jit.desc.entries,
            })
        } else {
            None
        };
        self.jit.cache.call(&b.code, st, guest);
        let st = &link.st;
        let exit = st.exit;
        let p = &b.plan;
        // The selector a load or far transfer that left the block would
        // have used, to make its descriptor cache entry.
        // MOV or POP SS (which end the block) hold interrupts off for the
        // next instruction, as in the interpreter (LSS does not).
        let shadow = matches!(p.end, select::End::LoadSs(select::Op::LoadSeg { .. }));
        let real = p.real;
        let missed = if st.exit == emit::EXIT_SIDE && p.prot && !p.real {
            desc_use(p, st.index as usize, st)
        } else {
            None
        };
        let rep = match p.end {
            select::End::Rep(s) if st.exit == emit::EXIT_REP => {
                let i = p.ops.len();
                Some((s, p.body_cycles - p.side[i].cycles, p.next_eip))
            }
            _ => None,
        };
        let loops = budget - st.budget;
        let loop_cost = p.body_cycles + TAKEN_EXTRA;
        let (insns, cycles, written, clear_af) = match st.exit {
            emit::EXIT_BUDGET => (loops * p.insns, loops * loop_cost, p.written, p.clear_af),
            emit::EXIT_TAKEN => (
                (loops + 1) * p.insns,
                loops * loop_cost + loop_cost,
                p.written,
                p.clear_af,
            ),
            emit::EXIT_REP => {
                // Just before the REP (which `rep` runs below, if it can).
                let i = p.ops.len();
                (i as u64, p.side[i].cycles, p.written, p.clear_af)
            }
            emit::EXIT_SIDE => {
                let s = p.side[st.index as usize];
                let i = u64::from(st.index);
                if loops == 0 && i == 0 {
                    if let Some(u) = missed {
                        self.dcache_fill_for(u);
                    }
                    return Ran::No;
                }
                let written = if loops == 0 { s.written } else { p.written };
                let clear_af = if loops == 0 || s.written & AF != 0 {
                    s.clear_af
                } else {
                    p.clear_af
                };
                (
                    loops * p.insns + i,
                    loops * loop_cost + s.cycles,
                    written,
                    clear_af,
                )
            }
            _ => (
                (loops + 1) * p.insns,
                loops * loop_cost + p.body_cycles,
                p.written,
                p.clear_af,
            ),
        };
        // Without the POPFQ, the host's flags are the block's only where
        // it wrote them.
        let host = if p.load_flags { STATUS } else { written };
        let mut status = (st.flags as u32 & host) | (self.cpu.eflags & STATUS & !host);
        if clear_af {
            status &= !AF;
        }
        self.cpu.eip = st.eip;
        if st.loaded != 0 || st.exit == emit::EXIT_FAR {
            // (A loaded register's check is the one the host code wrote,
            // made again anyway; CS's denies until it is.)
            link.stale |= st.loaded as u8;
            if st.exit == emit::EXIT_FAR {
                link.stale |= 1 << SegReg::Cs as u8;
                link.st.segs[SegReg::Cs as usize] = DENY;
            }
            let st = &link.st;
            self.jit_apply_segments(st, real);
            if shadow && st.loaded & (1 << SegReg::Ss as u8) != 0 {
                self.inhibit = true;
            }
        }
        if let Some(u) = missed {
            self.dcache_fill_for(u);
        }
        self.cpu.eflags = (self.cpu.eflags & !STATUS) | status;
        self.cycles += cycles;
        self.steps += insns;
        self.instructions += insns;
        self.skip_hostcall = None;
        self.jit.stats.instructions += insns;
        // (The registers are in `link` until the chain ends; the REP's
        // chunk runs on the machine's.)
        let ran_rep = rep.is_some_and(|(s, base, next)| {
            self.cpu.gpr = link.st.gpr;
            let ran = self.jit_rep(s, base, next);
            link.st.gpr = self.cpu.gpr;
            ran
        });
        if insns == 0 && !ran_rep {
            // A block of the REP alone that must leave it to the interpreter.
            return Ran::No;
        }
        self.jit.stats.entries += 1;
        // A branch, a far transfer or the end: the next instruction may
        // start a block. (A budget spent, a side exit, a REP or a load
        // that missed the descriptor cache go back to the run loop.)
        if matches!(exit, emit::EXIT_TAKEN | emit::EXIT_NEXT | emit::EXIT_FAR)
            && rep.is_none()
            && missed.is_none()
        {
            Ran::Chain
        } else {
            Ran::Stop
        }
    }

    /// Segment registers the block loaded, and CS after a far transfer,
    /// from the descriptor cache entries the host code used (unchanged
    /// since: the cache is only written outside host code).
    fn jit_apply_segments(&mut self, st: &native::State, real: bool) {
        if real {
            // As `Machine::load_sreg` in real mode: selector and base.
            let far =
                (st.exit == emit::EXIT_FAR).then_some((SegReg::Cs as usize, st.far_sel as u16));
            let loads = (0..6)
                .filter(|i| st.loaded & (1 << i) != 0)
                .map(|i| (i, st.sel[i]));
            for (i, sel) in loads.chain(far) {
                let seg = &mut self.cpu.seg[i];
                seg.selector = sel;
                seg.base = u32::from(sel) << 4;
            }
            return;
        }
        let cpl = self.cpu.cpl;
        for i in 0..6 {
            if st.loaded & (1 << i) != 0 {
                let seg = self.jit.desc.segment(st.sel[i], cpl, false);
                debug_assert!(seg.is_some(), "loaded segment not in the cache");
                if let Some(seg) = seg {
                    self.cpu.seg[i] = seg;
                }
            }
        }
        if st.exit == emit::EXIT_FAR {
            let seg = self.jit.desc.segment(st.far_sel as u16, cpl, true);
            debug_assert!(seg.is_some(), "far target not in the cache");
            if let Some(seg) = seg {
                self.cpu.seg[SegReg::Cs] = seg;
            }
        }
    }

    /// Select and translate the block at `lin` (EIP `eip`), remembering a
    /// failure too so the address is not tried again until its page
    /// changes.
    #[cold]
    fn jit_translate(&mut self, lin: u32, eip: u32, code32: bool, k: u64) {
        let user = self.cpu.cpl == 3;
        // The interpreter translates this address for the very next step,
        // with the same outcome (TLB fill, accessed bits, CR2 on a fault).
        let Ok(phys) = self.translate(lin, PageAccess { write: false, user }) else {
            return;
        };
        self.flush_dirty();
        let left = (0x1000 - (lin & 0xFFF) as usize).min(MAX_INSNS * 15);
        let hostcalls = &self.hostcalls;
        let at_hostcall = |i: usize| hostcalls.contains(&lin.wrapping_add(i as u32));
        // (On the stack: a copy of at most 960 bytes of one page costs
        // less than the allocation it replaced.)
        let mut bytes = [0u8; MAX_INSNS * 15];
        self.mem.read_bytes(phys, &mut bytes[..left]);
        let stack32 = self.cpu.seg[SegReg::Ss].big();
        let df = self.cpu.eflags & DF != 0;
        let src = select::Source {
            bytes: &bytes[..left],
            eip,
            code32,
            stack32,
            df,
        };
        let plan = select::select(src, at_hostcall);
        // One instruction that falls through gains nothing over the
        // interpreter and costs an entry: not worth a block.
        let plan = plan.filter(|p| p.insns > 1 || p.end != select::End::Fall);
        // Segment loads and far transfers for the mode of translation;
        // none in V86 mode (whose loads also set limit and attributes).
        let v86 = self.cpu.v86();
        let real = !self.cpu.protected();
        let plan = plan.filter(|p| !(p.prot && v86)).map(|mut p| {
            p.real = real;
            p
        });
        let block = plan.and_then(|plan| {
            let code = self.jit.cache.put(&emit::emit(&plan).ok()?).ok()?;
            Some(Box::new(Block { plan, code }))
        });
        if let Some(b) = &block {
            self.jit.stats.translated += 1;
            // The instruction before the start, decoded when there was no
            // block: the boundary after it is to be offered from now on.
            for len in 1..=15 {
                self.icache
                    .block_after(key(lin.wrapping_sub(len as u32), code32), len);
            }
            // The block's later instructions warmed up with its first; they
            // only start blocks of their own if the interpreter keeps
            // reaching them.
            // (From the last byte: in 16-bit code the next EIP may wrap to 0.)
            let bytes = (b.plan.last_byte + 1 - u64::from(eip)) as u32;
            for off in 1..bytes {
                self.jit.cache.cool(lin.wrapping_add(off));
            }
        }
        self.mem.mark_code(phys >> 12);
        let generation = self.icache.generation(phys >> 12);
        self.jit.cache.insert(Entry {
            key: k,
            eip,
            phys,
            generation,
            block,
        });
    }
}

/// What a chain of blocks carries from one to the next: the host state,
/// whose registers are the guest's from the chain's start to its end (the
/// caller copies them in and out once), and whose other input fields are
/// set for each block but the segment checks: those are made for the
/// registers a block's memory operands use (`Plan::segs`) when out of
/// date (at the chain's start, after a block loaded the register, for CS
/// after a far transfer). A check in `st.segs` is always the register's
/// own or [`DENY`], so a register a block uses without its bit in
/// `Plan::segs` could only make the host code leave early, never pass an
/// access the interpreter would not.
struct Link {
    st: native::State,
    /// A bit per register (`SegReg as u8`) whose check in `st.segs` is
    /// out of date.
    stale: u8,
}

/// A segment register check that allows no access.
const DENY: native::SegCheck = native::SegCheck {
    rlo: 1,
    rhi: 0,
    wlo: 1,
    whi: 0,
    base: 0,
    _pad: 0,
};

/// What [`Machine::jit_run`] found at a boundary (see "Where blocks
/// start" for what the run loop does with it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Offer {
    /// No block starts here.
    Miss,
    /// A block starts here but did not run (its first instruction left
    /// it, or it does not fit the state or budgets): the interpreter runs
    /// that instruction.
    Block,
    /// Blocks ran; the run loop re-checks its budgets.
    Ran,
}

/// What running a block allows next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ran {
    /// It left before its first instruction: the interpreter runs that.
    No,
    /// It ran; the run loop takes over.
    Stop,
    /// It ran and left where another block may follow at once.
    Chain,
}

/// For a block that left just before op `i` (`Plan::ops.len()`: its
/// final branch), the selector that op would load if it loads one.
fn desc_use(p: &select::Plan, i: usize, st: &native::State) -> Option<desc::DescUse> {
    use desc::DescUse;
    use select::{End, Far, Op, SelSrc};
    let sp = |stack: select::Mem, k: u32| {
        let o = st.gpr[4].wrapping_add(stack.disp).wrapping_add(k);
        DescUse::At(SegReg::Ss, if stack.addr32 { o } else { o & 0xFFFF })
    };
    let op = match (p.ops.get(i), &p.end) {
        (None, End::LoadSs(op)) => Some(op),
        (op, _) => op,
    };
    match (op, p.end) {
        (Some(Op::LoadSeg { src, .. }), _) => Some(match *src {
            SelSrc::Reg(r) => DescUse::Selector(st.gpr[usize::from(r)] as u16),
            SelSrc::Mem { mem, .. } => DescUse::At(mem.seg, mem_offset(mem, &st.gpr)),
        }),
        // (The selector word past the offset, without the 16-bit wrap.)
        (Some(Op::LoadFar { mem, .. }), _) => Some(DescUse::At(
            mem.seg,
            mem_offset(*mem, &st.gpr).wrapping_add(u32::from(mem.size)),
        )),
        (None, End::Far(Far::Call { sel, .. } | Far::Jmp { sel, .. })) => {
            Some(DescUse::Selector(sel))
        }
        (None, End::Far(Far::Ret { stack, .. })) => Some(sp(stack, u32::from(stack.size))),
        (None, End::Far(Far::CallM { mem, .. } | Far::JmpM { mem })) => Some(DescUse::At(
            mem.seg,
            mem_offset(mem, &st.gpr).wrapping_add(u32::from(mem.size)),
        )),
        _ => None,
    }
}

/// The offset of a memory operand with these registers.
fn mem_offset(m: select::Mem, gpr: &[u32; 8]) -> u32 {
    let r = |n: Option<u8>| n.map_or(0, |n| gpr[usize::from(n)]);
    let o = m
        .disp
        .wrapping_add(r(m.base))
        .wrapping_add(r(m.index).wrapping_mul(u32::from(m.scale)));
    if m.addr32 { o } else { o & 0xFFFF }
}

#[cfg(test)]
mod tests;
