//! How a long run is going: a snapshot the run loop hands to a sink (the
//! binary's status line) every [`PROGRESS_EVERY`] guest instructions.
//!
//! The check is one comparison per run-loop turn, so it costs nothing on
//! the hit path; the snapshot itself (hits summed over the DTOs, the
//! buffer's records counted) is built only when one is due.

use crate::process::Process;

/// Guest instructions between two progress snapshots.
pub const PROGRESS_EVERY: u64 = 1 << 22;

/// A snapshot of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunProgress {
    /// Guest instructions executed.
    pub instructions: u64,
    /// Milliseconds of emulated time.
    pub emulated_ms: u64,
    /// Tracepoint hits, over every DTO.
    pub hits: u64,
    /// Records logged into the system trace buffer.
    pub records: u64,
    /// Records the buffer lost to wraps (logged, no longer in it).
    pub lost: u64,
}

/// Receives progress snapshots.
pub type ProgressSink = Box<dyn FnMut(&RunProgress)>;

impl Process {
    /// Sends a [`RunProgress`] to `sink` every [`PROGRESS_EVERY`]
    /// instructions while the program runs.
    pub fn set_progress(&mut self, sink: ProgressSink) {
        self.host.progress = Some(sink);
    }

    /// The run's snapshot now.
    pub fn progress(&self) -> RunProgress {
        let (hits, records, lost) = match self.system_trace() {
            Some(t) => {
                let hits = t
                    .runtime()
                    .dtos()
                    .iter()
                    .flat_map(|d| d.tracepoints.iter())
                    .map(|tp| tp.hits)
                    .sum();
                let logged = t.buffer().records_logged();
                let held = stda::Stda::parse(t.buffer().as_bytes())
                    .map(|s| s.records().len() as u64)
                    .unwrap_or(0);
                (hits, logged, logged.saturating_sub(held))
            }
            None => (0, 0, 0),
        };
        RunProgress {
            instructions: self.instructions(),
            emulated_ms: self.now_millis(),
            hits,
            records,
            lost,
        }
    }

    /// Called by the run loop: a snapshot to the sink when one is due.
    pub(crate) fn report_progress(&mut self) {
        if self.host.progress.is_none() || self.kernel.executed < self.host.next_progress {
            return;
        }
        self.host.next_progress = self.kernel.executed + PROGRESS_EVERY;
        let snapshot = self.progress();
        if let Some(sink) = self.host.progress.as_mut() {
            sink(&snapshot);
        }
    }
}
