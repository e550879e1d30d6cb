//! `os2trace test`: regression suites for TDFs and trace programs.
//!
//! A suite is a TOML file of cases. Each case puts modules into a fresh
//! sandbox, compiles TSFs with TRCUST, switches tracing on (TRACE ON specs,
//! APPLY of trace program files), runs a program in its own emulated
//! machine, and compares what came out with golden files beside the suite.
//! `--bless` writes the golden files. Cases run in parallel over the cores
//! (rayon), and `--shard I/N` picks a deterministic part of them for batch
//! engines that spread one suite over machines ([`shard`]).
//!
//! # The suite format
//!
//! ```toml
//! [suite]
//! name = "samples"              # default: the file's stem
//! golden = "samples.golden"     # default: STEM.golden beside the file
//!
//! # A template: one case per testprogs program (LOOP16.EXE, LOOP32.EXE).
//! [[case]]
//! name = "{stem}"               # {name} = the file name, {stem}, {ext}
//! each = "testprogs:LOOP*.EXE"
//! files = ["testprogs:{stem}.*"]        # into drive C: of the sandbox
//! trcust = ["{stem}.TSF /M={stem}.MAP"] # TRCUST command lines, in order
//! trace = ["{stem}"]                    # TRACE ON TDF[(spec)]
//! program = "{name}"
//!
//! # One case: a DLL traced through its caller, two tracepoints selected.
//! [[case]]
//! name = "tpdll16-some"
//! files = ["testprogs:TPDLL16.*", "testprogs:DLLCAL16.EXE"]
//! trcust = ["TPDLL16.TSF /M=TPDLL16.MAP"]
//! trace = ["TPDLL16(1,3)"]
//! apply = []                  # FILE.rpn[@MODULE], DTRACE APPLY
//! program = "DLLCAL16.EXE"
//! args = []
//! env = ["KEY=VALUE"]
//! tracebuf = 4                # KB, 1..63
//! format = "new"              # or "old"
//! max_insns = 200000000       # the budget; reaching it fails the case
//! check = ["stda", "tracefmt", "json", "hits", "trcust", "verify", "exit", "output"]
//!
//! # The other two facilities: CPTRAP with a selection, TNF probes enabled.
//! [[case]]
//! name = "cptrap32"
//! files = ["testprogs:CPTRAP32.*"]
//! cptrap = "TYPE 3E 02"       # the CPTRAP file's records, as TRAPRED shows them
//! tnf = false                 # true: every TNF probe enabled and traced (tnfdump)
//! trace = ["0xF5(1)"]         # a number is a static major (DosSysTrace records)
//! program = "CPTRAP32.EXE"
//! ```
//!
//! Sources are paths relative to the suite file (globs allowed) or
//! `testprogs:GLOB`, the sample modules `os2trace testprogs build` writes.
//! Names in `trace` and `apply` are files in the sandbox; `.TDF` and
//! `.RPN` are assumed when a name has no extension.
//!
//! # Golden files
//!
//! `GOLDEN/CASE/FILE`, one file per check: `stda.bin` (the system trace
//! buffer, byte for byte), `tracefmt.txt` (formatted with the sandbox's
//! TFFs), `records.jsonl`, `hits.txt` (hits, records and emulated cycles per
//! tracepoint), `trcust.txt` (TRCUST's console and exit code), `verify.txt`
//! (`tdf verify` of each traced TDF), `exit.txt`, `output.txt`, and for
//! cases that switch them on `cptrap.txt` (TRAPRED's lines) and `tnf.txt`
//! (tnfdump's default output). Nothing
//! in them depends on the host: the clock is emulated from a fixed date and
//! paths are the guest's.
//!
//! A case fails when a file differs (a trace buffer is shown record by
//! record, formatted, as [`diff::stda`] describes), when a golden file is
//! missing, when it cannot run, or when its program faults, calls an API
//! that is not implemented, or exhausts its instruction budget (which is
//! what bounds a case's time: the budget is the timeout, deterministic on
//! every host). A host panic inside a case fails that case only.

pub mod diff;
pub mod exec;
pub mod report;
pub mod run;
pub mod shard;
pub mod source;
pub mod spec;

pub use run::{CaseResult, RunOptions, Status, run, select};
pub use shard::Shard;
pub use source::Sources;
pub use spec::{Case, Check, Suite};
