//! TRAPRED, the reduction program: selects records of a CPTRAP file and
//! shows them forward or backward at the terminal, or prints them.
//!
//! * [`command`]: the command language ([`parse_command`]).
//! * [`session`]: the state machine over one file ([`Session`]): the
//!   selection, the position, the hold; [`run_dialogue`] drives it from
//!   lines of input.
//! * [`display`]: how a record is shown.
//!
//! The session writes to two sinks, the terminal and the print file; it
//! never touches the file system. STOP's deletion is the caller's, told by
//! [`AfterCommand::Stop`].

pub mod command;
pub mod display;
pub mod session;

pub use command::{Command, CommandError, Count, parse_command};
pub use session::{AfterCommand, DialogueOptions, Session, run_dialogue};
