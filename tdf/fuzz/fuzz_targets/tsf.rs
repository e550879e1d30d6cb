//! The TSF compiler on arbitrary bytes, against a small in-memory module
//! and MAP: it must report, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tdf::compile::{ModuleOpenError, ModuleSource, OpenedModule, Options, compile};
use tdf::target::{MemoryImage, Symbol, SymbolTable};

struct Fake;

impl ModuleSource for Fake {
    fn open(&mut self, _: &str) -> Result<OpenedModule, ModuleOpenError> {
        Ok(OpenedModule {
            display: "FAKE.DLL".into(),
            image: Box::new(MemoryImage {
                objects: vec![
                    (b"data".to_vec(), true),
                    (vec![0x55, 0x8B, 0xEC, 0xC9, 0xC3, 0xCC], true),
                ],
                sizes: vec![],
                debug: None,
            }),
        })
    }
}

fuzz_target!(|data: &[u8]| {
    let map = SymbolTable::new(vec![
        Symbol { name: "msg".into(), object: 1, offset: 0 },
        Symbol { name: "func".into(), object: 2, offset: 0 },
        Symbol { name: "endf".into(), object: 2, offset: 5 },
    ]);
    let opts = Options { retep_mask: 7, ..Options::default() };
    let out = compile(data, &opts, Some(&map), &mut Fake);
    if let Some(t) = out.tdf {
        let bytes = t.to_bytes();
        assert_eq!(tdf::Tdf::parse(&bytes).unwrap(), t);
    }
    if let Some(t) = out.tmi {
        let bytes = t.to_bytes();
        assert_eq!(tdf::Tmi::parse(&bytes).unwrap(), t);
    }
});
