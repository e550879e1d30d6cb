//! The trace commands, as kernel services on a [`Process`]: TRACEBUF=
//! ([`Process::trace_start`]), TRACE ON and DTRACE APPLY (one at a time,
//! or from the lists of a [`TraceCommands`]), TRACE OFF, TRSPOOL,
//! TRACEGET and the data of DTRACE QUERY / GETVARS.
//!
//! The tools that parse a command line and print results (the `os2trace`
//! binary) call these; the guest's own DosSysTrace and DosDynamicTrace
//! reach the same [`SystemTrace`] through the process.

use std::path::{Path, PathBuf};

use rpn_vm::source::TraceProgramFile;
use stda::StdaFormat;
use stda::savefile::SaveFile;
use stda::spool::SpoolOptions;

use super::dto::DtoSpec;
use super::guest::ObjectMapping;
use super::select::{Selection, split_apply_operand, split_operand};
use super::system::{Report, SystemTrace, TraceError, object_mappings};
use crate::process::Process;

/// What to trace in one run, as TRACE and DTRACE commands would say it.
#[derive(Debug, Clone)]
pub struct TraceCommands {
    /// The buffer's format (`--old-format`: the OS/2 2.x one).
    pub format: StdaFormat,
    /// The buffer's size in KB (TRACEBUF=, 1..=63).
    pub kb: u32,
    /// `TRACE ON` operands: `FILE.TDF[(spec)]`, a host path; the module
    /// is the one the TDF names.
    pub traces: Vec<String>,
    /// `DTRACE APPLY` operands: `FILE.rpn[@MODULE]`, a host path; the
    /// module defaults to the file's `name=`.
    pub applies: Vec<String>,
    /// TRSPOOL: the host directory of its files and its options.
    pub spool: Option<(PathBuf, SpoolOptions)>,
}

impl Default for TraceCommands {
    fn default() -> Self {
        TraceCommands {
            format: StdaFormat::New,
            kb: 4,
            traces: Vec::new(),
            applies: Vec::new(),
            spool: None,
        }
    }
}

fn read(file: &str) -> Result<Vec<u8>, TraceError> {
    std::fs::read(file).map_err(|e| TraceError::File {
        file: format!("cannot read {file}"),
        reason: e.to_string(),
    })
}

/// A trace program file as text; bytes that are not UTF-8 are an error at
/// `FILE:LINE:COL`, like every other error in such a file.
fn read_source(file: &str) -> Result<String, TraceError> {
    rpn_vm::source::decode_text(read(file)?).map_err(|e| TraceError::File {
        file: format!("{file}:{}:{}", e.line, e.col),
        reason: format!(
            "not UTF-8 text (byte 0x{:02X}); save the file as UTF-8",
            e.byte
        ),
    })
}

impl Process {
    /// TRACE ON for a static major (`245`, `0xF5(1,3-5)`): DosSysTrace
    /// records of it are logged. Returns false, doing nothing, when the
    /// operand names a TDF instead.
    ///
    /// # Errors
    /// A major over 255 or a minor list that does not parse.
    pub fn trace_on_static(&mut self, operand: &str) -> Result<bool, TraceError> {
        let (name, spec) = split_operand(operand);
        let Some(major) = super::statics::static_major(name) else {
            return Ok(false);
        };
        let on = || format!("TRACE ON {operand}");
        let major = u8::try_from(major).map_err(|_| TraceError::File {
            file: on(),
            reason: format!("major code {major} is outside 0..255"),
        })?;
        let minors = super::statics::parse_minors(spec.unwrap_or(""))
            .map_err(|reason| TraceError::File { file: on(), reason })?;
        if let Some(t) = self.kernel.trace.as_mut() {
            t.trace_on_static(major, minors);
        }
        Ok(true)
    }

    /// TRACEBUF=: a system trace with an empty buffer of `kb` KB, TRACE ON
    /// stamped now. Replaces any system trace there was.
    ///
    /// # Errors
    /// [`TraceError::Buffer`] for a size outside 1..=63.
    pub fn trace_start(&mut self, format: StdaFormat, kb: u32) -> Result<(), TraceError> {
        self.kernel.trace = Some(SystemTrace::new(format, kb, self.now())?);
        Ok(())
    }

    /// The system trace, once started.
    pub fn system_trace(&self) -> Option<&SystemTrace> {
        self.kernel.trace.as_ref()
    }

    /// The system trace, mutable.
    pub fn system_trace_mut(&mut self) -> Option<&mut SystemTrace> {
        self.kernel.trace.as_mut()
    }

    /// Applies a DTO for the module `target`: into the running process's
    /// copy if it has one (a tracepoint that cannot go in fails the
    /// command, and nothing is applied), then into every other live
    /// process's copy, and from then on into each copy loaded
    /// (`trace/loads.rs`). A module no process has loaded yet is traced
    /// from its first load.
    fn trace_insert(&mut self, spec: &DtoSpec, target: &str) -> Result<usize, TraceError> {
        let trace = self.kernel.trace.as_mut().ok_or(TraceError::NotStarted)?;
        let runtime = trace.runtime_mut();
        let index = match self
            .pcb
            .modules
            .iter()
            .find(|m| !m.freed && m.name.eq_ignore_ascii_case(target))
        {
            Some(m) => {
                let mem = &self.pcb.mem;
                runtime.apply_in(
                    &mut self.machine,
                    spec,
                    target,
                    (self.pcb.pid, object_mappings(m)),
                    &|l| mem.phys(l),
                )?
            }
            None => runtime.define(spec, target),
        };
        for pcb in &self.kernel.procs {
            if pcb.dead {
                continue;
            }
            for m in pcb
                .modules
                .iter()
                .filter(|m| !m.freed && m.name.eq_ignore_ascii_case(target))
            {
                let mem = &pcb.mem;
                let objects = object_mappings(m);
                if let Err(why) =
                    runtime.attach(&mut self.machine, index, pcb.pid, objects, &|l| mem.phys(l))
                {
                    runtime.refuse(index, pcb.pid, why);
                }
            }
        }
        Ok(index)
    }

    /// The objects of the running process's module `name`, if it has
    /// loaded it (none: the DTO waits for a load).
    fn loaded_objects(&self, name: &str) -> Result<Vec<ObjectMapping>, TraceError> {
        if self.kernel.trace.is_none() {
            return Err(TraceError::NotStarted);
        }
        Ok(self.module(name).map(object_mappings).unwrap_or_default())
    }

    /// DTRACE APPLY: the tracepoints of a trace program file into `module`
    /// (in every process that loads it; see [`crate::trace`]). `major` and
    /// `id` override the file's (`/m=`, `/i=`). Returns the DTO's index.
    ///
    /// # Errors
    /// [`TraceError`] when there is no trace, or a tracepoint fails in the
    /// running process's copy of the module.
    pub fn trace_apply(
        &mut self,
        module: &str,
        file: &TraceProgramFile,
        major: Option<u16>,
        id: Option<u32>,
    ) -> Result<usize, TraceError> {
        let objects = self.loaded_objects(module)?;
        let name = self
            .module(module)
            .map_or_else(|| module.to_ascii_uppercase(), |m| m.name.clone());
        let spec = DtoSpec::from_trace_program(file, &name, objects, major, id)?;
        self.trace_insert(&spec, module)
    }

    /// TRACE ON: the tracepoints of `tdf` that `selection` takes, into the
    /// module the TDF names (or `module` when given), in every process
    /// that loads it. Returns the DTO's index.
    ///
    /// # Errors
    /// [`TraceError`] when there is no trace, a program does not verify or
    /// a tracepoint fails in the running process's copy of the module.
    pub fn trace_on(
        &mut self,
        tdf: &tdf::Tdf,
        selection: &Selection,
        module: Option<&str>,
    ) -> Result<usize, TraceError> {
        let named = String::from_utf8_lossy(&tdf.module).into_owned();
        let name = module
            .unwrap_or(tdf::module::module_name(&named))
            .to_string();
        let spec = DtoSpec::from_tdf(tdf, selection, self.loaded_objects(&name)?)?;
        self.trace_insert(&spec, &name)
    }

    /// TRACE OFF for one DTO: its tracepoints come out and TRACE OFF is
    /// stamped.
    pub fn trace_off(&mut self, dto: usize) {
        let now = self.now();
        if let Some(trace) = self.kernel.trace.as_mut() {
            trace.runtime_mut().remove(&mut self.machine, dto);
            trace.stamp_trace_off(now);
        }
    }

    /// TRSPOOL into the host directory `dir` from now on.
    ///
    /// # Errors
    /// [`TraceError`] when there is no trace or `dir` cannot be created.
    pub fn trace_spool(&mut self, dir: &Path, options: SpoolOptions) -> Result<(), TraceError> {
        let ms = self.now_millis();
        let trace = self.kernel.trace.as_mut().ok_or(TraceError::NotStarted)?;
        trace.start_spool(dir, options, ms)
    }

    /// The whole setup of a traced run: the buffer, then each TRACE ON and
    /// DTRACE APPLY of `commands` in order (reading their files), then
    /// TRSPOOL.
    ///
    /// # Errors
    /// The first command that fails, named with its operand.
    pub fn trace_commands(&mut self, commands: &TraceCommands) -> Result<(), TraceError> {
        self.trace_start(commands.format, commands.kb)?;
        for operand in &commands.traces {
            let (file, spec) = split_operand(operand);
            if self.trace_on_static(operand)? {
                continue;
            }
            let bytes = read(file)?;
            let tdf = tdf::Tdf::parse(&bytes).map_err(|e| TraceError::File {
                file: file.to_string(),
                reason: e.to_string(),
            })?;
            let on = || format!("TRACE ON {operand}");
            let selection =
                Selection::parse(spec.unwrap_or(""), &tdf).map_err(|e| TraceError::File {
                    file: on(),
                    reason: e.to_string(),
                })?;
            self.trace_on(&tdf, &selection, None)
                .map_err(|e| e.within(on()))?;
        }
        for operand in &commands.applies {
            let (file, module) = split_apply_operand(operand);
            let text = read_source(file)?;
            let parsed =
                rpn_vm::parse(file, &text).map_err(|e| TraceError::Program(e.to_string()))?;
            let name = module
                .map(str::to_string)
                .or_else(|| parsed.header.name.clone());
            let Some(name) = name else {
                return Err(TraceError::File {
                    file: file.to_string(),
                    reason: format!("no module: give name= in the file or --apply {file}@MODULE"),
                });
            };
            let stem = tdf::module::module_name(&name).to_string();
            self.trace_apply(&stem, &parsed, None, None)
                .map_err(|e| e.within(format!("DTRACE APPLY {file}")))?;
        }
        if let Some((dir, options)) = &commands.spool {
            self.trace_spool(dir, *options)?;
        }
        Ok(())
    }

    /// The end of tracing: TRACE OFF stamped now and TRSPOOL's last poll.
    /// Nothing to do without a system trace.
    ///
    /// # Errors
    /// [`TraceError::Spool`] when the last poll cannot write its file.
    pub fn trace_stop(&mut self) -> Result<(), TraceError> {
        let (ms, now) = (self.now_millis(), self.now());
        match self.kernel.trace.as_mut() {
            Some(trace) => trace.stop(ms, now),
            None => Ok(()),
        }
    }

    /// TRACEGET: the buffer as a save file stamped now.
    pub fn traceget(&self) -> Option<SaveFile> {
        let now = self.now().into();
        self.kernel.trace.as_ref().map(|t| t.traceget(now))
    }

    /// DTRACE QUERY / GETVARS: the DTOs, their tracepoints and variables.
    pub fn trace_report(&self) -> Option<Report> {
        self.kernel.trace.as_ref().map(SystemTrace::report)
    }
}
