//! `os2trace rpn asm|disasm|verify|run`: the trace program tools.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use rpn_vm::fake::PAGE_SIZE;
use rpn_vm::jit::Compiled;
use rpn_vm::source::TraceProgramFile;
use rpn_vm::{FakeMachine, FakeSegment, Hit, HitOutcome, Interpreter, Reg, object};

use crate::util::parse_u32;

/// Trace program tools.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Assemble every tracepoint and print a listing.
    Asm {
        /// The trace program file.
        file: PathBuf,
        /// Write the compiled programs (RPNO format) here.
        #[arg(short = 'o')]
        out: Option<PathBuf>,
    },
    /// Turn a compiled file (RPNO) or raw bytecode back into trace program text.
    Disasm {
        /// The compiled file, or a file of raw bytecode.
        file: PathBuf,
    },
    /// Check every tracepoint with the verifier.
    Verify {
        /// The trace program file.
        file: PathBuf,
    },
    /// Run one tracepoint's program against a fake machine.
    Run(RunArgs),
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// The trace program file.
    file: PathBuf,
    /// The tracepoint to run (default: the first).
    #[arg(long, value_parser = parse_u32)]
    minor: Option<u32>,
    /// Registers as the trap frame holds them: eax=1,ebp=0x2000,...
    #[arg(long, value_delimiter = ',')]
    regs: Vec<String>,
    /// Bytes at a flat address: ADDR=HEX.
    #[arg(long)]
    mem: Vec<String>,
    /// A selector: SEL=BASE[:LIMIT][:np]. Any other selector is invalid.
    #[arg(long)]
    sel: Vec<String>,
    /// A page that is not present (the page containing ADDR).
    #[arg(long, value_parser = parse_u32)]
    notpresent: Vec<u32>,
    /// An object of the traced module: N=SEL:BASE.
    #[arg(long)]
    object: Vec<String>,
    /// Number of DTO variables, at most 65535 as a DTO holds (default:
    /// the file's vars=).
    #[arg(long, value_parser = parse_vars)]
    vars: Option<u32>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Run the program as native code (rpn_vm::jit) rather than
    /// interpreted; the result is the same. Exit 1 where it does not
    /// compile (not an x86-64 host, or jumps that join with two stack
    /// depths).
    #[arg(long)]
    native: bool,
}

/// `--vars`: a DTO's count, so no command line makes a huge table.
fn parse_vars(text: &str) -> Result<u32, String> {
    let n = parse_u32(text)?;
    if n > 0xFFFF {
        return Err(format!("{n} is more than a DTO's 65535 variables"));
    }
    Ok(n)
}

/// Entry point.
pub fn run(args: Args) -> Result<i32> {
    match args.command {
        Command::Asm { file, out } => asm(&file, out.as_deref()),
        Command::Disasm { file } => disasm(&file),
        Command::Verify { file } => verify(&file),
        Command::Run(run) => run_one(&run),
    }
}

/// Parses a trace program file, with the listings when `listing` (only
/// `asm` prints them; without, memory stays near the file's size); on
/// errors prints them and yields `None`.
fn load(file: &Path, listing: bool) -> Result<Option<TraceProgramFile>> {
    let text = crate::util::read_source(file)?;
    let name = file.display().to_string();
    let parsed = if listing {
        rpn_vm::parse(&name, &text)
    } else {
        rpn_vm::source::parse_programs(&name, &text)
    };
    match parsed {
        Ok(parsed) => Ok(Some(parsed)),
        Err(errors) => {
            eprintln!("{errors}");
            Ok(None)
        }
    }
}

fn asm(file: &Path, out: Option<&Path>) -> Result<i32> {
    let Some(parsed) = load(file, true)? else {
        return Ok(1);
    };
    let mut listing = String::new();
    for tp in &parsed.tracepoints {
        writeln!(
            listing,
            "; minor=0x{:04X}  {} bytes",
            tp.minor,
            tp.program.bytes().len()
        )?;
        for line in &tp.listing {
            let mut bytes = Vec::new();
            line.instr.encode(&mut bytes);
            let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02X}")).collect();
            writeln!(
                listing,
                "{:04X}  {:<15} {:>4}| {}",
                line.offset,
                hex.join(" "),
                line.line,
                line.text.trim_end()
            )?;
        }
    }
    print!("{listing}");
    if let Some(out) = out {
        crate::util::refuse_overwrite(out, &[file])?;
        outfile::write_atomic(out, &object::write(&parsed))?;
    }
    Ok(0)
}

fn disasm(file: &Path) -> Result<i32> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    if bytes.starts_with(object::MAGIC) {
        // One tracepoint at a time, so memory stays that of the file (the
        // text and the verified programs are several times its size): a
        // first pass checks the whole file, so nothing is printed for a
        // bad one, and the second prints.
        let named = |e| anyhow::anyhow!("{}: {e}", file.display());
        let (header, each) = object::read_each(&bytes).map_err(named)?;
        for tp in each {
            tp.map_err(named)?;
        }
        print!("{}", rpn_vm::disasm::header_text(&header));
        for tp in object::read_each(&bytes).map_err(named)?.1 {
            print!("{}", rpn_vm::disasm::tracepoint_text(&tp.map_err(named)?));
        }
        return Ok(0);
    }
    match rpn_vm::disasm::disassemble(&bytes, "") {
        Ok(text) => {
            print!("minor=1\n{text}");
            Ok(0)
        }
        Err((offset, e)) => bail!("{}: byte offset {offset}: {e}", file.display()),
    }
}

fn verify(file: &Path) -> Result<i32> {
    let Some(parsed) = load(file, false)? else {
        return Ok(1);
    };
    println!(
        "{}: {} tracepoints verified",
        file.display(),
        parsed.tracepoints.len()
    );
    Ok(0)
}

fn run_one(args: &RunArgs) -> Result<i32> {
    let Some(parsed) = load(&args.file, false)? else {
        return Ok(1);
    };
    let tp = match args.minor {
        Some(minor) => parsed
            .tracepoints
            .iter()
            .find(|t| u32::from(t.minor) == minor),
        None => parsed.tracepoints.first(),
    };
    let Some(tp) = tp else {
        bail!("{}: no such tracepoint", args.file.display())
    };
    let machine = &mut build_machine(args)?;
    let nvars = args.vars.unwrap_or(parsed.header.vars());
    // The program was verified against the file's vars; re-verify when the
    // command line gives another count.
    let program = rpn_vm::Program::load(tp.program.bytes(), nvars)
        .map_err(|e| anyhow::anyhow!("{}: minor 0x{:X}: {e}", args.file.display(), tp.minor))?;
    let mut vars = vec![0u32; nvars as usize];
    let hit = Hit {
        major: tp.effective_major(&parsed.header).unwrap_or(0),
        minor: tp.minor,
        logmax: parsed.header.logmax() as usize,
    };
    let mut interp = Interpreter::new();
    let compiled;
    let result = if args.native {
        let Some(native) = Compiled::new(&program) else {
            eprintln!(
                "{}: minor 0x{:X}: does not compile to native code here",
                args.file.display(),
                tp.minor
            );
            return Ok(1);
        };
        compiled = native;
        compiled.run(&mut interp, machine, &mut vars, hit)
    } else {
        interp.run(&program, machine, &mut vars, hit)
    };
    let (major, minor, data, incomplete) = match result.outcome {
        HitOutcome::Logged(r) => (r.major, r.minor, r.data.to_vec(), r.incomplete),
        _ => (hit.major, hit.minor, Vec::new(), false),
    };
    if args.json {
        let json = serde_json::json!({
            "outcome": result.outcome.name(),
            "major": major,
            "minor": minor,
            "incomplete": incomplete,
            "data": hex::encode(&data),
            "cycles": result.cycles,
            "vars": vars,
        });
        println!("{json}");
    } else {
        match result.outcome {
            HitOutcome::Error(e) => println!("outcome: error ({e})"),
            o => println!("outcome: {}", o.name()),
        }
        println!("major: 0x{major:04X}  minor: 0x{minor:04X}  incomplete: {incomplete}");
        println!("cycles: {}", result.cycles);
        println!(
            "data ({} bytes): {}",
            data.len(),
            crate::util::hex_spaced(&data)
        );
        if !vars.is_empty() {
            let shown: Vec<String> = vars.iter().map(|v| format!("0x{v:X}")).collect();
            println!("vars: {}", shown.join(" "));
        }
    }
    Ok(0)
}

fn build_machine(args: &RunArgs) -> Result<FakeMachine> {
    let mut m = FakeMachine::new();
    for spec in &args.regs {
        let (name, value) = spec
            .split_once('=')
            .with_context(|| format!("--regs: expected reg=value, got '{spec}'"))?;
        let reg = Reg::from_name(name.trim())
            .with_context(|| format!("--regs: unknown register '{name}'"))?;
        m.set_reg(reg, parse_u32(value.trim()).map_err(anyhow::Error::msg)?);
    }
    for spec in &args.mem {
        let (addr, hex) = spec
            .split_once('=')
            .with_context(|| format!("--mem: expected ADDR=HEX, got '{spec}'"))?;
        let bytes = hex::decode(hex.replace([' ', '_'], ""))
            .with_context(|| format!("--mem: bad hex in '{spec}'"))?;
        m.write(parse_u32(addr).map_err(anyhow::Error::msg)?, &bytes);
    }
    for spec in &args.sel {
        let (sel, rest) = spec
            .split_once('=')
            .with_context(|| format!("--sel: expected SEL=BASE[:LIMIT][:np], got '{spec}'"))?;
        let mut parts = rest.split(':');
        let base = parse_u32(parts.next().unwrap_or("")).map_err(anyhow::Error::msg)?;
        let mut segment = FakeSegment {
            base,
            limit: 0xFFFF,
            present: true,
        };
        for part in parts {
            if part.eq_ignore_ascii_case("np") {
                segment.present = false;
            } else {
                segment.limit = parse_u32(part).map_err(anyhow::Error::msg)?;
            }
        }
        let sel = parse_u32(sel).map_err(anyhow::Error::msg)?;
        m.add_selector(
            u16::try_from(sel).context("--sel: selector above 0xFFFF")?,
            segment,
        );
    }
    for &addr in &args.notpresent {
        m.mark_not_present(addr - addr % PAGE_SIZE);
    }
    for spec in &args.object {
        let (n, rest) = spec
            .split_once('=')
            .with_context(|| format!("--object: expected N=SEL:BASE, got '{spec}'"))?;
        let (sel, base) = rest
            .split_once(':')
            .with_context(|| format!("--object: expected N=SEL:BASE, got '{spec}'"))?;
        let sel = u16::try_from(parse_u32(sel).map_err(anyhow::Error::msg)?)
            .context("--object: selector above 0xFFFF")?;
        m.add_object(
            parse_u32(n).map_err(anyhow::Error::msg)?,
            sel,
            parse_u32(base).map_err(anyhow::Error::msg)?,
        );
    }
    Ok(m)
}
