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
//! * [`fmt`]: the FMT formatting engine and the TSF-to-TFF encoding of FMT
//!   strings; [`tracefmt`]: TRACEFMT's output (formatted, raw, JSON lines).
//!
//! Nothing here reads the host clock: every time comes from the caller.

mod buffer;
pub mod fmt;
mod reader;
mod record;
pub mod savefile;
pub mod spool;
pub mod tff;
mod time;
pub mod tracefmt;

pub use buffer::{ConfigError, LogError, Snapshot, TraceBuffer};
pub use reader::{Stda, StdaError, StopReason, WalkBack};
pub use record::{MAGIC, Record, RecordFlags, RecordIn, StdaFormat, TRAILER_SIZE, TraceTimes};
pub use time::{DosDateTime, Stamp, Timestamp, TraceDateTime};
