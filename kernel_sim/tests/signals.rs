//! DosSetSignalExceptionFocus, DosEnterMustComplete/DosExitMustComplete
//! and DosForceDelete from 32-bit guest code: the counters, their limits
//! and the documented error codes.

mod common;

use kernel_sim::{Outcome, Process, ProcessConfig};

/// Scratch memory: the start of the stack object.
const RC: u32 = 0x20000;
/// Where the calls' ULONG outputs go.
const OUT: u32 = 0x20080;
/// A string argument.
const TEXT: u32 = 0x20100;

/// A 32-bit program under construction: code and its DOSCALLS call sites.
#[derive(Default)]
struct Prog {
    code: Vec<u8>,
    calls: Vec<(u32, &'static str, u32)>,
    n: u32,
}

impl Prog {
    fn push(&mut self, v: u32) {
        self.code.push(0x68);
        self.code.extend(v.to_le_bytes());
    }

    /// Call DOSCALLS.`ordinal`(args) and store EAX at RC + 4 * n.
    fn call(&mut self, ordinal: u32, args: &[u32]) {
        for a in args.iter().rev() {
            self.push(*a);
        }
        self.emit_call(ordinal);
        self.code.extend([0x83, 0xC4, (4 * args.len()) as u8]);
        self.code.push(0xA3); // mov [RC + 4n], eax
        self.code.extend((RC + 4 * self.n).to_le_bytes());
        self.n += 1;
    }

    /// Copy the ULONG at OUT to OUT + 4 * (1 + slot).
    fn keep_out(&mut self, slot: u32) {
        self.code.push(0xA1);
        self.code.extend(OUT.to_le_bytes());
        self.code.push(0xA3);
        self.code.extend((OUT + 4 * (1 + slot)).to_le_bytes());
    }

    fn emit_call(&mut self, ordinal: u32) {
        self.calls
            .push((self.code.len() as u32, "DOSCALLS", ordinal));
        self.code.extend([0xE8, 0, 0, 0, 0]);
    }

    /// Store `s` and a NUL at TEXT.
    fn text(&mut self, s: &[u8]) {
        for (i, b) in s.iter().chain([&0u8]).enumerate() {
            self.code.extend([0xC6, 0x05]);
            self.code.extend((TEXT + i as u32).to_le_bytes());
            self.code.push(*b);
        }
    }

    /// DosExit(EXIT_PROCESS, 0) and the module.
    fn finish(mut self) -> Vec<u8> {
        self.push(0);
        self.push(1);
        self.emit_call(234);
        common::lx_program(&self.code, &self.calls)
    }
}

/// Runs a program in `dir`; returns the outcome and the 512 bytes at RC.
fn run_in(dir: &std::path::Path, bytes: Vec<u8>) -> (Outcome, Vec<u8>) {
    std::fs::write(dir.join("T.EXE"), bytes).unwrap();
    let mut cfg = ProcessConfig::new(dir, "T.EXE");
    cfg.max_instructions = Some(50_000_000);
    let mut p = Process::new(cfg).unwrap();
    let o = p.run();
    let mut mem = vec![0u8; 512];
    p.read_guest(RC, &mut mem).unwrap();
    (o, mem)
}

fn u32_at(mem: &[u8], lin: u32) -> u32 {
    let i = (lin - RC) as usize;
    u32::from_le_bytes(mem[i..i + 4].try_into().unwrap())
}

const FOCUS: u32 = 378;
const ENTER: u32 = 380;
const EXIT: u32 = 381;

#[test]
fn signal_focus_counts_up_and_down() {
    let mut p = Prog::default();
    p.call(FOCUS, &[1, OUT]); // 0: 1
    p.keep_out(0);
    p.call(FOCUS, &[1, OUT]); // 1: 2
    p.keep_out(1);
    p.call(FOCUS, &[2, OUT]); // 2: bad flag
    p.call(FOCUS, &[1, 0x7000_0000]); // 3: bad pointer, count stays 2
    p.call(FOCUS, &[0, OUT]); // 4: 1
    p.keep_out(2);
    p.call(FOCUS, &[0, 0]); // 5: 0, null pointer allowed
    p.call(FOCUS, &[0, OUT]); // 6: already reset
    p.keep_out(3);
    let dir = tempfile::tempdir().unwrap();
    let (o, mem) = run_in(dir.path(), p.finish());
    assert_eq!(o, Outcome::Exited(0));
    let rc: Vec<u32> = (0..7).map(|i| u32_at(&mem, RC + 4 * i)).collect();
    assert_eq!(rc, [0, 0, 87, 487, 0, 0, 300]);
    let out: Vec<u32> = (0..4).map(|i| u32_at(&mem, OUT + 4 * (1 + i))).collect();
    assert_eq!(
        out,
        [1, 2, 1, 1],
        "the count after each call; unchanged on error"
    );
}

#[test]
fn must_complete_nests() {
    let mut p = Prog::default();
    p.call(ENTER, &[OUT]);
    p.keep_out(0);
    p.call(ENTER, &[OUT]);
    p.keep_out(1);
    p.call(EXIT, &[OUT]);
    p.keep_out(2);
    p.call(EXIT, &[0]);
    p.call(EXIT, &[OUT]);
    p.call(ENTER, &[0x7000_0000]);
    p.call(EXIT, &[OUT]);
    let dir = tempfile::tempdir().unwrap();
    let (o, mem) = run_in(dir.path(), p.finish());
    assert_eq!(o, Outcome::Exited(0));
    let rc: Vec<u32> = (0..7).map(|i| u32_at(&mem, RC + 4 * i)).collect();
    assert_eq!(rc, [0, 0, 0, 0, 300, 487, 300]);
    let out: Vec<u32> = (0..3).map(|i| u32_at(&mem, OUT + 4 * (1 + i))).collect();
    assert_eq!(out, [1, 2, 1]);
}

/// 65535 nested calls succeed, the next is ERROR_NESTING_TOO_DEEP (650).
fn nesting_limit(ordinal: u32, args: &[u32]) {
    let mut p = Prog::default();
    p.code.extend([0xB9]); // mov ecx, 65535
    p.code.extend(65535u32.to_le_bytes());
    let top = p.code.len();
    p.code.push(0x51); // push ecx
    for a in args.iter().rev() {
        p.push(*a);
    }
    p.emit_call(ordinal);
    p.code.extend([0x83, 0xC4, (4 * args.len()) as u8]);
    p.code.push(0x59); // pop ecx
    p.code.extend([0x09, 0xC0]); // or eax, eax
    p.code.extend([0x75, 0x04]); // jnz +4 (skip the loop)
    let back = top as i32 - (p.code.len() as i32 + 2);
    p.code.extend([0xE2, back as i8 as u8]); // loop top
    p.code.extend([0xEB, 0x00]); // jmp +0
    p.code.extend([0x89, 0x0D]); // mov [RC+0x40], ecx (0 when all succeeded)
    p.code.extend((RC + 0x40).to_le_bytes());
    p.call(ordinal, args);
    let dir = tempfile::tempdir().unwrap();
    let (o, mem) = run_in(dir.path(), p.finish());
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(u32_at(&mem, RC + 0x40), 0, "every nested call succeeded");
    assert_eq!(u32_at(&mem, RC), 650, "ERROR_NESTING_TOO_DEEP");
    assert_eq!(u32_at(&mem, OUT), 65535);
}

#[test]
fn focus_nests_at_most_65535_deep() {
    nesting_limit(FOCUS, &[1, OUT]);
}

#[test]
fn must_complete_nests_at_most_65535_deep() {
    nesting_limit(ENTER, &[OUT]);
}

#[test]
fn force_delete_removes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("GONE.TXT"), b"x").unwrap();
    let mut p = Prog::default();
    p.text(b"GONE.TXT");
    p.call(110, &[TEXT]);
    p.call(110, &[TEXT]);
    p.call(110, &[0x7000_0000]);
    let (o, mem) = run_in(dir.path(), p.finish());
    assert_eq!(o, Outcome::Exited(0));
    assert!(!dir.path().join("GONE.TXT").exists());
    let rc: Vec<u32> = (0..3).map(|i| u32_at(&mem, RC + 4 * i)).collect();
    assert_eq!(
        rc,
        [0, 2, 487],
        "NO_ERROR, ERROR_FILE_NOT_FOUND, ERROR_INVALID_ADDRESS"
    );
}
