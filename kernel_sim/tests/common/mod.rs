//! What the tests share: bare NE and LX programs (testprogs' `bare`),
//! hand-assembled 16- and 32-bit code, a testprogs program loaded into
//! a process of its own, running programs in a sandbox with the console
//! captured.

#![allow(dead_code)]

pub mod prog16;
pub mod threaded;
pub mod toolkit;

pub use testprogs::bare::{lx_program, ne_program};

/// `push imm16`.
pub fn push(v: u16) -> Vec<u8> {
    let [lo, hi] = v.to_le_bytes();
    vec![0x68, lo, hi]
}

/// Code that calls DosOpen(name at DS:0, &h at DS:0x100, &action at
/// DS:0x102, 0, 0, flags, mode, 0) and exits with its return code.
pub fn open_program(name: &str, flags: u16, mode: u16) -> Vec<u8> {
    let mut c = Vec::new();
    for off in [0u16, 0x100, 0x102] {
        c.push(0x1E);
        c.extend(push(off));
    }
    for v in [0, 0, 0, flags, mode, 0, 0] {
        c.extend(push(v));
    }
    let open_at = c.len() as u32;
    c.extend([0x9A, 0, 0, 0, 0]);
    c.extend(push(1));
    c.push(0x50);
    let exit_at = c.len() as u32;
    c.extend([0x9A, 0, 0, 0, 0]);
    let mut data = name.as_bytes().to_vec();
    data.push(0);
    ne_program(
        &c,
        &data,
        &[(open_at, "DOSCALLS", 70), (exit_at, "DOSCALLS", 5)],
    )
}

/// `program` written into a fresh sandbox and loaded, with `max_insns`
/// and its console captured: (process, console, the sandbox to keep).
pub fn testprogs_process(
    program: &testprogs::Program,
    max_insns: u64,
) -> (
    kernel_sim::Process,
    kernel_sim::ConsoleBuffer,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    program.write_to(dir.path()).unwrap();
    let mut cfg = kernel_sim::ProcessConfig::new(dir.path(), program.file_name);
    cfg.max_instructions = Some(max_insns);
    let mut p = kernel_sim::Process::new(cfg).unwrap();
    let out = capture_console(&mut p);
    (p, out, dir)
}

/// `files` written into a fresh sandbox, then T.EXE run there with an
/// instruction budget and its console captured: (outcome, console bytes,
/// the process).
pub fn run_files(
    files: &[(&str, Vec<u8>)],
    max_insns: u64,
) -> (kernel_sim::Outcome, Vec<u8>, kernel_sim::Process) {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let mut cfg = kernel_sim::ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(max_insns);
    let mut p = kernel_sim::Process::new(cfg).unwrap();
    let out = capture_console(&mut p);
    let o = p.run();
    (o, out.contents(), p)
}

/// The process's stdout and stderr go to one buffer (returned), stdin is
/// empty.
pub fn capture_console(p: &mut kernel_sim::Process) -> kernel_sim::ConsoleBuffer {
    let out = kernel_sim::ConsoleBuffer::new();
    p.set_console(
        Box::new(out.clone()),
        Box::new(out.clone()),
        Box::new(std::io::empty()),
    );
    out
}

/// Data area: the bottom of the stack object (base 0x20000, ESP starts
/// at 0x24000).
pub const DATA: u32 = 0x20000;

/// A 32-bit LX program being written: code bytes and its import calls
/// (see [`lx_program`]).
pub struct Code {
    pub c: Vec<u8>,
    pub calls: Vec<(u32, &'static str, u32)>,
}

impl Code {
    pub fn new() -> Code {
        Code {
            c: Vec::new(),
            calls: Vec::new(),
        }
    }
    pub fn push(&mut self, v: u32) -> &mut Code {
        self.c.push(0x68);
        self.c.extend(v.to_le_bytes());
        self
    }
    /// `push dword [addr]`.
    pub fn push_mem(&mut self, addr: u32) -> &mut Code {
        self.c.extend([0xFF, 0x35]);
        self.c.extend(addr.to_le_bytes());
        self
    }
    /// `mov dword [addr], v`.
    pub fn store(&mut self, addr: u32, v: u32) -> &mut Code {
        self.c.extend([0xC7, 0x05]);
        self.c.extend(addr.to_le_bytes());
        self.c.extend(v.to_le_bytes());
        self
    }
    pub fn call(&mut self, module: &'static str, ordinal: u32, arg_bytes: u8) -> &mut Code {
        self.calls.push((self.c.len() as u32, module, ordinal));
        self.c.extend([0xE8, 0, 0, 0, 0]);
        self.c.extend([0x83, 0xC4, arg_bytes]);
        self
    }
    /// `DosExit(1, eax)`.
    pub fn exit_eax(&mut self) -> Vec<u8> {
        self.c.extend([0x50, 0x6A, 0x01]);
        self.call("DOSCALLS", 234, 8);
        lx_program(&self.c, &self.calls)
    }
    /// DosOpen("T.DAT", &h at DATA+0x100, ...) creating or replacing it.
    pub fn open_t_dat(&mut self) -> &mut Code {
        self.open(*b"T.DAT", DATA + 0x100)
    }
    /// DosOpen(name, &h at `handle`, ...) creating or replacing it.
    pub fn open(&mut self, name: [u8; 5], handle: u32) -> &mut Code {
        self.store(
            DATA,
            u32::from_le_bytes([name[0], name[1], name[2], name[3]]),
        )
        .store(DATA + 4, u32::from(name[4]))
        .push(0)
        .push(0x42)
        .push(0x12)
        .push(0)
        .push(0)
        .push(DATA + 0x104)
        .push(handle)
        .push(DATA)
        .call("DOSCALLS", 273, 32)
    }
    /// DosWrite(h at `handle`, DATA, `len`, &n).
    pub fn write(&mut self, handle: u32, len: u32) -> &mut Code {
        self.push(DATA + 0x10C)
            .push(len)
            .push(DATA)
            .push_mem(handle)
            .call("DOSCALLS", 282, 16)
    }
    /// Unless EAX is `rc`: `DosExit(1, tag)`.
    pub fn expect(&mut self, rc: u32, tag: u32) -> &mut Code {
        self.c.push(0x3D);
        self.c.extend(rc.to_le_bytes());
        let skip = self.c.len() + 1;
        self.c.extend([0x74, 0]);
        self.c.push(0xB8);
        self.c.extend(tag.to_le_bytes());
        self.c.extend([0x50, 0x6A, 0x01]);
        self.call("DOSCALLS", 234, 8);
        self.c[skip] = (self.c.len() - skip - 1) as u8;
        self
    }
    /// `mov eax, [addr]`.
    pub fn load_eax(&mut self, addr: u32) -> &mut Code {
        self.c.push(0xA1);
        self.c.extend(addr.to_le_bytes());
        self
    }
    /// `sub eax, [addr]`.
    pub fn sub_eax(&mut self, addr: u32) -> &mut Code {
        self.c.extend([0x2B, 0x05]);
        self.c.extend(addr.to_le_bytes());
        self
    }
    /// `jcc rel32` (`0F cc`) to `target`, or to a place patched later
    /// (`target` None): returns where the rel32 is.
    pub fn jcc(&mut self, cc: u8, target: Option<usize>) -> usize {
        self.c.extend([0x0F, cc]);
        let at = self.c.len();
        let rel = target.map_or(0, |t| t as i32 - (at as i32 + 4));
        self.c.extend(rel.to_le_bytes());
        at
    }
    /// Points the rel32 at `at` to here.
    pub fn land(&mut self, at: usize) {
        let rel = self.c.len() as i32 - (at as i32 + 4);
        self.c[at..at + 4].copy_from_slice(&rel.to_le_bytes());
    }
}

/// `jz` (`0F 84`).
pub const JZ: u8 = 0x84;
/// `jnz` (`0F 85`).
pub const JNZ: u8 = 0x85;
