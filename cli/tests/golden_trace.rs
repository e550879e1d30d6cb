//! Golden trace runs: every testprogs program run with its TSF compiled by
//! TRCUST (`--trace`) and with its trace program file (`--apply`), and
//! every shared sample run untraced, compared byte for byte with files
//! recorded from the code before tracepoint hits were reworked (issue 11).
//!
//! What is pinned, per run: the program's console output and the QUERY /
//! GETVARS report (hits, records and emulated cycles per tracepoint) on
//! stdout; the API log and the final `run:` line (instructions, cycles,
//! emulated milliseconds) on stderr; and the TRACEGET save file (the whole
//! system trace buffer, its records and their timestamps). One run also
//! pins the old-format buffer and one the TRSPOOL files.
//!
//! Set `OS2TRACE_BLESS=1` to rewrite the golden files after a deliberate
//! change (and say why in the commit).

mod common;

use std::path::Path;

use common::os2trace;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/trace");

fn golden(name: &str, actual: &[u8]) {
    let path = format!("{GOLDEN}/{name}");
    if std::env::var_os("OS2TRACE_BLESS").is_some() {
        std::fs::create_dir_all(GOLDEN).unwrap();
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read(&path).unwrap_or_else(|_| panic!("missing golden file {path}"));
    if actual != expected.as_slice() {
        let at = actual
            .iter()
            .zip(&expected)
            .position(|(a, b)| a != b)
            .unwrap_or(actual.len().min(expected.len()));
        panic!(
            "{name} differs from its golden file at byte {at} (lengths {} and {}):\n{}",
            actual.len(),
            expected.len(),
            String::from_utf8_lossy(actual)
        );
    }
}

/// A scratch drive with every testprogs program and its TSFs compiled.
fn prepared() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::stdout(&os2trace(dir.path(), &["testprogs", "build", "."]));
    for p in testprogs::all().unwrap() {
        let tsf = p.tsf_file_name();
        let map = format!("/M={}.MAP", p.name);
        common::stdout(&os2trace(dir.path(), &["trcust", &tsf, &map]));
    }
    dir
}

/// Runs `os2trace run --root . --api-log ARGS` and pins stdout, stderr and
/// the files named in `files` under `case`.
fn pin(dir: &Path, case: &str, args: &[&str], files: &[&str]) {
    let mut all = vec!["run", "--root", ".", "--api-log"];
    all.extend_from_slice(args);
    let out = os2trace(dir, &all);
    golden(&format!("{case}.stdout"), &out.stdout);
    golden(&format!("{case}.stderr"), &out.stderr);
    for f in files {
        let bytes = std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{case}: {f}: {e}"));
        golden(&format!("{case}.{f}"), &bytes);
    }
}

/// The programs that run, with the DLL each one loads and its arguments.
const RUNS: &[(&str, Option<&str>, &[&str])] = &[
    ("HELLO16", None, &[]),
    ("HELLO32", None, &[]),
    ("DLLCAL16", Some("TPDLL16"), &[]),
    ("DLLCAL32", Some("TPDLL32"), &[]),
    ("FARCAL16", None, &[]),
    ("FILEIO16", None, &[]),
    ("FILEIO32", None, &[]),
    ("MSGVIO16", None, &[]),
    ("MSG32", None, &[]),
    ("ARGS16", None, &["one", "two words"]),
    ("ARGS32", None, &["one", "two words"]),
    ("LOOP16", None, &[]),
    ("LOOP32", None, &[]),
];

fn traced_runs(apply: bool) {
    let dir = prepared();
    for (name, dll, args) in RUNS {
        let (flag, ext, case) = if apply {
            ("--apply", "RPN", format!("{name}.apply"))
        } else {
            ("--trace", "TDF", format!("{name}.tsf"))
        };
        let own = format!("{name}.{ext}");
        let lib = dll.map(|d| format!("{d}.{ext}"));
        let exe = format!("{name}.EXE");
        // The loops fill the largest buffer; the rest fit the default 4 KB.
        let kb = if name.starts_with("LOOP") { "63" } else { "4" };
        let mut a = vec!["--tracebuf", kb, flag, &own];
        if let Some(lib) = &lib {
            a.extend([flag, lib.as_str()]);
        }
        a.extend(["--save", "T.SAV", "--query", "--getvars", &exe]);
        a.extend_from_slice(args);
        pin(dir.path(), &case, &a, &["T.SAV"]);
    }
}

#[test]
fn testprogs_traced_with_their_tsfs_match_golden() {
    traced_runs(false);
}

#[test]
fn testprogs_with_their_trace_programs_applied_match_golden() {
    traced_runs(true);
}

#[test]
fn old_format_buffer_and_spool_files_match_golden() {
    let dir = prepared();
    pin(
        dir.path(),
        "LOOP16.old",
        &[
            "--old-format",
            "--tracebuf",
            "1",
            "--trace",
            "LOOP16.TDF",
            "--save",
            "T.SAV",
            "--query",
            "LOOP16.EXE",
        ],
        &["T.SAV"],
    );
    pin(
        dir.path(),
        "LOOP32.spool",
        &[
            "--tracebuf",
            "4",
            "--trace",
            "LOOP32.TDF",
            "--spool",
            "SPOOL",
            "/F3",
            "/T1",
            "--query",
            "LOOP32.EXE",
        ],
        &[],
    );
    let mut names: Vec<_> = std::fs::read_dir(dir.path().join("SPOOL"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(!names.is_empty(), "TRSPOOL wrote no files");
    golden("LOOP32.spool.files", names.join("\n").as_bytes());
    for n in &names {
        let bytes = std::fs::read(dir.path().join("SPOOL").join(n)).unwrap();
        golden(&format!("LOOP32.spool.{n}"), &bytes);
    }
}

#[test]
fn shared_samples_untraced_match_golden() {
    // The repository sits beside shared/ (or deeper, in a worktree).
    let samples = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/samples"))
        .find(|p| p.is_dir())
        .expect("shared/samples beside the repository");
    let dir = tempfile::tempdir().unwrap();
    for (rel, name, args) in [
        ("ne/test-asm16.exe", "TEST.EXE", &[][..]),
        ("ne/hello16.exe", "HELLO16.EXE", &[]),
        ("ne/testargv16.exe", "TESTARGV.EXE", &["one", "two words"]),
        ("lx/hello.exe", "HELLO.EXE", &[]),
        ("lx/testbeep.exe", "TESTBEEP.EXE", &[]),
        ("lx/testpm.exe", "TESTPM.EXE", &[]),
    ] {
        std::fs::copy(samples.join(rel), dir.path().join(name)).unwrap();
        let mut a = vec!["--max-insns", "50000000", name];
        a.extend_from_slice(args);
        pin(dir.path(), &format!("sample.{name}"), &a, &[]);
    }
}
