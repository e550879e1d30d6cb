//! The CPTRAP file reader on arbitrary bytes: it never panics, a file that
//! reads displays every record, and an error names an offset inside the file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match cptrap::CptrapFile::parse(data) {
        Ok(file) => {
            for r in file.records() {
                let _ = cptrap::trapred::display::record_lines(r);
            }
        }
        Err(e) => assert!(e.offset <= data.len()),
    }
});
