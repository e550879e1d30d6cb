//! Module loading: the EXE and its DLLs found in the sandbox, placed in
//! the address space, relocated, bound to system DLL thunks, initialized,
//! and the program's start state.
//!
//! Decisions:
//! - LX objects of the EXE go at their preferred base when it is free
//!   (EXEs may carry no internal fixups); otherwise, and for every DLL
//!   object, at a free 64 KB aligned place (DLLs downward from
//!   0x1C00_0000). Each object also gets tiled LDT selectors, its 16:16
//!   alias.
//! - 32-bit objects use the flat selectors (code 0x5B, data 0x53); 16-bit
//!   objects and NE segments use their tiled selector. An NE segment owns
//!   a whole 64 KB tile (all of it mapped, so DosReallocSeg can grow it),
//!   and its limit is its size less one. The automatic data segment of an
//!   EXE grows by the heap, and by the stack when SS is that segment, up
//!   to 64 KB.
//! - Fixups: 16:16 and selector fixups to 32-bit targets take the tiled
//!   alias; 32-bit offsets are flat; imports of system DLLs go to thunk
//!   slots (16:16 `THUNK_CS:4*slot` or flat); absolute value imports
//!   (DOSHUGESHIFT, DOSHUGEINCR) patch the value itself. NE operating
//!   system fixups (floating-point emulator calls) are left as they are:
//!   the machine has a coprocessor.
//! - DLLs are searched as `NAME.DLL` along BEGINLIBPATH
//!   (DosSetExtLIBPATH), in the program's directory, then in
//!   [`crate::ProcessConfig::libpath`], along the `LIBPATH` environment
//!   variable, then along ENDLIBPATH. Initialization routines run after
//!   everything is loaded, dependencies first, on the program's stack: LX
//!   as `_System (hmod, 0)` returning EAX (0 = failure); NE called far
//!   with AX and DI = the module handle, DS its automatic data, CX its
//!   heap size, returning AX (0 = failure).

use loader::{EntryPoint, Format, ForwardTarget, Module, ModuleType, SourceKind, Target};

use crate::api::{self, Conv};
use crate::desc::{CODE3, DATA3};
use crate::error::KernelError;
use crate::layout::*;
use crate::memory::RegionKind;
use crate::process::Process;

/// One object (LX) or segment (NE) in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedObject {
    /// Object or segment number (1-based).
    pub number: u16,
    /// Flat linear base.
    pub base: u32,
    /// Size in bytes (the segment limit plus one for NE).
    pub size: u32,
    /// The selector code uses for it: flat for 32-bit objects, tiled for
    /// 16-bit ones.
    pub selector: u16,
    /// The tiled 16:16 alias selector of its first 64 KB.
    pub alias: u16,
    /// 32-bit object.
    pub bits32: bool,
    /// Code (executable).
    pub code: bool,
}

/// A module in memory.
#[derive(Clone, Debug)]
pub struct LoadedModule {
    /// Module name (upper case).
    pub name: String,
    /// Full OS/2 path it was loaded from.
    pub path: String,
    /// Module handle.
    pub handle: u16,
    /// The parsed module (unrelocated images, fixups, entries).
    pub module: Module,
    /// Objects or segments, in order.
    pub objects: Vec<LoadedObject>,
    /// DosFreeModule freed it: its name and handle are no longer found
    /// (its memory stays reserved, see `api/modules.rs`).
    pub freed: bool,
}

impl LoadedModule {
    /// The object with this 1-based number.
    pub fn object(&self, number: u16) -> Option<&LoadedObject> {
        self.objects.get(usize::from(number).checked_sub(1)?)
    }

    /// Flat address of `object:offset`.
    pub fn flat(&self, object: u16, offset: u32) -> Option<u32> {
        Some(self.object(object)?.base.wrapping_add(offset))
    }
}

/// A resolved fixup target.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tgt {
    pub flat: u32,
    pub sel: u16,
    pub off: u32,
    pub bits32: bool,
    pub value: Option<u32>,
}

const MAX_DEPTH: u32 = 32;

fn load_err(module: &str, reason: impl Into<String>) -> KernelError {
    KernelError::Load {
        module: module.to_string(),
        reason: reason.into(),
    }
}

/// `name` in the host directory `dir`, matched without regard to case.
fn find_case_insensitive(dir: &std::path::Path, name: &str) -> Option<std::path::PathBuf> {
    let direct = dir.join(name);
    if direct.is_file() {
        return Some(direct);
    }
    std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
        let n = e.file_name();
        (n.to_string_lossy().eq_ignore_ascii_case(name) && e.path().is_file()).then(|| e.path())
    })
}

impl Process {
    /// Load the program and everything it imports.
    pub(crate) fn load_exe(&mut self, path: &str) -> Result<usize, KernelError> {
        if let Some(host) = self.cfg.program_host.clone() {
            let name = host
                .file_name()
                .map(|n| n.to_string_lossy().to_ascii_uppercase())
                .unwrap_or_default();
            return self.load_file(&host, &format!("C:\\{name}"), true, 0);
        }
        let bytes: Vec<u8> = crate::process::latin1(path);
        let r = self
            .files()
            .resolve(&bytes)
            .map_err(|_| KernelError::ModuleNotFound(path.to_string(), path.to_string()))?;
        if r.exists != Some(false) {
            return Err(KernelError::ModuleNotFound(path.to_string(), r.os2));
        }
        let idx = self.load_file(&r.host, &r.os2, true, 0)?;
        Ok(idx)
    }

    pub(crate) fn load_file(
        &mut self,
        host: &std::path::Path,
        os2: &str,
        is_exe: bool,
        depth: u32,
    ) -> Result<usize, KernelError> {
        let data = std::fs::read(host).map_err(|e| KernelError::Io {
            what: format!("reading {os2}"),
            source: e,
        })?;
        let module = loader::parse(&data).map_err(|e| KernelError::Parse {
            path: os2.to_string(),
            source: e,
        })?;
        let name = module.name.to_ascii_uppercase();
        if is_exe != (module.module_type() == ModuleType::Program) {
            let want = if is_exe { "a program" } else { "a library" };
            return Err(load_err(&name, format!("{os2} is not {want}")));
        }
        let idx = self.pcb.modules.len();
        let objects = self.place(&module, is_exe, &name)?;
        self.pcb.modules.push(crate::loading::LoadedModule {
            name: name.clone(),
            path: os2.to_string(),
            handle: idx as u16 + 1,
            module,
            objects,
            freed: false,
        });
        let imports = self.pcb.modules[idx].module.imports.clone();
        for imp in imports {
            if api::is_system(&imp) || self.find_module(&imp).is_some() {
                continue;
            }
            if depth >= MAX_DEPTH {
                return Err(load_err(&name, "DLLs nested too deeply"));
            }
            self.load_dll(&imp, depth + 1)?;
        }
        self.apply_fixups(idx)?;
        if !is_exe && self.pcb.modules[idx].module.start.is_some() {
            self.pcb.pending_init.push(idx);
        }
        if self.kernel.tnf.system.on {
            self.tnf_module_load(idx);
        }
        self.trace_module_loaded(idx);
        Ok(idx)
    }

    pub(crate) fn find_module(&self, name: &str) -> Option<usize> {
        self.pcb
            .modules
            .iter()
            .position(|m| !m.freed && m.name.eq_ignore_ascii_case(name))
    }

    pub(crate) fn load_dll(&mut self, name: &str, depth: u32) -> Result<usize, KernelError> {
        let exe_dir = self
            .pcb
            .modules
            .first()
            .and_then(|m| m.path.rsplit_once('\\').map(|(d, _)| d.to_string()));
        let (begin, end) = self.ext_libpath_dirs();
        let mut dirs: Vec<String> = begin;
        dirs.extend(exe_dir);
        dirs.extend(self.cfg.libpath.iter().cloned());
        if let Some((_, v)) = self
            .cfg
            .env
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("LIBPATH"))
        {
            dirs.extend(v.split(';').filter(|d| !d.is_empty()).map(String::from));
        }
        dirs.extend(end);
        let file = if name.contains('.') {
            name.to_string()
        } else {
            format!("{name}.DLL")
        };
        let mut tried = Vec::new();
        // A program from outside the sandbox: its own directory first.
        if let Some(dir) = self.cfg.program_host.as_ref().and_then(|h| h.parent()) {
            let dir = if dir.as_os_str().is_empty() {
                std::path::Path::new(".")
            } else {
                dir
            };
            if let Some(host) = find_case_insensitive(dir, &file) {
                let shown = format!("C:\\{}", file.to_ascii_uppercase());
                return self.load_file(&host, &shown, false, depth);
            }
            tried.push(dir.join(&file).display().to_string());
        }
        for d in dirs {
            let p = format!("{}\\{}", d.trim_end_matches('\\'), file);
            if let Ok(r) = self.files().resolve(&crate::process::latin1(&p))
                && r.exists == Some(false)
            {
                return self.load_file(&r.host, &r.os2, false, depth);
            }
            tried.push(p);
        }
        Err(KernelError::ModuleNotFound(
            name.to_string(),
            tried.join(", "),
        ))
    }

    /// Reserve, map, fill and describe every object or segment.
    fn place(
        &mut self,
        module: &Module,
        is_exe: bool,
        name: &str,
    ) -> Result<Vec<LoadedObject>, KernelError> {
        let mut out = Vec::new();
        let page_size = module.page_size();
        for (i, obj) in module.objects.iter().enumerate() {
            let number = i as u16 + 1;
            let (bits32, code, size) = match module.format {
                Format::Lx => (
                    obj.flags & loader::LX_OBJ_BIG != 0,
                    obj.flags & 0x4 != 0,
                    obj.virtual_size.max(1),
                ),
                Format::Ne => {
                    let mut size = obj.virtual_size.max(1);
                    if is_exe && module.auto_data == Some(number) {
                        let mut extra = module.heap_size;
                        if module.stack.map(|s| s.object) == Some(number) {
                            extra += module.stack_size;
                        }
                        size = size.saturating_add(extra).min(TILE);
                    }
                    (false, obj.flags & 7 == 0, size)
                }
            };
            let reserve = if module.format == Format::Ne {
                TILE
            } else {
                size
            };
            let base = match (is_exe, module.format) {
                (true, Format::Lx) => self
                    .pcb
                    .mem
                    .reserve_at(obj.base, reserve, RegionKind::Module)
                    .map_or_else(
                        || self.pcb.mem.reserve(reserve, false, RegionKind::Module),
                        Ok,
                    )?,
                (true, _) => self.pcb.mem.reserve(reserve, false, RegionKind::Module)?,
                (false, _) => self.pcb.mem.reserve(reserve, true, RegionKind::Module)?,
            };
            self.pcb
                .mem
                .map(&mut self.machine, base, round_up(reserve, PAGE), true)?;
            let image = obj.image(page_size);
            if self.machine.write_linear(base, &image).is_err() {
                return Err(load_err(
                    name,
                    format!("object {number} could not be written"),
                ));
            }
            let access = if code { CODE3 } else { DATA3 };
            let alias = self
                .kernel
                .desc
                .tile(&mut self.machine, base, size, access)
                .ok_or(KernelError::NoMemory("selectors"))?;
            let selector = match (bits32, code) {
                (true, true) => FLAT_CS,
                (true, false) => FLAT_DS,
                _ => alias,
            };
            out.push(LoadedObject {
                number,
                base,
                size,
                selector,
                alias,
                bits32,
                code,
            });
        }
        Ok(out)
    }

    /// The target of an object address in module `mi`.
    fn object_target(&self, mi: usize, object: u16, offset: u32) -> Option<Tgt> {
        let o = self.pcb.modules[mi].object(object)?;
        let flat = o.base.wrapping_add(offset);
        Some(if o.bits32 {
            Tgt {
                flat,
                sel: o.selector,
                off: flat,
                bits32: true,
                value: None,
            }
        } else {
            Tgt {
                flat,
                sel: tile_selector(flat).unwrap_or(o.selector),
                off: flat & 0xFFFF,
                bits32: false,
                value: None,
            }
        })
    }

    pub(crate) fn entry_target(
        &mut self,
        mi: usize,
        ordinal: u32,
        depth: u32,
    ) -> Result<Tgt, String> {
        let m = &self.pcb.modules[mi];
        let e = u16::try_from(ordinal)
            .ok()
            .and_then(|o| m.module.entry(o))
            .ok_or_else(|| format!("{} has no entry {ordinal}", m.name))?
            .clone();
        match &e.point {
            EntryPoint::Forwarder { module, target } => {
                let imp = m
                    .module
                    .imports
                    .get(usize::from(*module).wrapping_sub(1))
                    .cloned()
                    .ok_or_else(|| format!("{}: bad forwarder module {module}", m.name))?;
                if depth >= MAX_DEPTH {
                    return Err("forwarders loop".into());
                }
                match target {
                    ForwardTarget::Ordinal(o) => {
                        self.import_target(&imp, Some(*o), None, depth + 1)
                    }
                    ForwardTarget::Name(n) => self.import_target(&imp, None, Some(n), depth + 1),
                }
            }
            _ => {
                let a = e.address().ok_or("entry without address")?;
                if a.object == 0 || (matches!(e.point, EntryPoint::NeFixed { segment: 0xFE, .. })) {
                    return Ok(Tgt {
                        flat: a.offset,
                        sel: 0,
                        off: a.offset,
                        bits32: false,
                        value: Some(a.offset),
                    });
                }
                self.object_target(mi, a.object, a.offset).ok_or_else(|| {
                    format!("{}: entry {ordinal} in missing object {}", m.name, a.object)
                })
            }
        }
    }

    /// The target of an import by ordinal or name.
    pub(crate) fn import_target(
        &mut self,
        module: &str,
        ordinal: Option<u32>,
        name: Option<&str>,
        depth: u32,
    ) -> Result<Tgt, String> {
        if api::is_system(module) {
            let def = match (ordinal, name) {
                (Some(o), _) => api::lookup(module, o),
                (None, Some(n)) => api::lookup_name(module, n),
                _ => None,
            };
            if let Some(d) = def
                && let Conv::Value(v) = d.conv
            {
                return Ok(Tgt {
                    flat: v,
                    sel: v as u16,
                    off: v,
                    bits32: false,
                    value: Some(v),
                });
            }
            if let Some(d) = def
                && let Conv::Data(off) = d.conv
            {
                let v = crate::api::libc::data_address(self, off)?;
                return Ok(Tgt {
                    flat: v,
                    sel: crate::layout::FLAT_DS,
                    off: v,
                    bits32: true,
                    value: None,
                });
            }
            let ord = ordinal.or(def.map(|d| d.ordinal)).unwrap_or(0);
            let (slot, new) = self
                .kernel
                .thunks
                .bind(module, ord, name.unwrap_or(""), def);
            if slot >= THUNK_SLOTS {
                return Err("too many imported system entries".into());
            }
            if new {
                self.machine.add_host_call(THUNK_BASE + 4 * slot);
            }
            return Ok(Tgt {
                flat: THUNK_BASE + 4 * slot,
                sel: THUNK_CS,
                off: 4 * slot,
                bits32: false,
                value: None,
            });
        }
        let mi = self
            .find_module(module)
            .ok_or_else(|| format!("module {module} is not loaded"))?;
        let ord = match (ordinal, name) {
            (Some(o), _) => o,
            (None, Some(n)) => self.pcb.modules[mi]
                .module
                .export(n)
                .map(|e| u32::from(e.ordinal))
                .ok_or_else(|| format!("{module} does not export {n}"))?,
            _ => return Err("import without ordinal or name".into()),
        };
        self.entry_target(mi, ord, depth)
    }

    fn apply_fixups(&mut self, mi: usize) -> Result<(), KernelError> {
        let fixups = self.pcb.modules[mi].module.fixups.clone();
        let imports = self.pcb.modules[mi].module.imports.clone();
        let name = self.pcb.modules[mi].name.clone();
        for f in &fixups {
            let t = match &f.target {
                Target::Internal { object, offset } => self
                    .object_target(mi, *object, *offset)
                    .ok_or_else(|| format!("target object {object} missing")),
                Target::InternalEntry { ordinal } => self.entry_target(mi, u32::from(*ordinal), 0),
                Target::ImportOrdinal { module, ordinal } => {
                    match imports.get(usize::from(*module).wrapping_sub(1)) {
                        Some(m) => self.import_target(&m.clone(), Some(*ordinal), None, 0),
                        None => Err(format!("import module {module} missing")),
                    }
                }
                Target::ImportName { module, name } => {
                    match imports.get(usize::from(*module).wrapping_sub(1)) {
                        Some(m) => self.import_target(&m.clone(), None, Some(name), 0),
                        None => Err(format!("import module {module} missing")),
                    }
                }
                Target::OsFixup { .. } => continue,
            };
            let mut t = t.map_err(|e| load_err(&name, e))?;
            if let Some(a) = f.additive {
                t.flat = t.flat.wrapping_add(a);
                t.off = t.off.wrapping_add(a);
                if let Some(v) = t.value.as_mut() {
                    *v = v.wrapping_add(a);
                }
            }
            let Some(site) = self.pcb.modules[mi].flat(f.object, f.offset) else {
                return Err(load_err(
                    &name,
                    format!("fixup in missing object {}", f.object),
                ));
            };
            self.write_fixup(site, f.kind, &t, f.alias, f.add_to_site)
                .map_err(|_| {
                    load_err(
                        &name,
                        format!("fixup site {}:{:#x} is not writable", f.object, f.offset),
                    )
                })?;
        }
        Ok(())
    }

    fn write_fixup(
        &mut self,
        site: u32,
        kind: SourceKind,
        t: &Tgt,
        alias: bool,
        add: bool,
    ) -> Result<(), emu::Fault> {
        let alias16 = (tile_selector(t.flat).unwrap_or(0), t.flat & 0xFFFF);
        let (sel16, off16) = match t.value {
            Some(v) => (v as u16, v),
            None if t.bits32 => alias16,
            None => (t.sel, t.off),
        };
        let sel = if t.bits32 && !alias { t.sel } else { sel16 };
        let mut old = [0u8; 6];
        if add {
            self.machine
                .read_linear(site, &mut old[..kind.size() as usize])?;
        }
        let oldw = u32::from(u16::from_le_bytes([old[0], old[1]]));
        let bytes: Vec<u8> = match kind {
            SourceKind::Byte => vec![(off16 as u8).wrapping_add(old[0])],
            SourceKind::Sel16 => (sel as u32).wrapping_add(oldw).to_le_bytes()[..2].to_vec(),
            SourceKind::Off16 => {
                let v = if t.bits32 && t.value.is_none() {
                    t.flat
                } else {
                    off16
                };
                v.wrapping_add(oldw).to_le_bytes()[..2].to_vec()
            }
            SourceKind::Ptr1616 => {
                let mut b = (off16.wrapping_add(oldw) as u16).to_le_bytes().to_vec();
                b.extend(sel16.to_le_bytes());
                b
            }
            SourceKind::Ptr1632 => {
                let (o, s) = if t.bits32 {
                    (t.flat, t.sel)
                } else {
                    (t.off, t.sel)
                };
                let mut b = o.to_le_bytes().to_vec();
                b.extend(s.to_le_bytes());
                b
            }
            SourceKind::Off32 => t.value.unwrap_or(t.flat).to_le_bytes().to_vec(),
            SourceKind::Rel32 => t
                .flat
                .wrapping_sub(site.wrapping_add(4))
                .to_le_bytes()
                .to_vec(),
        };
        self.machine.write_linear(site, &bytes)
    }
}
