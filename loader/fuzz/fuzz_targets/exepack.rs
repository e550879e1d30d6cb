//! EXEPACK1 and EXEPACK2: decoders on arbitrary streams, encoders round-trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loader::{exepack1, exepack2};

fuzz_target!(|data: &[u8]| {
    let _ = exepack1::decode(data, 0, 4096);
    let _ = exepack2::decode(data, 0, 4096);
    let page = &data[..data.len().min(4096)];
    assert_eq!(
        exepack1::decode(&exepack1::encode(page, 2048), 0, 4096).unwrap(),
        page
    );
    assert_eq!(
        exepack2::decode(&exepack2::encode(page), 0, 4096).unwrap(),
        page
    );
});
