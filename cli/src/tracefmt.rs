//! `os2trace tracefmt FILE... [/T=DIR] [--raw|--json] [filters] [--follow]`:
//! prints the records of TRACEFMT save files (or bare STDAs), oldest
//! first; the reading, filtering and formatting are the `view` crate's.
//!
//! * Several files print in the order given; a directory stands for its
//!   TRSPOOL files `TRACEBUF.nnn`, put in capture order. With more than one
//!   file, each starts with a `--- FILE` line: capture time, record count,
//!   records lost to wraps (from the sidecar `FILE.idx`) and the spool
//!   files missing before it.
//! * Without `--raw` or `--json` the records are formatted with the TFF
//!   rules found as `TRC00xx.TFF` in the `/T=` directories (`--tff DIR`
//!   also works); a major with no rule prints as a hex dump, and a hint on
//!   stderr says so ("no TFF found for major 00C2 in DIR").
//! * `--json`: one object per line, the raw fields beside the DESC, the
//!   formatted lines and the decoded fields (name, control, value) when a
//!   rule formats the record, and the fine time when a sidecar is there
//!   (see `view::render`).
//! * `--raw`: `seq time major minor pid flags len data`, then the
//!   sidecar's emulated ns and TID when there is one.
//! * `--major/--minor/--pid/--from/--to/--grep` select records
//!   (`view::filter`); sequence numbers stay those of the whole trace.
//! * `--follow DIR`: formats the spool files of a running `run --spool DIR`
//!   as they appear, polling every `--poll-ms`, until `--idle-exit SECS`
//!   pass with no new file (or for ever).

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;
use view::render::{Formatter, series_line};
use view::trace::Trace;

use crate::views::{FilterArgs, load, select};

/// `tracefmt`'s arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "/T=DIR is accepted for --tff DIR.")]
pub struct Args {
    /// Save files (TRACEGET, TRSPOOL's TRACEBUF.nnn), bare STDAs, or TRSPOOL
    /// directories.
    #[arg(required_unless_present = "follow")]
    files: Vec<PathBuf>,
    /// Directory of the TRC00xx.TFF formatting files (also /T=DIR);
    /// repeatable, earlier ones first.
    #[arg(long)]
    tff: Vec<PathBuf>,
    /// One line per record: seq time major minor pid flags len data.
    #[arg(long, conflicts_with = "json")]
    raw: bool,
    /// One JSON object per record, with decoded fields.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    filter: FilterArgs,
    /// Format the spool files of DIR as they are written.
    #[arg(long, value_name = "DIR")]
    follow: Option<PathBuf>,
    /// How often --follow looks, ms.
    #[arg(long, default_value_t = 200)]
    poll_ms: u64,
    /// Stop --follow after SECS with no new spool file.
    #[arg(long, value_name = "SECS")]
    idle_exit: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Formatted,
    Raw,
    Json,
}

fn mode(a: &Args) -> Mode {
    if a.raw {
        Mode::Raw
    } else if a.json {
        Mode::Json
    } else {
        Mode::Formatted
    }
}

/// The text of the kept records, with the series lines of a multi-file
/// trace.
fn render(trace: &Trace, fmt: &Formatter, a: &Args, series: bool) -> String {
    let filter = a.filter.filter();
    let kept = select(trace, fmt, &filter);
    let mode = mode(a);
    let mut out = String::new();
    let mut next_source = 0;
    for e in kept {
        while next_source <= e.source {
            let s = &trace.sources[next_source];
            if series && mode != Mode::Json {
                out.push_str(&series_line(s));
                out.push('\n');
            }
            if mode == Mode::Formatted
                && let Some(t) = s.times
            {
                out.push_str(&format!("Trace On at {}\nTrace Off at {}\n", t.on, t.off));
            }
            next_source += 1;
        }
        match mode {
            Mode::Raw => {
                out.push_str(&stda::tracefmt::raw_line(e.seq, &e.record));
                if let Some(f) = e.fine {
                    out.push_str(&format!(" {} {:04X}", f.ns, f.tid));
                }
            }
            Mode::Json => out.push_str(&fmt.json(e, &trace.sources).to_string()),
            Mode::Formatted => out.push_str(&fmt.lines(e).join("\n")),
        }
        out.push('\n');
    }
    // Files with no kept records still show their series line.
    if series && mode != Mode::Json {
        for s in &trace.sources[next_source.min(trace.sources.len())..] {
            out.push_str(&series_line(s));
            out.push('\n');
        }
    }
    out
}

/// Entry point.
pub fn run(a: Args) -> Result<i32> {
    if let Some(dir) = a.follow.clone() {
        return follow(&a, dir);
    }
    let (trace, fmt) = load(&a.files, &a.tff)?;
    if mode(&a) == Mode::Formatted {
        for h in fmt.hints(&trace) {
            eprintln!("os2trace tracefmt: {h}");
        }
    }
    let out = render(&trace, &fmt, &a, trace.sources.len() > 1);
    let mut stdout = std::io::stdout().lock();
    // Guest text (%S) must not send escape sequences to the terminal; JSON
    // and raw lines have no control characters to escape.
    stdout.write_all(crate::util::escape_controls(&out).as_bytes())?;
    stdout.flush()?;
    Ok(0)
}

/// `--follow DIR`: prints each spool file once it is written (and again
/// when the cycle overwrites it), sequence numbers running on.
fn follow(a: &Args, dir: PathBuf) -> Result<i32> {
    let mut seen: HashMap<PathBuf, (SystemTime, u64)> = HashMap::new();
    let mut last_new = Instant::now();
    let mut seq = 0usize;
    let mut hinted = false;
    let mut stdout = std::io::stdout();
    loop {
        let mut fresh = Vec::new();
        if let Ok(rd) = std::fs::read_dir(&dir) {
            for e in rd.flatten() {
                let p = e.path();
                if view::trace::spool_number(&p).is_none() {
                    continue;
                }
                let Ok(md) = e.metadata() else { continue };
                let stamp = (md.modified().unwrap_or(SystemTime::UNIX_EPOCH), md.len());
                if seen.get(&p) != Some(&stamp) {
                    fresh.push((p, stamp));
                }
            }
        }
        // A file being written may not parse yet: try it again next time.
        let mut loaded = Vec::new();
        for (p, stamp) in fresh {
            if let Ok(t) = view::trace::load(std::slice::from_ref(&p)) {
                seen.insert(p, stamp);
                loaded.push(t);
            }
        }
        // Capture order; files of one poll time in the order of the cycle.
        loaded.sort_by_key(|t| {
            t.sources.first().map(|s| {
                let d = s.captured.unwrap_or_default();
                let t = d.time;
                let when = (
                    d.year,
                    d.month,
                    d.day,
                    t.hours,
                    t.minutes,
                    t.seconds,
                    t.hundredths,
                );
                (when, s.spool_number)
            })
        });
        for mut t in loaded {
            for e in &mut t.entries {
                seq += 1;
                e.seq = seq;
            }
            let (fmt, warnings) = Formatter::load(&a.tff, &t);
            for w in warnings {
                eprintln!("os2trace tracefmt: {w}");
            }
            if !hinted && mode(a) == Mode::Formatted {
                for h in fmt.hints(&t) {
                    eprintln!("os2trace tracefmt: {h}");
                    hinted = true;
                }
            }
            stdout
                .write_all(crate::util::escape_controls(&render(&t, &fmt, a, true)).as_bytes())?;
            stdout.flush()?;
            last_new = Instant::now();
        }
        if let Some(idle) = a.idle_exit
            && last_new.elapsed() >= Duration::from_secs_f64(idle.max(0.0))
        {
            return Ok(0);
        }
        std::thread::sleep(Duration::from_millis(a.poll_ms.max(10)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stda::fmt::compile_fmt;
    use stda::tff::{Tff, TffRecord};
    use stda::{DosDateTime, RecordFlags, RecordIn, StdaFormat, Timestamp, TraceBuffer};

    fn parse_args(v: &[&str]) -> Result<Args, clap::Error> {
        let mut all = vec!["tracefmt"];
        all.extend_from_slice(v);
        match crate::parse_for_test(&all)? {
            crate::Command::Tracefmt(a) => Ok(a),
            other => panic!("{other:?}"),
        }
    }

    /// The output and warnings of a command line.
    fn output(a: &Args) -> Result<(String, Vec<String>)> {
        let (trace, fmt) = load(&a.files, &a.tff)?;
        let hints = fmt.hints(&trace);
        Ok((render(&trace, &fmt, a, trace.sources.len() > 1), hints))
    }

    /// A save file with three records (one with no rule) and a TFF for 0xC5.
    fn fixture() -> (tempfile::TempDir, String, String) {
        let dir = tempfile::tempdir().unwrap();
        let mut buf = TraceBuffer::new(StdaFormat::New, 1).unwrap();
        let r = |minor, data: &'static [u8]| RecordIn {
            major: 0xC5,
            minor,
            pid: 3,
            flags: RecordFlags::API | RecordFlags::PROTECT | RecordFlags::DYNAMIC,
            data,
        };
        buf.log(
            &r(1, &[0x34, 0x12, 0, 3, 0, b'a', b'b', b'c']),
            Timestamp::new(12, 0, 0, 5),
        )
        .unwrap();
        buf.log(&r(2, &[0xFF]), Timestamp::new(12, 0, 1, 0))
            .unwrap();
        let save = stda::savefile::traceget(&mut buf, DosDateTime::default());
        let file = dir.path().join("TRACE.SAV");
        std::fs::write(&file, save.to_bytes()).unwrap();
        let tffs = dir.path().join("tff");
        std::fs::create_dir(&tffs).unwrap();
        let tff = Tff {
            major: 0xC5,
            records: vec![TffRecord {
                minor: 1,
                desc: b"(TEST) Hello Pre-Invocation".to_vec(),
                fmts: vec![compile_fmt(b"w = %W"), compile_fmt(b"s = %P%S")],
            }],
        };
        // Lower case: found regardless of case, as on OS/2.
        std::fs::write(tffs.join("trc00c5.tff"), tff.to_bytes()).unwrap();
        let f = file.to_str().unwrap().to_string();
        let t = tffs.to_str().unwrap().to_string();
        (dir, f, t)
    }

    #[test]
    fn formats_raw_and_json() {
        let (_dir, file, tffs) = fixture();
        let opts = parse_args(&[&file, &format!("/T={tffs}")]).unwrap();
        let (out, hints) = output(&opts).unwrap();
        assert_eq!(
            hints,
            ["hint: TRC00C5.TFF has no rule for some minors of major 00C5: those print as hex"]
        );
        assert_eq!(
            out,
            "Trace On at 0000-00-00 00:00:00.00\n\
             Trace Off at 0000-00-00 00:00:00.00\n\
             \x20   1  12:00:00.05  MAJ=00C5 MIN=0001 PID=0003 CONTEXT=API:PROTECT DYNAMIC\n\
             \x20  (TEST) Hello Pre-Invocation\n\
             \x20  w = 1234\n\
             \x20  s = abc\n\
             \x20   2  12:00:01.00  MAJ=00C5 MIN=0002 PID=0003 CONTEXT=API:PROTECT DYNAMIC\n\
             \x20  Data [+0000  FF                                               . ]\n"
        );
        let opts = parse_args(&[&file, "--raw"]).unwrap();
        assert_eq!(
            output(&opts).unwrap().0,
            "1 12:00:00.05 00C5 0001 0003 0D 8 3412000300616263\n\
             2 12:00:01.00 00C5 0002 0003 0D 1 ff\n"
        );
        let opts = parse_args(&[&file, "--json"]).unwrap();
        let out = output(&opts).unwrap().0;
        let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        assert_eq!(
            first,
            serde_json::json!({"seq": 1, "time": "12:00:00.05", "major": 197, "minor": 1,
                "pid": 3, "flags": 13, "len": 8, "data": "3412000300616263"})
        );
    }

    #[test]
    fn bad_usage_and_bad_files() {
        assert!(parse_args(&[]).is_err());
        assert!(parse_args(&["a", "--raw", "--json"]).is_err());
        assert!(parse_args(&["a", "--bogus"]).is_err());
        assert!(parse_args(&["a", "/bogus"]).is_err());
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("junk");
        std::fs::write(&f, b"not a trace file at all, no").unwrap();
        let opts = parse_args(&[f.to_str().unwrap()]).unwrap();
        let err = output(&opts).unwrap_err();
        assert!(format!("{err:#}").contains("check key"), "{err:#}");
    }
}
