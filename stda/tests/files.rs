//! TRACEFMT save files, TRACEGET, and TRSPOOL's cyclic files and polling
//! on an emulated clock.

use stda::savefile::{CHECK_STRING, HEADER_SIZE, SaveFile, SaveFileError, traceget};
use stda::spool::{
    MAX_ADAPTIVE_MS, MIN_ADAPTIVE_MS, PollMode, SpoolOptions, Spooler, file_name, preallocate,
    write_poll,
};
use stda::{
    DosDateTime, RecordFlags, RecordIn, Stda, StdaError, StdaFormat, Timestamp, TraceBuffer,
};

fn when() -> DosDateTime {
    DosDateTime {
        time: Timestamp::new(10, 11, 12, 13),
        day: 24,
        month: 12,
        year: 1996,
        timezone: -60,
        weekday: 2,
    }
}

fn rec(data: &[u8]) -> RecordIn<'_> {
    RecordIn {
        major: 0xC5,
        minor: 0x10,
        pid: 2,
        flags: RecordFlags::API | RecordFlags::PROTECT,
        data,
    }
}

#[test]
fn save_file_layout_and_check_key() {
    let mut buf = TraceBuffer::new(StdaFormat::Old, 1).unwrap();
    buf.log(&rec(b"xyz"), Timestamp::new(0, 0, 1, 2)).unwrap();
    let save = traceget(&mut buf, when());
    let bytes = save.to_bytes();
    assert_eq!(bytes.len(), HEADER_SIZE + 1024);
    assert_eq!(&bytes[0..4], &1024u32.to_le_bytes());
    assert_eq!(&bytes[4..15], &when().to_bytes());
    for i in 0..11 {
        assert_eq!(bytes[15 + i], bytes[4 + i] ^ CHECK_STRING[i]);
    }
    assert_eq!(&bytes[0x1A..0x22], b"SYSTRACE");
    let back = SaveFile::parse(&bytes).unwrap();
    assert_eq!(back, save);
    assert_eq!(back.view().unwrap().records()[0].data, b"xyz");
    // TRACEGET emptied the live buffer.
    assert!(Stda::parse(buf.as_bytes()).unwrap().records().is_empty());

    let mut bad = bytes.clone();
    bad[20] ^= 1;
    assert_eq!(
        SaveFile::parse(&bad),
        Err(SaveFileError::BadCheckKey { offset: 20 })
    );
    let mut bad = bytes.clone();
    bad.push(0);
    assert!(matches!(
        SaveFile::parse(&bad),
        Err(SaveFileError::LengthMismatch {
            declared: 1024,
            present: 1025
        })
    ));
    let mut bad = bytes.clone();
    bad[0x1A] = b'X';
    let err = SaveFile::parse(&bad).unwrap_err();
    assert_eq!(
        err,
        SaveFileError::Stda {
            base: 0x1A,
            source: StdaError::BadMagic
        }
    );
    assert!(err.to_string().contains("0x001a"), "{err}");
    assert_eq!(
        SaveFile::parse(&bytes[..10]),
        Err(SaveFileError::Truncated(10))
    );
}

#[test]
fn corrupt_headers_name_their_offset() {
    let buf = TraceBuffer::new(StdaFormat::New, 1).unwrap();
    let good = buf.as_bytes().to_vec();
    let mut b = good.clone();
    b[8] = 0x20;
    let e = Stda::parse(&b).unwrap_err();
    assert_eq!(e, StdaError::UnknownFormat { first: 0x20 });
    assert!(e.to_string().contains("0x0008"));
    let mut b = good.clone();
    b[12..14].copy_from_slice(&5u16.to_le_bytes());
    assert!(matches!(
        Stda::parse(&b),
        Err(StdaError::BadNext { next: 5, .. })
    ));
    assert!(matches!(
        Stda::parse(&good[..500]),
        Err(StdaError::Truncated {
            needed: 1024,
            available: 500,
            ..
        })
    ));
}

fn usage_run(
    spool: &mut Spooler,
    buf: &mut TraceBuffer,
    rate_per_s: u64,
    from_ms: u64,
    until_ms: u64,
) {
    // One 92-byte record (80 data + 4 stamp + 8 trailer) every 1000/rate ms.
    let step = 1000 / rate_per_s;
    let data = [0x11u8; 80];
    let mut t = from_ms;
    while t < until_ms {
        t += step;
        while spool.next_poll_at() <= t {
            let at = spool.next_poll_at();
            spool.poll(buf, at, when());
        }
        buf.log(&rec(&data), Timestamp::from_millis(t)).unwrap();
    }
}

#[test]
fn fixed_polling_counts_lost_records() {
    let opts = SpoolOptions::parse(&["/T1000".to_string(), "/F3".to_string()]).unwrap();
    assert_eq!(opts.mode, PollMode::Fixed { interval_ms: 1000 });
    assert_eq!(opts.files, 3);
    let mut buf = TraceBuffer::new(StdaFormat::New, 1).unwrap();
    let mut spool = Spooler::new(opts, 0);
    // 994-byte area holds 10 records of 92 bytes; 20 per second lose 10.
    usage_run(&mut spool, &mut buf, 20, 0, 5000);
    let t = spool.totals();
    assert_eq!(spool.interval_ms(), 1000);
    // Polls at 1, 2, 3, 4 and 5 s; the first saw 19 records, the others 20,
    // and each kept the 10 most recent.
    assert_eq!(t.polls, 5);
    assert_eq!(t.records, 50);
    assert_eq!(t.lost, 49);
    assert_eq!(t.files_written, 5);
}

#[test]
fn files_cycle_and_empty_polls_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let opts = SpoolOptions::parse(&["/T100".to_string(), "/F2".to_string()]).unwrap();
    let mut spool = Spooler::new(opts, 0);
    let mut buf = TraceBuffer::new(StdaFormat::Old, 2).unwrap();
    let mut names = Vec::new();
    for i in 0..5u64 {
        if i != 2 {
            buf.log(&rec(&[i as u8]), Timestamp::from_millis(i * 100))
                .unwrap();
        }
        let at = spool.next_poll_at();
        let poll = spool.poll(&mut buf, at, when());
        assert_eq!(poll.lost, 0);
        if let Some(path) = write_poll(dir.path(), &poll).unwrap() {
            names.push(path.file_name().unwrap().to_str().unwrap().to_string());
            let save = SaveFile::parse(&std::fs::read(&path).unwrap()).unwrap();
            assert_eq!(save.view().unwrap().records()[0].data, [i as u8]);
        } else {
            assert_eq!(i, 2);
        }
    }
    assert_eq!(
        names,
        [
            "TRACEBUF.000",
            "TRACEBUF.001",
            "TRACEBUF.000",
            "TRACEBUF.001"
        ]
    );
    assert_eq!(file_name(7), "TRACEBUF.007");
}

#[test]
fn adaptive_polling_converges_on_the_target() {
    let opts = SpoolOptions::default();
    assert_eq!(
        opts.mode,
        PollMode::Adaptive {
            target_pct: 30,
            initial_ms: 2000
        }
    );
    let mut buf = TraceBuffer::new(StdaFormat::New, 63).unwrap();
    // Start far from the answer: 100 ms.
    let opts = SpoolOptions::parse(&["/A30".to_string(), "/T100".to_string()]).unwrap();
    let mut spool = Spooler::new(opts, 0);
    // 100 records/s of 92 bytes = 9200 B/s; 30 % of 64482 bytes is
    // 19344 bytes, about 2.1 s of trace.
    usage_run(&mut spool, &mut buf, 100, 0, 120_000);
    let i = spool.interval_ms();
    assert!((1600..=2700).contains(&i), "interval {i}");
    assert_eq!(spool.totals().lost, 0);
    // Ten times the rate: the interval shrinks by about ten.
    usage_run(&mut spool, &mut buf, 1000, 120_000, 180_000);
    let i = spool.interval_ms();
    assert!((160..=270).contains(&i), "interval {i}");
}

#[test]
fn adaptive_polling_stays_within_its_bounds() {
    let opts = SpoolOptions::parse(&["/A50".to_string(), "/T100".to_string()]).unwrap();
    let mut spool = Spooler::new(opts, 0);
    let mut buf = TraceBuffer::new(StdaFormat::New, 1).unwrap();
    // Nothing traced: the interval doubles up to 60 s.
    let mut t = 0;
    for _ in 0..20 {
        t = spool.next_poll_at();
        spool.poll(&mut buf, t, when());
    }
    assert_eq!(spool.interval_ms(), MAX_ADAPTIVE_MS);
    // A flood: every poll wraps, the interval drops to 50 ms and stays.
    let data = [0u8; 400];
    for _ in 0..20 {
        for _ in 0..10 {
            buf.log(&rec(&data), Timestamp::from_millis(t)).unwrap();
        }
        t = spool.next_poll_at();
        let poll = spool.poll(&mut buf, t, when());
        assert!(poll.lost > 0);
    }
    assert_eq!(spool.interval_ms(), MIN_ADAPTIVE_MS);
}

#[test]
fn hysteresis_ignores_small_swings() {
    let opts = SpoolOptions::parse(&["/A40".to_string(), "/T1000".to_string()]).unwrap();
    let mut spool = Spooler::new(opts, 0);
    let mut buf = TraceBuffer::new(StdaFormat::New, 1).unwrap();
    let data = [0u8; 88]; // 100-byte records; 994-byte area
    // Usage alternating 30 % and 50 % around the 40 % target: no change.
    for round in 0..10 {
        let n = if round % 2 == 0 { 3 } else { 5 };
        for _ in 0..n {
            buf.log(&rec(&data), Timestamp::default()).unwrap();
        }
        let t = spool.next_poll_at();
        spool.poll(&mut buf, t, when());
        assert_eq!(spool.interval_ms(), 1000, "round {round}");
    }
}

#[test]
fn bad_options_are_refused() {
    for bad in ["/A0", "/A101", "/F0", "/X", "/Qx", "T5", "/T"] {
        assert!(SpoolOptions::parse(&[bad.to_string()]).is_err(), "{bad}");
    }
    let o = SpoolOptions::parse(&["-w".to_string(), "/q".to_string()]).unwrap();
    assert!(o.write_through && o.preallocate && o.quiet);
}

#[test]
fn preallocation_makes_every_file_of_the_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let opts = SpoolOptions::parse(&["/P".to_string(), "/F3".to_string()]).unwrap();
    preallocate(dir.path(), &opts, 1024).unwrap();
    for n in 0..3 {
        let b = std::fs::read(dir.path().join(file_name(n))).unwrap();
        assert_eq!(b.len(), 26 + 1024);
        assert!(b.iter().all(|&x| x == 0));
    }
    assert!(!dir.path().join("TRACEBUF.003").exists());
}
