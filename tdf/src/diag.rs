//! TRCUST's messages and console lines.
//!
//! A diagnostic prints as `TRCUST(line) SEVERITY: text`, where `line` is the
//! TSF line the lexer had reached when the problem was found (1 for the
//! command line and combine mode). The texts are TRCUST 3.05A's (its message
//! table, trcust-trace-customizer.txt §1.6.2, and what it printed in the
//! observed runs). FATAL and SEVERE abort the run, ERROR discards the
//! tracepoint, WARNING keeps it. `/W0` shows FATAL and SEVERE, `/W1` adds
//! ERROR, `/W2` (the default) adds WARNING.
//!
//! A run's console output is a list of [`ConsoleLine`]s, rendered by
//! [`render`] for a warning level; the library never prints.

use std::fmt;

/// Message severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Aborts the run.
    Fatal,
    /// Aborts the run.
    Severe,
    /// Discards the tracepoint (or the item named).
    Error,
    /// Keeps the tracepoint.
    Warning,
}

impl Severity {
    /// The word TRCUST prints.
    pub fn word(self) -> &'static str {
        match self {
            Severity::Fatal => "FATAL",
            Severity::Severe => "SEVERE",
            Severity::Error => "ERROR",
            Severity::Warning => "WARNING",
        }
    }

    /// Whether the run stops.
    pub fn aborts(self) -> bool {
        matches!(self, Severity::Fatal | Severity::Severe)
    }

    /// Lowest `/W` level that shows this severity.
    pub fn level(self) -> u8 {
        match self {
            Severity::Fatal | Severity::Severe => 0,
            Severity::Error => 1,
            Severity::Warning => 2,
        }
    }
}

/// One `TRCUST(line) SEVERITY: text` message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// TSF line (1 for the command line).
    pub line: u32,
    /// Severity.
    pub severity: Severity,
    /// The text.
    pub text: String,
}

impl Diagnostic {
    /// A diagnostic.
    pub fn new(line: u32, severity: Severity, text: impl Into<String>) -> Self {
        Diagnostic {
            line,
            severity,
            text: text.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "TRCUST({}) {}: {}",
            self.line,
            self.severity.word(),
            self.text
        )
    }
}

/// One line of TRCUST's console output.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ConsoleLine {
    /// Informational text (may be empty: a blank line).
    Text(String),
    /// A diagnostic, shown or not by the warning level.
    Diag(Diagnostic),
}

/// The console text for `lines` at warning level `level` (0, 1, 2), each
/// line ended by `\n`.
pub fn render(lines: &[ConsoleLine], level: u8) -> String {
    let mut out = String::new();
    for l in lines {
        match l {
            ConsoleLine::Text(t) => {
                out.push_str(t);
                out.push('\n');
            }
            ConsoleLine::Diag(d) if d.severity.level() <= level => {
                out.push_str(&d.to_string());
                out.push('\n');
            }
            ConsoleLine::Diag(_) => {}
        }
    }
    out
}

/// The banner TRCUST prints first.
pub const BANNER: &str = "Trcust Version 3.05A";
/// The line after a FATAL or SEVERE message (preceded by a blank line).
pub const ABORTED: &str = "FATAL/SEVERE error detected, TRCUST aborted";

/// TRCUST's usage text, printed when it is run without arguments.
pub const USAGE: &[&str] = &[
    "Usage1:  Trcust filename1 filename2 /M=mapfile /W{0|1|2} /D +",
    "                /L=loadmod /NODE /NOLN /RM{0-7} /RSnnn /RP /I /P",
    "",
    "\tfilename1  is Trace Source File",
    "\tfilename2  is Trace Defintion File  \t(Optional)",
    "\t/M=mapfile is map filename to use   \t(Optional)",
    "\t/W{0|1|2}  is warning level to use  \t(Optional)",
    "\t/D         allows duplicate minors  \t(Optional)",
    "\t/L=loadmod is file name of load module \t(Optional)",
    "\t/NODE      ignore debug information \t(Optional)",
    "\t/NOLN      ignore line numbers      \t(Optional)",
    "\t/RM{0-7}   RETEP match criteria\t\t(Optional)",
    "\t/RSnnn     RETEP search range \t\t(Optional)",
    "\t/RP        RETEP Pascal returns allowed\t(Optional)",
    "\t/I         Case insensitive map symbols (Optional)",
    "\t/P         Retain MODNAME Path Info \t(Optional)",
    "",
    "Usage2:  Trcust filename1 /C=dest_tff /W{0|1|2}",
    "",
    "\tfilename1  is Trace Combine File containing TFF filenames",
    "\tdest_tff   is destination TFF name for combined records",
    "\t/W{0|1|2}  is warning level to use  \t(Optional)",
    "",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_and_filtering() {
        let lines = vec![
            ConsoleLine::Text("a".into()),
            ConsoleLine::Diag(Diagnostic::new(3, Severity::Warning, "w")),
            ConsoleLine::Diag(Diagnostic::new(4, Severity::Error, "e")),
            ConsoleLine::Diag(Diagnostic::new(5, Severity::Fatal, "f")),
        ];
        assert_eq!(
            render(&lines, 2),
            "a\nTRCUST(3) WARNING: w\nTRCUST(4) ERROR: e\nTRCUST(5) FATAL: f\n"
        );
        assert_eq!(
            render(&lines, 1),
            "a\nTRCUST(4) ERROR: e\nTRCUST(5) FATAL: f\n"
        );
        assert_eq!(render(&lines, 0), "a\nTRCUST(5) FATAL: f\n");
    }
}
