//! `os2trace demo`: the main job on the embedded default.
//!
//! 1. Builds the sample modules of `testprogs` into a scratch directory
//!    (it is drive C: of the emulated system).
//! 2. Compiles TPDLL16.TSF, the trace source of the sample DLL, with our
//!    TRCUST against the DLL and its MAP file: TPDLL16.TDF and TRC00C2.TFF.
//! 3. Starts DLLCAL16.EXE, which loads TPDLL16.DLL, switches tracing on
//!    for every tracepoint of the TDF (`TRACE ON TPDLL16`), and runs it:
//!    each tracepoint hit traps, runs its RPN program and logs a record.
//! 4. Prints the program's output, the cost of each tracepoint, and the
//!    trace buffer formatted with the TFF, as TRACEFMT would.
//! 5. Runs the five trace program examples of the DTRACE guide (§1.7)
//!    against the fixed sample machine state of `rpn_vm::examples`.

use anyhow::{Context, Result, bail};
use kernel_sim::trace::Selection;
use kernel_sim::{ConsoleBuffer, Process, ProcessConfig};
use rpn_vm::examples::{EXAMPLES, sample_machine};
use rpn_vm::{Hit, HitOutcome, Interpreter, parse};
use stda::{Stda, StdaFormat, tracefmt};
use tdf::trcust::PathStyle;

use crate::util::hex_spaced;

/// `demo`'s arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Build the files into DIR and keep them (default: a scratch
    /// directory, removed at the end), to run the printed commands there.
    #[arg(long, value_name = "DIR")]
    keep: Option<std::path::PathBuf>,
}

/// Entry point.
pub fn run(args: Args) -> Result<i32> {
    let scratch;
    let (root, shown) = match &args.keep {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            (dir.as_path(), dir.display().to_string())
        }
        None => {
            scratch = tempfile::tempdir().context("cannot create a scratch directory")?;
            (scratch.path(), "DIR".to_string())
        }
    };
    // The output stays byte-identical across runs: a scratch directory is
    // shown as DIR.
    let root_note = match &args.keep {
        Some(_) => format!("   the files are in {shown} (kept)"),
        None => "   the files are in a scratch directory, removed at the end (demo --keep DIR keeps them)".to_string(),
    };
    println!("== 1. The sample modules, built into drive C:");
    println!("   $ os2trace testprogs build {shown}");
    println!("{root_note}");
    for program in testprogs::all().context("building the sample modules")? {
        program
            .write_to(root)
            .with_context(|| format!("writing {}", program.file_name))?;
        println!(
            "   {:<13} {:>5} bytes, {} tracepoints defined",
            program.file_name,
            program.bytes.len(),
            program.tracepoints.len()
        );
    }

    println!("\n== 2. TRCUST TPDLL16.TSF /M=TPDLL16.MAP");
    println!("   $ cd {shown} && os2trace trcust TPDLL16.TSF /M=TPDLL16.MAP");
    let trcust_args: Vec<String> = ["TPDLL16.TSF", "/M=TPDLL16.MAP"].map(String::from).to_vec();
    let compiled = tdf::trcust::run(&trcust_args, root, PathStyle::Dos);
    for line in compiled.text().lines().filter(|l| !l.is_empty()) {
        println!("   {line}");
    }
    if compiled.exit_code != 0 {
        bail!("TRCUST failed with exit code {}", compiled.exit_code);
    }
    let tdf_bytes = std::fs::read(root.join("TPDLL16.TDF")).context("reading TPDLL16.TDF")?;
    let tdf = tdf::Tdf::parse(&tdf_bytes).context("reading TPDLL16.TDF")?;

    println!("\n== 3. DLLCAL16.EXE with TRACE ON TPDLL16");
    println!(
        "   $ os2trace run --root {shown} --trace TPDLL16 --query --tracefmt --save TRACE.SAV DLLCAL16.EXE"
    );
    let mut cfg = ProcessConfig::new(root, "DLLCAL16.EXE");
    cfg.max_instructions = Some(10_000_000);
    let mut process = Process::new(cfg).context("loading DLLCAL16.EXE")?;
    let console = ConsoleBuffer::new();
    process.set_console(
        Box::new(console.clone()),
        Box::new(console.clone()),
        Box::new(std::io::empty()),
    );
    process.trace_start(StdaFormat::New, 4)?;
    let dto = process.trace_on(&tdf, &Selection::default(), None)?;
    let outcome = process.run();
    process.trace_stop()?;
    for line in console.text().lines() {
        println!("   | {line}");
    }
    println!("   {outcome}");

    println!("\n== 4. What tracing cost, per tracepoint");
    let cycles = process.clock().cycles(process.machine().cycles());
    let instructions = process.instructions();
    let trace = process
        .system_trace_mut()
        .context("the system trace was started")?;
    for tp in &trace.runtime().dtos()[dto].tracepoints {
        let per_hit = tp.cycles.checked_div(tp.hits).unwrap_or(0);
        println!(
            "   minor {:04X} at {:04X}:{:08X} (linear {:08X}): {} hits, {} records, {} cycles ({} per hit)",
            tp.spec.minor,
            tp.spec.object,
            tp.spec.offset,
            tp.linear,
            tp.hits,
            tp.logged,
            tp.cycles,
            per_hit
        );
    }
    println!(
        "   the run: {instructions} instructions, {cycles} cycles on the emulated clock, {} of them for tracing",
        trace.runtime().overhead_cycles()
    );

    println!("\n== 5. TRACEFMT of the system trace buffer (rules from TRC00C2.TFF)");
    println!("   $ os2trace tracefmt TRACE.SAV /T={shown}");
    let snapshot = trace.buffer_mut().get_stda();
    let stda = Stda::parse(&snapshot.stda).context("reading back the trace buffer")?;
    let majors: Vec<u8> = stda.records().iter().map(|r| r.major).collect();
    let (rules, problems) = tracefmt::Rules::load_dir(root, majors);
    for p in problems {
        println!("   warning: {p}");
    }
    for line in tracefmt::format_stda(&stda, &rules).lines() {
        println!("   {line}");
    }

    println!("\n== 6. The trace program examples of the DTRACE guide, section 1.7");
    println!("   $ os2trace rpn run FILE.rpn --regs eax=1,... --mem ADDR=HEX --json");
    examples()?;
    println!("\nNext, try:");
    println!(
        "   os2trace demo --keep demo-files      # keep the files, then run the commands above there"
    );
    println!(
        "   os2trace run --help                  # TRACE ON specs, --apply, --save, --spool, limits"
    );
    println!("   os2trace trcust --help               # TRCUST's switches; --strict for CI");
    println!("   os2trace tdf show demo-files/TPDLL16.TDF");
    Ok(0)
}

/// The five examples against the sample machine state.
fn examples() -> Result<()> {
    let machine = &mut sample_machine();
    let mut interp = Interpreter::new();
    for (n, example) in EXAMPLES.iter().enumerate() {
        let file = parse("example.rpn", example.source)?;
        let header = &file.header;
        let tp = &file.tracepoints[0];
        println!("   {}) {}", n + 1, example.title);
        for line in &tp.listing {
            let mut bytes = Vec::new();
            line.instr.encode(&mut bytes);
            println!(
                "      {:04X}  {:<15} {}",
                line.offset,
                hex_spaced(&bytes),
                line.text.trim()
            );
        }
        let hit = Hit {
            major: tp.effective_major(header).unwrap_or(0),
            minor: tp.minor,
            logmax: header.logmax() as usize,
        };
        let result = interp.run(&tp.program, machine, &mut [], hit);
        match result.outcome {
            HitOutcome::Logged(r) => println!(
                "      -> logged major {:02X} minor {:04X}{}, {} cycles: {}",
                r.major,
                r.minor,
                if r.incomplete { " (incomplete)" } else { "" },
                result.cycles,
                hex_spaced(r.data)
            ),
            other => println!("      -> {} after {} cycles", other.name(), result.cycles),
        }
    }
    Ok(())
}
