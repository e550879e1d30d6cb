//! CPTRAP and TNF files in the views: read, formatted as their own tools
//! show them, filtered and browsed like STDA records.

use cptrap::{Entry, Interface, InterfaceRecord, Recorder, Selection};
use tnf::{ArgType, ArgValue, Endian, ProbeDesc, TnfWriter};
use view::browse::{App, Key};
use view::filter::Filter;
use view::render::Formatter;

#[test]
fn cptrap_and_tnf_files_are_read_and_browsed() {
    let dir = tempfile::tempdir().unwrap();
    // A CPTRAP file: an API call and interface data.
    let mut rec = Recorder::new(Selection::parse(&["TYPE", "02", "3E"]).unwrap(), 4);
    let mut call = Entry::api_call("DOSCALLS", 282, 0, 0x0001_0040);
    call.frame.time = 100;
    rec.record_entry(&call);
    rec.record_interface(
        InterfaceRecord::new(Interface::VirtualMachine, 3, b"hello"),
        1,
        1,
        200,
    );
    let mut bytes = Vec::new();
    rec.finish(&mut bytes).unwrap();
    let cp = dir.path().join("TRACE.CPT");
    std::fs::write(&cp, &bytes).unwrap();
    // A TNF file: two events of one probe.
    let probe = ProbeDesc {
        name: "inloop".into(),
        keys: "cookie main loop".into(),
        detail: "sunw%debug 'in the loop'".into(),
        file: "cookie2.c".into(),
        line: 50,
        args: vec![(ArgType::Long, "loop_count".into())],
        debug: false,
        records: Vec::new(),
    };
    let mut w = TnfWriter::new(128 * 1024, Endian::Little).unwrap();
    w.event(1, &probe, (42, 1, 1), 1_000, &[ArgValue::Int(7)])
        .unwrap();
    w.event(1, &probe, (42, 1, 1), 2_501_000, &[ArgValue::Int(8)])
        .unwrap();
    let tn = dir.path().join("TRACE.TNF");
    std::fs::write(&tn, w.into_bytes()).unwrap();

    let trace = view::trace::load(&[cp.clone(), tn.clone()]).unwrap();
    assert_eq!(trace.sources[0].kind, "CPTRAP");
    assert_eq!(trace.sources[1].kind, "TNF");
    assert_eq!(trace.entries.len(), 4);
    let (fmt, _) = Formatter::load(&[], &trace);
    assert!(fmt.hints(&trace).is_empty());
    let api = &trace.entries[0];
    assert_eq!(api.record.major, 0x02);
    assert!(fmt.desc(api).starts_with("API CALL"), "{}", fmt.desc(api));
    assert!(
        fmt.lines(api)[1].contains("RECORD 1"),
        "{:?}",
        fmt.lines(api)
    );
    let iface = &trace.entries[1];
    assert_eq!(iface.record.major, 0x3E);
    assert_eq!(iface.record.data, b"hello");
    let ev = &trace.entries[3];
    assert!(
        fmt.desc(ev).starts_with("inloop loop_count: 8"),
        "{}",
        fmt.desc(ev)
    );
    assert_eq!(ev.fine.unwrap().ns, 2_500_000);
    assert_eq!(fmt.json(ev, &trace.sources)["kind"], "TNF");

    // Browsing: a filter on the interface typenum, a search in the TNF.
    let mut app = App::new(trace, fmt, Filter::default());
    for k in "m3e".chars() {
        app.key(Key::Char(k));
    }
    app.key(Key::Enter);
    assert_eq!(app.visible().len(), 1);
    assert!(
        app.status().contains("filter: major 003E"),
        "{}",
        app.status()
    );
    app.key(Key::Char('c'));
    app.key(Key::Char('/'));
    for k in "count: 8".chars() {
        app.key(Key::Char(k));
    }
    app.key(Key::Enter);
    assert_eq!(app.selected(), Some(3));
    app.key(Key::Char('h'));
    let hist = app.histogram();
    assert_eq!(hist.len(), 3);
    assert_eq!(hist.iter().map(|h| h.hits).sum::<u64>(), 4);
    app.key(Key::Char('q'));
    assert!(app.done());
}
