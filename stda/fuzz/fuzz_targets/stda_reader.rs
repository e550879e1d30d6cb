//! The STDA reader on arbitrary bytes: the header parse, the backward walk
//! and the time-ordered read must never panic, and the walk never returns
//! more bytes than the record area holds.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(stda) = stda::Stda::parse(data) {
        let total: usize = stda.walk_back().map(|r| r.size()).sum();
        assert!(total <= stda.capacity());
        let _ = stda.records();
        let _ = stda.trace_times();
    }
});
