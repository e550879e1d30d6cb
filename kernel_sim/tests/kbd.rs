//! KBDCALLS from 16-bit code: KbdGetStatus/KbdSetStatus (modes, echo,
//! turnaround, their errors), KbdPeek (the byte stays for KbdCharIn) and
//! KbdFlushBuffer.

mod common;

use common::prog16::{A, Prog, run};
use kernel_sim::Outcome;

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
