//! The process: one emulated machine running one OS/2 program, as the
//! machine, the kernel-wide state, the process's own state and the host
//! side (the structs are in `state.rs`); its configuration; and the guest
//! memory helpers every API uses.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use emu::{Fault, Machine, MachineConfig};

use crate::clock::Clock;
use crate::desc::Descriptors;
use crate::error::KernelError;
use crate::fs::{FileSystem, FileTable, Files};
use crate::layout::*;
use crate::loading::LoadedModule;
use crate::memory::{Memory, RegionKind};
use crate::semaphores::Semaphores;
use crate::state::{Host, Kernel, Pcb};
use crate::thunks::Thunks;

/// What to run and how.
#[derive(Clone, Debug)]
pub struct ProcessConfig {
    /// Host directory that is drive C: (and the current directory, C:\).
    pub root: PathBuf,
    /// The program, as an OS/2 path inside the sandbox (`HELLO.EXE`,
    /// `C:\BIN\HELLO.EXE`).
    pub program: String,
    /// Arguments after the program name.
    pub args: Vec<String>,
    /// Environment variables, in order.
    pub env: Vec<(String, String)>,
    /// Record every API call (see [`Process::api_log`]).
    pub api_log: bool,
    /// Stop after this many guest instructions in total.
    pub max_instructions: Option<u64>,
    /// Guest RAM in bytes.
    pub ram_size: usize,
    /// Directories (OS/2 paths) searched for DLLs after the program's own.
    pub libpath: Vec<String>,
    /// Stop the run after this much host (wall-clock) time.
    pub max_wall: Option<std::time::Duration>,
    /// When set (by a Ctrl-C handler), the run stops at the next
    /// instruction boundary with [`crate::Outcome::Interrupted`].
    pub interrupt: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The program's host file when it is not in the sandbox: it is read
    /// from there, the guest sees it as `C:\NAME`, and its DLLs are looked
    /// for beside it first, then along LIBPATH in the sandbox.
    pub program_host: Option<PathBuf>,
}

impl ProcessConfig {
    /// A configuration with the default environment (`PATH=C:\`,
    /// `DPATH=C:\`), no arguments and a 64 MB machine.
    pub fn new(root: impl Into<PathBuf>, program: impl Into<String>) -> ProcessConfig {
        ProcessConfig {
            root: root.into(),
            program: program.into(),
            args: Vec::new(),
            env: vec![
                ("PATH".into(), "C:\\".into()),
                ("DPATH".into(), "C:\\".into()),
            ],
            api_log: false,
            max_instructions: None,
            ram_size: 64 << 20,
            libpath: vec!["C:\\".into()],
            max_wall: None,
            interrupt: None,
            program_host: None,
        }
    }

    /// Set (or replace) an environment variable.
    pub fn set_env(&mut self, key: &str, value: &str) {
        match self
            .env
            .iter_mut()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
        {
            Some(e) => e.1 = value.to_string(),
            None => self.env.push((key.to_string(), value.to_string())),
        }
    }
}

/// A shared, cloneable byte buffer for console capture.
#[derive(Clone, Debug, Default)]
pub struct ConsoleBuffer(Arc<Mutex<Vec<u8>>>);

impl ConsoleBuffer {
    /// An empty buffer.
    pub fn new() -> ConsoleBuffer {
        ConsoleBuffer::default()
    }
    /// Everything written so far.
    pub fn contents(&self) -> Vec<u8> {
        self.0.lock().map(|v| v.clone()).unwrap_or_default()
    }
    /// Everything written so far, as (lossy) text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.contents()).into_owned()
    }
}

impl Write for ConsoleBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut v) = self.0.lock() {
            v.extend_from_slice(buf);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One recorded API call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiLogEntry {
    /// `CS:EIP` of the caller (the return address), after `pid N ` when
    /// the caller is a child process (PID N).
    pub caller: String,
    /// `MODULE.ordinal`.
    pub module: String,
    /// Ordinal.
    pub ordinal: u32,
    /// Function name.
    pub name: &'static str,
    /// Arguments, formatted.
    pub args: String,
    /// Result, formatted (`rc=0`, `exit`).
    pub result: String,
}

impl std::fmt::Display for ApiLogEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}.{} {}({}) -> {}",
            self.caller, self.module, self.ordinal, self.name, self.args, self.result
        )
    }
}

/// Receives API log entries as they happen.
pub type ApiLogSink = Box<dyn FnMut(&ApiLogEntry)>;

/// A running OS/2 system with one process, in its own emulated machine:
/// the machine, the kernel-wide state, the process, and the host side
/// (see the crate docs for who owns what, and where threads and child
/// processes will go).
pub struct Process {
    /// The emulated hardware: CPU, physical memory, TLB.
    pub(crate) machine: Machine,
    /// What was asked to run, and its limits.
    pub(crate) cfg: ProcessConfig,
    /// State of the whole system.
    pub(crate) kernel: Kernel,
    /// The process.
    pub(crate) pcb: Pcb,
    /// Console, API log, beeps.
    pub(crate) host: Host,
}

impl Process {
    /// Build the machine, load the program and its DLLs and set the
    /// program's start state. The DLLs' initialization routines run when
    /// [`Process::run`] starts, so tracing set up before that sees them.
    /// Console output goes to the host's stdout/stderr until
    /// [`Process::set_console`] changes it.
    pub fn new(cfg: ProcessConfig) -> Result<Process, KernelError> {
        let mut m = Machine::new(MachineConfig {
            ram_size: cfg.ram_size,
            model: emu::CpuModel::I486,
        });
        let mut mem = Memory::new(cfg.ram_size);
        mem.init(&mut m);
        let fs = FileSystem::new(&cfg.root).map_err(|e| KernelError::Io {
            what: format!("sandbox root {}", cfg.root.display()),
            source: e,
        })?;
        let mut p = Process {
            machine: m,
            cfg,
            kernel: Kernel {
                clock: Clock::default(),
                fs,
                thunks: Thunks::default(),
                sems: Semaphores::default(),
                queues: Default::default(),
                desc: Descriptors::new(),
                trace: None,
                tnf: Default::default(),
                systable: Default::default(),
                executed: 0,
                host_work: 0,
                started: None,
                procs: Vec::new(),
                results: Vec::new(),
                next_pid: 2,
                loading_child: 0,
                lineage: std::collections::HashMap::new(),
                shared_mem: Default::default(),
                sys_sems: Default::default(),
                sessions: Default::default(),
                npipes: Default::default(),
            },
            pcb: Pcb::new(1, mem, FileTable::default()),
            host: Host {
                stdout: Box::new(std::io::stdout()),
                stderr: Box::new(std::io::stderr()),
                stdin: Box::new(std::io::stdin()),
                log: Vec::new(),
                log_sink: None,
                beeps: Vec::new(),
                progress: None,
                next_progress: 0,
            },
        };
        let t = p.kernel.clock.now(0);
        p.kernel.fs.boot = crate::fs::dos_stamp(t.year, t.month, t.day, t.hour, t.minute, t.second);
        p.kernel.fs.now = p.kernel.fs.boot;
        p.init_machine()?;
        let program = p.cfg.program.clone();
        p.pcb.exe = p.load_exe(&program)?;
        p.init_environment()?;
        p.init_info_blocks()?;
        p.set_start_state()?;
        Ok(p)
    }

    /// Send the program's console output (handles 1 and 2) and input
    /// (handle 0) elsewhere.
    pub fn set_console(
        &mut self,
        stdout: Box<dyn Write>,
        stderr: Box<dyn Write>,
        stdin: Box<dyn Read>,
    ) {
        self.host.stdout = stdout;
        self.host.stderr = stderr;
        self.host.stdin = stdin;
    }

    fn init_machine(&mut self) -> Result<(), KernelError> {
        let cr3 = self.pcb.mem.cr3();
        let cpu = self.machine.cpu_mut_flush_tlb();
        cpu.cr3 = cr3;
        cpu.cr0 = 0x8000_0011;
        cpu.idtr = emu::DescTable { base: 0, limit: 0 };
        cpu.eflags = emu::flags::RESERVED1 | emu::flags::IF;
        self.kernel
            .desc
            .install(&mut self.machine, &mut self.pcb.mem)?;
        self.pcb
            .mem
            .map(&mut self.machine, THUNK_BASE, THUNK_SLOTS * 4, true)?;
        self.pcb
            .mem
            .fill(&mut self.machine, THUNK_BASE, THUNK_SLOTS * 4, 0xF4);
        for v in 0..=255u8 {
            self.machine.intercept(v, true);
        }
        Ok(())
    }

    /// The environment segment: `K=V\0...\0\0`, the program's full path
    /// and NUL (the "exe name" OS/2 places after the environment), then
    /// the command line the program gets (BX, `pib_pchcmd`): the program
    /// path, NUL, the arguments joined by blanks, NUL NUL.
    ///
    /// Runtimes differ in where they look for argv\[0\]: MS C reads the
    /// string at the command-line offset, Open Watcom the string before
    /// it; both find the program's path.
    fn init_environment(&mut self) -> Result<(), KernelError> {
        let mut env = Vec::new();
        for (k, v) in &self.cfg.env {
            env.extend(latin1(k));
            env.push(b'=');
            env.extend(latin1(v));
            env.push(0);
        }
        if self.cfg.env.is_empty() {
            env.push(0);
        }
        env.push(0);
        let program = self.cfg.program.clone();
        let full = self.files().full_os2_path(&program);
        let mut args = latin1(&full);
        args.push(0);
        let quoted: Vec<String> = self.cfg.args.iter().map(|a| quote_arg(a)).collect();
        args.extend(latin1(&quoted.join(" ")));
        args.extend([0, 0]);
        self.install_environment(&env, &full, &args)
    }

    /// Build the environment segment from `env` (the strings and the
    /// extra NUL), the program's full path, and `args` (the argument
    /// strings and their extra NUL, as DosExecPgm takes them).
    pub(crate) fn install_environment(
        &mut self,
        env: &[u8],
        full: &str,
        args: &[u8],
    ) -> Result<(), KernelError> {
        let mut block = env.to_vec();
        block.extend(latin1(full));
        block.push(0);
        let cmd_offset = block.len();
        block.extend(args);
        if block.len() > 0xFFFF {
            return Err(KernelError::NoMemory("environment larger than 64 KB"));
        }
        let base = self.alloc_tiled(block.len() as u32, RegionKind::System)?;
        let _ = self.machine.write_linear(base, &block);
        self.pcb.env_base = base;
        self.pcb.env_sel = tile_selector(base).ok_or(KernelError::NoMemory("selectors"))?;
        self.pcb.cmd_offset = cmd_offset as u16;
        Ok(())
    }

    /// Reserve and map a 64 KB tile region of `size` bytes with a tiled
    /// data selector; returns its linear base.
    pub(crate) fn alloc_tiled(&mut self, size: u32, kind: RegionKind) -> Result<u32, KernelError> {
        let base = self.pcb.mem.reserve(size, false, kind)?;
        self.pcb
            .mem
            .map(&mut self.machine, base, round_up(size.max(1), PAGE), true)?;
        self.kernel
            .desc
            .tile(&mut self.machine, base, size, crate::desc::DATA3)
            .ok_or(KernelError::NoMemory("selectors"))?;
        Ok(base)
    }

    // ---- public API for the trace runtime and tools ----

    /// The loaded modules, the EXE first.
    pub fn modules(&self) -> &[LoadedModule] {
        &self.pcb.modules
    }

    /// The module called `name` (case-insensitive).
    pub fn module(&self, name: &str) -> Option<&LoadedModule> {
        self.pcb
            .modules
            .iter()
            .find(|m| !m.freed && m.name.eq_ignore_ascii_case(name))
    }

    /// The emulated machine (registers, cycle count).
    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    /// The emulated machine, mutable (registers, single-step flag).
    pub fn machine_mut(&mut self) -> &mut Machine {
        &mut self.machine
    }

    /// The emulated clock.
    pub fn clock(&self) -> &Clock {
        &self.kernel.clock
    }

    /// The emulated clock, mutable (to charge trace costs).
    pub fn clock_mut(&mut self) -> &mut Clock {
        &mut self.kernel.clock
    }

    /// The emulated date and time now.
    pub fn now(&self) -> crate::clock::DateTime {
        self.kernel.clock.now(self.machine.cycles())
    }

    /// Milliseconds of emulated time since the start.
    pub fn now_millis(&self) -> u64 {
        self.kernel.clock.millis(self.machine.cycles())
    }

    /// Read guest memory at a linear address.
    pub fn read_guest(&mut self, lin: u32, out: &mut [u8]) -> Result<(), Fault> {
        self.machine.read_linear(lin, out)
    }

    /// Write guest memory at a linear address.
    pub fn write_guest(&mut self, lin: u32, data: &[u8]) -> Result<(), Fault> {
        self.machine.write_linear(lin, data)
    }

    /// Patch code bytes (INT3) at a linear address; cached decodes drop.
    pub fn patch_code(&mut self, lin: u32, data: &[u8]) -> Result<(), Fault> {
        self.machine.patch_code(lin, data)
    }

    /// Linear address of `sel:off` if `len` bytes (at least one) fit in
    /// the segment, checked as the CPU checks a read
    /// ([`emu::Machine::resolve`]).
    pub fn selector_to_linear(&self, sel: u16, off: u32, len: u32) -> Option<u32> {
        self.machine
            .resolve(sel, off, len.max(1), emu::Access::Read)
            .ok()
    }

    /// Mark the page holding `lin` present or not present (the frame is
    /// kept). Returns false if no page is mapped there.
    pub fn set_page_present(&mut self, lin: u32, present: bool) -> bool {
        self.pcb.mem.set_present(&mut self.machine, lin, present)
    }

    /// Send API log entries to `sink` as they happen instead of keeping
    /// them (only when [`ProcessConfig::api_log`] is set).
    pub fn set_api_log_sink(&mut self, sink: ApiLogSink) {
        self.host.log_sink = Some(sink);
    }

    /// Every API call so far (only when [`ProcessConfig::api_log`] is set
    /// and no sink was given).
    pub fn api_log(&self) -> &[ApiLogEntry] {
        &self.host.log
    }

    /// The DosBeep calls made: (frequency Hz, duration ms).
    pub fn beeps(&self) -> &[(u32, u32)] {
        &self.host.beeps
    }

    /// Guest instructions executed so far.
    pub fn instructions(&self) -> u64 {
        self.kernel.executed
    }

    /// The host directory behind `C:\OS2` (the built-in CMD.EXE) if the
    /// run has reached it so far: it is made on first use, and removed
    /// when the process is dropped.
    pub fn system_dir(&self) -> Option<&std::path::Path> {
        self.kernel.fs.system_dir()
    }

    /// The file system together with the running process's file table,
    /// as a file API call sees them.
    pub(crate) fn files(&mut self) -> Files<'_> {
        Files {
            fs: &mut self.kernel.fs,
            table: &mut self.pcb.files,
        }
    }

    // ---- guest memory helpers for APIs ----

    /// Linear address of a guest pointer argument: 16:16 for 16-bit APIs,
    /// flat otherwise. `None` for null or a pointer whose `len` bytes are
    /// outside its segment.
    pub(crate) fn ptr(&self, raw: u32, far16: bool, len: u32) -> Option<u32> {
        if raw == 0 {
            return None;
        }
        if far16 {
            self.selector_to_linear((raw >> 16) as u16, raw & 0xFFFF, len)
        } else {
            Some(raw)
        }
    }

    pub(crate) fn read_mem(&mut self, lin: u32, len: u32) -> Option<Vec<u8>> {
        // `len` comes from the guest: no buffer larger than its memory can
        // be valid, and the host must not be asked for 4 GB.
        if len as usize > self.cfg.ram_size {
            return None;
        }
        let mut v = vec![0; len as usize];
        self.machine.read_linear(lin, &mut v).ok()?;
        Some(v)
    }

    pub(crate) fn write_mem(&mut self, lin: u32, data: &[u8]) -> bool {
        self.machine.write_linear(lin, data).is_ok()
    }

    /// A NUL-terminated string at a guest pointer (at most `max` bytes).
    pub(crate) fn read_sz(&mut self, raw: u32, far16: bool, max: u32) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let start = self.ptr(raw, far16, 1)?;
        let limit = if far16 {
            let sel = (raw >> 16) as u16;
            let d = self.kernel.desc.get(sel)?;
            (d.limit().saturating_sub(raw & 0xFFFF))
                .saturating_add(1)
                .min(max)
        } else {
            max
        };
        for i in 0..limit {
            let mut b = [0u8];
            self.machine
                .read_linear(start.wrapping_add(i), &mut b)
                .ok()?;
            if b[0] == 0 {
                return Some(out);
            }
            out.push(b[0]);
        }
        None
    }
}

/// Latin-1 bytes of a string (characters above U+00FF become `?`).
pub(crate) fn latin1(s: &str) -> Vec<u8> {
    s.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

/// Quote an argument that contains blanks, as CMD.EXE would pass it.
fn quote_arg(a: &str) -> String {
    if a.is_empty() || a.contains([' ', '\t']) {
        format!("\"{a}\"")
    } else {
        a.to_string()
    }
}
