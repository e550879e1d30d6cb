//! Whole runs of real programs with emu's native tier off (`interp`) and on
//! (`jit`): every testprogs program that runs on its own (the EXEs; the
//! DLLs are there for them), loaded by kernel_sim from a directory that
//! holds them all and run to its exit, console to a sink. Throughput is
//! the guest instructions of one run, so the elements/s read as
//! instructions per second. Nothing external is needed.
//!
//! A run is timed from `Process::new` to its exit: loading and running.
//! The process is dropped after the clock stops, because its teardown
//! can wait on the host file system, which neither tier touches: it
//! removed the host directory of the system's programs (`C:\OS2`), about
//! 3 ms of a 3.5 ms HELLO16 run on a busy file system. That directory is
//! now made only when a run reaches `C:\OS2`, which no testprogs program
//! does, so neither its making nor its removal is in these runs. FILEIO16
//! and FILEIO32 replace a host file each run, and their times follow the
//! host's disk.
//!
//! Most testprogs programs run a few dozen instructions, far below the
//! tier's heat threshold: with them the two tiers must take the same time
//! (the tier costs nothing until code is hot); LOOP16 and LOOP32 get hot.
//! With OS2TK_DIR set, group `trcust` runs IBM's TRCUST.EXE the same two
//! ways: on the largest TSF of the TRCUST corpus (../shared/formats), and
//! on a generated TSF of 5,000 tracepoints over a generated module of
//! 8 KB of code (each tracepoint a byte further, each with a FMT and a
//! register). Without OS2TK_DIR the group says it is skipped.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kernel_sim::{Outcome, Process, ProcessConfig};
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Load `file` from `dir` with `args`, the native tier on or off.
fn process_with(dir: &Path, file: &str, args: &[String], jit: bool) -> Process {
    let mut cfg = ProcessConfig::new(dir, file);
    cfg.args = args.to_vec();
    let mut p = Process::new(cfg).expect("load");
    p.set_console(
        Box::new(std::io::sink()),
        Box::new(std::io::sink()),
        Box::new(std::io::empty()),
    );
    p.machine_mut().set_jit(jit);
    p
}

/// Load `file` from `dir` with the native tier on or off.
fn process(dir: &Path, file: &str, jit: bool) -> Process {
    process_with(dir, file, &[], jit)
}

/// Run to the end; the guest instructions it took.
fn run(p: Process) -> u64 {
    finish(p).1
}

/// Run to the end: the process (to drop) and the guest instructions it
/// took.
fn finish(mut p: Process) -> (Process, u64) {
    let outcome = p.run();
    assert!(
        matches!(outcome, Outcome::Exited(_)),
        "did not exit: {outcome:?}"
    );
    let n = p.machine().instructions();
    (p, n)
}

/// Time `iters` whole runs (load and run, see the crate doc) of the
/// processes `make` loads; each is dropped after its clock stops.
fn timed(iters: u64, mut make: impl FnMut() -> Process) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let start = Instant::now();
        let (p, n) = finish(make());
        total += start.elapsed();
        black_box(n);
        drop(p);
    }
    total
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
                b.iter_custom(|iters| timed(iters, || process(dir.path(), file, jit)))
            });
        }
    }
    g.finish();
}

/// How many tracepoints the generated TSF defines.
const GENERATED_TRACEPOINTS: u32 = 5_000;

/// GEN5K.EXE (an LX module: 8 KB of NOPs then RET as object 1, data as
/// object 2), its MAP, and GEN5K.TSF with a tracepoint on every one of the
/// first [`GENERATED_TRACEPOINTS`] bytes, written into `dir`.
fn write_generated_case(dir: &Path) {
    const CODE_BYTES: u32 = 0x2000;
    let mut code = vec![0x90u8; CODE_BYTES as usize - 1];
    code.push(0xC3);
    let mut m = loader::Module::new_lx("GEN5K");
    m.add_object(0x2005, CODE_BYTES, &code);
    m.add_object(0x2003, 0x1000, &[]);
    m.start = Some(loader::Address {
        object: 1,
        offset: 0,
    });
    m.stack = Some(loader::Address {
        object: 2,
        offset: 0x1000,
    });
    m.stack_size = 0x1000;
    std::fs::write(dir.join("GEN5K.EXE"), loader::write(&m).expect("LX")).expect("write");
    let map = "\r\n Start         Length     Name                   Class\r\n \
        0001:00000000 000002000H CODE32                 CODE\r\n \
        0002:00000000 000001000H DATA32                 DATA\r\n\r\n  \
        Address         Publics by Name\r\n\r\n 0001:00000000       startup\r\n\r\n  \
        Address         Publics by Value\r\n\r\n 0001:00000000       startup\r\n\r\n\
        Program entry point at 0001:00000000\r\n";
    std::fs::write(dir.join("GEN5K.MAP"), map).expect("write");
    let mut tsf = String::from("MODNAME=GEN5K.EXE\r\nMAJOR=0xC6\r\n");
    for i in 0..GENERATED_TRACEPOINTS {
        let _ = write!(
            tsf,
            "TRACE MINOR={}, TP=.startup+{i}, DESC=\"tp {i}\", FMT=\"EAX=%D\", REGS=(EAX)\r\n",
            i + 1
        );
    }
    std::fs::write(dir.join("GEN5K.TSF"), tsf).expect("write");
}

/// The corpus case whose TSF is the largest: its directory.
fn largest_corpus_case() -> PathBuf {
    let corpus = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/formats/trcust-corpus"
    ));
    let size = |case: &Path| -> u64 {
        std::fs::read_dir(case.join("in"))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".TSF"))
            .map(|e| e.metadata().map_or(0, |m| m.len()))
            .sum()
    };
    let mut cases: Vec<PathBuf> = std::fs::read_dir(corpus)
        .expect("the TRCUST corpus in ../shared")
        .flatten()
        .map(|e| e.path())
        .collect();
    cases.sort();
    cases.into_iter().max_by_key(|c| size(c)).expect("a case")
}

/// Copies a corpus case's inputs and modules into `dir`: its arguments.
fn write_corpus_case(case: &Path, dir: &Path) -> Vec<String> {
    for e in std::fs::read_dir(case.join("in")).expect("in/").flatten() {
        std::fs::copy(e.path(), dir.join(e.file_name())).expect("copy");
    }
    let modules = std::fs::read_to_string(case.join("modules")).unwrap_or_default();
    for m in modules.split_whitespace() {
        let bytes = if m == "HELLO.EXE" {
            std::fs::read(case.join("../../../samples/lx/hello.exe")).expect("hello.exe")
        } else {
            testprogs::all()
                .expect("testprogs")
                .into_iter()
                .chain(testprogs::debug_programs().expect("testprogs"))
                .find(|p| p.file_name.eq_ignore_ascii_case(m))
                .expect("a testprogs module")
                .bytes
        };
        std::fs::write(dir.join(m), bytes).expect("write");
    }
    std::fs::read_to_string(case.join("args"))
        .expect("args")
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// IBM's TRCUST.EXE on the largest corpus TSF and on the generated one,
/// with the tier off and on. Each run writes a TDF and a TFF into its
/// directory (overwritten by the next), so every run does the same work.
fn bench_trcust(c: &mut Criterion) {
    let Some(toolkit) = std::env::var_os("OS2TK_DIR") else {
        println!("trcust: skipped, OS2TK_DIR is not set (IBM's TRCUST.EXE is not here)");
        return;
    };
    let exe = Path::new(&toolkit).join("bin/trcust.exe");
    let mut g = c.benchmark_group("trcust");
    g.sample_size(10);
    let corpus_dir = tempfile::tempdir().expect("temp dir");
    let case = largest_corpus_case();
    let corpus_args = write_corpus_case(&case, corpus_dir.path());
    let generated_dir = tempfile::tempdir().expect("temp dir");
    write_generated_case(generated_dir.path());
    let generated_args: Vec<String> = ["GEN5K.TSF", "/M=GEN5K.MAP"].map(String::from).to_vec();
    let name = case.file_name().expect("a name").to_string_lossy();
    for (what, dir, args) in [
        (format!("corpus_{name}"), corpus_dir.path(), &corpus_args),
        (
            "generated_5000".to_string(),
            generated_dir.path(),
            &generated_args,
        ),
    ] {
        std::fs::copy(&exe, dir.join("TRCUST.EXE")).expect("copy TRCUST.EXE");
        // A first run writes the TDF and TFF; the runs after it replace
        // them, which takes a few instructions more, and are all alike.
        run(process_with(dir, "TRCUST.EXE", args, false));
        let n = run(process_with(dir, "TRCUST.EXE", args, false));
        assert_eq!(
            run(process_with(dir, "TRCUST.EXE", args, true)),
            n,
            "{what}"
        );
        g.throughput(Throughput::Elements(n));
        for (tier, jit) in [("interp", false), ("jit", true)] {
            g.bench_function(format!("{tier}/{what}"), |b| {
                b.iter_custom(|iters| timed(iters, || process_with(dir, "TRCUST.EXE", args, jit)))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench, bench_trcust);
criterion_main!(benches);
