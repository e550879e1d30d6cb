//! The tracing options of `os2trace run`: the system trace facility of the
//! emulated OS/2 for the length of one program run. This module parses
//! the options into the kernel's [`TraceCommands`] and prints what the
//! kernel's system trace reports after the run; the trace itself (TRACE
//! ON, DTRACE APPLY, TRSPOOL, TRACEGET, QUERY) is `kernel_sim::trace`'s.
//!
//! * `--trace TDF[(spec)]`: `TRACE ON` for the tracepoints of a TDF that the
//!   spec selects (minors and ranges, groups with types, types); the module
//!   is the one the TDF names.
//! * `--apply FILE.rpn[@MODULE]`: `DTRACE APPLY` of a trace program file to
//!   a module (default: the file's `name=`), in every process that loads
//!   it.
//! * `--tracebuf KB` (1..63, default 4) and `--old-format`: the buffer.
//! * `--save FILE`: `TRACEGET`, the buffer as a TRACEFMT save file after
//!   the run.
//! * `--tracefmt [DIR]`: print the buffer formatted after the run, with the
//!   TFFs found in DIR (default: the directory of each `--trace` TDF and the
//!   sandbox root).
//! * `--spool DIR [TRSPOOL options]`: `TRSPOOL` during the run into
//!   `DIR/TRACEBUF.nnn`; its options (`/Fn`, `/Tn`, `/An`, ...) follow DIR
//!   up to the next `--` option. Polls happen on the emulated clock, at
//!   tracepoint hits once they are due, since only hits change the buffer.
//! * `--query` and `--getvars`: `DTRACE QUERY` and `GETVARS` after the run:
//!   each DTO with its id, its tracepoints' hits, records and cycles, and
//!   its variables; `in processes:` lists the PIDs whose copies of the
//!   module took the tracepoints when that is not the first process alone
//!   (a traced program run as a child, a DLL in several processes).
//!   After any traced run, a module that was never loaded, and a copy that
//!   could not take the tracepoints, are named on stderr.
//! * `--export FILE`, `--svg FILE`, `--follow`: the views of the run
//!   (`runviews`); `--save FILE` also writes the fine-time sidecar
//!   `FILE.idx`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use kernel_sim::Process;
use kernel_sim::trace::{TraceCommands, select::split_operand};
use stda::spool::SpoolOptions;
use stda::{Stda, StdaFormat, tracefmt};

/// The tracing options given to `run`.
#[derive(Debug, Default, clap::Args)]
#[command(next_help_heading = "Tracing")]
pub struct TraceOptions {
    /// TRACE ON for the tracepoints of a TDF that the spec selects
    /// (minors 1,2-10; groups FS,TK:PRE+POST; types). A bare NAME finds
    /// NAME.TDF in the current directory or the root. The tracepoints go
    /// into every copy of the TDF's module that a process loads (the
    /// program, a child it runs, a DLL in several processes).
    #[arg(long = "trace", value_name = "TDF[(spec)]")]
    pub traces: Vec<String>,
    /// DTRACE APPLY of a trace program file (`.RPN` assumed) to a module
    /// (default: the file's name=), in every process that loads it.
    #[arg(long = "apply", value_name = "FILE[@MODULE]")]
    pub applies: Vec<String>,
    /// The system trace buffer's size in KB (1..63, default 4).
    #[arg(long, value_name = "KB", value_parser = clap::value_parser!(u32).range(1..=63))]
    pub tracebuf: Option<u32>,
    /// The old (OS/2 2.x) buffer format.
    #[arg(long)]
    pub old_format: bool,
    /// TRACEGET: write the buffer as a TRACEFMT save file after the run.
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
    /// Print the buffer formatted after the run, with the TFFs in DIR
    /// (default: the directory of each --trace TDF and the root).
    #[arg(long, value_name = "DIR", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    tracefmt: Option<String>,
    /// TRSPOOL during the run into DIR/TRACEBUF.nnn; TRSPOOL's options
    /// (/Fn /Tn /An ...) follow DIR.
    #[arg(long, value_name = "DIR")]
    spool: Option<PathBuf>,
    /// One TRSPOOL option (what follows --spool DIR becomes these).
    #[arg(long, value_name = "OPTION", requires = "spool")]
    spool_opt: Vec<String>,
    /// DTRACE QUERY after the run: each DTO's tracepoints with hits,
    /// records and cycles.
    #[arg(long)]
    pub query: bool,
    /// GETVARS after the run: each DTO's variables.
    #[arg(long)]
    pub getvars: bool,
    /// The views of the run (--export, --svg, --follow).
    #[command(flatten)]
    pub views: crate::runviews::ViewOptions,
}

impl TraceOptions {
    /// Whether any tracing was asked for.
    pub fn active(&self) -> bool {
        !self.traces.is_empty()
            || !self.applies.is_empty()
            || self.save.is_some()
            || self.tracefmt.is_some()
            || self.spool.is_some()
            || self.query
            || self.getvars
            || self.views.active()
    }

    /// `--tracefmt`: None not asked, Some(None) without a directory.
    fn tracefmt_dir(&self) -> Option<Option<PathBuf>> {
        self.tracefmt
            .as_ref()
            .map(|d| (!d.is_empty()).then(|| PathBuf::from(d)))
    }
}

impl TraceOptions {
    /// The kernel's trace commands these options ask for.
    ///
    /// # Errors
    /// A bad TRSPOOL option.
    pub fn commands(&self) -> Result<TraceCommands> {
        let spool = match &self.spool {
            Some(dir) => {
                let options = SpoolOptions::parse(&self.spool_opt)
                    .map_err(|e| anyhow::anyhow!("TRSPOOL: {}", e.0))?;
                Some((dir.clone(), options))
            }
            None => None,
        };
        Ok(TraceCommands {
            format: if self.old_format {
                StdaFormat::Old
            } else {
                StdaFormat::New
            },
            kb: self.tracebuf.unwrap_or(4),
            traces: self.traces.clone(),
            applies: self.applies.clone(),
            spool,
        })
    }

    /// Where `--tracefmt` looks for TFFs: its DIR, the directory of each
    /// `--trace` TDF, then the sandbox root.
    pub fn tff_dirs(&self, root: &Path) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self.tracefmt_dir().flatten().into_iter().collect();
        for operand in &self.traces {
            let (file, _) = split_operand(operand);
            dirs.push(
                Path::new(file)
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(Path::new("."))
                    .to_path_buf(),
            );
        }
        dirs.push(root.to_path_buf());
        dirs
    }
}

/// After the run: TRACE OFF and the last spool poll, then what the options
/// ask to see: the TRSPOOL summary, the TRACEGET save file, the formatted
/// buffer, QUERY and GETVARS.
///
/// # Errors
/// A file that cannot be written.
pub fn finish(opts: &TraceOptions, process: &mut Process, root: &Path) -> Result<()> {
    let stopped = process.trace_stop();
    let report = process
        .trace_report()
        .context("the system trace was not started")?;
    if let Some(linear) = report.sysdump {
        println!(
            "os2trace: a tracepoint at {linear:08X} asked for a system dump; the system stopped"
        );
    }
    if let Some(e) = &report.spool_error {
        eprintln!("os2trace: {e}");
    }
    for dto in &report.dtos {
        let module = crate::util::escape_controls(&dto.module);
        if dto.pids.is_empty() && dto.refused.is_empty() {
            eprintln!(
                "os2trace: module {module} was never loaded: none of its tracepoints went in"
            );
        }
        for (pid, why) in &dto.refused {
            eprintln!("os2trace: process {pid}'s copy of {module} is not traced: {why}");
        }
    }
    stopped?;
    if let Some((t, dir)) = &report.spool {
        println!(
            "TRSPOOL: {} polls, {} records captured, {} lost, files in {}",
            t.polls,
            t.records,
            t.lost,
            dir.display()
        );
    }
    if let Some(path) = &opts.save
        && let Some(save) = process.traceget()
    {
        outfile::write_atomic(path, &save.to_bytes())?;
        // The fine times beside it (stda::sidecar): FILE.idx.
        if let Some(trace) = process.system_trace() {
            let idx = stda::sidecar::Sidecar::path_for(path);
            outfile::write_atomic(&idx, &trace.sidecar().to_bytes())?;
        }
    }
    if opts.tracefmt.is_some()
        && !opts.views.follow
        && let Some(trace) = process.system_trace()
    {
        let bytes = trace.buffer().as_bytes().to_vec();
        let stda = Stda::parse(&bytes).context("reading back the trace buffer")?;
        let majors: Vec<u8> = stda.records().iter().map(|r| r.major).collect();
        let mut rules = tracefmt::Rules::new();
        for dir in opts.tff_dirs(root) {
            let (found, problems) = tracefmt::Rules::load_dir(&dir, majors.iter().copied());
            for p in problems {
                eprintln!("os2trace: {p}");
            }
            rules.fill_from(found);
        }
        print!(
            "{}",
            crate::util::escape_controls(&tracefmt::format_stda(&stda, &rules))
        );
    }
    crate::runviews::finish(&opts.views, process, &opts.tff_dirs(root))?;
    if opts.query || opts.getvars {
        for (i, dto) in report.dtos.iter().enumerate() {
            println!(
                "DTO {i}: module {} id {} vars {} errors {}",
                crate::util::escape_controls(&dto.module),
                dto.id,
                dto.vars.len(),
                dto.errors
            );
            if opts.query {
                // The processes whose copies of the module took the
                // tracepoints, unless that is the first process alone.
                if dto.pids != [1] {
                    let pids: Vec<String> = dto.pids.iter().map(u16::to_string).collect();
                    let pids = if pids.is_empty() {
                        "none".to_string()
                    } else {
                        pids.join(" ")
                    };
                    println!("  in processes: {pids}");
                }
                for tp in &dto.tracepoints {
                    println!(
                        "  minor {:04X} major {:04X} at {:04X}:{:08X} {}: {} hits, {} records, {} cycles",
                        tp.minor,
                        tp.major,
                        tp.object,
                        tp.offset,
                        if tp.active { "active" } else { "removed" },
                        tp.hits,
                        tp.logged,
                        tp.cycles
                    );
                }
            }
            if opts.getvars {
                for (n, v) in dto.vars.iter().enumerate() {
                    println!("  var {n}: 0x{v:08X} {v}");
                }
            }
        }
    }
    Ok(())
}
