//! RPN interpretation cost, with rbpf (interpreter and JIT) on an
//! equivalent eBPF program in the same run, so the ratio can be read side
//! by side.
//!
//! Groups: the five examples of warp-debug-dtrace.txt §1.7, interpreted
//! and native (`rpn_vm::jit`); a 16-instruction program with a conditional
//! jump and variable updates (interpreted and native, against rbpf's
//! interpreter and JIT); a 64-byte memory log; a faulting read. Throughput is
//! set to the number of RPN instructions executed, so criterion's
//! elements/s give the time per instruction.
//!
//! `sixteen_cpu` runs the two native tiers of `sixteen` again, timed in
//! the CPU time of the benchmarking thread rather than wall time (as the
//! `trace` bench is): on a shared machine, wall time counts other
//! processes' turns, and the two sides of the ratio are timed at
//! different moments.

use benches::host::thread_cpu_time;
use benches::sixteen::{self, rpn_program};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rpn_vm::examples::{EXAMPLES, sample_machine};
use rpn_vm::jit::Compiled;
use rpn_vm::{Hit, HitOutcome, Interpreter, Program};
use std::hint::black_box;

fn logged_len(
    interp: &mut Interpreter,
    p: &Program,
    m: &mut rpn_vm::FakeMachine,
    vars: &mut [u32],
    hit: Hit,
) -> usize {
    match interp.run(p, m, vars, hit).outcome {
        HitOutcome::Logged(r) => r.data.len(),
        _ => usize::MAX,
    }
}

/// As [`logged_len`], run by the native-code tier.
fn logged_len_jit(
    interp: &mut Interpreter,
    p: &Compiled,
    m: &mut rpn_vm::FakeMachine,
    vars: &mut [u32],
    hit: Hit,
) -> usize {
    match p.run(interp, m, vars, hit).outcome {
        HitOutcome::Logged(r) => r.data.len(),
        _ => usize::MAX,
    }
}

fn examples(c: &mut Criterion) {
    let mut group = c.benchmark_group("rpn/examples");
    let mut interp = Interpreter::new();
    for (i, example) in EXAMPLES.iter().enumerate() {
        let (p, hit, _) = rpn_program(example.source);
        let mut m = sample_machine();
        group.throughput(Throughput::Elements(p.len() as u64));
        group.bench_function(format!("example{}", i + 1), |b| {
            b.iter(|| {
                let n = logged_len(&mut interp, black_box(&p), &mut m, &mut [], hit);
                assert!(n > 0);
                n
            })
        });
        if let Some(native) = Compiled::new(&p) {
            group.bench_function(format!("example{}_jit", i + 1), |b| {
                b.iter(|| {
                    let n = logged_len_jit(&mut interp, black_box(&native), &mut m, &mut [], hit);
                    assert!(n > 0);
                    n
                })
            });
        }
    }
    group.finish();
}

fn sixteen(c: &mut Criterion) {
    let (p, hit, nvars) = rpn_program(sixteen::RPN);
    assert_eq!(p.len(), 16);
    let mut m = sample_machine();
    let mut vars = vec![0u32; nvars as usize];
    let mut interp = Interpreter::new();

    let code = sixteen::ebpf_code();
    let mut mem = sixteen::ebpf_mem();
    let vm = sixteen::ebpf_interpreter(&code);
    let jit = sixteen::ebpf_jit(&code);

    let native = Compiled::new(&p).expect("the sixteen program compiles");

    let mut group = c.benchmark_group("rpn/sixteen");
    group.throughput(Throughput::Elements(16));
    group.bench_function("rpn_vm", |b| {
        b.iter(|| {
            let n = logged_len(&mut interp, black_box(&p), &mut m, &mut vars, hit);
            assert_eq!(n, 18);
            n
        })
    });
    group.bench_function("rpn_vm_jit", |b| {
        b.iter(|| {
            let n = logged_len_jit(&mut interp, black_box(&native), &mut m, &mut vars, hit);
            assert_eq!(n, 18);
            n
        })
    });
    group.bench_function("rbpf_interpreter", |b| {
        b.iter(|| vm.execute_program(black_box(&mem), &[]).expect("runs"))
    });
    group.bench_function("rbpf_jit", |b| b.iter(|| jit.run(black_box(&mut mem))));
    group.finish();
}

/// `sixteen`'s native tiers in thread CPU time.
fn sixteen_cpu(c: &mut Criterion) {
    let (p, hit, nvars) = rpn_program(sixteen::RPN);
    let mut m = sample_machine();
    let mut vars = vec![0u32; nvars as usize];
    let mut interp = Interpreter::new();
    let code = sixteen::ebpf_code();
    let mut mem = sixteen::ebpf_mem();
    let jit = sixteen::ebpf_jit(&code);
    let native = Compiled::new(&p).expect("the sixteen program compiles");

    let mut group = c.benchmark_group("rpn/sixteen_cpu");
    group.throughput(Throughput::Elements(16));
    group.bench_function("rpn_vm_jit", |b| {
        b.iter_custom(|iters| {
            let t = thread_cpu_time();
            for _ in 0..iters {
                let n = logged_len_jit(&mut interp, black_box(&native), &mut m, &mut vars, hit);
                assert_eq!(n, 18);
            }
            thread_cpu_time().saturating_sub(t)
        })
    });
    group.bench_function("rbpf_jit", |b| {
        b.iter_custom(|iters| {
            let t = thread_cpu_time();
            for _ in 0..iters {
                black_box(jit.run(black_box(&mut mem)));
            }
            thread_cpu_time().saturating_sub(t)
        })
    });
    group.finish();
}

fn memory(c: &mut Criterion) {
    let mut group = c.benchmark_group("rpn/memory");
    let mut interp = Interpreter::new();
    let (log64, hit, _) = rpn_program("major=0xC8\nminor=1\nPush W,64\nPush D,0x20040\nLog MRF\n");
    let mut m = sample_machine();
    group.throughput(Throughput::Elements(log64.len() as u64));
    group.bench_function("log64", |b| {
        b.iter(|| {
            let n = logged_len(&mut interp, black_box(&log64), &mut m, &mut [], hit);
            assert_eq!(n, 67);
            n
        })
    });
    let (fault, hit, _) =
        rpn_program("major=0xC8\nminor=2\nPush W,16\nPush W,0x33\nPush W,0x10\nLog MRS\n");
    group.throughput(Throughput::Elements(fault.len() as u64));
    group.bench_function("faulting_read", |b| {
        b.iter(|| {
            let n = logged_len(&mut interp, black_box(&fault), &mut m, &mut [], hit);
            assert_eq!(n, 7);
            n
        })
    });
    group.finish();
}

criterion_group!(benches, examples, sixteen, sixteen_cpu, memory);
criterion_main!(benches);
