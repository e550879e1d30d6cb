//! TRCUST as a program: its command line, the files it reads and writes in
//! a directory (the current directory, as TRCUST uses it), and its console.
//!
//! ```text
//! TRCUST tsf [tdf] [/M=map] [/W0|/W1|/W2] [/D] [/L=module] [/NODE] [/NOLN]
//!        [/RMn] [/RSnnn] [/RP] [/I] [/P] [/RAS]
//! TRCUST tcf /C=dest.tff [/Wn]
//! ```
//!
//! Names: the TSF gets `.TSF` when it has no extension; the TDF is the
//! second argument (`.TDF` added when it has none) or the TSF's base name
//! with `.TDF`; the TFF is `TRC%04X.TFF` after the major; the TMI is the TDF
//! name with `.TMI`. Files are found case-insensitively. Every file is
//! written with [`outfile::write_atomic`], so nothing half-written is left;
//! nothing is written when the run aborts, and when one output cannot be
//! written the outputs written before it are removed.
//!
//! Paths are shown as host paths, or as `C:\NAME` ([`PathStyle::Dos`]),
//! which is how TRCUST shows them when run in `C:\`.
//!
//! Symbol files (os2trace's, not IBM's TRCUST): `/M=` may name a `.SYM`
//! file (MAPSYM's, [`crate::sym`]) instead of a MAP (`Using symbol file:`
//! is printed for it); and where no `/M=` is given and a `.name` needs
//! symbols, the module's `.SYM` beside it (the module's name with `.SYM`
//! for its extension) is read, announced the same way. Without one the
//! SEVERE `symbolic info not given` is TRCUST's, so IBM's cases keep
//! their output. A `.SYM` that cannot be read is FATAL `error reading
//! file:` with the byte offset at fault.

use std::fs;
use std::path::{Path, PathBuf};

use stda::tff::Tff;

use crate::compile::{ModuleOpenError, ModuleSource, OpenedModule, Options, compile};
use crate::diag::{ABORTED, BANNER, ConsoleLine, Diagnostic, Severity, USAGE};
use crate::module::{file_image, symbols_from_map};
use crate::sym::SymFile;
use crate::target::SymbolTable;

/// How paths are shown on the console.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathStyle {
    /// The host path.
    Host,
    /// `C:\` and the path relative to the directory, with backslashes.
    Dos,
}

/// What a run did.
#[derive(Debug, Clone, Default)]
pub struct RunOutcome {
    /// Console lines.
    pub console: Vec<ConsoleLine>,
    /// The `/W` level (default 2).
    pub level: u8,
    /// 1 after FATAL or SEVERE, else 0.
    pub exit_code: i32,
    /// Files written, in order.
    pub written: Vec<PathBuf>,
    /// ERROR lines printed as text, outside the `/W` filter (an invalid
    /// parameter is shown at the level in effect when it was read).
    pub unfiltered_errors: usize,
}

impl RunOutcome {
    /// The console text at the run's warning level.
    pub fn text(&self) -> String {
        crate::diag::render(&self.console, self.level)
    }

    /// Whether an ERROR or WARNING line was printed (`--strict`).
    pub fn complained(&self) -> bool {
        self.unfiltered_errors > 0
            || self.console.iter().any(|l| {
                matches!(l, ConsoleLine::Diag(d)
                    if matches!(d.severity, Severity::Error | Severity::Warning)
                        && d.severity.level() <= self.level)
            })
    }
}

/// The command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandLine {
    /// Positional arguments.
    pub files: Vec<String>,
    /// `/M=`.
    pub map: Option<String>,
    /// `/C=`.
    pub combine: Option<String>,
    /// `/L=`.
    pub load_module: Option<String>,
    /// `/Wn`.
    pub level: u8,
    /// Compiler options.
    pub options: Options,
    /// `/D` was given (before any `/C=`; in combine mode it is refused
    /// once, after the TCF check, at the last `/W` level).
    pub duplicates: bool,
    /// Invalid parameters, as written.
    pub invalid: Vec<String>,
    /// The `/W` level in effect when each invalid parameter was read
    /// (TRCUST reports it then, so a later `/W0` does not hide it); when
    /// missing, [`CommandLine::level`].
    pub invalid_levels: Vec<u8>,
    /// Each `/D` read after `/C=`: the number of invalid parameters read
    /// before it and the `/W` level then in effect. TRCUST refuses each
    /// one in that place among them, shown or not at that level; a `/D`
    /// before `/C=` sets [`CommandLine::duplicates`] and is refused once,
    /// later (see `combine`).
    pub duplicates_refused: Vec<(usize, u8)>,
}

/// Parses TRCUST's command line. Options are case-insensitive and may start
/// with `/` or `-`.
pub fn parse_args(args: &[String]) -> CommandLine {
    let mut c = CommandLine {
        level: 2,
        ..CommandLine::default()
    };
    for a in args {
        let Some(opt) = a.strip_prefix('/').or_else(|| a.strip_prefix('-')) else {
            c.files.push(a.clone());
            continue;
        };
        let up = opt.to_ascii_uppercase();
        // TRCUST upper-cases its options, values included.
        let value = || up.split_once('=').map(|(_, v)| v.to_string());
        match up.as_str() {
            // An empty value is an invalid parameter.
            // TRCUST keeps /M= and /C= in one place: in combine mode
            // the last of them names the destination.
            _ if up.starts_with("M=") && up.len() > 2 => {
                c.map = value();
                if c.combine.is_some() {
                    c.combine = value();
                }
            }
            _ if up.starts_with("C=") && up.len() > 2 => c.combine = value(),
            _ if up.starts_with("L=") && up.len() > 2 => c.load_module = value(),
            "W0" | "W1" | "W2" => c.level = up.as_bytes()[1] - b'0',
            // A level above 2 is refused but still taken (everything is
            // shown), as TRCUST does.
            _ if up.len() == 2 && up.starts_with('W') && up.as_bytes()[1].is_ascii_digit() => {
                c.level = up.as_bytes()[1] - b'0';
                c.invalid.push(a.to_ascii_uppercase());
                c.invalid_levels.push(c.level);
            }
            // Any other /W... is refused (at the level in force), and
            // then everything is shown, as TRCUST does (`/W0 /W`).
            _ if up.starts_with('W') => {
                c.invalid.push(a.to_ascii_uppercase());
                c.invalid_levels.push(c.level);
                c.level = 2;
            }
            "D" => match c.combine {
                Some(_) => c.duplicates_refused.push((c.invalid.len(), c.level)),
                None => c.duplicates = true,
            },
            "NODE" => c.options.no_debug = true,
            "NOLN" => c.options.no_lines = true,
            "RP" => c.options.retep_pascal = true,
            "I" => c.options.ignore_case = true,
            "P" => c.options.keep_path = true,
            "RAS" => c.options.ras = true,
            _ if up.starts_with("RM")
                && up.len() == 3
                && up[2..].bytes().all(|b| (b'0'..=b'7').contains(&b)) =>
            {
                c.options.retep_mask = up[2..].parse().unwrap_or(0);
            }
            // `/RS` alone is accepted (no range).
            _ if up.starts_with("RS") && up[2..].bytes().all(|b| b.is_ascii_digit()) => {
                c.options.retep_range = up[2..].parse().ok();
            }
            // TRCUST shows the parameter upper-cased.
            _ => {
                c.invalid.push(a.to_ascii_uppercase());
                c.invalid_levels.push(c.level);
            }
        }
    }
    c
}

/// Finds `name` in `dir`: as written (backslashes as separators, a drive
/// letter dropped), then its last component, matching case-insensitively.
pub fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    let mut rel = name.replace('\\', "/");
    if rel.len() >= 2 && rel.as_bytes()[1] == b':' {
        rel = rel[2..].to_string();
    }
    let rel = rel.trim_start_matches('/');
    let direct = dir.join(rel);
    if direct.is_file() {
        return Some(direct);
    }
    let base = rel.rsplit('/').next().unwrap_or(rel);
    let candidates = [dir.join(base)];
    for c in &candidates {
        if c.is_file() {
            return Some(c.clone());
        }
    }
    fs::read_dir(dir).ok()?.flatten().find_map(|e| {
        let n = e.file_name();
        let n = n.to_string_lossy();
        (n.eq_ignore_ascii_case(base) && e.path().is_file()).then(|| e.path())
    })
}

/// The path shown for `path` in `style`.
pub fn display(dir: &Path, path: &Path, style: PathStyle) -> String {
    match style {
        PathStyle::Host => path.display().to_string(),
        PathStyle::Dos => {
            let rel = path.strip_prefix(dir).unwrap_or(path);
            format!("C:\\{}", rel.display().to_string().replace('/', "\\"))
        }
    }
}

/// The path TRCUST shows for a file it was given as `name`, run in `C:\`:
/// the drive and `.` components dropped, `..` applied, the case kept.
pub fn dos_name(name: &str) -> String {
    let mut rest = name;
    if rest.len() >= 2 && rest.as_bytes()[1] == b':' {
        rest = &rest[2..];
    }
    let mut parts: Vec<&str> = Vec::new();
    for c in rest.split(['\\', '/']) {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    format!("C:\\{}", parts.join("\\"))
}

/// `name` with `ext` added when its last component has no extension.
pub fn with_default_ext(name: &str, ext: &str) -> String {
    if crate::module::file_name(name).contains('.') {
        name.to_string()
    } else {
        format!("{name}.{ext}")
    }
}

/// The TDF file to write for the TDF argument `given`: TRCUST's default
/// `.TDF` is added to a name without an extension, except when `given`
/// names an existing device or FIFO (`/dev/full`, `/dev/stdout`, a pipe),
/// which is written as named rather than creating `/dev/full.TDF`.
pub fn tdf_output_name(dir: &Path, given: &str) -> String {
    let special = fs::metadata(dir.join(given)).is_ok_and(|m| !m.is_file() && !m.is_dir());
    if special {
        given.to_string()
    } else {
        with_default_ext(given, "TDF")
    }
}

/// `name` with its extension replaced by `ext`.
pub fn replace_ext(name: &str, ext: &str) -> String {
    let base_start = name.len() - crate::module::file_name(name).len();
    match name[base_start..].rfind('.') {
        Some(i) => format!("{}.{ext}", &name[..base_start + i]),
        None => format!("{name}.{ext}"),
    }
}

/// The host's modules: files in the directory, read with `loader`.
struct HostModules<'a> {
    dir: &'a Path,
    style: PathStyle,
    load_module: Option<String>,
}

impl ModuleSource for HostModules<'_> {
    fn open(&mut self, modname: &str) -> Result<OpenedModule, ModuleOpenError> {
        let name = self
            .load_module
            .clone()
            .unwrap_or_else(|| modname.to_string());
        let base = crate::module::file_name(&name);
        let search = if base.contains('.') || base.eq_ignore_ascii_case("OS2KRNL") {
            name.clone()
        } else {
            format!("{name}.DLL")
        };
        let Some(path) = find_file(self.dir, &search) else {
            return Err(match &self.load_module {
                Some(l) => ModuleOpenError::LoadModuleNotFound(l.clone()),
                None => ModuleOpenError::NotFound(name),
            });
        };
        // TRCUST shows a /L= name as it was given, MODNAME's as a full path.
        let shown = match (&self.load_module, self.style) {
            (Some(l), _) => l.clone(),
            (None, PathStyle::Dos) => dos_name(&search),
            (None, PathStyle::Host) => display(self.dir, &path, self.style),
        };
        let bytes = fs::read(&path).map_err(|_| ModuleOpenError::NotFound(name.clone()))?;
        let image = file_image(&bytes).map_err(|_| ModuleOpenError::BadHeader(shown.clone()))?;
        Ok(OpenedModule {
            display: shown,
            image: Box::new(image),
        })
    }

    /// The `.SYM` file beside the module (its name with `.SYM` for its
    /// extension), as MAPSYM writes it from the linker's MAP.
    fn symbols(&mut self, modname: &str) -> Option<(String, Result<SymbolTable, String>)> {
        let name = self
            .load_module
            .clone()
            .unwrap_or_else(|| modname.to_string());
        let base = crate::module::file_name(&name);
        let stem_len = name.len() - base.len() + base.rfind('.').unwrap_or(base.len());
        let search = format!("{}.SYM", &name[..stem_len]);
        let path = find_file(self.dir, &search)?;
        let shown = match self.style {
            PathStyle::Dos => dos_name(&search),
            PathStyle::Host => display(self.dir, &path, self.style),
        };
        let read = fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|b| SymFile::parse(&b).map_err(|e| e.to_string()))
            .map(|s| s.symbol_table());
        Some((shown, read))
    }
}

struct Run<'a> {
    dir: &'a Path,
    style: PathStyle,
    out: RunOutcome,
}

impl<'a> Run<'a> {
    /// A run that has printed TRCUST's banner.
    fn new(dir: &'a Path, style: PathStyle) -> Run<'a> {
        let mut r = Run {
            dir,
            style,
            out: RunOutcome {
                level: 2,
                ..RunOutcome::default()
            },
        };
        r.text("");
        r.text(BANNER);
        r
    }

    fn text(&mut self, t: impl Into<String>) {
        self.out.console.push(ConsoleLine::Text(t.into()));
    }

    fn diag(&mut self, sev: Severity, t: impl Into<String>) {
        self.out
            .console
            .push(ConsoleLine::Diag(Diagnostic::new(1, sev, t)));
    }

    fn abort(&mut self) {
        self.text("");
        self.text(ABORTED);
        self.out.exit_code = 1;
    }

    fn fatal(&mut self, t: impl Into<String>) {
        self.diag(Severity::Fatal, t);
        self.abort();
    }

    fn show(&self, path: &Path) -> String {
        display(self.dir, path, self.style)
    }

    /// How TRCUST shows a file it found by the name `given`.
    fn show_given(&self, path: &Path, given: &str) -> String {
        match self.style {
            PathStyle::Dos => dos_name(given),
            PathStyle::Host => display(self.dir, path, self.style),
        }
    }

    /// Writes a file; a failure is FATAL 5, and the files this run wrote
    /// before it are removed (a TFF without its TDF is half a result).
    fn write(&mut self, name: &str, bytes: &[u8]) -> bool {
        // A DOS name (`C:\OUT.TFF`, `SUB\X.TDF`) names a file under the
        // directory, and one that climbs out of it is not written; any
        // other name is a host path.
        let dos = name.contains('\\') || (name.len() >= 2 && name.as_bytes()[1] == b':');
        let (path, ok) = if dos {
            let mut rel = name.replace('\\', "/");
            if rel.len() >= 2 && rel.as_bytes()[1] == b':' {
                rel = rel[2..].to_string();
            }
            let rel = rel.trim_start_matches('/').to_string();
            let ok = !rel.is_empty() && !rel.split('/').any(|c| c == "..");
            (self.dir.join(rel), ok)
        } else {
            (self.dir.join(name), true)
        };
        if ok && outfile::write_atomic(&path, bytes).is_ok() {
            self.out.written.push(path);
            true
        } else {
            for done in self.out.written.drain(..) {
                let _ = fs::remove_file(done);
            }
            self.fatal(format!("error writing to file : {name}"));
            false
        }
    }
}

/// Runs TRCUST with `args` in `dir`.
pub fn run(args: &[String], dir: &Path, style: PathStyle) -> RunOutcome {
    if args.is_empty() {
        let mut r = Run::new(dir, style);
        r.text("");
        for l in USAGE {
            r.text(*l);
        }
        return r.out;
    }
    run_parsed(&parse_args(args), dir, style)
}

/// TRCUST's refusal of `/D` in combine mode.
pub(crate) const DUPLICATES_REFUSED: &str = "/D not allowed with /C, ignored";

/// Runs TRCUST with a parsed command line (`os2trace trcust` parses its
/// own, with long options beside TRCUST's switches).
pub fn run_parsed(cmd: &CommandLine, dir: &Path, style: PathStyle) -> RunOutcome {
    let mut r = Run::new(dir, style);
    r.out.level = cmd.level;
    let invalid = cmd.invalid.iter().enumerate().map(|(i, bad)| {
        (
            format!("invalid parameter: '{bad}', ignored"),
            cmd.invalid_levels.get(i).copied(),
        )
    });
    let mut refusals: Vec<(String, Option<u8>)> = invalid.collect();
    // Each `/D` after `/C=` is refused as the switches are read (later
    // ones first, so the earlier places stay right).
    for &(at, level) in cmd.duplicates_refused.iter().rev() {
        refusals.insert(
            at.min(refusals.len()),
            (DUPLICATES_REFUSED.to_string(), Some(level)),
        );
    }
    for (text, level) in refusals {
        let d = Diagnostic::new(1, Severity::Error, text);
        // Shown or not at the level the parameter was read at: a later
        // `/W0` does not hide it (it stays a diagnostic when the run's
        // level shows it anyway).
        let level = level.unwrap_or(cmd.level);
        let shown = d.severity.level() <= level;
        if shown && d.severity.level() <= cmd.level {
            r.out.console.push(ConsoleLine::Diag(d));
        } else if shown {
            r.text(d.to_string());
            r.out.unfiltered_errors += 1;
        }
    }
    if cmd.combine.is_some() {
        crate::combine::run(&mut CombineRun { run: &mut r }, cmd);
        return r.out;
    }
    tsf_mode(&mut r, cmd);
    r.out
}

/// Access to the run for combine mode.
pub(crate) struct CombineRun<'r, 'a> {
    run: &'r mut Run<'a>,
}

impl CombineRun<'_, '_> {
    pub(crate) fn dir(&self) -> &Path {
        self.run.dir
    }
    pub(crate) fn show_given(&self, p: &Path, given: &str) -> String {
        self.run.show_given(p, given)
    }
    pub(crate) fn text(&mut self, t: impl Into<String>) {
        self.run.text(t);
    }
    pub(crate) fn error(&mut self, t: impl Into<String>) {
        self.run.diag(Severity::Error, t);
    }
    pub(crate) fn fatal(&mut self, t: impl Into<String>) {
        self.run.fatal(t);
    }
    pub(crate) fn write(&mut self, name: &str, bytes: &[u8]) -> bool {
        self.run.write(name, bytes)
    }
}

fn tsf_mode(r: &mut Run<'_>, cmd: &CommandLine) {
    let Some(tsf_arg) = cmd.files.first() else {
        r.fatal("TSF file not specified");
        return;
    };
    let tsf_name = with_default_ext(tsf_arg, "TSF");
    let Some(tsf_path) = find_file(r.dir, &tsf_name) else {
        // TRCUST names it as given.
        r.fatal(format!("file not found or access denied : {tsf_arg}"));
        return;
    };
    r.text("");
    let shown = r.show_given(&tsf_path, &tsf_name);
    r.text(format!("Using source file: {shown}"));
    let symbols = match &cmd.map {
        None => None,
        Some(m) => {
            let sym = m.to_ascii_uppercase().ends_with(".SYM");
            if !m.to_ascii_uppercase().ends_with(".MAP") && !sym {
                r.fatal(format!("invalid MAP file extension given in: {m}"));
                return;
            }
            match find_file(r.dir, m) {
                None => {
                    r.text(format!("Map file not found: {m}"));
                    None
                }
                Some(p) => {
                    let shown = r.show_given(&p, m);
                    let kind = if sym { "symbol" } else { "map" };
                    r.text(format!("Using {kind} file: {shown}"));
                    let parsed = fs::read(&p).map_err(|e| e.to_string()).and_then(|b| {
                        if sym {
                            SymFile::parse(&b)
                                .map(|s| s.symbol_table())
                                .map_err(|e| e.to_string())
                        } else {
                            symbols_from_map(&b).map_err(|e| e.to_string())
                        }
                    });
                    match parsed {
                        Ok(t) => Some(t),
                        Err(e) => {
                            r.fatal(format!("error reading file: {m}, Rc = {e}"));
                            return;
                        }
                    }
                }
            }
        }
    };
    let src = match fs::read(&tsf_path) {
        Ok(b) => b,
        Err(_) => {
            r.fatal(format!("error accessing file : {tsf_name}"));
            return;
        }
    };
    let mut opts = cmd.options.clone();
    opts.allow_duplicate_minors = cmd.duplicates;
    let mut modules = HostModules {
        dir: r.dir,
        style: r.style,
        load_module: cmd.load_module.clone(),
    };
    let out = compile(&src, &opts, symbols.as_ref(), &mut modules);
    r.out.console.extend(out.console.iter().cloned());
    if out.aborted {
        r.abort();
        return;
    }
    let tdf_name = match cmd.files.get(1) {
        Some(n) => tdf_output_name(r.dir, n),
        None => replace_ext(crate::module::file_name(&tsf_name), "TDF"),
    };
    if let Some(tff) = &out.tff {
        let name = Tff::file_name(tff.major);
        if !r.write(&name, &tff.to_bytes()) {
            return;
        }
        let shown = r.show(&r.dir.join(&name));
        r.text(format!(
            "Creating TFF file: {shown} \t # records = {}",
            tff.records.len()
        ));
    }
    r.out.console.extend(out.tdf_console.iter().cloned());
    if let Some(tdf) = &out.tdf {
        if !r.write(&tdf_name, &tdf.to_bytes()) {
            return;
        }
        let shown = r.show(&r.dir.join(&tdf_name));
        r.text(format!(
            "Creating TDF file: {shown}\t # records = {}",
            tdf.records.len()
        ));
        let ours = tdf.os2trace_opcodes();
        if !ours.is_empty() {
            // Not a TRCUST line: the file needs os2trace's opcode table.
            r.text(format!(
                "Note: this is an os2trace TDF, it uses RPN opcodes OS/2 does not define: {}",
                ours.join(", ")
            ));
        }
    }
    if let Some(tmi) = &out.tmi {
        let name = replace_ext(&tdf_name, "TMI");
        if !r.write(&name, &tmi.to_bytes()) {
            return;
        }
        let shown = r.show(&r.dir.join(&name));
        r.text(format!(
            "Creating TMI file: {shown}\t # records = {}",
            tmi.records.len()
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(with_default_ext("DYN", "TSF"), "DYN.TSF");
        assert_eq!(with_default_ext("OTHER.XYZ", "TDF"), "OTHER.XYZ");
        assert_eq!(replace_ext("OTHER.XYZ", "TMI"), "OTHER.TMI");
        assert_eq!(replace_ext("D_EAX.TSF", "TDF"), "D_EAX.TDF");
        assert_eq!(replace_ext("A.B\\C", "TDF"), "A.B\\C.TDF");
        assert_eq!(dos_name("c:t.tsf"), "C:\\t.tsf");
        assert_eq!(dos_name(".\\X\\..\\M.MAP"), "C:\\M.MAP");
    }

    #[test]
    fn options() {
        let a: Vec<String> = ["X.TSF", "/m=a.map", "/W1", "/RM4", "/RS100", "/H", "/I"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let c = parse_args(&a);
        assert_eq!(c.files, vec!["X.TSF"]);
        assert_eq!(c.map.as_deref(), Some("A.MAP"));
        assert_eq!(c.level, 1);
        assert_eq!(c.options.retep_mask, 4);
        assert_eq!(c.options.retep_range, Some(100));
        assert!(c.options.ignore_case);
        assert_eq!(c.invalid, vec!["/H"]);
        let c = parse_args(&["/M=".to_string(), "/RM".to_string(), "/rsx".to_string()]);
        assert_eq!(c.invalid, vec!["/M=", "/RM", "/RSX"]);
    }
}
