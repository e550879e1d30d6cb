//! HELLO.EXE held in memory for the compiler tests: its data object
//! ("Hello world!", then an INT 3 at 0x14) and its code object, with the
//! MAP symbols of both.

use tdf::compile::{ModuleOpenError, ModuleSource, OpenedModule};
use tdf::target::{MemoryImage, Symbol, SymbolTable};

/// HELLO.EXE's code object: `push msg; push 28h; push 1; call ...;
/// add esp,0Ch; ret`.
pub const HELLO_CODE: [u8; 18] = [
    0x68, 0x00, 0x00, 0x01, 0x00, 0x6A, 0x28, 0x6A, 0x01, 0xE8, 0, 0, 0, 0, 0x83, 0xC4, 0x0C, 0xC3,
];

/// Opens every module name as HELLO.EXE.
pub struct Hello;

impl ModuleSource for Hello {
    fn open(&mut self, _: &str) -> Result<OpenedModule, ModuleOpenError> {
        let mut data = b"Hello world!".to_vec();
        data.resize(0x14, 0);
        data.push(0xCC);
        Ok(OpenedModule {
            display: "C:\\HELLO.EXE".into(),
            image: Box::new(MemoryImage {
                objects: vec![(data, true), (HELLO_CODE.to_vec(), true)],
                sizes: vec![],
                debug: None,
            }),
        })
    }
}

/// HELLO.EXE's MAP symbols.
pub fn symbols() -> SymbolTable {
    let s = |n: &str, object, offset| Symbol {
        name: n.into(),
        object,
        offset,
    };
    SymbolTable::new(vec![
        s("msg", 1, 0),
        s("msgp", 1, 0x10),
        s("int3", 1, 0x14),
        s("startup", 2, 0),
        s("push28", 2, 5),
        s("push1", 2, 7),
        s("callsite", 2, 9),
        s("addesp", 2, 0x0E),
        s("retsite", 2, 0x11),
    ])
}
