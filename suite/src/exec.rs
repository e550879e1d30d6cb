//! Running one case: a fresh sandbox and emulated machine, TRCUST, TRACE ON
//! and APPLY, the program, and the artifacts the checks compare.
//!
//! Everything a case produces comes from the emulated machine and the
//! sandbox, never from the host: the clock is the emulated one (fixed start
//! date), paths are shown as the guest and TRCUST see them (`C:\...`), and
//! the sandbox's host directory appears nowhere. So a case gives the same
//! bytes on every host, in every directory and time zone.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};

use kernel_sim::trace::{Selection, SystemTrace};
use kernel_sim::{ConsoleBuffer, Outcome, Process, ProcessConfig};
use sha2::{Digest, Sha256};
use stda::{Stda, StdaFormat, tracefmt};
use tdf::trcust::PathStyle;

use crate::source::Sources;
use crate::spec::{Case, Check, Format};

/// What a case produced: one byte string per check.
pub type Artifacts = BTreeMap<Check, Vec<u8>>;

/// A case's artifacts, the TFF rules of its sandbox (to show records in a
/// diff), and why the program ended abnormally, if it did.
#[derive(Debug)]
pub struct Produced {
    /// One byte string per check.
    pub artifacts: Artifacts,
    /// The formatting rules the sandbox's TFFs give.
    pub rules: tracefmt::Rules,
    /// Set when the guest faulted, ran out of instructions, called an API
    /// that is not implemented or stopped the CPU: the case fails.
    pub abnormal: Option<String>,
}

/// What TRCUST did for one command line: its console, exit code, and the
/// files it wrote (name, bytes).
#[derive(Debug)]
struct Compiled {
    console: String,
    exit_code: i32,
    written: Vec<(String, Vec<u8>)>,
}

/// Compiled TSFs of a run, by the hash of the command line and every
/// sandbox file: cases that compile the same inputs share one compile.
#[derive(Debug, Default)]
pub struct CompileCache {
    entries: Mutex<HashMap<[u8; 32], Arc<Compiled>>>,
    hits: std::sync::atomic::AtomicUsize,
}

impl CompileCache {
    /// How many compiles the cache saved.
    pub fn hits(&self) -> usize {
        self.hits.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Why a case could not run to its artifacts.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    /// Setting up the sandbox failed.
    #[error("setting up: {0}")]
    Setup(String),
    /// TRACE ON or APPLY failed.
    #[error("tracing: {0}")]
    Trace(String),
    /// The program could not be loaded.
    #[error("loading {program}: {message}")]
    Load {
        /// The program.
        program: String,
        /// Why.
        message: String,
    },
}

/// Runs one case and returns its artifacts.
///
/// # Errors
/// [`CaseError`] when the case cannot run at all; a program that faults or
/// runs out of instructions still gives artifacts (its `exit.txt` says so)
/// and [`Produced::abnormal`].
pub fn run_case(
    case: &Case,
    suite_dir: &Path,
    sources: &Sources,
    cache: &CompileCache,
) -> Result<Produced, CaseError> {
    let sandbox = tempfile::tempdir().map_err(|e| CaseError::Setup(e.to_string()))?;
    let root = sandbox.path();
    sources
        .materialize(suite_dir, &case.files, root)
        .map_err(|e| CaseError::Setup(e.to_string()))?;

    let mut trcust_log = String::new();
    for line in &case.trcust {
        let compiled = compile(line, root, cache)?;
        trcust_log.push_str(&format!("> TRCUST {}\n", line.join(" ")));
        trcust_log.push_str(&compiled.console);
        if !compiled.console.ends_with('\n') && !compiled.console.is_empty() {
            trcust_log.push('\n');
        }
        trcust_log.push_str(&format!("exit code {}\n", compiled.exit_code));
    }

    let mut cfg = ProcessConfig::new(root, case.program.clone());
    cfg.args = case.args.clone();
    for (k, v) in &case.env {
        cfg.set_env(k, v);
    }
    cfg.max_instructions = Some(case.max_insns);
    let mut process = Process::new(cfg).map_err(|e| CaseError::Load {
        program: case.program.clone(),
        message: e.to_string(),
    })?;
    let console = ConsoleBuffer::new();
    process.set_console(
        Box::new(console.clone()),
        Box::new(console.clone()),
        Box::new(std::io::empty()),
    );
    let format = match case.format {
        Format::New => StdaFormat::New,
        Format::Old => StdaFormat::Old,
    };
    process
        .trace_start(format, case.tracebuf)
        .map_err(|e| CaseError::Trace(e.to_string()))?;
    let mut verify_log = String::new();
    for operand in &case.trace {
        let (name, spec) = kernel_sim::trace::select::split_operand(operand);
        // A number is a static major (DosSysTrace records), as TRACE ON
        // spells it.
        if process
            .trace_on_static(operand)
            .map_err(|e| CaseError::Trace(e.to_string()))?
        {
            continue;
        }
        let file = tdf::trcust::with_default_ext(name, "TDF");
        let bytes = read_sandbox(root, &file)?;
        let tdf = tdf::Tdf::parse(&bytes).map_err(|e| CaseError::Trace(format!("{file}: {e}")))?;
        let selection = Selection::parse(spec.unwrap_or(""), &tdf)
            .map_err(|e| CaseError::Trace(format!("{operand}: {e}")))?;
        process
            .trace_on(&tdf, &selection, None)
            .map_err(|e| CaseError::Trace(format!("TRACE ON {operand}: {e}")))?;
        verify_log.push_str(&verify(root, &file, &tdf));
    }
    for operand in &case.apply {
        let (file, module) = match operand.split_once('@') {
            Some((f, m)) => (tdf::trcust::with_default_ext(f, "RPN"), Some(m.to_string())),
            None => (tdf::trcust::with_default_ext(operand, "RPN"), None),
        };
        let bytes = read_sandbox(root, &file)?;
        let text = String::from_utf8_lossy(&bytes);
        let parsed = rpn_vm::parse(&file, &text).map_err(|e| CaseError::Trace(e.to_string()))?;
        let module = module
            .or_else(|| {
                parsed
                    .header
                    .name
                    .as_deref()
                    .map(|n| tdf::module::module_name(n).to_string())
            })
            .ok_or_else(|| {
                CaseError::Trace(format!("{file}: no module: give name= or {file}@MODULE"))
            })?;
        process
            .trace_apply(&module, &parsed, None, None)
            .map_err(|e| CaseError::Trace(format!("APPLY {operand}: {e}")))?;
    }
    if let Some(words) = &case.cptrap {
        let words: Vec<&str> = words.split_whitespace().collect();
        let selection = cptrap::Selection::parse(&words)
            .map_err(|e| CaseError::Trace(format!("cptrap = {:?}: {e}", words.join(" "))))?;
        process
            .cptrap_start(&kernel_sim::systable::CptrapConfig::new(selection))
            .map_err(CaseError::Trace)?;
    }
    if case.tnf {
        process
            .tnf_discover()
            .map_err(|e| CaseError::Trace(format!("TNF probes: {e}")))?;
        for i in 0..process.tnf_probes().len() {
            let action = kernel_sim::tnf::ProbeAction {
                record: true,
                debug: false,
            };
            process.tnf_set_action(i, action);
        }
        let writer = tnf::TnfWriter::new(TNF_FILE_SIZE, tnf::Endian::Little)
            .map_err(|e| CaseError::Trace(format!("TNF: {e}")))?;
        process.tnf_start(writer);
    }

    let outcome = process.run();
    process
        .trace_stop()
        .map_err(|e| CaseError::Trace(e.to_string()))?;
    let cptrap_text = process.cptrap_finish().map(|r| cptrap_listing(&r.file));
    let tnf_text = if case.tnf {
        process.tnf_finish().map(|w| tnf_listing(w.bytes()))
    } else {
        None
    };
    let session = process
        .system_trace_mut()
        .ok_or_else(|| CaseError::Trace("the system trace was not started".into()))?;

    let mut out = Artifacts::new();
    let snapshot = session.buffer_mut().get_stda();
    let stda = Stda::parse(&snapshot.stda)
        .map_err(|e| CaseError::Trace(format!("reading back the trace buffer: {e}")))?;
    let majors: Vec<u8> = stda.records().iter().map(|r| r.major).collect();
    let (rules, _) = tracefmt::Rules::load_dir(root, majors);
    for check in &case.checks {
        let bytes = match check {
            Check::Stda => snapshot.stda.clone(),
            Check::Tracefmt => tracefmt::format_stda(&stda, &rules).into_bytes(),
            Check::Json => stda
                .records()
                .iter()
                .enumerate()
                .map(|(i, r)| tracefmt::json_line(i + 1, r) + "\n")
                .collect::<String>()
                .into_bytes(),
            Check::Hits => hits(session).into_bytes(),
            Check::Trcust => trcust_log.clone().into_bytes(),
            Check::Verify => verify_log.clone().into_bytes(),
            Check::Exit => exit_text(&outcome, session.sysdump()).into_bytes(),
            Check::Output => console.contents(),
            Check::Cptrap => match &cptrap_text {
                Some(text) => text.clone().into_bytes(),
                None => continue,
            },
            Check::Tnf => match &tnf_text {
                Some(text) => text.clone().into_bytes(),
                None => continue,
            },
        };
        out.insert(*check, bytes);
    }
    let abnormal = match &outcome {
        Outcome::Exited(_) | Outcome::Stopped => None,
        other => Some(other.to_string()),
    };
    Ok(Produced {
        artifacts: out,
        rules,
        abnormal,
    })
}

/// Reads a file of the sandbox by its OS/2 name (case-insensitive, as
/// TRCUST finds its files).
fn read_sandbox(root: &Path, name: &str) -> Result<Vec<u8>, CaseError> {
    let path = tdf::trcust::find_file(root, name)
        .ok_or_else(|| CaseError::Trace(format!("{name}: no such file in the sandbox")))?;
    std::fs::read(&path).map_err(|e| CaseError::Trace(format!("{name}: {e}")))
}

/// Runs TRCUST (or takes its result from the cache) and leaves its files
/// in the sandbox.
fn compile(args: &[String], root: &Path, cache: &CompileCache) -> Result<Arc<Compiled>, CaseError> {
    let listing = sandbox_files(root)?;
    let mut hash = Sha256::new();
    for a in args {
        hash.update(a.as_bytes());
        hash.update([0]);
    }
    for (name, bytes) in &listing {
        hash.update(name.as_bytes());
        hash.update([0]);
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(bytes);
    }
    let key: [u8; 32] = hash.finalize().into();
    let cached = cache
        .entries
        .lock()
        .map(|m| m.get(&key).cloned())
        .unwrap_or(None);
    let compiled = match cached {
        Some(c) => {
            cache
                .hits
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            for (name, bytes) in &c.written {
                std::fs::write(root.join(name), bytes)
                    .map_err(|e| CaseError::Setup(format!("{name}: {e}")))?;
            }
            c
        }
        None => {
            let outcome = tdf::trcust::run(args, root, PathStyle::Dos);
            let after = sandbox_files(root)?;
            let before: BTreeMap<_, _> = listing.into_iter().collect();
            let written = after
                .into_iter()
                .filter(|(name, bytes)| before.get(name) != Some(bytes))
                .collect();
            let c = Arc::new(Compiled {
                console: outcome.text(),
                exit_code: outcome.exit_code,
                written,
            });
            if let Ok(mut m) = cache.entries.lock() {
                m.insert(key, Arc::clone(&c));
            }
            c
        }
    };
    Ok(compiled)
}

fn sandbox_files(root: &Path) -> Result<Vec<(String, Vec<u8>)>, CaseError> {
    let io = |e: std::io::Error| CaseError::Setup(format!("reading the sandbox: {e}"));
    let mut files = Vec::new();
    for entry in std::fs::read_dir(root).map_err(io)? {
        let entry = entry.map_err(io)?;
        if entry.file_type().map_err(io)?.is_file() {
            let name = entry.file_name().to_string_lossy().into_owned();
            files.push((name, std::fs::read(entry.path()).map_err(io)?));
        }
    }
    files.sort();
    Ok(files)
}

/// `tdf verify` of a traced TDF against the module file it names, with the
/// MAP of the same stem when the sandbox has one.
fn verify(root: &Path, tdf_file: &str, tdf: &tdf::Tdf) -> String {
    let named = String::from_utf8_lossy(&tdf.module).into_owned();
    let module = tdf::module::file_name(&named).to_string();
    let stem = tdf::module::module_name(&module);
    let mut text = format!("{tdf_file} against {module}:\n");
    let image = match read_sandbox(root, &module)
        .map_err(|e| e.to_string())
        .and_then(|b| tdf::module::image_from_bytes(&b).map_err(|e| e.to_string()))
    {
        Ok(image) => image,
        Err(e) => {
            text.push_str(&format!("  cannot read the module: {e}\n"));
            return text;
        }
    };
    let symbols = read_sandbox(root, &format!("{stem}.MAP"))
        .ok()
        .and_then(|b| tdf::module::symbols_from_map(&b).ok());
    let problems = tdf::verify::verify(tdf, &image, symbols.as_ref());
    for p in &problems {
        text.push_str(&format!("  {p}\n"));
    }
    text.push_str(&format!(
        "  {} tracepoints, {} problems\n",
        tdf.records.len(),
        problems.len()
    ));
    text
}

/// The TNF trace file of a case (4 MB, the prex default).
const TNF_FILE_SIZE: u64 = 4 << 20;

/// Every record of a CPTRAP file as TRAPRED shows it.
fn cptrap_listing(file: &[u8]) -> String {
    match cptrap::CptrapFile::parse(file) {
        Ok(f) => f
            .records()
            .iter()
            .flat_map(cptrap::trapred::display::record_lines)
            .map(|l| l + "\n")
            .collect(),
        Err(e) => format!("the CPTRAP file does not read: {e}\n"),
    }
}

/// A TNF trace as tnfdump prints it.
fn tnf_listing(file: &[u8]) -> String {
    match tnf::TnfFile::parse(file).and_then(|f| tnf::dump::cooked(&f, false)) {
        Ok(text) => text,
        Err(e) => format!("the TNF file does not read: {e}\n"),
    }
}

/// Hits, records and cycles per tracepoint, one line each, DTO by DTO.
fn hits(session: &SystemTrace) -> String {
    let mut text = String::new();
    for (i, dto) in session.runtime().dtos().iter().enumerate() {
        for tp in &dto.tracepoints {
            text.push_str(&format!(
                "dto {i} major {:04X} minor {:04X} at {:04X}:{:08X}: {} hits, {} records, {} cycles\n",
                tp.spec.major, tp.spec.minor, tp.spec.object, tp.spec.offset, tp.hits, tp.logged, tp.cycles
            ));
        }
    }
    text.push_str(&format!(
        "tracing overhead: {} cycles\n",
        session.runtime().overhead_cycles()
    ));
    text
}

fn exit_text(outcome: &Outcome, sysdump: Option<u32>) -> String {
    match sysdump {
        Some(linear) => format!("{outcome} (SysDump at {linear:08X})\n"),
        None => format!("{outcome}\n"),
    }
}
