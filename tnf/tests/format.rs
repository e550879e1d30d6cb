//! The TNF writer and reader: round trip, the LRU wrap of whole blocks with
//! dangling references read as NULL, byte-swapped files, and errors that
//! name the offset.

mod support;

use proptest::prelude::*;
use support::{events, expected, probe, same, value_for};
use tnf::reader::{ReadErrorKind, Value};
use tnf::{ArgType, ArgValue, Endian, ProbeDesc, TnfFile, TnfWriter};

fn arg_type() -> impl Strategy<Value = ArgType> {
    prop::sample::select(ArgType::ALL.to_vec())
}

/// One event to write: (probe index, thread index, time step, values).
type Ev = (usize, usize, u32, Vec<ArgValue>);

/// Probes, then events.
fn workload(max_events: usize) -> impl Strategy<Value = (Vec<ProbeDesc>, Vec<Ev>)> {
    prop::collection::vec(prop::collection::vec(arg_type(), 0..=5), 1..4).prop_flat_map(
        move |sigs| {
            let probes: Vec<ProbeDesc> = sigs
                .iter()
                .enumerate()
                .map(|(i, s)| probe(&format!("p{i}"), s))
                .collect();
            let n = probes.len();
            let ev = (0..n).prop_flat_map(move |_| Just(())).prop_flat_map({
                let sigs = sigs.clone();
                move |_| {
                    let sigs = sigs.clone();
                    prop::collection::vec(
                        (0..n).prop_flat_map(move |p| {
                            let vals: Vec<BoxedStrategy<ArgValue>> =
                                sigs[p].iter().map(|t| value_for(*t, 300)).collect();
                            (Just(p), 0..3usize, 1..5_000_000u32, vals)
                        }),
                        1..max_events,
                    )
                }
            });
            (Just(probes), ev)
        },
    )
}

fn write(
    probes: &[ProbeDesc],
    evs: &[Ev],
    size: u64,
    endian: Endian,
) -> (Vec<u8>, Vec<support::ReadEvent>) {
    let mut w = TnfWriter::new(size, endian).unwrap();
    let mut time = 1_000_000_000i64;
    let mut written = Vec::new();
    for (p, t, step, vals) in evs {
        time += i64::from(*step);
        let thread = (100 + *t as u32, *t as u32 + 1, *t as u32 + 1);
        w.event(*p as u64, &probes[*p], thread, time, vals).unwrap();
        written.push(support::ReadEvent {
            probe: probes[*p].name.clone(),
            thread: (
                u64::from(thread.0),
                u64::from(thread.1),
                u64::from(thread.2),
            ),
            time,
            values: probes[*p]
                .args
                .iter()
                .zip(vals)
                .map(|((ty, _), v)| expected(*ty, v))
                .collect(),
        });
    }
    (w.into_bytes(), written)
}

fn assert_same(read: &support::ReadEvent, want: &support::ReadEvent, dangling_ok: bool) {
    assert_eq!(
        (&read.probe, read.thread, read.time),
        (&want.probe, want.thread, want.time)
    );
    assert_eq!(read.values.len(), want.values.len());
    for (r, w) in read.values.iter().zip(&want.values) {
        assert!(same(r, w, dangling_ok), "{r:?} != {w:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Without a wrap, every event reads back as written, in either byte order.
    #[test]
    fn round_trip((probes, evs) in workload(60), big in any::<bool>()) {
        let endian = if big { Endian::Big } else { Endian::Little };
        let (bytes, written) = write(&probes, &evs, 1 << 20, endian);
        let file = TnfFile::parse(&bytes).unwrap();
        prop_assert_eq!(file.header().endian, endian);
        let read = events(&file);
        prop_assert_eq!(read.len(), written.len());
        for (r, w) in read.iter().zip(&written) {
            assert_same(r, w, false);
        }
    }

    /// After wrapping, what is left is the newest events, each as written,
    /// except that a string whose block was reused reads as NULL.
    #[test]
    fn wrap_keeps_the_newest((probes, evs) in workload(400)) {
        let (bytes, written) = write(&probes, &evs, 128 * 1024, Endian::Little);
        let file = TnfFile::parse(&bytes).unwrap();
        let read = events(&file);
        // Per thread, the events read are a suffix of those written.
        for t in 0..3u64 {
            let r: Vec<_> = read.iter().filter(|e| e.thread.0 == 100 + t).collect();
            let w: Vec<_> = written.iter().filter(|e| e.thread.0 == 100 + t).collect();
            prop_assert!(r.len() <= w.len());
            for (r, w) in r.iter().zip(&w[w.len() - r.len()..]) {
                assert_same(r, w, true);
            }
        }
        // Only a string in an overwritten block may be NULL: never a number.
        let lost = written.len() - read.len();
        if lost == 0 {
            for (r, w) in read.iter().zip(&written) {
                assert_same(r, w, false);
            }
        }
    }

    /// The same events written big-endian and little-endian dump the same.
    #[test]
    fn byte_swapped_reads_the_same((probes, evs) in workload(40)) {
        let (le, _) = write(&probes, &evs, 128 * 1024, Endian::Little);
        let (be, _) = write(&probes, &evs, 128 * 1024, Endian::Big);
        prop_assert_ne!(&le, &be);
        let (le, be) = (TnfFile::parse(&le).unwrap(), TnfFile::parse(&be).unwrap());
        prop_assert_eq!(tnf::dump::cooked(&le, false).unwrap(), tnf::dump::cooked(&be, false).unwrap());
        prop_assert_eq!(tnf::dump::raw(&le, true).unwrap(), tnf::dump::raw(&be, true).unwrap());
    }
}

/// Strings of 150 to 230 bytes, 300 to 303 events, make some events' strings land in the
/// block before the event's. After the wrap, the oldest surviving event's
/// string may sit in a reused block: it reads as NULL, and only it does.
#[test]
fn wrap_drops_the_dangling_string() {
    let p = probe("s", &[ArgType::String, ArgType::Long]);
    let mut dangling_seen = 0;
    for (len, n) in (150..=230)
        .step_by(8)
        .flat_map(|len| (300..304).map(move |n| (len, n)))
    {
        let mut w = TnfWriter::new(128 * 1024, Endian::Little).unwrap();
        for i in 0..n {
            w.event(
                0,
                &p,
                (1, 1, 1),
                1000 + i,
                &[ArgValue::Str(vec![b'x'; len]), ArgValue::Int(i)],
            )
            .unwrap();
        }
        assert!(w.stats().blocks_reused > 0);
        let bytes = w.into_bytes();
        let file = TnfFile::parse(&bytes).unwrap();
        let read = events(&file);
        assert!(read.len() > 60, "{len}: {}", read.len());
        let counts: Vec<i64> = read
            .iter()
            .map(|e| {
                if let Value::Int(i) = e.values[1] {
                    i
                } else {
                    -1
                }
            })
            .collect();
        assert_eq!(
            counts,
            (n - read.len() as i64..n).collect::<Vec<_>>(),
            "the newest events, in order"
        );
        for (i, e) in read.iter().enumerate() {
            match &e.values[0] {
                Value::Null => {
                    assert_eq!(i, 0, "{len}: only the oldest event can lose its string");
                    dangling_seen += 1;
                    let text = tnf::dump::cooked(&file, false).unwrap();
                    assert!(text.contains("a0: 0x0        <NULL> a1: "), "{text}");
                }
                Value::Str { text, .. } => assert_eq!(text.len(), len),
                other => panic!("{other:?}"),
            }
        }
    }
    assert!(dangling_seen > 0, "some length leaves a dangling string");
}

#[test]
fn sizes_outside_128k_to_256m_are_refused() {
    assert!(TnfWriter::new(128 * 1024 - 1, Endian::Little).is_err());
    assert!(TnfWriter::new(512 * 1024 * 1024, Endian::Little).is_err());
    let w = TnfWriter::new(4 * 1024 * 1024 + 100, Endian::Little).unwrap();
    assert_eq!(w.bytes().len(), 4 * 1024 * 1024);
}

#[test]
fn errors_name_the_offset() {
    let p = probe("e", &[ArgType::Long]);
    let mut w = TnfWriter::new(128 * 1024, Endian::Little).unwrap();
    w.event(0, &p, (1, 1, 1), 5, &[ArgValue::Int(1)]).unwrap();
    let good = w.into_bytes();

    let e = TnfFile::parse(b"TNF").unwrap_err();
    assert_eq!((e.offset, e.kind), (0, ReadErrorKind::PastEnd { need: 4 }));
    let e = TnfFile::parse(b"XNF\0rest").unwrap_err();
    assert_eq!(e.offset, 0);
    assert!(e.to_string().contains("magic"), "{e}");

    // Truncated: block_count claims more than the file has.
    let e = TnfFile::parse(&good[..100 * 1024]).unwrap_err();
    assert_eq!(e.offset, 32);

    // A block's bytes_valid beyond 512.
    let mut bad = good.clone();
    bad[0x18008..0x1800a].copy_from_slice(&600u16.to_le_bytes());
    let e = TnfFile::parse(&bad).unwrap_err();
    assert_eq!(
        (e.offset, e.kind),
        (0x18008, ReadErrorKind::BadBytesValid(600))
    );

    // The reserved reference type in a record's first word.
    let mut bad = good.clone();
    bad[0x18010..0x18014].copy_from_slice(&0x8000_0003u32.to_le_bytes());
    let e = TnfFile::parse(&bad).unwrap_err();
    assert_eq!(e.offset, 0x18010);
    assert!(e.to_string().contains("0x18010"), "{e}");
}
