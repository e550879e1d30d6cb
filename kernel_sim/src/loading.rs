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
//! - DLLs are searched as `NAME.DLL` in the program's directory, then in
//!   [`crate::ProcessConfig::libpath`]. Initialization routines run after
//!   everything is loaded, dependencies first, on the program's stack: LX
//!   as `_System (hmod, 0)` returning EAX (0 = failure); NE called far
//!   with AX and DI = the module handle, DS its automatic data, CX its
//!   heap size, returning AX (0 = failure).
//! - 16-bit start state (OS/2 1.x): CS:IP and SS:SP from the header (SP 0
//!   means the top of the automatic data plus stack, or the top of the
//!   stack segment), DS the automatic data segment, ES 0, AX the
//!   environment selector, BX the command-line offset in it, CX the size
//!   of the automatic data segment, other registers 0.
//! - 32-bit start state (OS/2 2.x): ESP from the header with the return
//!   address, module handle, 0, environment and command line pushed; the
//!   return address is a kernel thunk that ends the process with EAX;
//!   CS/DS/ES/SS flat, FS the TIB.

use emu::SegReg;
use loader::{EntryPoint, Format, ForwardTarget, Module, ModuleType, SourceKind, Target};

use crate::api::{self, Conv, thunks::Slot};
use crate::desc::{CODE3, DATA3};
use crate::error::{KernelError, Outcome};
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
struct Tgt {
    flat: u32,
    sel: u16,
    off: u32,
    bits32: bool,
    value: Option<u32>,
}

const MAX_DEPTH: u32 = 32;

fn load_err(module: &str, reason: impl Into<String>) -> KernelError {
    KernelError::Load {
        module: module.to_string(),
        reason: reason.into(),
    }
}

impl Process {
    /// Load the program and everything it imports.
    pub(crate) fn load_exe(&mut self, path: &str) -> Result<usize, KernelError> {
        let bytes: Vec<u8> = crate::process::latin1(path);
        let r = self
            .files
            .resolve(&bytes)
            .map_err(|_| KernelError::ModuleNotFound(path.to_string(), path.to_string()))?;
        if r.exists != Some(false) {
            return Err(KernelError::ModuleNotFound(path.to_string(), r.os2));
        }
        let idx = self.load_file(&r.host, &r.os2, true, 0)?;
        Ok(idx)
    }

    fn load_file(
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
        let idx = self.modules.len();
        let objects = self.place(&module, is_exe, &name)?;
        self.modules.push(crate::loading::LoadedModule {
            name: name.clone(),
            path: os2.to_string(),
            handle: idx as u16 + 1,
            module,
            objects,
        });
        let imports = self.modules[idx].module.imports.clone();
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
        if !is_exe && self.modules[idx].module.start.is_some() {
            self.pending_init.push(idx);
        }
        Ok(idx)
    }

    fn find_module(&self, name: &str) -> Option<usize> {
        self.modules
            .iter()
            .position(|m| m.name.eq_ignore_ascii_case(name))
    }

    fn load_dll(&mut self, name: &str, depth: u32) -> Result<usize, KernelError> {
        let exe_dir = self
            .modules
            .first()
            .and_then(|m| m.path.rsplit_once('\\').map(|(d, _)| d.to_string()));
        let mut dirs: Vec<String> = exe_dir.into_iter().collect();
        dirs.extend(self.cfg.libpath.iter().cloned());
        let file = if name.contains('.') {
            name.to_string()
        } else {
            format!("{name}.DLL")
        };
        let mut tried = Vec::new();
        for d in dirs {
            let p = format!("{}\\{}", d.trim_end_matches('\\'), file);
            if let Ok(r) = self.files.resolve(&crate::process::latin1(&p))
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
                    .mem
                    .reserve_at(obj.base, reserve, RegionKind::Module)
                    .map_or_else(|| self.mem.reserve(reserve, false, RegionKind::Module), Ok)?,
                (true, _) => self.mem.reserve(reserve, false, RegionKind::Module)?,
                (false, _) => self.mem.reserve(reserve, true, RegionKind::Module)?,
            };
            self.mem
                .map(&mut self.m, base, round_up(reserve, PAGE), true)?;
            let image = obj.image(page_size);
            if self.m.write_linear(base, &image).is_err() {
                return Err(load_err(
                    name,
                    format!("object {number} could not be written"),
                ));
            }
            let access = if code { CODE3 } else { DATA3 };
            let alias = self
                .desc
                .tile(&mut self.m, base, size, access)
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
        let o = self.modules[mi].object(object)?;
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

    fn entry_target(&mut self, mi: usize, ordinal: u32, depth: u32) -> Result<Tgt, String> {
        let m = &self.modules[mi];
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
    fn import_target(
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
            let ord = ordinal.or(def.map(|d| d.ordinal)).unwrap_or(0);
            let (slot, new) = self.thunks.bind(module, ord, name.unwrap_or(""), def);
            if new {
                self.m.add_host_call(THUNK_BASE + 4 * slot);
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
            (None, Some(n)) => self.modules[mi]
                .module
                .export(n)
                .map(|e| u32::from(e.ordinal))
                .ok_or_else(|| format!("{module} does not export {n}"))?,
            _ => return Err("import without ordinal or name".into()),
        };
        self.entry_target(mi, ord, depth)
    }

    fn apply_fixups(&mut self, mi: usize) -> Result<(), KernelError> {
        let fixups = self.modules[mi].module.fixups.clone();
        let imports = self.modules[mi].module.imports.clone();
        let name = self.modules[mi].name.clone();
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
            let Some(site) = self.modules[mi].flat(f.object, f.offset) else {
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
            self.m.read_linear(site, &mut old[..kind.size() as usize])?;
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
        self.m.write_linear(site, &bytes)
    }

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
        let exe = &self.modules[self.exe];
        let ptype = 2u32;
        let mut pb = Vec::new();
        for x in [
            1u32,
            0,
            u32::from(exe.handle),
            self.env_base + u32::from(self.cmd_offset),
            self.env_base,
            0,
            ptype,
        ] {
            w(&mut pb, x);
        }
        let ok = self.m.write_linear(base, &tib).is_ok()
            && self.m.write_linear(tib2, &t2).is_ok()
            && self.m.write_linear(pib, &pb).is_ok();
        if !ok {
            return Err(KernelError::NoMemory("information blocks"));
        }
        self.tib = base;
        self.pib = pib;
        self.desc.set(
            &mut self.m,
            TIB_SEL,
            crate::desc::make(base, PAGE - 1, DATA3, false),
        );
        Ok(())
    }

    /// Lowest and top address of the EXE's stack.
    fn stack_bounds(&self) -> (u32, u32) {
        let exe = &self.modules[self.exe];
        let top = self.initial_sp().map_or(0, |(sel, sp)| {
            if exe.module.format == Format::Lx {
                sp
            } else {
                self.desc.linear(sel, 0, 1).unwrap_or(0).wrapping_add(sp)
            }
        });
        (top.saturating_sub(exe.module.stack_size.max(1)), top)
    }

    /// The EXE's initial SS and SP/ESP.
    fn initial_sp(&self) -> Option<(u16, u32)> {
        let exe = &self.modules[self.exe];
        let m = &exe.module;
        let s = m.stack?;
        let o = exe.object(s.object)?;
        if m.format == Format::Lx {
            return Some((FLAT_DS, o.base.wrapping_add(s.offset)));
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
        let exe = self.modules[self.exe].clone();
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
            let cpu = self.m.cpu_mut();
            cpu.gpr = [0; 8];
            cpu.gpr[4] = sp;
        }
        let d = &self.desc;
        let mut ok =
            d.load(&mut self.m, SegReg::Ss, ss) && d.load(&mut self.m, SegReg::Cs, cs.selector);
        if m.format == Format::Lx {
            ok &= d.load(&mut self.m, SegReg::Ds, FLAT_DS)
                && d.load(&mut self.m, SegReg::Es, FLAT_DS)
                && d.load(&mut self.m, SegReg::Fs, TIB_SEL)
                && d.load(&mut self.m, SegReg::Gs, 0);
            self.m.cpu_mut().eip = cs.base.wrapping_add(start.offset);
            let ret = THUNK_BASE + 4 * self.thunks.special(Slot::EntryReturn);
            self.m.add_host_call(ret);
            let cmd = self.env_base + u32::from(self.cmd_offset);
            for v in [cmd, self.env_base, 0, u32::from(exe.handle), ret] {
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
            ok &= d.load(&mut self.m, SegReg::Ds, ds)
                && d.load(&mut self.m, SegReg::Es, 0)
                && d.load(&mut self.m, SegReg::Fs, 0)
                && d.load(&mut self.m, SegReg::Gs, 0);
            let cpu = self.m.cpu_mut();
            cpu.eip = start.offset & 0xFFFF;
            cpu.gpr[0] = u32::from(self.env_sel);
            cpu.gpr[3] = u32::from(self.cmd_offset);
            cpu.gpr[1] = cx & 0xFFFF;
        }
        if !ok {
            return Err(load_err(&exe.name, "start selectors are not valid"));
        }
        Ok(())
    }

    /// Run each DLL's initialization routine on the program's stack.
    pub(crate) fn run_dll_inits(&mut self) -> Result<(), KernelError> {
        let pending = std::mem::take(&mut self.pending_init);
        for mi in pending {
            let saved = self.m.cpu().clone();
            let lm = self.modules[mi].clone();
            let Some(start) = lm.module.start else {
                continue;
            };
            let Some(o) = lm.object(start.object) else {
                continue;
            };
            let ret_slot = self.thunks.special(Slot::InitReturn);
            self.m.add_host_call(THUNK_BASE + 4 * ret_slot);
            let d = &self.desc;
            let mut ok;
            if lm.module.format == Format::Lx {
                ok = d.load(&mut self.m, SegReg::Cs, FLAT_CS)
                    && d.load(&mut self.m, SegReg::Ds, FLAT_DS)
                    && d.load(&mut self.m, SegReg::Es, FLAT_DS);
                ok &= self.push32(0)
                    && self.push32(u32::from(lm.handle))
                    && self.push32(THUNK_BASE + 4 * ret_slot);
                self.m.cpu_mut().eip = o.base.wrapping_add(start.offset);
            } else {
                let ds = lm
                    .module
                    .auto_data
                    .and_then(|a| lm.object(a))
                    .map_or(0, |o| o.selector);
                ok = d.load(&mut self.m, SegReg::Cs, o.selector)
                    && d.load(&mut self.m, SegReg::Ds, ds)
                    && d.load(&mut self.m, SegReg::Es, 0);
                ok &= self.push16(THUNK_CS) && self.push16((4 * ret_slot) as u16);
                let cpu = self.m.cpu_mut();
                cpu.eip = start.offset & 0xFFFF;
                cpu.gpr[0] = u32::from(lm.handle);
                cpu.gpr[7] = u32::from(lm.handle);
                cpu.gpr[1] = lm.module.heap_size & 0xFFFF;
            }
            if !ok {
                return Err(load_err(
                    &lm.name,
                    "cannot enter the initialization routine",
                ));
            }
            let outcome = self.run_loop(None);
            *self.m.cpu_mut() = saved;
            let good = match outcome {
                Outcome::Returned(v) if lm.module.format == Format::Lx => v != 0,
                Outcome::Returned(v) => v & 0xFFFF != 0,
                _ => false,
            };
            if !good {
                return Err(KernelError::Init {
                    module: lm.name.clone(),
                    outcome: Box::new(outcome),
                });
            }
        }
        Ok(())
    }
}
