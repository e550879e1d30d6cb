//! A harness for counting host instructions per hit of the `rpn` bench's
//! sixteen-instruction program under `valgrind --tool=callgrind`:
//! `rpn_count ENGINE N` runs `N` hits with ENGINE (`jit`, `interp` or
//! `rbpf_jit`). The count per hit is the difference between two runs with
//! different `N`, divided by the difference of the `N`s (the setup cancels).
//! With `RPN_COUNT_PROGRAM=exampleK` (K from 1 to 5), `jit` and `interp`
//! run the seed's example K on the sample machine instead.
//!
//! Build: `cargo build --profile bench -p benches --example rpn_count`.

use benches::sixteen::{self, rpn_program};
use rpn_vm::examples::sample_machine;
use rpn_vm::jit::Compiled;
use rpn_vm::{HitOutcome, Interpreter};
use std::hint::black_box;

fn main() {
    let mut args = std::env::args().skip(1);
    let engine = args.next().unwrap_or_else(|| "jit".into());
    let n: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);

    let source = match std::env::var("RPN_COUNT_PROGRAM") {
        Ok(name) => {
            let k: usize = name
                .strip_prefix("example")
                .and_then(|k| k.parse().ok())
                .filter(|k| (1..=5).contains(k))
                .expect("RPN_COUNT_PROGRAM is example1 to example5");
            rpn_vm::examples::EXAMPLES[k - 1].source
        }
        Err(_) => sixteen::RPN,
    };
    let (p, hit, nvars) = rpn_program(source);
    let mut vars = vec![0u32; nvars as usize];
    let mut m = sample_machine();
    let mut interp = Interpreter::new();
    let mut total = 0usize;
    match engine.as_str() {
        "jit" => {
            let native = Compiled::new(&p).expect("compiles");
            if let Ok(path) = std::env::var("RPN_COUNT_DUMP") {
                std::fs::write(&path, native.code()).expect("dump written");
                if let Some(lean) = native.lean_code() {
                    std::fs::write(format!("{path}.lean"), lean).expect("dump written");
                }
            }
            for _ in 0..n {
                total += match black_box(&native)
                    .run(&mut interp, &mut m, &mut vars, hit)
                    .outcome
                {
                    HitOutcome::Logged(r) => r.data.len(),
                    _ => usize::MAX,
                };
            }
        }
        "interp" => {
            for _ in 0..n {
                total += match interp.run(black_box(&p), &mut m, &mut vars, hit).outcome {
                    HitOutcome::Logged(r) => r.data.len(),
                    _ => usize::MAX,
                };
            }
        }
        "rbpf_jit" => {
            let code = sixteen::ebpf_code();
            let mut mem = sixteen::ebpf_mem();
            let jit = sixteen::ebpf_jit(&code);
            for _ in 0..n {
                total += jit.run(black_box(&mut mem)) as usize;
            }
        }
        other => panic!("unknown engine {other}"),
    }
    println!("{engine} {n} {total}");
}
