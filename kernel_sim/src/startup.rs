//! The process start state: the thread and process information blocks,
//! the registers of the program's first instruction, and the DLL
//! initialization routines run before it.
//!
//! - 16-bit start state (OS/2 1.x): CS:IP and SS:SP from the header (SP 0
//!   means the top of the automatic data plus stack, or the top of the
//!   stack segment), DS the automatic data segment, ES 0, AX the
//!   environment selector, BX the command-line offset in it, CX the size
//!   of the automatic data segment, other registers 0.
//! - 32-bit start state (OS/2 2.x): ESP from the header with the return
//!   address, module handle, 0, environment and command line pushed; the
//!   return address is a kernel thunk that ends the process with EAX;
//!   CS/DS/ES/SS flat, FS the TIB.
//! - DLL initialization: [`Process::new`] only queues the routines; they
//!   run when the run starts, before the program's first instruction and
//!   after whatever the caller set up in between (TRACE ON, DTRACE APPLY,
//!   CPTRAP, the console), so a tracepoint on `DLLINIT` or
//!   `_DLL_InitTerm` fires, as it does when OS/2's TRACE ON precedes the
//!   program. A DLL that DosLoadModule loads runs its routine at once.
//!   An LX DLL's routine gets the library entry registers of the LX
//!   format (its §3.3): EAX to EBP zero but ESP, CS/DS/ES flat, FS the
//!   TIB, GS 0, and `[ESP+4]` the module handle, `[ESP+8]` 0. One whose
//!   entry object is 32-bit and that succeeds is queued for its
//!   termination, per-process or global (`exitlist.rs`); a 16-bit entry
//!   has none, as the LX format says.
//! - An NE DLL's routine (16-bit) is called far as OS/2 1.x does: AX and DI the module handle, CX the
//!   heap size, DS the automatic data, ES 0, returning AX (0 = failure).
//!   It always runs on a 16-bit stack: the caller's when that is 16-bit,
//!   else the tiled 16:16 alias of the 32-bit caller's flat stack (a
//!   32-bit program's start, or DosLoadModule from 32-bit code), moved to
//!   the top of the tile below when less than 1 KB is left in this one
//!   and the stack reaches there. A 32-bit routine called from a 16-bit
//!   stack gets that stack's flat address. The caller's registers come
//!   back as they were, also when a routine cannot be entered.

use emu::{Gpr, SegReg};
use loader::Format;

use crate::desc::DATA3;
use crate::error::{KernelError, Outcome};
use crate::layout::*;
use crate::memory::RegionKind;
use crate::process::Process;
use crate::run::TrapHook;
use crate::thunks::Slot;

/// The least room a 16-bit initialization routine gets in the tile of a
/// 32-bit caller's stack (see [`Process::init_stack`]).
const MIN_STACK16: u32 = 0x400;

fn load_err(module: &str, reason: impl Into<String>) -> KernelError {
    KernelError::Load {
        module: module.to_string(),
        reason: reason.into(),
    }
}

impl Process {
    /// TIB, TIB2 and PIB of the main thread and the process, and the FS
    /// selector for 32-bit programs.
    pub(crate) fn init_info_blocks(&mut self) -> Result<(), KernelError> {
        let base = self.alloc_tiled(PAGE, RegionKind::System)?;
        let (stack_lo, stack_hi) = self.stack_bounds();
        let tib2 = base + 0x40;
        let pib = base + 0x80;
        let w = |v: &mut Vec<u8>, x: u32| v.extend(x.to_le_bytes());
        let mut tib = Vec::new();
        for x in [u32::MAX, stack_lo, stack_hi, tib2, 20, 1] {
            w(&mut tib, x);
        }
        let mut t2 = Vec::new();
        for x in [1u32, 0x200] {
            w(&mut t2, x);
        }
        t2.extend([20, 0, 0, 0]);
        let exe = &self.pcb.modules[self.pcb.exe];
        let ptype = 2u32;
        let mut pb = Vec::new();
        for x in [
            u32::from(self.pcb.pid),
            u32::from(self.pcb.parent),
            u32::from(exe.handle),
            self.pcb.env_base + u32::from(self.pcb.cmd_offset),
            self.pcb.env_base,
            0,
            ptype,
        ] {
            w(&mut pb, x);
        }
        let ok = self.machine.write_linear(base, &tib).is_ok()
            && self.machine.write_linear(tib2, &t2).is_ok()
            && self.machine.write_linear(pib, &pb).is_ok();
        if !ok {
            return Err(KernelError::NoMemory("information blocks"));
        }
        self.pcb.tib = base;
        self.pcb.pib = pib;
        self.pcb.tib_page = base;
        self.pcb.threads = vec![crate::threads::Thread::first(base)];
        self.kernel.desc.set(
            &mut self.machine,
            TIB_SEL,
            crate::desc::make(base, PAGE - 1, DATA3, false),
        );
        Ok(())
    }

    /// Lowest and top address of the EXE's stack: the TIB's
    /// `tib_pstack` and `tib_pstacklimit`.
    ///
    /// An LX program's stack is its whole ESP object (the header's stack
    /// size is 0 in programs linked for OS/2 2.x; EMX's start-up compares
    /// these bounds with the size it needs); an NE program's is the
    /// header's stack size below the initial SS:SP.
    pub(crate) fn stack_bounds(&self) -> (u32, u32) {
        let exe = &self.pcb.modules[self.pcb.exe];
        let m = &exe.module;
        if m.format == Format::Lx {
            let obj = m.stack.and_then(|s| exe.object(s.object));
            let top = match (self.initial_sp(), obj) {
                (Some((_, sp)), Some(o)) if !o.bits32 => o.base.wrapping_add(sp),
                (Some((_, sp)), _) => sp,
                (None, _) => 0,
            };
            return match obj {
                Some(o) if top > o.base => (o.base, top),
                _ => (top.saturating_sub(m.stack_size.max(1)), top),
            };
        }
        let top = self.initial_sp().map_or(0, |(sel, sp)| {
            self.selector_to_linear(sel, 0, 1)
                .unwrap_or(0)
                .wrapping_add(sp)
        });
        (top.saturating_sub(m.stack_size.max(1)), top)
    }

    /// The EXE's initial SS and SP/ESP.
    pub(crate) fn initial_sp(&self) -> Option<(u16, u32)> {
        let exe = &self.pcb.modules[self.pcb.exe];
        let m = &exe.module;
        let s = m.stack?;
        let o = exe.object(s.object)?;
        if m.format == Format::Lx && o.bits32 {
            return Some((FLAT_DS, o.base.wrapping_add(s.offset)));
        }
        if m.format == Format::Lx {
            // A 16-bit stack object (LINK386's output for 16-bit code):
            // its tiled selector, ESP 0 meaning the top.
            let sp = if s.offset == 0 { o.size } else { s.offset };
            return Some((o.selector, sp.min(TILE)));
        }
        let mut sp = s.offset;
        if sp == 0 {
            sp = if m.auto_data == Some(s.object) {
                let ds = m.object(s.object).map_or(0, |x| x.virtual_size);
                (ds + m.stack_size).min(TILE)
            } else {
                o.size
            };
        }
        Some((o.selector, sp & 0xFFFF))
    }

    /// Registers of the program's first instruction.
    pub(crate) fn set_start_state(&mut self) -> Result<(), KernelError> {
        let exe = self.pcb.modules[self.pcb.exe].clone();
        let m = &exe.module;
        let start = m
            .start
            .ok_or_else(|| load_err(&exe.name, "no start address"))?;
        let cs = exe
            .object(start.object)
            .ok_or_else(|| load_err(&exe.name, "start object missing"))?
            .clone();
        let (ss, sp) = self
            .initial_sp()
            .ok_or_else(|| load_err(&exe.name, "no stack"))?;
        {
            let gpr = self.machine.gpr_mut();
            *gpr = [0; 8];
            gpr[Gpr::Esp] = sp;
        }
        let d = &self.kernel.desc;
        let mut ok = d.load(&mut self.machine, SegReg::Ss, ss)
            && d.load(&mut self.machine, SegReg::Cs, cs.selector);
        // An LX program whose entry object is 16-bit starts as an OS/2 1.x
        // program does (LINK386 links 16-bit code into LX modules).
        if m.format == Format::Lx && cs.bits32 {
            ok &= d.load(&mut self.machine, SegReg::Ds, FLAT_DS)
                && d.load(&mut self.machine, SegReg::Es, FLAT_DS)
                && d.load(&mut self.machine, SegReg::Fs, TIB_SEL)
                && d.load(&mut self.machine, SegReg::Gs, 0);
            self.machine.set_eip(cs.base.wrapping_add(start.offset));
            let ret = THUNK_BASE + 4 * self.kernel.thunks.special(Slot::EntryReturn);
            self.machine.add_host_call(ret);
            let cmd = self.pcb.env_base + u32::from(self.pcb.cmd_offset);
            for v in [cmd, self.pcb.env_base, 0, u32::from(exe.handle), ret] {
                ok &= self.push32(v);
            }
        } else {
            let ds = m
                .auto_data
                .and_then(|a| exe.object(a))
                .map_or(0, |o| o.selector);
            let cx = m
                .auto_data
                .and_then(|a| exe.object(a))
                .map_or(0, |o| o.size);
            ok &= d.load(&mut self.machine, SegReg::Ds, ds)
                && d.load(&mut self.machine, SegReg::Es, 0)
                && d.load(&mut self.machine, SegReg::Fs, 0)
                && d.load(&mut self.machine, SegReg::Gs, 0);
            self.machine.set_eip(start.offset & 0xFFFF);
            let gpr = self.machine.gpr_mut();
            gpr[Gpr::Eax] = u32::from(self.pcb.env_sel);
            gpr[Gpr::Ebx] = u32::from(self.pcb.cmd_offset);
            gpr[Gpr::Ecx] = cx & 0xFFFF;
        }
        if !ok {
            return Err(load_err(&exe.name, "start selectors are not valid"));
        }
        Ok(())
    }

    /// Run each pending DLL initialization routine on the program's stack,
    /// offering its debug traps to `hook` as the run does.
    ///
    /// # Errors
    /// How the run ends instead: [`Outcome::InitFailed`] for a routine
    /// that reports failure or cannot run, or the limit (instructions,
    /// wall clock, Ctrl-C, the hook) that stopped it.
    pub(crate) fn run_dll_inits(
        &mut self,
        mut hook: Option<&mut dyn TrapHook>,
    ) -> Result<(), Outcome> {
        let pending = std::mem::take(&mut self.pcb.pending_init);
        for mi in pending {
            let saved = self.machine.cpu().clone();
            let lm = self.pcb.modules[mi].clone();
            let Some(start) = lm.module.start else {
                continue;
            };
            let Some(o) = lm.object(start.object) else {
                continue;
            };
            let ret_slot = self.kernel.thunks.special(Slot::InitReturn);
            self.machine.add_host_call(THUNK_BASE + 4 * ret_slot);
            // The convention follows the format: an LX entry is entered
            // as 32-bit even in a 16-bit object (`tests/dll_term.rs`).
            let entry32 = lm.module.format == Format::Lx;
            // Library termination is for 32-bit entries only (LX §3.3);
            // global and per-process termination both end this process's
            // instance of the DLL (`exitlist.rs`).
            let terminates = o.bits32 && entry32;
            let mut ok = self.init_stack(entry32);
            let d = &self.kernel.desc;
            if entry32 {
                // The library entry registers of the LX format (its §3.3).
                let esp = self.machine.cpu().gpr[Gpr::Esp];
                *self.machine.gpr_mut() = [0; 8];
                self.machine.gpr_mut()[Gpr::Esp] = esp;
                ok = ok
                    && d.load(&mut self.machine, SegReg::Cs, FLAT_CS)
                    && d.load(&mut self.machine, SegReg::Ds, FLAT_DS)
                    && d.load(&mut self.machine, SegReg::Es, FLAT_DS)
                    && d.load(&mut self.machine, SegReg::Fs, TIB_SEL)
                    && d.load(&mut self.machine, SegReg::Gs, 0);
                ok = ok
                    && self.push32(0)
                    && self.push32(u32::from(lm.handle))
                    && self.push32(THUNK_BASE + 4 * ret_slot);
                self.machine.set_eip(o.base.wrapping_add(start.offset));
            } else {
                let ds = lm
                    .module
                    .auto_data
                    .and_then(|a| lm.object(a))
                    .map_or(0, |o| o.selector);
                ok = ok
                    && d.load(&mut self.machine, SegReg::Cs, o.selector)
                    && d.load(&mut self.machine, SegReg::Ds, ds)
                    && d.load(&mut self.machine, SegReg::Es, 0);
                ok = ok && self.push16(THUNK_CS) && self.push16((4 * ret_slot) as u16);
                self.machine.set_eip(start.offset & 0xFFFF);
                let gpr = self.machine.gpr_mut();
                gpr[Gpr::Eax] = u32::from(lm.handle);
                gpr[Gpr::Edi] = u32::from(lm.handle);
                gpr[Gpr::Ecx] = lm.module.heap_size & 0xFFFF;
            }
            if !ok {
                *self.machine.cpu_mut_flush_tlb() = saved;
                return Err(Outcome::InitFailed {
                    module: lm.name.clone(),
                    outcome: Box::new(Outcome::HostError(
                        "cannot enter the initialization routine".to_string(),
                    )),
                });
            }
            let outcome = self.run_loop(hook.as_mut().map(|h| &mut **h as &mut dyn TrapHook));
            *self.machine.cpu_mut_flush_tlb() = saved;
            match outcome {
                Outcome::Returned(v) if entry32 && v != 0 => {
                    if terminates {
                        self.pcb.terms.push(mi);
                    }
                }
                Outcome::Returned(v) if !entry32 && v & 0xFFFF != 0 => {}
                // A limit of the whole run ends it as such.
                Outcome::InstructionLimit(_)
                | Outcome::TimeLimit(_)
                | Outcome::Interrupted
                | Outcome::Stopped => return Err(outcome),
                other => {
                    return Err(Outcome::InitFailed {
                        module: lm.name.clone(),
                        outcome: Box::new(other),
                    });
                }
            }
        }
        Ok(())
    }

    /// Put SS:ESP where an initialization routine of a 32-bit
    /// (`bits32`) or 16-bit entry runs: below the stack in use, flat for
    /// a 32-bit entry; for a 16-bit one that stack itself when it is
    /// 16-bit, else the tiled 16:16 alias of the flat one (the thunk
    /// OS/2 makes for a 32-bit caller), moved to the top of the tile
    /// below when fewer than [`MIN_STACK16`] bytes are left in this one.
    /// False when the stack has no such form.
    fn init_stack(&mut self, bits32: bool) -> bool {
        let ss = *self.machine.cpu().sreg(SegReg::Ss);
        let esp = self.machine.cpu().gpr[Gpr::Esp];
        if ss.big() == bits32 {
            return true;
        }
        let sp = if ss.big() { esp } else { esp & 0xFFFF };
        let top = ss.base.wrapping_add(sp);
        let d = &self.kernel.desc;
        if bits32 {
            self.machine.gpr_mut()[Gpr::Esp] = top;
            return d.load(&mut self.machine, SegReg::Ss, FLAT_DS);
        }
        // The tile below only when it is the same stack's.
        let mut candidates = Vec::with_capacity(2);
        let lower = top & !0xFFFF;
        let base = self.pcb.mem.region_base_of(top.wrapping_sub(1));
        if top & 0xFFFF < MIN_STACK16 && base.is_some_and(|b| b < lower) {
            candidates.push(lower);
        }
        candidates.push(top);
        for t in candidates {
            let Some(sel) = tile_selector(t.wrapping_sub(1)) else {
                continue;
            };
            if d.load(&mut self.machine, SegReg::Ss, sel) {
                // SP 0 is the top of a whole tile.
                self.machine.gpr_mut()[Gpr::Esp] = t.wrapping_sub(tile_base(sel)) & 0xFFFF;
                return true;
            }
        }
        false
    }
}
