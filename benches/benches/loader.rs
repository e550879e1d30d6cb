//! Module loading costs: sample modules parsed per second (LX and NE, with
//! page decoding and fixup records), modules written per second, and
//! EXEPACK1/EXEPACK2 pages encoded and decoded per second. Throughput is in
//! bytes of input (parse) or of page (EXEPACK), so criterion reports MB/s.
//! Inputs are built outside the timed closures; each iteration checks its
//! result.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use loader::{exepack1, exepack2};

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/samples");

fn sample(path: &str) -> Vec<u8> {
    std::fs::read(format!("{SAMPLES}/{path}")).expect("sample module")
}

fn parse(c: &mut Criterion) {
    let mut g = c.benchmark_group("loader/parse");
    for path in ["lx/testpm.exe", "ne/testargv16.exe"] {
        let bytes = sample(path);
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_function(path, |b| {
            b.iter(|| {
                let m = loader::parse(black_box(&bytes)).expect("parses");
                assert!(!m.fixups.is_empty());
                m
            })
        });
    }
    g.finish();
}

fn write(c: &mut Criterion) {
    let mut g = c.benchmark_group("loader/write");
    for path in ["lx/testpm.exe", "ne/testargv16.exe"] {
        let m = loader::parse(&sample(path)).expect("parses");
        g.bench_function(path, |b| {
            b.iter(|| loader::write(black_box(&m)).expect("writes"))
        });
    }
    g.finish();
}

/// A 4 KiB page that looks like code and data: the code object of testpm
/// padded with its own start.
fn page() -> Vec<u8> {
    let m = loader::parse(&sample("lx/testpm.exe")).expect("parses");
    let mut p = m.objects[0].pages[0].data.clone();
    p.resize(4096, 0);
    p
}

fn exepack(c: &mut Criterion) {
    let page = page();
    let packed1 = exepack1::encode(&page, 2048);
    let packed2 = exepack2::encode(&page);
    let mut g = c.benchmark_group("loader/exepack");
    g.throughput(Throughput::Bytes(page.len() as u64));
    g.bench_function("exepack1/encode", |b| {
        b.iter(|| exepack1::encode(black_box(&page), 2048))
    });
    g.bench_function("exepack1/decode", |b| {
        b.iter(|| {
            assert_eq!(
                exepack1::decode(black_box(&packed1), 0, 4096)
                    .expect("decodes")
                    .len(),
                4096
            )
        })
    });
    g.bench_function("exepack2/encode", |b| {
        b.iter(|| exepack2::encode(black_box(&page)))
    });
    g.bench_function("exepack2/decode", |b| {
        b.iter(|| {
            assert_eq!(
                exepack2::decode(black_box(&packed2), 0, 4096)
                    .expect("decodes")
                    .len(),
                4096
            )
        })
    });
    g.finish();
}

criterion_group!(benches, parse, write, exepack);
criterion_main!(benches);
