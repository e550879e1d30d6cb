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
