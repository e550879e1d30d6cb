//! The CPTRAP file through the recorder and the reader: what is selected is
//! written and read back in order; a full transfer buffer loses records,
//! counted and marked where they were lost; corrupt files are refused with
//! the byte offset.

use cptrap::file::{BLOCK_SIZE, Record};
use cptrap::{
    CptrapFile, Entry, Interface, InterfaceRecord, ReadErrorKind, Recorder, Selection, TypeNum,
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Event {
    Table(u8, u64),
    Iface(bool, u16, usize),
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        (1u8..=0x1B, any::<u64>()).prop_map(|(t, w)| Event::Table(t, w)),
        (any::<bool>(), 0u16..8, 0usize..400).prop_map(|(cp, c, n)| Event::Iface(cp, c, n)),
    ]
}

fn to_record(e: &Event, i: usize) -> Record {
    match *e {
        Event::Table(t, w) => {
            let mut entry = Entry::new(TypeNum(t));
            entry.frame.time = i as u64;
            entry.frame.pid = (i % 3) as u16;
            entry.words = [w as u32, (w >> 32) as u32, i as u32, 7];
            Record::Table(entry)
        }
        Event::Iface(cp, code, len) => {
            let data: Vec<u8> = (0..len).map(|j| (i + j) as u8).collect();
            let which = if cp {
                Interface::Cp
            } else {
                Interface::VirtualMachine
            };
            Record::interface(
                InterfaceRecord::new(which, code, &data),
                (i % 3) as u16,
                1,
                i as u64,
            )
        }
    }
}

fn feed(rec: &mut Recorder, r: &Record) {
    match r {
        Record::Table(e) => rec.record_entry(e),
        Record::Interface { frame, record } => {
            rec.record_interface(record.clone(), frame.pid, frame.tid, frame.time)
        }
        Record::DataLost { .. } => unreachable!(),
    }
}

fn records_of(file: &CptrapFile) -> Vec<Record> {
    file.records().iter().map(|r| r.record.clone()).collect()
}

proptest! {
    #[test]
    fn selected_records_round_trip_in_order(
        events in prop::collection::vec(event(), 0..300),
        types in prop::collection::vec(prop_oneof![1u8..=0x1B, Just(0x3E), Just(0x3F)], 1..6),
        code in prop::option::of(0u16..8),
    ) {
        let mut words: Vec<String> = vec!["TYPE".into()];
        words.extend(types.iter().map(|t| format!("{t:02X}")));
        if let Some(c) = code {
            words.push("CODE".into());
            words.push(c.to_string());
        }
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let sel = Selection::parse(&words).unwrap();
        let mut rec = Recorder::new(sel.clone(), 1);
        let mut file = Vec::new();
        let mut expected = Vec::new();
        for (i, e) in events.iter().enumerate() {
            let r = to_record(e, i);
            if sel.matches(&r) {
                expected.push(r.clone());
            }
            feed(&mut rec, &r);
            // A spool as fast as the system: nothing is lost.
            rec.spool(&mut file, usize::MAX).unwrap();
        }
        let stats = rec.finish(&mut file).unwrap();
        prop_assert_eq!(stats.lost_records, 0);
        prop_assert_eq!(file.len() % BLOCK_SIZE, 0);
        let read = CptrapFile::parse(&file).unwrap();
        prop_assert!(read.closed());
        prop_assert_eq!(read.blocks() as u64, stats.blocks);
        prop_assert_eq!(records_of(&read), expected);
        for (i, r) in read.records().iter().enumerate() {
            prop_assert_eq!(r.number, i + 1);
        }
    }

    #[test]
    fn every_record_is_written_or_counted_lost(
        sizes in prop::collection::vec(0usize..300, 1..400),
        transfer in 1usize..3,
        spool_every in 1usize..80,
    ) {
        let mut rec = Recorder::new(Selection::all(), transfer);
        let mut file = Vec::new();
        for (i, &n) in sizes.iter().enumerate() {
            rec.record_interface(
                InterfaceRecord::new(Interface::VirtualMachine, 1, &vec![0xAB; n]), 1, 1, i as u64);
            if i % spool_every == 0 {
                rec.spool(&mut file, 1).unwrap();
            }
        }
        let stats = rec.finish(&mut file).unwrap();
        let read = CptrapFile::parse(&file).unwrap();
        let mut marked = 0u64;
        let mut data = 0u64;
        for r in read.records() {
            match r.record {
                Record::DataLost { records, .. } => marked += u64::from(records),
                _ => data += 1,
            }
        }
        prop_assert_eq!(data, stats.records);
        prop_assert_eq!(marked, stats.lost_records);
        prop_assert_eq!(stats.records + stats.lost_records, sizes.len() as u64);
    }
}

#[test]
fn a_tiny_transfer_buffer_loses_records_and_marks_the_place() {
    // One block of room and no spool until the end: the current block and
    // the one waiting fill, then every record is lost.
    let mut rec = Recorder::new(Selection::all(), 1);
    for i in 0..400u64 {
        let mut e = Entry::api_call("DOSCALLS", 1, 0, 0);
        e.frame.time = i;
        rec.record_entry(&e);
    }
    assert!(rec.losing());
    let mut file = Vec::new();
    let stats = rec.finish(&mut file).unwrap();
    // (4096 - 16) / 32 = 127 entries a block, two blocks kept.
    assert_eq!(stats.records, 254);
    assert_eq!(stats.lost_records, 146);
    assert_eq!(stats.lost_bytes, 146 * 32);
    assert_eq!(stats.loss_marks, 1);
    let read = CptrapFile::parse(&file).unwrap();
    let last = read.records().last().unwrap();
    assert_eq!(last.record, Record::data_lost(146, 146 * 32, 254));
    assert_eq!(last.number, 255);
}

#[test]
fn the_mark_stands_where_the_loss_was() {
    let mut rec = Recorder::new(Selection::all(), 1);
    let mut file = Vec::new();
    let entry = |t: u64| {
        let mut e = Entry::new(TypeNum::ALLOC);
        e.frame.time = t;
        e
    };
    for t in 0..300 {
        rec.record_entry(&entry(t));
    }
    // The spool catches up; later records go in after the mark.
    rec.spool(&mut file, usize::MAX).unwrap();
    rec.record_entry(&entry(1000));
    let stats = rec.finish(&mut file).unwrap();
    assert_eq!(stats.lost_records, 300 - 254);
    let read = CptrapFile::parse(&file).unwrap();
    let times: Vec<(TypeNum, u64)> = read
        .records()
        .iter()
        .skip(253)
        .map(|r| (r.record.typenum(), r.record.frame().time))
        .collect();
    assert_eq!(
        times,
        [
            (TypeNum::ALLOC, 253),
            (TypeNum::DATA_LOST, 254),
            (TypeNum::ALLOC, 1000)
        ]
    );
}

fn sample_file() -> Vec<u8> {
    let mut rec = Recorder::new(Selection::all(), 4);
    rec.record_entry(&Entry::api_call("DOSCALLS", 282, 0, 0));
    rec.record_interface(InterfaceRecord::new(Interface::Cp, 9, b"hello"), 1, 1, 5);
    let mut file = Vec::new();
    rec.finish(&mut file).unwrap();
    file
}

#[test]
fn corrupt_files_are_refused_with_the_offset() {
    let good = sample_file();
    assert_eq!(CptrapFile::parse(&good).unwrap().records().len(), 2);
    let check = |bytes: &[u8], offset: usize, kind: ReadErrorKind| {
        let err = CptrapFile::parse(bytes).unwrap_err();
        assert_eq!((err.offset, &err.kind), (offset, &kind), "{err}");
        assert!(
            err.to_string().contains(&format!("byte offset {offset}")),
            "{err}"
        );
    };
    check(&[], 0, ReadErrorKind::Empty);
    check(&good[..4000], 0, ReadErrorKind::PartialBlock(4000));
    let mut two = good.clone();
    two.extend_from_slice(&good);
    check(
        &two,
        4096 + 8,
        ReadErrorKind::BlockNumber {
            expected: 1,
            found: 0,
        },
    );
    let mut bad = good.clone();
    bad[0] = b'X';
    check(&bad, 0, ReadErrorKind::BadMagic);
    let mut bad = good.clone();
    bad[16 + 32] = 0x3D; // the interface record's typenum
    check(&bad, 48, ReadErrorKind::UnknownType(0x3D));
    let mut bad = good.clone();
    bad[48 + 16 + 5] = 0x02; // its total length, now 0x020D
    check(&bad, 68, ReadErrorKind::BadTotalLength(0x020D));
    let mut bad = good.clone();
    bad[48 + 16 + 4] = 7; // shorter than the header
    check(&bad, 68, ReadErrorKind::BadTotalLength(7));
    let mut bad = good.clone();
    bad[48 + 16] = 0x3E; // header type differs from the frame's
    check(
        &bad,
        64,
        ReadErrorKind::HeaderType {
            frame: 0x3F,
            header: 0x3E,
        },
    );
    let mut bad = good.clone();
    bad[12] = 74; // used bytes cut the interface record
    check(
        &bad,
        48,
        ReadErrorKind::Truncated {
            need: 16 + 13,
            left: 26,
        },
    );
    let mut bad = good.clone();
    bad[14] = 3;
    check(
        &bad,
        14,
        ReadErrorKind::RecordCount {
            header: 3,
            found: 2,
        },
    );
}
