//! What the programs' modules share apart from their code: the header
//! fields of a 16-bit (NE) and a 32-bit (LX) program, the LX stack
//! object, and the exit-code tracepoint most programs define.

use loader::Format;

use super::{LX_DATA, LX_PROGRAM, NE_PROGRAM, STACK16, STACK32};
use crate::link::{Spec, TraceSpec};
use crate::segment::{Data, Segment};

/// What differs between two program (EXE) modules besides their
/// segments; [`Exe::ne`] and [`Exe::lx`] add the rest of the [`Spec`].
pub(crate) struct Exe {
    /// Module name, e.g. `HELLO16`.
    pub name: &'static str,
    /// File name, e.g. `HELLO16.EXE`.
    pub file_name: &'static str,
    /// Description (first non-resident name).
    pub description: &'static str,
    /// Major code of the trace definitions.
    pub major: u16,
    /// The tracepoints.
    pub tracepoints: Vec<TraceSpec>,
}

impl Exe {
    /// A 16-bit program of `segments`, the last of which is DGROUP: start
    /// at `main`, SS:SP = DGROUP:(its size + [`STACK16`]).
    pub(crate) fn ne(self, segments: Vec<Segment>) -> Spec {
        let dgroup = segments.len() as u16;
        let stack_top = segments.last().map_or(0, |s| s.virtual_size) + STACK16;
        Spec {
            format: Format::Ne,
            name: self.name,
            file_name: self.file_name,
            description: self.description,
            flags: NE_PROGRAM,
            segments,
            exports: Vec::new(),
            start: "main",
            stack: Some((dgroup, stack_top)),
            stack_size: STACK16,
            auto_data: Some(dgroup),
            major: self.major,
            tracepoints: self.tracepoints,
        }
    }

    /// A 32-bit program: objects 1 `code`, 2 `data`, 3 the stack
    /// ([`stack32`]); start at `main`, ESP = 3:[`STACK32`].
    pub(crate) fn lx(self, code: Segment, data: Segment) -> Spec {
        Spec {
            format: Format::Lx,
            name: self.name,
            file_name: self.file_name,
            description: self.description,
            flags: LX_PROGRAM,
            segments: vec![code, data, stack32()],
            exports: Vec::new(),
            start: "main",
            stack: Some((3, STACK32)),
            stack_size: STACK32,
            auto_data: None,
            major: self.major,
            tracepoints: self.tracepoints,
        }
    }
}

/// The zero-filled `STACK` object of a 32-bit program ([`STACK32`]
/// bytes, no pages).
pub(crate) fn stack32() -> Segment {
    let mut s = Data::new();
    s.zeroed("stack_bottom", STACK32);
    s.finish("STACK", "STACK", LX_DATA)
}

/// Tracepoint `minor` at the 16-bit `exit` label: `rc=%W`, AX.
pub(crate) fn exit_rc16(minor: u16, desc: &'static str) -> TraceSpec {
    TraceSpec {
        minor,
        retep: false,
        at: "exit",
        desc,
        fmt: &["rc=%W"],
        data: &["REGS=(AX)"],
        rpn: &["Push EAX", "Log WN,1"],
    }
}

/// Tracepoint `minor` at the 32-bit `exit` label: `rc=%D`, EAX.
pub(crate) fn exit_rc32(minor: u16, desc: &'static str) -> TraceSpec {
    TraceSpec {
        minor,
        retep: false,
        at: "exit",
        desc,
        fmt: &["rc=%D"],
        data: &["REGS=(EAX)"],
        rpn: &["Push EAX", "Log DN,1"],
    }
}

/// A tracepoint with only its logging (`data`, `rpn`) filled in, for
/// struct update syntax (see [`stack_bytes16!`]).
pub(crate) const fn logging(
    data: &'static [&'static str],
    rpn: &'static [&'static str],
) -> TraceSpec {
    TraceSpec {
        minor: 0,
        retep: false,
        at: "",
        desc: "",
        fmt: &[],
        data,
        rpn,
    }
}

/// `stack_bytes16!(n)`: a tracepoint that logs the `n` bytes at the top
/// of the 16-bit stack (SS:SP), a call's arguments or a routine's return
/// address and arguments. The caller gives `minor`, `at`, `desc` and
/// `fmt` and takes the rest with struct update syntax
/// (`TraceSpec { minor, .., ..stack_bytes16!(12) }`).
macro_rules! stack_bytes16 {
    ($n:literal) => {
        $crate::programs::logging(
            &[concat!("MEM=(RSS+SP,DIRECT,", $n, ")")],
            &[concat!("Push W,", $n), "Push SS", "Push ESP", "Log MRS"],
        )
    };
}
pub(crate) use stack_bytes16;

/// `stack_bytes32!(n)`: the same for the `n` bytes at ESP (flat).
macro_rules! stack_bytes32 {
    ($n:literal) => {
        $crate::programs::logging(
            &[concat!("MEM32=(FESP,DIRECT,", $n, ")")],
            &[concat!("Push W,", $n), "Push ESP", "Log MRF"],
        )
    };
}
pub(crate) use stack_bytes32;
