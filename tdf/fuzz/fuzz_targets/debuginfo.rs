//! The debug information reader on arbitrary bytes (as found at the end of
//! a module file, and as an LX debug section): an error or information
//! whose queries answer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tdf::debuginfo::{DebugInfo, appended};

fuzz_target!(|data: &[u8]| {
    for bytes in [Some(data), appended(data)].into_iter().flatten() {
        if let Ok(d) = DebugInfo::parse(bytes) {
            for f in &d.files {
                let _ = d.line(&f.name, 1);
            }
            for p in &d.procedures {
                let _ = d.procedure_at(p.segment, p.offset);
            }
        }
    }
});
