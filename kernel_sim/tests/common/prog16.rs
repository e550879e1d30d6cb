//! 16-bit test programs that call system DLLs with far pascal calls and
//! check each return code and result word, as the KBDCALLS, MONCALLS
//! and VIOCALLS tests write them.

use super::{ne_program, push};
use kernel_sim::{ConsoleBuffer, Outcome, Process, ProcessConfig};

/// A 16-bit program being written.
#[derive(Default)]
pub struct Prog {
    pub c: Vec<u8>,
    pub calls: Vec<(u32, &'static str, u32)>,
}

pub enum A {
    /// DS:offset.
    P(u16),
    /// A word.
    W(u16),
    /// The word at DS:offset.
    M(u16),
}

impl Prog {
    pub fn far_call(&mut self, module: &'static str, ordinal: u32) {
        self.calls.push((self.c.len() as u32, module, ordinal));
        self.c.extend([0x9A, 0, 0, 0, 0]);
    }
    /// DosExit(1, code) when the last compare was not equal.
    pub fn or_exit(&mut self, tag: u16) {
        self.c.extend([0x74, 11]);
        self.c.extend(push(1));
        self.c.extend(push(tag));
        self.far_call("DOSCALLS", 5);
    }
    /// MODULE.ordinal(args) (pascal: pushed in order), its result not
    /// checked.
    pub fn call_only(&mut self, module: &'static str, ordinal: u32, args: &[A]) {
        for a in args {
            match a {
                A::P(off) => {
                    self.c.push(0x1E);
                    self.c.extend(push(*off));
                }
                A::W(v) => self.c.extend(push(*v)),
                A::M(off) => {
                    self.c.extend([0xFF, 0x36]);
                    self.c.extend(off.to_le_bytes());
                }
            }
        }
        self.far_call(module, ordinal);
    }
    /// MODULE.ordinal(args) (pascal: pushed in order), expecting AX = rc.
    pub fn call(&mut self, module: &'static str, ordinal: u32, args: &[A], rc: u16, tag: u16) {
        self.call_only(module, ordinal, args);
        self.c.push(0x3D);
        self.c.extend(rc.to_le_bytes());
        self.or_exit(tag);
    }
    /// DosExit(EXIT_PROCESS, code).
    pub fn exit(&mut self, code: u16) {
        self.call_only("DOSCALLS", 5, &[A::W(1), A::W(code)]);
    }
    /// `mov [at], ax`.
    pub fn store_ax(&mut self, at: u16) {
        self.c.push(0xA3);
        self.c.extend(at.to_le_bytes());
    }
    /// `mov [at], ds`.
    pub fn store_ds(&mut self, at: u16) {
        self.c.extend([0x8C, 0x1E]);
        self.c.extend(at.to_le_bytes());
    }
    /// `mov word [at], v`.
    pub fn store(&mut self, at: u16, v: u16) {
        self.c.extend([0xC7, 0x06]);
        self.c.extend(at.to_le_bytes());
        self.c.extend(v.to_le_bytes());
    }
    /// Unless the word at `at` is `v`: exit `tag`.
    pub fn check(&mut self, at: u16, v: u16, tag: u16) {
        self.c.extend([0x81, 0x3E]);
        self.c.extend(at.to_le_bytes());
        self.c.extend(v.to_le_bytes());
        self.or_exit(tag);
    }
    /// The program ending with DosExit(1, 0), with 0x200 bytes of data.
    pub fn finish(mut self) -> Vec<u8> {
        self.exit(0);
        self.build(&[0; 0x200])
    }
    /// The program as it is, `data` its data segment.
    pub fn build(&self, data: &[u8]) -> Vec<u8> {
        ne_program(&self.c, data, &self.calls)
    }
}

/// Runs a program with `input` as its standard input (the console
/// otherwise captured); its outcome.
pub fn run(bytes: Vec<u8>, input: &'static [u8]) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    p.set_console(
        Box::new(ConsoleBuffer::new()),
        Box::new(ConsoleBuffer::new()),
        Box::new(std::io::Cursor::new(input)),
    );
    p.run()
}
