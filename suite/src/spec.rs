//! Suite files: the TOML model, and its expansion into concrete cases.
//!
//! A suite file holds an optional `[suite]` table and any number of
//! `[[case]]` tables. A case with `each = "GLOB"` is a template: it stands
//! for one case per file the glob matches, with `{name}` (the file name),
//! `{stem}` (the name without its extension) and `{ext}` substituted in
//! every string of the case. See the crate docs for every field.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::source::{SourceError, Sources};

/// One suite file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteFile {
    /// Suite-wide settings.
    #[serde(default)]
    pub suite: SuiteHeader,
    /// The cases and case templates, in file order.
    #[serde(default, rename = "case")]
    pub cases: Vec<CaseTemplate>,
}

/// The `[suite]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteHeader {
    /// The suite's name in reports (default: the file's stem).
    pub name: Option<String>,
    /// The golden directory, relative to the suite file (default:
    /// `STEM.golden` beside it).
    pub golden: Option<String>,
}

/// What a case checks against its golden files.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Check {
    /// The system trace buffer, byte for byte (`stda.bin`).
    Stda,
    /// The buffer formatted with the TFFs in the sandbox (`tracefmt.txt`).
    Tracefmt,
    /// The records as JSON lines (`records.jsonl`).
    Json,
    /// Hits, records and cycles per tracepoint (`hits.txt`).
    Hits,
    /// TRCUST's console and exit code for each compile (`trcust.txt`).
    Trcust,
    /// `tdf verify` of each traced TDF against its module (`verify.txt`).
    Verify,
    /// How the program ended (`exit.txt`).
    Exit,
    /// What the program wrote to its console (`output.txt`).
    Output,
    /// The CPTRAP file's records as TRAPRED shows them (`cptrap.txt`),
    /// for cases with `cptrap = "SELECTION"`.
    Cptrap,
    /// The TNF trace as tnfdump prints it (`tnf.txt`), for cases with
    /// `tnf = true`.
    Tnf,
}

impl Check {
    /// Every check, in report order. `Cptrap` and `Tnf` give a file only
    /// for the cases that switch those facilities on.
    pub const ALL: [Check; 10] = [
        Check::Stda,
        Check::Tracefmt,
        Check::Json,
        Check::Hits,
        Check::Trcust,
        Check::Verify,
        Check::Exit,
        Check::Output,
        Check::Cptrap,
        Check::Tnf,
    ];

    /// The golden file the check compares.
    pub fn file_name(self) -> &'static str {
        match self {
            Check::Stda => "stda.bin",
            Check::Tracefmt => "tracefmt.txt",
            Check::Json => "records.jsonl",
            Check::Hits => "hits.txt",
            Check::Trcust => "trcust.txt",
            Check::Verify => "verify.txt",
            Check::Exit => "exit.txt",
            Check::Output => "output.txt",
            Check::Cptrap => "cptrap.txt",
            Check::Tnf => "tnf.txt",
        }
    }
}

/// The STDA layout a case records in.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// 4-byte timestamps on every record (the default).
    #[default]
    New,
    /// 2-byte timestamps written when the time changed.
    Old,
}

/// A `[[case]]` table as written: a case, or a template with `each`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseTemplate {
    /// The case's name; unique in the suite after expansion.
    pub name: String,
    /// A glob over sources: one case per match.
    pub each: Option<String>,
    /// Sources copied into the sandbox (drive C:): paths relative to the
    /// suite file, or `testprogs:GLOB` for the built-in sample modules.
    #[serde(default)]
    pub files: Vec<String>,
    /// TRCUST command lines run in the sandbox, in order, before the
    /// program starts (e.g. `"LOOP32.TSF /M=LOOP32.MAP"`).
    #[serde(default)]
    pub trcust: Vec<String>,
    /// TRACE ON: `TDF[(spec)]`, the TDF a file in the sandbox.
    #[serde(default)]
    pub trace: Vec<String>,
    /// DTRACE APPLY: `FILE.rpn[@MODULE]`, the file in the sandbox.
    #[serde(default)]
    pub apply: Vec<String>,
    /// The program, an OS/2 path in the sandbox.
    pub program: String,
    /// The program's arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables, `K=V`.
    #[serde(default)]
    pub env: Vec<String>,
    /// Trace buffer size in KB (1..63, default 4).
    pub tracebuf: Option<u32>,
    /// STDA format (default `new`).
    pub format: Option<Format>,
    /// Instruction budget (default 200,000,000); a run that reaches it
    /// fails the case.
    pub max_insns: Option<u64>,
    /// What to check (default: all).
    pub check: Option<Vec<Check>>,
    /// CPTRAP for the run, with this selection (`""`: everything).
    pub cptrap: Option<String>,
    /// TNF: every probe of the program enabled and traced (prex's
    /// `enable $all`).
    #[serde(default)]
    pub tnf: bool,
}

/// A case ready to run: templates expanded, defaults filled in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Case {
    /// `SUITE/NAME`, the name reports and `--filter` use.
    pub full_name: String,
    /// The case's own name (its golden directory).
    pub name: String,
    /// Sources for the sandbox.
    pub files: Vec<String>,
    /// TRCUST command lines, each split into arguments.
    pub trcust: Vec<Vec<String>>,
    /// TRACE ON operands.
    pub trace: Vec<String>,
    /// APPLY operands.
    pub apply: Vec<String>,
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its environment.
    pub env: Vec<(String, String)>,
    /// Buffer size in KB.
    pub tracebuf: u32,
    /// STDA format.
    pub format: Format,
    /// Instruction budget.
    pub max_insns: u64,
    /// Checks, sorted.
    pub checks: BTreeSet<Check>,
    /// CPTRAP's selection, when it records.
    pub cptrap: Option<String>,
    /// TNF probes enabled and traced.
    pub tnf: bool,
}

/// The default instruction budget of a case.
pub const DEFAULT_MAX_INSNS: u64 = 200_000_000;

/// A suite loaded from its file.
#[derive(Debug)]
pub struct Suite {
    /// The suite's name.
    pub name: String,
    /// The suite file.
    pub path: PathBuf,
    /// Directory the suite's relative paths start from.
    pub dir: PathBuf,
    /// Where its golden files live.
    pub golden_dir: PathBuf,
    /// Its cases, in file order, templates expanded in match order.
    pub cases: Vec<Case>,
}

/// Why a suite could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The suite file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The TOML is malformed or has unknown fields (the message carries
    /// the line and column).
    #[error("{path}: {message}")]
    Toml {
        /// The suite file.
        path: String,
        /// toml's message, with line and column.
        message: String,
    },
    /// A case is inconsistent.
    #[error("{path}: case {case:?}: {message}")]
    Case {
        /// The suite file.
        path: String,
        /// The case's name as written.
        case: String,
        /// What is wrong.
        message: String,
    },
    /// A glob could not be expanded.
    #[error("{path}: case {case:?}: {source}")]
    Source {
        /// The suite file.
        path: String,
        /// The case's name as written.
        case: String,
        /// Why.
        source: SourceError,
    },
}

impl Suite {
    /// Reads and expands a suite file.
    ///
    /// # Errors
    /// [`SpecError`] naming the file (and line, for TOML errors) and case.
    pub fn load(path: &Path, sources: &Sources) -> Result<Suite, SpecError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| SpecError::Read {
            path: shown.clone(),
            source,
        })?;
        let file: SuiteFile = toml::from_str(&text).map_err(|e| SpecError::Toml {
            path: shown.clone(),
            message: e.to_string().trim_end().to_string(),
        })?;
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "suite".into());
        let name = file.suite.name.clone().unwrap_or_else(|| stem.clone());
        let golden_dir = dir.join(
            file.suite
                .golden
                .clone()
                .unwrap_or_else(|| format!("{stem}.golden")),
        );
        let mut cases = Vec::new();
        let mut seen = BTreeSet::new();
        for template in &file.cases {
            let case_error = |message: String| SpecError::Case {
                path: shown.clone(),
                case: template.name.clone(),
                message,
            };
            let expanded = match &template.each {
                None => vec![template.clone()],
                Some(glob) => {
                    if !template.name.contains('{') {
                        return Err(case_error(
                            "a template (each = ...) needs {name} or {stem} in its name".into(),
                        ));
                    }
                    let matches =
                        sources
                            .glob_names(&dir, glob)
                            .map_err(|source| SpecError::Source {
                                path: shown.clone(),
                                case: template.name.clone(),
                                source,
                            })?;
                    if matches.is_empty() {
                        return Err(case_error(format!("each = {glob:?} matches nothing")));
                    }
                    matches.iter().map(|m| substitute(template, m)).collect()
                }
            };
            for t in expanded {
                let case = resolve(&name, &t).map_err(case_error)?;
                if !seen.insert(case.name.clone()) {
                    return Err(case_error(format!("two cases are named {:?}", case.name)));
                }
                cases.push(case);
            }
        }
        Ok(Suite {
            name,
            path: path.to_path_buf(),
            dir,
            golden_dir,
            cases,
        })
    }
}

/// A template with `{name}`, `{stem}` and `{ext}` replaced for one match.
fn substitute(template: &CaseTemplate, file_name: &str) -> CaseTemplate {
    let (stem, ext) = match file_name.rsplit_once('.') {
        Some((s, e)) => (s, e),
        None => (file_name, ""),
    };
    let sub = |s: &String| {
        s.replace("{name}", file_name)
            .replace("{stem}", stem)
            .replace("{ext}", ext)
    };
    let subs = |v: &Vec<String>| v.iter().map(sub).collect();
    CaseTemplate {
        name: sub(&template.name),
        each: None,
        files: subs(&template.files),
        trcust: subs(&template.trcust),
        trace: subs(&template.trace),
        apply: subs(&template.apply),
        program: sub(&template.program),
        args: subs(&template.args),
        env: subs(&template.env),
        ..template.clone()
    }
}

fn resolve(suite: &str, t: &CaseTemplate) -> Result<Case, String> {
    if t.name.is_empty() || t.name.contains(['/', '\\']) || t.name.starts_with('.') {
        return Err(
            "a case name must be non-empty, without / or \\, and not start with '.'".into(),
        );
    }
    let env = t
        .env
        .iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| format!("env wants K=V, got {kv:?}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let tracebuf = t.tracebuf.unwrap_or(4);
    if !(1..=63).contains(&tracebuf) {
        return Err(format!("tracebuf = {tracebuf} is outside 1..63 (KB)"));
    }
    let trcust = t
        .trcust
        .iter()
        .map(|line| {
            line.split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .collect::<Vec<_>>();
    if trcust.iter().any(Vec::is_empty) {
        return Err("an empty trcust command line".into());
    }
    let checks = match &t.check {
        Some(list) if list.is_empty() => return Err("check = [] checks nothing".into()),
        Some(list) => list.iter().copied().collect(),
        None => Check::ALL.into_iter().collect(),
    };
    Ok(Case {
        full_name: format!("{suite}/{}", t.name),
        name: t.name.clone(),
        files: t.files.clone(),
        trcust,
        trace: t.trace.clone(),
        apply: t.apply.clone(),
        program: t.program.clone(),
        args: t.args.clone(),
        env,
        tracebuf,
        format: t.format.unwrap_or_default(),
        max_insns: t.max_insns.unwrap_or(DEFAULT_MAX_INSNS),
        checks,
        cptrap: t.cptrap.clone(),
        tnf: t.tnf,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Suite, SpecError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.toml");
        std::fs::write(&path, text).unwrap();
        Suite::load(&path, &Sources::new())
    }

    #[test]
    fn templates_expand_once_per_match_with_substitutions() {
        let suite = load(
            r#"
            [[case]]
            name = "{stem}-on"
            each = "testprogs:LOOP*.EXE"
            files = ["testprogs:{stem}.*"]
            trcust = ["{stem}.TSF /M={stem}.MAP"]
            trace = ["{stem}(1)"]
            program = "{name}"
            "#,
        )
        .unwrap();
        let names: Vec<_> = suite.cases.iter().map(|c| c.full_name.as_str()).collect();
        assert_eq!(names, ["s/LOOP16-on", "s/LOOP32-on"]);
        let c = &suite.cases[1];
        assert_eq!(c.program, "LOOP32.EXE");
        assert_eq!(c.trcust, [["LOOP32.TSF", "/M=LOOP32.MAP"]]);
        assert_eq!(c.trace, ["LOOP32(1)"]);
        assert_eq!(c.checks.len(), Check::ALL.len());
        assert!(suite.golden_dir.ends_with("s.golden"));
    }

    #[test]
    fn bad_suites_say_where_and_what() {
        let e = load("[[case]]\nname = \"x\"\nprogram = \"A.EXE\"\nbogus = 1\n").unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
        assert!(e.to_string().contains("line 4"), "{e}");
        let e = load("[[case]]\nname = \"x\"\nprogram = \"A\"\ntracebuf = 0\n").unwrap_err();
        assert!(e.to_string().contains("case \"x\": tracebuf = 0"), "{e}");
        let e = load(
            "[[case]]\nname = \"x\"\nprogram = \"A\"\n[[case]]\nname = \"x\"\nprogram = \"B\"\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("two cases"), "{e}");
        let e = load("[[case]]\nname = \"x\"\neach = \"testprogs:*.EXE\"\nprogram = \"A\"\n")
            .unwrap_err();
        assert!(e.to_string().contains("{name} or {stem}"), "{e}");
        let e = load("[[case]]\nname = \"{stem}\"\neach = \"testprogs:NONE*\"\nprogram = \"A\"\n")
            .unwrap_err();
        assert!(e.to_string().contains("matches nothing"), "{e}");
        let e = load("[[case]]\nname = \"../x\"\nprogram = \"A\"\n").unwrap_err();
        assert!(e.to_string().contains("case name"), "{e}");
    }
}
