//! Tiny hand-assembled 16-bit NE programs for the tests, and a testprogs
//! program loaded into a process of its own.

#![allow(dead_code)]

use loader::{Address, Module, SourceKind, Target};

/// An NE program: segment 1 is `code` (entry at 0), segment 2 the
/// automatic data segment holding `data` (0x200 bytes at least) with a
/// 0x400-byte stack above it. `calls` are (offset of a `9A` far call in
/// `code`, module, ordinal): ptr16:16 import fixups at offset + 1.
pub fn ne_program(code: &[u8], data: &[u8], calls: &[(u32, &str, u32)]) -> Vec<u8> {
    let mut m = Module::new_ne("TESTPROG");
    m.add_object(0x0C00, code.len() as u32, code);
    m.add_object(0x0C01, (data.len() as u32).max(0x200), data);
    m.start = Some(Address {
        object: 1,
        offset: 0,
    });
    m.stack = Some(Address {
        object: 2,
        offset: 0,
    });
    m.auto_data = Some(2);
    m.stack_size = 0x400;
    for &(off, module, ordinal) in calls {
        let mi = m.import_module(module);
        m.add_fixup(
            1,
            off + 1,
            SourceKind::Ptr1616,
            Target::ImportOrdinal {
                module: mi,
                ordinal,
            },
        );
    }
    loader::write(&m).expect("an NE module")
}

/// `push imm16`.
pub fn push(v: u16) -> Vec<u8> {
    let [lo, hi] = v.to_le_bytes();
    vec![0x68, lo, hi]
}

/// Code that calls DosOpen(name at DS:0, &h at DS:0x100, &action at
/// DS:0x102, 0, 0, flags, mode, 0) and exits with its return code.
pub fn open_program(name: &str, flags: u16, mode: u16) -> Vec<u8> {
    let mut c = Vec::new();
    for off in [0u16, 0x100, 0x102] {
        c.push(0x1E);
        c.extend(push(off));
    }
    for v in [0, 0, 0, flags, mode, 0, 0] {
        c.extend(push(v));
    }
    let open_at = c.len() as u32;
    c.extend([0x9A, 0, 0, 0, 0]);
    c.extend(push(1));
    c.push(0x50);
    let exit_at = c.len() as u32;
    c.extend([0x9A, 0, 0, 0, 0]);
    let mut data = name.as_bytes().to_vec();
    data.push(0);
    ne_program(
        &c,
        &data,
        &[(open_at, "DOSCALLS", 70), (exit_at, "DOSCALLS", 5)],
    )
}

/// An LX program: object 1 is `code` (entry at 0, preferred base
/// 0x10000), object 2 a 16 KB zero-filled stack (base 0x20000, ESP at its
/// top). `calls` are (offset of an `E8` near call in `code`, module,
/// ordinal): rel32 import fixups at offset + 1.
pub fn lx_program(code: &[u8], calls: &[(u32, &str, u32)]) -> Vec<u8> {
    let mut m = Module::new_lx("TESTLX");
    m.add_object(0x2005, code.len() as u32, code);
    m.add_object(0x2003, 0x4000, &[]);
    m.start = Some(Address {
        object: 1,
        offset: 0,
    });
    m.stack = Some(Address {
        object: 2,
        offset: 0x4000,
    });
    m.stack_size = 0x4000;
    for &(off, module, ordinal) in calls {
        let mi = m.import_module(module);
        m.add_fixup(
            1,
            off + 1,
            SourceKind::Rel32,
            Target::ImportOrdinal {
                module: mi,
                ordinal,
            },
        );
    }
    loader::write(&m).expect("an LX module")
}

/// `program` written into a fresh sandbox and loaded, with `max_insns`
/// and its console captured: (process, console, the sandbox to keep).
pub fn testprogs_process(
    program: &testprogs::Program,
    max_insns: u64,
) -> (
    kernel_sim::Process,
    kernel_sim::ConsoleBuffer,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    program.write_to(dir.path()).unwrap();
    let mut cfg = kernel_sim::ProcessConfig::new(dir.path(), program.file_name);
    cfg.max_instructions = Some(max_insns);
    let mut p = kernel_sim::Process::new(cfg).unwrap();
    let out = kernel_sim::ConsoleBuffer::new();
    p.set_console(
        Box::new(out.clone()),
        Box::new(out.clone()),
        Box::new(std::io::empty()),
    );
    (p, out, dir)
}
