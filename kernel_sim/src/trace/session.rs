//! A traced run: the dynamic trace runtime and the system trace buffer,
//! attached to a [`Process`] as its [`TrapHook`].
//!
//! The session turns the process's loaded modules into DTO object tables
//! (for each object its flat base, and the selector a trace program's
//! `Push OXS` gets: the segment's own selector for 16-bit segments, the
//! tiled 16:16 alias for 32-bit objects), stamps records with the process's
//! emulated clock, and charges every hit's cost to that clock. TRACE ON is
//! recorded in the buffer header when the session starts.

use rpn_vm::source::TraceProgramFile;
use stda::{StdaFormat, Timestamp, TraceBuffer, TraceDateTime};

use super::dto::{DtoSpec, SpecError, TdfSpecError};
use super::event::{Next, TrapKind};
use super::guest::ObjectMapping;
use super::runtime::{ApplyError, DynamicTrace};
use super::select::Selection;
use crate::clock::DateTime;
use crate::loading::LoadedModule;
use crate::process::Process;
use crate::run::{HookAction, TrapHook};

/// Why tracepoints could not be put into a process.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// No loaded module has that name.
    #[error("module {0} is not loaded")]
    NoModule(String),
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
}

/// The runtime, the buffer, and what the hits asked for.
#[derive(Debug)]
pub struct TraceSession {
    /// The dynamic trace runtime.
    pub runtime: DynamicTrace,
    /// The system trace buffer the records go to.
    pub buffer: TraceBuffer,
    /// Process ID written into the records.
    pub pid: u16,
    /// Set when a tracepoint's program executed SysDump: the linear address.
    pub sysdump: Option<u32>,
}

fn timestamp(t: DateTime) -> Timestamp {
    Timestamp::new(t.hour, t.minute, t.second, t.hundredths)
}

fn trace_datetime(t: DateTime) -> TraceDateTime {
    TraceDateTime {
        year: t.year,
        month: t.month,
        day: t.day,
        time: timestamp(t),
    }
}

/// The DTO object table of a loaded module.
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

impl TraceSession {
    /// A session with an empty buffer of `kb` KB; TRACE ON is stamped with
    /// the process's clock now.
    ///
    /// # Errors
    /// [`SessionError::Buffer`] for a size outside 1..=63.
    pub fn new(
        process: &Process,
        format: StdaFormat,
        kb: u32,
        pid: u16,
    ) -> Result<TraceSession, SessionError> {
        let mut buffer = TraceBuffer::new(format, kb)?;
        buffer.set_trace_on(trace_datetime(
            process.clock().now(process.machine().cycles()),
        ));
        Ok(TraceSession {
            runtime: DynamicTrace::new(),
            buffer,
            pid,
            sysdump: None,
        })
    }

    fn module<'p>(process: &'p Process, name: &str) -> Result<&'p LoadedModule, SessionError> {
        process
            .module(name)
            .ok_or_else(|| SessionError::NoModule(name.to_string()))
    }

    /// DTRACE APPLY: the tracepoints of a trace program file into `module`.
    /// Returns the DTO's index.
    ///
    /// # Errors
    /// [`SessionError`] when the module is missing or a tracepoint fails.
    pub fn apply_program(
        &mut self,
        process: &mut Process,
        module: &str,
        file: &TraceProgramFile,
        major: Option<u16>,
        id: Option<u32>,
    ) -> Result<usize, SessionError> {
        let loaded = Self::module(process, module)?;
        let spec =
            DtoSpec::from_trace_program(file, &loaded.name, object_mappings(loaded), major, id)?;
        Ok(self.runtime.apply(process.machine_mut(), &spec)?)
    }

    /// TRACE ON: the tracepoints of `tdf` that `selection` takes, into the
    /// module the TDF names (or `module` when given). Returns the DTO index.
    ///
    /// # Errors
    /// [`SessionError`] when the module is missing or a tracepoint fails.
    pub fn trace_on(
        &mut self,
        process: &mut Process,
        tdf: &tdf::Tdf,
        selection: &Selection,
        module: Option<&str>,
    ) -> Result<usize, SessionError> {
        let named = String::from_utf8_lossy(&tdf.module).into_owned();
        let base = named.rsplit(['\\', '/', ':']).next().unwrap_or(&named);
        let stem = base.split('.').next().unwrap_or(base);
        let name = module.unwrap_or(stem);
        let loaded = Self::module(process, name)?;
        let spec = DtoSpec::from_tdf(tdf, selection, object_mappings(loaded))?;
        Ok(self.runtime.apply(process.machine_mut(), &spec)?)
    }

    /// TRACE OFF: removes a DTO's tracepoints and stamps TRACE OFF.
    pub fn trace_off(&mut self, process: &mut Process, dto: usize) {
        self.runtime.remove(process.machine_mut(), dto);
        self.stamp_trace_off(process);
    }

    /// Stamps TRACE OFF in the buffer header with the process's clock (the
    /// end of a traced run).
    pub fn stamp_trace_off(&mut self, process: &Process) {
        let now = process.clock().now(process.machine().cycles());
        self.buffer.set_trace_off(trace_datetime(now));
    }
}

impl TrapHook for TraceSession {
    fn on_trap(&mut self, process: &mut Process, kind: TrapKind) -> HookAction {
        let now = timestamp(process.clock().now(process.machine().cycles()));
        let dispatch =
            self.runtime
                .on_trap(process.machine_mut(), kind, &mut self.buffer, now, self.pid);
        process.clock_mut().add_cycles(dispatch.cycles);
        match dispatch.next {
            Next::NotOurs => HookAction::NotMine,
            Next::Resume => HookAction::Resume,
            Next::SysDump { linear } => {
                // "Normal system execution is terminated immediately."
                self.sysdump = Some(linear);
                HookAction::Stop
            }
        }
    }
}
