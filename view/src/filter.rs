//! Selecting records: by major, minor, PID, a time or sequence range, and
//! a text search over the formatted record.
//!
//! A bound of `--from`/`--to` is one of:
//! * a sequence number, `17` (the record's position in the whole trace);
//! * an OS/2 time, `12:00:01.50` or `01.50` (old-format stamps), compared
//!   with the record's 1/100-second time;
//! * an emulated time since the run started, `1.5ms`, `250us`, `40ns`,
//!   `2s`, compared with the sidecar's nanoseconds (records without a
//!   sidecar do not match such a bound).
//!
//! Both bounds are inclusive. The text search is case-insensitive over the
//! record's header line, DESC, FMT lines and hex.

use crate::trace::Entry;

/// One end of a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// A sequence number.
    Seq(usize),
    /// OS/2 time in hundredths of a second.
    Hundredths(u64),
    /// Emulated nanoseconds since the run started.
    Ns(u64),
}

impl std::str::FromStr for Bound {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let bad = || {
            format!("'{s}' is not a sequence number, a time (12:00:01.50) or a duration (1.5ms)")
        };
        for (unit, scale) in [("ns", 1f64), ("us", 1e3), ("ms", 1e6), ("s", 1e9)] {
            if let Some(num) = t.strip_suffix(unit)
                && let Ok(v) = num.parse::<f64>()
                && v >= 0.0
                && !num.is_empty()
                && !num.ends_with(['m', 'u', 'n'])
            {
                return Ok(Bound::Ns((v * scale).round() as u64));
            }
        }
        if t.contains(':') || t.contains('.') {
            let (hms, hh) = t.split_once('.').unwrap_or((t, "0"));
            let hh: u64 = hh.parse().map_err(|_| bad())?;
            if hh > 99 {
                return Err(bad());
            }
            let mut secs = 0u64;
            for part in hms.split(':') {
                let v: u64 = part.parse().map_err(|_| bad())?;
                secs = secs
                    .checked_mul(60)
                    .and_then(|s| s.checked_add(v))
                    .ok_or_else(bad)?;
            }
            let h = secs.checked_mul(100).and_then(|s| s.checked_add(hh));
            return h.map(Bound::Hundredths).ok_or_else(bad);
        }
        t.parse().map(Bound::Seq).map_err(|_| bad())
    }
}

/// What to keep.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Major codes (any of them; empty: all). Compared with the trailer's
    /// byte, so 0x1C2 selects 0xC2.
    pub majors: Vec<u16>,
    /// Minor codes.
    pub minors: Vec<u16>,
    /// PIDs.
    pub pids: Vec<u16>,
    /// First record kept.
    pub from: Option<Bound>,
    /// Last record kept.
    pub to: Option<Bound>,
    /// Text to find (case-insensitive).
    pub grep: Option<String>,
}

impl Filter {
    /// Whether the filter keeps everything.
    pub fn is_empty(&self) -> bool {
        self.majors.is_empty()
            && self.minors.is_empty()
            && self.pids.is_empty()
            && self.from.is_none()
            && self.to.is_none()
            && self.grep.is_none()
    }

    /// Whether the record passes the code, PID and range tests (not the
    /// text search, which needs the formatted text: [`Filter::keeps`]).
    pub fn keeps_fields(&self, e: &Entry) -> bool {
        let r = &e.record;
        (self.majors.is_empty() || self.majors.iter().any(|&m| m as u8 == r.major))
            && (self.minors.is_empty() || self.minors.contains(&r.minor))
            && (self.pids.is_empty() || self.pids.contains(&r.pid))
            && self
                .from
                .is_none_or(|b| cmp(e, b).is_some_and(|o| o.is_ge()))
            && self.to.is_none_or(|b| cmp(e, b).is_some_and(|o| o.is_le()))
    }

    /// Whether the record passes, given its formatted text.
    pub fn keeps(&self, e: &Entry, text: &str) -> bool {
        self.keeps_fields(e)
            && self
                .grep
                .as_ref()
                .is_none_or(|g| text.to_lowercase().contains(&g.to_lowercase()))
    }

    /// A one-line description, for status lines.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        let list = |v: &[u16]| {
            v.iter()
                .map(|x| format!("{x:04X}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        if !self.majors.is_empty() {
            parts.push(format!("major {}", list(&self.majors)));
        }
        if !self.minors.is_empty() {
            parts.push(format!("minor {}", list(&self.minors)));
        }
        if !self.pids.is_empty() {
            parts.push(format!("pid {}", list(&self.pids)));
        }
        if let Some(b) = self.from {
            parts.push(format!("from {}", bound_text(b)));
        }
        if let Some(b) = self.to {
            parts.push(format!("to {}", bound_text(b)));
        }
        if let Some(g) = &self.grep {
            parts.push(format!("text \"{g}\""));
        }
        if parts.is_empty() {
            "no filter".to_string()
        } else {
            parts.join(", ")
        }
    }
}

fn bound_text(b: Bound) -> String {
    match b {
        Bound::Seq(n) => format!("#{n}"),
        Bound::Hundredths(h) => format!(
            "{:02}:{:02}:{:02}.{:02}",
            h / 360_000,
            h / 6000 % 60,
            h / 100 % 60,
            h % 100
        ),
        Bound::Ns(ns) => crate::trace::ns_text(ns),
    }
}

fn cmp(e: &Entry, b: Bound) -> Option<std::cmp::Ordering> {
    match b {
        Bound::Seq(n) => Some(e.seq.cmp(&n)),
        Bound::Hundredths(h) => e.hundredths().map(|t| t.cmp(&h)),
        Bound::Ns(ns) => e.fine.map(|f| f.ns.cmp(&ns)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_parse() {
        assert_eq!("17".parse(), Ok(Bound::Seq(17)));
        assert_eq!("12:00:01.50".parse(), Ok(Bound::Hundredths(4_320_150)));
        assert_eq!("01.05".parse(), Ok(Bound::Hundredths(105)));
        assert_eq!("1.5ms".parse(), Ok(Bound::Ns(1_500_000)));
        assert_eq!("250us".parse(), Ok(Bound::Ns(250_000)));
        assert_eq!("2s".parse(), Ok(Bound::Ns(2_000_000_000)));
        assert!("soon".parse::<Bound>().is_err());
        assert!("1.500".parse::<Bound>().is_err());
        assert!("99999999999999999:99:99.99".parse::<Bound>().is_err());
    }
}
