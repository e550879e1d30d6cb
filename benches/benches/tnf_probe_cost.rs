//! What a TNF probe costs (issue 15).
//!
//! The guest's cost, in emulated cycles (deterministic, so computed once
//! and printed, and checked: the bench stops if a disabled probe costs
//! more than a call and a return): TNF32 and TNF16 built three ways, the
//! untraced program (`-DNPROBE`: no probe sites), every site calling a
//! local `ret` (a call and a return), and the real probes, disabled. Per
//! site: (disabled - untraced) / sites against (call_ret - untraced) /
//! sites. `tnf_cost/guest/*` then times the three runs on the host.
//!
//! An enabled probe's host cost: `tnf_cost/events/*` runs TNFLD32 with
//! [`EVENTS`] calls of TNFDLL32's `tick` probe (`tnf_ulong`, `tnf_string`)
//! disabled and recording into a 128 KB file (which wraps, the steady
//! state); (recording - disabled) / EVENTS is the host time per event,
//! the host call, the argument reads and the writer included. Process
//! set-up is outside the timing.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use kernel_sim::tnf::ProbeAction;
use kernel_sim::{ConsoleBuffer, Outcome, Process, ProcessConfig};
use testprogs::tnf::Probes;
use tnf::{Endian, TnfWriter};

/// Probe hits per TNFLD32 run.
const EVENTS: u32 = 2000;

fn quiet(p: &mut Process) {
    let out = ConsoleBuffer::new();
    p.set_console(
        Box::new(out.clone()),
        Box::new(out),
        Box::new(std::io::empty()),
    );
}

/// A process of `file` in `dir`, its probes (if any) set to `action`.
fn process(dir: &std::path::Path, file: &str, args: &[&str], action: ProbeAction) -> Process {
    let mut cfg = ProcessConfig::new(dir, file);
    cfg.args = args.iter().map(|a| a.to_string()).collect();
    let mut p = Process::new(cfg).unwrap();
    quiet(&mut p);
    p.tnf_set_policy(Box::new(move |_| action));
    p.tnf_discover().unwrap();
    for i in 0..p.tnf_probes().len() {
        p.tnf_set_action(i, action);
    }
    p.tnf_start(TnfWriter::new(128 * 1024, Endian::Little).unwrap());
    p
}

/// The emulated cycles of a whole run.
fn cycles(dir: &std::path::Path, file: &str) -> u64 {
    let mut p = process(dir, file, &[], ProbeAction::default());
    assert_eq!(p.run(), Outcome::Exited(0));
    p.machine().cycles()
}

fn guest(c: &mut Criterion) {
    let mut g = c.benchmark_group("tnf_cost/guest");
    for (bits16, sites) in [(false, 12 + 1), (true, 1 + 5 + 1 + 1)] {
        let name = if bits16 { "tnf16" } else { "tnf32" };
        let variants = [
            ("untraced", Probes::Nprobe),
            ("call_ret", Probes::Stub),
            ("disabled", Probes::Tnf),
        ];
        let mut dirs = Vec::new();
        let mut counts = Vec::new();
        for (_, probes) in variants {
            let program = testprogs::tnf_variant(bits16, probes).unwrap();
            let dir = tempfile::tempdir().unwrap();
            program.write_to(dir.path()).unwrap();
            counts.push(cycles(dir.path(), program.file_name));
            dirs.push((dir, program.file_name));
        }
        let per_site = |n: u64| (n - counts[0]) as f64 / f64::from(sites);
        let (call_ret, disabled) = (per_site(counts[1]), per_site(counts[2]));
        println!(
            "{name}: emulated cycles untraced {}, call+ret {}, disabled {}; per site ({sites} sites): call+ret {call_ret:.1}, disabled probe {disabled:.1}",
            counts[0], counts[1], counts[2]
        );
        assert!(
            disabled <= call_ret,
            "{name}: a disabled probe costs {disabled} cycles, more than a call and a return ({call_ret})"
        );
        for ((variant, _), (dir, file)) in variants.iter().zip(&dirs) {
            let dir = dir.path().to_path_buf();
            g.bench_function(format!("{name}/{variant}"), |b| {
                b.iter_batched(
                    || process(&dir, file, &[], ProbeAction::default()),
                    |mut p| {
                        assert_eq!(p.run(), Outcome::Exited(0));
                        p
                    },
                    BatchSize::SmallInput,
                )
            });
        }
    }
    g.finish();
}

fn events(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    testprogs::tnfld32().unwrap().write_to(dir.path()).unwrap();
    testprogs::tnfdll32().unwrap().write_to(dir.path()).unwrap();
    let count = EVENTS.to_string();
    let mut g = c.benchmark_group("tnf_cost/events");
    for (name, action) in [
        ("disabled", ProbeAction::default()),
        (
            "recording",
            ProbeAction {
                record: true,
                debug: false,
            },
        ),
    ] {
        g.bench_function(format!("{name}_{EVENTS}"), |b| {
            b.iter_batched(
                || process(dir.path(), "TNFLD32.EXE", &[&count], action),
                |mut p| {
                    assert_eq!(p.run(), Outcome::Exited(0));
                    let (hits, dropped, _) = p.tnf_counts();
                    assert_eq!((hits, dropped), (u64::from(EVENTS) + 3, 0));
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
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = guest, events
}
criterion_main!(benches);
