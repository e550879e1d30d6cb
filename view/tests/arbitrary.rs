//! The fuzz targets' entry points (view/fuzz) fed arbitrary and mutated
//! bytes: no view of a trace file panics, whatever the file and sidecar.

use proptest::prelude::*;
use stda::sidecar::{HitTime, Sidecar};
use stda::{DosDateTime, RecordFlags, RecordIn, StdaFormat, Timestamp, TraceBuffer};

/// A save file of `n` records and its sidecar.
fn valid(n: usize) -> (Vec<u8>, Vec<u8>) {
    let mut buf = TraceBuffer::new(StdaFormat::New, 1).unwrap();
    let mut entries = Vec::new();
    for i in 0..n {
        let data: Vec<u8> = (0..(i * 7) % 40).map(|j| j as u8).collect();
        let rec = RecordIn {
            major: 0xC2,
            minor: i as u16,
            pid: 1,
            flags: RecordFlags::DYNAMIC,
            data: &data,
        };
        buf.log(&rec, Timestamp::from_millis(i as u64 * 7)).unwrap();
        entries.push(HitTime {
            ns: i as u64 * 1000,
            cost_ns: 10,
            pid: 1,
            minor: i as u16,
            major: 0xC2,
            ..HitTime::default()
        });
    }
    let save = stda::savefile::traceget(&mut buf, DosDateTime::default());
    let side = Sidecar {
        logged: n as u64,
        lost: 0,
        entries,
    };
    (save.to_bytes(), side.to_bytes())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(file in prop::collection::vec(any::<u8>(), 0..400), side in prop::collection::vec(any::<u8>(), 0..100)) {
        view::exercise(&file, Some(&side));
    }

    #[test]
    fn mutated_files(n in 0usize..12, flips in prop::collection::vec((any::<usize>(), any::<u8>()), 0..8), in_side in any::<bool>()) {
        let (mut file, mut side) = valid(n);
        let target = if in_side { &mut side } else { &mut file };
        for (at, v) in flips {
            if !target.is_empty() {
                let i = at % target.len();
                target[i] = v;
            }
        }
        view::exercise(&file, Some(&side));
    }

    #[test]
    fn bounds_parse_or_fail(s in ".{0,24}") {
        let _ = s.parse::<view::filter::Bound>();
    }
}

/// Found by `mutated_files` in CI: a sidecar whose hit time and cost add
/// past u64::MAX (the Perfetto export's slice end overflowed).
#[test]
fn sidecar_times_near_the_top_of_u64() {
    let (file, mut side) = valid(1);
    let len = side.len();
    side[7_426_968_028_221_584_071usize % len] = 49;
    side[6_345_031_736_525_481_263usize % len] = 207;
    view::exercise(&file, Some(&side));
    // Every time and cost byte of the one entry at 0xFF.
    let (file, side) = valid(1);
    let header = side.len() - 1;
    for from in 0..side.len() {
        let mut s = side.clone();
        for b in &mut s[from.min(header)..] {
            *b = 0xFF;
        }
        view::exercise(&file, Some(&s));
    }
}
