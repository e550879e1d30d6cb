//! The `.SYM` reader on arbitrary bytes: an error with an offset inside
//! the file, or symbols whose table builds.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match tdf::sym::SymFile::parse(data) {
        Ok(s) => {
            let _ = s.symbol_table();
        }
        Err(e) => assert!(e.offset <= data.len() + 0x10_0000, "{e}"),
    }
});
