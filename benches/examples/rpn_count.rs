//! A harness for counting host instructions per hit of the `rpn` bench's
//! sixteen-instruction program under `valgrind --tool=callgrind`:
//! `rpn_count ENGINE N` runs `N` hits with ENGINE (`jit`, `interp` or
//! `rbpf_jit`). The count per hit is the difference between two runs with
//! different `N`, divided by the difference of the `N`s (the setup cancels).
//! With `RPN_COUNT_PROGRAM=exampleK` (K from 1 to 5), `jit` and `interp`
//! run the seed's example K on the sample machine instead.
//!
//! Build: `cargo build --profile bench -p benches --example rpn_count`.

use rpn_vm::examples::sample_machine;
use rpn_vm::jit::Compiled;
use rpn_vm::{Hit, HitOutcome, Interpreter, parse};
use std::hint::black_box;

const SIXTEEN: &str = "vars=2\nmajor=0xC8\nminor=0x10\n\
    Push EAX\nPush W,0x100\nSub\nJmp ZN,skip\nInc V,0\nskip: Pop N,1\nPush V,0\nPush EBX\nAdd\n\
    Move V,1\nPush ESI\nPush EDI\nPush ECX\nPush EDX\nLog DN,4\nLog WN,1\n";

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

mod ebpf {
    //! The one place that runs rbpf's JIT output.
    #![allow(unsafe_code)]

    /// Runs the JIT-compiled program over `mem` (r1 = `mem`).
    #[inline(never)]
    pub fn run_jit<'m>(vm: &rbpf::EbpfVmRaw<'m>, mem: &'m mut [u8]) -> u64 {
        // SAFETY: the program is fixed, was checked by rbpf's verifier and
        // reads only the 72 bytes of `mem` and writes only its own stack.
        unsafe { vm.execute_program_jit(mem).expect("jit run") }
    }
}

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
        Err(_) => SIXTEEN,
    };
    let file = parse("bench.rpn", source).expect("assembles");
    let tp = &file.tracepoints[0];
    let hit = Hit {
        major: 0xC8,
        minor: tp.minor,
        logmax: file.header.logmax() as usize,
    };
    let p = tp.program.clone();
    let mut vars = vec![0u32; file.header.vars() as usize];
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
            let code = rbpf::assembler::assemble(SIXTEEN_EBPF).expect("eBPF assembles");
            let mut mem = vec![0u8; 72];
            mem[0..4].copy_from_slice(&0x1234u32.to_le_bytes());
            mem[12..16].copy_from_slice(&0xABCDu32.to_le_bytes());
            let mut jit = rbpf::EbpfVmRaw::new(Some(&code)).expect("eBPF verifies");
            jit.jit_compile().expect("eBPF compiles");
            for _ in 0..n {
                total += ebpf::run_jit(&jit, black_box(&mut mem)) as usize;
            }
        }
        other => panic!("unknown engine {other}"),
    }
    println!("{engine} {n} {total}");
}
