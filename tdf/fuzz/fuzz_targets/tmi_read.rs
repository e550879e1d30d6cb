//! The TMI reader on arbitrary bytes: an error or a file that writes back.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(t) = tdf::Tmi::parse(data) {
        let again = tdf::Tmi::parse(&t.to_bytes()).unwrap();
        assert_eq!(again, t);
    }
});
