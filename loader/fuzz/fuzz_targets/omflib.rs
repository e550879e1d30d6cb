//! OMF library reader (import libraries): read, then look every name up.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(lib) = loader::omflib::read(data) {
        for d in &lib.dictionary {
            let _ = lib.lookup(&d.name);
        }
        for i in &lib.imports {
            let _ = lib.lookup(&i.public);
        }
    }
});
