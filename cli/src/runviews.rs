//! The views of a traced `run`: `--export FILE` (Perfetto, or Chrome JSON
//! for a `.json` FILE), `--svg FILE` (hits and cost per tracepoint from
//! QUERY, records over emulated time) and `--follow` (with `--tracefmt`:
//! each record printed as it is logged, with its fine time). The work is
//! the `view` crate's; the fine times come from the kernel's sidecar.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use kernel_sim::Process;
use kernel_sim::trace::fine::Observer;
use stda::tracefmt::{Rules, format_one};
use view::plot::{Plot, TracepointStat};
use view::render::Formatter;

/// The view options of `run`.
#[derive(Debug, Default, Clone, clap::Args)]
pub struct ViewOptions {
    /// Export the trace after the run: Perfetto's format, or Chrome's JSON
    /// trace events when FILE ends in .json.
    #[arg(long, value_name = "FILE")]
    pub export: Option<PathBuf>,
    /// Draw hits and emulated cost per tracepoint (QUERY's numbers) and
    /// the records over emulated time as SVG after the run.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// With --tracefmt: print each record as it is logged rather than the
    /// buffer after the run.
    #[arg(long, requires = "tracefmt")]
    pub follow: bool,
}

impl ViewOptions {
    /// Whether a view asks for tracing.
    pub fn active(&self) -> bool {
        self.export.is_some() || self.svg.is_some()
    }
}

/// Before the run: the observer of `--follow`, which loads the TFF of a
/// major from `tff_dirs` the first time it sees it.
pub fn start(opts: &ViewOptions, process: &mut Process, tff_dirs: Vec<PathBuf>) {
    if !opts.follow {
        return;
    }
    let Some(trace) = process.system_trace_mut() else {
        return;
    };
    let (mut rules, mut seen, mut seq) = (Rules::new(), Vec::<u8>::new(), 0usize);
    trace.set_observer(Some(Observer(Box::new(move |rec, hit| {
        if !seen.contains(&rec.major) {
            seen.push(rec.major);
            for dir in &tff_dirs {
                let (found, problems) = Rules::load_dir(dir, [rec.major]);
                for p in problems {
                    eprintln!("os2trace: {p}");
                }
                rules.fill_from(found);
            }
        }
        seq += 1;
        let mut lines = format_one(&rules, seq, rec);
        if let Some(first) = lines.first_mut() {
            first.push_str(&format!(
                "  T={} TID={:04X}",
                view::trace::ns_text(hit.ns),
                hit.tid
            ));
        }
        for l in lines {
            println!("{l}");
        }
    }))));
}

/// After the run (tracing stopped): the export and the picture.
///
/// # Errors
/// A file that cannot be written.
pub fn finish(opts: &ViewOptions, process: &Process, tff_dirs: &[PathBuf]) -> Result<()> {
    if !opts.active() {
        return Ok(());
    }
    let (Some(system), Some(save)) = (process.system_trace(), process.traceget()) else {
        return Ok(());
    };
    let sidecar = system.sidecar().to_bytes();
    let trace = view::trace::from_capture(Path::new("run"), &save.to_bytes(), Some(&sidecar))
        .context("reading back the trace buffer")?;
    let (fmt, warnings) = Formatter::load(tff_dirs, &trace);
    for w in warnings {
        eprintln!("os2trace: {w}");
    }
    let entries: Vec<_> = trace.entries.iter().collect();
    if let Some(out) = &opts.export {
        let bytes = if out
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        {
            serde_json::to_vec_pretty(&view::perfetto::to_chrome(&entries, &fmt))?
        } else {
            view::perfetto::to_perfetto(&entries, &fmt)
        };
        outfile::write_atomic(out, &bytes)?;
    }
    if let Some(out) = &opts.svg {
        let report = system.report();
        let mut index = BTreeMap::new();
        let mut stats = Vec::new();
        for tp in report.dtos.iter().flat_map(|d| &d.tracepoints) {
            index.insert((tp.major as u8, tp.minor), stats.len());
            stats.push(TracepointStat {
                name: format!("{:04X}/{:04X}", tp.major, tp.minor),
                hits: tp.hits,
                cost: tp.cycles,
            });
        }
        let timeline = entries
            .iter()
            .filter_map(|e| {
                let i = index.get(&(e.record.major, e.record.minor))?;
                Some((e.fine.map_or(0.0, |f| f.ns as f64 / 1e6), *i))
            })
            .collect();
        let plot = Plot {
            stats,
            cost_unit: "cycles".to_string(),
            timeline,
            time_unit: "ms".to_string(),
        };
        outfile::write_atomic(out, plot.to_svg().map_err(anyhow::Error::msg)?.as_bytes())?;
    }
    Ok(())
}
