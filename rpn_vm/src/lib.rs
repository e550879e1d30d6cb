//! RPN trace programs of OS/2 dynamic trace.
//!
//! Every dynamic tracepoint carries a small program in Reverse Polish
//! Notation (warp-debug-dtrace.txt §1.6) that the kernel interprets when the
//! tracepoint's INT3 is hit: it pushes registers and memory onto a 16-entry
//! circular stack, computes, updates the DTO's variables and logs data into
//! the system trace buffer.
//!
//! The layers, bottom up:
//! * [`opcode`]: the one table of opcodes (byte, mnemonic, operand, length,
//!   cycles), from which everything else is derived;
//! * [`instr`]: one instruction, encoded and decoded through the table;
//! * [`verify`]: the load-time verifier and the verified [`Program`];
//! * [`interp`]: the cycle-counted [`Interpreter`] running against a
//!   [`TracedMachine`];
//! * [`source`], [`disasm`], [`object`]: trace program files as text, back to
//!   text, and compiled;
//! * [`jit`]: a native-code tier for verified programs on x86-64 hosts,
//!   with the interpreter's results;
//! * [`fake`] and [`examples`]: a fake machine and the seed's examples.

pub mod disasm;
pub mod examples;
pub mod fake;
mod fuse;
pub mod instr;
pub mod interp;
pub mod jit;
pub mod machine;
pub mod object;
pub mod opcode;
pub mod source;
pub mod verify;

pub use fake::{FakeMachine, FakeSegment};
pub use instr::Instr;
pub use interp::{DEFAULT_LOGMAX, Hit, HitOutcome, Interpreter, Record, RunError, RunResult};
pub use machine::{FaultKind, MemFault, Reg, TracedMachine};
pub use opcode::{OPCODES, Op, OpInfo, Operand};
pub use source::{SourceError, SourceErrors, TraceProgramFile, Tracepoint, parse};
pub use verify::{Program, VerifyError, VerifyErrorKind};
