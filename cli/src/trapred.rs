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
use cptrap::trapred::{AfterCommand, DialogueOptions, run_dialogue};

/// `trapred`'s arguments.
#[derive(clap::Args, Debug, Default)]
#[command(
    after_help = "Commands (HELP lists them): SELect, TOP, BOTtom, RECord n, Locate text, \
TYPE n, TYPEBack n, Printer n, Query, HOLD, NOHOLD, QUIT, STOP."
)]
pub struct Args {
    /// A CPTRAP file (os2trace run --cptrap FILE).
    file: String,
    /// Read the commands from SCRIPT ('-' is stdin) and echo them.
    #[arg(
        short = 'f',
        long = "script",
        value_name = "SCRIPT",
        allow_hyphen_values = true
    )]
    script: Option<String>,
    /// The print file of PRINTER (default FILE.print).
    #[arg(long, value_name = "PRINTFILE")]
    print: Option<String>,
    /// The file is held: STOP keeps it.
    #[arg(long)]
    hold: bool,
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
pub fn run(opts: Args) -> Result<i32> {
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
    if outcome == (AfterCommand::Stop { delete: true }) {
        std::fs::remove_file(&opts.file)
            .with_context(|| format!("STOP: cannot delete {}", opts.file))?;
        writeln!(term, "FILE {} DELETED", opts.file)?;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    fn parse_args(v: &[&str]) -> Result<super::Args, clap::Error> {
        let mut all = vec!["trapred"];
        all.extend_from_slice(v);
        match crate::parse_for_test(&all)? {
            crate::Command::Trapred(a) => Ok(a),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn options() {
        let o = parse_args(&["T.CPTRAP", "-f", "s.txt", "--hold"]).unwrap();
        assert_eq!(o.file, "T.CPTRAP");
        assert_eq!(o.script.as_deref(), Some("s.txt"));
        assert!(o.hold);
        assert_eq!(
            parse_args(&["T", "-f", "-"]).unwrap().script.as_deref(),
            Some("-")
        );
        assert!(parse_args(&["-x"]).is_err());
        assert!(parse_args(&[]).is_err());
        assert!(parse_args(&["a", "b"]).is_err());
        assert!(parse_args(&["a", "-f"]).is_err());
    }
}
