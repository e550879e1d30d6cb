//! Looking at traces: the views of `os2trace` over the trace files that
//! the format crates read.
//!
//! * [`trace`]: reading save files, bare STDAs and TRSPOOL series with
//!   their fine-time sidecars into one list of records, and CPTRAP and TNF
//!   files ([`foreign`]);
//! * [`filter`]: selecting records by major, minor, PID, time or
//!   sequence range and text;
//! * [`render`]: records as TRACEFMT text and JSON with decoded fields,
//!   and the "no TFF found" hints;
//! * [`listing`]: `tdf list`, the tracepoints of a TDF joined with the TFF
//!   and the MAP;
//! * [`perfetto`]: the Perfetto protobuf and Chrome JSON exports;
//! * [`plot`]: SVG pictures (hits, cost, timeline);
//! * [`browse`]: the terminal browser.
//!
//! Nothing here prints; the `os2trace` binary does.

pub mod browse;
pub mod filter;
pub mod foreign;
pub mod listing;
pub mod perfetto;
pub mod plot;
pub mod render;
pub mod trace;

/// Every view of a trace file's bytes (and its sidecar's), for the fuzz
/// target and the arbitrary-bytes tests: reading never panics, and neither
/// does anything shown of what was read.
pub fn exercise(file: &[u8], sidecar: Option<&[u8]>) {
    let Ok(trace) = trace::from_capture(std::path::Path::new("fuzz"), file, sidecar) else {
        return;
    };
    let (fmt, _) = render::Formatter::load(&[], &trace);
    let _ = fmt.hints(&trace);
    for e in &trace.entries {
        let _ = fmt.lines(e);
        let _ = fmt.json(e, &trace.sources);
        let _ = render::marked_hex(&e.record.data, true);
    }
    let entries: Vec<&trace::Entry> = trace.entries.iter().collect();
    let _ = perfetto::to_perfetto(&entries, &fmt);
    let _ = perfetto::to_chrome(&entries, &fmt);
    let _ = plot::Plot::from_entries(&entries).to_svg();
    let mut app = browse::App::new(trace, fmt, filter::Filter::default());
    for k in ['j', 'G', 'h', 'n'] {
        app.key(browse::Key::Char(k));
    }
    let _ = app.status();
    let _ = app.histogram();
}
