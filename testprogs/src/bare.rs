//! Bare test programs: an NE or LX module of one code object and one
//! data or stack object, with import fixups at the given call sites.
//! What tests build when they need a few hand-assembled instructions
//! rather than a [`crate::Program`] with its MAP, TSF and labels.

use loader::{Address, Module, SourceKind, Target};

/// An NE program: segment 1 is `code` (entry at 0), segment 2 the
/// automatic data segment holding `data` (0x200 bytes at least) with a
/// 0x400-byte stack above it. `calls` are (offset of a `9A` far call in
/// `code`, module, ordinal): ptr16:16 import fixups at offset + 1.
///
/// # Panics
///
/// If the loader's writer refuses the module.
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

/// An LX program: object 1 is `code` (entry at 0, preferred base
/// 0x10000), object 2 a 16 KB zero-filled stack (base 0x20000, ESP at its
/// top). `calls` are (offset of an `E8` near call in `code`, module,
/// ordinal): rel32 import fixups at offset + 1.
///
/// # Panics
///
/// If the loader's writer refuses the module.
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
