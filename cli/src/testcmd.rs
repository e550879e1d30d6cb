//! `os2trace test SUITE... [--bless] [--filter GLOB] [--jobs N]
//! [--shard I/N] [--junit FILE] [--json]`: regression suites for TDFs and
//! trace programs (the `suite` crate runs them; this prints).
//!
//! Prints one `test NAME ... ok|FAILED|blessed` line per case as it ends,
//! then each failure with its differences, then a cargo-test-like summary.
//! `--json` prints one JSON result per line instead. Exit code 0 when every
//! case passed (or was blessed), 1 when any failed, 2 for bad usage.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{Context, Result};
use suite::{CaseResult, RunOptions, Shard, Sources, Status, Suite};

/// The help text after the options.
pub const AFTER_HELP: &str = "Shards: --shard I/N runs shard I (1-based) of N; --shard auto reads GitLab's \
CI_NODE_INDEX/CI_NODE_TOTAL or Slurm's SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT; \
--shard auto/N reads Kubernetes' JOB_COMPLETION_INDEX (0-based). The suite format is \
documented in the `suite` crate; golden files live in SUITE.golden/ beside each suite.";

/// Regression suites for TDFs and trace programs.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Suite files (TOML); their golden files live beside them.
    #[arg(required = true)]
    suites: Vec<PathBuf>,
    /// Write the golden files from this run instead of comparing.
    #[arg(long)]
    bless: bool,
    /// Only cases whose name (SUITE/CASE) matches this glob.
    #[arg(long, value_name = "GLOB")]
    filter: Option<String>,
    /// Cases run at once (default: one per core).
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,
    /// Run a deterministic part of the cases: I/N, auto or auto/N.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Also write the results as JUnit XML.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Print one JSON result per line instead of the text report.
    #[arg(long)]
    json: bool,
}

/// Entry point.
pub fn run(args: Args) -> Result<i32> {
    let mut options = RunOptions {
        bless: args.bless,
        jobs: args.jobs,
        ..RunOptions::default()
    };
    if let Some(f) = &args.filter {
        match glob::Pattern::new(f) {
            Ok(p) => options.filter = Some(p),
            Err(e) => {
                eprintln!("os2trace test: --filter {f:?}: {e}");
                return Ok(2);
            }
        }
    }
    if let Some(spec) = &args.shard {
        match Shard::parse(spec, |k| std::env::var(k).ok()) {
            Ok(s) => options.shard = Some(s),
            Err(e) => {
                eprintln!("os2trace test: {e}");
                return Ok(2);
            }
        }
    }
    let sources = Sources::new();
    let suites = args
        .suites
        .iter()
        .map(|p| Suite::load(p, &sources))
        .collect::<Result<Vec<_>, _>>()?;
    let selected = suite::select(&suites, &options).len();
    let start = Instant::now();
    let out = Mutex::new(std::io::stdout());
    if !args.json {
        let jobs = options.jobs.unwrap_or_else(rayon_threads);
        let s = if selected == 1 { "" } else { "s" };
        println!("\nrunning {selected} case{s} ({jobs} jobs)");
    }
    let progress = |r: &CaseResult| {
        let line = if args.json {
            suite::report::json_line(r)
        } else {
            let word = match r.status {
                Status::Passed => "ok",
                Status::Failed => "FAILED",
                Status::Blessed => "blessed",
            };
            format!("test {} ... {word}", r.name)
        };
        if let Ok(mut o) = out.lock() {
            let _ = writeln!(o, "{line}");
        }
    };
    let results = suite::run(&suites, &sources, &options, &progress)
        .map_err(|e| anyhow::anyhow!("cannot start the worker threads: {e}"))?;
    if let Some(path) = &args.junit {
        let xml = suite::report::junit(&results).map_err(|e| anyhow::anyhow!("JUnit: {e}"))?;
        std::fs::write(path, xml).with_context(|| format!("writing {}", path.display()))?;
    }
    let failed: Vec<&CaseResult> = results
        .iter()
        .filter(|r| r.status == Status::Failed)
        .collect();
    if !args.json {
        print_summary(&results, &failed, start.elapsed().as_secs_f64());
    }
    Ok(if failed.is_empty() { 0 } else { 1 })
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn print_summary(results: &[CaseResult], failed: &[&CaseResult], seconds: f64) {
    if !failed.is_empty() {
        println!("\nfailures:");
        for r in failed {
            println!("\n---- {} ----", r.name);
            print!("{}", escape_controls(&r.message));
        }
        println!("\nfailures:");
        for r in failed {
            println!("    {}", r.name);
        }
    }
    let passed = results
        .iter()
        .filter(|r| r.status == Status::Passed)
        .count();
    let blessed = results
        .iter()
        .filter(|r| r.status == Status::Blessed)
        .count();
    let verdict = if failed.is_empty() { "ok" } else { "FAILED" };
    let blessed = if blessed > 0 {
        format!("{blessed} blessed; ")
    } else {
        String::new()
    };
    println!(
        "\ntest result: {verdict}. {passed} passed; {} failed; {blessed}finished in {seconds:.2}s",
        failed.len()
    );
}

/// Guest text (program output in a diff) with control characters other
/// than newline and tab shown as `\xNN`, so a module cannot send escape
/// sequences to the terminal.
fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\n' && c != '\t' {
            out.push_str(&format!("\\x{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}
