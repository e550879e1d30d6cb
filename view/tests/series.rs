//! A TRSPOOL series with sidecars: capture order, gaps, lost records and
//! fine times; the Perfetto export with cost slices; filters on emulated
//! time.

use std::path::{Path, PathBuf};

use prost::Message as _;
use stda::sidecar::{HitTime, Sidecar};
use stda::{DosDateTime, RecordFlags, RecordIn, StdaFormat, Timestamp, TraceBuffer};
use view::filter::{Bound, Filter};
use view::perfetto::proto;
use view::render::{Formatter, series_line};

/// Writes `TRACEBUF.nnn` captured at second `at` with `minors` logged
/// (major C2, PID 3), its sidecar giving record k the time `base_ns + k*1000`
/// and saying `lost` records were lost before it.
fn spool_file(dir: &Path, n: u16, at: u8, minors: &[u16], base_ns: u64, lost: u64) {
    let mut buf = TraceBuffer::new(StdaFormat::New, 1).unwrap();
    let mut entries = Vec::new();
    for (k, &minor) in minors.iter().enumerate() {
        let rec = RecordIn {
            major: 0xC2,
            minor,
            pid: 3,
            flags: RecordFlags::API | RecordFlags::PROTECT,
            data: &[k as u8, 0],
        };
        buf.log(&rec, Timestamp::new(12, 0, at, k as u8)).unwrap();
        entries.push(HitTime {
            cycle: 1000 + k as u64,
            ns: base_ns + k as u64 * 1000,
            cost_ns: 300,
            cost_cycles: 10,
            address: 0x1BFF_0012,
            pid: 3,
            tid: 1,
            minor,
            major: 0xC2,
        });
    }
    let now = DosDateTime {
        time: Timestamp::new(12, 0, at, 50),
        ..DosDateTime::default()
    };
    let save = stda::savefile::traceget(&mut buf, now);
    let path = dir.join(stda::spool::file_name(n));
    std::fs::write(&path, save.to_bytes()).unwrap();
    let side = Sidecar {
        logged: minors.len() as u64 + lost,
        lost,
        entries,
    };
    std::fs::write(Sidecar::path_for(&path), side.to_bytes()).unwrap();
}

#[test]
fn series_in_capture_order_with_gaps_lost_and_fine_time() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A cycle of 4 that wrapped: 002 and 003 are older than 000; 001 is gone.
    spool_file(d, 2, 1, &[1, 2], 1_000_000, 0);
    spool_file(d, 3, 2, &[1], 2_000_000, 4);
    spool_file(d, 0, 3, &[2, 2, 1], 3_000_000, 0);
    let trace = view::trace::load(&[d.to_path_buf()]).unwrap();
    assert!(trace.warnings.is_empty(), "{:?}", trace.warnings);
    let order: Vec<u16> = trace
        .sources
        .iter()
        .map(|s| s.spool_number.unwrap())
        .collect();
    assert_eq!(order, [2, 3, 0]);
    assert_eq!(trace.sources[1].lost, Some(4));
    assert!(
        trace.sources[2].missing_before.is_empty(),
        "the cycle wrapped to 000"
    );
    let line = series_line(&trace.sources[1]);
    assert!(
        line.contains("1 records  4 lost to wraps before it"),
        "{line}"
    );
    assert_eq!(trace.entries.len(), 6);
    assert_eq!(trace.entries[3].fine.unwrap().ns, 3_000_000);
    assert_eq!(trace.entries[3].seq, 4);
    // 000 then 002 in capture order: 001 is missing.
    let dir2 = tempfile::tempdir().unwrap();
    spool_file(dir2.path(), 0, 1, &[1], 0, 0);
    spool_file(dir2.path(), 2, 2, &[1], 10, 0);
    let t2 = view::trace::load(&[dir2.path().to_path_buf()]).unwrap();
    assert_eq!(t2.sources[1].missing_before, [1]);
    assert!(series_line(&t2.sources[1]).contains("gap: TRACEBUF.001 missing"));

    // Emulated-time filters use the sidecar.
    let f = Filter {
        from: Some(Bound::Ns(1_000_500)),
        to: Some(Bound::Ns(3_001_000)),
        ..Filter::default()
    };
    let kept: Vec<usize> = trace
        .entries
        .iter()
        .filter(|e| f.keeps_fields(e))
        .map(|e| e.seq)
        .collect();
    assert_eq!(kept, [2, 3, 4, 5]);

    // JSON carries the fine time.
    let (fmt, _) = Formatter::load(&[], &trace);
    let j = fmt.json(&trace.entries[0], &trace.sources);
    assert_eq!(j["ns"], 1_000_000);
    assert_eq!(j["address"], "1BFF0012");
    assert_eq!(j["file"], "TRACEBUF.002");

    // Perfetto: with every record timed, each hit's cost is a slice.
    let entries: Vec<_> = trace.entries.iter().collect();
    let bytes = view::perfetto::to_perfetto(&entries, &fmt);
    let back = proto::Trace::decode(bytes.as_slice()).unwrap();
    let events: Vec<&proto::TrackEvent> = back
        .packet
        .iter()
        .filter_map(|p| p.track_event.as_ref())
        .collect();
    let count = |t: i32| events.iter().filter(|e| e.r#type == Some(t)).count();
    assert_eq!(count(proto::event_type::SLICE_BEGIN), 6);
    assert_eq!(count(proto::event_type::SLICE_END), 6);
    assert_eq!(count(proto::event_type::INSTANT), 6);
    let end = back
        .packet
        .iter()
        .find(|p| {
            p.track_event
                .as_ref()
                .is_some_and(|e| e.r#type == Some(proto::event_type::SLICE_END))
        })
        .unwrap();
    assert_eq!(end.timestamp, Some(1_000_300));
    // The browser goes to an emulated time, an OS/2 time and a record.
    let mut app = view::browse::App::new(trace.clone(), fmt.clone(), Filter::default());
    let type_in = |app: &mut view::browse::App, text: &str| {
        app.key(view::browse::Key::Char(':'));
        for c in text.chars() {
            app.key(view::browse::Key::Char(c));
        }
        app.key(view::browse::Key::Enter);
    };
    type_in(&mut app, "2ms");
    assert_eq!(app.selected(), Some(2), "{}", app.status());
    type_in(&mut app, "12:00:03.01");
    assert_eq!(app.selected(), Some(4));
    type_in(&mut app, "1");
    assert_eq!(app.selected(), Some(0));
    type_in(&mut app, "9s");
    assert!(
        app.status().contains("no record at or after 9s"),
        "{}",
        app.status()
    );
    // Corrupt sidecars are reported, not fatal.
    let bad: PathBuf = Sidecar::path_for(&d.join("TRACEBUF.003"));
    std::fs::write(&bad, b"OS2TIDX\0junk").unwrap();
    let t3 = view::trace::load(&[d.to_path_buf()]).unwrap();
    assert!(
        t3.warnings[0].contains("TRACEBUF.003.idx"),
        "{:?}",
        t3.warnings
    );
    assert_eq!(t3.sources[1].lost, None);
}
