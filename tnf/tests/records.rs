//! User records (TNF_DECLARE_RECORD): the man page's cookie2 `end` probe
//! logs `node_struct`, a `node_tnf` record, and tnfdump prints it as
//! `{ type: node_tnf cur_sum: 9 max_cnt: 12 }`. Records round-trip in
//! either byte order, with string members; a record whose block the LRU
//! wrap reused reads as NULL; malformed record types are refused.

mod support;

use tnf::probe::RecordType;
use tnf::reader::Value;
use tnf::{ArgType, ArgValue, Endian, ProbeDesc, ProbeError, TnfFile, TnfWriter, WriteError};

fn node_tnf() -> RecordType {
    RecordType {
        name: "node_tnf".into(),
        members: vec![
            (ArgType::Long, "cur_sum".into()),
            (ArgType::Long, "max_cnt".into()),
        ],
    }
}

fn end_probe() -> ProbeDesc {
    ProbeDesc {
        name: "end".into(),
        keys: "cookie main end".into(),
        detail: "sunw%debug exiting program".into(),
        file: "cookie2.c".into(),
        line: 41,
        args: vec![(ArgType::Record, "node_struct".into())],
        debug: false,
        records: vec![node_tnf()],
    }
}

fn node(cur_sum: i64, max_cnt: i64) -> ArgValue {
    ArgValue::Record(vec![ArgValue::Int(cur_sum), ArgValue::Int(max_cnt)])
}

#[test]
fn the_man_pages_end_probe_dumps_as_a_record() {
    for endian in [Endian::Little, Endian::Big] {
        let mut w = TnfWriter::new(128 * 1024, endian).unwrap();
        w.event(0, &end_probe(), (8792, 1, 0), 5_000, &[node(9, 12)])
            .unwrap();
        let bytes = w.into_bytes();
        let file = TnfFile::parse(&bytes).unwrap();
        let text = tnf::dump::cooked(&file, false).unwrap();
        assert!(
            text.starts_with(
                "probe\t tnf_name: \"end\" tnf_string: \"keys cookie main end;file cookie2.c;line 41;sunw%debug exiting program\"\n"
            ),
            "{text}"
        );
        assert!(
            text.ends_with(" end                       node_struct: { type: node_tnf cur_sum: 9 max_cnt: 12 }\n"),
            "{text}"
        );
        // The raw dump shows the record as an instance of its type, and
        // the type as a struct type record with its slot names.
        let raw = tnf::dump::raw(&file, false).unwrap();
        assert!(raw.contains("             node_struct 0x"), "{raw}");
        assert!(raw.contains("<node_tnf>"), "{raw}");
        assert!(raw.contains("                 cur_sum 9\n"), "{raw}");
        assert!(raw.contains("                 max_cnt 12\n"), "{raw}");
    }
}

#[test]
fn records_with_strings_round_trip_and_byte_swap() {
    let rt = RecordType {
        name: "pal_tnf_header".into(),
        members: vec![
            (ArgType::Long, "size".into()),
            (ArgType::String, "descriptor".into()),
            (ArgType::Double, "weight".into()),
        ],
    };
    let p = ProbeDesc {
        name: "pal".into(),
        keys: "pal".into(),
        detail: String::new(),
        file: "pal.c".into(),
        line: 3,
        args: vec![
            (ArgType::ULong, "n".into()),
            (ArgType::Record, "header".into()),
            (ArgType::String, "s".into()),
        ],
        debug: false,
        records: vec![rt],
    };
    let mut dumps = Vec::new();
    for endian in [Endian::Little, Endian::Big] {
        let mut w = TnfWriter::new(128 * 1024, endian).unwrap();
        for i in 0..3 {
            let rec = ArgValue::Record(vec![
                ArgValue::Int(-i),
                ArgValue::Str(format!("header {i}").into_bytes()),
                ArgValue::Float(0.5 * i as f64),
            ]);
            w.event(
                7,
                &p,
                (1, 1, 1),
                1_000 + i * 10,
                &[
                    ArgValue::UInt(i as u64),
                    rec,
                    ArgValue::Str(b"tail".to_vec()),
                ],
            )
            .unwrap();
        }
        let bytes = w.into_bytes();
        let file = TnfFile::parse(&bytes).unwrap();
        let read = support::events(&file);
        assert_eq!(read.len(), 3);
        for (i, e) in read.iter().enumerate() {
            let Value::Ref { offset, type_name } = &e.values[1] else {
                panic!("{:?}", e.values[1]);
            };
            assert_eq!(type_name, "pal_tnf_header");
            let slots = file.record_slots(*offset).unwrap();
            let names: Vec<&str> = slots.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(names, ["tnf_tag", "size", "descriptor", "weight"]);
            assert_eq!(slots[1].1, Value::Int(-(i as i64)));
            assert!(
                matches!(&slots[2].1, Value::Str { text, .. } if *text == format!("header {i}"))
            );
            assert_eq!(slots[3].1, Value::Float(0.5 * i as f64));
        }
        let text = tnf::dump::cooked(&file, false).unwrap();
        assert!(
            text.contains(
                " pal                       n: 2 header: { type: pal_tnf_header size: -2 descriptor: \"header 2\" weight: 1.000000 } s: \"tail\"\n"
            ),
            "{text}"
        );
        dumps.push(text);
    }
    assert_eq!(dumps[0], dumps[1], "byte-swapped files dump the same");
}

/// Records (and their string members) are allocated before their event,
/// possibly in the block before; once that block is reused the reference
/// dangles and reads as NULL, while the newest events keep theirs.
#[test]
fn wrap_drops_dangling_records() {
    let big = RecordType {
        name: "big".into(),
        members: vec![
            (ArgType::String, "text".into()),
            (ArgType::Long, "n".into()),
        ],
    };
    let p = ProbeDesc {
        name: "r".into(),
        keys: "r".into(),
        detail: String::new(),
        file: "r.c".into(),
        line: 1,
        args: vec![(ArgType::Record, "rec".into()), (ArgType::Long, "i".into())],
        debug: false,
        records: vec![big],
    };
    let mut dangling = 0;
    for (len, n) in (150..=230)
        .step_by(8)
        .flat_map(|len| (300..304).map(move |n| (len, n)))
    {
        let mut w = TnfWriter::new(128 * 1024, Endian::Little).unwrap();
        for i in 0..n {
            let rec = ArgValue::Record(vec![ArgValue::Str(vec![b'y'; len]), ArgValue::Int(i)]);
            w.event(0, &p, (1, 1, 1), 1000 + i, &[rec, ArgValue::Int(i)])
                .unwrap();
        }
        assert!(w.stats().blocks_reused > 0);
        let bytes = w.into_bytes();
        let file = TnfFile::parse(&bytes).unwrap();
        let read = support::events(&file);
        let first = n - read.len() as i64;
        for (k, e) in read.iter().enumerate() {
            assert_eq!(
                e.values[1],
                Value::Int(first + k as i64),
                "newest, in order"
            );
            match &e.values[0] {
                Value::Null => {
                    assert_eq!(k, 0, "only the oldest event can lose its record");
                    dangling += 1;
                }
                Value::Ref { offset, .. } => {
                    let slots = file.record_slots(*offset).unwrap();
                    assert_eq!(slots[2].1, Value::Int(first + k as i64));
                    match &slots[1].1 {
                        Value::Str { text, .. } => assert_eq!(text.len(), len),
                        // The member string may be in a reused block.
                        Value::Null => {
                            assert_eq!(k, 0, "only the oldest event's string can dangle");
                            dangling += 1;
                        }
                        other => panic!("{other:?}"),
                    }
                }
                other => panic!("{other:?}"),
            }
        }
        tnf::dump::cooked(&file, false).unwrap();
    }
    assert!(dangling > 0, "some length leaves a dangling reference");
}

#[test]
fn malformed_records_are_refused() {
    let mut w = TnfWriter::new(128 * 1024, Endian::Little).unwrap();
    let mut p = end_probe();
    p.records.clear();
    let e = w.event(0, &p, (1, 1, 1), 1, &[node(1, 2)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "bad probe: record type: 1 record arguments but 0 record types"
    );
    let mut p = end_probe();
    p.records[0].name = "tnf_string".into();
    let e = w.event(1, &p, (1, 1, 1), 1, &[node(1, 2)]).unwrap_err();
    assert_eq!(
        e,
        WriteError::Probe(ProbeError::BadRecord(
            "tnf_string is a built-in type".into()
        ))
    );
    let mut p = end_probe();
    p.records[0].members.push((ArgType::Record, "inner".into()));
    assert!(
        p.validate()
            .unwrap_err()
            .to_string()
            .contains("do not nest")
    );
    let mut p = end_probe();
    p.records[0].members.clear();
    assert!(p.validate().unwrap_err().to_string().contains("0 members"));
    let mut p = end_probe();
    p.records[0].members[0].1 = "9x".into();
    assert!(p.validate().is_err());
    // The same name with other members in one file.
    w.event(2, &end_probe(), (1, 1, 1), 1, &[node(1, 2)])
        .unwrap();
    let mut p = end_probe();
    p.name = "other".into();
    p.records[0].members.pop();
    let e = w
        .event(
            3,
            &p,
            (1, 1, 1),
            2,
            &[ArgValue::Record(vec![ArgValue::Int(1)])],
        )
        .unwrap_err();
    assert!(e.to_string().contains("declared twice"), "{e}");
    // A value that is not a record, or has too few members.
    let e = w
        .event(2, &end_probe(), (1, 1, 1), 3, &[ArgValue::Int(5)])
        .unwrap_err();
    assert!(e.to_string().contains("is not a record"), "{e}");
    let e = w
        .event(2, &end_probe(), (1, 1, 1), 3, &[ArgValue::Record(vec![])])
        .unwrap_err();
    assert!(e.to_string().contains("members"), "{e}");
    // The debug line shows the record.
    assert_eq!(
        tnf::probe::debug_line(&end_probe(), &[node(9, 12)]),
        "probe end; sunw%debug \"exiting program\"; node_struct={ type: node_tnf cur_sum=9; max_cnt=12; };"
    );
}

mod prop {
    use proptest::prelude::*;
    use tnf::probe::RecordType;
    use tnf::reader::Value;
    use tnf::{ArgType, ArgValue, Endian, ProbeDesc, TnfFile, TnfWriter};

    use super::support;

    /// A probe with a scalar `i` (the event's index) then a record of
    /// 1 to 5 random members; and per event, its thread and member values.
    fn workload(
        max_events: usize,
    ) -> impl Strategy<Value = (ProbeDesc, Vec<(usize, Vec<ArgValue>)>)> {
        prop::collection::vec(prop::sample::select(ArgType::ALL.to_vec()), 1..=5).prop_flat_map(
            move |members| {
                let rt = RecordType {
                    name: "rec_tnf".into(),
                    members: members
                        .iter()
                        .enumerate()
                        .map(|(i, t)| (*t, format!("m{i}")))
                        .collect(),
                };
                let probe = ProbeDesc {
                    name: "p".into(),
                    keys: "k".into(),
                    detail: String::new(),
                    file: "p.c".into(),
                    line: 1,
                    args: vec![(ArgType::ULong, "i".into()), (ArgType::Record, "r".into())],
                    debug: false,
                    records: vec![rt],
                };
                let values: Vec<BoxedStrategy<ArgValue>> = members
                    .iter()
                    .map(|t| support::value_for(*t, 120))
                    .collect();
                let events = prop::collection::vec((0..3usize, values), 1..max_events);
                (Just(probe), events)
            },
        )
    }

    fn write(
        probe: &ProbeDesc,
        events: &[(usize, Vec<ArgValue>)],
        size: u64,
        endian: Endian,
    ) -> Vec<u8> {
        let mut w = TnfWriter::new(size, endian).unwrap();
        for (i, (t, members)) in events.iter().enumerate() {
            let thread = (100 + *t as u32, *t as u32 + 1, *t as u32 + 1);
            let args = [ArgValue::UInt(i as u64), ArgValue::Record(members.clone())];
            w.event(0, probe, thread, 1_000 + i as i64 * 10, &args)
                .unwrap();
        }
        w.into_bytes()
    }

    /// Checks the record read for event `i`; a reference into a reused
    /// block may be NULL when `dangling_ok`.
    fn check(
        file: &TnfFile<'_>,
        probe: &ProbeDesc,
        e: &support::ReadEvent,
        events: &[(usize, Vec<ArgValue>)],
        dangling_ok: bool,
    ) {
        let Value::UInt(i) = e.values[0] else {
            panic!("{:?}", e.values[0])
        };
        let members = &events[i as usize].1;
        match &e.values[1] {
            Value::Null => assert!(dangling_ok, "event {i} lost its record"),
            Value::Ref { offset, type_name } => {
                assert_eq!(type_name, "rec_tnf");
                let slots = file.record_slots(*offset).unwrap();
                assert_eq!(slots.len(), members.len() + 1);
                for (((ty, name), v), (sname, read)) in probe.records[0]
                    .members
                    .iter()
                    .zip(members)
                    .zip(&slots[1..])
                {
                    assert_eq!(name, sname);
                    let want = support::expected(*ty, v);
                    assert!(
                        support::same(read, &want, dangling_ok),
                        "{read:?} != {want:?}"
                    );
                }
            }
            other => panic!("{other:?}"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Without a wrap every record reads back, in either byte order,
        /// and both orders dump the same.
        #[test]
        fn records_round_trip_and_byte_swap((probe, events) in workload(60)) {
            let le = write(&probe, &events, 1 << 20, Endian::Little);
            let be = write(&probe, &events, 1 << 20, Endian::Big);
            for bytes in [&le, &be] {
                let file = TnfFile::parse(bytes).unwrap();
                let read = support::events(&file);
                prop_assert_eq!(read.len(), events.len());
                for e in &read {
                    check(&file, &probe, e, &events, false);
                }
            }
            let (le, be) = (TnfFile::parse(&le).unwrap(), TnfFile::parse(&be).unwrap());
            prop_assert_eq!(tnf::dump::cooked(&le, false).unwrap(), tnf::dump::cooked(&be, false).unwrap());
        }

        /// After the wrap each thread keeps its newest events, and a record
        /// (or a string member) may dangle only as NULL.
        #[test]
        fn records_after_the_wrap((probe, events) in workload(500)) {
            let bytes = write(&probe, &events, 128 * 1024, Endian::Little);
            let file = TnfFile::parse(&bytes).unwrap();
            let read = support::events(&file);
            for t in 0..3usize {
                let kept: Vec<u64> = read
                    .iter()
                    .filter(|e| e.thread.0 == 100 + t as u64)
                    .map(|e| match e.values[0] { Value::UInt(i) => i, _ => u64::MAX })
                    .collect();
                let all: Vec<u64> = events
                    .iter()
                    .enumerate()
                    .filter(|(_, (et, _))| *et == t)
                    .map(|(i, _)| i as u64)
                    .collect();
                prop_assert!(kept.len() <= all.len());
                prop_assert_eq!(&kept[..], &all[all.len() - kept.len()..]);
            }
            for e in &read {
                check(&file, &probe, e, &events, true);
            }
            tnf::dump::cooked(&file, false).unwrap();
        }
    }
}
