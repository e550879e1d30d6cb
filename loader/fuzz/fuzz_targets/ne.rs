//! NE reader (and writer, on what reads).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(file) = loader::ne::read(data) {
        let m = file.module;
        let _ = m.fixup_kinds();
        if let Ok(bytes) = loader::write(&m) {
            loader::parse(&bytes).expect("a written module reads back");
        }
    }
});
