//! Reading a trace file (save file, bare STDA, CPTRAP or TNF) and its
//! sidecar from arbitrary bytes, then every view of it: no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let split = usize::from(data.first().copied().unwrap_or(0)).min(data.len());
    let (side, file) = data.split_at(split);
    view::exercise(file, Some(side));
});
