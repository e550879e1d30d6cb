//! Trace definitions of OS/2 dynamic trace.
//!
//! * [`compile`]: the TSF compiler (IBM TRCUST 3.05A's language and
//!   messages) producing a [`Tdf`], a TFF ([`stda::tff::Tff`]) and a [`Tmi`];
//! * [`trcust`]: TRCUST's command line, files and console, run in a
//!   directory; [`combine`]: TFF combine mode (`/C=`);
//! * [`definition`] and [`tmi`]: the TDF and TMI binary formats;
//! * [`buildtdf`]: DTRACE trace program files to TDFs;
//! * [`verify`]: checks a TDF against its module;
//! * [`codegen`]: RPN code for the TSF data statements;
//! * [`target`] and [`module`]: what the compiler reads from a module and
//!   its MAP file, and the adapter over `loader`;
//! * [`diag`]: TRCUST's messages and console lines.
//!
//! Byte layouts, code generation and messages are those observed from IBM's
//! TRCUST (`shared/formats/TRCUST-FORMATS.md`); where TRCUST is wrong the
//! crate does the right thing and documents it.

pub mod buildtdf;
pub mod codegen;
pub mod combine;
pub mod compile;
pub mod definition;
pub mod diag;
pub mod module;
pub mod target;
pub mod tmi;
pub mod trcust;
pub mod tsf;
pub mod verify;

pub use compile::{Compilation, ModuleSource, Options, compile};
pub use definition::{Tdf, TdfError, TdfRecord};
pub use diag::{ConsoleLine, Diagnostic, Severity};
pub use tmi::{Tmi, TmiError, TmiRecord};
