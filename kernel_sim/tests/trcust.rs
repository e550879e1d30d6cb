//! IBM's TRCUST.EXE runs unmodified on every case of the TRCUST corpus
//! (skipped unless OS2TK_DIR names an OS/2 toolkit with bin/trcust.exe).

mod common;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use kernel_sim::{Outcome, Process, ProcessConfig};

fn shared(rel: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared")).join(rel)
}

fn trcust() -> Option<PathBuf> {
    let dir = std::env::var_os("OS2TK_DIR")?;
    let p = Path::new(&dir).join("bin").join("trcust.exe");
    p.exists().then_some(p)
}

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            out.insert(
                e.file_name().into_string().unwrap(),
                std::fs::read(e.path()).unwrap(),
            );
        }
    }
    out
}

/// Run one case; `Err` describes the first difference.
fn run_case(exe: &Path, case: &Path) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let inputs = files(&case.join("in"));
    for (name, data) in &inputs {
        std::fs::write(root.join(name), data).unwrap();
    }
    let modules = std::fs::read_to_string(case.join("modules")).unwrap_or_default();
    for m in modules.split_whitespace() {
        let bytes = match m {
            "HELLO.EXE" => std::fs::read(shared("samples/lx/hello.exe")).unwrap(),
            other => {
                testprogs::all()
                    .unwrap()
                    .into_iter()
                    .chain(testprogs::debug_programs().unwrap())
                    .find(|p| p.file_name.eq_ignore_ascii_case(other))
                    .ok_or_else(|| format!("unknown module {other}"))?
                    .bytes
            }
        };
        std::fs::write(root.join(m), bytes).unwrap();
    }
    std::fs::copy(exe, root.join("TRCUST.EXE")).unwrap();
    let args = std::fs::read_to_string(case.join("args")).unwrap();
    let mut cfg = ProcessConfig::new(root, "TRCUST.EXE");
    cfg.args = args.split_whitespace().map(String::from).collect();
    cfg.max_instructions = Some(2_000_000_000);
    let mut p = Process::new(cfg).map_err(|e| e.to_string())?;
    let out = common::capture_console(&mut p);
    let outcome = p.run();
    let want_exit: u32 = std::fs::read_to_string(case.join("exit"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    if outcome != Outcome::Exited(want_exit) {
        return Err(format!(
            "outcome {outcome}, want exit {want_exit}; console:\n{}",
            out.text()
        ));
    }
    let console = std::fs::read(case.join("console.txt")).unwrap();
    if out.contents() != console {
        return Err(format!(
            "console differs:\n--- got\n{}\n--- want\n{}",
            out.text(),
            String::from_utf8_lossy(&console)
        ));
    }
    let mut after = files(root);
    for name in inputs.keys().chain(["TRCUST.EXE".to_string()].iter()) {
        after.remove(name);
    }
    for m in modules.split_whitespace() {
        after.remove(m);
    }
    let want = files(&case.join("expect"));
    let got_names: Vec<_> = after.keys().collect();
    let want_names: Vec<_> = want.keys().collect();
    if got_names != want_names {
        return Err(format!("files written {got_names:?}, want {want_names:?}"));
    }
    for (name, data) in &want {
        if after[name] != *data {
            return Err(format!(
                "{name} differs ({} bytes, want {})",
                after[name].len(),
                data.len()
            ));
        }
    }
    Ok(())
}

#[test]
fn trcust_corpus() {
    corpus_passes(&shared("formats/trcust-corpus"));
}

/// Our own regression cases (tdf/tests/trcust-diff, written by the
/// differential test) hold IBM's results: TRCUST reproduces them.
#[test]
fn trcust_regression_cases() {
    corpus_passes(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../tdf/tests/trcust-diff"));
}

fn corpus_passes(corpus: &Path) {
    let Some(exe) = trcust() else {
        let _ = writeln!(
            std::io::stderr(),
            "OS2TK_DIR is not set (or has no bin/trcust.exe): skipped"
        );
        return;
    };
    let mut cases: Vec<PathBuf> = std::fs::read_dir(corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    let mut failed = Vec::new();
    for case in &cases {
        if let Err(e) = run_case(&exe, case) {
            failed.push(format!(
                "{}: {e}",
                case.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    eprintln!(
        "TRCUST corpus: {} of {} cases pass",
        cases.len() - failed.len(),
        cases.len()
    );
    assert!(
        failed.is_empty(),
        "{} failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

/// TRCUST on a TSF against one of our testprogs DLLs with its MAP file
/// writes a TDF and a TFF.
#[test]
fn trcust_on_testprogs_dlls() {
    let Some(exe) = trcust() else {
        let _ = writeln!(
            std::io::stderr(),
            "OS2TK_DIR is not set (or has no bin/trcust.exe): skipped"
        );
        return;
    };
    for dll in [testprogs::tpdll16().unwrap(), testprogs::tpdll32().unwrap()] {
        let dir = tempfile::tempdir().unwrap();
        dll.write_to(dir.path()).unwrap();
        std::fs::copy(&exe, dir.path().join("TRCUST.EXE")).unwrap();
        let mut cfg = ProcessConfig::new(dir.path(), "TRCUST.EXE");
        cfg.args = vec![dll.tsf_file_name(), format!("/M={}", dll.map_file_name())];
        cfg.max_instructions = Some(2_000_000_000);
        let mut p = Process::new(cfg).unwrap();
        let out = common::capture_console(&mut p);
        assert_eq!(p.run(), Outcome::Exited(0), "{}", out.text());
        let tdf = dir.path().join(format!("{}.TDF", dll.name));
        let tff = dir.path().join(format!("TRC{:04X}.TFF", dll.major));
        assert!(std::fs::metadata(&tdf).unwrap().len() > 0, "{}", out.text());
        assert!(std::fs::metadata(&tff).unwrap().len() > 0, "{}", out.text());
        let n = dll.tracepoints.len();
        assert!(
            out.text().contains(&format!("# records = {n}")),
            "{}",
            out.text()
        );
        // IBM's output is the oracle for ours (the tdf crate's TRCUST).
        let ours = tempfile::tempdir().unwrap();
        dll.write_to(ours.path()).unwrap();
        let args = [dll.tsf_file_name(), format!("/M={}", dll.map_file_name())];
        let r = tdf::trcust::run(&args, ours.path(), tdf::trcust::PathStyle::Dos);
        assert_eq!(r.exit_code, 0);
        for f in [&tdf, &tff] {
            let name = f.file_name().unwrap();
            assert_eq!(
                std::fs::read(f).unwrap(),
                std::fs::read(ours.path().join(name)).unwrap(),
                "{name:?}"
            );
        }
    }
}
