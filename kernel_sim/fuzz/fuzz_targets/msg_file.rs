//! The MKMSGF message file reader with hostile files: the first two
//! bytes pick the message number, the rest is the file. It may only
//! return a message or an OS/2 error code, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let number = u32::from(u16::from_le_bytes([data[0], data[1]]));
    if let Ok((_, _, text)) = kernel_sim::api::msg::message(&data[2..], number) {
        let _ = kernel_sim::api::msg::expand(&text, &[b"x".to_vec()], 0x1_0000);
    }
});
