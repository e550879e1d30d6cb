//! The system trace facility: the trace buffer, the dynamic trace runtime
//! and TRSPOOL, as the kernel owns them.
//!
//! A [`crate::Process`] holds one [`SystemTrace`] once the buffer is
//! configured ([`crate::Process::trace_start`], what TRACEBUF= in
//! CONFIG.SYS does). The run loop hands it every INT3 and single-step trap
//! ([`SystemTrace::on_trap`]), adds the returned cost to the clock, and
//! lets it poll TRSPOOL when a poll is due ([`SystemTrace::after_hit`]):
//! only hits change the buffer, so polls happen at hits once due and once
//! more when tracing stops. The trace commands (TRACE ON, DTRACE APPLY,
//! TRACE OFF, TRACEGET, DTRACE QUERY) are kernel methods (`commands.rs`);
//! [`Report`] is what QUERY and GETVARS show.

use std::path::{Path, PathBuf};

use emu::Machine as Emu;
use stda::spool::{SpoolOptions, SpoolTotals, Spooler, write_poll};
use stda::{DosDateTime, StdaFormat, Timestamp, TraceBuffer};

use super::dto::{Dto, SpecError, TdfSpecError};
use super::event::{Dispatch, Next, TrapKind};
use super::fine::{Fine, HitClock, Observer};
use super::guest::ObjectMapping;
use super::runtime::{ApplyError, DynamicTrace};
use crate::clock::{Clock, DateTime, StampCache};
use crate::loading::LoadedModule;

/// Why a trace command failed. The messages name the command and file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    /// No trace buffer: [`crate::Process::trace_start`] was not called.
    #[error("the system trace is not configured (no trace buffer)")]
    NotStarted,
    /// The trace program file lacks a major code or an address.
    #[error("{0}")]
    Spec(#[from] SpecError),
    /// A TDF tracepoint's program does not verify.
    #[error("{0}")]
    Tdf(#[from] TdfSpecError),
    /// A tracepoint could not be inserted.
    #[error("{0}")]
    Apply(#[from] ApplyError),
    /// The buffer size is outside TRACEBUF=1..63.
    #[error("{0}")]
    Buffer(#[from] stda::ConfigError),
    /// A file the command names: it cannot be read, or does not parse.
    #[error("{file}: {reason}")]
    File {
        /// The file (or what it is, e.g. `cannot read X`).
        file: String,
        /// Why.
        reason: String,
    },
    /// A trace program file does not parse (the message names the file
    /// and line).
    #[error("{0}")]
    Program(String),
    /// A command that failed, and why.
    #[error("{command}: {cause}")]
    Command {
        /// The command and its operand (`TRACE ON X.TDF`).
        command: String,
        /// Why.
        cause: Box<TraceError>,
    },
    /// TRSPOOL could not start or write its files.
    #[error("TRSPOOL: {0}")]
    Spool(String),
}

impl TraceError {
    /// This error as the reason `command` failed.
    pub(crate) fn within(self, command: impl Into<String>) -> TraceError {
        TraceError::Command {
            command: command.into(),
            cause: Box::new(self),
        }
    }
}

/// TRSPOOL while tracing: the poller and the directory of its files.
#[derive(Debug)]
struct Spool {
    spooler: Spooler,
    dir: PathBuf,
}

/// The system trace of a running system: the buffer, the runtime, TRSPOOL.
#[derive(Debug)]
pub struct SystemTrace {
    runtime: DynamicTrace,
    buffer: TraceBuffer,
    spool: Option<Spool>,
    /// Why TRSPOOL stopped during the run, if a write failed.
    spool_error: Option<String>,
    /// Set when a tracepoint's program executed SysDump: the linear address.
    sysdump: Option<u32>,
    /// Fine times of the records (the sidecar) and their observer.
    fine: Fine,
    /// The static majors (DosSysTrace) TRACE ON selected.
    statics: super::statics::StaticSelection,
    /// The stamp of the last hit, reused within its hundredth of a second.
    stamp: StampCache,
}

/// What DTRACE QUERY and GETVARS show of one tracepoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracepointReport {
    /// Minor code.
    pub minor: u16,
    /// Major code.
    pub major: u16,
    /// Object of the module, from 1.
    pub object: u32,
    /// Offset in the object.
    pub offset: u32,
    /// Still inserted.
    pub active: bool,
    /// Hits.
    pub hits: u64,
    /// Records logged.
    pub logged: u64,
    /// Cycles its hits cost.
    pub cycles: u64,
}

/// What DTRACE QUERY and GETVARS show of one DTO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DtoReport {
    /// Module name.
    pub module: String,
    /// DTO id.
    pub id: u32,
    /// The variables.
    pub vars: Vec<u32>,
    /// Hits that ended in error.
    pub errors: u64,
    /// The tracepoints, in definition order.
    pub tracepoints: Vec<TracepointReport>,
    /// Every process the tracepoints went into (its copy of the module),
    /// in order; empty when no process loaded the module.
    pub pids: Vec<u16>,
    /// Copies of the module the tracepoints could not go into: the PID of
    /// the process and why.
    pub refused: Vec<(u16, String)>,
}

/// The state of the system trace, for the commands that show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Every applied DTO, in order.
    pub dtos: Vec<DtoReport>,
    /// The linear address of a tracepoint whose program asked for a
    /// system dump (the system stopped there).
    pub sysdump: Option<u32>,
    /// TRSPOOL's totals and directory, while it runs.
    pub spool: Option<(SpoolTotals, PathBuf)>,
    /// Why TRSPOOL stopped during the run.
    pub spool_error: Option<String>,
}

/// The DTO object table of a loaded module: for each object its flat
/// base, and the selector a trace program's `Push OXS` gets (the segment's
/// own selector for 16-bit segments, the tiled 16:16 alias for 32-bit
/// objects).
pub fn object_mappings(module: &LoadedModule) -> Vec<ObjectMapping> {
    module
        .objects
        .iter()
        .map(|o| ObjectMapping {
            selector: if o.bits32 { o.alias } else { o.selector },
            flat_base: o.base,
        })
        .collect()
}

impl SystemTrace {
    /// An empty buffer of `kb` KB with TRACE ON stamped `now`, and a
    /// runtime with nothing applied.
    ///
    /// # Errors
    /// [`TraceError::Buffer`] for a size outside 1..=63.
    pub fn new(format: StdaFormat, kb: u32, now: DateTime) -> Result<SystemTrace, TraceError> {
        let mut buffer = TraceBuffer::new(format, kb)?;
        buffer.set_trace_on(now.into());
        Ok(SystemTrace {
            runtime: DynamicTrace::new(),
            fine: Fine::new(buffer.capacity()),
            buffer,
            spool: None,
            spool_error: None,
            sysdump: None,
            statics: Default::default(),
            stamp: StampCache::default(),
        })
    }

    /// The dynamic trace runtime.
    pub fn runtime(&self) -> &DynamicTrace {
        &self.runtime
    }

    /// The dynamic trace runtime, mutable (e.g. to turn native code off).
    pub fn runtime_mut(&mut self) -> &mut DynamicTrace {
        &mut self.runtime
    }

    /// The trace buffer.
    pub fn buffer(&self) -> &TraceBuffer {
        &self.buffer
    }

    /// The trace buffer, mutable (a snapshot resets its counters).
    pub fn buffer_mut(&mut self) -> &mut TraceBuffer {
        &mut self.buffer
    }

    /// The linear address of a tracepoint that asked for a system dump.
    pub fn sysdump(&self) -> Option<u32> {
        self.sysdump
    }

    /// A trap of the guest: the runtime's answer, with the hit's cost for
    /// the kernel's clock. Records are stamped `now`, with `pid`.
    pub fn on_trap(&mut self, emu: &mut Emu, kind: TrapKind, now: Timestamp, pid: u16) -> Dispatch {
        self.on_trap_at(emu, kind, now, pid, None)
    }

    /// [`SystemTrace::on_trap`] at a point of the clock: a record the hit
    /// logs gets its fine time (the sidecar) and is shown to the observer.
    pub fn on_trap_at(
        &mut self,
        emu: &mut Emu,
        kind: TrapKind,
        now: Timestamp,
        pid: u16,
        at: Option<HitClock>,
    ) -> Dispatch {
        let before = self.buffer.records_logged();
        let address = Fine::trap_address(emu);
        let dispatch = self.runtime.on_trap(emu, kind, &mut self.buffer, now, pid);
        if let Some(at) = at {
            self.fine
                .after_hit(&self.buffer, before, at, address, dispatch.cycles);
        }
        if let Next::SysDump { linear } = dispatch.next {
            // "Normal system execution is terminated immediately."
            self.sysdump = Some(linear);
        }
        dispatch
    }

    /// TRACE ON for a static major (and its minors; `None`: all).
    pub fn trace_on_static(&mut self, major: u8, minors: Option<std::collections::BTreeSet<u16>>) {
        self.statics.select(major, minors);
    }

    /// Whether DosSysTrace logs `major`/`minor`.
    pub fn static_selected(&self, major: u16, minor: u16) -> bool {
        self.statics.selected(major, minor)
    }

    /// A static record (DosSysTrace): logged with the API and PROTECT
    /// flags (not DYNAMIC), with its fine time when `at` gives the clock
    /// and the caller's address.
    ///
    /// # Errors
    /// The record does not fit in the buffer.
    pub fn log_static(
        &mut self,
        major: u16,
        minor: u16,
        pid: u16,
        data: &[u8],
        now: Timestamp,
        at: Option<(HitClock, u32)>,
    ) -> Result<(), stda::LogError> {
        let before = self.buffer.records_logged();
        let rec = stda::RecordIn {
            major,
            minor,
            pid,
            flags: stda::RecordFlags::API | stda::RecordFlags::PROTECT,
            data,
        };
        self.buffer.log(&rec, now)?;
        if let Some((at, address)) = at {
            self.fine.after_hit(&self.buffer, before, at, address, 0);
        }
        Ok(())
    }

    /// The stamp of a record logged when the machine's clock reads
    /// `machine_cycles`: `clock.now(machine_cycles)`, converted once per
    /// hundredth of a second.
    #[inline]
    pub fn stamp(&mut self, clock: &Clock, machine_cycles: u64) -> Timestamp {
        self.stamp.stamp(clock, machine_cycles)
    }

    /// Whether TRSPOOL runs (so [`SystemTrace::after_hit`] may poll).
    #[inline]
    pub fn spooling(&self) -> bool {
        self.spool.is_some()
    }

    /// After a hit was charged to the clock: a TRSPOOL poll if one is due
    /// at `ms` of emulated time. A poll that cannot write its file stops
    /// TRSPOOL (see [`Report::spool_error`]); the run goes on.
    pub fn after_hit(&mut self, ms: u64, now: DateTime) {
        if self
            .spool
            .as_ref()
            .is_some_and(|s| ms >= s.spooler.next_poll_at())
            && let Err(e) = self.poll(ms, now)
        {
            self.spool_error = Some(e.to_string());
            self.spool = None;
        }
    }

    /// TRSPOOL into `dir` from `ms` of emulated time on.
    ///
    /// # Errors
    /// [`TraceError::Spool`] when the directory cannot be created.
    pub fn start_spool(
        &mut self,
        dir: &Path,
        options: SpoolOptions,
        ms: u64,
    ) -> Result<(), TraceError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| TraceError::Spool(format!("cannot create {}: {e}", dir.display())))?;
        self.spool = Some(Spool {
            spooler: Spooler::new(options, ms),
            dir: dir.to_path_buf(),
        });
        Ok(())
    }

    /// One TRSPOOL poll now, if TRSPOOL runs.
    fn poll(&mut self, ms: u64, now: DateTime) -> Result<(), TraceError> {
        if self.spool.is_none() {
            return Ok(());
        }
        let sidecar = self.sidecar();
        let Some(spool) = self.spool.as_mut() else {
            return Ok(());
        };
        let poll = spool.spooler.poll(&mut self.buffer, ms, now.into());
        self.fine.recorder.clear();
        let failed = |e: std::io::Error| {
            TraceError::Spool(format!("cannot write in {}: {e}", spool.dir.display()))
        };
        // The sidecar first: a follower that sees TRACEBUF.nnn finds its
        // FILE.idx already there.
        if let Some((name, _)) = &poll.file {
            let idx = stda::sidecar::Sidecar::path_for(&spool.dir.join(name));
            stda::spool::write_replacing(&idx, &sidecar.to_bytes()).map_err(failed)?;
        }
        write_poll(&spool.dir, &poll).map_err(failed)?;
        Ok(())
    }

    /// The end of tracing: TRACE OFF stamped `now`, and TRSPOOL's last
    /// poll.
    ///
    /// # Errors
    /// [`TraceError::Spool`] when the last poll cannot write its file.
    pub fn stop(&mut self, ms: u64, now: DateTime) -> Result<(), TraceError> {
        self.buffer.set_trace_off(now.into());
        self.poll(ms, now)
    }

    /// Stamps TRACE OFF `now` without polling.
    pub(crate) fn stamp_trace_off(&mut self, now: DateTime) {
        self.buffer.set_trace_off(now.into());
    }

    /// TRACEGET: the buffer as a save file stamped `now`. The buffer's own
    /// counters are not reset.
    pub fn traceget(&self, now: DosDateTime) -> stda::savefile::SaveFile {
        stda::savefile::traceget(&mut self.buffer.clone(), now)
    }

    /// The sidecar of the buffer as it is now: the fine time of each of
    /// its records (see [`stda::sidecar`]); written beside a TRACEGET file.
    pub fn sidecar(&self) -> stda::sidecar::Sidecar {
        let records = stda::Stda::parse(self.buffer.as_bytes())
            .map(|s| s.records())
            .unwrap_or_default();
        let mut sidecar = self
            .fine
            .recorder
            .sidecar(&records, self.buffer.records_logged());
        for e in &mut sidecar.entries {
            *e = self.fine.in_ns(*e);
        }
        sidecar
    }

    /// Shows each record to `observer` as it is logged (with its fine
    /// time, so only on [`SystemTrace::on_trap_at`]'s path).
    pub fn set_observer(&mut self, observer: Option<Observer>) {
        self.fine.observer = observer;
    }

    /// What DTRACE QUERY and GETVARS show.
    pub fn report(&self) -> Report {
        Report {
            dtos: self.runtime.dtos().iter().map(dto_report).collect(),
            sysdump: self.sysdump,
            spool: self
                .spool
                .as_ref()
                .map(|s| (s.spooler.totals(), s.dir.clone())),
            spool_error: self.spool_error.clone(),
        }
    }
}

fn dto_report(dto: &Dto) -> DtoReport {
    DtoReport {
        module: dto.module.clone(),
        id: dto.id,
        vars: dto.vars.clone(),
        errors: dto.errors,
        tracepoints: dto
            .tracepoints
            .iter()
            .map(|tp| TracepointReport {
                minor: tp.spec.minor,
                major: tp.spec.major,
                object: tp.spec.object,
                offset: tp.spec.offset,
                active: tp.active,
                hits: tp.hits,
                logged: tp.logged,
                cycles: tp.cycles,
            })
            .collect(),
        pids: dto.pids.clone(),
        refused: dto
            .refused
            .iter()
            .map(|(pid, why)| (*pid, why.to_string()))
            .collect(),
    }
}
