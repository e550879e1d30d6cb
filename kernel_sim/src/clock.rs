//! The emulated clock: guest time is the machine's cycle count at a fixed
//! frequency, plus the time DosSleep and the trace runtime add, from a
//! configurable start date. The same inputs give the same times. A
//! [`DateTime`] converts (`From`) to the trace formats' times: a record's
//! [`stda::Timestamp`], the header's [`stda::TraceDateTime`] and a save
//! file's [`stda::DosDateTime`].

/// The emulated wall clock.
#[derive(Clone, Debug)]
pub struct Clock {
    /// Cycles per second of the emulated CPU.
    pub hz: u64,
    /// Start date: year, month, day, hour, minute, second.
    pub start: [u16; 6],
    /// Cycles added on top of the machine's own (sleeps, trace costs).
    pub extra_cycles: u64,
}

impl Default for Clock {
    fn default() -> Self {
        Clock {
            hz: 33_000_000,
            start: [1996, 10, 9, 12, 0, 0],
            extra_cycles: 0,
        }
    }
}

/// A broken-down time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DateTime {
    /// Year.
    pub year: u16,
    /// Month 1..=12.
    pub month: u8,
    /// Day 1..=31.
    pub day: u8,
    /// Hour.
    pub hour: u8,
    /// Minute.
    pub minute: u8,
    /// Second.
    pub second: u8,
    /// Hundredths of a second.
    pub hundredths: u8,
    /// Day of week, 0 = Sunday.
    pub weekday: u8,
}

impl Clock {
    /// Total cycles elapsed, given the machine's own count.
    pub fn cycles(&self, machine_cycles: u64) -> u64 {
        machine_cycles.saturating_add(self.extra_cycles)
    }

    /// Milliseconds since the start.
    pub fn millis(&self, machine_cycles: u64) -> u64 {
        let c = u128::from(self.cycles(machine_cycles));
        (c * 1000 / u128::from(self.hz.max(1))) as u64
    }

    /// Advance by `ms` milliseconds (DosSleep).
    pub fn sleep(&mut self, ms: u64) {
        let add = u128::from(ms) * u128::from(self.hz) / 1000;
        self.extra_cycles = self.extra_cycles.saturating_add(add as u64);
    }

    /// Add cycles (trace costs).
    pub fn add_cycles(&mut self, cycles: u64) {
        self.extra_cycles = self.extra_cycles.saturating_add(cycles);
    }

    /// The date and time now.
    pub fn now(&self, machine_cycles: u64) -> DateTime {
        let ms = self.millis(machine_cycles);
        let [y, mo, d, h, mi, s] = self.start;
        let start_days = days_from_civil(i64::from(y), u32::from(mo), u32::from(d));
        let secs = i64::from(h) * 3600 + i64::from(mi) * 60 + i64::from(s) + (ms / 1000) as i64;
        let days = start_days + secs.div_euclid(86400);
        let sod = secs.rem_euclid(86400);
        let (yy, mm, dd) = civil_from_days(days);
        DateTime {
            year: yy as u16,
            month: mm as u8,
            day: dd as u8,
            hour: (sod / 3600) as u8,
            minute: (sod / 60 % 60) as u8,
            second: (sod % 60) as u8,
            hundredths: ((ms % 1000) / 10) as u8,
            weekday: (days + 4).rem_euclid(7) as u8,
        }
    }
}

impl DateTime {
    /// Seconds since 1970-01-01 00:00 (the clock keeps UTC: DosGetDateTime
    /// reports time zone 0), as QSV_TIME_LOW and gettimeofday give them.
    pub fn unix_seconds(&self) -> u32 {
        let days = days_from_civil(
            i64::from(self.year),
            u32::from(self.month),
            u32::from(self.day),
        );
        (days * 86400
            + i64::from(self.hour) * 3600
            + i64::from(self.minute) * 60
            + i64::from(self.second)) as u32
    }
}

/// A record's stamp and the clock cycles it holds for: the stamp only
/// changes every hundredth of a second, so a hit in the same hundredth
/// (the common case: a hit costs a few hundred cycles) reuses it instead
/// of converting the clock to a date.
#[derive(Clone, Copy, Debug, Default)]
pub struct StampCache {
    /// The clock it was computed for.
    hz: u64,
    start: [u16; 6],
    /// Clock cycles `from..until` have `stamp`.
    from: u64,
    until: u64,
    stamp: stda::Timestamp,
}

impl StampCache {
    /// `clock.now(machine_cycles)` as a record stamp.
    #[inline]
    pub fn stamp(&mut self, clock: &Clock, machine_cycles: u64) -> stda::Timestamp {
        let c = clock.cycles(machine_cycles);
        if (self.from..self.until).contains(&c) && self.hz == clock.hz && self.start == clock.start
        {
            return self.stamp;
        }
        self.refill(clock, machine_cycles)
    }

    #[cold]
    fn refill(&mut self, clock: &Clock, machine_cycles: u64) -> stda::Timestamp {
        let c = u128::from(clock.cycles(machine_cycles));
        let hz = u128::from(clock.hz.max(1));
        // Every field of the stamp is a function of the hundredths since
        // the start, floor(c * 100 / hz) (`millis` / 10, floored twice);
        // the cycles with the same hundredths run from ceil(h * hz / 100)
        // to ceil((h + 1) * hz / 100).
        let h = c * 100 / hz;
        let at = |h: u128| u64::try_from((h * hz).div_ceil(100)).unwrap_or(u64::MAX);
        self.hz = clock.hz;
        self.start = clock.start;
        self.from = at(h);
        self.until = at(h + 1);
        self.stamp = clock.now(machine_cycles).into();
        self.stamp
    }
}

/// The time of day as a trace record's stamp.
impl From<DateTime> for stda::Timestamp {
    fn from(t: DateTime) -> Self {
        stda::Timestamp::new(t.hour, t.minute, t.second, t.hundredths)
    }
}

/// The date and time as the trace buffer header's TRACE ON / TRACE OFF.
impl From<DateTime> for stda::TraceDateTime {
    fn from(t: DateTime) -> Self {
        stda::TraceDateTime {
            year: t.year,
            month: t.month,
            day: t.day,
            time: t.into(),
        }
    }
}

/// The date and time as DosGetDateTime gives it (UTC, so time zone 0): the
/// stamp of a save file.
impl From<DateTime> for stda::DosDateTime {
    fn from(t: DateTime) -> Self {
        stda::DosDateTime {
            time: t.into(),
            day: t.day,
            month: t.month,
            year: t.year,
            timezone: 0,
            weekday: t.weekday,
        }
    }
}

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// The civil date (year, month, day) of a day since 1970-01-01.
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_roll_over() {
        let mut c = Clock {
            hz: 1000,
            start: [1999, 12, 31, 23, 59, 59],
            extra_cycles: 0,
        };
        c.sleep(1500);
        let t = c.now(0);
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.minute, t.second),
            (2000, 1, 1, 0, 0, 0)
        );
        assert_eq!(t.hundredths, 50);
        assert_eq!(t.weekday, 6, "1 Jan 2000 was a Saturday");
    }

    #[test]
    fn cached_stamps_are_the_clock_s() {
        let mut c = Clock {
            hz: 33_000_000,
            start: [1996, 10, 9, 23, 59, 58],
            extra_cycles: 0,
        };
        let mut cache = StampCache::default();
        // Steps of odd sizes across hundredths, seconds and midnight, and
        // back in time (a cache built later must still answer earlier).
        let mut cycles = 0u64;
        for i in 0..20_000u64 {
            cycles += 1 + (i * 7919) % 40_000;
            for at in [cycles, cycles.saturating_sub(330_001)] {
                let want: stda::Timestamp = c.now(at).into();
                assert_eq!(cache.stamp(&c, at), want, "at {at}");
            }
        }
        // Exactly on the edges of a hundredth at an odd frequency.
        c.hz = 1_000_003;
        for h in 0..300u64 {
            let edge = (h * c.hz).div_ceil(100);
            for at in [edge.saturating_sub(1), edge, edge + 1] {
                let want: stda::Timestamp = c.now(at).into();
                assert_eq!(cache.stamp(&c, at), want, "at {at}");
            }
        }
        // A clock with added cycles, and a changed start.
        c.add_cycles(12_345_678);
        c.start[3] = 1;
        let want: stda::Timestamp = c.now(77).into();
        assert_eq!(cache.stamp(&c, 77), want);
    }

    #[test]
    fn times_convert_to_the_trace_formats() {
        let mut c = Clock {
            hz: 1000,
            start: [1996, 10, 9, 12, 34, 56],
            extra_cycles: 0,
        };
        c.sleep(780);
        let t = c.now(0);
        let stamp = stda::Timestamp::new(12, 34, 56, 78);
        assert_eq!(stda::Timestamp::from(t), stamp);
        let on = stda::TraceDateTime::from(t);
        assert_eq!((on.year, on.month, on.day, on.time), (1996, 10, 9, stamp));
        let dos = stda::DosDateTime::from(t);
        assert_eq!(
            (
                dos.year,
                dos.month,
                dos.day,
                dos.time,
                dos.timezone,
                dos.weekday
            ),
            (1996, 10, 9, stamp, 0, 3)
        );
    }
}
