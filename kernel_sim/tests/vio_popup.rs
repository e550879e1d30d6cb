//! VIOCALLS' screen from 16-bit code: VioReadCharStr reads back what
//! VioWrtTTY wrote (rows, the screen's end, errors), VioPopUp (opaque,
//! transparent) and VioEndPopUp bring the screen back.

mod common;

use common::prog16::{A, Prog, run};
use kernel_sim::Outcome;

const END_POPUP: u32 = 1;
const POPUP: u32 = 11;
const WRTTTY: u32 = 19;
const READ: u32 = 30;

/// Stores `s` (even length) at `at`.
fn store_text(p: &mut Prog, at: u16, s: &[u8]) {
    for (i, w) in s.chunks(2).enumerate() {
        p.store(at + 2 * i as u16, u16::from_le_bytes([w[0], w[1]]));
    }
}

/// VioReadCharStr(0x100, &[0xFE] = cb, row, col, hvio).
fn read(p: &mut Prog, cb: u16, row: u16, col: u16, hvio: u16, rc: u16, tag: u16) {
    p.store(0xFE, cb);
    p.call(
        "VIOCALLS",
        READ,
        &[A::P(0x100), A::P(0xFE), A::W(row), A::W(col), A::W(hvio)],
        rc,
        tag,
    );
}

#[test]
fn the_screen_reads_back_and_pop_ups_restore_it() {
    let mut p = Prog::default();
    store_text(&mut p, 0x20, b"hello\r\nwor\tld!");
    p.call("VIOCALLS", WRTTTY, &[A::P(0x20), A::W(14), A::W(0)], 0, 1);
    read(&mut p, 4, 0, 1, 0, 0, 2);
    p.check(0xFE, 4, 3);
    p.check(0x100, u16::from_le_bytes(*b"el"), 4);
    p.check(0x102, u16::from_le_bytes(*b"lo"), 5);
    // The tab took "wor" to column 8.
    read(&mut p, 4, 1, 2, 0, 0, 6);
    p.check(0x100, u16::from_le_bytes(*b"r "), 7);
    read(&mut p, 2, 1, 8, 0, 0, 8);
    p.check(0x100, u16::from_le_bytes(*b"ld"), 9);
    // The count stops at the screen's end.
    read(&mut p, 10, 24, 78, 0, 0, 10);
    p.check(0xFE, 2, 11);
    read(&mut p, 1, 25, 0, 0, 358, 12);
    read(&mut p, 1, 0, 80, 0, 359, 13);
    read(&mut p, 1, 0, 0, 1, 436, 14);
    // An opaque pop-up is blank; a second one is refused.
    p.store(0x10, 1);
    p.call("VIOCALLS", POPUP, &[A::P(0x10), A::W(0)], 0, 15);
    read(&mut p, 2, 0, 0, 0, 0, 16);
    p.check(0x100, 0x2020, 17);
    p.call("VIOCALLS", POPUP, &[A::P(0x10), A::W(0)], 406, 18);
    store_text(&mut p, 0x20, b"PU");
    p.call("VIOCALLS", WRTTTY, &[A::P(0x20), A::W(2), A::W(0)], 0, 19);
    read(&mut p, 2, 0, 0, 0, 0, 20);
    p.check(0x100, u16::from_le_bytes(*b"PU"), 21);
    p.call("VIOCALLS", END_POPUP, &[A::W(1)], 436, 22);
    p.call("VIOCALLS", END_POPUP, &[A::W(0)], 0, 23);
    read(&mut p, 2, 0, 0, 0, 0, 24);
    p.check(0x100, u16::from_le_bytes(*b"he"), 25);
    p.call("VIOCALLS", END_POPUP, &[A::W(0)], 405, 26);
    // A transparent pop-up keeps the screen; unknown flags are refused.
    p.store(0x10, 4);
    p.call("VIOCALLS", POPUP, &[A::P(0x10), A::W(0)], 421, 27);
    p.store(0x10, 2);
    p.call("VIOCALLS", POPUP, &[A::P(0x10), A::W(1)], 436, 28);
    p.call("VIOCALLS", POPUP, &[A::P(0x10), A::W(0)], 0, 29);
    read(&mut p, 2, 0, 0, 0, 0, 30);
    p.check(0x100, u16::from_le_bytes(*b"he"), 31);
    p.call("VIOCALLS", END_POPUP, &[A::W(0)], 0, 32);
    assert_eq!(run(p.finish(), b""), Outcome::Exited(0));
}
