//! TRAPRED's command language.
//!
//! One command a line, case-insensitive; a keyword may be shortened to its
//! capital letters as written here (the seed's convention: `TYPEBack` may be
//! given as `TYPEB`). Counts are decimal, 1 to 99999999, default 1, or `*`
//! for all. A line that is blank or starts with `*` is a comment.
//!
//! ```text
//! SELect clause...   choose records (TYPE, CODE, PROCess, TIME, ALL; see
//!                    cptrap::selection)
//! TOP                position before the first record
//! BOTtom             position after the last record
//! RECord n           position before record n
//! Locate text        show the next selected record whose display contains
//!                    text (any case) and position after it
//! TYPE [n]           show the next n selected records, forward
//! TYPEBack [n]       show the previous n selected records, backward
//! Printer [n]        write the next n selected records to the print file
//! Query              show the selection, the position and the hold
//! HOLD / NOHOLD      hold the file (STOP keeps it) or release it
//! Help               list the commands
//! QUIT               end; the file is kept
//! STOP               end; the file is deleted unless it is held
//! ```

use thiserror::Error;

use crate::selection::{abbrev, parse_number};

/// The largest count TRAPRED takes (VM/SP: "up to 99999999").
pub const MAX_COUNT: u32 = 99_999_999;

/// How many records a display command covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    /// This many.
    N(u32),
    /// All there are (`*`).
    All,
}

impl Count {
    /// The count as a number of records.
    pub fn limit(self) -> usize {
        match self {
            Count::N(n) => n as usize,
            Count::All => usize::MAX,
        }
    }
}

/// A TRAPRED command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// SELect: the selection clauses, as words.
    Select(Vec<String>),
    /// TOP.
    Top,
    /// BOTtom.
    Bottom,
    /// RECord n.
    Record(usize),
    /// Locate text.
    Locate(String),
    /// TYPE n.
    Type(Count),
    /// TYPEBack n.
    TypeBack(Count),
    /// Printer n.
    Printer(Count),
    /// Query.
    Query,
    /// HOLD (true) or NOHOLD (false).
    Hold(bool),
    /// Help.
    Help,
    /// QUIT.
    Quit,
    /// STOP.
    Stop,
}

/// A line that is no valid command.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum CommandError {
    /// An unknown command word.
    #[error("unknown command '{0}' (HELP lists the commands)")]
    Unknown(String),
    /// A bad or missing operand.
    #[error("{command}: {problem}")]
    Operand {
        /// The command.
        command: &'static str,
        /// What is wrong.
        problem: String,
    },
}

fn operand(command: &'static str, problem: impl Into<String>) -> CommandError {
    CommandError::Operand {
        command,
        problem: problem.into(),
    }
}

fn count(command: &'static str, words: &[&str]) -> Result<Count, CommandError> {
    match words {
        [] => Ok(Count::N(1)),
        ["*"] => Ok(Count::All),
        [w] => match parse_number(w) {
            Some(n) if (1..=u64::from(MAX_COUNT)).contains(&n) => Ok(Count::N(n as u32)),
            _ => Err(operand(
                command,
                format!("'{w}' is not a count (1-99999999 or *)"),
            )),
        },
        _ => Err(operand(command, "takes one count")),
    }
}

fn no_operands(command: &'static str, words: &[&str], c: Command) -> Result<Command, CommandError> {
    if words.is_empty() {
        Ok(c)
    } else {
        Err(operand(command, "takes no operands"))
    }
}

/// The command on `line`; `None` for a blank line or a comment.
pub fn parse_command(line: &str) -> Result<Option<Command>, CommandError> {
    let trimmed = line.trim();
    if trimmed.is_empty() || trimmed.starts_with('*') {
        return Ok(None);
    }
    let words: Vec<&str> = trimmed.split_whitespace().collect();
    let (verb, rest) = (words[0], &words[1..]);
    let command = if abbrev(verb, "SELECT", 3) {
        if rest.is_empty() {
            return Err(operand("SELECT", "needs TYPE, CODE, PROCESS, TIME or ALL"));
        }
        Command::Select(rest.iter().map(|w| (*w).to_string()).collect())
    } else if abbrev(verb, "TYPEBACK", 5) {
        Command::TypeBack(count("TYPEBACK", rest)?)
    } else if verb.eq_ignore_ascii_case("TYPE") {
        Command::Type(count("TYPE", rest)?)
    } else if abbrev(verb, "PRINTER", 1) {
        Command::Printer(count("PRINTER", rest)?)
    } else if verb.eq_ignore_ascii_case("TOP") {
        no_operands("TOP", rest, Command::Top)?
    } else if abbrev(verb, "BOTTOM", 3) {
        no_operands("BOTTOM", rest, Command::Bottom)?
    } else if abbrev(verb, "RECORD", 3) {
        match rest {
            [w] => match parse_number(w).and_then(|n| usize::try_from(n).ok()) {
                Some(n) if n >= 1 => Command::Record(n),
                _ => return Err(operand("RECORD", format!("'{w}' is not a record number"))),
            },
            _ => return Err(operand("RECORD", "takes one record number")),
        }
    } else if abbrev(verb, "LOCATE", 1) {
        let text = trimmed[verb.len()..].trim();
        if text.is_empty() {
            return Err(operand("LOCATE", "needs the text to find"));
        }
        Command::Locate(text.to_string())
    } else if abbrev(verb, "QUERY", 1) {
        no_operands("QUERY", rest, Command::Query)?
    } else if verb.eq_ignore_ascii_case("HOLD") {
        no_operands("HOLD", rest, Command::Hold(true))?
    } else if verb.eq_ignore_ascii_case("NOHOLD") {
        no_operands("NOHOLD", rest, Command::Hold(false))?
    } else if abbrev(verb, "HELP", 1) {
        Command::Help
    } else if verb.eq_ignore_ascii_case("QUIT") {
        no_operands("QUIT", rest, Command::Quit)?
    } else if verb.eq_ignore_ascii_case("STOP") {
        no_operands("STOP", rest, Command::Stop)?
    } else {
        return Err(CommandError::Unknown(verb.to_string()));
    };
    Ok(Some(command))
}

/// HELP's text.
pub const HELP: &[&str] = &[
    "SELect TYPE t...|CODE c...|PROCess p...|TIME a b|ALL   choose records",
    "TOP | BOTtom | RECord n                             position",
    "Locate text                                         show the next record containing text",
    "TYPE [n|*] | TYPEBack [n|*]                         show records forward | backward",
    "Printer [n|*]                                       print records to the print file",
    "Query | HOLD | NOHOLD | Help                        state, hold the file, this list",
    "QUIT (keep the file) | STOP (delete it unless held) end",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviations_and_case() {
        assert_eq!(
            parse_command("typeb 3"),
            Ok(Some(Command::TypeBack(Count::N(3))))
        );
        assert_eq!(
            parse_command("TYPEBACK"),
            Ok(Some(Command::TypeBack(Count::N(1))))
        );
        assert_eq!(parse_command("Type *"), Ok(Some(Command::Type(Count::All))));
        assert_eq!(
            parse_command("p 2"),
            Ok(Some(Command::Printer(Count::N(2))))
        );
        assert_eq!(parse_command("bot"), Ok(Some(Command::Bottom)));
        assert_eq!(parse_command("rec X'10'"), Ok(Some(Command::Record(16))));
        assert_eq!(
            parse_command("l  DosCalls.282 "),
            Ok(Some(Command::Locate("DosCalls.282".into())))
        );
        assert_eq!(
            parse_command("sel code 3"),
            Ok(Some(Command::Select(vec!["code".into(), "3".into()])))
        );
        assert_eq!(parse_command("  "), Ok(None));
        assert_eq!(parse_command("* a comment"), Ok(None));
    }

    #[test]
    fn bad_lines_say_why() {
        assert_eq!(
            parse_command("typ"),
            Err(CommandError::Unknown("typ".into()))
        );
        assert_eq!(parse_command("bo"), Err(CommandError::Unknown("bo".into())));
        assert!(matches!(
            parse_command("TYPE 0"),
            Err(CommandError::Operand {
                command: "TYPE",
                ..
            })
        ));
        assert!(parse_command("TYPE 100000000").is_err());
        assert_eq!(
            parse_command("TYPE 99999999"),
            Ok(Some(Command::Type(Count::N(MAX_COUNT))))
        );
        assert!(parse_command("TOP 3").is_err());
        assert!(parse_command("RECORD 0").is_err());
        assert!(parse_command("LOCATE").is_err());
        assert!(parse_command("SELECT").is_err());
    }
}
