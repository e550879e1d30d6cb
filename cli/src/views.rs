//! The views over trace files: `tdf list`, `export` and `browse` (the
//! work is in the `view` crate; `tracefmt` has its own module). Their
//! arguments are clap derive structs on the binary's one argument layer;
//! `args.rs` translates `/T=DIR` and `/M=MAP` to `--tff` and `--map`.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use view::filter::{Bound, Filter};
use view::render::Formatter;

/// A code list: hex numbers as the output prints them (`00C2`, `C2`,
/// `0xC2`), separated by commas.
pub fn codes(text: &str) -> Result<Vec<u16>, String> {
    text.split(',')
        .map(|c| {
            let c = c.trim();
            let digits = c
                .strip_prefix("0x")
                .or_else(|| c.strip_prefix("0X"))
                .unwrap_or(c);
            u16::from_str_radix(digits, 16).map_err(|_| format!("'{c}' is not a hex code"))
        })
        .collect()
}

/// The record selection options shared by `tracefmt`, `export` and
/// `browse`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct FilterArgs {
    /// Keep these majors (hex, comma-separated: 00C2,C5).
    #[arg(long, value_parser = codes)]
    pub major: Vec<Vec<u16>>,
    /// Keep these minors (hex).
    #[arg(long, value_parser = codes)]
    pub minor: Vec<Vec<u16>>,
    /// Keep these PIDs (hex).
    #[arg(long, value_parser = codes)]
    pub pid: Vec<Vec<u16>>,
    /// First record: a sequence number, an OS/2 time (12:00:01.50) or an
    /// emulated time (1.5ms, with a sidecar).
    #[arg(long)]
    pub from: Option<Bound>,
    /// Last record, as --from.
    #[arg(long)]
    pub to: Option<Bound>,
    /// Keep records whose formatted text contains TEXT (any case).
    #[arg(long, value_name = "TEXT")]
    pub grep: Option<String>,
}

impl FilterArgs {
    /// The filter.
    pub fn filter(&self) -> Filter {
        Filter {
            majors: self.major.concat(),
            minors: self.minor.concat(),
            pids: self.pid.concat(),
            from: self.from,
            to: self.to,
            grep: self.grep.clone(),
        }
    }
}

/// Reads the files and the TFF rules; prints warnings and hints.
pub fn load(files: &[PathBuf], tff: &[PathBuf]) -> Result<(view::trace::Trace, Formatter)> {
    for d in tff {
        if !d.is_dir() {
            bail!("/T={}: not a directory", d.display());
        }
    }
    let trace = view::trace::load(files)?;
    for w in &trace.warnings {
        eprintln!("os2trace: warning: {w}");
    }
    let (fmt, warnings) = Formatter::load(tff, &trace);
    for w in warnings {
        eprintln!("os2trace: {w}");
    }
    Ok((trace, fmt))
}

/// The entries the filter keeps.
pub fn select<'a>(
    trace: &'a view::trace::Trace,
    fmt: &Formatter,
    filter: &Filter,
) -> Vec<&'a view::trace::Entry> {
    trace
        .entries
        .iter()
        .filter(|e| {
            filter.keeps_fields(e)
                && (filter.grep.is_none() || filter.keeps(e, &fmt.search_text(e)))
        })
        .collect()
}

/// The help after `tdf list`'s options.
pub const LIST_AFTER_HELP: &str = "PATTERN is a glob (*, ?, [..]) over the module, MODULE:MINOR, \
type and group names, symbol and DESC, any case. /T=DIR is accepted for --tff, /M=MAP for --map.";

/// `os2trace tdf list FILE.TDF [FILE.TFF|/T=DIR] [/M=MAP] [PATTERN] [--json]`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// The trace definition file.
    tdf: PathBuf,
    /// A TFF file, then an optional glob PATTERN (a second argument that is
    /// not a .TFF file is the pattern).
    rest: Vec<String>,
    /// Directory of TRC0xxx.TFF files (also /T=DIR).
    #[arg(long)]
    tff: Option<PathBuf>,
    /// Linker MAP file (also /M=MAP).
    #[arg(long)]
    map: Option<PathBuf>,
    /// One JSON object per tracepoint, one per line.
    #[arg(long)]
    json: bool,
}

/// `os2trace tdf list`.
pub fn tdf_list(a: ListArgs) -> Result<i32> {
    let read =
        |p: &PathBuf| std::fs::read(p).with_context(|| format!("cannot read {}", p.display()));
    let tdf_file = tdf::Tdf::parse(&read(&a.tdf)?).with_context(|| a.tdf.display().to_string())?;
    let mut tff_path = None;
    let mut pattern = None;
    for r in &a.rest {
        let p = PathBuf::from(r);
        if tff_path.is_none() && pattern.is_none() && p.is_file() {
            tff_path = Some(p);
        } else if pattern.is_none() {
            pattern = Some(r.clone());
        } else {
            eprintln!("os2trace tdf list: unexpected argument '{r}'");
            return Ok(2);
        }
    }
    if tff_path.is_none()
        && let Some(dir) = &a.tff
    {
        tff_path = find_tff(dir, tdf_file.major);
        if tff_path.is_none() {
            eprintln!(
                "os2trace tdf list: hint: no TFF found for major {:04X} in {}: DESC not shown",
                tdf_file.major,
                dir.display()
            );
        }
    }
    let tff = match &tff_path {
        Some(p) => Some(stda::tff::Tff::parse(&read(p)?).with_context(|| p.display().to_string())?),
        None => None,
    };
    let map = match &a.map {
        Some(p) => Some(
            tdf::module::symbols_from_map(&read(p)?).with_context(|| p.display().to_string())?,
        ),
        None => None,
    };
    let rows = view::listing::list(&tdf_file, tff.as_ref(), map.as_ref(), pattern.as_deref())?;
    for r in &rows {
        if a.json {
            println!("{}", serde_json::to_string(r)?);
        } else {
            println!("{}", r.line());
        }
    }
    Ok(if rows.is_empty() && pattern.is_some() {
        1
    } else {
        0
    })
}

/// `TRCnnxx.TFF` for a major in a directory, any case.
fn find_tff(dir: &std::path::Path, major: u16) -> Option<PathBuf> {
    let want = stda::tff::Tff::file_name(major);
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| Some(e.ok()?.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.eq_ignore_ascii_case(&want))
        })
}

/// `os2trace export`'s arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "/T=DIR is accepted for --tff.")]
pub struct ExportArgs {
    /// Save files, spool files or TRSPOOL directories (with FILE.idx
    /// sidecars when there are).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Write Perfetto's protobuf trace format.
    #[arg(long, value_name = "OUT.pftrace")]
    perfetto: Option<PathBuf>,
    /// Write the Chrome JSON trace-event format.
    #[arg(long, value_name = "OUT.json")]
    chrome: Option<PathBuf>,
    /// Draw hits, cost per tracepoint and the timeline as SVG.
    #[arg(long, value_name = "OUT.svg")]
    svg: Option<PathBuf>,
    /// Directory of TRC00xx.TFF files (also /T=DIR); repeatable.
    #[arg(long)]
    tff: Vec<PathBuf>,
    #[command(flatten)]
    filter: FilterArgs,
}

/// `os2trace export`.
pub fn export(a: ExportArgs) -> Result<i32> {
    if a.perfetto.is_none() && a.chrome.is_none() && a.svg.is_none() {
        eprintln!("os2trace export: give --perfetto OUT, --chrome OUT or --svg OUT");
        return Ok(2);
    }
    let inputs: Vec<&std::path::Path> = a.files.iter().map(PathBuf::as_path).collect();
    for out in [&a.perfetto, &a.chrome, &a.svg].into_iter().flatten() {
        crate::util::refuse_overwrite(out, &inputs)?;
    }
    let (trace, fmt) = load(&a.files, &a.tff)?;
    let entries = select(&trace, &fmt, &a.filter.filter());
    if let Some(out) = &a.perfetto {
        let bytes = view::perfetto::to_perfetto(&entries, &fmt);
        outfile::write_atomic(out, &bytes)?;
        println!(
            "{}: {} records, {} bytes (Perfetto)",
            out.display(),
            entries.len(),
            bytes.len()
        );
    }
    if let Some(out) = &a.chrome {
        let doc = view::perfetto::to_chrome(&entries, &fmt);
        let text = serde_json::to_string_pretty(&doc)?;
        outfile::write_atomic(out, text.as_bytes())?;
        println!(
            "{}: {} records (Chrome trace JSON)",
            out.display(),
            entries.len()
        );
    }
    if let Some(out) = &a.svg {
        let svg = view::plot::Plot::from_entries(&entries)
            .to_svg()
            .map_err(anyhow::Error::msg)?;
        outfile::write_atomic(out, svg.as_bytes())?;
        println!("{}: {} records (SVG)", out.display(), entries.len());
    }
    Ok(0)
}

/// `os2trace browse`'s arguments.
#[derive(Debug, clap::Args)]
#[command(after_help = "/T=DIR is accepted for --tff.")]
pub struct BrowseArgs {
    /// Save files, spool files or TRSPOOL directories.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Directory of TRC00xx.TFF files (also /T=DIR); repeatable.
    #[arg(long)]
    tff: Vec<PathBuf>,
    #[command(flatten)]
    filter: FilterArgs,
}

/// `os2trace browse`.
pub fn browse(a: BrowseArgs) -> Result<i32> {
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        bail!("browse needs a terminal (use tracefmt for text)");
    }
    let (trace, fmt) = load(&a.files, &a.tff)?;
    for h in fmt.hints(&trace) {
        eprintln!("os2trace browse: {h}");
    }
    let mut app = view::browse::App::new(trace, fmt, a.filter.filter());
    view::browse::run(&mut app)?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_hex() {
        assert_eq!(codes("00C2,c5,0x10"), Ok(vec![0xC2, 0xC5, 0x10]));
        assert!(codes("zz").is_err());
    }
}
