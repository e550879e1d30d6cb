//! Dynamic Trace Objects: the tracepoints and variables of one module.
//!
//! A DTO is what DosDynamicTrace keeps per traced module (warp-debug-dtrace
//! §1.3.6): its tracepoints with their verified programs, the object
//! selectors and flat bases recorded when the tracepoints were inserted, the
//! variables, the log limit, the DTO id, and an error count. [`DtoSpec`] is
//! the definition handed to [`super::DynamicTrace::apply`]; it is built from
//! a DTRACE trace program file here, or from a TDF by the TRACE command.
//!
//! A DTO belongs to the module, not to an address: every copy of the module
//! that a process loads is an [`Instance`] of it, with the tracepoints
//! inserted at that copy's addresses, and every instance shares the DTO's
//! variables, statistics, error count and log limit (as OS/2's one module
//! table entry, with its code shared by every process that uses it, would).

use rpn_vm::source::TraceProgramFile;
use rpn_vm::{DEFAULT_LOGMAX, Program};

use std::collections::BTreeMap;

use super::guest::ObjectMapping;
use super::runtime::ApplyError;

/// One tracepoint to insert.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracepointSpec {
    /// Minor code.
    pub minor: u16,
    /// Major code.
    pub major: u16,
    /// Object of the module, numbered from 1.
    pub object: u32,
    /// Offset within the object.
    pub offset: u32,
    /// The opcode byte expected at the address, if the definition says.
    pub opcode: Option<u8>,
    /// The verified trace program.
    pub program: Program,
}

/// A DTO definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DtoSpec {
    /// Module name (as the module table knows it).
    pub module: String,
    /// DTO grouping id (`id=`).
    pub id: u32,
    /// Number of variables (`vars=`).
    pub vars: u32,
    /// Log limit in bytes (`logmax=`).
    pub logmax: usize,
    /// The module's objects, in order: selector and flat base.
    pub objects: Vec<ObjectMapping>,
    /// The tracepoints.
    pub tracepoints: Vec<TracepointSpec>,
}

/// Why a trace program file cannot become a DTO.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// No major code in the tracepoint, the file or the command line.
    #[error("minor 0x{minor:04X}: no major code (major= in the file header or /m=)")]
    NoMajor {
        /// The tracepoint.
        minor: u16,
    },
    /// A tracepoint without object= and offset=.
    #[error("minor 0x{minor:04X}: object= and offset= are required")]
    NoAddress {
        /// The tracepoint.
        minor: u16,
    },
}

impl DtoSpec {
    /// The DTO of a trace program file (DTRACE APPLY). `major` and `id`
    /// override the file header, as `/m=` and `/i=` do; a tracepoint's own
    /// `major=` overrides both.
    ///
    /// # Errors
    /// [`SpecError`] for a tracepoint without a major code or an address.
    pub fn from_trace_program(
        file: &TraceProgramFile,
        module: &str,
        objects: Vec<ObjectMapping>,
        major: Option<u16>,
        id: Option<u32>,
    ) -> Result<DtoSpec, SpecError> {
        let header = &file.header;
        let mut tracepoints = Vec::with_capacity(file.tracepoints.len());
        for tp in &file.tracepoints {
            let major = tp
                .major
                .or(major)
                .or(header.major)
                .ok_or(SpecError::NoMajor { minor: tp.minor })?;
            let (Some(object), Some(offset)) = (tp.object, tp.offset) else {
                return Err(SpecError::NoAddress { minor: tp.minor });
            };
            tracepoints.push(TracepointSpec {
                minor: tp.minor,
                major,
                object,
                offset,
                opcode: tp.opcode,
                program: tp.program.clone(),
            });
        }
        Ok(DtoSpec {
            module: module.to_string(),
            id: id.or(header.id).unwrap_or(0),
            vars: header.vars(),
            logmax: header.logmax() as usize,
            objects,
            tracepoints,
        })
    }
}

/// A tracepoint of an applied DTO, with its statistics, which count the
/// hits of every instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveTracepoint {
    /// The definition.
    pub spec: TracepointSpec,
    /// Linear address of the INT3 in the first instance (0 while the
    /// module has not been loaded); each instance's is in its
    /// [`Instance::sites`].
    pub linear: u32,
    /// The byte the INT3 replaced in the first instance.
    pub original: u8,
    /// Times the tracepoint was hit.
    pub hits: u64,
    /// Records it logged.
    pub logged: u64,
    /// Cycles its hits cost in all (trap, dispatch, program, single-step).
    pub cycles: u64,
    /// Whether the tracepoint is still inserted (Remove and TRACE OFF take
    /// it out of every instance, and later loads do not insert it).
    pub active: bool,
}

/// Where one tracepoint is in one instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Site {
    /// Linear address of the INT3 in the instance's process.
    pub linear: u32,
    /// Physical address of that byte (the key the CPU and the runtime
    /// find the tracepoint by).
    pub phys: u32,
    /// The byte the INT3 replaced.
    pub original: u8,
    /// Whether the INT3 is there now.
    pub inserted: bool,
}

/// One copy of the traced module with the tracepoints in it: the copy a
/// process loaded (a program, or a DLL that every process loads at its
/// own addresses here).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// The process that loaded the copy (0: the address space on the CPU
    /// when [`super::DynamicTrace::apply`] was called outside a kernel).
    pub pid: u16,
    /// The copy's objects, numbered from 1: what `Push OXS` and `Push
    /// OXF` give at its hits.
    pub objects: Vec<ObjectMapping>,
    /// Per tracepoint, in definition order: where it is in this copy.
    pub sites: Vec<Site>,
}

/// An applied DTO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dto {
    /// Module name.
    pub module: String,
    /// The module name loads are matched against (case-insensitive): the
    /// name without path or extension that TRACE ON or DTRACE APPLY was
    /// given.
    pub target: String,
    /// DTO id.
    pub id: u32,
    /// The variables, zero when applied, shared by every instance.
    pub vars: Vec<u32>,
    /// Log limit.
    pub logmax: usize,
    /// Objects of the first instance, numbered from 1 (empty while the
    /// module has not been loaded).
    pub objects: Vec<ObjectMapping>,
    /// Tracepoints, in definition order.
    pub tracepoints: Vec<ActiveTracepoint>,
    /// Hits that ended in error (a variable index out of range).
    pub errors: u64,
    /// The copies with the tracepoints in them now, by the PID of their
    /// process and the flat base of their first object. A process's go
    /// when it ends.
    pub instances: BTreeMap<(u16, u32), Instance>,
    /// Every process an instance was inserted in, in order, each once
    /// (this stays when instances go).
    pub pids: Vec<u16>,
    /// Loads of the module that could not take the tracepoints (the copy
    /// is not traced): the PID and why.
    pub refused: Vec<(u16, ApplyError)>,
}

impl Dto {
    pub(crate) fn new(spec: &DtoSpec, target: &str) -> Dto {
        Dto {
            module: spec.module.clone(),
            target: target.to_string(),
            id: spec.id,
            vars: vec![0; spec.vars as usize],
            logmax: if spec.logmax == 0 {
                DEFAULT_LOGMAX
            } else {
                spec.logmax
            },
            objects: Vec::new(),
            tracepoints: spec
                .tracepoints
                .iter()
                .map(|tp| ActiveTracepoint {
                    spec: tp.clone(),
                    linear: 0,
                    original: 0,
                    hits: 0,
                    logged: 0,
                    cycles: 0,
                    active: true,
                })
                .collect(),
            errors: 0,
            instances: BTreeMap::new(),
            pids: Vec::new(),
            refused: Vec::new(),
        }
    }

    /// Whether a module called `name` is this DTO's.
    pub fn traces(&self, name: &str) -> bool {
        name.eq_ignore_ascii_case(&self.target)
    }
}

/// Why a TDF cannot become a DTO.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TdfSpecError {
    /// A tracepoint's program fails the verifier.
    #[error("minor 0x{minor:04X}: {error}")]
    Program {
        /// The tracepoint.
        minor: u16,
        /// The verifier's finding.
        error: rpn_vm::VerifyError,
    },
}

impl DtoSpec {
    /// The DTO for the tracepoints of `tdf` that `selection` takes (TRACE
    /// ON). TDFs carry no opcode check beyond the byte TRCUST read, which is
    /// checked on apply; DTO id is the TDF's TDFID.
    ///
    /// # Errors
    /// [`TdfSpecError`] when a selected tracepoint's program does not verify.
    pub fn from_tdf(
        tdf: &tdf::Tdf,
        selection: &super::select::Selection,
        objects: Vec<ObjectMapping>,
    ) -> Result<DtoSpec, TdfSpecError> {
        let vars = tdf.vars.len() as u32;
        let mut tracepoints = Vec::new();
        for record in tdf.records.iter().filter(|r| selection.matches(r)) {
            // TRCUST's ORBIT= may name variables beyond the header's count
            // (TRCUST-FORMATS.md §5.2); give the DTO enough of them.
            let program = Program::load(&record.rpn, u32::from(u16::MAX)).map_err(|error| {
                TdfSpecError::Program {
                    minor: record.minor,
                    error,
                }
            })?;
            tracepoints.push(TracepointSpec {
                minor: record.minor,
                major: record.major,
                object: record.object,
                offset: record.offset,
                opcode: Some(record.opcode),
                program,
            });
        }
        let highest_var = tracepoints
            .iter()
            .flat_map(|t| t.program.instructions())
            .filter(|(_, i)| {
                matches!(
                    i.op,
                    rpn_vm::Op::PushV | rpn_vm::Op::MoveV | rpn_vm::Op::IncV | rpn_vm::Op::OrV
                )
            })
            .map(|(_, i)| i.operand + 1)
            .max()
            .unwrap_or(0);
        Ok(DtoSpec {
            module: String::from_utf8_lossy(&tdf.module).into_owned(),
            id: u32::from(tdf.tdf_id),
            vars: vars.max(highest_var),
            logmax: usize::from(tdf.max_data_len),
            objects,
            tracepoints,
        })
    }
}
