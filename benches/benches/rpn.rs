//! RPN benchmarks.
fn main() {}
