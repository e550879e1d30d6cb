//! The fuzz targets' entry points (stda/fuzz) fed arbitrary and mutated
//! bytes in the test suite: no parser or formatter may panic, and corrupt
//! input gives an error naming an offset.

use proptest::prelude::*;
use stda::fmt::{FormatInput, compile_fmt, format_record, parse_fmt};
use stda::savefile::SaveFile;
use stda::tff::{Tff, TffRecord};
use stda::tracefmt::{Rules, format_stda};
use stda::{DosDateTime, RecordFlags, RecordIn, Stda, StdaFormat, Timestamp, TraceBuffer};

fn valid_stda(format: StdaFormat, n: usize) -> Vec<u8> {
    let mut buf = TraceBuffer::new(format, 1).unwrap();
    for i in 0..n {
        let data: Vec<u8> = (0..(i * 13) % 90).map(|j| j as u8).collect();
        let rec = RecordIn {
            major: 0xC5,
            minor: i as u16,
            pid: 1,
            flags: RecordFlags::DYNAMIC,
            data: &data,
        };
        buf.log(&rec, Timestamp::from_millis(i as u64 * 7)).unwrap();
    }
    buf.as_bytes().to_vec()
}

fn exercise_stda(bytes: &[u8]) {
    match Stda::parse(bytes) {
        Ok(stda) => {
            let total: usize = stda.walk_back().map(|r| r.size()).sum();
            assert!(total <= stda.capacity());
            let _ = format_stda(&stda, &Rules::new());
        }
        Err(e) => assert!(e.to_string().contains("offset"), "{e}"),
    }
}

fn exercise_save(bytes: &[u8]) {
    match SaveFile::parse(bytes) {
        Ok(save) => assert_eq!(save.to_bytes(), bytes),
        Err(e) => assert!(e.to_string().contains("offset"), "{e}"),
    }
}

fn exercise_tff(bytes: &[u8]) {
    match Tff::parse(bytes) {
        Ok(tff) => {
            let again = Tff::parse(&tff.to_bytes()).unwrap();
            assert_eq!(again.records.len(), tff.records.len());
        }
        Err(e) => assert!(e.to_string().contains("offset"), "{e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        exercise_stda(&bytes);
        exercise_save(&bytes);
        exercise_tff(&bytes);
        let mut stda = b"SYSTRACE".to_vec();
        stda.extend(&bytes);
        exercise_stda(&stda);
        let mut tff = b"TFF\0".to_vec();
        tff.extend(&bytes);
        exercise_tff(&tff);
    }

    #[test]
    fn mutated_buffers_never_panic(
        new_format in any::<bool>(),
        n in 0usize..60,
        flips in prop::collection::vec((any::<u16>(), any::<u8>()), 1..12),
    ) {
        let format = if new_format { StdaFormat::New } else { StdaFormat::Old };
        let mut bytes = valid_stda(format, n);
        let mut save = SaveFile { datetime: DosDateTime::default(), stda: bytes.clone() }.to_bytes();
        for &(at, v) in &flips {
            let i = usize::from(at) % bytes.len();
            bytes[i] ^= v | 1;
            let j = usize::from(at) % save.len();
            save[j] ^= v | 1;
        }
        exercise_stda(&bytes);
        exercise_save(&save);
    }

    #[test]
    fn arbitrary_fmts_and_data_never_panic(
        fmt in prop::collection::vec(prop_oneof![Just(1u8), Just(b'%'), Just(b' '), any::<u8>(),
            prop::sample::select(b"ABCDFIPQRSUWXYabcdfipqrsuwxy0123456789".to_vec())], 0..40),
        data in prop::collection::vec(prop_oneof![Just(0u8), Just(0xFDu8), Just(0xFF), any::<u8>()], 0..80),
        dynamic in any::<bool>(),
    ) {
        let rule = TffRecord { minor: 1, desc: b"d".to_vec(), fmts: vec![fmt.clone(), compile_fmt(&fmt)] };
        let input = FormatInput { major: 1, minor: 1, dynamic, data: &data };
        prop_assert_eq!(format_record(&rule, &input).len(), 3);
        let _ = parse_fmt(&fmt);
    }
}

#[test]
fn mutated_corpus_tffs_never_panic() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/formats/trcust-corpus"
    );
    let files = [
        "f_ign/expect/TRC00C5.TFF",
        "comb_d/expect/OUT.TFF",
        "tp_two/expect/TRC00C6.TFF",
    ];
    for f in files {
        let good = std::fs::read(format!("{dir}/{f}")).unwrap();
        for i in 0..good.len() {
            for v in [0x00, 0xFF, 0x0D, 0x01] {
                let mut b = good.clone();
                b[i] = v;
                exercise_tff(&b);
            }
            exercise_tff(&good[..i]);
        }
    }
}

/// Every FMT of the system tracepoint table formats some data without
/// panicking, statically and dynamically.
#[test]
fn every_system_tracepoint_fmt_formats() {
    let tsv = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/reference/system-tracepoints.tsv"
    ));
    let data: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37)).collect();
    let mut n = 0;
    for line in tsv.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let Some(fmt) = cols.get(8) else { continue };
        let rule = TffRecord {
            minor: 1,
            desc: cols[4].as_bytes().to_vec(),
            fmts: vec![compile_fmt(fmt.as_bytes())],
        };
        for dynamic in [false, true] {
            for len in [0, 5, 64] {
                let input = FormatInput {
                    major: 1,
                    minor: 1,
                    dynamic,
                    data: &data[..len],
                };
                assert_eq!(format_record(&rule, &input).len(), 2);
            }
        }
        n += 1;
    }
    assert!(n > 2500);
}
