//! The TFF parser on arbitrary bytes; what parses writes and reads back to
//! the same records (up to the writer's sort by minor).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(tff) = stda::tff::Tff::parse(data) {
        let again = stda::tff::Tff::parse(&tff.to_bytes()).expect("written TFF parses");
        let mut a = tff.records.clone();
        a.sort_by_key(|r| r.minor);
        assert_eq!(again.records, a);
    }
});
