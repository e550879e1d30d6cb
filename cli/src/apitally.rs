//! `run --api-log`'s summary at exit: every system DLL entry the program
//! called and how often, and the entry that stopped it if it called one
//! this kernel does not implement (there are no stubs: such a call ends
//! the run, so it is at most one).
//!
//! The table is sorted by count (most first), then by module and
//! ordinal, so the same run prints the same summary.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::rc::Rc;

use kernel_sim::{ApiLogEntry, Outcome};

/// (module, ordinal) to the entry's name and its calls.
type Counts = BTreeMap<(String, u32), (&'static str, u64)>;

/// Calls counted by (module, ordinal), with the entry's name.
#[derive(Clone, Default)]
pub struct ApiTally {
    counts: Rc<RefCell<Counts>>,
}

impl ApiTally {
    /// Count one call.
    pub fn add(&self, e: &ApiLogEntry) {
        let mut c = self.counts.borrow_mut();
        c.entry((e.module.clone(), e.ordinal))
            .or_insert((e.name, 0))
            .1 += 1;
    }

    /// The summary's text, given how the run ended.
    pub fn summary(&self, outcome: &Outcome) -> String {
        let counts = self.counts.borrow();
        let total: u64 = counts.values().map(|v| v.1).sum();
        let mut rows: Vec<_> = counts.iter().collect();
        rows.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(b.0)));
        let mut s = format!("api summary: {total} calls of {} entries\n", counts.len());
        for ((module, ordinal), (name, n)) in rows {
            let entry = format!("{module}.{ordinal}");
            let _ = writeln!(s, "  {n:>8}  {entry:<16} {name}");
        }
        match outcome {
            Outcome::Unimplemented {
                module,
                ordinal,
                name,
            } => {
                let _ = writeln!(
                    s,
                    "api summary: not implemented: {module}.{ordinal} ({}), which stopped the run",
                    name.unwrap_or("no name known")
                );
            }
            _ => s.push_str("api summary: not implemented: none called\n"),
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(module: &str, ordinal: u32, name: &'static str) -> ApiLogEntry {
        ApiLogEntry {
            caller: "005B:00010000".into(),
            module: module.into(),
            ordinal,
            name,
            args: String::new(),
            result: "rc=0".into(),
        }
    }

    #[test]
    fn counts_sort_by_frequency_then_entry() {
        let t = ApiTally::default();
        for e in [
            entry("DOSCALLS", 282, "DosWrite"),
            entry("NLS", 6, "DosQueryDBCSEnv"),
            entry("DOSCALLS", 282, "DosWrite"),
            entry("DOSCALLS", 234, "DosExit"),
        ] {
            t.add(&e);
        }
        let s = t.summary(&Outcome::Exited(0));
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "api summary: 4 calls of 3 entries");
        assert!(lines[1].contains("2  DOSCALLS.282") && lines[1].ends_with("DosWrite"));
        assert!(lines[2].contains("DOSCALLS.234"));
        assert!(lines[3].contains("NLS.6"));
        assert_eq!(lines[4], "api summary: not implemented: none called");
        let s = t.summary(&Outcome::Unimplemented {
            module: "DOSCALLS".into(),
            ordinal: 276,
            name: Some("DOS32QUERYFHSTATE"),
        });
        assert!(s.ends_with(
            "not implemented: DOSCALLS.276 (DOS32QUERYFHSTATE), which stopped the run\n"
        ));
    }
}
