//! KBDCALLS from 16-bit code: KbdGetStatus/KbdSetStatus (modes, echo,
//! turnaround, their errors), KbdPeek (the byte stays for KbdCharIn) and
//! KbdFlushBuffer.

mod common;

use common::{ne_program, push};
use kernel_sim::{ConsoleBuffer, Outcome, Process, ProcessConfig};

/// A 16-bit program being written.
#[derive(Default)]
struct Prog {
    c: Vec<u8>,
    calls: Vec<(u32, &'static str, u32)>,
}

enum A {
    /// DS:offset.
    P(u16),
    /// A word.
    W(u16),
}

impl Prog {
    fn far_call(&mut self, module: &'static str, ordinal: u32) {
        self.calls.push((self.c.len() as u32, module, ordinal));
        self.c.extend([0x9A, 0, 0, 0, 0]);
    }
    /// DosExit(1, code) when the last compare was not equal.
    fn or_exit(&mut self, tag: u16) {
        self.c.extend([0x74, 11]);
        self.c.extend(push(1));
        self.c.extend(push(tag));
        self.far_call("DOSCALLS", 5);
    }
    /// MODULE.ordinal(args) (pascal: pushed in order), expecting AX = rc.
    fn call(&mut self, module: &'static str, ordinal: u32, args: &[A], rc: u16, tag: u16) {
        for a in args {
            match a {
                A::P(off) => {
                    self.c.push(0x1E);
                    self.c.extend(push(*off));
                }
                A::W(v) => self.c.extend(push(*v)),
            }
        }
        self.far_call(module, ordinal);
        self.c.push(0x3D);
        self.c.extend(rc.to_le_bytes());
        self.or_exit(tag);
    }
    /// `mov word [at], v`.
    fn store(&mut self, at: u16, v: u16) {
        self.c.extend([0xC7, 0x06]);
        self.c.extend(at.to_le_bytes());
        self.c.extend(v.to_le_bytes());
    }
    /// Unless the word at `at` is `v`: exit `tag`.
    fn check(&mut self, at: u16, v: u16, tag: u16) {
        self.c.extend([0x81, 0x3E]);
        self.c.extend(at.to_le_bytes());
        self.c.extend(v.to_le_bytes());
        self.or_exit(tag);
    }
    fn finish(mut self) -> Vec<u8> {
        self.c.extend(push(1));
        self.c.extend(push(0));
        self.far_call("DOSCALLS", 5);
        ne_program(&self.c, &[0; 0x200], &self.calls)
    }
}

fn run(bytes: Vec<u8>, input: &'static [u8]) -> Outcome {
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

const GET: u32 = 10;
const SET: u32 = 11;
const FLUSH: u32 = 13;
const PEEK: u32 = 22;
const CHARIN: u32 = 4;

#[test]
fn status_is_kept_and_checked() {
    let mut p = Prog::default();
    p.store(0x10, 10);
    p.call("KBDCALLS", GET, &[A::P(0x10), A::W(0)], 0, 1);
    p.check(0x12, 0x0009, 2); // echo on, ASCII mode
    p.check(0x14, 0x000D, 3); // CR
    // Echo off, binary, a one-byte turnaround of LF (high byte dropped).
    p.store(0x20, 10);
    p.store(0x22, 0x0002 | 0x0004 | 0x0040);
    p.store(0x24, 0x550A);
    p.call("KBDCALLS", SET, &[A::P(0x20), A::W(0)], 0, 4);
    p.store(0x30, 10);
    p.call("KBDCALLS", GET, &[A::P(0x30), A::W(0)], 0, 5);
    p.check(0x32, 0x0006, 6);
    p.check(0x34, 0x000A, 7);
    for (mask, cb, hkbd, rc) in [
        (3u16, 10u16, 0u16, 377u16),
        (0xC, 10, 0, 378),
        (1, 8, 0, 376),
        (1, 10, 1, 439),
    ] {
        p.store(0x20, cb);
        p.store(0x22, mask);
        p.call("KBDCALLS", SET, &[A::P(0x20), A::W(hkbd)], rc, 8);
    }
    assert_eq!(run(p.finish(), b""), Outcome::Exited(0));
}

#[test]
fn peek_keeps_the_key_and_flush_drops_it() {
    let mut p = Prog::default();
    p.call("KBDCALLS", PEEK, &[A::P(0x40), A::W(0)], 0, 1);
    p.check(0x40, u16::from(b'x'), 2); // 'x', scan code 0
    p.check(0x42, 0x0040, 3); // a final character
    // KbdCharIn(&info, IO_WAIT, 0) gets the same key.
    p.call("KBDCALLS", CHARIN, &[A::P(0x50), A::W(0), A::W(0)], 0, 4);
    p.check(0x50, u16::from(b'x'), 5);
    // Peek 'y', flush it: the input is at its end.
    p.call("KBDCALLS", PEEK, &[A::P(0x40), A::W(0)], 0, 6);
    p.check(0x40, u16::from(b'y'), 7);
    p.call("KBDCALLS", FLUSH, &[A::W(0)], 0, 8);
    p.call("KBDCALLS", FLUSH, &[A::W(2)], 439, 9);
    p.call("KBDCALLS", PEEK, &[A::P(0x40), A::W(0)], 0, 10);
    p.check(0x42, 0, 11); // no key
    p.call("KBDCALLS", CHARIN, &[A::P(0x50), A::W(0), A::W(0)], 0, 12);
    p.check(0x50, 0x1A, 13);
    assert_eq!(run(p.finish(), b"xy"), Outcome::Exited(0));
}
