//! IBM's rc.exe and nmake32.exe run on the C runtime DLLs implemented
//! here (LIBCM, LIBCS): their help paths, a real resource compile and
//! bind, a makefile with recipes through CMD.EXE. Needs OS2TK_DIR (says
//! it was skipped otherwise).

mod common;

use common::toolkit::{copy_tools, toolkit};
use kernel_sim::{Outcome, Process, ProcessConfig};
use std::path::Path;

/// Runs `program` in `root` with `args`, the API log on: (outcome,
/// console, the process).
fn run_tool(root: &Path, program: &str, args: &[&str], max: u64) -> (Outcome, String, Process) {
    let mut cfg = ProcessConfig::new(root, program);
    cfg.args = args.iter().map(|s| s.to_string()).collect();
    cfg.max_instructions = Some(max);
    cfg.api_log = true;
    let mut p = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut p);
    let o = p.run();
    (o, out.text(), p)
}

const BUDGET: u64 = 400_000_000;

#[test]
fn rc_prints_its_usage() {
    let Some(tk) = toolkit("rc.exe") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    copy_tools(
        &tk,
        dir.path(),
        &[
            ("bin/rc.exe", "RC.EXE"),
            ("msg/messages.msg", "MESSAGES.MSG"),
            ("msg/rc32.msg", "RC32.MSG"),
        ],
    );
    let (o, out, p) = run_tool(dir.path(), "C:\\RC.EXE", &["-?"], BUDGET);
    eprintln!("{out}");
    assert!(p.api_log().iter().any(|e| e.module == "LIBCM"));
    assert_eq!(o, Outcome::Exited(0), "{out}");
    assert!(out.contains("Resource Compiler"), "{out}");
}

#[test]
fn nmake_prints_its_usage() {
    let Some(tk) = toolkit("nmake32.exe") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    copy_tools(
        &tk,
        dir.path(),
        &[
            ("bin/nmake32.exe", "NMAKE32.EXE"),
            ("msg/toolkit.cat", "TOOLKIT.CAT"),
        ],
    );
    let (o, out, p) = run_tool(dir.path(), "C:\\NMAKE32.EXE", &["/?"], BUDGET);
    eprintln!("{out}");
    assert!(p.api_log().iter().any(|e| e.module == "LIBCS"));
    assert_eq!(o, Outcome::Exited(0), "{out}");
    assert!(out.contains("Syntax: NMAKE"), "{out}");
    assert!(out.contains("-nologo"), "{out}");
}
