//! Fine time beside the STDA: for every record the system trace logs, the
//! emulated cycle and nanosecond of the hit, its cost, the tracepoint's
//! address and the thread ([`stda::sidecar`]), kept in a bounded
//! [`Recorder`] and written as `FILE.idx` beside each save file and TRSPOOL
//! file. An [`Observer`] may also see each record as it is logged
//! (`run --tracefmt --follow`). Neither changes the STDA or the clock.

use emu::Machine as Emu;
use emu::SegReg;
use stda::sidecar::{HitTime, Recorder};
use stda::{Record, Stda, TraceBuffer};

/// Where on the emulated clock a trap happens: the run loop's clock, which
/// the system trace does not own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HitClock {
    /// Cycles on the clock (the machine's and those the kernel added).
    pub cycle: u64,
    /// The clock's frequency.
    pub hz: u64,
    /// The running thread.
    pub tid: u16,
}

impl HitClock {
    /// Nanoseconds of `cycles` at this clock's frequency.
    pub fn ns(&self, cycles: u64) -> u64 {
        let hz = self.hz.max(1);
        match cycles.checked_mul(1_000_000_000) {
            // The same quotient without a 128-bit division (below ~18e9
            // cycles: minutes of emulated time).
            Some(n) => n / hz,
            None => (u128::from(cycles) * 1_000_000_000 / u128::from(hz)) as u64,
        }
    }
}

/// What an [`Observer`] calls for each logged record.
pub type ObserveFn = dyn FnMut(&Record, &HitTime) + Send;

/// A callback that sees each logged record with its fine time.
pub struct Observer(pub Box<ObserveFn>);

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Observer")
    }
}

/// The fine-time state of the system trace.
///
/// The recorder's entries hold cycles where nanoseconds go (`ns` the
/// hit's cycle, `cost_ns` its cost in cycles) until [`Fine::in_ns`]
/// converts them when a sidecar is made: a hit pays no division. The
/// clock's frequency is fixed for a run.
#[derive(Debug)]
pub(crate) struct Fine {
    pub(crate) recorder: Recorder,
    pub(crate) observer: Option<Observer>,
    /// The clock's frequency at the last hit.
    hz: u64,
}

impl Fine {
    pub(crate) fn new(capacity: usize) -> Fine {
        Fine {
            recorder: Recorder::new(capacity),
            observer: None,
            hz: 1,
        }
    }

    /// An entry as the recorder keeps it, in nanoseconds.
    pub(crate) fn in_ns(&self, hit: HitTime) -> HitTime {
        let clock = HitClock {
            cycle: 0,
            hz: self.hz,
            tid: 0,
        };
        HitTime {
            ns: clock.ns(hit.ns),
            cost_ns: clock.ns(hit.cost_ns),
            ..hit
        }
    }

    /// The linear address of the INT3 of a breakpoint trap.
    pub(crate) fn trap_address(emu: &Emu) -> u32 {
        let cpu = emu.cpu();
        cpu.sreg(SegReg::Cs)
            .base
            .wrapping_add(cpu.eip.wrapping_sub(1))
    }

    /// After a hit that cost `cost` cycles: when the buffer holds one more
    /// record than `logged_before`, its fine time is kept and observed.
    pub(crate) fn after_hit(
        &mut self,
        buffer: &TraceBuffer,
        logged_before: u64,
        at: HitClock,
        address: u32,
        cost: u64,
    ) {
        if buffer.records_logged() <= logged_before {
            return;
        }
        // The codes the buffer kept: the record is read back only for an
        // observer (a read-back on every hit would cost as much as the hit).
        let Some(last) = buffer.last_logged() else {
            return;
        };
        self.hz = at.hz;
        // Cycles for now (see the type's docs).
        let hit = HitTime {
            cycle: at.cycle,
            ns: at.cycle,
            cost_ns: cost,
            cost_cycles: u32::try_from(cost).unwrap_or(u32::MAX),
            address,
            pid: last.pid,
            tid: at.tid,
            minor: last.minor,
            major: u16::from(last.major),
        };
        self.recorder.push(hit);
        if self.observer.is_some()
            && let Some(rec) = Stda::parse(buffer.as_bytes())
                .ok()
                .and_then(|s| s.walk_back().next())
        {
            let hit = self.in_ns(hit);
            if let Some(Observer(f)) = self.observer.as_mut() {
                f(&rec, &hit);
            }
        }
    }
}
