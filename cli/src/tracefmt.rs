//! `os2trace tracefmt FILE [/T=DIR] [--raw] [--json]`: prints the records
//! of a TRACEFMT save file (or a bare STDA), oldest first.
//!
//! Without `--raw` or `--json` the records are formatted with the TFF rules
//! found as `TRC00xx.TFF` in the `/T=` directory (`--tff DIR` also works);
//! without that directory every record prints as a hex dump. The output
//! layouts are described in the `stda::tracefmt` module docs.

use std::io::Write;

use anyhow::{Context, Result, bail};
use stda::Stda;
use stda::savefile::SaveFile;
use stda::tracefmt::{Rules, format_stda, json_line, raw_line};

const USAGE: &str = "usage: os2trace tracefmt FILE [/T=DIR] [--raw] [--json]
  FILE      a TRACEFMT save file (TRACEGET, TRSPOOL's TRACEBUF.nnn) or a bare STDA
  /T=DIR    directory of the TRC00xx.TFF formatting files (also --tff DIR)
  --raw     one line per record: seq time major minor pid flags len data
  --json    the same as JSON lines (seq, time, major, minor, pid, flags, len, data)
";

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Mode {
    Formatted,
    Raw,
    Json,
}

#[derive(Debug)]
struct Options {
    file: String,
    tff_dir: Option<String>,
    mode: Mode,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut file = None;
    let mut tff_dir = None;
    let mut mode = Mode::Formatted;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let upper = a.to_ascii_uppercase();
        if upper.starts_with("/T=") || upper.starts_with("-T=") {
            tff_dir = Some(a[3..].to_string());
        } else if a == "--tff" {
            tff_dir = Some(it.next().ok_or("--tff needs a directory")?.clone());
        } else if a == "--raw" {
            mode = Mode::Raw;
        } else if a == "--json" {
            mode = Mode::Json;
        } else if a.starts_with("--") {
            return Err(format!("unknown option '{a}'"));
        } else if file.is_none() {
            file = Some(a.clone());
        } else {
            return Err(format!("unexpected argument '{a}'"));
        }
    }
    Ok(Options {
        file: file.ok_or("no FILE given")?,
        tff_dir,
        mode,
    })
}

/// The text to print, and warnings for stderr.
fn render(opts: &Options) -> Result<(String, Vec<String>)> {
    let bytes = std::fs::read(&opts.file).with_context(|| format!("cannot read {}", opts.file))?;
    let save;
    let stda_bytes: &[u8] = if bytes.starts_with(stda::MAGIC) {
        &bytes
    } else {
        save = SaveFile::parse(&bytes).with_context(|| opts.file.clone())?;
        &save.stda
    };
    let stda = Stda::parse(stda_bytes).with_context(|| opts.file.clone())?;
    let mut warnings = Vec::new();
    let out = match opts.mode {
        Mode::Raw | Mode::Json => {
            let mut out = String::new();
            for (i, rec) in stda.forward().enumerate() {
                out.push_str(&if opts.mode == Mode::Raw {
                    raw_line(i + 1, &rec)
                } else {
                    json_line(i + 1, &rec)
                });
                out.push('\n');
            }
            out
        }
        Mode::Formatted => {
            let rules = match &opts.tff_dir {
                None => Rules::new(),
                Some(dir) => {
                    let dir = std::path::Path::new(dir);
                    if !dir.is_dir() {
                        bail!("/T={}: not a directory", dir.display());
                    }
                    let majors = stda.walk_back().map(|r| r.major);
                    let (rules, errors) = Rules::load_dir(dir, majors);
                    warnings.extend(errors.iter().map(|e| format!("warning: {e}")));
                    rules
                }
            };
            format_stda(&stda, &rules)
        }
    };
    Ok((out, warnings))
}

/// Entry point.
pub fn run(args: &[String]) -> Result<i32> {
    if args.iter().any(|a| a == "--help" || a == "-h" || a == "/?") {
        print!("{USAGE}");
        return Ok(0);
    }
    let opts = match parse_args(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("os2trace tracefmt: {e}");
            eprint!("{USAGE}");
            return Ok(2);
        }
    };
    let (out, warnings) = render(&opts)?;
    for w in warnings {
        eprintln!("os2trace tracefmt: {w}");
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use stda::fmt::compile_fmt;
    use stda::tff::{Tff, TffRecord};
    use stda::{DosDateTime, RecordFlags, RecordIn, StdaFormat, Timestamp, TraceBuffer};

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
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
        let opts = parse_args(&args(&[&file, &format!("/T={tffs}")])).unwrap();
        let (out, warnings) = render(&opts).unwrap();
        assert!(warnings.is_empty());
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
        let opts = parse_args(&args(&[&file, "--raw"])).unwrap();
        assert_eq!(
            render(&opts).unwrap().0,
            "1 12:00:00.05 00C5 0001 0003 0D 8 3412000300616263\n\
             2 12:00:01.00 00C5 0002 0003 0D 1 ff\n"
        );
        let opts = parse_args(&args(&[&file, "--json"])).unwrap();
        let out = render(&opts).unwrap().0;
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
        assert!(parse_args(&args(&["a", "b"])).is_err());
        assert!(parse_args(&args(&["a", "--bogus"])).is_err());
        assert_eq!(run(&args(&["--bogus"])).unwrap(), 2);
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("junk");
        std::fs::write(&f, b"not a trace file at all, no").unwrap();
        let opts = parse_args(&args(&[f.to_str().unwrap()])).unwrap();
        let err = render(&opts).unwrap_err();
        assert!(format!("{err:#}").contains("check key"), "{err:#}");
    }
}
