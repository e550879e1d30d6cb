//! The TRACEFMT save-file parser on arbitrary bytes; a file that parses
//! writes back to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(save) = stda::savefile::SaveFile::parse(data) {
        assert_eq!(save.to_bytes(), data);
        if let Ok(stda) = save.view() {
            let _ = stda::tracefmt::format_stda(&stda, &stda::tracefmt::Rules::new());
        }
    }
});
