//! Runs one case through IBM's TRCUST.EXE in kernel_sim and through ours
//! (`tdf::trcust::run`), compares the files written, the exit code and the
//! console, explains the differences that are IBM's defects, shrinks the
//! others with proptest's value trees, and writes a case in the corpus
//! layout.

use std::collections::BTreeMap;
use std::path::Path;

use kernel_sim::{ConsoleBuffer, Outcome, Process, ProcessConfig};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use super::{Case, Spec, module_bytes, spec};

/// What one TRCUST run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The exit code, or how the run ended otherwise.
    pub exit: Result<u32, String>,
    /// The console, as written (IBM's has CR LF).
    pub console: Vec<u8>,
    /// Files written or changed: name and bytes.
    pub files: BTreeMap<String, Vec<u8>>,
}

impl Run {
    /// The console with LF line ends.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.console).replace("\r\n", "\n")
    }
}

fn prepare(case: &Case, dir: &Path) -> std::io::Result<()> {
    for (name, data) in &case.files {
        std::fs::write(dir.join(name), data)?;
    }
    for m in &case.modules {
        let bytes =
            module_bytes(m).ok_or_else(|| std::io::Error::other(format!("unknown module {m}")))?;
        std::fs::write(dir.join(m), bytes)?;
    }
    Ok(())
}

fn written(dir: &Path, before: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        if !e.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(data) = std::fs::read(e.path()) else {
            continue;
        };
        if before.get(&name) != Some(&data) {
            out.insert(name, data);
        }
    }
    out
}

fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let empty = BTreeMap::new();
    written(dir, &empty)
}

/// Runs IBM's TRCUST (`exe`, the bytes of TRCUST.EXE) on `case`.
pub fn run_ibm(exe: &[u8], case: &Case) -> Run {
    let dir = tempfile::tempdir().expect("temporary directory");
    let root = dir.path();
    if let Err(e) = prepare(case, root) {
        return Run {
            exit: Err(e.to_string()),
            console: Vec::new(),
            files: BTreeMap::new(),
        };
    }
    std::fs::write(root.join("TRCUST.EXE"), exe).expect("write TRCUST.EXE");
    let before = snapshot(root);
    let mut cfg = ProcessConfig::new(root, "TRCUST.EXE");
    cfg.args = case.args.clone();
    cfg.max_instructions = Some(2_000_000_000);
    let mut p = match Process::new(cfg) {
        Ok(p) => p,
        Err(e) => {
            return Run {
                exit: Err(e.to_string()),
                console: Vec::new(),
                files: BTreeMap::new(),
            };
        }
    };
    let out = ConsoleBuffer::new();
    p.set_console(
        Box::new(out.clone()),
        Box::new(out.clone()),
        Box::new(std::io::empty()),
    );
    let exit = match p.run() {
        Outcome::Exited(c) => Ok(c),
        other => Err(other.to_string()),
    };
    Run {
        exit,
        console: out.contents(),
        files: written(root, &before),
    }
}

/// Runs our TRCUST on `case`.
pub fn run_ours(case: &Case) -> Run {
    let dir = tempfile::tempdir().expect("temporary directory");
    let root = dir.path();
    if let Err(e) = prepare(case, root) {
        return Run {
            exit: Err(e.to_string()),
            console: Vec::new(),
            files: BTreeMap::new(),
        };
    }
    let before = snapshot(root);
    let r = tdf::trcust::run(&case.args, root, tdf::trcust::PathStyle::Dos);
    Run {
        exit: u32::try_from(r.exit_code).map_err(|_| format!("exit {}", r.exit_code)),
        console: r.text().into_bytes(),
        files: written(root, &before),
    }
}

/// How a case came out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Identical.
    Same,
    /// IBM's TRCUST did not exit normally (not a case for comparison).
    IbmFailed(String),
    /// A difference that is IBM's defect: the reason.
    Deviation(&'static str),
    /// A difference to fix: what differs.
    Differs(String),
}

/// The first difference between `ibm` and `ours`, if any.
pub fn difference(ibm: &Run, ours: &Run) -> Option<String> {
    if ibm.exit != ours.exit {
        return Some(format!("exit {:?} (IBM {:?})", ours.exit, ibm.exit));
    }
    let (a, b) = (ibm.text(), ours.text());
    if a != b {
        let al: Vec<&str> = a.lines().collect();
        let bl: Vec<&str> = b.lines().collect();
        let at = al.iter().zip(&bl).take_while(|(x, y)| x == y).count();
        return Some(format!(
            "console line {}: ours {:?}, IBM {:?}",
            at + 1,
            bl.get(at).copied().unwrap_or("<end>"),
            al.get(at).copied().unwrap_or("<end>")
        ));
    }
    let names_a: Vec<&String> = ibm.files.keys().collect();
    let names_b: Vec<&String> = ours.files.keys().collect();
    if names_a != names_b {
        return Some(format!("files {names_b:?} (IBM {names_a:?})"));
    }
    for (n, d) in &ibm.files {
        if ours.files[n] != *d {
            return Some(format!("{n} differs"));
        }
    }
    None
}

fn tsf_text(case: &Case) -> String {
    case.files
        .first()
        .map(|(_, b)| String::from_utf8_lossy(b).to_ascii_uppercase())
        .unwrap_or_default()
}

/// Explains a difference that comes from a defect of TRCUST 3.05A
/// (TRCUST-FORMATS.md, defects): there ours is right on purpose.
pub fn explain(case: &Case, ibm: &Run, ours: &Run) -> Option<&'static str> {
    let it = ibm.text();
    let ot = ours.text();
    // Ours warns where TRCUST truncates silently; the rest is the same.
    let warns = [
        "WARNING: index too large, high word ignored",
        "WARNING: TDFID out of range, 0 used",
    ];
    let stripped: String = ot
        .lines()
        .filter(|l| !warns.iter().any(|w| l.ends_with(w)) || it.contains(l))
        .map(|l| format!("{l}\n"))
        .collect();
    if stripped != ot && stripped == it && ibm.exit == ours.exit && ibm.files == ours.files {
        return Some(
            "TRCUST truncates the value to 16 bits silently; we warn (defects: silent truncations)",
        );
    }
    // A header number above 0xFFFF: TRCUST keeps its low word silently;
    // we warn and use the default.
    let range_warnings = [
        "WARNING: MAJOR out of range, 1 used",
        "WARNING: MAXDATALENGTH out of range, 512 used",
        "WARNING: TDFID out of range, 0 used",
    ];
    let extra_warning = ot
        .lines()
        .any(|l| range_warnings.iter().any(|w| l.ends_with(w)) && !it.contains(l));
    if extra_warning && has_wide_header_number(&tsf_text(case)) {
        return Some(
            "TRCUST keeps the low word of a header number above 0xFFFF silently; we warn and use the default (defects: silent truncations)",
        );
    }
    // A duplicate minor: TRCUST writes no TDF at all; we keep the first.
    if it.contains("duplicate minor code") {
        let no_tdf = |r: &Run| -> (String, BTreeMap<String, Vec<u8>>) {
            let files = r
                .files
                .iter()
                .filter(|(n, _)| {
                    let u = n.to_ascii_uppercase();
                    u.starts_with("TRC") && u.ends_with(".TFF")
                })
                .map(|(n, d)| (n.clone(), d.clone()))
                .collect();
            let text = r
                .text()
                .lines()
                .filter(|l| !l.starts_with("Creating TDF") && !l.starts_with("Creating TMI"))
                .map(|l| format!("{l}\n"))
                .collect();
            (text, files)
        };
        if no_tdf(ibm) == no_tdf(ours) && ibm.exit == ours.exit {
            return Some(
                "a duplicate minor makes TRCUST drop the whole TDF; we keep the first tracepoint as documented (defects)",
            );
        }
    }
    let tsf = tsf_text(case);
    // /D with duplicate minors: TRCUST writes a malformed TFF.
    let slash_d = case
        .args
        .iter()
        .any(|a| a.eq_ignore_ascii_case("/D") || a.eq_ignore_ascii_case("-D"));
    if slash_d && it == ot && ibm.exit == ours.exit {
        let others_same = ibm
            .files
            .iter()
            .filter(|(n, _)| !n.to_ascii_uppercase().ends_with(".TFF"))
            .all(|(n, d)| ours.files.get(n) == Some(d));
        if others_same && ibm.files.len() == ours.files.len() {
            return Some(
                "/D with duplicate minors makes TRCUST write a malformed TFF (defects, 6.5)",
            );
        }
    }
    // TYPE= or GROUP= ending the last TRACE: TRCUST reports a premature end.
    if it.contains("SEVERE: premature end of file encountered")
        && !ot.contains("premature end of file")
        && ends_with_type_or_group(&tsf)
    {
        return Some(
            "TRCUST reports a premature end of file when TYPE= or GROUP= ends the file (defects, 6.2)",
        );
    }
    // A module with CodeView 4 debug information (NB05-NB11, as
    // Microsoft LINK and WLINK write it): TRCUST reads only IBM HLL, says
    // `HLL Debug Info not in order - forcing /NODE` and goes on without
    // it; we read CodeView (tdf::debuginfo). Explained only when our run
    // with /NODE is exactly IBM's run without that line.
    let not_in_order = "ERROR: HLL Debug Info not in order - forcing /NODE";
    if it.contains(not_in_order) && case.modules.iter().any(|m| is_codeview(m)) {
        let without: String = it
            .lines()
            .filter(|l| !l.ends_with(not_in_order))
            .map(|l| format!("{l}\n"))
            .collect();
        let mut nodebug = case.clone();
        nodebug.args.push("/NODE".to_string());
        let ours_nodebug = run_ours(&nodebug);
        if ours_nodebug.text() == without
            && ours_nodebug.exit == ibm.exit
            && ours_nodebug.files == ibm.files
        {
            return Some(
                "TRCUST reads only IBM HLL debug information and ignores CodeView 4 (not in order, /NODE forced); we read CodeView (tdf::debuginfo), and with /NODE ours is IBM's run",
            );
        }
    }
    // `-reg` compiles as `+reg` in TRCUST.
    if it == ot && ibm.exit == ours.exit && has_minus_register(&tsf) {
        let names_same = ibm.files.keys().eq(ours.files.keys());
        if names_same {
            return Some("TRCUST compiles -reg as +reg; we subtract (defects: silent truncations)");
        }
    }
    None
}

/// Whether module `name` of the generator ends with a CodeView 4
/// trailer (`NB05`..`NB11` and the distance back to the signature).
fn is_codeview(name: &str) -> bool {
    let Some(bytes) = module_bytes(name) else {
        return false;
    };
    let Some(sig) = bytes.len().checked_sub(8).map(|at| &bytes[at..at + 4]) else {
        return false;
    };
    matches!(
        sig,
        b"NB05" | b"NB06" | b"NB07" | b"NB08" | b"NB09" | b"NB11"
    )
}

/// Whether the last statement keyword of the file (comments left in) is
/// TYPE or GROUP, with or without its `=` (TRCUST assumes a missing one).
fn ends_with_type_or_group(tsf: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "TRACE", "TP", "MINOR", "DESC", "FMT", "TYPE", "GROUP", "REGS", "MEM", "MEM32", "ASCIIZ",
        "ASCIIZ32", "LEN", "ORBIT", "OPCODE", "RETEP", "ABORTOP", "REMOVEOP",
    ];
    let mut words = tsf.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
    let last = words.rfind(|w| KEYWORDS.contains(w));
    matches!(last, Some("TYPE" | "GROUP"))
}

/// Whether a MAJOR, MAXDATALENGTH or TDFID value is above 0xFFFF.
fn has_wide_header_number(tsf: &str) -> bool {
    // Comments (nested `/* */`, `;` to the end of the line) may sit
    // between the keyword, `=` and the number.
    let mut plain = String::new();
    let (mut depth, mut line_comment) = (0usize, false);
    let b = tsf.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if line_comment {
            if b[i] == b'\n' {
                line_comment = false;
                plain.push('\n');
            }
        } else if b[i..].starts_with(b"/*") {
            depth += 1;
            i += 2;
            continue;
        } else if depth > 0 && b[i..].starts_with(b"*/") {
            depth -= 1;
            i += 2;
            continue;
        } else if depth == 0 && b[i] == b';' {
            line_comment = true;
        } else if depth == 0 {
            plain.push(char::from(b[i]));
        }
        i += 1;
    }
    let tsf = plain.as_str();
    ["MAJOR", "MAXDATALEN", "TDFID"].iter().any(|k| {
        tsf.match_indices(k).any(|(i, _)| {
            let rest = tsf[i..].trim_start_matches(|c: char| c.is_ascii_alphabetic());
            // TRCUST assumes a missing '='.
            let rest = rest.trim_start();
            let rest = rest.strip_prefix('=').unwrap_or(rest);
            let word: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            let n = match word.strip_prefix("0X") {
                Some(h) => u64::from_str_radix(h, 16).ok(),
                None => word.parse().ok(),
            };
            n.is_some_and(|n| n > 0xFFFF)
        })
    })
}

fn has_minus_register(tsf: &str) -> bool {
    const REGS: &[&str] = &[
        "EAX", "EBX", "ECX", "EDX", "ESI", "EDI", "EBP", "ESP", "AX", "BX", "CX", "DX", "SI", "DI",
        "BP", "SP",
    ];
    tsf.match_indices('-').any(|(i, _)| {
        let rest = tsf[i + 1..].trim_start();
        REGS.iter().any(|r| {
            rest.starts_with(r) && !rest[r.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
        })
    })
}

/// Compares both runs of `case`.
pub fn judge(exe: &[u8], case: &Case) -> (Verdict, Run, Run) {
    let ibm = run_ibm(exe, case);
    let ours = run_ours(case);
    let v = match (&ibm.exit, difference(&ibm, &ours)) {
        (Err(e), _) => Verdict::IbmFailed(e.clone()),
        (_, None) => Verdict::Same,
        (_, Some(d)) => match explain(case, &ibm, &ours) {
            Some(r) => Verdict::Deviation(r),
            None => Verdict::Differs(d),
        },
    };
    (v, ibm, ours)
}

/// The value tree of case `index` of run `seed`.
pub fn tree(seed: u64, index: u64) -> impl ValueTree<Value = Spec> {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(&index.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &key);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    spec()
        .new_tree(&mut runner)
        .expect("the case strategy never rejects")
}

/// Shrinks a differing case: the smallest case proptest's simplification
/// reaches that still differs (unexplained), with at most `budget` runs.
pub fn shrink(exe: &[u8], mut t: impl ValueTree<Value = Spec>, tame: bool, budget: usize) -> Case {
    let differs = |c: &Case| matches!(judge(exe, c).0, Verdict::Differs(_));
    let mut best = t.current().case_in(tame);
    let mut runs = 0;
    'outer: while runs < budget {
        if !t.simplify() {
            break;
        }
        loop {
            runs += 1;
            let c = t.current().case_in(tame);
            if differs(&c) {
                best = c;
                break;
            }
            if runs >= budget || !t.complicate() {
                break 'outer;
            }
        }
    }
    best
}

/// Writes `case` with IBM's results in the corpus layout under `dir`
/// (args, in/, modules, expect/, exit, console.txt); a DEVIATION gets its
/// reason in `DEVIATION` and our results in ours/, ours-exit,
/// ours-console.txt.
pub fn write_case(
    dir: &Path,
    case: &Case,
    ibm: &Run,
    deviation: Option<(&str, &Run)>,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir.join("in"))?;
    std::fs::write(dir.join("args"), format!("{}\n", case.args.join(" ")))?;
    for (n, d) in &case.files {
        std::fs::write(dir.join("in").join(n), d)?;
    }
    std::fs::write(dir.join("modules"), format!("{}\n", case.modules.join(" ")))?;
    let put = |sub: &str, exit: &str, console: &str, run: &Run| -> std::io::Result<()> {
        std::fs::create_dir_all(dir.join(sub))?;
        for (n, d) in &run.files {
            std::fs::write(dir.join(sub).join(n), d)?;
        }
        let code = run.exit.clone().unwrap_or(u32::MAX);
        std::fs::write(dir.join(exit), format!("{code}\n"))?;
        std::fs::write(dir.join(console), &run.console)
    };
    put("expect", "exit", "console.txt", ibm)?;
    if let Some((reason, ours)) = deviation {
        std::fs::write(dir.join("DEVIATION"), format!("{reason}\n"))?;
        put("ours", "ours-exit", "ours-console.txt", ours)?;
    }
    Ok(())
}
