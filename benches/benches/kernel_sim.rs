//! The OS/2 personality: loading a real program (testargv16.exe: a
//! 14 KB NE with 150 fixups), running it to its DosExit, and the cost of
//! one host-call API (DosGetVersion in a guest loop; throughput elements
//! are API calls), with nobody recording the always-on trace table and
//! with CPTRAP recording every entry; and the table's own cost per entry
//! (`trace_table/record`), to set beside an API call's.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kernel_sim::{Outcome, Process, ProcessConfig};
use loader::{Address, Module, SourceKind, Target};
use std::hint::black_box;

const CALLS: u16 = 1000;

/// A 16-bit program: CX times DosGetVersion(DS:0x100), then DosExit(1, 0).
fn api_loop() -> Vec<u8> {
    let [lo, hi] = CALLS.to_le_bytes();
    let mut c = vec![0xB9, lo, hi]; // mov cx,CALLS
    c.extend([0x51, 0x1E, 0x68, 0x00, 0x01]); // top: push cx ; push ds ; push 0x100
    c.extend([0x9A, 0, 0, 0, 0]); // 8: call far DosGetVersion
    c.extend([0x59, 0xE2, 0xF3]); // 13: pop cx ; loop top (3)
    c.extend([0x68, 0x01, 0x00, 0x68, 0x00, 0x00]);
    c.extend([0x9A, 0, 0, 0, 0]); // 22: call far DosExit
    let mut m = Module::new_ne("APILOOP");
    m.add_object(0x0C00, c.len() as u32, &c);
    m.add_object(0x0C01, 0x200, &[]);
    m.start = Some(Address {
        object: 1,
        offset: 0,
    });
    m.stack = Some(Address {
        object: 2,
        offset: 0,
    });
    m.auto_data = Some(2);
    m.stack_size = 0x400;
    let d = m.import_module("DOSCALLS");
    for (at, ordinal) in [(9, 92), (23, 5)] {
        m.add_fixup(
            1,
            at,
            SourceKind::Ptr1616,
            Target::ImportOrdinal { module: d, ordinal },
        );
    }
    loader::write(&m).unwrap()
}

fn quiet(cfg: ProcessConfig) -> Process {
    let mut p = Process::new(cfg).unwrap();
    p.set_console(
        Box::new(std::io::sink()),
        Box::new(std::io::sink()),
        Box::new(std::io::empty()),
    );
    p
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/samples/ne/testargv16.exe"
    );
    std::fs::copy(sample, dir.path().join("TESTARGV.EXE")).unwrap();
    std::fs::write(dir.path().join("APILOOP.EXE"), api_loop()).unwrap();
    let mut argv = ProcessConfig::new(dir.path(), "TESTARGV.EXE");
    argv.args = vec!["one".into(), "two".into()];
    let apis = ProcessConfig::new(dir.path(), "APILOOP.EXE");

    let mut g = c.benchmark_group("kernel_sim");
    g.sample_size(20);
    g.bench_function("load/testargv16", |b| {
        b.iter(|| black_box(quiet(argv.clone())))
    });
    g.bench_function("load_and_run/testargv16", |b| {
        b.iter(|| {
            let mut p = quiet(argv.clone());
            assert_eq!(p.run(), Outcome::Exited(0));
        })
    });
    g.throughput(Throughput::Elements(u64::from(CALLS)));
    g.bench_function("api_calls/DosGetVersion", |b| {
        b.iter(|| {
            let mut p = quiet(apis.clone());
            assert_eq!(p.run(), Outcome::Exited(0));
        })
    });
    g.bench_function("api_calls/DosGetVersion+cptrap", |b| {
        b.iter(|| {
            let mut p = quiet(apis.clone());
            let all = cptrap::Selection::all();
            p.cptrap_start(&kernel_sim::systable::CptrapConfig::new(all))
                .unwrap();
            assert_eq!(p.run(), Outcome::Exited(0));
            black_box(p.cptrap_finish())
        })
    });
    g.bench_function("trace_table/record", |b| {
        let mut table = cptrap::TraceTable::new(kernel_sim::systable::TABLE_ENTRIES);
        let entry = cptrap::Entry::api_call("DOSCALLS", 92, 0, 0x0007_0010);
        b.iter(|| {
            for _ in 0..CALLS {
                table.record(black_box(&entry));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
