//! The STDA writer and reader: the property of issue 5 (after any number of
//! wraps the reader returns exactly the most recent records that fit, byte
//! for byte, in both formats), the Debugging Handbook's worked example, and
//! DosGetSTDA's snapshot-and-reset.

use proptest::prelude::*;
use stda::savefile::SaveFile;
use stda::{
    DosDateTime, Record, RecordFlags, RecordIn, Stamp, Stda, StdaFormat, StopReason, Timestamp,
    TraceBuffer, TraceDateTime,
};

#[derive(Debug, Clone)]
enum Op {
    Log {
        major: u16,
        minor: u16,
        pid: u16,
        flags: u8,
        len: usize,
        fill: u8,
        dt: u64,
    },
    GetStda,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        40 => (any::<u16>(), any::<u16>(), any::<u16>(), any::<u8>(), 0usize..1500, any::<u8>(), 0u64..40)
            .prop_map(|(major, minor, pid, flags, len, fill, dt)| Op::Log { major, minor, pid, flags, len, fill, dt }),
        1 => Just(Op::GetStda),
    ]
}

/// What the reader must give back for one logged record.
#[derive(Debug, Clone, PartialEq)]
struct Expect {
    major: u8,
    minor: u16,
    pid: u16,
    flags: u8,
    data: Vec<u8>,
    stamp: Option<Stamp>,
}

impl Expect {
    fn size(&self) -> usize {
        self.data.len()
            + 8
            + match self.stamp {
                None => 0,
                Some(Stamp::Old { .. }) => 2,
                Some(Stamp::New(_)) => 4,
            }
    }
}

fn data_of(len: usize, fill: u8) -> Vec<u8> {
    (0..len).map(|i| fill.wrapping_add(i as u8)).collect()
}

/// The most recent records that fit, oldest first, with old-format times
/// inherited inside that suffix.
fn expected_read(log: &[Expect], capacity: usize) -> Vec<(Expect, Option<Stamp>)> {
    let mut total = 0;
    let mut start = log.len();
    while start > 0 && total + log[start - 1].size() <= capacity {
        total += log[start - 1].size();
        start -= 1;
    }
    let mut current = None;
    log[start..]
        .iter()
        .map(|e| {
            if e.stamp.is_some() {
                current = e.stamp;
            }
            (e.clone(), current)
        })
        .collect()
}

fn check(read: &[Record], want: &[(Expect, Option<Stamp>)]) -> Result<(), TestCaseError> {
    prop_assert_eq!(read.len(), want.len());
    for (r, (e, time)) in read.iter().zip(want) {
        prop_assert_eq!(r.major, e.major);
        prop_assert_eq!(r.minor, e.minor);
        prop_assert_eq!(r.pid, e.pid);
        prop_assert_eq!(r.flags.bits(), e.flags);
        prop_assert_eq!(&r.data, &e.data);
        prop_assert_eq!(r.stamp, e.stamp);
        prop_assert_eq!(r.time, *time);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn reader_returns_the_most_recent_records_that_fit(
        new_format in any::<bool>(),
        kb in prop_oneof![1u32..=4, 1u32..=63],
        ops in prop::collection::vec(op(), 0..250),
    ) {
        let format = if new_format { StdaFormat::New } else { StdaFormat::Old };
        let mut buf = TraceBuffer::new(format, kb).unwrap();
        let capacity = buf.capacity();
        prop_assert_eq!(capacity, kb as usize * 1024 - usize::from(format.first()));
        let mut log: Vec<Expect> = Vec::new();
        let mut last_stamped: Option<Timestamp> = None;
        let mut clock = 3_600_000u64;
        for op in ops {
            match op {
                Op::GetStda => {
                    let snap = buf.get_stda();
                    let stda = Stda::parse(&snap.stda).unwrap();
                    check(&stda.records(), &expected_read(&log, capacity))?;
                    prop_assert_eq!(snap.records_logged, log.len() as u64);
                    log.clear();
                    last_stamped = None;
                    // The reset buffer reads as empty.
                    prop_assert_eq!(Stda::parse(buf.as_bytes()).unwrap().records().len(), 0);
                }
                Op::Log { major, minor, pid, flags, len, fill, dt } => {
                    clock += dt * 10;
                    let time = Timestamp::from_millis(clock);
                    let data = data_of(len, fill);
                    let flags = RecordFlags::from_bits_retain(flags);
                    let rec = RecordIn { major, minor, pid, flags, data: &data };
                    let stamp = match format {
                        StdaFormat::New => Some(Stamp::New(time)),
                        StdaFormat::Old if last_stamped != Some(time) => Some(Stamp::old(time)),
                        StdaFormat::Old => None,
                    };
                    let mut f = flags.bits() & !0x02;
                    if stamp.is_none() {
                        f |= 0x02;
                    }
                    let e = Expect { major: major as u8, minor, pid, flags: f, data: data.clone(), stamp };
                    let result = buf.log(&rec, time);
                    if major as u8 == 0 && len == 0 {
                        prop_assert!(result.is_err());
                    } else if e.size() > capacity {
                        prop_assert!(result.is_err());
                    } else {
                        prop_assert!(result.is_ok());
                        if stamp.is_some() {
                            last_stamped = Some(time);
                        }
                        log.push(e);
                    }
                }
            }
        }
        let want = expected_read(&log, capacity);
        let stda = Stda::parse(buf.as_bytes()).unwrap();
        check(&stda.records(), &want)?;
        // The backward walk is the same records, newest first.
        let back: Vec<Record> = stda.walk_back().collect();
        prop_assert_eq!(back.len(), want.len());
        prop_assert!(back.iter().rev().zip(&want).all(|(r, (e, _))| r.data == e.data));
        // Through a save file, byte for byte.
        let save = SaveFile { datetime: DosDateTime::default(), stda: buf.as_bytes().to_vec() };
        let back = SaveFile::parse(&save.to_bytes()).unwrap();
        prop_assert_eq!(&back.stda, &save.stda);
        check(&back.view().unwrap().records(), &want)?;
    }
}

/// The Debugging Handbook's example: FIRST at byte 14, NEXT at byte 26, an
/// 8-byte trailer at 18, a 2-byte timestamp at 16, and 4 bytes of data, 2
/// at 14 and 2 at the end of the buffer (before LAST + 1).
#[test]
fn handbook_worked_example_by_hand() {
    let len = 1024usize;
    let mut b = vec![0u8; len];
    b[..8].copy_from_slice(b"SYSTRACE");
    b[8..10].copy_from_slice(&14u16.to_le_bytes());
    b[10..12].copy_from_slice(&((len - 1) as u16).to_le_bytes());
    b[12..14].copy_from_slice(&26u16.to_le_bytes());
    b[len - 2..].copy_from_slice(&[0xD0, 0xD1]);
    b[14..16].copy_from_slice(&[0xD2, 0xD3]);
    b[16..18].copy_from_slice(&[7, 42]); // seconds, hundredths
    b[18..26].copy_from_slice(&[0x04, 0x34, 0x12, 0x81, 0x00, 4, 0, 0xC5]);
    // The bytes before the data at LAST-1 (LAST-9..=LAST-2) are zero: end of data.
    let stda = Stda::parse(&b).unwrap();
    assert_eq!(
        (stda.first(), stda.next_offset(), stda.format()),
        (14, 26, StdaFormat::Old)
    );
    let mut walk = stda.walk_back();
    let r = walk.next().unwrap();
    assert_eq!(r.data, [0xD0, 0xD1, 0xD2, 0xD3]);
    assert_eq!(
        r.stamp,
        Some(Stamp::Old {
            seconds: 7,
            hundredths: 42
        })
    );
    assert_eq!((r.major, r.minor, r.pid), (0xC5, 0x0081, 0x1234));
    assert_eq!(r.flags, RecordFlags::PROTECT);
    assert_eq!(r.offset as usize, len - 2);
    assert_eq!(walk.next(), None);
    assert_eq!(walk.stop_reason(), Some(StopReason::EndOfData));
}

/// The same picture, made by the writer: one record of 998 data bytes, then
/// the 4-byte record that wraps 2 + 2.
#[test]
fn handbook_worked_example_written() {
    let mut buf = TraceBuffer::new(StdaFormat::Old, 1).unwrap();
    let big = vec![0xAB; 998];
    let rec = |data: &'static [u8]| RecordIn {
        major: 0xC5,
        minor: 1,
        pid: 3,
        flags: RecordFlags::PROTECT,
        data,
    };
    let big: &'static [u8] = Box::leak(big.into_boxed_slice());
    buf.log(&rec(big), Timestamp::new(0, 0, 1, 0)).unwrap();
    assert_eq!(buf.next(), 1022);
    buf.log(&rec(&[1, 2, 3, 4]), Timestamp::new(0, 0, 1, 1))
        .unwrap();
    assert_eq!(buf.next(), 26);
    let b = buf.as_bytes();
    assert_eq!(&b[1022..], &[1, 2]);
    assert_eq!(&b[14..16], &[3, 4]);
    assert_eq!(&b[16..18], &[1, 1]);
    let stda = Stda::parse(b).unwrap();
    let mut walk = stda.walk_back();
    assert_eq!(walk.next().unwrap().data, [1, 2, 3, 4]);
    // The big record lost its first 12 bytes: the walk stops before it.
    assert_eq!(walk.next(), None);
    assert_eq!(walk.stop_reason(), Some(StopReason::Capacity));
}

#[test]
fn old_format_stamps_only_when_the_time_changes() {
    let mut buf = TraceBuffer::new(StdaFormat::Old, 1).unwrap();
    let r = RecordIn {
        major: 0x10,
        minor: 2,
        pid: 1,
        flags: RecordFlags::empty(),
        data: &[],
    };
    let t0 = Timestamp::new(1, 2, 3, 4);
    let t1 = Timestamp::new(1, 2, 3, 5);
    for t in [t0, t0, t1, t1, t0] {
        buf.log(&r, t).unwrap();
    }
    let recs = Stda::parse(buf.as_bytes()).unwrap().records();
    let stamps: Vec<_> = recs.iter().map(|r| r.stamp.is_some()).collect();
    assert_eq!(stamps, [true, false, true, false, true]);
    assert_eq!(recs[1].time, Some(Stamp::old(t0)));
    assert_eq!(recs[3].time, Some(Stamp::old(t1)));
    assert!(recs[1].flags.contains(RecordFlags::NO_TIMESTAMP));
    // After DosGetSTDA the first record is stamped again.
    let snap = buf.get_stda();
    assert_eq!(snap.records_logged, 5);
    buf.log(&r, t0).unwrap();
    let recs = Stda::parse(buf.as_bytes()).unwrap().records();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].stamp, Some(Stamp::old(t0)));
}

#[test]
fn new_format_header_times_and_stamps() {
    let mut buf = TraceBuffer::new(StdaFormat::New, 2).unwrap();
    let on = TraceDateTime {
        year: 1996,
        month: 7,
        day: 1,
        time: Timestamp::new(9, 30, 0, 0),
    };
    buf.set_trace_on(on);
    let t = Timestamp::new(9, 30, 1, 50);
    let r = RecordIn {
        major: 0x1C5,
        minor: 0x8001,
        pid: 7,
        flags: RecordFlags::API | RecordFlags::DYNAMIC | RecordFlags::NO_TIMESTAMP,
        data: b"abc",
    };
    buf.log(&r, t).unwrap();
    let b = buf.as_bytes();
    assert_eq!(&b[0x0E..0x16], &on.to_bytes());
    // Data, then H M s h, then the trailer with bit 1 clear and major's low byte.
    assert_eq!(
        &b[0x1E..0x1E + 15],
        b"abc\x09\x1e\x01\x32\x09\x07\x00\x01\x80\x03\x00\xc5"
    );
    let off = TraceDateTime {
        time: Timestamp::new(9, 31, 0, 0),
        ..on
    };
    buf.set_trace_off(off);
    let stda = Stda::parse(buf.as_bytes()).unwrap();
    let times = stda.trace_times().unwrap();
    assert_eq!((times.on, times.off), (on, off));
    let recs = stda.records();
    assert_eq!(recs[0].time, Some(Stamp::New(t)));
    assert_eq!(recs[0].major, 0xC5);
}

#[test]
fn buffer_sizes_and_refusals() {
    assert!(TraceBuffer::new(StdaFormat::Old, 0).is_err());
    assert!(TraceBuffer::new(StdaFormat::Old, 64).is_err());
    let big = TraceBuffer::new(StdaFormat::New, 63).unwrap();
    assert_eq!(big.as_bytes().len(), 63 * 1024);
    assert_eq!(&big.as_bytes()[10..12], &(63u16 * 1024 - 1).to_le_bytes());
    let mut small = TraceBuffer::new(StdaFormat::Old, 1).unwrap();
    let data = vec![0; 1024];
    let r = RecordIn {
        major: 1,
        minor: 1,
        pid: 1,
        flags: RecordFlags::empty(),
        data: &data,
    };
    assert!(small.log(&r, Timestamp::default()).is_err());
    let end = RecordIn {
        major: 0x100,
        data: &[],
        ..r
    };
    assert!(small.log(&end, Timestamp::default()).is_err());
    assert_eq!(small.records_logged(), 0);
    assert_eq!(small.next(), 14);
}

/// A record that fills the area exactly, so NEXT comes back to FIRST.
#[test]
fn exact_fill_wraps_next_to_first() {
    let mut buf = TraceBuffer::new(StdaFormat::New, 1).unwrap();
    let cap = buf.capacity();
    let data = vec![0x5A; cap - 12];
    let r = RecordIn {
        major: 9,
        minor: 1,
        pid: 1,
        flags: RecordFlags::empty(),
        data: &data,
    };
    buf.log(&r, Timestamp::default()).unwrap();
    assert_eq!(buf.next(), 0x1E);
    let recs = Stda::parse(buf.as_bytes()).unwrap().records();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].data, data);
    assert_eq!(recs[0].offset, 0x1E);
}
