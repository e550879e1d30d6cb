//! Trace definitions of OS/2 dynamic trace.
//!
//! * [`mod@compile`]: the TSF compiler (IBM TRCUST 3.05A's language and
//!   messages) producing a [`Tdf`], a TFF ([`stda::tff::Tff`]) and a [`Tmi`];
//! * [`trcust`]: TRCUST's command line, files and console, run in a
//!   directory; [`combine`]: TFF combine mode (`/C=`);
//! * [`definition`] and [`tmi`]: the TDF and TMI binary formats;
//! * [`buildtdf`]: DTRACE trace program files to TDFs;
//! * [`debuginfo`]: CodeView and IBM HLL debug information (line numbers,
//!   procedures, variables);
//! * [`verify`]: checks a TDF against its module;
//! * [`codegen`]: RPN code for the TSF data statements;
//! * [`target`] and [`module`]: what the compiler reads from a module and
//!   its MAP file, and the adapter over `loader`; [`sym`]: MAPSYM's `.SYM`
//!   files, read for `.name` where no MAP is given;
//! * [`diag`]: TRCUST's messages and console lines.
//!
//! Byte layouts, code generation and messages are those observed from IBM's
//! TRCUST (`shared/formats/TRCUST-FORMATS.md`); where TRCUST is wrong the
//! crate does the right thing and documents it.
//!
//! # Decisions where TRCUST's observed behaviour and documents are silent
//!
//! * Line numbers: a message carries the line the lexer has reached when
//!   the problem is found (1 + line breaks consumed), which reproduces every
//!   line TRCUST printed in the corpus: the TP symbol is resolved after the
//!   token that follows it is read, a data statement after ABORTOP once the
//!   statement is complete, FMT without DESC at the end of the TRACE.
//! * Errors in the header (a bad number, a missing `=`, an unknown keyword)
//!   are SEVERE: TRCUST's documentation says header errors abort.
//! * "Auto" ORBITs (`ORBIT=(0,1)`) take bit k%32 of variable k/32 for the
//!   k-th one; the TDF gets (highest variable + 1) variables when there is one.
//! * `/RMn` bits: 1 LEAVE, 2 JMP, 4 RET (the only bit TRCUST confirmed), and
//!   `RETEP=LRET` is bit 8; the return point is the last match, decoded with
//!   iced-x86 from the symbol to the next MAP symbol.
//! * `LEN=(spec,...)` with a symbol takes the form (flat or segmented) of the
//!   statement it precedes; a register form keeps its own.
//! * Duplicate minors and duplicate addresses are found when the files are
//!   built, as TRCUST does, and reported at the line of their TRACE
//!   keyword (addresses after the TFF's `Creating` line). Both formats of
//!   a duplicate address stay in the TFF; of the tracepoints at one
//!   address the TDF keeps the last one of a quicksort by address
//!   (**inferred**: TRCUST's choice in most cases tried, see
//!   `compile::unique_addresses`).
//! * The lexer follows TRCUST's: `.name` and `@name` are single tokens (so
//!   `. name` is an empty symbol), C comments inside a word join it, only
//!   `\"` is an escape in strings, and the end of the file where a
//!   statement needs a token is SEVERE `premature end of file`.
//! * Debug information: CodeView 4 (`NB05`-`NB09`, `NB11`) and IBM HLL
//!   (`NB04`, partly inferred: [`debuginfo::hll`]) are read by
//!   [`debuginfo`] from the LX debug section or the `NBxx` trailer at the
//!   end of the file. `TP=@file,line` places the tracepoint on the line's
//!   first instruction (the next line with code, with a warning, when the
//!   line has none); `REGS=(.var)` logs a register variable's register or
//!   a stack variable's bytes (`MEM=(RSS+BP±n,DIRECT,size)`, or `MEM32=`
//!   with `FEBP` in 32-bit code); `RETEP=CV` is the procedure's debug end;
//!   `TP=.name` finds debug procedures first, so no MAP file is needed with
//!   debug information. `/NODE` ignores it, `/NOLN` its line numbers.
//!   Old CodeView (`NB00`-`NB02`), and a signature without readable
//!   information, is reported as not supported. The messages and the
//!   choices made are in `compile::debug`'s module doc.
//!   `TP=.name` of a debug procedure is placed after its prologue, as
//!   TRCUST's document says.
//! * A TDF that uses an opcode byte os2trace assigned (only `Sub`, for
//!   `-reg`) is announced on the console after `Creating TDF file`.
//! * Paths print as host paths; [`trcust::PathStyle::Dos`] prints them as
//!   TRCUST did in `C:\` (the corpus test uses it).

pub mod buildtdf;
pub mod codegen;
pub mod combine;
pub mod compile;
pub mod debuginfo;
pub mod definition;
pub mod diag;
pub mod messages;
pub mod module;
pub mod sym;
pub mod target;
pub mod tmi;
pub mod trcust;
pub mod tsf;
pub mod verify;

pub use compile::{Compilation, ModuleSource, Options, compile};
pub use definition::{Tdf, TdfError, TdfRecord};
pub use diag::{ConsoleLine, Diagnostic, Severity};
pub use tmi::{Tmi, TmiError, TmiRecord};
