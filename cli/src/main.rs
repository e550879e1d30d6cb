//! The `os2trace` binary: argument parsing and printing only.
fn main() {}
