//! `os2trace test`: the shipped sample suite passes, a broken TSF fails with
//! a record-level diff, `--bless` repairs it, shards partition the suite,
//! JUnit parses, guests that misbehave fail only their case, and the bytes
//! do not depend on the directory or the time zone.

mod common;

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{os2trace, stdout};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn samples() -> PathBuf {
    repo().join("suites/samples.toml")
}

/// Copies a directory tree (the suites are small).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Every file under `dir`, by relative path, with its bytes.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                files.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn the_sample_suite_passes() {
    let out = os2trace(&repo(), &["test", "suites/samples.toml"]);
    let text = stdout(&out);
    assert!(text.contains("test samples/LOOP32 ... ok"), "{text}");
    assert!(
        text.contains("test result: ok. 24 passed; 0 failed"),
        "{text}"
    );
}

#[test]
fn a_broken_tsf_fails_with_a_record_level_diff_and_bless_repairs_it() {
    let fixture = repo().join("cli/tests/fixtures/suite-broken");
    let out = os2trace(&fixture, &["test", "broken.toml"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("test broken/loop32 ... FAILED"), "{text}");
    assert!(
        text.contains("stda.bin differs from the golden file:"),
        "{text}"
    );
    // The changed record, formatted as TRACEFMT shows it: golden, then new.
    assert!(
        text.contains("~     1  12:00:00.00  MAJ=00CE MIN=0002"),
        "{text}"
    );
    assert!(text.contains("rc=0000 0000 sum=0007 A314"), "{text}");
    assert!(
        text.contains(">     1  12:00:00.00  MAJ=00CE MIN=0002"),
        "{text}"
    );
    assert!(text.contains("rc=0000 0000 sum=0000 0000"), "{text}");
    assert!(
        text.contains("test result: FAILED. 0 passed; 1 failed"),
        "{text}"
    );

    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture, dir.path());
    let blessed = os2trace(dir.path(), &["test", "broken.toml", "--bless"]);
    assert!(stdout(&blessed).contains("1 blessed"));
    let again = os2trace(dir.path(), &["test", "broken.toml"]);
    assert!(stdout(&again).contains("test result: ok. 1 passed; 0 failed"));
}

#[test]
fn shards_are_disjoint_and_cover_the_suite() {
    let names = |args: &[&str]| -> BTreeSet<String> {
        let mut all = vec!["test", "--json"];
        all.extend_from_slice(args);
        all.push("suites/samples.toml");
        let out = os2trace(&repo(), &all);
        stdout(&out)
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("JSON lines");
                assert_eq!(v["status"], "passed", "{l}");
                v["name"].as_str().unwrap().to_string()
            })
            .collect()
    };
    let whole = names(&[]);
    assert_eq!(whole.len(), 24);
    for n in [1, 2, 3, 5] {
        let mut seen = BTreeSet::new();
        for i in 1..=n {
            let part = names(&["--shard", &format!("{i}/{n}")]);
            assert!(
                part.len() >= 24 / n && part.len() <= 24 / n + 1,
                "{i}/{n}: {part:?}"
            );
            assert!(seen.is_disjoint(&part), "{i}/{n} overlaps");
            seen.extend(part);
        }
        assert_eq!(seen, whole, "{n} shards");
    }
    // The batch engines' variables select the same parts.
    let gitlab = Command::new(env!("CARGO_BIN_EXE_os2trace"))
        .current_dir(repo())
        .args(["test", "--json", "--shard", "auto", "suites/samples.toml"])
        .env("CI_NODE_INDEX", "2")
        .env("CI_NODE_TOTAL", "3")
        .output()
        .unwrap();
    assert_eq!(
        stdout(&gitlab).lines().count(),
        names(&["--shard", "2/3"]).len()
    );
    let bad = os2trace(&repo(), &["test", "--shard", "4/3", "suites/samples.toml"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn junit_output_parses_with_a_junit_reader() {
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("results.xml");
    let fixture = repo().join("cli/tests/fixtures/suite-broken/broken.toml");
    let out = os2trace(
        &repo(),
        &[
            "test",
            "--junit",
            xml.to_str().unwrap(),
            "suites/samples.toml",
            fixture.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let check = r#"
import sys
from junitparser import JUnitXml, Failure
xml = JUnitXml.fromfile(sys.argv[1])
cases = [(s.name, c.name, [type(r).__name__ for r in c.result]) for s in xml for c in s]
assert len(cases) == 25, cases
failed = [(s, c) for s, c, r in cases if "Failure" in r]
assert failed == [("broken", "loop32")], failed
print("junitparser ok", len(cases))
"#;
    match Command::new("python3")
        .args(["-c", check, xml.to_str().unwrap()])
        .output()
    {
        Ok(o) if String::from_utf8_lossy(&o.stderr).contains("No module named 'junitparser'") => {
            let _ = writeln!(
                std::io::stderr(),
                "skipped: python3's junitparser is not installed (pip install junitparser)"
            );
        }
        Ok(o) => assert!(
            o.status.success() && String::from_utf8_lossy(&o.stdout).contains("junitparser ok 25"),
            "{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(_) => {
            let _ = writeln!(std::io::stderr(), "skipped: python3 is not installed");
        }
    }
}

#[test]
fn misbehaving_guests_fail_their_case_only() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.toml"),
        r#"
[[case]]
name = "budget"
files = ["testprogs:LOOP32.*"]
program = "LOOP32.EXE"
max_insns = 500
check = ["exit"]

[[case]]
name = "missing-program"
files = ["testprogs:LOOP32.*"]
program = "NONE.EXE"

[[case]]
name = "fine"
files = ["testprogs:HELLO32.*"]
program = "HELLO32.EXE"
check = ["exit", "output"]
"#,
    )
    .unwrap();
    let blessed = os2trace(dir.path(), &["test", "--bless", "bad.toml"]);
    let text = String::from_utf8_lossy(&blessed.stdout);
    assert_eq!(blessed.status.code(), Some(1), "{text}");
    assert!(text.contains("test bad/fine ... blessed"), "{text}");
    assert!(
        text.contains("---- bad/budget ----\nthe program did not end normally:"),
        "{text}"
    );
    assert!(text.contains("instruction"), "{text}");
    assert!(
        text.contains("---- bad/missing-program ----\nloading NONE.EXE:"),
        "{text}"
    );
    assert!(text.contains("0 passed; 2 failed; 1 blessed"), "{text}");
    assert!(!dir.path().join("bad.golden/budget").exists());
    let again = os2trace(dir.path(), &["test", "--filter", "*/fine", "bad.toml"]);
    assert!(stdout(&again).contains("test result: ok. 1 passed; 0 failed"));
}

#[test]
fn the_bytes_do_not_depend_on_the_directory_or_the_time_zone() {
    let committed = tree(&repo().join("suites/samples.golden"));
    for (place, tz) in [("a/deeper/place", "UTC"), ("b", "America/Los_Angeles")] {
        let dir = tempfile::tempdir().unwrap();
        let here = dir.path().join(place);
        std::fs::create_dir_all(&here).unwrap();
        std::fs::copy(samples(), here.join("samples.toml")).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_os2trace"))
            .current_dir(&here)
            .args(["test", "--bless", "--jobs", "2", "samples.toml"])
            .env("TZ", tz)
            .output()
            .unwrap();
        assert!(stdout(&out).contains("24 blessed"));
        let made = tree(&here.join("samples.golden"));
        assert_eq!(made.len(), committed.len());
        for ((name, bytes), (gname, gbytes)) in made.iter().zip(&committed) {
            assert_eq!(name, gname);
            assert!(
                bytes == gbytes,
                "{name} differs when run from {place} with TZ={tz}"
            );
        }
    }
}
