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

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Mode {
    Formatted,
    Raw,
    Json,
}

/// `tracefmt`'s arguments.
#[derive(clap::Args, Debug)]
#[command(after_help = "/T=DIR is accepted for --tff DIR.")]
pub struct Args {
    /// A TRACEFMT save file (TRACEGET, TRSPOOL's TRACEBUF.nnn) or a bare STDA.
    file: String,
    /// /T=: the directory of the TRC00xx.TFF formatting files.
    #[arg(long, value_name = "DIR")]
    tff: Option<String>,
    /// One line per record: seq time major minor pid flags len data.
    #[arg(long, conflicts_with = "json")]
    raw: bool,
    /// The same as JSON lines (seq, time, major, minor, pid, flags, len, data).
    #[arg(long)]
    json: bool,
}

#[derive(Debug)]
struct Options {
    file: String,
    tff_dir: Option<String>,
    mode: Mode,
}

impl From<Args> for Options {
    fn from(a: Args) -> Options {
        let mode = if a.raw {
            Mode::Raw
        } else if a.json {
            Mode::Json
        } else {
            Mode::Formatted
        };
        Options {
            file: a.file,
            tff_dir: a.tff,
            mode,
        }
    }
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
pub fn run(args: Args) -> Result<i32> {
    let opts = Options::from(args);
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

    fn parse_args(v: &[&str]) -> Result<Options, clap::Error> {
        let mut all = vec!["tracefmt"];
        all.extend_from_slice(v);
        match crate::parse_for_test(&all)? {
            crate::Command::Tracefmt(a) => Ok(Options::from(a)),
            other => panic!("{other:?}"),
        }
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
        let opts = parse_args(&[&file, "--raw"]).unwrap();
        assert_eq!(
            render(&opts).unwrap().0,
            "1 12:00:00.05 00C5 0001 0003 0D 8 3412000300616263\n\
             2 12:00:01.00 00C5 0002 0003 0D 1 ff\n"
        );
        let opts = parse_args(&[&file, "--json"]).unwrap();
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
        assert!(parse_args(&["a", "b"]).is_err());
        assert!(parse_args(&["a", "--bogus"]).is_err());
        assert!(parse_args(&["a", "/bogus"]).is_err());
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("junk");
        std::fs::write(&f, b"not a trace file at all, no").unwrap();
        let opts = parse_args(&[f.to_str().unwrap()]).unwrap();
        let err = render(&opts).unwrap_err();
        assert!(format!("{err:#}").contains("check key"), "{err:#}");
    }
}
