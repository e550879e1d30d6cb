//! TRACE statements: MINOR, TP, OPCODE, TYPE, GROUP, DESC, FMT and the data
//! statements, checked and compiled in order.
//!
//! An ERROR discards the tracepoint: the rest of the statement is skipped
//! up to the next TRACE. A tracepoint is kept when its statement ends (at
//! the next TRACE or the end of the file). Untraceable opcodes (9C CC CD CE
//! 62 69 6B F6 F7, trcust-trace-customizer.txt §1.3.5.2) are rejected.

use rpn_vm::{Instr, Program, VerifyErrorKind};
use stda::tff::TffRecord;

use super::{Compiler, Step, Stop};
use crate::definition::TdfRecord;
use crate::diag::Severity;
use crate::tsf::ast::Length;
use crate::tsf::lexer::{Token, parse_number};

/// Opcodes a dynamic tracepoint cannot be placed on: single-stepping
/// them with TF set would be visible to the program or would not return to
/// the next instruction (trcust-trace-customizer.txt §1.3.5.2). The one
/// table: TRCUST refuses them here and the runtime refuses them when a
/// DTO is applied.
pub const UNTRACEABLE: [u8; 9] = [0x9C, 0xCC, 0xCD, 0xCE, 0x62, 0x69, 0x6B, 0xF6, 0xF7];

/// Most tracepoints in one TSF.
pub const MAX_TRACEPOINTS: u32 = 65_535;

/// Most bytes of FMT text in one tracepoint.
pub const MAX_FMT_BYTES: usize = 4096;

/// Where a tracepoint goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// `@STATIC`: a format only.
    Static,
    /// A resolved address and the opcode found there.
    At {
        object: u32,
        offset: u32,
        opcode: u8,
    },
}

/// What one TRACE statement has collected.
#[derive(Debug, Default)]
pub(crate) struct TraceStmt {
    /// The line of its TRACE keyword (duplicate minors and addresses are
    /// reported there).
    pub(crate) line: u32,
    pub(crate) minor: Option<u16>,
    pub(crate) place: Option<Place>,
    pub(crate) opcode: Option<u8>,
    pub(crate) type_mask: u16,
    pub(crate) group: u16,
    pub(crate) desc: Option<Vec<u8>>,
    pub(crate) fmts: Vec<Vec<u8>>,
    pub(crate) fmt_bytes: usize,
    pub(crate) code: Vec<Instr>,
    /// The code of a LEN= statement waiting for its memory statement, with
    /// its form (flat or segmented), its address and flag.
    pub(crate) pending_len: Option<super::operands::LenStmt>,
    /// ABORTOP and REMOVEOP seen (each may be given once).
    pub(crate) ended_by: (bool, bool),
    pub(crate) orbit: Option<(u32, u32)>,
    pub(crate) auto_orbit: bool,
    pub(crate) has_data: bool,
}

/// Whether `t` is an identifier (a TYPE or GROUP name): a word that is
/// neither a number nor one of TRCUST's keywords.
fn is_identifier(t: &Token) -> bool {
    matches!(t, Token::Word(w)
        if !w.starts_with(|c: char| c.is_ascii_digit())
            && !crate::tsf::lexer::is_keyword(w))
}

impl Compiler<'_> {
    /// Every TRACE statement to the end of the file.
    pub(crate) fn traces(&mut self) -> Step<()> {
        loop {
            let t = self.next_or_eof()?;
            match t {
                // A file without a TRACE, or ending with the word TRACE.
                Token::Eof if self.trace_count == 0 => {
                    return Err(self.severe("premature end of file encountered"));
                }
                Token::Eof => return Ok(()),
                t if t.is_word("TRACE") => {
                    let line = self.lex.line;
                    if self.peek()? == Token::Eof {
                        return Err(self.severe("premature end of file encountered"));
                    }
                    self.trace_count += 1;
                    if self.trace_count > MAX_TRACEPOINTS {
                        self.diag(Severity::Fatal, "too many tracepoints in file");
                        return Err(Stop::Abort);
                    }
                    let mut st = TraceStmt {
                        line,
                        ..TraceStmt::default()
                    };
                    match self.trace_body(&mut st) {
                        Ok(()) => {
                            if let Err(Stop::Abort) = self.trace_end(st) {
                                return Err(Stop::Abort);
                            }
                        }
                        Err(Stop::Abort) => return Err(Stop::Abort),
                        Err(Stop::Discard) => self.skip_statement()?,
                    }
                }
                other => {
                    let found = other.text();
                    return Err(self.severe(format!("keyword 'TRACE' expected, '{found}' found")));
                }
            }
        }
    }

    /// Skips to the next TRACE or the end of the file.
    pub(crate) fn skip_statement(&mut self) -> Step<()> {
        loop {
            let t = self.peek()?;
            if t == Token::Eof || t.is_word("TRACE") {
                return Ok(());
            }
            self.next()?;
        }
    }

    fn trace_body(&mut self, st: &mut TraceStmt) -> Step<()> {
        // A comma ends a statement; a second one in a row is unexpected.
        let mut after_comma = false;
        loop {
            let t = self.peek()?;
            if t == Token::Eof || t.is_word("TRACE") {
                return Ok(());
            }
            self.next()?;
            let comma = t == Token::Punct(',');
            if comma && after_comma {
                return Err(self.error("unexpected: ,, ignored"));
            }
            after_comma = comma;
            let kw = match &t {
                Token::Punct(',') => continue,
                Token::Word(w) => w.to_ascii_uppercase(),
                other => {
                    let text = other.text();
                    return Err(self.error(format!("unexpected: {text}, ignored")));
                }
            };
            self.keyword = t.text();
            match kw.as_str() {
                // Once the first TRACE has ended without a MINOR, minors
                // are numbered and MINOR is a stray word.
                "MINOR" if self.explicit_minors == Some(false) => {
                    let text = t.text();
                    return Err(self.error(format!("unexpected: {text}, ignored")));
                }
                "MINOR" => self.minor_kw(st)?,
                "TP" => self.tp_kw(st)?,
                "OPCODE" => self.opcode_kw(st)?,
                "TYPE" => self.type_kw(st)?,
                "GROUP" => self.group_kw(st)?,
                "DESC" if st.desc.is_some() => {
                    return Err(self.error("unexpected: multiple DESC statements, ignored"));
                }
                "DESC" => {
                    self.expect('=', false)?;
                    let s = self.string_value()?;
                    st.desc = Some(s);
                }
                "FMT" => {
                    self.expect('=', false)?;
                    let s = self.string_value()?;
                    let f = stda::fmt::compile_fmt(&s);
                    st.fmt_bytes += f.len() + 2;
                    if st.fmt_bytes > MAX_FMT_BYTES {
                        return Err(self.error("total FMT format specs above 4096 bytes"));
                    }
                    st.fmts.push(f);
                }
                // Data needs the tracepoint's place first.
                "REGS" if st.place.is_none() => {
                    return Err(self.error("unexpected: REGS before TP statement, ignored"));
                }
                "LEN" if st.place.is_none() => {
                    return Err(
                        self.error("syntax error: missing 'TP keyword' before 'LEN statement'")
                    );
                }
                "MEM32" | "MEM" | "ASCIIZ32" | "ASCIIZ" if st.place.is_none() => {
                    return Err(
                        self.error("unexpected: DATA_STATEMENT before TP statement, ignored")
                    );
                }
                "REGS" => self.regs_kw(st)?,
                "LEN" => self.len_kw(st)?,
                "MEM32" | "MEM" | "ASCIIZ32" | "ASCIIZ" => self.data_kw(st, &kw)?,
                "ORBIT" => self.orbit_kw(st)?,
                "ABORTOP" | "REMOVEOP" => {
                    let abort = kw == "ABORTOP";
                    let seen = if abort {
                        &mut st.ended_by.0
                    } else {
                        &mut st.ended_by.1
                    };
                    if std::mem::replace(seen, true) {
                        return Err(
                            self.error(format!("unexpected: multiple {kw} statements, ignored"))
                        );
                    }
                    let op = if abort {
                        rpn_vm::Op::Abort
                    } else {
                        rpn_vm::Op::Remove
                    };
                    // TRCUST takes these on a static tracepoint too, before
                    // or after TP=@STATIC; they are not data. What follows
                    // them is checked when the statement ends.
                    let had_data = st.has_data;
                    self.append(st, vec![Instr::new(op)])?;
                    st.has_data = had_data;
                }
                _ => {
                    // As written, not upper-cased.
                    let other = t.text();
                    return Err(self.error(format!("unexpected: {other}, ignored")));
                }
            }
        }
    }

    /// A string literal value.
    fn string_value(&mut self) -> Step<Vec<u8>> {
        match self.peek()? {
            Token::Str(s) => {
                self.next()?;
                Ok(s)
            }
            Token::Eof => Err(self.premature_eof()),
            other => {
                let found = other.text();
                Err(self.error(format!("syntax error: missing 'literal' before '{found}'")))
            }
        }
    }

    fn minor_kw(&mut self, st: &mut TraceStmt) -> Step<()> {
        if st.minor.is_some() {
            return Err(self.error("MINOR redefinition, tracepoint ignored"));
        }
        self.expect('=', false)?;
        // TRCUST keeps the low word and refuses only 0; a word that is not
        // a number reads as 0; anything else is no minor.
        let n = match self.peek()? {
            Token::Word(w) if w.starts_with(|c: char| c.is_ascii_digit()) => {
                self.next()?;
                parse_number(&w).unwrap_or(0)
            }
            Token::Eof => return Err(self.premature_eof()),
            _ => return Err(self.error("minor code not specified")),
        };
        if n as u16 == 0 {
            return Err(self.error("minor code out of range"));
        }
        st.minor = Some(n as u16);
        Ok(())
    }

    fn opcode_kw(&mut self, st: &mut TraceStmt) -> Step<()> {
        if st.opcode.is_some() {
            return Err(self.error("OPCODE redefinition, tracepoint ignored"));
        }
        self.expect('=', false)?;
        // A word that is no number is refused with "invalid number found";
        // anything else drops the tracepoint without a message.
        let n = match self.next()? {
            Token::Word(w) if w.starts_with(|c: char| c.is_ascii_digit()) => {
                match parse_number(&w) {
                    Some(n) => n,
                    None => return Err(self.error(format!("invalid number found: {w}"))),
                }
            }
            _ => return Err(Stop::Discard),
        };
        // The range is checked once the next token is read.
        self.peek()?;
        // TRCUST compares the value as a signed 32-bit number: from
        // 0x80000000 to 0xFFFFFFFF it passes the range check, and its low
        // byte is the opcode compared with the module's.
        let negative = u32::try_from(n).is_ok_and(|v| v >= 0x8000_0000);
        if n > 0xFF && !negative {
            // TRCUST 3.05A prints this message without its operand.
            return Err(self.error("opcode: out of range"));
        }
        st.opcode = Some(n as u8);
        Ok(())
    }

    fn type_kw(&mut self, st: &mut TraceStmt) -> Step<()> {
        self.expect('=', false)?;
        self.expect('(', false)?;
        // `TYPE=()` is no type.
        if self.peek()? == Token::Punct(')') {
            self.next()?;
            return Ok(());
        }
        loop {
            let t = match self.peek()? {
                t @ Token::Word(_) if is_identifier(&t) => {
                    self.next()?;
                    t
                }
                Token::Eof => return Err(self.premature_eof()),
                other => {
                    let found = other.text();
                    return Err(self.error(format!("syntax error: missing ')' before '{found}'")));
                }
            };
            // Looked up upper-cased, reported as written.
            let written = t.text();
            match self.types.get(&written.to_ascii_uppercase()) {
                Some(&id) => st.type_mask |= id,
                None => self.diag(
                    Severity::Warning,
                    format!("typename unknown: {written}, ignored"),
                ),
            }
            let t = self.peek()?;
            match t {
                Token::Eof => return Err(self.premature_eof()),
                Token::Punct(',') => {
                    self.next()?;
                }
                Token::Punct(')') => {
                    self.next()?;
                    return Ok(());
                }
                // The comma between names may be left out, as in TRCUST.
                t @ Token::Word(_) if is_identifier(&t) => {}
                other => {
                    let found = other.text();
                    return Err(self.error(format!("syntax error: missing ')' before '{found}'")));
                }
            }
        }
    }

    fn group_kw(&mut self, st: &mut TraceStmt) -> Step<()> {
        self.expect('=', false)?;
        // Unlike TYPE's list, GROUP= takes a keyword as a name too
        // (`GROUP=TRACE` is an unknown group), only no number.
        let t = match self.peek()? {
            t @ Token::Word(_) if !t.text().starts_with(|c: char| c.is_ascii_digit()) => {
                self.next()?;
                t
            }
            _ => self.identifier()?,
        };
        // Looked up upper-cased, reported as written.
        let written = t.text();
        match self.groups.get(&written.to_ascii_uppercase()) {
            Some(&id) => st.group = id,
            None => self.diag(
                Severity::Warning,
                format!("groupname unknown: {written}, ignored"),
            ),
        }
        Ok(())
    }

    /// A name in TYPE= or GROUP=.
    fn identifier(&mut self) -> Step<Token> {
        match self.peek()? {
            t @ Token::Word(_) if is_identifier(&t) => {
                self.next()?;
                Ok(t)
            }
            Token::Eof => Err(self.premature_eof()),
            other => {
                let found = other.text();
                Err(self.error(format!(
                    "syntax error: missing 'identifier' before '{found}'"
                )))
            }
        }
    }

    /// At the end of a statement with its tracepoint address: anything
    /// after ABORTOP (even ORBIT or REMOVEOP) is `opcode defined after
    /// ABORT`, else anything after REMOVEOP is `... after REMOVE`, as
    /// TRCUST checks the finished record.
    fn after_end_check(&mut self, st: &TraceStmt) -> Step<()> {
        for (op, what) in [(rpn_vm::Op::Abort, "ABORT"), (rpn_vm::Op::Remove, "REMOVE")] {
            if let Some(at) = st.code.iter().position(|i| i.op == op)
                && at + 1 < st.code.len()
            {
                return Err(self.error(format!("opcode defined after {what}")));
            }
        }
        Ok(())
    }

    /// Reports a data statement on a static tracepoint.
    pub(crate) fn static_data_check(&mut self, st: &TraceStmt, what: &str) -> Step<()> {
        if st.place == Some(Place::Static) {
            return Err(self.error(format!(
                "unexpected: {what} with STATIC tracepoint, ignored"
            )));
        }
        Ok(())
    }

    /// Appends code and checks the program with the verifier.
    pub(crate) fn append(&mut self, st: &mut TraceStmt, code: Vec<Instr>) -> Step<()> {
        st.code.extend(code);
        st.has_data = true;
        let bytes = rpn_vm::instr::encode_all(&st.code);
        match Program::load(&bytes, 0x1_0000) {
            Ok(_) => Ok(()),
            Err(e) => match e.kind {
                VerifyErrorKind::TooLong { .. } => {
                    Err(self.error("RPN command record exceeds 255 bytes"))
                }
                VerifyErrorKind::StackOverflow { .. } => {
                    Err(self.error("RPN stack limit of 16 exceeded"))
                }
                other => Err(self.error(format!("invalid RPN program: {other}"))),
            },
        }
    }

    /// Warns when a statement may log more than MAXDATALENGTH.
    pub(crate) fn length_check(&mut self, len: Length) {
        if let Length::Fixed(n) = len {
            let max = u64::from(self.max_data_len.unwrap_or(512));
            if n > max {
                self.diag(Severity::Warning, "MAXDATALENGTH to log could be exceeded");
            }
        }
    }

    /// The statement is complete: check it and keep it.
    fn trace_end(&mut self, st: TraceStmt) -> Step<()> {
        // The first TRACE to reach its end decides: explicit minors, or
        // minors numbered by the tracepoints accepted so far.
        let explicit = *self.explicit_minors.get_or_insert(st.minor.is_some());
        let Some(place) = st.place.clone() else {
            return Err(self.error("trace record incomplete, 'trace point address' required"));
        };
        self.after_end_check(&st)?;
        let minor = match st.minor {
            Some(m) => m,
            None if explicit => {
                return Err(self.error("trace record incomplete, 'minor code' required"));
            }
            None => ((self.accepted_count + 1) & 0xFFFF) as u16,
        };
        if st.desc.is_none() && !st.fmts.is_empty() {
            return Err(self.error("trace record incomplete, 'trace description' required"));
        }
        let tff = st.desc.clone().map(|desc| TffRecord {
            minor,
            desc,
            fmts: st.fmts.clone(),
        });
        match place {
            Place::Static => {
                self.accept(st.line, minor, tff, None);
            }
            Place::At {
                object,
                offset,
                opcode,
            } => {
                if let Some(want) = st.opcode
                    && want != opcode
                {
                    return Err(self.error("opcode mismatch at address to apply TP"));
                }
                let rpn = rpn_vm::instr::encode_all(&st.code);
                let record = TdfRecord {
                    type_mask: st.type_mask,
                    group: st.group,
                    object,
                    offset,
                    minor,
                    major: self.major(),
                    opcode,
                    pad: 0,
                    rpn,
                };
                self.accept(st.line, minor, tff, Some((record, st.orbit, st.auto_orbit)));
            }
        }
        Ok(())
    }
}
