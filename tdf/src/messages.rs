//! TRCUST 3.05A's messages: every text of its message table, with its
//! number, its severity and the condition that raises it.
//!
//! The texts and their order are facts read from the strings of IBM's
//! TRCUST.EXE (the 95 consecutive message strings, `%s` where TRCUST puts
//! an operand); the number is the position in that table, from 1 (so
//! FATAL 2 is `file not found or access denied`, FATAL 5 `error writing
//! to file`). Severities and conditions are as seen when IBM's TRCUST ran
//! in kernel_sim (the shared corpus, tdf/tests/trcust-diff and the
//! differential test in kernel_sim/tests/trcust_diff.rs, which checks every
//! diagnostic IBM's TRCUST prints against this table); entries marked
//! "not seen" were never raised there, and their severity and condition
//! are what the text and the program's structure suggest.
//!
//! The compiler builds its texts itself; this table is the reference they
//! are checked against ([`find`]).

use crate::diag::Severity;

/// One message of TRCUST's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message {
    /// Position in TRCUST's message table, from 1.
    pub number: u16,
    /// The severity TRCUST prints it with.
    pub severity: Severity,
    /// The text, `%s` where an operand goes.
    pub text: &'static str,
    /// What raises it.
    pub condition: &'static str,
}

const fn m(
    number: u16,
    severity: Severity,
    text: &'static str,
    condition: &'static str,
) -> Message {
    Message {
        number,
        severity,
        text,
        condition,
    }
}

use Severity::{Error as E, Fatal as F, Severe as S, Warning as W};

/// The table, in TRCUST's order.
pub const MESSAGES: &[Message] = &[
    m(
        1,
        F,
        "TSF file not specified",
        "no positional argument (only options)",
    ),
    m(
        2,
        F,
        "file not found or access denied : %s",
        "the TSF, the module (MODNAME or /L=) or a TFF named in a TCF does not exist",
    ),
    m(
        3,
        F,
        "cannot open file : %s",
        "not seen: an existing file cannot be opened",
    ),
    m(4, F, "error accessing file : %s", "the TSF cannot be read"),
    m(
        5,
        F,
        "error writing to file : %s",
        "an output file (TFF, TDF, TMI) cannot be written",
    ),
    m(
        6,
        F,
        "unable to allocate more memory",
        "not seen: memory exhausted",
    ),
    m(
        7,
        F,
        "too many tracepoints in file",
        "more TRACE statements than TRCUST's table holds",
    ),
    m(
        8,
        F,
        "error reading file: %s, Rc = %s",
        "the MAP file (or a module) cannot be read",
    ),
    m(
        9,
        F,
        "changing file pointer for: %s, Rc = %s",
        "not seen: a seek in a module fails",
    ),
    m(
        10,
        F,
        "unknown EXE header type for: %s",
        "the module is neither LX nor NE",
    ),
    m(
        11,
        F,
        "invalid path specified in combine file",
        "combine mode: a line of the TCF is not a usable path",
    ),
    m(
        12,
        F,
        "max TFF files to combine is 50",
        "combine mode: the TCF names more than 50 TFFs",
    ),
    m(
        13,
        F,
        "all TFFs not have same major code, file: %s",
        "combine mode: a TFF has another major than the first",
    ),
    m(
        14,
        F,
        "invalid MAP file extension given in: %s",
        "/M= names a file whose extension is not .MAP",
    ),
    m(
        15,
        F,
        "TCF file not specified",
        "combine mode (/C=) without a TCF argument",
    ),
    m(
        16,
        F,
        "filename to long: %s",
        "MODNAME longer than the TDF's module-name field",
    ),
    m(
        17,
        F,
        "token in TSF file exceeds %s bytes",
        "a token longer than 259 bytes",
    ),
    m(
        18,
        F,
        "invalid page length, %s bytes specified",
        "not seen: a module page longer than a page",
    ),
    m(
        19,
        F,
        "error detected unpacking page",
        "not seen: a packed module page does not decode",
    ),
    m(
        20,
        F,
        "module does not contain code - no page map",
        "not seen: a module without a page map",
    ),
    m(
        21,
        S,
        "module name not specified",
        "a dynamic tracepoint and no MODNAME",
    ),
    m(
        22,
        S,
        "premature end of file encountered",
        "the file ends where a statement needs more: no TRACE at all, a TRACE word at the end, an open comment, TYPE=/GROUP= ending the last TRACE",
    ),
    m(
        23,
        S,
        "syntax error : missing '%s' before '%s'",
        "a header statement lacks '=', ',', 'NAME' or 'ID'",
    ),
    m(
        24,
        S,
        "new line in literal",
        "a string runs to the end of its line",
    ),
    m(
        25,
        S,
        "NULL in literal",
        "a NUL byte inside a string (TRCUST goes on, leaving it out, and the run does not end for it)",
    ),
    m(
        26,
        S,
        "keyword '%s' expected, '%s' found",
        "a statement starts with something else than its keyword",
    ),
    m(
        27,
        S,
        "symbolic info not given for %s",
        "TP=.name without /M= and without debug information",
    ),
    m(28, S, "MAJOR redefinition", "a second MAJOR in the header"),
    m(29, S, "TDFID redefinition", "a second TDFID in the header"),
    m(
        30,
        S,
        "MAXDATALENGTH redefinition",
        "a second MAXDATALENGTH in the header",
    ),
    m(
        31,
        S,
        "line too long in input file: %s",
        "not seen: an input line over TRCUST's buffer",
    ),
    m(
        32,
        E,
        "Invalid RETEP criteria specified",
        "not seen: RETEP= with no usable criterion",
    ),
    m(
        33,
        E,
        "invalid number found: %s",
        "a word starting with a digit that is no number, in an address or after TP=.name+",
    ),
    m(
        34,
        E,
        "unexpected: %s, ignored",
        "a token where a keyword is expected; REGS or a data statement before TP=; EREG, EMEM, SEG; multiple ABORTOP/REMOVEOP; REGS or data with TP=@STATIC",
    ),
    m(
        35,
        E,
        "minor code not specified",
        "a TRACE without MINOR after TRACEs with MINOR",
    ),
    m(
        36,
        E,
        "minor code out of range",
        "MINOR whose low word is 0, or a word starting with a digit that is no number",
    ),
    m(37, E, "TYPELIST redefinition, ignored", "a second TYPELIST"),
    m(
        38,
        E,
        "GROUPLIST redefinition, ignored",
        "a second GROUPLIST",
    ),
    m(
        39,
        E,
        "TP redefinition, tracepoint ignored",
        "a second TP= in a TRACE",
    ),
    m(
        40,
        E,
        "MINOR redefinition, tracepoint ignored",
        "a second MINOR= in a TRACE",
    ),
    m(
        41,
        E,
        "OPCODE redefinition, tracepoint ignored",
        "a second OPCODE= in a TRACE",
    ),
    m(
        42,
        E,
        "syntax error: missing '%s' before '%s'",
        "a TRACE keyword's operand lacks '=', '(', ')', ',', '.symbol' (TP), 'literal' (DESC, FMT), 'number' (ORBIT), 'comma' before 'linenum' (TP=@file), 'data length', 'identifier' (TYPE, GROUP, TYPELIST names), 'DIRECT/INDIRECT' (a memory statement's flag) or 'TP keyword'; in a TYPELIST a missing ',' is this ERROR",
    ),
    m(
        43,
        E,
        "opcode: %s out of range",
        "OPCODE= above 0xFF (TRCUST prints it without the operand)",
    ),
    m(
        44,
        E,
        "opcode at TP address cannot be traced",
        "the instruction at the TP cannot carry a tracepoint",
    ),
    m(
        45,
        E,
        "opcode mismatch at address to apply TP",
        "OPCODE= differs from the module's byte",
    ),
    m(
        46,
        E,
        "register expected, '%s' found",
        "REGS=( or an address term names no usable register",
    ),
    m(
        47,
        E,
        "symbol not found: %s",
        "TP=.name, an address or ORBIT names a symbol the MAP (or debug information) lacks; RETEP on a routine with no end",
    ),
    m(
        48,
        E,
        "address not found",
        "a TP displacement leaves the object",
    ),
    m(
        49,
        E,
        "segment register expected, '%s' found",
        "R followed by a register that is not a segment register",
    ),
    m(
        50,
        E,
        "trace record incomplete, '%s' required",
        "a TRACE without TP ('trace point address') or with FMT and no DESC ('trace description')",
    ),
    m(
        51,
        E,
        "RPN command record exceeds 255 bytes",
        "a tracepoint's RPN program passes 255 bytes",
    ),
    m(
        52,
        E,
        "invalid parameter: '%s', ignored",
        "an unknown switch (shown upper-cased), an empty /M= /L= /C=, a bad mode in a data statement, a bad RETEP criterion",
    ),
    m(
        53,
        E,
        "invalid ID: %s, ignored",
        "a TYPELIST ID whose low word is not a power of two, or a GROUPLIST ID whose low word is 0",
    ),
    m(
        54,
        E,
        "group/type redefinition: %s, ignored",
        "a TYPELIST or GROUPLIST name declared before",
    ),
    m(
        55,
        E,
        "typeid redefinition: %s, ignored",
        "a TYPELIST ID declared before",
    ),
    m(
        56,
        E,
        "groupid redefinition: %s, ignored",
        "a GROUPLIST ID declared before",
    ),
    m(
        57,
        E,
        "invalid address specified: %s",
        "an address that starts with no symbol, R or F register",
    ),
    m(
        58,
        E,
        "line number past end of code for file %s",
        "TP=@file,line beyond the file's last line with code",
    ),
    m(
        59,
        E,
        "CodeView info does not exist for: %s",
        "TP=@file,line and the module has no debug information",
    ),
    m(
        60,
        E,
        "line number missing or invalid: %s",
        "TP=@file, without a usable line number",
    ),
    m(
        61,
        E,
        "filename %s not found in CodeView info",
        "TP=@file,line for a file the debug information does not name",
    ),
    m(
        62,
        E,
        "duplicate minor code = %s, ignored",
        "a minor used before (without /D)",
    ),
    m(
        63,
        E,
        "duplicate minor code = %s in file %s, ignored",
        "combine mode: a minor already taken from an earlier TFF",
    ),
    m(
        64,
        E,
        "variable LEN parameter not preceding",
        "a data statement with length LEN and no LEN= before it",
    ),
    m(
        65,
        E,
        "RPN stack limit of 16 exceeded",
        "a tracepoint's RPN program needs more than 16 stack entries",
    ),
    m(
        66,
        E,
        "invalid flat register specified: %s",
        "F followed by no 32-bit general register",
    ),
    m(
        67,
        E,
        "total FMT format specs above 4096 bytes",
        "a TRACE's FMT strings pass 4096 bytes",
    ),
    m(
        68,
        E,
        "zero length specified, tracepoint ignored",
        "a data statement with length 0",
    ),
    m(
        69,
        E,
        "ORBIT redefinition, tracepoint ignored",
        "a second ORBIT= in a TRACE",
    ),
    m(
        70,
        E,
        "invalid ORBIT value, tracepoint ignored",
        "ORBIT=(0,n) with n other than 1, or an unusable mask",
    ),
    m(
        71,
        E,
        "opcode defined after ABORT",
        "a statement after ABORTOP",
    ),
    m(
        72,
        E,
        "opcode defined after REMOVE",
        "a statement after REMOVEOP",
    ),
    m(
        73,
        E,
        "duplicate TP address %s:%s, ignored",
        "two tracepoints at one address",
    ),
    m(
        74,
        E,
        "/D not allowed with /C, ignored",
        "/D in combine mode",
    ),
    m(
        75,
        W,
        "unable to locate end of %s",
        "not seen: RETEP on a debug procedure whose end is unknown",
    ),
    m(
        76,
        E,
        "HLL Debug Info not in order - forcing /NODE",
        "the module's HLL debug information is not in the order TRCUST reads (seen with testprogs' DBGH32); debug information is then ignored",
    ),
    m(
        77,
        W,
        "Ignoring unsupported line numbers, version %s%s",
        "not seen: a line-number table of an unknown version",
    ),
    m(
        78,
        W,
        "Unrecognised line entry type %s. Line numbers ignored",
        "not seen: an unknown line-number entry",
    ),
    m(
        79,
        W,
        "MAXDATALENGTH out of range, 512 used",
        "MAXDATALENGTH outside 20..4099 (low word), or not a number",
    ),
    m(
        80,
        W,
        "typename unknown: %s, ignored",
        "TYPE= names no TYPELIST name",
    ),
    m(
        81,
        W,
        "groupname unknown: %s, ignored",
        "GROUP= names no GROUPLIST name",
    ),
    m(
        82,
        W,
        "file: %s, extension invalid, using: %s",
        "not seen: a file name with an unusable extension",
    ),
    m(
        83,
        W,
        "'%s' expected before '%s', one assumed",
        "a header keyword without '=' before the next keyword",
    ),
    m(
        84,
        W,
        "too many %s, first 16 types, 48 groups used",
        "a 17th TYPELIST or 49th GROUPLIST name",
    ),
    m(
        85,
        W,
        "name too long: %s, first 8 characters used",
        "a TYPELIST or GROUPLIST name over 8 characters",
    ),
    m(
        86,
        W,
        "linenum in file: %s not found, using #%s",
        "TP=@file,line on a line without code: the next line with code is used",
    ),
    m(
        87,
        W,
        "bad object number: %s used for file %s",
        "not seen: debug information names an object the module lacks",
    ),
    m(
        88,
        W,
        "offset %s is invalid for object number %s",
        "not seen: a TP offset outside its object",
    ),
    m(
        89,
        W,
        "page tracepoint to be applied at not valid",
        "not seen: the TP's page is not in the module",
    ),
    m(
        90,
        W,
        "MAXDATALENGTH to log could be exceeded",
        "a tracepoint's data may pass MAXDATALENGTH",
    ),
    m(
        91,
        W,
        "MAJOR out of range, 1 used",
        "MAJOR whose low word is 0 (without /RAS), or not a number",
    ),
    m(
        92,
        W,
        "TDFID out of range, 0 used",
        "TDFID that is not a number",
    ),
    m(
        93,
        W,
        "index too large, high word ignored",
        "ORBIT=(mask,var) with var above 0xFFFF (its low word is kept); ours also raises it when a 16-bit displacement is cut (IBM cuts those silently)",
    ),
    m(
        94,
        W,
        "unable to determine return point for %s",
        "RETEP finds no return instruction with the criteria given",
    ),
    m(
        95,
        W,
        "truncating name: %s to 31 bytes",
        "not seen: a name over 31 bytes in the TMI",
    ),
];

/// Whether `text` is `pattern` with each `%s` replaced by any text.
fn matches(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split("%s");
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, p) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        if last {
            // TRCUST prints message 43 without its operand.
            return rest.ends_with(p) || rest == p.trim_start();
        }
        match rest.find(p) {
            Some(at) if !p.is_empty() => rest = &rest[at + p.len()..],
            _ if p.is_empty() => {}
            _ => return false,
        }
    }
    rest.is_empty()
}

/// The message whose text `text` is (operands filled in). Where two
/// patterns fit, the one with more literal text wins.
pub fn find(text: &str) -> Option<&'static Message> {
    MESSAGES
        .iter()
        .filter(|m| matches(m.text, text))
        .max_by_key(|m| m.text.replace("%s", "").len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_in_order() {
        for (i, m) in MESSAGES.iter().enumerate() {
            assert_eq!(usize::from(m.number), i + 1, "{}", m.text);
        }
        assert_eq!(MESSAGES.len(), 95);
    }

    #[test]
    fn texts_are_found() {
        let f = find("file not found or access denied : HELLO.DLL").unwrap();
        assert_eq!((f.number, f.severity), (2, Severity::Fatal));
        let f = find("duplicate minor code = 0001 in file B.TFF, ignored").unwrap();
        assert_eq!(f.number, 63);
        let f = find("duplicate minor code = 0001, ignored").unwrap();
        assert_eq!(f.number, 62);
        let f = find("syntax error : missing 'NAME' before 'TRACE'").unwrap();
        assert_eq!((f.number, f.severity), (23, Severity::Severe));
        let f = find("syntax error: missing ')' before '('").unwrap();
        assert_eq!((f.number, f.severity), (42, Severity::Error));
        assert_eq!(find("opcode: out of range").map(|m| m.number), Some(43));
        assert!(find("no such message").is_none());
    }
}
