//! The TSF header: MODNAME, MAJOR, MAXDATALENGTH (or MAXDATALEN), TDFID,
//! TYPELIST and GROUPLIST, up to the first TRACE.
//!
//! Ranges as TRCUST 3.05A applies them: MAJOR 1..0xFFFF (0 only with
//! `/RAS`), else `MAJOR out of range, 1 used`; MAXDATALENGTH 20..4099, else
//! `MAXDATALENGTH out of range, 512 used`; TDFID 1..0xFFFF, else (where
//! TRCUST silently kept the low word of a larger one) `TDFID out of range,
//! 0 used`. Type IDs
//! are powers of two, at most 16 types and 48 groups, names at most 8
//! characters.

use super::{Compiler, Step};
use crate::definition::{EntryKind, NameEntry};
use crate::diag::Severity;
use crate::tsf::lexer::{Token, parse_number};

/// Most TYPELIST names.
pub const MAX_TYPES: usize = 16;
/// Most GROUPLIST names.
pub const MAX_GROUPS: usize = 48;

impl Compiler<'_> {
    /// The next token, which a statement needs: the end of the file
    /// here is SEVERE `premature end of file encountered`, as in TRCUST.
    pub(crate) fn next(&mut self) -> Step<Token> {
        match self.next_or_eof()? {
            Token::Eof => Err(self.premature_eof()),
            t => Ok(t),
        }
    }

    /// The next token, the end of the file included.
    pub(crate) fn next_or_eof(&mut self) -> Step<Token> {
        let t = self.lex.next_token();
        self.lex_notes();
        t.map_err(|d| self.lex_failed(d))
    }

    /// Reports what the lexer noted without stopping (see `Lexer::notes`).
    fn lex_notes(&mut self) {
        for d in std::mem::take(&mut self.lex.notes) {
            self.console.push(crate::diag::ConsoleLine::Diag(d));
        }
    }

    pub(crate) fn premature_eof(&mut self) -> super::Stop {
        self.severe("premature end of file encountered")
    }

    pub(crate) fn peek(&mut self) -> Step<Token> {
        let t = self.lex.peek().cloned();
        self.lex_notes();
        t.map_err(|d| self.lex_failed(d))
    }

    /// Consumes `c` or reports `syntax error : missing 'c' before 'x'`,
    /// SEVERE in the header, ERROR in a TRACE.
    pub(crate) fn expect(&mut self, c: char, severe: bool) -> Step<()> {
        let t = self.peek()?;
        if t == Token::Punct(c) {
            self.next()?;
            return Ok(());
        }
        if t == Token::Eof {
            return Err(self.premature_eof());
        }
        if c == '=' {
            // TRCUST assumes a missing '=', naming the keyword it follows.
            let kw = self.keyword.clone();
            self.diag(
                Severity::Warning,
                format!("'=' expected before '{kw}', one assumed"),
            );
            return Ok(());
        }
        // A symbol shows without its dot: `missing '(' before 'msg'`.
        let found = t.text();
        if severe {
            Err(self.severe(format!("syntax error : missing '{c}' before '{found}'")))
        } else {
            Err(self.error(format!("syntax error: missing '{c}' before '{found}'")))
        }
    }

    /// A number token; `number expected, 'x' found` otherwise.
    pub(crate) fn number(&mut self) -> Step<(u64, String)> {
        self.number_or(|c, text| c.error(text))
    }

    /// `= number` in the header. A word starting with a digit is read, and
    /// reads as a value out of every range when it is not a number (TRCUST
    /// then warns and uses its default); any other token is left for the
    /// header to read next, and the value is out of range too.
    fn header_number(&mut self) -> Step<(u64, String)> {
        self.expect('=', true)?;
        match self.peek()? {
            Token::Word(w) if w.starts_with(|c: char| c.is_ascii_digit()) => {
                self.next()?;
                Ok((parse_number(&w).unwrap_or(u64::MAX), w))
            }
            Token::Eof => Err(self.premature_eof()),
            t => Ok((u64::MAX, t.text())),
        }
    }

    /// A number token and its text; otherwise what `fail` makes of
    /// `number expected, 'x' found`.
    fn number_or(&mut self, fail: fn(&mut Self, String) -> super::Stop) -> Step<(u64, String)> {
        let t = self.next()?;
        let text = t.text();
        let n = match &t {
            Token::Word(w) => parse_number(w),
            _ => None,
        };
        match n {
            Some(n) => Ok((n, text)),
            None => Err(fail(self, format!("number expected, '{text}' found"))),
        }
    }

    /// The one comma TRCUST takes silently after MODNAME, MAJOR and
    /// MAXDATALENGTH statements (not after TDFID: there, as anywhere else
    /// in the header, a comma is `unexpected: ,, ignored`). After `MAJOR=`
    /// without a number the comma is this one (`MAJOR = , 6` is `MAJOR out
    /// of range` and `unexpected: 6`).
    fn optional_comma(&mut self) -> Step<()> {
        if self.peek()? == Token::Punct(',') {
            self.next()?;
        }
        Ok(())
    }

    pub(crate) fn header(&mut self) -> Step<()> {
        loop {
            let t = self.peek()?;
            let Token::Word(w) = &t else {
                if t == Token::Eof {
                    return Ok(());
                }
                // TRCUST reports stray punctuation token by token and goes
                // on.
                let found = t.text();
                self.next()?;
                self.diag(Severity::Error, format!("unexpected: {found}, ignored"));
                continue;
            };
            let kw = w.to_ascii_uppercase();
            self.keyword = w.clone();
            let single = matches!(
                kw.as_str(),
                "MODNAME" | "MAJOR" | "MAXDATALENGTH" | "MAXDATALEN" | "TDFID"
            );
            if single && !self.entries_seen.is_empty() {
                // After TYPELIST or GROUPLIST these are stray words.
                self.next()?;
                self.diag(Severity::Error, format!("unexpected: {w}, ignored"));
                continue;
            }
            match kw.as_str() {
                "TRACE" => return Ok(()),
                "MODNAME" => {
                    self.next()?;
                    self.expect('=', true)?;
                    // A word (or `.word`); anything else is no name.
                    // A word that starts with a digit is no name either.
                    let name = match self.next()? {
                        Token::Word(w) if !w.starts_with(|c: char| c.is_ascii_digit()) => {
                            crate::tsf::lexer::latin1_bytes(&w)
                        }
                        Token::Sym(w) => crate::tsf::lexer::latin1_bytes(&format!(".{w}")),
                        _ => return Err(self.severe("module name not specified")),
                    };
                    if name.len() >= crate::definition::MODULE_NAME_SIZE {
                        let shown = crate::tsf::lexer::latin1(&name);
                        self.diag(Severity::Fatal, format!("filename to long: {shown}"));
                        return Err(super::Stop::Abort);
                    }
                    self.modname = Some(name);
                    self.optional_comma()?;
                }
                "MAJOR" => {
                    self.next()?;
                    if self.major.is_some() {
                        return Err(self.severe("MAJOR redefinition"));
                    }
                    let (n, _) = self.header_number()?;
                    let ok = n <= 0xFFFF && (n != 0 || self.opts.ras);
                    if !ok {
                        self.diag(Severity::Warning, "MAJOR out of range, 1 used");
                    }
                    self.major = Some(if ok { n as u16 } else { 1 });
                    self.optional_comma()?;
                }
                "MAXDATALENGTH" | "MAXDATALEN" => {
                    self.next()?;
                    if self.max_data_len.is_some() {
                        return Err(self.severe("MAXDATALENGTH redefinition"));
                    }
                    let (n, _) = self.header_number()?;
                    let ok = (20..=4099).contains(&n);
                    if !ok {
                        self.diag(Severity::Warning, "MAXDATALENGTH out of range, 512 used");
                    }
                    self.max_data_len = Some(if ok { n as u16 } else { 512 });
                    self.optional_comma()?;
                }
                "TDFID" => {
                    self.next()?;
                    if self.tdf_id.is_some() {
                        return Err(self.severe("TDFID redefinition"));
                    }
                    let (n, _) = self.header_number()?;
                    let ok = (1..=0xFFFF).contains(&n);
                    if !ok {
                        self.diag(Severity::Warning, "TDFID out of range, 0 used");
                    }
                    self.tdf_id = Some(if ok { n as u16 } else { 0 });
                }
                "TYPELIST" | "GROUPLIST" => {
                    self.next()?;
                    self.entries_seen.push(kw.clone());
                    self.name_list(kw == "TYPELIST")?;
                }
                // A stray word, like stray punctuation, is reported and
                // skipped.
                _ => {
                    self.next()?;
                    self.diag(Severity::Error, format!("unexpected: {w}, ignored"));
                }
            }
        }
    }

    /// `TYPELIST NAME=n,ID=v[, NAME=n,ID=v]...` (or GROUPLIST). A missing
    /// NAME or ID keyword is SEVERE. After another syntax error in an
    /// entry, or an ID that is no number, TRCUST skips to the next NAME
    /// (the list goes on) or to TYPELIST, GROUPLIST or TRACE; after `too
    /// many typenames` it skips to TYPELIST, GROUPLIST or TRACE.
    fn name_list(&mut self, types: bool) -> Step<()> {
        let kind = if types {
            EntryKind::Type
        } else {
            EntryKind::Group
        };
        // A second TYPELIST (GROUPLIST) statement, whether or not the
        // first one defined a name; its names are still read.
        let word = if types { "TYPELIST" } else { "GROUPLIST" };
        let again = self.entries_seen.iter().filter(|k| *k == word).count() > 1;
        if again {
            self.diag(
                Severity::Error,
                if types {
                    "TYPELIST redefinition, ignored"
                } else {
                    "GROUPLIST redefinition, ignored"
                },
            );
        }
        // The limit counts the NAMEs of this statement only.
        if types {
            self.list_counts.0 = 0;
        } else {
            self.list_counts.1 = 0;
        }
        let mut warned_many = false;
        loop {
            match self.list_entry(kind, &mut warned_many) {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                Err(super::Stop::Discard) if warned_many => {
                    // To the next list statement or TRACE (NAMEs and
                    // header keywords in between are skipped).
                    self.skip_to_list_name_or(false)?;
                    return Ok(());
                }
                Err(super::Stop::Discard) => {
                    if !self.skip_to_list_name()? {
                        return Ok(());
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// One `NAME=n,ID=v` of a list and the comma after it; true when a
    /// NAME follows (the comma may be left out).
    fn list_entry(&mut self, kind: EntryKind, warned_many: &mut bool) -> Step<bool> {
        let t = self.next()?;
        if !t.is_word("NAME") {
            let found = t.text();
            return Err(self.severe(format!("syntax error : missing 'NAME' before '{found}'")));
        }
        // Every NAME counts, whatever follows it; the one past the limit
        // ends the list with a warning before anything else is read.
        let types = kind == EntryKind::Type;
        let count = if types {
            &mut self.list_counts.0
        } else {
            &mut self.list_counts.1
        };
        *count += 1;
        if *count > if types { MAX_TYPES } else { MAX_GROUPS } {
            let what = if types { "typenames" } else { "groupnames" };
            self.diag(
                Severity::Warning,
                format!("too many {what}, first 16 types, 48 groups used"),
            );
            *warned_many = true;
            return Err(super::Stop::Discard);
        }
        self.keyword = t.text();
        self.expect('=', false)?;
        let name_tok = self.next()?;
        // A word that is not a number (keywords are taken).
        if !matches!(&name_tok, Token::Word(w) if !w.starts_with(|c: char| c.is_ascii_digit())) {
            let found = name_tok.text();
            return Err(self.error(format!(
                "syntax error: missing 'identifier' before '{found}'"
            )));
        }
        let mut name = name_tok.text().to_ascii_uppercase();
        if name.chars().count() > 8 {
            self.diag(
                Severity::Warning,
                format!("name too long: {name}, first 8 characters used"),
            );
            name = name.chars().take(8).collect();
        }
        self.expect(',', false)?;
        let t = self.next()?;
        if !t.is_word("ID") {
            let found = t.text();
            return Err(self.severe(format!("keyword 'ID' expected, '{found}' found")));
        }
        self.keyword = t.text();
        self.expect('=', false)?;
        // A word starting with a digit is the ID: a number (`0x`
        // alone reads as 0), or, when it is no 32-bit number
        // (`1L`, `0b1`, `1h`, 99999999999), `invalid ID`. Any other
        // token is `invalid number found`. After those two TRCUST
        // skips tokens up to the next NAME (the list goes on) or
        // TYPELIST, GROUPLIST or TRACE (header keywords in between
        // are skipped silently).
        // The token that is no number is not taken: `ID = NAME = B` goes
        // on with the entry NAME = B, `ID = TRACE` ends the header.
        let (id, id_text) = match self.peek()? {
            Token::Word(w) if w.starts_with(|c: char| c.is_ascii_digit()) => {
                self.next()?;
                let n = if w.eq_ignore_ascii_case("0x") {
                    Some(0)
                } else {
                    parse_number(&w).filter(|&n| n <= u64::from(u32::MAX))
                };
                (n, w)
            }
            Token::Eof => return Err(self.premature_eof()),
            other => {
                let found = other.text();
                self.diag(Severity::Error, format!("invalid number found: {found}"));
                return self.skip_to_list_name();
            }
        };
        self.add_entry(kind, name, id, &id_text, warned_many);
        if *warned_many {
            // The list ends (the caller skips what follows).
            return Err(super::Stop::Discard);
        }
        if id.is_none() {
            return self.skip_to_list_name();
        }
        // The comma between entries may be left out: a NAME goes on
        // with the list.
        if self.peek()? == Token::Punct(',') {
            self.next()?;
        }
        Ok(self.peek()?.is_word("NAME"))
    }

    /// After an ID that is no number: skips to the next NAME (true: the
    /// list goes on) or to TYPELIST, GROUPLIST, TRACE or the end (false).
    fn skip_to_list_name(&mut self) -> Step<bool> {
        self.skip_to_list_name_or(true)
    }

    /// Skips to TYPELIST, GROUPLIST, TRACE or the end, or (when `name`)
    /// to a NAME, which gives true.
    fn skip_to_list_name_or(&mut self, name: bool) -> Step<bool> {
        loop {
            let t = self.peek()?;
            if name && t.is_word("NAME") {
                return Ok(true);
            }
            if t == Token::Eof
                || ["TRACE", "TYPELIST", "GROUPLIST"]
                    .iter()
                    .any(|k| t.is_word(k))
            {
                return Ok(false);
            }
            self.next()?;
        }
    }

    fn add_entry(
        &mut self,
        kind: EntryKind,
        name: String,
        id: Option<u64>,
        id_text: &str,
        warned: &mut bool,
    ) {
        let types = kind == EntryKind::Type;
        // An ID that is no 32-bit number, or a type ID whose low word is
        // not one bit, is invalid before anything else; then the name is
        // checked, then a group ID's low word (0 is invalid).
        let one_bit = |v: u64| (v & 0xFFFF).is_power_of_two();
        let Some(id) = id.filter(|&v| !types || one_bit(v)) else {
            self.diag(Severity::Error, format!("invalid ID: {id_text}, ignored"));
            return;
        };
        if self.types.contains_key(&name) || self.groups.contains_key(&name) {
            self.diag(
                Severity::Error,
                format!("group/type redefinition: {name}, ignored"),
            );
            return;
        }
        let id = id & 0xFFFF;
        if id == 0 {
            self.diag(Severity::Error, format!("invalid ID: {id_text}, ignored"));
            return;
        }
        let id = id as u16;
        let table = if types { &self.types } else { &self.groups };
        if table.values().any(|&v| v == id) {
            let what = if types { "typeid" } else { "groupid" };
            self.diag(
                Severity::Error,
                format!("{what} redefinition: {id_text}, ignored"),
            );
            return;
        }
        let limit = if types {
            super::header::MAX_TYPES
        } else {
            MAX_GROUPS
        };
        if table.len() >= limit {
            if !*warned {
                let what = if types { "typenames" } else { "groupnames" };
                self.diag(
                    Severity::Warning,
                    format!("too many {what}, first 16 types, 48 groups used"),
                );
                *warned = true;
            }
            return;
        }
        if types {
            self.types.insert(name.clone(), id);
        } else {
            self.groups.insert(name.clone(), id);
        }
        self.entries.push(NameEntry {
            name: crate::tsf::lexer::latin1_bytes(&name),
            kind,
            id,
            pad: 0,
        });
    }
}
