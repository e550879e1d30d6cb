//! The TNF reader on arbitrary bytes: it never panics, a file that reads
//! dumps (cooked and raw) or fails with an offset inside the file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match tnf::TnfFile::parse(data) {
        Ok(file) => {
            if let Err(e) = tnf::dump::cooked(&file, false) {
                assert!(e.offset <= data.len());
            }
            if let Err(e) = tnf::dump::raw(&file, true) {
                assert!(e.offset <= data.len());
            }
        }
        Err(e) => assert!(e.offset <= data.len()),
    }
});
