//! `os2trace trapred FILE [-f SCRIPT] [--print PRINTFILE] [--hold]`: VM/SP's
//! TRAPRED over a CPTRAP file.
//!
//! Commands come from SCRIPT (`-f -` is stdin), or from stdin: with a
//! prompt when stdin is a terminal, echoed after `trapred> ` otherwise, so
//! a scripted run prints the dialogue it was. The command language and the
//! display are `cptrap::trapred`'s. PRINTER writes to the print file
//! (default `FILE.print`, made at the first PRINTER). STOP deletes FILE
//! unless it is held (`--hold` or the HOLD command); QUIT and the end of the
//! input keep it.

use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Write};

use anyhow::{Context, Result};
use cptrap::CptrapFile;
use cptrap::trapred::{DialogueOptions, Outcome, run_dialogue};

const USAGE: &str = "usage: os2trace trapred FILE [-f SCRIPT] [--print PRINTFILE] [--hold]
  FILE        a CPTRAP file (os2trace run --cptrap FILE)
  -f SCRIPT   read the commands from SCRIPT ('-' is stdin) and echo them
  --print P   the print file of PRINTER (default FILE.print)
  --hold      the file is held: STOP keeps it
Commands (HELP lists them): SELect, TOP, BOTtom, RECord n, Locate text,
TYPE n, TYPEBack n, Printer n, Query, HOLD, NOHOLD, QUIT, STOP.
";

#[derive(Debug, Default)]
struct Options {
    file: String,
    script: Option<String>,
    print: Option<String>,
    hold: bool,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut opts = Options::default();
    let mut file = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-f" | "--script" => opts.script = Some(it.next().ok_or("-f needs a SCRIPT")?.clone()),
            "--print" => opts.print = Some(it.next().ok_or("--print needs a file")?.clone()),
            "--hold" => opts.hold = true,
            s if s.starts_with('-') && s != "-" => return Err(format!("unknown option '{s}'")),
            _ if file.is_none() => file = Some(a.clone()),
            _ => return Err(format!("unexpected argument '{a}'")),
        }
    }
    opts.file = file.ok_or("no FILE given")?;
    Ok(opts)
}

/// The print file, made at the first byte written to it.
struct PrintFile {
    path: String,
    file: Option<File>,
}

impl Write for PrintFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.file.is_none() {
            self.file = Some(File::create(&self.path)?);
        }
        self.file.as_mut().map_or(Ok(0), |f| f.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().map_or(Ok(()), Write::flush)
    }
}

/// Entry point of `os2trace trapred`.
pub fn run(args: &[String]) -> Result<i32> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{USAGE}");
        return Ok(0);
    }
    let opts = match parse_args(args) {
        Ok(o) => o,
        Err(e) => {
            eprint!("os2trace trapred: {e}\n{USAGE}");
            return Ok(2);
        }
    };
    let bytes = std::fs::read(&opts.file).with_context(|| format!("cannot read {}", opts.file))?;
    let file = CptrapFile::parse(&bytes).with_context(|| opts.file.clone())?;
    let mut printer = PrintFile {
        path: opts
            .print
            .clone()
            .unwrap_or_else(|| format!("{}.print", opts.file)),
        file: None,
    };
    let stdin = io::stdin();
    let interactive = opts.script.is_none() && stdin.is_terminal();
    let mut input: Box<dyn BufRead> = match opts.script.as_deref() {
        None | Some("-") => Box::new(stdin.lock()),
        Some(path) => Box::new(BufReader::new(
            File::open(path).with_context(|| format!("cannot read {path}"))?,
        )),
    };
    let options = DialogueOptions {
        prompt: interactive.then_some("trapred> "),
        echo: !interactive,
        held: opts.hold,
        ..DialogueOptions::default()
    };
    let stdout = io::stdout();
    let mut term = stdout.lock();
    let outcome =
        run_dialogue(&file, &mut input, &mut term, &mut printer, options).context("TRAPRED")?;
    printer.flush().with_context(|| printer.path.clone())?;
    if outcome == (Outcome::Stop { delete: true }) {
        std::fs::remove_file(&opts.file)
            .with_context(|| format!("STOP: cannot delete {}", opts.file))?;
        writeln!(term, "FILE {} DELETED", opts.file)?;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options() {
        let o = parse_args(&args(&["T.CPTRAP", "-f", "s.txt", "--hold"])).unwrap();
        assert_eq!(o.file, "T.CPTRAP");
        assert_eq!(o.script.as_deref(), Some("s.txt"));
        assert!(o.hold);
        assert!(parse_args(&args(&["-x"])).is_err());
        assert!(parse_args(&args(&[])).is_err());
        assert!(parse_args(&args(&["a", "b"])).is_err());
        assert!(parse_args(&args(&["a", "-f"])).is_err());
    }
}
