//! Compiled trace program files: read never panics; what reads writes back
//! identically.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(file) = rpn_vm::object::read(data) {
        assert_eq!(rpn_vm::object::write(&file), data);
    }
});
