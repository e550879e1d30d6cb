//! The trace source file (TSF) language: its lexer and the data statements'
//! syntax tree. The compiler that walks the tokens is [`mod@crate::compile`].

pub mod ast;
pub mod lexer;
