//! Run-time dynamic linking: DosLoadModule, DosGetProcAddr /
//! DosQueryProcAddr, DosGetModHandle / DosQueryModuleHandle,
//! DosGetModName / DosQueryModuleName, DosFreeModule.
//!
//! Decisions: system DLLs have handles `0x8000 + i` (their index in
//! [`crate::api::SYSTEM_DLLS`]), and their procedure addresses are thunk
//! slots; a loaded DLL's initialization routine runs inside DosLoadModule
//! (a 16-bit one on a 16-bit stack, `startup.rs`). A DLL that does not
//! load is ERROR_MOD_NOT_FOUND; one whose routine (or a routine of a DLL
//! it brought in) fails, faults or cannot be entered is
//! ERROR_INIT_ROUTINE_FAILED; either way the buffer gets the module's
//! name and what was loaded is forgotten.
//!
//! DosFreeModule, as OS/2 documents it:
//! - Each DosLoadModule of a DLL (a new one or one already loaded) is a
//!   reference; DosFreeModule takes one back. A handle that is no
//!   DosLoadModule reference (the EXE, a DLL loaded only because a
//!   module imports it, one already freed, no module) is
//!   ERROR_INVALID_HANDLE. Freeing a system DLL's handle succeeds and
//!   does nothing (they are never unloaded).
//! - A DLL is freed when nothing needs it: no DosLoadModule reference
//!   left and no module that is still loaded imports it; the DLLs it
//!   alone imported are freed with it. Their termination routines
//!   (`exitlist.rs`) run inside the call, on the caller's stack made
//!   flat, the last initialized first, with the process held on the
//!   calling thread as DosEnterCritSec would.
//! - If an exit-list routine lies in a DLL that would be freed, nothing
//!   is freed and the call is ERROR_INVALID_ACCESS (the reference is
//!   kept).
//! - A freed DLL's name and handle are no longer found, so a later
//!   DosLoadModule loads it anew (a new handle, its initialization runs
//!   again). Its memory stays mapped and reserved: addresses taken from
//!   it before stay readable instead of faulting (not modelled).
//! - A termination routine that ends the run's limits (instructions,
//!   wall clock, Ctrl-C) ends the run; its return value is not looked
//!   at.

use emu::{Gpr, SegReg};

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call, SYSTEM_DLLS, Stop};
use crate::error::Outcome;
use crate::layout::{FLAT_DS, THUNK_BASE};
use crate::process::Process;
use crate::rc::*;
use crate::thunks::Slot;

const SYSTEM_HANDLE: u32 = 0x8000;

/// The entries.
pub static DEFS: &[ApiDef] = &[
    api!("DOSCALLS" 44 "DosLoadModule" Far16 [P, W, S, P] |p, c| {
        let h = p.load_module_api(c)?;
        p.put_u16(c, 3, h as u16)
    }),
    api!("DOSCALLS" 45 "DosGetProcAddr" Far16 [W, P, P] |p, c| {
        let raw = c.l(1);
        let (ordinal, name) = if raw >> 16 == 0 {
            (raw & 0xFFFF, None)
        } else {
            (0, Some(p.arg_sz(c, 1)?))
        };
        let a = p.proc_addr(u32::from(c.w(0)), ordinal, name, true)?;
        p.put_u32(c, 2, a)
    }),
    api!("DOSCALLS" 46 "DosFreeModule" Far16 [W] raw |p, c| p.free_module(u32::from(c.w(0)))),
    api!("DOSCALLS" 47 "DosGetModHandle" Far16 [S, P] |p, c| {
        let h = p.module_handle(c)?;
        p.put_u16(c, 1, h as u16)
    }),
    api!("DOSCALLS" 48 "DosGetModName" Far16 [W, W, P] |p, c| {
        let n = p.module_name(u32::from(c.w(0)))?;
        if n.len() > usize::from(c.w(1)) {
            return Err(ERROR_BUFFER_OVERFLOW);
        }
        p.put_bytes(c, 2, &n)
    }),
    api!("DOSCALLS" 318 "DosLoadModule" Sys32 [P, L, S, P] |p, c| {
        let h = p.load_module_api(c)?;
        p.put_u32(c, 3, h)
    }),
    api!("DOSCALLS" 319 "DosQueryModuleHandle" Sys32 [S, P] |p, c| {
        let h = p.module_handle(c)?;
        p.put_u32(c, 1, h)
    }),
    api!("DOSCALLS" 320 "DosQueryModuleName" Sys32 [L, L, P] |p, c| {
        let n = p.module_name(c.l(0))?;
        if n.len() > c.l(1) as usize {
            return Err(ERROR_BUFFER_OVERFLOW);
        }
        p.put_bytes(c, 2, &n)
    }),
    api!("DOSCALLS" 321 "DosQueryProcAddr" Sys32 [L, L, S, P] |p, c| {
        let name = if c.l(1) == 0 { Some(p.arg_sz(c, 2)?) } else { None };
        let a = p.proc_addr(c.l(0), c.l(1), name, false)?;
        p.put_u32(c, 3, a)
    }),
    api!("DOSCALLS" 322 "DosFreeModule" Sys32 [L] raw |p, c| p.free_module(c.l(0))),
];

/// The module part of a name: `C:\DIR\FOO.DLL` and `foo` are both `FOO`.
fn module_stem(name: &[u8]) -> String {
    let s: String = name.iter().map(|&b| char::from(b)).collect();
    tdf::module::module_name(&s).to_ascii_uppercase()
}

impl Process {
    fn module_handle_of(&self, stem: &str) -> Option<u32> {
        if let Some(i) = SYSTEM_DLLS.iter().position(|d| *d == stem) {
            return Some(SYSTEM_HANDLE + i as u32);
        }
        let mi = self.find_module(stem)?;
        Some(u32::from(self.pcb.modules[mi].handle))
    }

    /// DosLoadModule(object buffer, its size, name, handle out).
    fn load_module_api(&mut self, c: &Call) -> ApiResult<u32> {
        let name = self.arg_sz(c, 2)?;
        let stem = module_stem(&name);
        if let Some(h) = self.module_handle_of(&stem) {
            self.add_load_ref(h);
            return Ok(h);
        }
        let file: String = name.iter().map(|&b| char::from(b)).collect();
        let target = if file.contains(['\\', '/', ':']) {
            file
        } else {
            stem.clone()
        };
        let before = self.pcb.modules.len();
        // A module that does not load is ERROR_MOD_NOT_FOUND; an
        // initialization routine that fails (or faults, or cannot be
        // entered) is ERROR_INIT_ROUTINE_FAILED, naming that module.
        let loaded = match self.load_dll(&target, 0) {
            Err(_) => Err((ERROR_MOD_NOT_FOUND, stem.clone())),
            Ok(_) => self.run_dll_inits(None).map_err(|o| match o {
                Outcome::InitFailed { module, .. } => (ERROR_INIT_ROUTINE_FAILED, module),
                _ => (ERROR_INIT_ROUTINE_FAILED, stem.clone()),
            }),
        };
        if loaded.is_err() {
            // Forget what was half loaded (its memory stays reserved).
            self.pcb.modules.truncate(before);
            self.pcb.pending_init.clear();
        }
        match loaded {
            Ok(()) => {
                let h = self.module_handle_of(&stem).ok_or(ERROR_MOD_NOT_FOUND)?;
                self.add_load_ref(h);
                Ok(h)
            }
            Err((rc, module)) => {
                let cb = if c.far16 { u32::from(c.w(1)) } else { c.l(1) };
                let mut failed = crate::process::latin1(&module);
                failed.push(0);
                if c.l(0) != 0 && cb as usize >= failed.len() {
                    let _ = self.put_bytes(c, 0, &failed);
                }
                Err(rc)
            }
        }
    }

    /// The loaded (not freed) module with handle `h`.
    fn module_index(&self, h: u32) -> Option<usize> {
        self.pcb
            .modules
            .iter()
            .position(|m| !m.freed && u32::from(m.handle) == h)
    }

    fn add_load_ref(&mut self, h: u32) {
        if let Some(mi) = self.module_index(h) {
            let n = self.pcb.load_refs.entry(mi).or_insert(0);
            *n = n.saturating_add(1);
        }
    }

    /// The modules nothing needs once `load_refs` is as it is now: not
    /// reachable through import tables from the EXE or from a module
    /// with a DosLoadModule reference.
    fn unneeded_modules(&self) -> Vec<usize> {
        let mods = &self.pcb.modules;
        let mut live = vec![false; mods.len()];
        let mut todo: Vec<usize> = std::iter::once(self.pcb.exe)
            .chain(
                self.pcb
                    .load_refs
                    .iter()
                    .filter(|(_, n)| **n > 0)
                    .map(|(i, _)| *i),
            )
            .collect();
        while let Some(i) = todo.pop() {
            if i >= mods.len() || live[i] || mods[i].freed {
                continue;
            }
            live[i] = true;
            for imp in &mods[i].module.imports {
                if let Some(j) = mods
                    .iter()
                    .position(|m| !m.freed && m.name.eq_ignore_ascii_case(imp))
                {
                    todo.push(j);
                }
            }
        }
        (0..mods.len())
            .filter(|&i| !live[i] && !mods[i].freed)
            .collect()
    }

    /// Does an exit-list routine lie in module `mi`?
    fn has_exit_routine(&self, mi: usize) -> bool {
        let Some(lm) = self.pcb.modules.get(mi) else {
            return false;
        };
        self.pcb.exit_list.iter().any(|r| {
            let lin = if r.far16 {
                self.selector_to_linear((r.addr >> 16) as u16, r.addr & 0xFFFF, 1)
            } else {
                Some(r.addr)
            };
            lin.is_some_and(|a| {
                lm.objects
                    .iter()
                    .any(|o| a >= o.base && a - o.base < o.size)
            })
        })
    }

    /// DosFreeModule(h); see the module docs.
    fn free_module(&mut self, h: u32) -> Result<u32, Stop> {
        if h >= SYSTEM_HANDLE {
            return Ok(if SYSTEM_DLLS.get((h - SYSTEM_HANDLE) as usize).is_some() {
                NO_ERROR
            } else {
                ERROR_INVALID_HANDLE
            });
        }
        let Some(mi) = self.module_index(h) else {
            return Ok(ERROR_INVALID_HANDLE);
        };
        let refs = self.pcb.load_refs.get(&mi).copied().unwrap_or(0);
        if refs == 0 {
            return Ok(ERROR_INVALID_HANDLE);
        }
        self.pcb.load_refs.insert(mi, refs - 1);
        let gone = self.unneeded_modules();
        if gone.iter().any(|&g| self.has_exit_routine(g)) {
            self.pcb.load_refs.insert(mi, refs);
            return Ok(ERROR_INVALID_ACCESS);
        }
        for &g in &gone {
            self.pcb.modules[g].freed = true;
            self.pcb.load_refs.remove(&g);
        }
        // Their termination routines, the last initialized first.
        let mut order: Vec<usize> = Vec::new();
        self.pcb.terms.retain(|t| {
            let freed = gone.contains(t);
            if freed {
                order.push(*t);
            }
            !freed
        });
        for &t in order.iter().rev() {
            self.run_term_now(t)?;
        }
        // Traced copies are traced no more (`trace/loads.rs`).
        for &g in &gone {
            self.trace_module_freed(g);
        }
        Ok(NO_ERROR)
    }

    /// Run module `mi`'s termination routine inside the running call, on
    /// the caller's stack, and come back to the call.
    fn run_term_now(&mut self, mi: usize) -> Result<(), Stop> {
        let saved = self.machine.cpu().clone();
        let ss = *saved.sreg(SegReg::Ss);
        let sp = if ss.big() {
            saved.gpr[Gpr::Esp]
        } else {
            saved.gpr[Gpr::Esp] & 0xFFFF
        };
        // Below the caller's frame, 16-byte aligned, on a flat stack.
        let esp = ss.base.wrapping_add(sp).wrapping_sub(16) & !15;
        let ret = THUNK_BASE + 4 * self.kernel.thunks.special(Slot::InitReturn);
        self.machine.gpr_mut()[Gpr::Esp] = esp;
        let entered = self
            .kernel
            .desc
            .load(&mut self.machine, SegReg::Ss, FLAT_DS)
            && self.enter_term_routine(mi, ret);
        let outcome = if entered {
            *self.machine.eflags_mut() = 0x202;
            self.pcb.critsec += 1;
            let o = self.run_loop(None);
            self.pcb.critsec = self.pcb.critsec.saturating_sub(1);
            Some(o)
        } else {
            None
        };
        *self.machine.cpu_mut_flush_tlb() = saved;
        match outcome {
            Some(
                o @ (Outcome::InstructionLimit(_)
                | Outcome::TimeLimit(_)
                | Outcome::Interrupted
                | Outcome::Stopped),
            ) => Err(Stop::Outcome(o)),
            _ => Ok(()),
        }
    }

    fn module_handle(&mut self, c: &Call) -> ApiResult<u32> {
        let name = self.arg_sz(c, 0)?;
        self.module_handle_of(&module_stem(&name))
            .ok_or(ERROR_MOD_NOT_FOUND)
    }

    /// The full path of a module, NUL-terminated.
    fn module_name(&self, h: u32) -> ApiResult<Vec<u8>> {
        let path = if h >= SYSTEM_HANDLE {
            let d = SYSTEM_DLLS
                .get((h - SYSTEM_HANDLE) as usize)
                .ok_or(ERROR_INVALID_HANDLE)?;
            format!("C:\\OS2\\DLL\\{d}.DLL")
        } else {
            let mi = self.module_index(h).ok_or(ERROR_INVALID_HANDLE)?;
            self.pcb.modules[mi].path.clone()
        };
        let mut v = crate::process::latin1(&path);
        v.push(0);
        Ok(v)
    }

    /// Address of a procedure: 16:16 for 16-bit callers, flat otherwise.
    fn proc_addr(
        &mut self,
        h: u32,
        ordinal: u32,
        name: Option<Vec<u8>>,
        far16: bool,
    ) -> ApiResult<u32> {
        let name: Option<String> = name.map(|n| n.iter().map(|&b| char::from(b)).collect());
        let t = if h >= SYSTEM_HANDLE {
            let d = SYSTEM_DLLS
                .get((h - SYSTEM_HANDLE) as usize)
                .ok_or(ERROR_INVALID_HANDLE)?;
            let ord = (ordinal != 0).then_some(ordinal);
            self.import_target(d, ord, name.as_deref(), 0)
        } else {
            let mi = self.module_index(h).ok_or(ERROR_INVALID_HANDLE)?;
            let ord = match &name {
                Some(n) => self.pcb.modules[mi]
                    .module
                    .export(n)
                    .map(|e| u32::from(e.ordinal))
                    .ok_or(ERROR_PROC_NOT_FOUND)?,
                None => ordinal,
            };
            self.entry_target(mi, ord, 0)
        }
        .map_err(|_| ERROR_PROC_NOT_FOUND)?;
        Ok(if far16 {
            if t.bits32 {
                let sel = crate::layout::tile_selector(t.flat).ok_or(ERROR_PROC_NOT_FOUND)?;
                (u32::from(sel) << 16) | (t.flat & 0xFFFF)
            } else {
                (u32::from(t.sel) << 16) | (t.off & 0xFFFF)
            }
        } else {
            t.flat
        })
    }
}
