//! The sidecar and field-decoding fuzz targets' entry points (stda/fuzz
//! `sidecar`, `fields`) fed arbitrary bytes: no panic, errors name an
//! offset, and decoded values are text of the formatted lines.

use proptest::prelude::*;
use stda::fields::decode;
use stda::fmt::FormatInput;
use stda::sidecar::Sidecar;
use stda::tff::TffRecord;

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn sidecars_parse_or_name_an_offset(bytes in prop::collection::vec(any::<u8>(), 0..200), magic in any::<bool>()) {
        let mut bytes = bytes;
        if magic && bytes.len() >= 12 {
            bytes[..8].copy_from_slice(b"OS2TIDX\0");
            bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
        }
        match Sidecar::parse(&bytes) {
            Ok(s) => prop_assert_eq!(s.to_bytes(), bytes),
            Err(e) => prop_assert!(e.to_string().contains("offset"), "{}", e),
        }
    }

    #[test]
    fn fields_are_text_of_their_lines(
        fmt in prop::collection::vec(prop::sample::select(b"%WBDSPRI= 1x\x01AUC:".to_vec()), 0..24),
        data in prop::collection::vec(any::<u8>(), 0..40),
        dynamic in any::<bool>(),
    ) {
        let rule = TffRecord {
            minor: 1,
            desc: b"d".to_vec(),
            fmts: vec![stda::fmt::compile_fmt(&fmt), fmt.clone()],
        };
        let d = decode(&rule, &FormatInput { major: 0xC2, minor: 1, dynamic, data: &data });
        for f in &d.fields {
            prop_assert!(d.lines.iter().any(|l| l.contains(&f.value)));
        }
    }
}
