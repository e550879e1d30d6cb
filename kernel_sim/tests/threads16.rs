//! 16-bit DosCreateThread (DOSCALLS.145): threads of an NE program on
//! stacks it gives, ending by DosExit(EXIT_THREAD) or a far return, and
//! DosEnterCritSec/DosExitCritSec, under the deterministic scheduler.

mod common;

use common::{ne_program, push};
use kernel_sim::{Outcome, Process, ProcessConfig};

/// 16-bit code with far calls to DOSCALLS.
struct Code16 {
    c: Vec<u8>,
    calls: Vec<(u32, &'static str, u32)>,
}

impl Code16 {
    fn raw(&mut self, b: &[u8]) -> &mut Code16 {
        self.c.extend(b);
        self
    }
    fn push(&mut self, v: u16) -> &mut Code16 {
        self.c.extend(push(v));
        self
    }
    /// `push ds; push off`: a far pointer into the data segment.
    fn data_ptr(&mut self, off: u16) -> &mut Code16 {
        self.c.push(0x1E);
        self.push(off)
    }
    fn call(&mut self, ordinal: u32) -> &mut Code16 {
        self.calls.push((self.c.len() as u32, "DOSCALLS", ordinal));
        self.raw(&[0x9A, 0, 0, 0, 0])
    }
    /// DosWrite(1, DS:off, 1, DS:0x12).
    fn write_byte(&mut self, off: u16) -> &mut Code16 {
        self.push(1).data_ptr(off).push(1).data_ptr(0x12).call(138)
    }
    /// Unless AX is 0: DosExit(1, tag).
    fn expect0(&mut self, tag: u16) -> &mut Code16 {
        self.raw(&[0x85, 0xC0, 0x74, 0]);
        let at = self.c.len();
        self.push(1).push(tag).call(5);
        self.c[at - 1] = (self.c.len() - at) as u8;
        self
    }
    /// DosCreateThread(CS:func, DS:tid, DS:stack), patching the function
    /// offset later: returns where it is.
    fn create(&mut self, tid: u16, stack: u16) -> usize {
        self.raw(&[0x0E, 0x68]);
        let at = self.c.len();
        self.raw(&[0, 0]).data_ptr(tid).data_ptr(stack).call(145);
        self.expect0(0xEE);
        at
    }
    fn here_into(&mut self, at: usize) {
        let off = self.c.len() as u16;
        self.c[at..at + 2].copy_from_slice(&off.to_le_bytes());
    }
}

fn run(code: &Code16, data: &[u8]) -> (Outcome, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("T.EXE"),
        ne_program(&code.c, data, &code.calls),
    )
    .unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(2_000_000);
    let mut p = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut p);
    let o = p.run();
    (o, out.text())
}

#[test]
fn threads_run_on_their_stacks_and_end_by_dosexit_or_return() {
    // Data: 0..3 "ABC", 0x10/0x14 the TIDs, 0x12 the count DosWrite gives,
    // stacks below 0x1F0 and 0x2E0.
    let mut data = vec![0u8; 0x300];
    data[..3].copy_from_slice(b"ABC");
    let mut c = Code16 {
        c: Vec::new(),
        calls: Vec::new(),
    };
    let f1 = c.create(0x10, 0x1F0);
    let f2 = c.create(0x14, 0x2E0);
    // DosSleep(50): both threads run meanwhile.
    c.push(0).push(50).call(32);
    c.write_byte(0);
    // DosExit(EXIT_PROCESS, the first thread's TID).
    c.push(1).raw(&[0xFF, 0x36, 0x10, 0]).call(5);
    // Thread 1: writes B, DosExit(EXIT_THREAD, 0).
    c.here_into(f1);
    c.write_byte(1);
    c.push(0).push(0).call(5);
    // Thread 2: writes C, returns far with AX 7.
    c.here_into(f2);
    c.write_byte(2);
    c.raw(&[0xB8, 7, 0, 0xCB]);
    let (o, text) = run(&c, &data);
    assert_eq!((o, text.as_str()), (Outcome::Exited(2), "BCA"));
}

#[test]
fn a_critical_section_keeps_the_other_threads_out() {
    let mut data = vec![0u8; 0x300];
    data[..3].copy_from_slice(b"ABC");
    let mut c = Code16 {
        c: Vec::new(),
        calls: Vec::new(),
    };
    // DosEnterCritSec, create a thread, DosSleep(10): only this thread
    // runs, so A comes first; DosExitCritSec, DosSleep(10): then B.
    c.call(3).expect0(0xE1);
    let f1 = c.create(0x10, 0x1F0);
    c.push(0).push(10).call(32);
    c.write_byte(0);
    c.call(6).expect0(0xE2);
    c.push(0).push(10).call(32);
    // A second DosExitCritSec: ERROR_CRITSEC_UNDERFLOW (485) is the exit.
    c.call(6);
    c.raw(&[0x50]);
    c.push(1);
    c.raw(&[0x58, 0x5B, 0x50, 0x53]);
    c.call(5);
    c.here_into(f1);
    c.write_byte(1);
    c.push(0).push(0).call(5);
    let (o, text) = run(&c, &data);
    assert_eq!((o, text.as_str()), (Outcome::Exited(485), "AB"));
}
