//! Run-time dynamic linking: DosLoadModule, DosGetProcAddr /
//! DosQueryProcAddr, DosGetModHandle / DosQueryModuleHandle,
//! DosGetModName / DosQueryModuleName, DosFreeModule.
//!
//! Decisions: system DLLs have handles `0x8000 + i` (their index in
//! [`crate::api::SYSTEM_DLLS`]), and their procedure addresses are thunk
//! slots; a loaded DLL's initialization routine runs inside DosLoadModule;
//! DosFreeModule succeeds and unloads nothing.

use crate::api::util::ApiResult;
use crate::api::{ApiDef, Call, SYSTEM_DLLS};
use crate::process::Process;
use crate::rc::*;

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
    api!("DOSCALLS" 46 "DosFreeModule" Far16 [W] |p, c| p.module_name(u32::from(c.w(0))).map(|_| ())),
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
    api!("DOSCALLS" 322 "DosFreeModule" Sys32 [L] |p, c| p.module_name(c.l(0)).map(|_| ())),
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
            return Ok(h);
        }
        let file: String = name.iter().map(|&b| char::from(b)).collect();
        let target = if file.contains(['\\', '/', ':']) {
            file
        } else {
            stem.clone()
        };
        let before = self.pcb.modules.len();
        let loaded = self
            .load_dll(&target, 0)
            .map_err(drop)
            .and_then(|_| self.run_dll_inits(None).map_err(drop));
        if loaded.is_err() {
            // Forget what was half loaded (its memory stays reserved).
            self.pcb.modules.truncate(before);
            self.pcb.pending_init.clear();
        }
        match loaded {
            Ok(()) => self.module_handle_of(&stem).ok_or(ERROR_MOD_NOT_FOUND),
            Err(_) => {
                let cb = if c.far16 { u32::from(c.w(1)) } else { c.l(1) };
                let mut failed = crate::process::latin1(&stem);
                failed.push(0);
                if c.l(0) != 0 && cb as usize >= failed.len() {
                    let _ = self.put_bytes(c, 0, &failed);
                }
                Err(ERROR_MOD_NOT_FOUND)
            }
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
            let m = self
                .pcb
                .modules
                .iter()
                .find(|m| u32::from(m.handle) == h)
                .ok_or(ERROR_INVALID_HANDLE)?;
            m.path.clone()
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
            let mi = self
                .pcb
                .modules
                .iter()
                .position(|m| u32::from(m.handle) == h)
                .ok_or(ERROR_INVALID_HANDLE)?;
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
