//! MONCALLS from 16-bit code: a keyboard monitor opens KBD$, registers
//! its buffers, reads the typed keys as packets, changes them and writes
//! them on, through a chain of two, to the keyboard that KbdCharIn
//! reads; and every error code of the five calls.

mod common;

use common::prog16::{A, Prog, run};
use kernel_sim::Outcome;

const WRITE: u32 = 1;
const READ: u32 = 2;
const CLOSE: u32 = 3;
const OPEN: u32 = 4;
const REG: u32 = 5;
const CHARIN: u32 = 4;

/// Stores the NUL-terminated `s` at `at` (even length + NUL word).
fn store_sz(p: &mut Prog, at: u16, s: &[u8]) {
    let mut b = s.to_vec();
    b.extend([0, 0]);
    for (i, w) in b.chunks(2).enumerate() {
        let v = u16::from_le_bytes([w[0], *w.get(1).unwrap_or(&0)]);
        p.store(at + 2 * i as u16, v);
    }
}

/// Reads a record from the input buffer at `buf` (room 64) into 0x60.
fn read(p: &mut Prog, buf: u16, wait: u16, rc: u16, tag: u16) {
    p.store(0x5E, 64);
    p.call(
        "MONCALLS",
        READ,
        &[A::P(buf), A::W(wait), A::P(0x60), A::P(0x5E)],
        rc,
        tag,
    );
}

#[test]
fn a_monitor_sees_and_changes_the_keys() {
    let mut p = Prog::default();
    store_sz(&mut p, 0x70, b"XYZ$");
    p.call("MONCALLS", OPEN, &[A::P(0x70), A::P(0x10)], 380, 1);
    store_sz(&mut p, 0x70, b"LPT1");
    p.call("MONCALLS", OPEN, &[A::P(0x70), A::P(0x10)], 165, 2);
    store_sz(&mut p, 0x70, b"KBD$");
    p.call("MONCALLS", OPEN, &[A::P(0x70), A::P(0x10)], 0, 3);
    p.check(0x10, 1, 4);
    p.store(0x100, 64);
    p.store(0x140, 64);
    p.store(0x180, 32);
    p.store(0x1C0, 64);
    let reg = |p: &mut Prog, h: u16, i: u16, o: u16, pos: u16, idx: u16, rc: u16, tag: u16| {
        p.call(
            "MONCALLS",
            REG,
            &[A::W(h), A::P(i), A::P(o), A::W(pos), A::W(idx)],
            rc,
            tag,
        );
    };
    reg(&mut p, 2, 0x100, 0x140, 2, 0, 381, 5);
    reg(&mut p, 1, 0x100, 0x140, 3, 0, 379, 6);
    reg(&mut p, 1, 0x100, 0x140, 0, 16, 379, 7);
    reg(&mut p, 1, 0x180, 0x1C0, 0, 0, 382, 8);
    reg(&mut p, 1, 0x100, 0x100, 0, 0, 379, 9);
    reg(&mut p, 1, 0x100, 0x140, 2, 0, 0, 10);
    reg(&mut p, 1, 0x100, 0x1C0, 2, 0, 379, 11);
    // The typed 'a' is a 14-byte packet: char, scan, status "final".
    read(&mut p, 0x100, 0, 0, 12);
    p.check(0x5E, 14, 13);
    p.check(0x62, u16::from(b'a'), 14);
    p.check(0x64, 0x0040, 15);
    // The monitor makes it 'A' and writes it on: the keyboard gets 'A'.
    p.store(0x62, u16::from(b'A'));
    p.call(
        "MONCALLS",
        WRITE,
        &[A::P(0x140), A::P(0x60), A::W(14)],
        0,
        16,
    );
    p.call("KBDCALLS", CHARIN, &[A::P(0x50), A::W(0), A::W(0)], 0, 17);
    p.check(0x50, u16::from(b'A'), 18);
    // A data buffer too small for the packet; the packet stays.
    p.store(0x5E, 4);
    p.call(
        "MONCALLS",
        READ,
        &[A::P(0x100), A::W(1), A::P(0x60), A::P(0x5E)],
        382,
        19,
    );
    read(&mut p, 0x100, 1, 0, 20);
    p.check(0x62, u16::from(b'b'), 21);
    // The monitor drops 'b': nothing reaches the keyboard. The input
    // has ended: the buffer stays empty.
    read(&mut p, 0x100, 1, 383, 22);
    read(&mut p, 0x100, 0, 383, 23);
    read(&mut p, 0x100, 2, 379, 24);
    p.call(
        "MONCALLS",
        WRITE,
        &[A::P(0x140), A::P(0x60), A::W(65)],
        384,
        25,
    );
    p.call(
        "MONCALLS",
        WRITE,
        &[A::P(0x140), A::P(0x60), A::W(0)],
        379,
        26,
    );
    p.call(
        "MONCALLS",
        WRITE,
        &[A::P(0x1C0), A::P(0x60), A::W(14)],
        379,
        27,
    );
    p.call("KBDCALLS", CHARIN, &[A::P(0x50), A::W(0), A::W(0)], 0, 28);
    p.check(0x50, 0x1A, 29);
    p.call("MONCALLS", CLOSE, &[A::W(1)], 0, 30);
    p.call("MONCALLS", CLOSE, &[A::W(1)], 381, 31);
    read(&mut p, 0x100, 1, 379, 32);
    assert_eq!(run(p.finish(), b"ab"), Outcome::Exited(0));
}

#[test]
fn a_chain_of_two_monitors_passes_keys_in_order() {
    let mut p = Prog::default();
    store_sz(&mut p, 0x70, b"KBD$");
    p.call("MONCALLS", OPEN, &[A::P(0x70), A::P(0x10)], 0, 1);
    for b in [0x100, 0x140, 0x180, 0x1C0] {
        p.store(b, 64);
    }
    // The first registered goes to the back; the second asks for the
    // front, so it sees the keys first.
    p.call(
        "MONCALLS",
        REG,
        &[A::W(1), A::P(0x100), A::P(0x140), A::W(0), A::W(0)],
        0,
        2,
    );
    p.call(
        "MONCALLS",
        REG,
        &[A::W(1), A::P(0x180), A::P(0x1C0), A::W(1), A::W(0)],
        0,
        3,
    );
    // The back monitor has nothing until the front one writes.
    read(&mut p, 0x100, 1, 383, 4);
    read(&mut p, 0x180, 0, 0, 5);
    p.check(0x62, u16::from(b'x'), 6);
    p.store(0x62, u16::from(b'y'));
    p.call(
        "MONCALLS",
        WRITE,
        &[A::P(0x1C0), A::P(0x60), A::W(14)],
        0,
        7,
    );
    // The front monitor also adds a record of its own.
    p.store(0x62, u16::from(b'z'));
    p.call(
        "MONCALLS",
        WRITE,
        &[A::P(0x1C0), A::P(0x60), A::W(14)],
        0,
        8,
    );
    // The back one's buffer (64 - 20 bytes) holds two 14-byte packets
    // with their headers, not a third.
    p.call(
        "MONCALLS",
        WRITE,
        &[A::P(0x1C0), A::P(0x60), A::W(14)],
        384,
        9,
    );
    read(&mut p, 0x100, 1, 0, 10);
    p.check(0x62, u16::from(b'y'), 11);
    p.call(
        "MONCALLS",
        WRITE,
        &[A::P(0x140), A::P(0x60), A::W(14)],
        0,
        12,
    );
    read(&mut p, 0x100, 1, 0, 13);
    p.check(0x62, u16::from(b'z'), 14);
    p.call(
        "MONCALLS",
        WRITE,
        &[A::P(0x140), A::P(0x60), A::W(14)],
        0,
        15,
    );
    p.call("KBDCALLS", CHARIN, &[A::P(0x50), A::W(0), A::W(0)], 0, 16);
    p.check(0x50, u16::from(b'y'), 17);
    p.call("KBDCALLS", CHARIN, &[A::P(0x50), A::W(0), A::W(0)], 0, 18);
    p.check(0x50, u16::from(b'z'), 19);
    // A flush packet (mnflags bit 0) goes nowhere.
    p.store(0x60, 1);
    p.call(
        "MONCALLS",
        WRITE,
        &[A::P(0x140), A::P(0x60), A::W(14)],
        0,
        20,
    );
    p.call("KBDCALLS", CHARIN, &[A::P(0x50), A::W(0), A::W(0)], 0, 21);
    p.check(0x50, 0x1A, 22);
    assert_eq!(run(p.finish(), b"x"), Outcome::Exited(0));
}
