//! prex's command language and session (reference §1.2 and §1.3).
//!
//! * [`lex`]: tokens and logical lines;
//! * [`parse`]: the statements of prexgram.y;
//! * [`regex`]: ed-style regular expressions;
//! * [`matching`]: attribute units and expr matching;
//! * [`session`]: the probe table, sets, functions, history and the kernel
//!   mode state, with prex's messages;
//! * [`help`]: help texts.

pub mod help;
pub mod lex;
pub mod matching;
pub mod parse;
pub mod regex;
pub mod session;

pub use parse::{Expr, ParseError, QuitMode, Selector, Spec, Stmt};
pub use session::{Action, Mode, ProbeState, Session};
