//! Typed errors for the readers and writers.
//!
//! Read errors are the shared `binread` crate's ([`Error`]), re-exported
//! here as loader's own: every read error names the byte offset in the
//! file where the problem was found and the structure that was being read
//! there, so a user looking at a hex dump can find it. Writers have their own error type: they fail only
//! when the model cannot be expressed in the target format.

pub use binread::{Error, ErrorKind, Result};

/// A write error: the model cannot be expressed in the target format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot write {structure}: {reason}")]
pub struct WriteError {
    /// The structure being written.
    pub structure: &'static str,
    /// Why it cannot be written.
    pub reason: String,
}

impl WriteError {
    /// Builds a write error.
    pub fn new(structure: &'static str, reason: impl Into<String>) -> Self {
        WriteError {
            structure,
            reason: reason.into(),
        }
    }
}
