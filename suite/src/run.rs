//! Running suites: selecting cases (`--filter`, `--shard`), running them in
//! parallel, one emulated machine each, and judging each against its golden
//! files, or blessing them.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::diff;
use crate::exec::{CompileCache, Produced, run_case};
use crate::shard::Shard;
use crate::source::Sources;
use crate::spec::{Case, Check, Suite};

/// How to run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Write the artifacts as the new golden files instead of comparing.
    pub bless: bool,
    /// Only cases whose full name (`SUITE/CASE`) matches this glob.
    pub filter: Option<glob::Pattern>,
    /// Worker threads (default: one per core).
    pub jobs: Option<usize>,
    /// Only this shard of the selected cases.
    pub shard: Option<Shard>,
}

/// How a case ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Every check matched its golden file.
    Passed,
    /// A check differed, a golden file is missing, or the case could not
    /// run; the message says which and shows the difference.
    Failed,
    /// `--bless` wrote its golden files.
    Blessed,
}

/// One case's result.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// The suite's name.
    pub suite: String,
    /// `SUITE/CASE`.
    pub name: String,
    /// How it ended.
    pub status: Status,
    /// Why it failed, with the differences (empty when it passed).
    pub message: String,
    /// Host time the case took (reports only; never in golden files).
    pub duration: Duration,
}

/// A case selected to run, with its suite.
struct Job<'s> {
    suite: &'s Suite,
    case: &'s Case,
}

/// The cases the options select, in full-name order.
pub fn select<'s>(suites: &'s [Suite], options: &RunOptions) -> Vec<(&'s Suite, &'s Case)> {
    let mut all: Vec<(&Suite, &Case)> = suites
        .iter()
        .flat_map(|s| s.cases.iter().map(move |c| (s, c)))
        .filter(|(_, c)| {
            options
                .filter
                .as_ref()
                .is_none_or(|f| f.matches(&c.full_name))
        })
        .collect();
    all.sort_by(|a, b| a.1.full_name.cmp(&b.1.full_name));
    match options.shard {
        Some(shard) => all
            .into_iter()
            .enumerate()
            .filter(|(k, _)| shard.takes(*k))
            .map(|(_, c)| c)
            .collect(),
        None => all,
    }
}

/// Runs the selected cases and returns their results in full-name order.
/// `progress` is called as each case finishes (from worker threads).
///
/// # Errors
/// The thread pool could not be built.
pub fn run(
    suites: &[Suite],
    sources: &Sources,
    options: &RunOptions,
    progress: &(dyn Fn(&CaseResult) + Sync),
) -> Result<Vec<CaseResult>, String> {
    let jobs: Vec<Job<'_>> = select(suites, options)
        .into_iter()
        .map(|(suite, case)| Job { suite, case })
        .collect();
    let cache = CompileCache::default();
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(n) = options.jobs {
        builder = builder.num_threads(n.max(1));
    }
    let pool = builder.build().map_err(|e| e.to_string())?;
    Ok(pool.install(|| {
        jobs.par_iter()
            .map(|job| {
                let result = run_one(job, sources, &cache, options.bless);
                progress(&result);
                result
            })
            .collect()
    }))
}

fn run_one(job: &Job<'_>, sources: &Sources, cache: &CompileCache, bless: bool) -> CaseResult {
    let start = Instant::now();
    let produced = catch_unwind(AssertUnwindSafe(|| {
        run_case(job.case, &job.suite.dir, sources, cache)
    }));
    let (status, message) = match produced {
        Err(panic) => {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            (
                Status::Failed,
                format!("os2trace crashed running the case: {why}\n"),
            )
        }
        Ok(Err(e)) => (Status::Failed, format!("{e}\n")),
        Ok(Ok(Produced {
            abnormal: Some(why),
            ..
        })) if bless => (
            Status::Failed,
            format!("the program did not end normally: {why}\n(not blessed)\n"),
        ),
        Ok(Ok(produced)) if bless => match bless_case(job, &produced) {
            Ok(()) => (Status::Blessed, String::new()),
            Err(e) => (Status::Failed, format!("writing golden files: {e}\n")),
        },
        Ok(Ok(produced)) => judge(job, &produced),
    };
    CaseResult {
        suite: job.suite.name.clone(),
        name: job.case.full_name.clone(),
        status,
        message,
        duration: start.elapsed(),
    }
}

/// Compares each artifact with its golden file.
fn judge(job: &Job<'_>, produced: &Produced) -> (Status, String) {
    let dir = job.suite.golden_dir.join(&job.case.name);
    let mut message = String::new();
    if let Some(why) = &produced.abnormal {
        message.push_str(&format!("the program did not end normally: {why}\n"));
    }
    for (check, actual) in &produced.artifacts {
        let path = dir.join(check.file_name());
        let golden = match std::fs::read(&path) {
            Ok(g) => g,
            Err(_) => {
                message.push_str(&format!(
                    "{}: no golden file {} (run with --bless to write it)\n",
                    check.file_name(),
                    shown(&path)
                ));
                continue;
            }
        };
        if &golden == actual {
            continue;
        }
        message.push_str(&format!(
            "{} differs from the golden file:\n",
            check.file_name()
        ));
        message.push_str(&match check {
            Check::Stda => diff::stda(&golden, actual, &produced.rules),
            _ => diff::text(&golden, actual),
        });
    }
    if message.is_empty() {
        (Status::Passed, message)
    } else {
        (Status::Failed, message)
    }
}

/// Writes the artifacts as golden files (atomically: a temp file in the
/// same directory, renamed), and removes golden files of checks the case
/// no longer makes.
fn bless_case(job: &Job<'_>, produced: &Produced) -> std::io::Result<()> {
    let dir = job.suite.golden_dir.join(&job.case.name);
    std::fs::create_dir_all(&dir)?;
    for (check, bytes) in &produced.artifacts {
        let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
        std::io::Write::write_all(&mut tmp, bytes)?;
        tmp.persist(dir.join(check.file_name()))
            .map_err(|e| e.error)?;
    }
    for check in Check::ALL {
        if !produced.artifacts.contains_key(&check) {
            let stale = dir.join(check.file_name());
            if stale.is_file() {
                std::fs::remove_file(stale)?;
            }
        }
    }
    Ok(())
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}
