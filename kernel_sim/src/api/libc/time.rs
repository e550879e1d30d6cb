//! Time: the emulated clock as `time_t` (seconds since 1970, the zone
//! UTC), `struct tm`, asctime's and strftime's text (C locale), and the
//! entries that use them.

use super::{D_ASCTIME, D_TM, cstr, data_or_stop, put_sz, rt, stack_arg, strings};
use crate::api::uconv::{rd32, read, wr32, write};
use crate::api::{Call, Stop};
use crate::clock::{civil_from_days as civil, days_from_civil};
use crate::process::Process;

/// `struct tm` of the emulated clock's time `t` (seconds since 1970).
pub(super) fn tm_of(t: i64) -> [i32; 9] {
    let days = t.div_euclid(86400);
    let secs = t.rem_euclid(86400);
    let (y, m, d) = civil(days);
    let yday = days - days_from_civil(y, 1, 1);
    let wday = (days + 4).rem_euclid(7);
    [
        (secs % 60) as i32,
        (secs / 60 % 60) as i32,
        (secs / 3600) as i32,
        d as i32,
        m as i32 - 1,
        (y - 1900) as i32,
        wday as i32,
        yday as i32,
        0,
    ]
}

/// The emulated clock's time in seconds since 1970 (UTC).
pub(super) fn now_secs(p: &Process) -> i64 {
    i64::from(p.now().unix_seconds())
}

fn read_tm(p: &mut Process, addr: u32) -> Result<[i32; 9], Stop> {
    let b = read(p, addr, 36)?;
    let mut tm = [0i32; 9];
    for (i, v) in tm.iter_mut().enumerate() {
        *v = i32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
    }
    Ok(tm)
}

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const DAYS_LONG: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS_LONG: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

fn name_of(t: &[&'static str], i: i32) -> &'static str {
    usize::try_from(i)
        .ok()
        .and_then(|i| t.get(i))
        .copied()
        .unwrap_or("???")
}

/// asctime's text of a `struct tm`.
fn asctime_text(tm: &[i32; 9]) -> String {
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}\n",
        name_of(&DAYS, tm[6]),
        name_of(&MONTHS, tm[4]),
        tm[3],
        tm[2],
        tm[1],
        tm[0],
        i64::from(tm[5]) + 1900
    )
}

/// strftime's text (C locale), cut once it is longer than `max`.
fn strftime_text(fmt: &[u8], tm: &[i32; 9], tz: &str, max: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < fmt.len() && out.len() <= max {
        if fmt[i] != b'%' || i + 1 >= fmt.len() {
            out.push(fmt[i]);
            i += 1;
            continue;
        }
        let c = fmt[i + 1];
        i += 2;
        let year = i64::from(tm[5]) + 1900;
        let hour12 = if tm[2] % 12 == 0 { 12 } else { tm[2] % 12 };
        let t = match c {
            b'a' => name_of(&DAYS, tm[6]).to_string(),
            b'A' => name_of(&DAYS_LONG, tm[6]).to_string(),
            b'b' | b'h' => name_of(&MONTHS, tm[4]).to_string(),
            b'B' => name_of(&MONTHS_LONG, tm[4]).to_string(),
            b'c' => asctime_text(tm).trim_end().to_string(),
            b'd' => format!("{:02}", tm[3]),
            b'H' => format!("{:02}", tm[2]),
            b'I' => format!("{hour12:02}"),
            b'j' => format!("{:03}", tm[7] + 1),
            b'm' => format!("{:02}", tm[4] + 1),
            b'M' => format!("{:02}", tm[1]),
            b'p' => (if tm[2] < 12 { "AM" } else { "PM" }).to_string(),
            b'S' => format!("{:02}", tm[0]),
            b'U' => format!("{:02}", (tm[7] + 7 - tm[6]) / 7),
            b'W' => format!("{:02}", (tm[7] + 7 - (tm[6] + 6) % 7) / 7),
            b'w' => tm[6].to_string(),
            b'x' => format!("{:02}/{:02}/{:02}", tm[4] + 1, tm[3], year.rem_euclid(100)),
            b'X' => format!("{:02}:{:02}:{:02}", tm[2], tm[1], tm[0]),
            b'y' => format!("{:02}", year.rem_euclid(100)),
            b'Y' => year.to_string(),
            b'Z' => tz.to_string(),
            b'%' => "%".to_string(),
            other => format!("%{}", char::from(other)),
        };
        out.extend_from_slice(t.as_bytes());
    }
    out
}

/// asctime(tm): the runtime's buffer.
pub(super) fn asctime(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let tm = read_tm(p, c.l(0))?;
    let d = data_or_stop(p)?;
    put_sz(p, d + D_ASCTIME, asctime_text(&tm).as_bytes())?;
    Ok(d + D_ASCTIME)
}

/// localtime(&t): the runtime's `struct tm` (the zone is UTC).
pub(super) fn localtime(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let t = rd32(p, c.l(0))? as i32;
    let tm = tm_of(i64::from(t));
    let d = data_or_stop(p)?;
    let bytes: Vec<u8> = tm.iter().flat_map(|v| v.to_le_bytes()).collect();
    write(p, d + D_TM, &bytes)?;
    Ok(d + D_TM)
}

/// strftime(buf, n, fmt, tm): the length, or 0 when it does not fit.
pub(super) fn strftime(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let fmt = cstr(p, c.l(2))?;
    let tm_at = stack_arg(p, 16)?;
    let tm = read_tm(p, tm_at)?;
    let tz = rt(p).tz.clone();
    let tz = if tz.is_empty() { "UTC" } else { &tz };
    let text = strftime_text(&fmt, &tm, tz, c.l(1) as usize);
    if text.len() as u32 >= c.l(1) {
        return Ok(0);
    }
    put_sz(p, c.l(0), &text)?;
    Ok(text.len() as u32)
}

/// time(&t): the emulated clock's seconds since 1970.
pub(super) fn time(p: &mut Process, c: &Call) -> Result<u32, Stop> {
    let t = now_secs(p) as u32;
    if c.l(0) != 0 {
        wr32(p, c.l(0), t)?;
    }
    Ok(t)
}

/// _tzset: TZ's name, for strftime's `%Z`.
pub(super) fn tzset(p: &mut Process, _c: &Call) -> Result<u32, Stop> {
    let tz = strings::env_value(p, b"TZ")?.unwrap_or_default();
    let name: String = tz
        .iter()
        .take_while(|b| b.is_ascii_alphabetic())
        .map(|&b| char::from(b))
        .collect();
    rt(p).tz = name;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11017);
        assert_eq!(civil(11017), (2000, 3, 1));
        let tm = tm_of(951_782_400 + 3661); // 2000-02-29 01:01:01, a Tuesday
        assert_eq!(tm, [1, 1, 1, 29, 1, 100, 2, 59, 0]);
        assert_eq!(asctime_text(&tm), "Tue Feb 29 01:01:01 2000\n");
        assert_eq!(
            strftime_text(b"%Y-%m-%d %H:%M:%S %a %B %j %p %%", &tm, "UTC", 100),
            b"2000-02-29 01:01:01 Tue February 060 AM %"
        );
    }
}
