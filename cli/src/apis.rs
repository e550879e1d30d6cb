//! `os2trace apis`: what the emulated OS/2 implements, against what
//! programs import and what IBM's import libraries define.
//!
//! - `os2trace apis [--json]`: every implemented system DLL entry (module,
//!   ordinal, convention, name) with the testprogs programs that call it.
//!   Coverage is measured, not declared: every testprogs program (each
//!   one is run by kernel_sim's tests) is built and run here with the API
//!   log on, and each entry lists the programs whose runs called it.
//! - `os2trace apis --missing MODULE`: the entries an LX or NE module
//!   imports that are not implemented: system DLL entries without an
//!   implementation, and imports of other DLLs not found beside the
//!   module. Prints nothing when everything is there.
//! - `os2trace apis --check OS2TK_DIR`: compares every system DLL entry of
//!   the toolkit's import libraries (`OS2TK_DIR/lib/*.lib`) with the API
//!   tables and the ordinal table (see `kernel_sim::api::ordinals`), prints
//!   the entries compared per DLL and each disagreement; exit 1 on any.
//! - `os2trace apis --facts OS2TK_DIR`: prints the ordinal table the
//!   libraries give (the text of `kernel_sim/src/api/ordinals.txt`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use kernel_sim::api::{self, ApiDef, Conv, ordinals};
use kernel_sim::{Process, ProcessConfig};
use loader::Target;
use serde_json::json;

/// `apis`'s arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// One JSON array instead of the table (with the default listing or
    /// --missing).
    #[arg(long, conflicts_with_all = ["check", "facts"])]
    json: bool,
    /// List what this LX or NE module imports that is not implemented.
    #[arg(long, value_name = "MODULE", conflicts_with_all = ["check", "facts"])]
    missing: Option<PathBuf>,
    /// Compare the API tables with the import libraries of this OS/2
    /// toolkit (its lib/ directory); exit 1 on any disagreement.
    #[arg(long, value_name = "OS2TK_DIR", conflicts_with = "facts")]
    check: Option<PathBuf>,
    /// Print the ordinal table this OS/2 toolkit's import libraries give.
    #[arg(long, value_name = "OS2TK_DIR")]
    facts: Option<PathBuf>,
}

/// Entry point of the subcommand.
pub fn run(args: Args) -> Result<i32> {
    if let Some(dir) = &args.check {
        return check(dir);
    }
    if let Some(dir) = &args.facts {
        let tk = toolkit(dir)?;
        let system: Vec<_> = tk
            .facts
            .into_iter()
            .filter(|f| api::is_system(&f.module))
            .collect();
        print!("{}", ordinals::format(&system));
        return Ok(0);
    }
    if let Some(module) = &args.missing {
        return missing(module, args.json);
    }
    list(args.json)
}

fn toolkit(dir: &Path) -> Result<ordinals::Toolkit> {
    ordinals::from_toolkit(dir).map_err(anyhow::Error::msg)
}

fn conv_text(c: Conv) -> &'static str {
    match c {
        Conv::Far16 => "16",
        Conv::Sys32 => "32",
        Conv::Value(_) => "value",
        Conv::Optlink => "optlink",
        Conv::Data(_) => "data",
    }
}

/// `--check`.
fn check(dir: &Path) -> Result<i32> {
    let tk = toolkit(dir)?;
    for (file, why) in &tk.skipped {
        println!("{file}: skipped ({why})");
    }
    let report = ordinals::check(&tk.facts);
    let mut total = 0;
    for (dll, n) in &report.compared {
        println!("{dll}: {n} entries compared");
        total += n;
    }
    println!(
        "{total} entries of {} system DLLs compared; {} disagreements",
        report.compared.len(),
        report.disagreements.len() + tk.problems.len()
    );
    for p in &tk.problems {
        println!("disagreement: {p}");
    }
    for d in &report.disagreements {
        println!("disagreement: {d}");
    }
    let bad = !report.disagreements.is_empty() || !tk.problems.is_empty();
    Ok(i32::from(bad))
}

/// One row of the listing.
struct Row {
    def: &'static ApiDef,
    covered_by: BTreeSet<&'static str>,
}

/// The implemented entries, with the testprogs programs that call them.
fn rows() -> Result<Vec<Row>> {
    let coverage = coverage()?;
    let mut rows: Vec<Row> = api::table()
        .filter(|d| d.is_implemented())
        .map(|def| Row {
            def,
            covered_by: coverage
                .get(&(def.module, def.ordinal))
                .cloned()
                .unwrap_or_default(),
        })
        .collect();
    rows.sort_by_key(|r| (r.def.module, r.def.ordinal));
    Ok(rows)
}

/// (module, ordinal) -> names of the testprogs programs whose runs call
/// it. The programs are written into one temporary directory (the DLLs
/// next to their callers) and each EXE is run with the API log on.
fn coverage() -> Result<BTreeMap<(&'static str, u32), BTreeSet<&'static str>>> {
    let mut programs = testprogs::all().context("building testprogs")?;
    programs.push(testprogs::ords16().context("building ORDS16")?);
    programs.extend(testprogs::debug_programs().context("building the debug programs")?);
    let dir = tempfile::tempdir().context("a temporary directory")?;
    for p in &programs {
        p.write_to(dir.path())
            .with_context(|| format!("writing {}", p.file_name))?;
    }
    let mut out: BTreeMap<(&'static str, u32), BTreeSet<&'static str>> = BTreeMap::new();
    for p in programs.iter().filter(|p| p.file_name.ends_with(".EXE")) {
        let mut cfg = ProcessConfig::new(dir.path(), p.file_name);
        cfg.api_log = true;
        cfg.max_instructions = Some(50_000_000);
        let mut process = Process::new(cfg).with_context(|| format!("loading {}", p.file_name))?;
        process.set_console(
            Box::new(std::io::sink()),
            Box::new(std::io::sink()),
            Box::new(std::io::empty()),
        );
        process.run();
        for e in process.api_log() {
            if let Some(def) = api::lookup(&e.module, e.ordinal) {
                out.entry((def.module, def.ordinal))
                    .or_default()
                    .insert(p.name);
            }
        }
    }
    Ok(out)
}

/// The default listing.
fn list(as_json: bool) -> Result<i32> {
    let rows = rows()?;
    if as_json {
        let v: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({
                    "module": r.def.module,
                    "ordinal": r.def.ordinal,
                    "name": r.def.name,
                    "conv": conv_text(r.def.conv),
                    "covered_by": r.covered_by,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(0);
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<9} {:>4} {:<5} {:<24} COVERED BY",
        "MODULE", "ORD", "BITS", "NAME"
    );
    for r in &rows {
        let by: Vec<_> = r.covered_by.iter().copied().collect();
        let by = if by.is_empty() {
            "-".to_string()
        } else {
            by.join(", ")
        };
        let _ = writeln!(
            s,
            "{:<9} {:>4} {:<5} {:<24} {by}",
            r.def.module,
            r.def.ordinal,
            conv_text(r.def.conv),
            r.def.name
        );
    }
    let covered = rows.iter().filter(|r| !r.covered_by.is_empty()).count();
    let _ = writeln!(
        s,
        "{} entries implemented; {covered} called by the testprogs programs",
        rows.len()
    );
    print!("{s}");
    Ok(0)
}

/// `--missing MODULE`.
fn missing(path: &Path, as_json: bool) -> Result<i32> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {file}"))?;
    let m = loader::parse(&bytes).with_context(|| format!("cannot read {file}"))?;
    let beside = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // (DLL, ordinal or name) -> (the entry's name, what is missing).
    let mut gaps: BTreeMap<(String, Result<u32, String>), (String, String)> = BTreeMap::new();
    for f in &m.fixups {
        let (module, entry) = match &f.target {
            Target::ImportOrdinal { module, ordinal } => (*module, Ok(*ordinal)),
            Target::ImportName { module, name } => (*module, Err(name.clone())),
            _ => continue,
        };
        let Some(dll) = usize::from(module)
            .checked_sub(1)
            .and_then(|i| m.imports.get(i))
        else {
            continue;
        };
        let key = (dll.to_ascii_uppercase(), entry.clone());
        if gaps.contains_key(&key) {
            continue;
        }
        let gap = if api::is_system(dll) {
            let def = match &entry {
                Ok(o) => api::lookup(dll, *o),
                Err(n) => api::lookup_name(dll, n),
            };
            match def {
                Some(d) if d.is_implemented() => None,
                Some(d) => Some((
                    d.name.to_string(),
                    format!("not implemented ({}-bit)", conv_text(d.conv)),
                )),
                None => Some((String::new(), "no such entry".to_string())),
            }
        } else if dll_beside(beside, dll) {
            None
        } else {
            Some((
                String::new(),
                "not a system DLL, and not beside the module".to_string(),
            ))
        };
        if let Some(g) = gap {
            gaps.insert(key, g);
        }
    }
    let shown = |(dll, entry): &(String, Result<u32, String>)| match entry {
        Ok(o) => format!("{dll}.{o}"),
        Err(n) => format!("{dll}.{n}"),
    };
    if as_json {
        let v: Vec<_> = gaps
            .iter()
            .map(|(k, (n, w))| json!({"entry": shown(k), "name": n, "what": w}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        for (k, (n, w)) in &gaps {
            println!("{:<16} {n:<32} {w}", shown(k));
        }
    }
    Ok(0)
}

/// Is `NAME.DLL` beside the module (any case)?
fn dll_beside(dir: &Path, dll: &str) -> bool {
    let want = format!("{dll}.DLL");
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .filter_map(|e| e.ok())
            .any(|e| e.file_name().to_string_lossy().eq_ignore_ascii_case(&want))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(a: &[&str]) -> Result<Args, clap::Error> {
        let mut all = vec!["apis"];
        all.extend_from_slice(a);
        match crate::parse_for_test(&all)? {
            crate::Command::Apis(a) => Ok(a),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn modes_exclude_each_other() {
        assert!(parse(&["--check", "x", "--facts", "y"]).is_err());
        assert!(parse(&["--json", "--check", "x"]).is_err());
        assert!(parse(&["--missing", "a.exe", "--json"]).is_ok());
        assert!(parse(&[]).is_ok());
    }

    #[test]
    fn coverage_is_measured_by_running_the_programs() {
        let rows = rows().unwrap();
        let find = |m: &str, o: u32| {
            rows.iter()
                .find(|r| r.def.module == m && r.def.ordinal == o)
        };
        // HELLO16 calls DosWrite (DOSCALLS.138) and DosExit (.5).
        assert!(
            find("DOSCALLS", 138)
                .unwrap()
                .covered_by
                .contains("HELLO16")
        );
        assert!(find("DOSCALLS", 5).unwrap().covered_by.contains("HELLO16"));
        // ORDS16 calls the entries moved to their proven ordinals.
        for o in [40, 42, 47, 120] {
            assert!(
                find("DOSCALLS", o).unwrap().covered_by.contains("ORDS16"),
                "{o}"
            );
        }
        assert!(find("VIOCALLS", 46).unwrap().covered_by.contains("ORDS16"));
    }
}
