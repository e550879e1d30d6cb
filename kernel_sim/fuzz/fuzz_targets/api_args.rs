//! The OS/2 APIs with hostile arguments: a 32-bit guest pushes eight
//! fuzzed dwords (some aimed at its own stack object, some anywhere) and
//! calls an ordinal of DOSCALLS, MSG, VIOCALLS or KBDCALLS the fuzzer
//! picks, twice, then exits. No API may panic, hang or allocate without
//! bound.
#![no_main]

use kernel_sim::{Process, ProcessConfig};
use libfuzzer_sys::fuzz_target;
use loader::{Address, Module, SourceKind, Target};

const MODULES: [&str; 4] = ["DOSCALLS", "MSG", "VIOCALLS", "KBDCALLS"];

fn program(module: &str, ordinal: u32, args: &[u32]) -> Vec<u8> {
    let mut c = Vec::new();
    let mut calls = Vec::new();
    for _ in 0..2 {
        for &a in args.iter().rev() {
            c.push(0x68);
            c.extend(a.to_le_bytes());
        }
        calls.push(c.len() as u32);
        c.extend([0xE8, 0, 0, 0, 0]);
        c.extend([0x83, 0xC4, (args.len() * 4) as u8]);
    }
    c.extend([0x50, 0x6A, 0x01]);
    let exit_at = c.len() as u32;
    c.extend([0xE8, 0, 0, 0, 0]);
    let mut m = Module::new_lx("FUZZAPI");
    m.add_object(0x2005, c.len() as u32, &c);
    m.add_object(0x2003, 0x4000, &[]);
    m.start = Some(Address { object: 1, offset: 0 });
    m.stack = Some(Address { object: 2, offset: 0x4000 });
    m.stack_size = 0x4000;
    let mi = m.import_module(module);
    for at in calls {
        m.add_fixup(1, at + 1, SourceKind::Rel32, Target::ImportOrdinal { module: mi, ordinal });
    }
    let dc = m.import_module("DOSCALLS");
    m.add_fixup(1, exit_at + 1, SourceKind::Rel32, Target::ImportOrdinal { module: dc, ordinal: 234 });
    loader::write(&m).unwrap()
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let module = MODULES[usize::from(data[0]) % MODULES.len()];
    let ordinal = u32::from(u16::from_le_bytes([data[1], data[2]]) % 512);
    let args: Vec<u32> = data[3..]
        .chunks(4)
        .take(8)
        .map(|c| {
            let mut b = [0u8; 4];
            b[..c.len()].copy_from_slice(c);
            let v = u32::from_le_bytes(b);
            // Low values aim into the stack object, where pointers work.
            if v & 0x8000_0000 == 0 && v & 0x4000_0000 != 0 { 0x20000 + (v & 0x3FFC) } else { v }
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("F.EXE"), program(module, ordinal, &args)).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "F.EXE");
    cfg.max_instructions = Some(100_000);
    cfg.max_wall = Some(std::time::Duration::from_secs(5));
    cfg.ram_size = 8 << 20;
    if let Ok(mut p) = Process::new(cfg) {
        p.set_console(Box::new(std::io::sink()), Box::new(std::io::sink()), Box::new(std::io::empty()));
        let _ = p.run();
    }
});
