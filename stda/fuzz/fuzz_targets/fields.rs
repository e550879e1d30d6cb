//! Decoding fields: an arbitrary FMT string (before the first 0xFF) over
//! arbitrary data never panics, and each field's value is text of a line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stda::fmt::FormatInput;
use stda::tff::TffRecord;

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0xFF).unwrap_or(data.len());
    let (fmt, rest) = data.split_at(split);
    let rule = TffRecord {
        minor: 1,
        desc: b"fuzz".to_vec(),
        fmts: fmt.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect(),
    };
    let d = stda::fields::decode(
        &rule,
        &FormatInput {
            major: 0xC2,
            minor: 1,
            dynamic: rest.first().is_some_and(|b| b & 1 == 1),
            data: rest,
        },
    );
    for f in &d.fields {
        assert!(d.lines.iter().any(|l| l.contains(&f.value)));
    }
});
