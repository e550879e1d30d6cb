//! The one error type of the crate.
//!
//! The programs are fixed, so an error here is a defect in a program's
//! source (an unknown label, an instruction the assembler rejects, a module
//! the writer refuses) or a file that cannot be written. Each error names
//! the program it happened in.

use std::path::PathBuf;

/// Why a program could not be built or written.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// iced-x86's assembler rejected an instruction or a label.
    #[error("{program}: assembler: {message}")]
    Asm {
        /// The program being built.
        program: &'static str,
        /// iced-x86's message.
        message: String,
    },
    /// A symbol, segment or tracepoint could not be resolved.
    #[error("{program}: link: {message}")]
    Link {
        /// The program being built.
        program: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The loader's writer refused the module.
    #[error("{program}: writing the module: {source}")]
    Write {
        /// The program being built.
        program: &'static str,
        /// The writer's error.
        source: loader::WriteError,
    },
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Crate result.
pub type Result<T> = std::result::Result<T, BuildError>;

/// Builds a [`BuildError::Link`].
pub(crate) fn link_error(program: &'static str, message: impl Into<String>) -> BuildError {
    BuildError::Link {
        program,
        message: message.into(),
    }
}
