//! The TFF reader (stda's) as TRCUST combine mode uses it, and the merge.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(t) = stda_tff(data) {
        let (merged, _) = tdf::combine::merge(&[t.clone(), t]);
        let _ = merged.to_bytes();
    }
});

fn stda_tff(data: &[u8]) -> Result<tdf::combine::Tff, ()> {
    tdf::combine::Tff::parse(data).map_err(|_| ())
}
