//! Runs every case of the TRCUST golden corpus (shared/formats/trcust-corpus)
//! through our TRCUST in a temporary directory and compares the files
//! written (names and bytes), the exit code and the console.
//!
//! Where TRCUST 3.05A is wrong (TRCUST-FORMATS.md, defects) we differ on
//! purpose; [`DEVIATIONS`] lists each such case with the exact difference
//! expected, so the test still fails if anything else changes.

use std::fs;
use std::path::{Path, PathBuf};

use stda::tff::Tff;
use tdf::trcust::{PathStyle, run};
use tdf::{Tdf, Tmi};

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/formats/trcust-corpus"
);
const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/samples");
/// Our own cases from the differential test against IBM's TRCUST
/// (kernel_sim/tests/trcust_diff.rs), same layout; a case with a
/// `DEVIATION` file holds our results in ours/, ours-exit and
/// ours-console.txt.
const REGRESSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/trcust-diff");

/// Where a case keeps the results we must produce: (files, exit, console).
fn wanted(case: &Path) -> (&'static str, &'static str, &'static str) {
    if case.join("DEVIATION").exists() {
        ("ours", "ours-exit", "ours-console.txt")
    } else {
        ("expect", "exit", "console.txt")
    }
}

/// Cases where our console differs from TRCUST's on purpose: (case, line
/// after which we print an extra line, the extra line).
const DEVIATIONS: &[(&str, &str, &str)] = &[
    // TRCUST cuts RDS+0x12345 to 16 bits silently; we warn (message 143).
    (
        "m16_d_big",
        "Using module file: C:\\HELLO.EXE",
        "TRCUST(4) WARNING: index too large, high word ignored",
    ),
];

fn module_bytes(name: &str) -> Vec<u8> {
    if name == "HELLO.EXE" {
        return fs::read(Path::new(SAMPLES).join("lx/hello.exe")).unwrap();
    }
    let programs = testprogs::all()
        .unwrap()
        .into_iter()
        .chain(testprogs::debug_programs().unwrap());
    for p in programs {
        if p.file_name.eq_ignore_ascii_case(name) {
            return p.bytes;
        }
    }
    panic!("corpus names an unknown module {name}")
}

fn expected_console(case: &Path, name: &str) -> String {
    let raw = fs::read(case.join(wanted(case).2)).unwrap();
    let mut text = String::from_utf8_lossy(&raw).replace("\r\n", "\n");
    for (c, after, extra) in DEVIATIONS {
        if *c == name {
            let at = text.find(after).expect("deviation anchor") + after.len() + 1;
            text.insert_str(at, &format!("{extra}\n"));
        }
    }
    text
}

/// Runs one case; returns the differences found.
fn run_case(case: &Path) -> Vec<String> {
    let name = case.file_name().unwrap().to_string_lossy().into_owned();
    let dir = tempfile::tempdir().unwrap();
    if let Ok(rd) = fs::read_dir(case.join("in")) {
        for e in rd.flatten() {
            fs::copy(e.path(), dir.path().join(e.file_name())).unwrap();
        }
    }
    let modules = fs::read_to_string(case.join("modules")).unwrap_or_default();
    for m in modules.split_whitespace() {
        fs::write(dir.path().join(m), module_bytes(m)).unwrap();
    }
    let args: Vec<String> = fs::read_to_string(case.join("args"))
        .unwrap()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let out = run(&args, dir.path(), PathStyle::Dos);
    let mut diffs = Vec::new();
    let (expect, exit, _) = wanted(case);
    let want_exit: i32 = fs::read_to_string(case.join(exit))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    if out.exit_code != want_exit {
        diffs.push(format!("exit {} (want {want_exit})", out.exit_code));
    }
    let want = expected_console(case, &name);
    let got = out.text();
    if got != want {
        diffs.push(format!("console:\n--- want\n{want}--- got\n{got}"));
    }
    let mut want_files: Vec<String> = fs::read_dir(case.join(expect))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    want_files.sort();
    let mut got_files: Vec<String> = out
        .written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    got_files.sort();
    if got_files != want_files {
        diffs.push(format!("files {got_files:?} (want {want_files:?})"));
    }
    for f in &want_files {
        let want = fs::read(case.join(expect).join(f)).unwrap();
        if let Ok(got) = fs::read(dir.path().join(f))
            && got != want
        {
            diffs.push(format!(
                "{f} differs:\n want {}\n got  {}",
                hex(&want),
                hex(&got)
            ));
        }
    }
    diffs
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn cases() -> Vec<PathBuf> {
    cases_in(CORPUS)
}

fn cases_in(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

#[test]
fn every_corpus_case_matches() {
    let all = cases();
    assert_eq!(all.len(), 112, "the corpus has 112 cases");
    let mut failed = Vec::new();
    for case in &all {
        let diffs = run_case(case);
        if !diffs.is_empty() {
            failed.push(format!(
                "== {}\n{}",
                case.file_name().unwrap().to_string_lossy(),
                diffs.join("\n")
            ));
        }
    }
    eprintln!(
        "corpus: {} of {} cases pass",
        all.len() - failed.len(),
        all.len()
    );
    assert!(
        failed.is_empty(),
        "{} cases differ:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn every_regression_case_matches() {
    let all = cases_in(REGRESSIONS);
    assert!(all.len() >= 27, "only {} regression cases", all.len());
    let failed: Vec<String> = all
        .iter()
        .filter_map(|case| {
            let diffs = run_case(case);
            (!diffs.is_empty()).then(|| {
                let name = case.file_name().unwrap().to_string_lossy();
                format!("== {name}\n{}", diffs.join("\n"))
            })
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} regression cases differ:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn every_corpus_file_round_trips() {
    let mut n = 0;
    for case in cases() {
        let Ok(rd) = fs::read_dir(case.join("expect")) else {
            continue;
        };
        let inputs = fs::read_dir(case.join("in")).into_iter().flatten();
        for e in rd.flatten().chain(inputs.flatten()) {
            let bytes = fs::read(e.path()).unwrap();
            let again = match &bytes[..bytes.len().min(4)] {
                b"TDF\0" => Tdf::parse(&bytes).unwrap().to_bytes(),
                b"TFF\0" => Tff::parse(&bytes).unwrap().to_bytes(),
                b"TMI\0" => Tmi::parse(&bytes).unwrap().to_bytes(),
                _ => continue,
            };
            assert_eq!(again, bytes, "{} does not round-trip", e.path().display());
            n += 1;
        }
    }
    assert!(n > 90, "only {n} files read");
}
