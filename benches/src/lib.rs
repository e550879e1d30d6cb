//! Criterion benchmarks for os2trace; the benches live in `benches/`.
//! This library holds what several of them (and the `rpn_count` example)
//! share: the `sixteen` RPN program with its eBPF twin, and the crate's one
//! module of host calls that need `unsafe`.

pub mod host;
pub mod sixteen;
