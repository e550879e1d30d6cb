//! Criterion benchmarks for os2trace; the benches live in `benches/`.
