//! The trace source file (TSF) language: its lexer and the data statements'
//! syntax tree. The compiler that walks the tokens is [`crate::compile`].

pub mod ast;
pub mod lexer;
