//! Tracepoint hits: what a hit costs in host time, and what a tracepoint
//! that is never reached costs (nothing, ideally).
//!
//! The workload is LOOP32.EXE (testprogs) with its loop count raised from
//! 1,000 to 1,000,000 (the dword in its data object): a call of `Step(i)`
//! per iteration. Four runs of the whole process, each in the same
//! criterion group:
//! * `untraced`: no tracepoint;
//! * `tsf_step`: the `Step` tracepoint of LOOP32.TSF compiled by TRCUST
//!   (`TRACE ON LOOP32(1)`): a memory log of the argument, 1,000,000 hits;
//! * `apply10`: a DTRACE APPLY program of 10 instructions at `Step`;
//! * `on_elsewhere`: a tracepoint ON at an instruction of the same page
//!   that the loop never reaches.
//!
//! Only the run is timed (loading the process and applying are not), in
//! CPU time of the running thread: the machine is shared, and wall time
//! would count other processes' turns. After
//! the group it prints host ns per hit, (traced − untraced) / hits, from the
//! medians of this same run, and the untraced-overhead ratio
//! `on_elsewhere / untraced`. A bench, never a timed test.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use benches::host::thread_cpu_time;
use criterion::{Criterion, criterion_group, criterion_main};
use kernel_sim::trace::Selection;
use kernel_sim::{Outcome, Process, ProcessConfig};
use stda::StdaFormat;

const ITERATIONS: u32 = 1_000_000;

/// The trace program of `apply10`: 10 instructions at `Step` (offset 0x2F).
const APPLY10: &str = "major=0xCE\nname=LOOP32.EXE\nvars=1\nminor=1\nobject=1\noffset=0x2F\nopcode=0x8B\n\
    Push EAX\nPush EBX\nAdd\nPush ECX\nPush EDX\nPush ESI\nPush EDI\nPush EBP\nLog DN,6\nInc V,0\n";

/// A tracepoint at `xor eax,eax` (0x1E), on the success path the loop's
/// wrong sum (1,000,000 iterations overflow the check) never takes.
const NEVER: &str = "major=0xCE\nname=LOOP32.EXE\nminor=3\nobject=1\noffset=0x1E\nopcode=0x31\nPush EAX\nLog DN,1\n";

/// Writes LOOP32 with its count raised, its TSF compiled, and the two
/// trace programs into `dir`.
fn prepare(dir: &Path) {
    let p = testprogs::loop32().expect("LOOP32 builds");
    p.write_to(dir).expect("LOOP32 written");
    let exe = dir.join("LOOP32.EXE");
    let mut bytes = std::fs::read(&exe).unwrap();
    let old = testprogs::loops::LOOP32_COUNT.to_le_bytes();
    let at: Vec<usize> = bytes
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == old)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(at.len(), 1, "one dword {:?} in LOOP32.EXE", old);
    bytes[at[0]..at[0] + 4].copy_from_slice(&ITERATIONS.to_le_bytes());
    std::fs::write(&exe, bytes).unwrap();
    let args = ["LOOP32.TSF".to_string(), "/M=LOOP32.MAP".to_string()];
    let out = tdf::trcust::run(&args, dir, tdf::trcust::PathStyle::Host);
    assert_eq!(out.exit_code, 0, "{}", out.text());
    std::fs::write(dir.join("APPLY10.RPN"), APPLY10).unwrap();
    std::fs::write(dir.join("NEVER.RPN"), NEVER).unwrap();
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    Untraced,
    TsfStep,
    Apply10,
    OnElsewhere,
}

/// A loaded process with its tracing applied, ready to run.
fn setup(dir: &Path, v: Variant) -> Process {
    let mut p = Process::new(ProcessConfig::new(dir, "LOOP32.EXE")).unwrap();
    p.set_console(
        Box::new(std::io::sink()),
        Box::new(std::io::sink()),
        Box::new(std::io::empty()),
    );
    let program = |name: &str| {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        rpn_vm::parse(name, &text).unwrap()
    };
    if v != Variant::Untraced {
        p.trace_start(StdaFormat::New, 63).unwrap();
    }
    match v {
        Variant::Untraced => {}
        Variant::TsfStep => {
            let tdf = tdf::Tdf::parse(&std::fs::read(dir.join("LOOP32.TDF")).unwrap()).unwrap();
            let sel = Selection::parse("1", &tdf).unwrap();
            p.trace_on(&tdf, &sel, None).unwrap();
        }
        Variant::Apply10 => {
            p.trace_apply("LOOP32", &program("APPLY10.RPN"), None, None)
                .unwrap();
        }
        Variant::OnElsewhere => {
            p.trace_apply("LOOP32", &program("NEVER.RPN"), None, None)
                .unwrap();
        }
    }
    p
}

/// Runs to the end; returns the tracepoint hits.
fn run(p: &mut Process) -> u64 {
    // The sum check fails with the raised count: exit code 1.
    assert_eq!(p.run(), Outcome::Exited(1));
    p.system_trace().map_or(0, |s| {
        s.runtime().dtos()[0]
            .tracepoints
            .iter()
            .map(|t| t.hits)
            .sum()
    })
}

/// Median seconds per run, and hits per run, by variant name.
static RESULTS: Mutex<BTreeMap<&'static str, (Vec<f64>, u64)>> = Mutex::new(BTreeMap::new());

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    prepare(dir.path());
    let mut g = c.benchmark_group("trace");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(4));
    g.warm_up_time(Duration::from_millis(500));
    for (name, v) in [
        ("untraced", Variant::Untraced),
        ("tsf_step", Variant::TsfStep),
        ("apply10", Variant::Apply10),
        ("on_elsewhere", Variant::OnElsewhere),
    ] {
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let mut p = setup(dir.path(), v);
                    let t = thread_cpu_time();
                    let hits = run(&mut p);
                    let spent = thread_cpu_time().saturating_sub(t);
                    total += spent;
                    let mut r = RESULTS.lock().unwrap();
                    let e = r.entry(name).or_default();
                    e.0.push(spent.as_secs_f64());
                    e.1 = hits;
                }
                total
            })
        });
    }
    g.finish();
    report();
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Prints ns per hit and the untraced-overhead ratio from this run.
fn report() {
    let r = RESULTS.lock().unwrap();
    let m = |name: &str| r.get(name).map(|(v, hits)| (median(v), *hits));
    let Some((base, _)) = m("untraced") else {
        return;
    };
    println!("trace: untraced run {:.1} ms (median)", base * 1e3);
    for name in ["tsf_step", "apply10"] {
        if let Some((t, hits)) = m(name)
            && hits > 0
        {
            println!(
                "trace: {name}: {:.1} ms, {hits} hits, {:.1} ns per hit",
                t * 1e3,
                (t - base) * 1e9 / hits as f64
            );
        }
    }
    if let Some((t, hits)) = m("on_elsewhere") {
        println!(
            "trace: on_elsewhere: {:.1} ms, {hits} hits, untraced overhead {:.3}x",
            t * 1e3,
            t / base
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
