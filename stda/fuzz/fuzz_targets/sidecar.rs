//! The fine-time sidecar parser on arbitrary bytes; a file that parses
//! writes back to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = stda::sidecar::Sidecar::parse(data) {
        assert_eq!(s.to_bytes(), data);
    }
});
