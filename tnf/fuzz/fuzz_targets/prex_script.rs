//! prex's lexer, parser and session on arbitrary command text, in user and
//! kernel mode: never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tnf::prex::{Mode, Session};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for mode in [Mode::User, Mode::Kernel] {
        let mut s = Session::new(mode, "trace");
        let _ = s.run(&text, 1, &mut |_| Ok(text.to_string()));
    }
});
