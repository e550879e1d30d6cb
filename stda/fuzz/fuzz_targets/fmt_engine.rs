//! The FMT engine on arbitrary FMT bytes and record data: formatting never
//! panics and gives one line per FMT plus the DESC.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stda::fmt::{FormatInput, compile_fmt, format_record};
use stda::tff::TffRecord;

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let cut = usize::from(split).min(rest.len());
    let (fmt, record) = rest.split_at(cut);
    let rule = TffRecord {
        minor: 1,
        desc: b"fuzz".to_vec(),
        fmts: vec![fmt.to_vec(), compile_fmt(fmt)],
    };
    for dynamic in [false, true] {
        let input = FormatInput { major: 1, minor: 1, dynamic, data: record };
        assert_eq!(format_record(&rule, &input).len(), 3);
    }
});
