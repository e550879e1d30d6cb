//! The host cost of TNF probes. `tnf/writer`: one event of a probe with two
//! `tnf_ulong` arguments (a string one in `writer/string`) written by
//! `TnfWriter`, wrapping a 128 KB file. `tnf/tnf32`: TNF32 (13 probe
//! hits) run to its end with every probe disabled and with every probe
//! recording (process set-up outside the timing); the difference over 13 is
//! an enabled probe's host cost per event, host call included.

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use kernel_sim::tnf::ProbeAction;
use kernel_sim::{ConsoleBuffer, Outcome, Process, ProcessConfig};
use tnf::{ArgType, ArgValue, Endian, ProbeDesc, TnfWriter};

fn probe(args: &[(ArgType, &str)]) -> ProbeDesc {
    ProbeDesc {
        name: "inloop".into(),
        keys: "cookie main loop".into(),
        detail: "sunw%debug in the loop".into(),
        file: "cookie2.c".into(),
        line: 50,
        args: args.iter().map(|(t, n)| (*t, (*n).to_string())).collect(),
        debug: false,
        records: Vec::new(),
    }
}

fn writer(c: &mut Criterion) {
    let mut g = c.benchmark_group("tnf/writer");
    let longs = probe(&[
        (ArgType::ULong, "loop_count"),
        (ArgType::ULong, "total_iterations"),
    ]);
    let string = probe(&[(ArgType::String, "what"), (ArgType::ULong, "n")]);
    let mut w = TnfWriter::new(128 * 1024, Endian::Little).unwrap();
    let mut t = 0i64;
    g.bench_function("event", |b| {
        b.iter(|| {
            t += 800;
            w.event(
                1,
                &longs,
                (1, 1, 1),
                t,
                black_box(&[ArgValue::UInt(3), ArgValue::UInt(11)]),
            )
            .unwrap();
        })
    });
    let args = [
        ArgValue::Str(b"a string of some length".to_vec()),
        ArgValue::UInt(7),
    ];
    g.bench_function("string", |b| {
        b.iter(|| {
            t += 800;
            w.event(2, &string, (1, 1, 1), t, black_box(&args)).unwrap();
        })
    });
    g.finish();
}

fn tnf32(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    testprogs::tnf32().unwrap().write_to(dir.path()).unwrap();
    let setup = |action: ProbeAction| {
        let dir = dir.path().to_path_buf();
        move || {
            let mut p = Process::new(ProcessConfig::new(&dir, "TNF32.EXE")).unwrap();
            let out = ConsoleBuffer::new();
            p.set_console(
                Box::new(out.clone()),
                Box::new(out),
                Box::new(std::io::empty()),
            );
            p.tnf_discover().unwrap();
            for i in 0..p.tnf_probes().len() {
                p.tnf_set_action(i, action);
            }
            p.tnf_start(TnfWriter::new(128 * 1024, Endian::Little).unwrap());
            p
        }
    };
    let mut g = c.benchmark_group("tnf/tnf32");
    for (name, action) in [
        ("disabled", ProbeAction::default()),
        (
            "enabled",
            ProbeAction {
                record: true,
                debug: false,
            },
        ),
    ] {
        g.bench_function(name, |b| {
            b.iter_batched(
                setup(action),
                |mut p| {
                    assert_eq!(p.run(), Outcome::Exited(0));
                    p
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(2));
    targets = writer, tnf32
}
criterion_main!(benches);
