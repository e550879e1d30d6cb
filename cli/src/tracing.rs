//! The tracing options of `os2trace run`: the system trace facility of the
//! emulated OS/2 for the length of one program run.
//!
//! * `--trace TDF[(spec)]`: `TRACE ON` for the tracepoints of a TDF that the
//!   spec selects (minors and ranges, groups with types, types); the module
//!   is the one the TDF names.
//! * `--apply FILE.rpn[@MODULE]`: `DTRACE APPLY` of a trace program file to
//!   a loaded module (default: the file's `name=`).
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
//!   its variables.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use kernel_sim::trace::{Selection, TraceSession, TrapKind, select::split_operand};
use kernel_sim::{HookAction, Process, TrapHook};
use stda::spool::{SpoolOptions, Spooler, write_poll};
use stda::{DosDateTime, Stda, StdaFormat, Timestamp, tracefmt};

/// The tracing options given to `run`.
#[derive(Debug, Default, clap::Args)]
#[command(next_help_heading = "Tracing")]
pub struct TraceOptions {
    /// TRACE ON for the tracepoints of a TDF that the spec selects
    /// (minors 1,2-10; groups FS,TK:PRE+POST; types). A bare NAME finds
    /// NAME.TDF in the current directory or the root.
    #[arg(long = "trace", value_name = "TDF[(spec)]")]
    pub traces: Vec<String>,
    /// DTRACE APPLY of a trace program file (`.RPN` assumed) to a loaded
    /// module (default: the file's name=).
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
    }

    /// `--tracefmt`: None not asked, Some(None) without a directory.
    fn tracefmt_dir(&self) -> Option<Option<PathBuf>> {
        self.tracefmt
            .as_ref()
            .map(|d| (!d.is_empty()).then(|| PathBuf::from(d)))
    }
}

/// The tracing of one run: the session and the spooler, as the trap hook.
pub struct Tracer {
    session: TraceSession,
    spool: Option<(Spooler, PathBuf)>,
    tff_dirs: Vec<PathBuf>,
}

fn now_parts(process: &Process) -> (u64, DosDateTime) {
    let t = process.clock().now(process.machine().cycles());
    let time = Timestamp::new(t.hour, t.minute, t.second, t.hundredths);
    let dos = DosDateTime {
        time,
        day: t.day,
        month: t.month,
        year: t.year,
        timezone: 0,
        weekday: t.weekday,
    };
    (process.now_millis(), dos)
}

impl Tracer {
    /// Sets tracing up in a loaded process: the buffer, TRACE ON, APPLY.
    ///
    /// # Errors
    /// A file that cannot be read, a bad selection, a tracepoint that cannot
    /// be inserted.
    pub fn attach(opts: &TraceOptions, process: &mut Process, root: &Path) -> Result<Tracer> {
        let format = if opts.old_format {
            StdaFormat::Old
        } else {
            StdaFormat::New
        };
        let mut session = TraceSession::new(process, format, opts.tracebuf.unwrap_or(4), 1)?;
        let mut tff_dirs = Vec::new();
        for operand in &opts.traces {
            let (file, spec) = split_operand(operand);
            let path = Path::new(file);
            let bytes = std::fs::read(path).with_context(|| format!("cannot read {file}"))?;
            let tdf = tdf::Tdf::parse(&bytes).with_context(|| file.to_string())?;
            let selection = Selection::parse(spec.unwrap_or(""), &tdf)
                .with_context(|| format!("TRACE ON {operand}"))?;
            session
                .trace_on(process, &tdf, &selection, None)
                .with_context(|| format!("TRACE ON {operand}"))?;
            tff_dirs.push(
                path.parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(Path::new("."))
                    .to_path_buf(),
            );
        }
        for operand in &opts.applies {
            let (file, module) = match operand.rsplit_once('@') {
                Some((f, m)) => (f, Some(m)),
                None => (operand.as_str(), None),
            };
            let text = crate::util::read_source(Path::new(file))?;
            let parsed = rpn_vm::parse(file, &text)?;
            let name = module
                .map(str::to_string)
                .or_else(|| parsed.header.name.clone());
            let Some(name) = name else {
                bail!("{file}: no module: give name= in the file or --apply {file}@MODULE")
            };
            let stem = name.rsplit(['\\', '/']).next().unwrap_or(&name);
            let stem = stem.split('.').next().unwrap_or(stem).to_string();
            session
                .apply_program(process, &stem, &parsed, None, None)
                .with_context(|| format!("DTRACE APPLY {file}"))?;
        }
        tff_dirs.push(root.to_path_buf());
        if let Some(dir) = opts.tracefmt_dir().flatten() {
            tff_dirs.insert(0, dir);
        }
        let spool = match &opts.spool {
            Some(dir) => {
                let options = SpoolOptions::parse(&opts.spool_opt)
                    .map_err(|e| anyhow::anyhow!("TRSPOOL: {}", e.0))?;
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
                Some((Spooler::new(options, process.now_millis()), dir.clone()))
            }
            None => None,
        };
        Ok(Tracer {
            session,
            spool,
            tff_dirs,
        })
    }

    fn poll(&mut self, process: &Process) -> Result<()> {
        let Some((spooler, dir)) = self.spool.as_mut() else {
            return Ok(());
        };
        let (ms, now) = now_parts(process);
        let poll = spooler.poll(&mut self.session.buffer, ms, now);
        write_poll(dir, &poll)
            .with_context(|| format!("TRSPOOL: cannot write in {}", dir.display()))?;
        Ok(())
    }

    /// After the run: TRACE OFF, the last spool poll, TRACEGET, the
    /// formatted buffer, QUERY and GETVARS.
    ///
    /// # Errors
    /// A file that cannot be written.
    pub fn finish(mut self, opts: &TraceOptions, process: &Process) -> Result<()> {
        self.session.stamp_trace_off(process);
        if let Some(linear) = self.session.sysdump {
            println!(
                "os2trace: a tracepoint at {linear:08X} asked for a system dump; the system stopped"
            );
        }
        if self.spool.is_some() {
            self.poll(process)?;
            if let Some((spooler, dir)) = &self.spool {
                let t = spooler.totals();
                println!(
                    "TRSPOOL: {} polls, {} records captured, {} lost, files in {}",
                    t.polls,
                    t.records,
                    t.lost,
                    dir.display()
                );
            }
        }
        if let Some(path) = &opts.save {
            let (_, now) = now_parts(process);
            let save = stda::savefile::traceget(&mut self.session.buffer.clone(), now);
            outfile::write_atomic(path, &save.to_bytes())?;
        }
        if opts.tracefmt.is_some() {
            let bytes = self.session.buffer.as_bytes().to_vec();
            let stda = Stda::parse(&bytes).context("reading back the trace buffer")?;
            let majors: Vec<u8> = stda.records().iter().map(|r| r.major).collect();
            let mut rules = tracefmt::Rules::new();
            for dir in &self.tff_dirs {
                let (found, problems) = tracefmt::Rules::load_dir(dir, majors.iter().copied());
                for p in problems {
                    eprintln!("os2trace: {p}");
                }
                rules.fill_from(found);
            }
            print!("{}", tracefmt::format_stda(&stda, &rules));
        }
        if opts.query || opts.getvars {
            for (i, dto) in self.session.runtime.dtos().iter().enumerate() {
                println!(
                    "DTO {i}: module {} id {} vars {} errors {}",
                    dto.module,
                    dto.id,
                    dto.vars.len(),
                    dto.errors
                );
                if opts.query {
                    for tp in &dto.tracepoints {
                        println!(
                            "  minor {:04X} major {:04X} at {:04X}:{:08X} {}: {} hits, {} records, {} cycles",
                            tp.spec.minor,
                            tp.spec.major,
                            tp.spec.object,
                            tp.spec.offset,
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
}

impl TrapHook for Tracer {
    fn on_trap(&mut self, process: &mut Process, kind: TrapKind) -> HookAction {
        let action = self.session.on_trap(process, kind);
        if let Some((spooler, _)) = &self.spool
            && process.now_millis() >= spooler.next_poll_at()
            && let Err(e) = self.poll(process)
        {
            eprintln!("os2trace: {e:#}");
            self.spool = None;
        }
        action
    }
}
