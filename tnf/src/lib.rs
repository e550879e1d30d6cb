//! Solaris Trace Normal Form (TNF) for os2trace: typed probes, the binary
//! TNF trace file, prex's command language and tnfdump's output.
//!
//! * [`probe`]: a probe as TNF_PROBE_n declares it ([`ProbeDesc`]), its
//!   typed arguments ([`ArgType`], [`ArgValue`]) and the attribute string
//!   prex matches.
//! * [`writer`]: [`TnfWriter`], the trace file of reference §1.5 built in
//!   memory: file header, directory of forwarding cells, tag blocks of
//!   self-describing type records, 512-byte data blocks reused LRU in whole
//!   blocks with generations, schedule records, events with `time_delta`.
//! * [`reader`]: [`TnfFile`], which reads any file of that format, in
//!   either byte order, with errors naming the byte offset.
//! * [`dump`]: tnfdump's cooked (default), raw (`-r`) and hex (`-x`)
//!   output.
//! * [`prex`]: prex's command language (lexer, parser, ed-style regular
//!   expressions, attribute matching) and a session over a probe table.
//!
//! # Probes in OS/2 programs, and TNF beside OS/2's trace
//!
//! An OS/2 module carries its probes as static descriptors listed in an
//! exported `TNF_PROBE_LIST`; each probe site is one call to the TNFPROBE
//! system DLL, which finds the probe from the return address and reads the
//! arguments where the descriptor says. The kernel reads the lists of every
//! loaded module before the program runs, so prex sees every probe while
//! the target is stopped, as libtnfctl does through ELF symbol tables on
//! Solaris; a DLL loaded later is read at its first probe hit, and prex's
//! history decides what its probes do. kernel_sim's `tnf` module documents
//! the descriptor layout and why an exported table was chosen over
//! registration at DLL initialization.
//!
//! How TNF maps to OS/2's dynamic trace (TRCUST, TRACE, TRACEFMT):
//!
//! | TNF | OS/2 dynamic trace |
//! |---|---|
//! | a probe, known by its name | a tracepoint, known by (major, minor) code |
//! | compiled in (TNF_PROBE_n), one call while disabled | patched in (an INT3 over the traced instruction) only while on; nothing in the code otherwise |
//! | keys: groups a probe is in, several per probe (`keys cookie main loop`) | the TSF's `GROUP=` and `TYPE=(PRE,API)` lists of a tracepoint; `TRACE ON` selects by major and by group/type |
//! | selection by name, by any attribute, by ed regex (`enable name=/loop/`), an exprlist being a union | a list of minor codes (`TRACE ON name(major,minor,...)`) |
//! | `$sets`: saved selections, re-evaluated at each use | none (each `TRACE ON` names its tracepoints) |
//! | typed, named arguments in the event; the file holds their types | the RPN program's `Log` of bytes, formatted later by the TFF's `%D %W %F` strings |
//! | the trace file describes itself: tnfdump needs no format file | TRACEFMT needs the module's TFF |
//! | 512-byte blocks reused in LRU order, whole | the circular STDA, overwritten record by record |
//! | `trace`/`untrace`, `connect &debug` (stderr) | log or not; no debug callback |
//! | prex -k's system probes (`syscall_start`, `module_load`, `thread_switch`) | the system trace's majors for API calls, module loads and dispatch |
//!
//! Both can be active in the same run (`os2trace prex --apply ...`): they
//! record into separate files, and `browse` and `export` read both.
//!
//! # Where this crate decides
//!
//! - Reclaimable references split as the low `file_log_size` bits (byte
//!   delta modulo the file's power-of-two span) and a signed generation
//!   delta above them ([`refs`]).
//! - Every built-in type record is written, so the file describes itself;
//!   property markers (`tnf_tagged`, ...) are scalar types of size 0
//!   ([`types`]).
//! - Each event references a schedule record in its own block; a string
//!   argument is allocated just before its event and may sit in the block
//!   before, so the LRU wrap can leave it dangling (read as NULL)
//!   ([`writer`]).
//! - A schedule record's `tid` and `lwpid` are both the OS/2 thread ID:
//!   OS/2 threads are kernel threads.
//! - prex's syntax error reads `prex: syntax error, line N`.
//! - User-defined record types (TNF_DECLARE_RECORD, [`probe::RecordType`])
//!   are written as struct type records in the tag blocks, and each record
//!   argument as a record of its own allocated just before its event (so,
//!   like a string, it may dangle after the wrap); members are the
//!   predefined types, strings included, and records do not nest. tnfdump
//!   prints them `{ type: node_tnf cur_sum: 9 max_cnt: 12 }`; `&debug`
//!   prints `{ type: node_tnf cur_sum=9; max_cnt=12; }` (libtnfprobe's
//!   debug function prints no records; this is our choice).
//!
//! The crate knows nothing of the emulator: kernel_sim finds the probes in
//! the guest's modules, asks the session which are enabled and hands the
//! events to the writer. Nothing here reads the host clock or touches the
//! file system (prex's `source` and `.prexrc` go through a callback).
//!
//! ```
//! use tnf::{ArgType, ArgValue, Endian, ProbeDesc, TnfFile, TnfWriter};
//!
//! let probe = ProbeDesc {
//!     name: "inloop".into(),
//!     keys: "cookie main loop".into(),
//!     detail: "sunw%debug 'in the loop'".into(),
//!     file: "cookie2.c".into(),
//!     line: 50,
//!     args: vec![(ArgType::Long, "loop_count".into())],
//!     debug: false,
//!     records: vec![],
//! };
//! let mut w = TnfWriter::new(128 * 1024, Endian::Little)?;
//! w.event(1, &probe, (42, 1, 1), 1_000, &[ArgValue::Int(7)])?;
//! let bytes = w.into_bytes();
//! let file = TnfFile::parse(&bytes)?;
//! let text = tnf::dump::cooked(&file, false)?;
//! assert!(text.contains("inloop"));
//! assert!(text.contains("loop_count: 7"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod bytes;
pub mod dump;
pub mod layout;
pub mod prex;
pub mod probe;
pub mod reader;
pub mod refs;
pub mod types;
pub mod writer;

pub use bytes::Endian;
pub use probe::{ArgType, ArgValue, ProbeDesc, ProbeError};
pub use reader::{ReadError, ReadErrorKind, TnfFile};
pub use writer::{TnfWriter, WriteError, WriterStats};
