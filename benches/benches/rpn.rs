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

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rpn_vm::examples::{EXAMPLES, sample_machine};
use rpn_vm::jit::Compiled;
use rpn_vm::{Hit, HitOutcome, Interpreter, Program, parse};
use std::hint::black_box;

const SIXTEEN: &str = "vars=2\nmajor=0xC8\nminor=0x10\n\
    Push EAX\nPush W,0x100\nSub\nJmp ZN,skip\nInc V,0\nskip: Pop N,1\nPush V,0\nPush EBX\nAdd\n\
    Move V,1\nPush ESI\nPush EDI\nPush ECX\nPush EDX\nLog DN,4\nLog WN,1\n";

/// The same work in eBPF: r1 points at the registers (EAX at 0, ECX 4, EDX 8,
/// EBX 12, ESI 24, EDI 28) and the variables (64, 68); the log and the
/// variable stores go to the eBPF stack.
const SIXTEEN_EBPF: &str = "
    ldxw r2, [r1+0]
    sub32 r2, 0x100
    ldxw r3, [r1+64]
    jeq r2, 0, +1
    add32 r3, 1
    stxw [r10-16], r3
    ldxw r4, [r1+12]
    add32 r4, r3
    stxw [r10-12], r4
    ldxw r5, [r1+24]
    ldxw r6, [r1+28]
    ldxw r7, [r1+4]
    ldxw r8, [r1+8]
    stxw [r10-64], r8
    stxw [r10-60], r7
    stxw [r10-56], r6
    stxw [r10-52], r5
    stxh [r10-48], r4
    mov r0, 18
    exit
";

fn program(src: &str) -> (Program, Hit, u32) {
    let file = parse("bench.rpn", src).expect("benchmark program assembles");
    let tp = &file.tracepoints[0];
    let hit = Hit {
        major: 0xC8,
        minor: tp.minor,
        logmax: file.header.logmax() as usize,
    };
    (tp.program.clone(), hit, file.header.vars())
}

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
        let (p, hit, _) = program(example.source);
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

mod ebpf {
    //! The one place that runs rbpf's JIT output.
    #![allow(unsafe_code)]

    /// Runs the JIT-compiled program over `mem` (r1 = `mem`).
    pub fn run_jit<'m>(vm: &rbpf::EbpfVmRaw<'m>, mem: &'m mut [u8]) -> u64 {
        // SAFETY: the program is fixed, was run through rbpf's verifier and
        // interpreter (which checks every access) before being compiled, and
        // reads only the 72 bytes of `mem` and writes only its own stack.
        unsafe { vm.execute_program_jit(mem).expect("jit run") }
    }
}

fn sixteen(c: &mut Criterion) {
    let (p, hit, nvars) = program(SIXTEEN);
    assert_eq!(p.len(), 16);
    let mut m = sample_machine();
    let mut vars = vec![0u32; nvars as usize];
    let mut interp = Interpreter::new();

    let code = rbpf::assembler::assemble(SIXTEEN_EBPF).expect("eBPF assembles");
    let mut mem = vec![0u8; 72];
    mem[0..4].copy_from_slice(&0x1234u32.to_le_bytes());
    mem[12..16].copy_from_slice(&0xABCDu32.to_le_bytes());
    let vm = rbpf::EbpfVmMbuff::new(Some(&code)).expect("eBPF verifies");
    assert_eq!(vm.execute_program(&mem, &[]).expect("eBPF runs"), 18);
    let mut jit = rbpf::EbpfVmRaw::new(Some(&code)).expect("eBPF verifies");
    jit.jit_compile().expect("eBPF compiles");
    assert_eq!(ebpf::run_jit(&jit, &mut mem), 18);

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
    group.bench_function("rbpf_jit", |b| {
        b.iter(|| ebpf::run_jit(&jit, black_box(&mut mem)))
    });
    group.finish();
}

mod cpu {
    //! The one place that asks the kernel for the thread's CPU time.
    #![allow(unsafe_code)]

    use std::time::Duration;

    /// CPU time the calling thread has used.
    pub fn now() -> Duration {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec for the duration of
        // the call; CLOCK_THREAD_CPUTIME_ID needs nothing else.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
        Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    }
}

/// `sixteen`'s native tiers in thread CPU time.
fn sixteen_cpu(c: &mut Criterion) {
    let (p, hit, nvars) = program(SIXTEEN);
    let mut m = sample_machine();
    let mut vars = vec![0u32; nvars as usize];
    let mut interp = Interpreter::new();
    let code = rbpf::assembler::assemble(SIXTEEN_EBPF).expect("eBPF assembles");
    let mut mem = vec![0u8; 72];
    mem[0..4].copy_from_slice(&0x1234u32.to_le_bytes());
    mem[12..16].copy_from_slice(&0xABCDu32.to_le_bytes());
    let mut jit = rbpf::EbpfVmRaw::new(Some(&code)).expect("eBPF verifies");
    jit.jit_compile().expect("eBPF compiles");
    assert_eq!(ebpf::run_jit(&jit, &mut mem), 18);
    let native = Compiled::new(&p).expect("the sixteen program compiles");

    let mut group = c.benchmark_group("rpn/sixteen_cpu");
    group.throughput(Throughput::Elements(16));
    group.bench_function("rpn_vm_jit", |b| {
        b.iter_custom(|iters| {
            let t = cpu::now();
            for _ in 0..iters {
                let n = logged_len_jit(&mut interp, black_box(&native), &mut m, &mut vars, hit);
                assert_eq!(n, 18);
            }
            cpu::now().saturating_sub(t)
        })
    });
    group.bench_function("rbpf_jit", |b| {
        b.iter_custom(|iters| {
            let t = cpu::now();
            for _ in 0..iters {
                black_box(ebpf::run_jit(&jit, black_box(&mut mem)));
            }
            cpu::now().saturating_sub(t)
        })
    });
    group.finish();
}

fn memory(c: &mut Criterion) {
    let mut group = c.benchmark_group("rpn/memory");
    let mut interp = Interpreter::new();
    let (log64, hit, _) = program("major=0xC8\nminor=1\nPush W,64\nPush D,0x20040\nLog MRF\n");
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
        program("major=0xC8\nminor=2\nPush W,16\nPush W,0x33\nPush W,0x10\nLog MRS\n");
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
