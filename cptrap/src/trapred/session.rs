//! TRAPRED's state over one file, and the dialogue loop.
//!
//! The position is a cursor between records: before the first (TOP), after
//! the last (BOTTOM), or before record n (RECORD n). TYPE shows the selected
//! records after the cursor and leaves it after the last shown; TYPEBACK
//! shows the selected records before the cursor, nearest first, and leaves
//! it before the last shown, so TYPE 3 then TYPEBACK 3 shows the same three
//! records in the other order. Either says END OF FILE or TOP OF FILE when
//! it runs out before its count.

use std::io::{self, BufRead, Write};

use crate::reader::{CptrapFile, FileRecord};
use crate::selection::Selection;
use crate::trapred::command::{Command, Count, HELP, parse_command};
use crate::trapred::display::record_lines;

/// What the session does after a command: go on, or how it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterCommand {
    /// Read the next command.
    Continue,
    /// QUIT, or the end of the input: keep the file.
    Quit,
    /// STOP: delete the file if `delete`, which is false when it is held.
    Stop {
        /// Whether the caller must delete the file.
        delete: bool,
    },
}

/// TRAPRED over one file.
#[derive(Debug)]
pub struct Session<'f> {
    file: &'f CptrapFile,
    selection: Selection,
    position: usize,
    held: bool,
}

impl<'f> Session<'f> {
    /// A session at the top of `file`, everything selected.
    pub fn new(file: &'f CptrapFile, held: bool) -> Session<'f> {
        Session {
            file,
            selection: Selection::all(),
            position: 0,
            held,
        }
    }

    /// The current selection.
    pub fn selection(&self) -> &Selection {
        &self.selection
    }

    /// The cursor: the number of records before it.
    pub fn position(&self) -> usize {
        self.position
    }

    fn records(&self) -> &'f [FileRecord] {
        self.file.records()
    }

    fn selected(&self, r: &FileRecord) -> bool {
        self.selection.matches(&r.record)
    }

    fn show(out: &mut dyn Write, r: &FileRecord) -> io::Result<()> {
        for line in record_lines(r) {
            writeln!(out, "{line}")?;
        }
        Ok(())
    }

    /// Shows up to `count` selected records forward into `out`; returns how
    /// many, and whether the end of the file stopped it.
    fn forward(
        &mut self,
        count: Count,
        out: &mut dyn Write,
        gap: bool,
    ) -> io::Result<(usize, bool)> {
        let records = self.records();
        let mut shown = 0;
        while shown < count.limit() {
            let Some(r) = records.get(self.position) else {
                return Ok((shown, true));
            };
            self.position += 1;
            if self.selected(r) {
                Self::show(out, r)?;
                if gap {
                    writeln!(out)?;
                }
                shown += 1;
            }
        }
        Ok((shown, false))
    }

    /// Runs one command, writing to the terminal `term` and, for PRINTER, to
    /// `printer`.
    pub fn execute(
        &mut self,
        command: &Command,
        term: &mut dyn Write,
        printer: &mut dyn Write,
    ) -> io::Result<AfterCommand> {
        let total = self.records().len();
        match command {
            Command::Select(words) => {
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                match self.selection.apply(&words) {
                    Ok(()) => writeln!(term, "SELECT {}", self.selection.describe())?,
                    Err(e) => writeln!(term, "ERROR: SELECT: {e}")?,
                }
            }
            Command::Top => {
                self.position = 0;
                writeln!(term, "TOP OF FILE")?;
            }
            Command::Bottom => {
                self.position = total;
                writeln!(term, "BOTTOM OF FILE")?;
            }
            Command::Record(n) => {
                if *n <= total {
                    self.position = n - 1;
                    writeln!(term, "POSITIONED BEFORE RECORD {n}")?;
                } else {
                    writeln!(term, "ERROR: RECORD {n} IS NOT IN THE FILE (1-{total})")?;
                }
            }
            Command::Locate(text) => {
                let needle = text.to_ascii_uppercase();
                let found = self.records()[self.position.min(total)..].iter().find(|r| {
                    self.selected(r)
                        && record_lines(r)
                            .iter()
                            .any(|l| l.to_ascii_uppercase().contains(&needle))
                });
                match found {
                    Some(r) => {
                        self.position = r.number;
                        Self::show(term, r)?;
                    }
                    None => writeln!(term, "NOT FOUND: {text}")?,
                }
            }
            Command::Type(count) => {
                if self.forward(*count, term, false)?.1 {
                    writeln!(term, "END OF FILE")?;
                }
            }
            Command::TypeBack(count) => {
                let mut shown = 0;
                while shown < count.limit() {
                    if self.position == 0 {
                        writeln!(term, "TOP OF FILE")?;
                        break;
                    }
                    self.position -= 1;
                    let r = &self.records()[self.position];
                    if self.selected(r) {
                        Self::show(term, r)?;
                        shown += 1;
                    }
                }
            }
            Command::Printer(count) => {
                let (shown, eof) = self.forward(*count, printer, true)?;
                printer.flush()?;
                writeln!(term, "{shown} RECORDS PRINTED")?;
                if eof {
                    writeln!(term, "END OF FILE")?;
                }
            }
            Command::Query => self.query(term)?,
            Command::Hold(held) => {
                self.held = *held;
                writeln!(term, "FILE {}", if *held { "HELD" } else { "NOT HELD" })?;
            }
            Command::Help => {
                for line in HELP {
                    writeln!(term, "{line}")?;
                }
            }
            Command::Quit => return Ok(AfterCommand::Quit),
            Command::Stop => return Ok(AfterCommand::Stop { delete: !self.held }),
        }
        Ok(AfterCommand::Continue)
    }

    fn query(&self, term: &mut dyn Write) -> io::Result<()> {
        let records = self.records();
        let lost: u64 = records
            .iter()
            .filter_map(|r| match r.record {
                crate::file::Record::DataLost { records, .. } => Some(u64::from(records)),
                _ => None,
            })
            .sum();
        writeln!(
            term,
            "FILE {} RECORDS IN {} BLOCKS, {}, {} RECORDS LOST",
            records.len(),
            self.file.blocks(),
            if self.file.closed() {
                "CLOSED"
            } else {
                "NOT CLOSED"
            },
            lost
        )?;
        writeln!(term, "SELECT {}", self.selection.describe())?;
        let selected = records.iter().filter(|r| self.selected(r)).count();
        writeln!(term, "{selected} RECORDS SELECTED")?;
        if self.position >= records.len() {
            writeln!(term, "POSITION AFTER THE LAST RECORD")?;
        } else {
            writeln!(term, "POSITION BEFORE RECORD {}", self.position + 1)?;
        }
        writeln!(term, "FILE {}", if self.held { "HELD" } else { "NOT HELD" })
    }
}

/// How [`run_dialogue`] talks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DialogueOptions<'a> {
    /// Written before each command is read (interactive use).
    pub prompt: Option<&'a str>,
    /// Echo each command after `echo_prefix`, so a scripted run reads as
    /// the dialogue it was.
    pub echo: bool,
    /// The prefix of an echoed command.
    pub echo_prefix: &'a str,
    /// Whether the file starts held.
    pub held: bool,
}

impl Default for DialogueOptions<'_> {
    fn default() -> Self {
        DialogueOptions {
            prompt: None,
            echo: true,
            echo_prefix: "trapred> ",
            held: false,
        }
    }
}

/// Reads commands from `input` until QUIT, STOP or the end of the input
/// (which is QUIT), writing to `term` and `printer`. A bad command gets an
/// ERROR line and the dialogue goes on.
pub fn run_dialogue(
    file: &CptrapFile,
    input: &mut dyn BufRead,
    term: &mut dyn Write,
    printer: &mut dyn Write,
    options: DialogueOptions<'_>,
) -> io::Result<AfterCommand> {
    let mut session = Session::new(file, options.held);
    let mut line = String::new();
    loop {
        if let Some(prompt) = options.prompt {
            write!(term, "{prompt}")?;
            term.flush()?;
        }
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(AfterCommand::Quit);
        }
        let text = line.trim_end_matches(['\n', '\r']);
        if options.echo {
            writeln!(term, "{}{text}", options.echo_prefix)?;
        }
        let outcome = match parse_command(text) {
            Ok(Some(command)) => session.execute(&command, term, printer)?,
            Ok(None) => AfterCommand::Continue,
            Err(e) => {
                writeln!(term, "ERROR: {e}")?;
                AfterCommand::Continue
            }
        };
        if outcome != AfterCommand::Continue {
            return Ok(outcome);
        }
    }
}
