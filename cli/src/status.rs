//! The live status line of a long `run` on a terminal: emulated time,
//! instructions, hits, records and records lost to wraps, on stderr
//! (indicatif). It appears once the run has lasted a second, is cleared
//! at the end, and is never shown when stderr is not a terminal.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use kernel_sim::Process;
use kernel_sim::progress::RunProgress;

/// How long a run goes before the line appears.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// The status line of one run: nothing when stderr is not a terminal, nor
/// on a terminal that cannot redraw a line (TERM unset or `dumb`, where
/// indicatif draws nothing).
pub struct StatusLine {
    bar: Option<ProgressBar>,
}

impl StatusLine {
    /// Attaches a status line to `process` when stderr is a terminal.
    pub fn attach(process: &mut Process) -> StatusLine {
        if !std::io::stderr().is_terminal() {
            return StatusLine { bar: None };
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}") {
            bar.set_style(style);
        }
        let started = Instant::now();
        let shown = bar.clone();
        let mut visible = false;
        process.set_progress(Box::new(move |p: &RunProgress| {
            if !visible {
                if started.elapsed() < QUIET_FOR {
                    return;
                }
                shown.set_draw_target(ProgressDrawTarget::stderr());
                visible = true;
            }
            shown.set_message(describe(p));
            shown.tick();
        }));
        StatusLine { bar: Some(bar) }
    }

    /// Clears the line (before anything else is printed).
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The line's text.
pub fn describe(p: &RunProgress) -> String {
    format!(
        "emulated {}.{:03} s  {} instructions  {} hits  {} records  {} lost to wraps",
        p.emulated_ms / 1000,
        p.emulated_ms % 1000,
        p.instructions,
        p.hits,
        p.records,
        p.lost
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_every_count() {
        let p = RunProgress {
            instructions: 123,
            emulated_ms: 4567,
            hits: 8,
            records: 7,
            lost: 2,
        };
        assert_eq!(
            describe(&p),
            "emulated 4.567 s  123 instructions  8 hits  7 records  2 lost to wraps"
        );
    }
}
