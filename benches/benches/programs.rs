//! Whole runs of real programs with emu's native tier off (`interp`) and on
//! (`jit`): every testprogs program that runs on its own (the EXEs; the
//! DLLs are there for them), loaded by kernel_sim from a directory that
//! holds them all and run to its exit, console to a sink. Throughput is
//! the guest instructions of one run, so the elements/s read as
//! instructions per second. Nothing external is needed.
//!
//! Not here yet: IBM's TRCUST.EXE on a corpus TSF (issue 18, item 5),
//! which needs OS2TK_DIR.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kernel_sim::{Outcome, Process, ProcessConfig};
use std::path::Path;

/// Load `file` from `dir` with the native tier on or off.
fn process(dir: &Path, file: &str, jit: bool) -> Process {
    let mut p = Process::new(ProcessConfig::new(dir, file)).expect("load");
    p.set_console(
        Box::new(std::io::sink()),
        Box::new(std::io::sink()),
        Box::new(std::io::empty()),
    );
    p.machine_mut().set_jit(jit);
    p
}

/// Run to the end; the guest instructions it took.
fn run(mut p: Process) -> u64 {
    let outcome = p.run();
    assert!(
        matches!(outcome, Outcome::Exited(_)),
        "did not exit: {outcome:?}"
    );
    p.machine().instructions()
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    testprogs::build_all(dir.path()).expect("testprogs");
    let mut g = c.benchmark_group("programs");
    g.sample_size(10);
    for program in testprogs::all().expect("testprogs") {
        let file = program.file_name;
        if !file.ends_with(".EXE") {
            continue;
        }
        // The same instruction count either way, or the tier is wrong.
        let n = run(process(dir.path(), file, false));
        assert_eq!(run(process(dir.path(), file, true)), n, "{file}");
        g.throughput(Throughput::Elements(n));
        for (tier, jit) in [("interp", false), ("jit", true)] {
            g.bench_function(format!("{tier}/{}", program.name), |b| {
                b.iter(|| run(process(dir.path(), file, jit)))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
