//! TRCUST's compile of the largest TSF it allows: 65,535 tracepoints, each
//! with a DESC, an FMT, REGS and a MEM32 statement, against an in-memory
//! module and MAP. The goal is under one second.
//!
//! `tdf verify` (issue 13: it was quadratic, 27.8 s and 76.6 s): 65,535
//! tracepoints on a 64 KB object without a MAP, and 8,192 tracepoints over
//! a 1 MB object.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tdf::compile::{ModuleOpenError, ModuleSource, OpenedModule, Options, compile};
use tdf::target::{MemoryImage, Symbol, SymbolTable};

const TRACEPOINTS: u32 = 65_535;

struct Nops;

impl ModuleSource for Nops {
    fn open(&mut self, _: &str) -> Result<OpenedModule, ModuleOpenError> {
        Ok(OpenedModule {
            display: "BIG.DLL".into(),
            image: Box::new(MemoryImage {
                objects: vec![(vec![0; 16], true), (vec![0x90; 0x1_0000], true)],
                sizes: vec![],
                debug: None,
            }),
        })
    }
}

fn tsf() -> String {
    let mut s = String::from("MODNAME=BIG.DLL\nMAJOR=0xC6\nTYPELIST NAME=PRE,ID=1\n");
    for i in 1..=TRACEPOINTS {
        s.push_str(&format!(
            "TRACE MINOR={i}, TP=.code+{}, TYPE=(PRE), DESC=\"tp {i}\", FMT=\"EAX=%D %P%W\",\n      REGS=(EAX,AX), MEM32=(FEBX+ESI+8,INDIRECT*+4,4)\n",
            i - 1
        ));
    }
    s
}

fn bench(c: &mut Criterion) {
    let src = tsf();
    let map = SymbolTable::new(vec![
        Symbol {
            name: "data".into(),
            object: 1,
            offset: 0,
        },
        Symbol {
            name: "code".into(),
            object: 2,
            offset: 0,
        },
    ]);
    let opts = Options::default();
    let mut g = c.benchmark_group("tdf/trcust");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(10))
        .throughput(Throughput::Elements(u64::from(TRACEPOINTS)));
    g.bench_function("compile_65535_tracepoints", |b| {
        b.iter(|| {
            let out = compile(black_box(src.as_bytes()), &opts, Some(&map), &mut Nops);
            let tdf = out.tdf.expect("a TDF");
            assert_eq!(tdf.records.len(), TRACEPOINTS as usize);
            black_box(tdf.to_bytes().len())
        })
    });
    g.finish();
    verify_bench(c);
}

/// A TDF with one tracepoint every `step` bytes of a NOP object.
fn nop_tdf(count: u32, step: u32) -> tdf::Tdf {
    tdf::Tdf {
        records: (0..count)
            .map(|i| tdf::definition::TdfRecord {
                type_mask: 0,
                group: 0,
                object: 1,
                offset: i * step,
                minor: (i + 1) as u16,
                major: 1,
                opcode: 0x90,
                pad: 0,
                rpn: vec![0x00, 0x21, 0x01],
            })
            .collect(),
        ..tdf::Tdf::default()
    }
}

fn verify_bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("tdf/verify");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    for (name, count, size) in [
        ("65535_tracepoints_64k", 65_535u32, 0x1_0000usize),
        ("8192_tracepoints_1m", 8_192, 1 << 20),
    ] {
        let image = MemoryImage {
            objects: vec![(vec![0x90; size], true)],
            sizes: vec![],
            debug: None,
        };
        let tdf = nop_tdf(count, (size as u32 / count).max(1));
        g.throughput(Throughput::Elements(u64::from(count)));
        g.bench_function(name, |b| {
            b.iter(|| {
                let problems = tdf::verify::verify(black_box(&tdf), &image, None);
                assert!(problems.is_empty());
                black_box(problems.len())
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
