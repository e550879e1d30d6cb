//! Times as the trace facility stores them.
//!
//! Three shapes occur, all taken from the caller (the emulated clock), never
//! from the host, so the same inputs give byte-identical buffers:
//!
//! * [`Timestamp`]: the time of one trace record (hours, minutes, seconds,
//!   hundredths), the `GISEG+8` bytes a tracepoint hit reads. The new STDA
//!   format stores all four bytes; the old format stores only seconds and
//!   hundredths (see [`Stamp`]).
//! * [`TraceDateTime`]: the TRACE ON and TRACE OFF times kept in the header
//!   of a new-format STDA (year as a little-endian u16, then month, day,
//!   hour, minute, second, hundredths: 8 bytes).
//! * [`DosDateTime`]: the 11-byte `DATETIME` structure of `DosGetDateTime`,
//!   stored in TRACEFMT save files.

use std::fmt;

/// The time of one trace record, as a tracepoint hit reads it from the
/// global information segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp {
    /// Hours, 0..=23.
    pub hours: u8,
    /// Minutes, 0..=59.
    pub minutes: u8,
    /// Seconds, 0..=59.
    pub seconds: u8,
    /// Hundredths of a second, 0..=99.
    pub hundredths: u8,
}

impl Timestamp {
    /// A timestamp from its four fields.
    pub const fn new(hours: u8, minutes: u8, seconds: u8, hundredths: u8) -> Self {
        Self {
            hours,
            minutes,
            seconds,
            hundredths,
        }
    }

    /// The time of day `ms` milliseconds after midnight (wrapping at 24 h),
    /// truncated to hundredths: how the emulated clock turns into stamps.
    pub const fn from_millis(ms: u64) -> Self {
        let cs = (ms / 10) % (24 * 3600 * 100);
        Self {
            hours: (cs / 360_000) as u8,
            minutes: (cs / 6000 % 60) as u8,
            seconds: (cs / 100 % 60) as u8,
            hundredths: (cs % 100) as u8,
        }
    }

    /// The four bytes of the new format, in buffer order (H, M, s, h).
    pub const fn to_bytes(self) -> [u8; 4] {
        [self.hours, self.minutes, self.seconds, self.hundredths]
    }

    /// Reads the four bytes of the new format.
    pub const fn from_bytes(b: [u8; 4]) -> Self {
        Self::new(b[0], b[1], b[2], b[3])
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:02}:{:02}:{:02}.{:02}",
            self.hours, self.minutes, self.seconds, self.hundredths
        )
    }
}

/// The timestamp bytes a record carries, in the shape of its buffer format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stamp {
    /// Old format: seconds then hundredths (the word at `GISEG+0x0A`).
    Old {
        /// Seconds.
        seconds: u8,
        /// Hundredths of a second.
        hundredths: u8,
    },
    /// New format: hours, minutes, seconds, hundredths.
    New(Timestamp),
}

impl Stamp {
    /// The stamp a record written at `time` carries in the old format.
    pub const fn old(time: Timestamp) -> Self {
        Stamp::Old {
            seconds: time.seconds,
            hundredths: time.hundredths,
        }
    }
}

impl fmt::Display for Stamp {
    /// New stamps print as `HH:MM:SS.hh`; old ones, which lack hours and
    /// minutes, as `SS.hh`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stamp::Old {
                seconds,
                hundredths,
            } => write!(f, "{seconds:02}.{hundredths:02}"),
            Stamp::New(t) => t.fmt(f),
        }
    }
}

/// A TRACE ON or TRACE OFF time in a new-format STDA header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TraceDateTime {
    /// Year, for example 1996.
    pub year: u16,
    /// Month, 1..=12.
    pub month: u8,
    /// Day of the month, 1..=31.
    pub day: u8,
    /// Hours, minutes, seconds and hundredths.
    pub time: Timestamp,
}

impl TraceDateTime {
    /// Size in the STDA header.
    pub const SIZE: usize = 8;

    /// The 8 header bytes: year (LE u16), month, day, hour, minute, second,
    /// hundredths.
    pub fn to_bytes(self) -> [u8; 8] {
        let y = self.year.to_le_bytes();
        let t = self.time.to_bytes();
        [y[0], y[1], self.month, self.day, t[0], t[1], t[2], t[3]]
    }

    /// Reads the 8 header bytes.
    pub fn from_bytes(b: [u8; 8]) -> Self {
        Self {
            year: u16::from_le_bytes([b[0], b[1]]),
            month: b[2],
            day: b[3],
            time: Timestamp::new(b[4], b[5], b[6], b[7]),
        }
    }
}

impl fmt::Display for TraceDateTime {
    /// `YYYY-MM-DD HH:MM:SS.hh`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04}-{:02}-{:02} {}",
            self.year, self.month, self.day, self.time
        )
    }
}

/// The `DATETIME` structure returned by `DosGetDateTime` (11 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DosDateTime {
    /// Hours, minutes, seconds, hundredths.
    pub time: Timestamp,
    /// Day of the month.
    pub day: u8,
    /// Month.
    pub month: u8,
    /// Year.
    pub year: u16,
    /// Minutes from UTC (signed; -1 when unknown).
    pub timezone: i16,
    /// Day of the week, 0 = Sunday.
    pub weekday: u8,
}

impl DosDateTime {
    /// Size of the structure.
    pub const SIZE: usize = 11;

    /// The structure's bytes: hours, minutes, seconds, hundredths, day,
    /// month, year (LE), timezone (LE), weekday.
    pub fn to_bytes(self) -> [u8; 11] {
        let t = self.time.to_bytes();
        let y = self.year.to_le_bytes();
        let z = self.timezone.to_le_bytes();
        [
            t[0],
            t[1],
            t[2],
            t[3],
            self.day,
            self.month,
            y[0],
            y[1],
            z[0],
            z[1],
            self.weekday,
        ]
    }

    /// Reads the structure's bytes.
    pub fn from_bytes(b: [u8; 11]) -> Self {
        Self {
            time: Timestamp::new(b[0], b[1], b[2], b[3]),
            day: b[4],
            month: b[5],
            year: u16::from_le_bytes([b[6], b[7]]),
            timezone: i16::from_le_bytes([b[8], b[9]]),
            weekday: b[10],
        }
    }

    /// The same instant as a [`TraceDateTime`].
    pub fn to_trace_date_time(self) -> TraceDateTime {
        TraceDateTime {
            year: self.year,
            month: self.month,
            day: self.day,
            time: self.time,
        }
    }
}

// A timestamp is stored with every record on the hit path: keep it the
// four bytes the STDA holds.
const _: () = assert!(size_of::<Timestamp>() == 4);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn millis_become_time_of_day() {
        let t = Timestamp::from_millis(((13 * 60 + 5) * 60 + 7) * 1000 + 899);
        assert_eq!(t, Timestamp::new(13, 5, 7, 89));
        assert_eq!(t.to_string(), "13:05:07.89");
        assert_eq!(
            Timestamp::from_millis(24 * 3600 * 1000),
            Timestamp::default()
        );
    }

    #[test]
    fn date_times_round_trip() {
        let d = DosDateTime {
            time: Timestamp::new(1, 2, 3, 4),
            day: 5,
            month: 6,
            year: 1996,
            timezone: -60,
            weekday: 3,
        };
        assert_eq!(DosDateTime::from_bytes(d.to_bytes()), d);
        let t = d.to_trace_date_time();
        assert_eq!(t.to_bytes(), [0xCC, 0x07, 6, 5, 1, 2, 3, 4]);
        assert_eq!(TraceDateTime::from_bytes(t.to_bytes()), t);
        assert_eq!(t.to_string(), "1996-06-05 01:02:03.04");
    }
}
