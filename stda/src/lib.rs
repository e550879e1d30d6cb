//! Trace buffers of the OS/2 system trace facility.
//!
//! * [`TraceBuffer`]: the live system trace buffer (STDA) in the old or new
//!   format; the kernel calls [`TraceBuffer::log`] on every tracepoint hit
//!   and [`TraceBuffer::get_stda`] for `DosGetSTDA`.
//! * [`Stda`]: reads an STDA, backwards from NEXT ([`Stda::walk_back`]) or
//!   in time order ([`Stda::records`]).
//! * [`savefile`]: TRACEFMT save files and the TRACEGET capture;
//!   [`spool`]: TRSPOOL's cyclic `TRACEBUF.nnn` files and polling.
//! * [`tff`]: the TFF binary format (reader and writer).
//! * [`fields`]: the decoded fields (name, control, value) of a formatted
//!   record; [`sidecar`]: os2trace's fine-time file beside a save file.
//! * [`fmt`]: the FMT formatting engine and the TSF-to-TFF encoding of FMT
//!   strings; [`tracefmt`]: TRACEFMT's output (formatted, raw, JSON lines).
//!
//! Nothing here reads the host clock: every time comes from the caller.
//!
//! ```
//! use stda::{RecordFlags, RecordIn, Stda, StdaFormat, Timestamp, TraceBuffer};
//! use stda::fmt::{FormatInput, compile_fmt, format_record};
//! use stda::tff::{Tff, TffRecord};
//!
//! // The kernel logs a record on a tracepoint hit (TRACEBUF=4, new format).
//! let mut buf = TraceBuffer::new(StdaFormat::New, 4)?;
//! let rec = RecordIn {
//!     major: 0xC5,
//!     minor: 1,
//!     pid: 3,
//!     flags: RecordFlags::API | RecordFlags::PROTECT,
//!     data: &[0x34, 0x12],
//! };
//! buf.log(&rec, Timestamp::new(12, 0, 0, 5))?;
//!
//! // DosGetSTDA, then read the snapshot oldest first.
//! let snap = buf.get_stda();
//! let records = Stda::parse(&snap.stda)?.records();
//! assert_eq!(records[0].data, [0x34, 0x12]);
//!
//! // TRCUST writes the rule into TRC00C5.TFF; TRACEFMT applies it.
//! let tff = Tff {
//!     major: 0xC5,
//!     records: vec![TffRecord {
//!         minor: 1,
//!         desc: b"(TEST) Hello".to_vec(),
//!         fmts: vec![compile_fmt(b"word = %W")],
//!     }],
//! };
//! let tff = Tff::parse(&tff.to_bytes())?;
//! let r = &records[0];
//! let lines = format_record(
//!     tff.record(r.minor).unwrap(),
//!     &FormatInput { major: r.major.into(), minor: r.minor, dynamic: false, data: &r.data },
//! );
//! assert_eq!(lines, ["(TEST) Hello", "word = 1234"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod buffer;
pub mod fields;
pub mod fmt;
mod reader;
mod record;
pub mod savefile;
pub mod sidecar;
pub mod spool;
pub mod tff;
mod time;
pub mod tracefmt;

pub use buffer::{ConfigError, LastLogged, LogError, Snapshot, TraceBuffer};
pub use reader::{Stda, StdaError, StopReason, WalkBack};
pub use record::{MAGIC, Record, RecordFlags, RecordIn, StdaFormat, TRAILER_SIZE, TraceTimes};
pub use time::{DosDateTime, Stamp, Timestamp, TraceDateTime};
