//! A miniature OS/2 loader over the `emu` machine, for the run tests:
//! real mode for the 16-bit programs, flat protected mode for the 32-bit
//! ones; fixups applied, DLLs loaded and initialized, system DLL imports
//! answered as host calls.

use std::collections::BTreeMap;

use emu::{Exit, Gpr, Limits, Machine, MachineConfig, SegReg, Segment};
use loader::{Address, Format, Module, SourceKind, Target};
use testprogs::Program;

/// The system DLLs, answered as host calls.
const SYSTEM: [&str; 3] = ["DOSCALLS", "MSG", "VIOCALLS"];

/// Linear address of the host-call stubs.
const STUBS: u32 = 0xF_0000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stub {
    /// A system DLL entry point: module and ordinal.
    Api(String, u32),
    /// Where a DLL init routine returns to.
    InitReturn,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Outcome {
    pub exit: Option<u32>,
    pub stdout: Vec<u8>,
    /// System calls made, in order, as `MODULE.ordinal`.
    pub calls: Vec<String>,
    pub files: BTreeMap<String, Vec<u8>>,
    /// AX/EAX returned by each DLL init routine.
    pub inits: Vec<u32>,
}

/// The command line, and failures to inject.
#[derive(Debug, Default, Clone, Copy)]
pub struct Setup {
    /// The arguments after the program name.
    pub args: &'static str,
    /// DosWrite returns this rc (0: works).
    pub write_rc: u32,
    /// DosRead flips the first byte it reads.
    pub corrupt_reads: bool,
}

// Not every test binary that includes this module injects failures.
#[allow(dead_code)]
impl Setup {
    /// Every DosWrite fails with ERROR_ACCESS_DENIED (5).
    pub const WRITE_FAILS: Setup = Setup {
        args: "",
        write_rc: 5,
        corrupt_reads: false,
    };
    /// Every DosRead returns corrupted data.
    pub const CORRUPT_READS: Setup = Setup {
        args: "",
        write_rc: 0,
        corrupt_reads: true,
    };
}

pub struct Os {
    m: Machine,
    bits: u32,
    next: u32,
    stubs: Vec<Stub>,
    out: Outcome,
    handles: BTreeMap<u32, (String, usize)>,
    setup: Setup,
    /// Loaded DLLs: module and object bases.
    dlls: Vec<(Module, Vec<u32>)>,
}

impl Os {
    fn new(bits: u32, setup: Setup) -> Os {
        let mut m = Machine::new(MachineConfig::default());
        if bits == 32 {
            m.cpu_mut_flush_tlb().cr0 |= 1;
            let flat = |selector, access| Segment {
                selector,
                base: 0,
                limit: 0xFFFF_FFFF,
                access,
                flags: 0xC,
            };
            m.set_segment(SegReg::Cs, flat(0x08, 0x9B));
            for s in [SegReg::Ds, SegReg::Es, SegReg::Ss] {
                m.set_segment(s, flat(0x10, 0x93));
            }
        }
        Os {
            m,
            bits,
            next: if bits == 16 { 0x1_0000 } else { 0x10_0000 },
            stubs: Vec::new(),
            out: Outcome::default(),
            handles: BTreeMap::new(),
            setup,
            dlls: Vec::new(),
        }
    }

    fn stub(&mut self, s: Stub) -> u32 {
        let i = match self.stubs.iter().position(|x| *x == s) {
            Some(i) => i,
            None => {
                self.stubs.push(s);
                self.stubs.len() - 1
            }
        } as u32;
        self.m.add_host_call(STUBS + i);
        i
    }

    fn r16(&self, a: u32) -> u32 {
        self.m.mem().read(a, 2)
    }
    fn r32(&self, a: u32) -> u32 {
        self.m.mem().read(a, 4)
    }
    fn w16(&mut self, a: u32, v: u32) {
        self.m.mem_mut().write(a, 2, v);
    }
    fn w32(&mut self, a: u32, v: u32) {
        self.m.mem_mut().write(a, 4, v);
    }

    /// Copies the objects to 64 KiB slots; returns their linear bases.
    fn place(&mut self, m: &Module) -> Vec<u32> {
        let mut bases = Vec::new();
        for n in 1..=m.objects.len() as u16 {
            let image = m.object_bytes(n).unwrap();
            assert!(image.len() <= 0x1_0000);
            self.m.mem_mut().write_bytes(self.next, &image);
            bases.push(self.next);
            self.next += 0x1_0000;
        }
        bases
    }

    /// A fixup target as (selector, offset) in real mode or a linear
    /// address (in `.1`) for flat code.
    fn resolve(&mut self, m: &Module, bases: &[u32], t: &Target) -> (u16, u32) {
        let at = |bases: &[u32], a: Address, bits: u32| {
            let base = bases[usize::from(a.object) - 1];
            if bits == 16 {
                ((base >> 4) as u16, a.offset)
            } else {
                (0, base + a.offset)
            }
        };
        match t {
            Target::Internal { object, offset } => at(
                bases,
                Address {
                    object: *object,
                    offset: *offset,
                },
                self.bits,
            ),
            Target::ImportOrdinal { module, ordinal } => {
                let name = &m.imports[usize::from(*module) - 1];
                if SYSTEM.contains(&name.as_str()) {
                    let i = self.stub(Stub::Api(name.clone(), *ordinal));
                    if self.bits == 16 {
                        ((STUBS >> 4) as u16, i)
                    } else {
                        (0, STUBS + i)
                    }
                } else {
                    let (dll, dbases) = self.dll(name);
                    let a = dll.entry(*ordinal as u16).unwrap().address().unwrap();
                    at(&dbases, a, self.bits)
                }
            }
            Target::ImportName { module, name } => {
                let module = &m.imports[usize::from(*module) - 1];
                let (dll, dbases) = self.dll(module);
                let a = dll.export(name).unwrap().address().unwrap();
                at(&dbases, a, self.bits)
            }
            other => panic!("unexpected target {other:?}"),
        }
    }

    fn dll(&self, name: &str) -> (Module, Vec<u32>) {
        self.dlls
            .iter()
            .find(|(m, _)| m.name == name)
            .cloned()
            .unwrap_or_else(|| panic!("DLL {name} not loaded"))
    }

    /// Loads a module and applies its fixups.
    fn load(&mut self, m: &Module) -> Vec<u32> {
        let bases = self.place(m);
        for f in &m.fixups {
            let (sel, off) = self.resolve(m, &bases, &f.target);
            let site = bases[usize::from(f.object) - 1] + f.offset;
            match f.kind {
                SourceKind::Ptr1616 => {
                    self.w16(site, off);
                    self.w16(site + 2, u32::from(sel));
                }
                SourceKind::Sel16 => self.w16(site, u32::from(sel)),
                SourceKind::Off16 => self.w16(site, off),
                SourceKind::Off32 => self.w32(site, off),
                SourceKind::Rel32 => self.w32(site, off.wrapping_sub(site + 4)),
                other => panic!("unexpected fixup {other:?}"),
            }
        }
        bases
    }

    fn set_cs_ip(&mut self, sel: u16, ip: u32) {
        self.m.set_segment(SegReg::Cs, Segment::real(sel, true));
        self.m.set_eip(ip);
    }

    /// Runs until a host call; returns its stub.
    fn run_to_stub(&mut self) -> Stub {
        match self.m.run(Limits {
            instructions: Some(1_000_000),
            cycles: None,
        }) {
            Exit::HostCall { linear } => self.stubs[(linear - STUBS) as usize].clone(),
            other => panic!("stopped with {other:?} at eip {:#x}", self.m.cpu().eip),
        }
    }

    fn cstr(&self, mut a: u32) -> String {
        let mut s = String::new();
        loop {
            let b = self.m.mem().read8(a);
            if b == 0 {
                return s;
            }
            s.push(char::from(b));
            a += 1;
        }
    }

    fn read_mem(&self, a: u32, n: u32) -> Vec<u8> {
        let mut buf = vec![0; n as usize];
        self.m.mem().read_bytes(a, &mut buf);
        buf
    }

    fn write(&mut self, hf: u32, data: Vec<u8>) -> u32 {
        if self.setup.write_rc != 0 {
            return 0;
        }
        match hf {
            1 => self.out.stdout.extend_from_slice(&data),
            h => {
                let (name, pos) = self.handles.get_mut(&h).unwrap();
                let file = self.out.files.get_mut(name.as_str()).unwrap();
                if file.len() < *pos + data.len() {
                    file.resize(*pos + data.len(), 0);
                }
                file[*pos..*pos + data.len()].copy_from_slice(&data);
                *pos += data.len();
            }
        }
        data.len() as u32
    }

    fn read(&mut self, hf: u32, max: u32) -> Vec<u8> {
        let (name, pos) = self.handles.get_mut(&hf).unwrap();
        let file = &self.out.files[name.as_str()];
        let end = (*pos + max as usize).min(file.len());
        let mut data = file[*pos..end].to_vec();
        *pos = end;
        if self.setup.corrupt_reads
            && let Some(b) = data.first_mut()
        {
            *b ^= 0xFF;
        }
        data
    }

    /// Answers a 16-bit far pascal API call; `false` after DosExit.
    fn api16(&mut self, module: &str, ordinal: u32) -> bool {
        self.out.calls.push(format!("{module}.{ordinal}"));
        let ss = self.m.cpu().seg[SegReg::Ss as usize].base;
        let sp = self.m.cpu().gpr[Gpr::Esp] & 0xFFFF;
        let w = |os: &Os, o: u32| os.r16(ss + ((sp + o) & 0xFFFF));
        let far = |os: &Os, o: u32| (w(os, o + 2) << 4) + w(os, o);
        let (ret_ip, ret_cs) = (w(self, 0), w(self, 2));
        let (rc, args) = match (module, ordinal) {
            ("MSG", 1) => {
                let (msg, cb, hf) = (far(self, 4), w(self, 8), w(self, 10));
                let data = self.read_mem(msg, cb);
                self.write(hf, data);
                (self.setup.write_rc, 8)
            }
            ("VIOCALLS", 19) => {
                let (hvio, cb, text) = (w(self, 4), w(self, 6), far(self, 8));
                assert_eq!(hvio, 0);
                let data = self.read_mem(text, cb);
                self.write(1, data);
                (self.setup.write_rc, 8)
            }
            (_, 5) => {
                self.out.exit = Some(w(self, 4));
                return false;
            }
            (_, 138) => {
                let (pcb, cb, buf, hf) = (far(self, 4), w(self, 8), far(self, 10), w(self, 14));
                let data = self.read_mem(buf, cb);
                let n = self.write(hf, data);
                self.w16(pcb, n);
                (self.setup.write_rc, 12)
            }
            (_, 137) => {
                let (pcb, cb, buf, hf) = (far(self, 4), w(self, 8), far(self, 10), w(self, 14));
                let data = self.read(hf, cb);
                self.m.mem_mut().write_bytes(buf, &data);
                self.w16(pcb, data.len() as u32);
                (0, 12)
            }
            (_, 70) => {
                let (mode, flags) = (w(self, 8), w(self, 10));
                assert_eq!((mode, flags), (0x42, 0x12));
                let (paction, phf, name) = (far(self, 18), far(self, 22), far(self, 26));
                let name = self.cstr(name);
                let existed = self.out.files.insert(name.clone(), Vec::new()).is_some();
                let h = 5 + self.handles.len() as u32;
                self.handles.insert(h, (name, 0));
                self.w16(phf, h);
                self.w16(paction, if existed { 3 } else { 2 });
                (0, 26)
            }
            (_, 58) => {
                let (pnew, method, hf) = (far(self, 4), w(self, 8), w(self, 14));
                let dist = w(self, 10) | (w(self, 12) << 16);
                assert_eq!(method, 0);
                self.handles.get_mut(&hf).unwrap().1 = dist as usize;
                self.w32(pnew, dist);
                (0, 12)
            }
            (_, 59) => {
                let hf = w(self, 4);
                assert!(self.handles.remove(&hf).is_some(), "close of an open file");
                (0, 2)
            }
            _ => panic!("unexpected {module}.{ordinal}"),
        };
        self.m.gpr_mut()[Gpr::Eax] = rc;
        self.m.gpr_mut()[Gpr::Esp] = (sp + 4 + args) & 0xFFFF;
        self.set_cs_ip(ret_cs as u16, ret_ip);
        true
    }

    /// Answers a 32-bit `_System` API call; `false` after DosExit.
    fn api32(&mut self, module: &str, ordinal: u32) -> bool {
        self.out.calls.push(format!("{module}.{ordinal}"));
        let esp = self.m.cpu().gpr[Gpr::Esp];
        let d = |os: &Os, o: u32| os.r32(esp + o);
        let rc = match (module, ordinal) {
            ("MSG", 5) => {
                let (hf, cb, msg) = (d(self, 4), d(self, 8), d(self, 12));
                let data = self.read_mem(msg, cb);
                self.write(hf, data);
                self.setup.write_rc
            }
            (_, 273) => {
                let (name, phf, paction) = (d(self, 4), d(self, 8), d(self, 12));
                let (size, attr, flags, mode, eaop) = (
                    d(self, 16),
                    d(self, 20),
                    d(self, 24),
                    d(self, 28),
                    d(self, 32),
                );
                assert_eq!((size, attr, flags, mode, eaop), (0, 0, 0x12, 0x42, 0));
                let name = self.cstr(name);
                let existed = self.out.files.insert(name.clone(), Vec::new()).is_some();
                let h = 5 + self.handles.len() as u32;
                self.handles.insert(h, (name, 0));
                self.w32(phf, h);
                self.w32(paction, if existed { 3 } else { 2 });
                0
            }
            (_, 281) => {
                let (hf, buf, cb, pcb) = (d(self, 4), d(self, 8), d(self, 12), d(self, 16));
                let data = self.read(hf, cb);
                self.m.mem_mut().write_bytes(buf, &data);
                self.w32(pcb, data.len() as u32);
                0
            }
            (_, 256) => {
                let (hf, ib, method, pnew) = (d(self, 4), d(self, 8), d(self, 12), d(self, 16));
                assert_eq!(method, 0);
                self.handles.get_mut(&hf).unwrap().1 = ib as usize;
                self.w32(pnew, ib);
                0
            }
            (_, 257) => {
                assert!(self.handles.remove(&d(self, 4)).is_some());
                0
            }
            (_, 234) => {
                assert_eq!(d(self, 4), 1, "EXIT_PROCESS");
                self.out.exit = Some(d(self, 8));
                return false;
            }
            (_, 282) => {
                let (hf, buf, cb, pcb) = (d(self, 4), d(self, 8), d(self, 12), d(self, 16));
                let data = self.read_mem(buf, cb);
                let n = self.write(hf, data);
                self.w32(pcb, n);
                self.setup.write_rc
            }
            _ => panic!("unexpected {module}.{ordinal}"),
        };
        self.m.gpr_mut()[Gpr::Eax] = rc;
        self.m.set_eip(d(self, 0));
        self.m.gpr_mut()[Gpr::Esp] = esp + 4;
        true
    }
}

/// Loads `dlls` then `exe`, runs the DLL init routines, then the program
/// to DosExit.
pub fn run(exe: &Program, dlls: &[&Program], setup: Setup) -> Outcome {
    let bits = if exe.module.format == Format::Ne {
        16
    } else {
        32
    };
    let mut os = Os::new(bits, setup);
    for d in dlls {
        let bases = os.load(&d.module);
        os.dlls.push((d.module.clone(), bases));
    }
    let m = &exe.module;
    let bases = os.load(m);
    let stack = m.stack.unwrap();
    let stack_base = bases[usize::from(stack.object) - 1];
    let back = os.stub(Stub::InitReturn);
    for (i, (d, dbases)) in os.dlls.clone().iter().enumerate() {
        let init = d.start.unwrap();
        let hmod = 0x100 + i as u32;
        if bits == 16 {
            let ds = (dbases[usize::from(d.auto_data.unwrap()) - 1] >> 4) as u16;
            os.m.set_segment(SegReg::Ds, Segment::real(ds, false));
            os.m.set_segment(SegReg::Ss, Segment::real((stack_base >> 4) as u16, false));
            let sp = stack.offset - 4;
            os.w16(stack_base + sp, back);
            os.w16(stack_base + sp + 2, STUBS >> 4);
            os.m.gpr_mut()[Gpr::Esp] = sp;
            os.m.gpr_mut()[Gpr::Eax] = hmod;
            os.set_cs_ip(
                (dbases[usize::from(init.object) - 1] >> 4) as u16,
                init.offset,
            );
        } else {
            let esp = stack_base + stack.offset - 12;
            os.w32(esp, STUBS + back);
            os.w32(esp + 4, hmod);
            os.w32(esp + 8, 0);
            os.m.gpr_mut()[Gpr::Esp] = esp;
            os.m.set_eip(dbases[usize::from(init.object) - 1] + init.offset);
        }
        assert_eq!(os.run_to_stub(), Stub::InitReturn, "{} init", d.name);
        let ax = os.m.cpu().gpr[Gpr::Eax];
        os.out.inits.push(if bits == 16 { ax & 0xFFFF } else { ax });
    }
    // The environment: one variable, then the program name and arguments.
    let env = os.next;
    os.next += 0x1_0000;
    let mut block = b"PATH=C:\\\0\0".to_vec();
    let cmdline = block.len() as u32;
    block.extend_from_slice(format!("C:\\{}\0{}\0\0", exe.file_name, setup.args).as_bytes());
    os.m.mem_mut().write_bytes(env, &block);
    let start = m.start.unwrap();
    if bits == 16 {
        os.m.gpr_mut()[Gpr::Eax] = env >> 4;
        os.m.gpr_mut()[Gpr::Ebx] = cmdline;
        let dgroup = (bases[usize::from(m.auto_data.unwrap()) - 1] >> 4) as u16;
        assert_eq!(stack.object, m.auto_data.unwrap(), "SS = DGROUP");
        os.m.set_segment(SegReg::Ds, Segment::real(dgroup, false));
        os.m.set_segment(SegReg::Ss, Segment::real(dgroup, false));
        os.m.set_segment(SegReg::Es, Segment::real(0, false));
        os.m.gpr_mut()[Gpr::Esp] = stack.offset;
        os.set_cs_ip(
            (bases[usize::from(start.object) - 1] >> 4) as u16,
            start.offset,
        );
    } else {
        // The OS/2 2.x start stack: return address, module handle, 0,
        // environment, command line.
        let esp = stack_base + stack.offset - 20;
        for (i, v) in [STUBS + back, 0x200, 0, env, env + cmdline]
            .into_iter()
            .enumerate()
        {
            os.w32(esp + 4 * i as u32, v);
        }
        os.m.gpr_mut()[Gpr::Esp] = esp;
        os.m.set_eip(bases[usize::from(start.object) - 1] + start.offset);
    }
    loop {
        let Stub::Api(module, ordinal) = os.run_to_stub() else {
            panic!("{}: returned into the init stub", exe.name);
        };
        let more = if bits == 16 {
            os.api16(&module, ordinal)
        } else {
            os.api32(&module, ordinal)
        };
        if !more {
            return os.out;
        }
    }
}
