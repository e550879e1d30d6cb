//! Linker MAP file parser.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(map) = loader::map::parse_bytes(data) {
        for s in &map.symbols {
            let _ = map.symbol_size(s);
            let _ = map.symbol_at(s.object, s.offset);
        }
    }
});
