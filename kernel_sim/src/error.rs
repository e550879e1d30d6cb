//! Errors of the host side (loading, setup) and how a run ends.

use std::fmt;

/// A failure to set up or load a process: the guest never ran or cannot
/// go on. Guest misbehaviour while running is an [`Outcome`], not this.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// A module file could not be found in the sandbox.
    #[error("module {0} not found in the sandbox (looked for {1})")]
    ModuleNotFound(String, String),
    /// A module file could not be parsed.
    #[error("module {path}: {source}")]
    Parse {
        /// The OS/2 path of the module.
        path: String,
        /// The loader's error (offset and structure).
        #[source]
        source: loader::Error,
    },
    /// A module is valid but cannot be loaded here.
    #[error("module {module}: {reason}")]
    Load {
        /// Module name.
        module: String,
        /// What is wrong.
        reason: String,
    },
    /// Guest memory or selectors ran out.
    #[error("out of guest memory: {0}")]
    NoMemory(&'static str),
    /// Host I/O failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The host error.
        #[source]
        source: std::io::Error,
    },
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// The program ended (DosExit or a return from the entry point) with
    /// this result code.
    Exited(u32),
    /// The program called an API this kernel does not implement.
    Unimplemented {
        /// System DLL name (upper case).
        module: String,
        /// Ordinal.
        ordinal: u32,
        /// Function name, where known.
        name: Option<&'static str>,
    },
    /// The program raised an exception it had no handler for.
    GuestFault {
        /// Exception vector.
        vector: u8,
        /// Error code, if any.
        error: Option<u32>,
        /// CS selector at the fault.
        cs: u16,
        /// EIP at the fault.
        eip: u32,
        /// Linear address of a page fault (CR2).
        cr2: Option<u32>,
    },
    /// The program raised a software exception (DosRaiseException) no
    /// handler took: OS/2 ends the process.
    UnhandledException {
        /// The exception number (XCPT_*).
        number: u32,
        /// CS selector of the raising call.
        cs: u16,
        /// Where the raising call returns to.
        eip: u32,
    },
    /// The CPU shut down (triple fault) or halted.
    CpuStopped(&'static str),
    /// The instruction budget ran out (a loop, or a long program).
    InstructionLimit(u64),
    /// A host call API failed in a way the guest cannot be told about.
    HostError(String),
    /// Guest code returned to a kernel return point (internal: DLL init).
    Returned(u32),
    /// The trap hook ended the run ([`crate::HookAction::Stop`]).
    Stopped,
    /// The wall-clock limit ([`crate::ProcessConfig::max_wall`]) ran out.
    TimeLimit(std::time::Duration),
    /// The run was interrupted ([`crate::ProcessConfig::interrupt`] was
    /// set, e.g. by Ctrl-C), at an instruction boundary.
    Interrupted,
    /// Every thread of the process waits for something no thread can do
    /// and no time will end.
    Deadlock {
        /// Threads left.
        threads: usize,
    },
    /// A DLL's initialization routine reported failure (0) or ended
    /// otherwise; the program never started.
    InitFailed {
        /// Module name.
        module: String,
        /// How the routine ended.
        outcome: Box<Outcome>,
    },
}

impl Outcome {
    /// The process exit code a command line should return: the program's
    /// own for [`Outcome::Exited`], 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            Outcome::Exited(c) => *c as i32,
            _ => 1,
        }
    }
}

fn vector_name(v: u8) -> &'static str {
    match v {
        0 => "divide error",
        1 => "debug trap",
        3 => "breakpoint",
        4 => "overflow",
        5 => "bound range exceeded",
        6 => "invalid opcode",
        7 => "coprocessor not available",
        8 => "double fault",
        10 => "invalid TSS",
        11 => "segment not present",
        12 => "stack fault",
        13 => "general protection fault",
        14 => "page fault",
        16 => "coprocessor error",
        17 => "alignment check",
        _ => "software interrupt",
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Exited(c) => write!(f, "exited with code {c}"),
            Outcome::Unimplemented {
                module,
                ordinal,
                name,
            } => match name {
                Some(n) => write!(f, "unimplemented {module}.{ordinal} ({n})"),
                None => write!(f, "unimplemented {module}.{ordinal}"),
            },
            Outcome::GuestFault {
                vector,
                error,
                cs,
                eip,
                cr2,
            } => {
                write!(
                    f,
                    "guest {} (vector {vector}) at {cs:04X}:{eip:08X}",
                    vector_name(*vector)
                )?;
                if let Some(e) = error {
                    write!(f, ", error code {e:#x}")?;
                }
                if let Some(a) = cr2 {
                    write!(f, ", address {a:#010x}")?;
                }
                Ok(())
            }
            Outcome::UnhandledException { number, cs, eip } => write!(
                f,
                "unhandled exception {number:#010X} raised by the call returning to {cs:04X}:{eip:08X}"
            ),
            Outcome::CpuStopped(why) => write!(f, "the CPU stopped: {why}"),
            Outcome::InstructionLimit(n) => {
                write!(f, "instruction limit of {n} reached (the program may loop)")
            }
            Outcome::HostError(e) => write!(f, "host error: {e}"),
            Outcome::Returned(v) => write!(f, "returned {v:#x}"),
            Outcome::Stopped => f.write_str("stopped by the trap hook"),
            Outcome::TimeLimit(d) => write!(
                f,
                "the wall-clock limit of {} s ran out (--timeout to change it)",
                d.as_secs_f64()
            ),
            Outcome::Interrupted => f.write_str("interrupted"),
            Outcome::Deadlock { threads } => {
                write!(f, "deadlock: every thread ({threads}) waits forever")
            }
            Outcome::InitFailed { module, outcome } => {
                write!(f, "initialization of {module} failed: {outcome}")
            }
        }
    }
}
