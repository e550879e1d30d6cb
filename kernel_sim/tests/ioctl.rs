//! DosDevIOCtl (issue 12): the keyboard and general categories on the
//! console, the disk category for drive C:, the lengths and the error
//! codes; 32-bit, 16-bit DosDevIOCtl and DosDevIOCtl2.

mod common;

use common::threaded::{Arg, Prog, dword_at, run_reading};
use common::{DATA, ne_program, push};
use kernel_sim::{Outcome, Process, ProcessConfig};

const IOCTL: u32 = 284;

const PARM: u32 = DATA + 0x100;
const PLEN: u32 = DATA + 0x110;
const DLEN: u32 = DATA + 0x114;
const OUT: u32 = DATA + 0x200;

/// DosDevIOCtl(h, cat, func, PARM, parm_max, &PLEN, out, data_max,
/// &DLEN), expecting `rc` (else exit `tag`).
fn ioctl(
    p: &mut Prog,
    (h, cat, func): (u32, u32, u32),
    lens: (u32, u32),
    out: u32,
    rc: u32,
    tag: u32,
) {
    let args = [h, cat, func, PARM, lens.0, PLEN, out, lens.1, DLEN].map(Arg::Imm);
    p.api(IOCTL, &args, rc, tag);
}

#[test]
fn the_32_bit_call_on_the_console_and_the_disk() {
    let mut p = Prog::new();
    p.start_main();
    // KBD_GETKEYBDTYPE: 6 bytes, an enhanced keyboard.
    ioctl(&mut p, (0, 4, 0x77), (0, 6), OUT, 0, 1);
    p.c.load_eax(DLEN);
    p.store_eax(OUT + 0x40);
    // KBD_SETINPUTMODE binary, then KBD_GETINPUTMODE.
    p.c.store(PARM, 0x80);
    ioctl(&mut p, (0, 4, 0x51), (1, 0), OUT + 8, 0, 2);
    ioctl(&mut p, (0, 4, 0x71), (0, 1), OUT + 8, 0, 3);
    // A bad mode byte.
    p.c.store(PARM, 0x01);
    ioctl(&mut p, (0, 4, 0x51), (1, 0), OUT + 8, 87, 4);
    // KBD_SETSHIFTSTATE then GETSHIFTSTATE.
    p.c.store(PARM, 0x0003);
    ioctl(&mut p, (0, 4, 0x53), (3, 0), 0, 0, 5);
    ioctl(&mut p, (0, 4, 0x73), (0, 3), OUT + 12, 0, 6);
    // Lengths: too little data room (the need goes to DLEN), too short
    // a parameter area.
    ioctl(&mut p, (0, 4, 0x77), (0, 2), OUT + 16, 111, 7);
    p.c.load_eax(DLEN);
    p.store_eax(OUT + 0x44);
    ioctl(&mut p, (0, 4, 0x51), (0, 0), 0, 87, 8);
    // A category the console does not have, a function the keyboard
    // does not have, a handle that is not open, the disk's handle with
    // the keyboard category.
    ioctl(&mut p, (1, 3, 0x72), (0, 4), OUT + 16, 117, 9);
    ioctl(&mut p, (0, 4, 0x99), (0, 4), OUT + 16, 1, 10);
    ioctl(&mut p, (99, 4, 0x77), (0, 6), OUT + 16, 6, 11);
    ioctl(&mut p, (u32::MAX, 4, 0x77), (0, 6), OUT + 16, 6, 12);
    // No device monitors.
    ioctl(&mut p, (0, 0x0B, 0x60), (1, 0), 0, 165, 13);
    ioctl(&mut p, (1, 0x0B, 0x02), (1, 0), 0, 0, 14);
    // The disk: C: is fixed; A: is no drive here; C:'s parameters.
    p.c.store(PARM, 0x0200);
    ioctl(&mut p, (u32::MAX, 8, 0x20), (2, 1), OUT + 20, 0, 15);
    ioctl(&mut p, (u32::MAX, 8, 0x63), (2, 36), OUT + 24, 0, 16);
    p.c.store(PARM, 0x0000);
    ioctl(&mut p, (u32::MAX, 8, 0x20), (2, 1), OUT + 20, 15, 17);
    // A file is no device.
    p.c.open(*b"T.DAT", DATA + 0x120);
    p.c.expect(0, 18);
    let args = [Arg::Mem(DATA + 0x120)]
        .into_iter()
        .chain([4, 0x77, PARM, 0, PLEN, OUT + 16, 6, DLEN].map(Arg::Imm))
        .collect::<Vec<_>>();
    p.api(IOCTL, &args, 117, 19);
    let (o, mem) = run_reading(p.finish(), 0x300);
    assert_eq!(o, Outcome::Exited(0));
    let at = |a: u32| (a - DATA) as usize;
    assert_eq!(&mem[at(OUT)..at(OUT) + 6], &[1, 0, 0, 0, 0, 0]);
    assert_eq!(dword_at(&mem, OUT + 0x40), 6, "data length");
    assert_eq!(mem[at(OUT + 8)], 0x80, "binary mode");
    assert_eq!(&mem[at(OUT + 12)..at(OUT + 15)], &[3, 0, 0], "shift state");
    assert_eq!(dword_at(&mem, OUT + 0x44), 6, "the length needed");
    assert_eq!(mem[at(OUT + 20)], 1, "C: is not removable");
    let bpb = &mem[at(OUT + 24)..at(OUT + 60)];
    assert_eq!(u16::from_le_bytes([bpb[0], bpb[1]]), 512);
    assert_eq!(bpb[33], 5, "fixed disk");
    assert_eq!(u16::from_le_bytes([bpb[34], bpb[35]]), 1, "not removable");
}

/// A 16-bit program: DosDevIOCtl(DS:0x20, DS:0x10, 0x20, 8, 0xFFFF) for
/// C: (parameters at DS:0x10), then DosDevIOCtl2 of KBD_GETKEYBDTYPE
/// with 2 bytes of room (ERROR_BUFFER_OVERFLOW) and with 6; the return
/// codes go to DS:0x40.., and DS:0x20..0x50 to stdout.
#[test]
fn the_16_bit_calls() {
    let mut c = Vec::new();
    let mut calls = Vec::new();
    let far = |c: &mut Vec<u8>, calls: &mut Vec<(u32, &'static str, u32)>, ord: u32| {
        calls.push((c.len() as u32, "DOSCALLS", ord));
        c.extend([0x9A, 0, 0, 0, 0]);
    };
    // mov word [0x10], 0x0200 (command 0, drive C:)
    c.extend([0xC7, 0x06, 0x10, 0x00, 0x00, 0x02]);
    // DosDevIOCtl(ds:0x20, ds:0x10, 0x20, 8, 0xFFFF)
    c.push(0x1E);
    c.extend(push(0x20));
    c.push(0x1E);
    c.extend(push(0x10));
    c.extend(push(0x20));
    c.extend(push(8));
    c.extend(push(0xFFFF));
    far(&mut c, &mut calls, 53);
    c.extend([0xA3, 0x40, 0x00]); // mov [0x40], ax
    // DosDevIOCtl2(ds:0x30, 2, ds:0x10, 0, 0x77, 4, 0)
    for (room, slot) in [(2u16, 0x42u8), (6, 0x44)] {
        c.push(0x1E);
        c.extend(push(0x30));
        c.extend(push(room));
        c.push(0x1E);
        c.extend(push(0x10));
        c.extend(push(0));
        c.extend(push(0x77));
        c.extend(push(4));
        c.extend(push(0));
        far(&mut c, &mut calls, 99);
        c.extend([0xA3, slot, 0x00]);
    }
    // DosWrite(1, ds:0x20, 0x30, ds:0x50)
    c.extend(push(1));
    c.push(0x1E);
    c.extend(push(0x20));
    c.extend(push(0x30));
    c.push(0x1E);
    c.extend(push(0x50));
    far(&mut c, &mut calls, 138);
    c.extend(push(1));
    c.extend(push(0));
    far(&mut c, &mut calls, 5);
    let exe = ne_program(&c, &[0; 0x60], &calls);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), exe).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut p);
    assert_eq!(p.run(), Outcome::Exited(0));
    let b = out.contents();
    // DS:0x20.. : the data byte (fixed), ..., DS:0x30 the keyboard type,
    // DS:0x40 the three return codes.
    assert_eq!(b[0], 1, "C: is fixed");
    assert_eq!(&b[0x10..0x12], &[1, 0], "enhanced keyboard");
    let w = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
    assert_eq!((w(0x20), w(0x22), w(0x24)), (0, 111, 0));
}
