//! The memory manager seen from programs: DosAllocSeg / DosReallocSeg /
//! DosFreeSeg and huge segments, DosAllocMem / DosSetMem / DosFreeMem with
//! page presence, DosSleep and the emulated clock.

mod common;

use kernel_sim::{Outcome, Process, ProcessConfig};

fn run(bytes: Vec<u8>) -> (Outcome, Process) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(100_000);
    let mut p = Process::new(cfg).unwrap();
    let o = p.run();
    (o, p)
}

/// 32-bit: DosAllocMem(0x20000 <- base, 0x3000, flags), touch the first
/// byte, DosExit(1, 0).
fn alloc_mem_program(flags: u8) -> Vec<u8> {
    let mut c = vec![
        0x6A, flags, 0x68, 0x00, 0x30, 0x00, 0x00, 0x68, 0x00, 0x00, 0x02, 0x00,
    ];
    let alloc = c.len() as u32;
    c.extend([0xE8, 0, 0, 0, 0, 0x83, 0xC4, 0x0C]);
    c.extend([0xA1, 0x00, 0x00, 0x02, 0x00, 0x8B, 0x00]); // mov eax,[0x20000]; mov eax,[eax]
    c.extend([0x6A, 0x00, 0x6A, 0x01]);
    let exit = c.len() as u32;
    c.extend([0xE8, 0, 0, 0, 0]);
    common::lx_program(&c, &[(alloc, "DOSCALLS", 299), (exit, "DOSCALLS", 234)])
}

#[test]
fn committed_memory_is_usable_and_reserved_memory_faults() {
    let (o, _) = run(alloc_mem_program(0x13));
    assert_eq!(o, Outcome::Exited(0));
    let (o, p) = run(alloc_mem_program(0x03));
    let Outcome::GuestFault { vector, cr2, .. } = o else {
        panic!("{o}")
    };
    assert_eq!(vector, 14);
    let mut base = [0u8; 4];
    let mut p = p;
    p.read_guest(0x20000, &mut base).unwrap();
    assert_eq!(cr2, Some(u32::from_le_bytes(base)));
    assert_eq!(u32::from_le_bytes(base) % 0x1_0000, 0, "64 KB aligned");
}

/// 16-bit: DosAllocSeg(size) -> sel at DS:0x100; ES = sel; write ES:[off];
/// DosReallocSeg(new, sel); write ES:[off] again after reloading ES;
/// DosFreeSeg(sel); DosExit(1, 0).
fn seg_program(size: u16, off: u16, new: u16) -> Vec<u8> {
    let mut c = common::push(size);
    c.extend([0x1E]);
    c.extend(common::push(0x100));
    c.extend(common::push(0));
    let alloc = c.len() as u32;
    c.extend([0x9A, 0, 0, 0, 0]);
    c.extend([0x8E, 0x06, 0x00, 0x01]); // mov es,[0x100]
    let [lo, hi] = off.to_le_bytes();
    c.extend([0x26, 0xC6, 0x06, lo, hi, 0x55]); // mov byte es:[off],0x55
    c.extend(common::push(new));
    c.extend([0xFF, 0x36, 0x00, 0x01]); // push word [0x100]
    let realloc = c.len() as u32;
    c.extend([0x9A, 0, 0, 0, 0]);
    c.extend([0x26, 0xC6, 0x06, lo, hi.wrapping_add(0x10), 0x66]); // es:[off+0x1000]
    c.extend([0xFF, 0x36, 0x00, 0x01]);
    let free = c.len() as u32;
    c.extend([0x9A, 0, 0, 0, 0]);
    c.extend(common::push(1));
    c.extend(common::push(0));
    let exit = c.len() as u32;
    c.extend([0x9A, 0, 0, 0, 0]);
    common::ne_program(
        &c,
        &[],
        &[
            (alloc, "DOSCALLS", 34),
            (realloc, "DOSCALLS", 38),
            (free, "DOSCALLS", 39),
            (exit, "DOSCALLS", 5),
        ],
    )
}

#[test]
fn segments_grow_with_dos_realloc_seg() {
    let (o, _) = run(seg_program(0x100, 0x10, 0x2000));
    assert_eq!(o, Outcome::Exited(0));
    // Writing past the limit faults: the segment is only 0x100 bytes.
    let (o, _) = run(seg_program(0x100, 0x200, 0x2000));
    assert!(matches!(o, Outcome::GuestFault { vector: 13, .. }), "{o}");
    // Not grown enough for the second write.
    let (o, _) = run(seg_program(0x100, 0x10, 0x800));
    assert!(matches!(o, Outcome::GuestFault { vector: 13, .. }), "{o}");
}

#[test]
fn dos_sleep_advances_the_emulated_clock_only() {
    // DosSleep(2500) ; DosExit(1, 0)
    let mut c = common::push(0);
    c.extend(common::push(2500));
    c.extend([0x9A, 0, 0, 0, 0]);
    c.extend(common::push(1));
    c.extend(common::push(0));
    c.extend([0x9A, 0, 0, 0, 0]);
    let (o, p) = run(common::ne_program(
        &c,
        &[],
        &[(6, "DOSCALLS", 32), (17, "DOSCALLS", 5)],
    ));
    assert_eq!(o, Outcome::Exited(0));
    assert!(p.now_millis() >= 2500);
}
