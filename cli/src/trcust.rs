//! `os2trace trcust ...`: IBM's Trace Customizer with its own command line,
//! run in the current directory as TRCUST is:
//!
//! ```text
//! os2trace trcust TSF [TDF] [/M=map] [/W0-2] [/D] [/L=module] [/P] [/I]
//!                 [/RM0-7] [/RSnnn] [/RP] [/NODE] [/NOLN] [/RAS] [--strict]
//! os2trace trcust TCF /C=dest.tff [/W0-2]
//! ```
//!
//! Everything TRCUST prints goes to stdout, as TRCUST wrote it to the
//! console; the exit code is TRCUST's (1 after a FATAL or SEVERE message,
//! 0 after ERRORs), or with `--strict` 1 after any ERROR or WARNING line.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tdf::trcust::{
    CommandLine, PathStyle, find_file, replace_ext, run_parsed, tdf_output_name, with_default_ext,
};

use crate::util::refuse_overwrite;

/// `trcust --help`'s explanation.
pub const LONG_ABOUT: &str = "TRCUST: compile a trace source file (TSF) to a trace definition \
file (TDF), a trace format file (TFF, TRCnnnn.TFF after the major code) and, for ORBIT \
tracepoints, a TMI; or combine the TFFs a trace combine file (TCF) lists into one (/C=).

TRCUST's own switches are accepted as IBM wrote them (case-insensitive, / or -): /M=map \
/W0-2 /D /L=module /P /I /RM0-7 /RSnnn /RP /NODE /NOLN /RAS /C=dest. An unknown switch is \
reported as TRCUST did ('invalid parameter ... ignored') and the run goes on. Files are read \
and written in the current directory, found case-insensitively.";

/// `trcust --help`'s closing lines.
pub const AFTER_HELP: &str = "Exit code: TRCUST's (1 after FATAL or SEVERE, \
0 after ERRORs, as IBM's TRCUST); with --strict also 1 after any ERROR or WARNING line, for \
testing TDFs in CI.";

/// TRCUST's command line.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The TSF (`.TSF` assumed), or the TCF with --combine; then the TDF
    /// name (default: the TSF's name with `.TDF`).
    #[arg(value_name = "FILE")]
    files: Vec<String>,
    /// The TDF to write (the second FILE).
    #[arg(short = 'o', long, value_name = "TDF")]
    output: Option<String>,
    /// /M=: the linker MAP file of the module, for symbols.
    #[arg(long, value_name = "MAP")]
    map: Option<String>,
    /// /C=: combine the TFFs listed in FILE (a TCF) into DEST.
    #[arg(long, value_name = "DEST")]
    combine: Option<String>,
    /// /L=: the module to read instead of the one the TSF names.
    #[arg(long, value_name = "MODULE")]
    load_module: Option<String>,
    /// /W0, /W1, /W2: show FATAL/SEVERE only, also ERRORs, also WARNINGs.
    #[arg(long, value_name = "LEVEL", value_parser = clap::value_parser!(u8).range(0..=2))]
    warn: Option<u8>,
    /// /D: allow duplicate minor codes.
    #[arg(long)]
    duplicates: bool,
    /// /NODE: ignore the module's debug information.
    #[arg(long)]
    no_debug: bool,
    /// /NOLN: ignore line numbers.
    #[arg(long)]
    no_lines: bool,
    /// /RP: RETEP tracepoints for Pascal-convention returns.
    #[arg(long)]
    retep_pascal: bool,
    /// /I: symbol names are case-insensitive.
    #[arg(long)]
    ignore_case: bool,
    /// /P: keep the module's path in the TDF.
    #[arg(long)]
    keep_path: bool,
    /// /RAS: a RAS (system) trace definition.
    #[arg(long)]
    ras: bool,
    /// /RMn: the RETEP mask (0-7).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=7))]
    retep_mask: Option<u8>,
    /// /RSnnn: the RETEP search range in bytes.
    #[arg(long, value_name = "N")]
    retep_range: Option<u32>,
    /// Exit 1 when any ERROR or WARNING line was printed (IBM's TRCUST
    /// exits 0 after ERRORs).
    #[arg(long)]
    strict: bool,
    /// A switch TRCUST does not know (reported and ignored, as TRCUST did).
    #[arg(long, hide = true, value_name = "SWITCH")]
    invalid: Vec<String>,
}

impl Args {
    fn command_line(&self) -> CommandLine {
        let mut c = CommandLine {
            files: self.files.clone(),
            map: self.map.clone(),
            combine: self.combine.clone(),
            load_module: self.load_module.clone(),
            level: self.warn.unwrap_or(2),
            duplicates: self.duplicates,
            invalid: self.invalid.clone(),
            ..CommandLine::default()
        };
        if let Some(out) = &self.output {
            c.files.truncate(1);
            c.files.push(out.clone());
        }
        let o = &mut c.options;
        o.no_debug = self.no_debug;
        o.no_lines = self.no_lines;
        o.retep_pascal = self.retep_pascal;
        o.ignore_case = self.ignore_case;
        o.keep_path = self.keep_path;
        o.ras = self.ras;
        o.retep_mask = self.retep_mask.unwrap_or(0);
        o.retep_range = self.retep_range;
        c
    }

    fn is_empty(&self) -> bool {
        self.files.is_empty()
            && self.output.is_none()
            && self.map.is_none()
            && self.combine.is_none()
    }
}

/// Entry point of the subcommand.
pub fn run(args: Args) -> Result<i32> {
    let dir = std::env::current_dir().context("cannot read the current directory")?;
    if args.is_empty() && args.invalid.is_empty() {
        let outcome = tdf::trcust::run(&[], &dir, PathStyle::Host);
        print!("{}", outcome.text());
        return Ok(outcome.exit_code);
    }
    let cmd = args.command_line();
    check_outputs(&dir, &cmd)?;
    let outcome = run_parsed(&cmd, &dir, PathStyle::Host);
    print!("{}", outcome.text());
    if args.strict && outcome.complained() {
        return Ok(1);
    }
    Ok(outcome.exit_code)
}

/// No output may be one of the inputs (`--output X.MAP /M=X.MAP`).
fn check_outputs(dir: &Path, cmd: &CommandLine) -> Result<()> {
    let mut inputs: Vec<PathBuf> = Vec::new();
    let mut outputs: Vec<PathBuf> = Vec::new();
    let found = |name: &str| find_file(dir, name);
    if let Some(dest) = &cmd.combine {
        if let Some(tcf) = cmd.files.first().and_then(|f| found(f)) {
            inputs.push(tcf);
        }
        outputs.push(dir.join(dest));
    } else if let Some(tsf) = cmd.files.first() {
        let tsf = with_default_ext(tsf, "TSF");
        inputs.extend(found(&tsf));
        inputs.extend(cmd.map.as_deref().and_then(found));
        let tdf = match cmd.files.get(1) {
            Some(n) => tdf_output_name(dir, n),
            None => replace_ext(tdf::module::file_name(&tsf), "TDF"),
        };
        outputs.push(found(&tdf).unwrap_or_else(|| dir.join(&tdf)));
        let tmi = replace_ext(&tdf, "TMI");
        outputs.push(found(&tmi).unwrap_or_else(|| dir.join(&tmi)));
    }
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    for out in &outputs {
        refuse_overwrite(out, &inputs)?;
    }
    Ok(())
}
