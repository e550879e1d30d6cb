//! The TSF lexer.
//!
//! Tokens are words (letters, digits, dots and the other characters that
//! are not delimiters), symbols (a word starting with a dot: `.name`, or
//! `.` alone for an empty name, as TRCUST reads `. name`), files (`@name`,
//! the same way: `@ STATIC` is an empty file name and a word), strings,
//! the punctuation `= , ( ) + - *`, and the end of the file. Blanks and `;`
//! comments (to the end of the line) separate tokens; C comments `/* */`,
//! which may nest and span lines, are left out as if they were not there,
//! so one inside a word joins its halves (`.start/**/up` is `.startup`).
//!
//! `line` is 1 plus the number of line breaks consumed so far, so after a
//! token has been read it is the line the lexer has reached, which is the
//! line TRCUST reports (after the last line break of a file it is one past
//! the last line).
//!
//! Strings: `\"` becomes `"`, after another backslash too (`\\"` is a
//! backslash and a quote, the string goes on); every other backslash is
//! kept as written (a NUL ends the text, the literal going on to its
//! quote, with a SEVERE `NULL in literal` in [`Lexer::notes`] that does not
//! end the run). A quote inside a word (or a `.name` or `@name`) starts
//! a literal there whose text begins with the word's characters (without
//! the `.` or `@`), as in TRCUST: `X"abc"` is the literal `Xabc`, and
//! `X"abc` at the end of a line is SEVERE `new line in literal` with
//! nothing said about `X`. A line break inside a string is SEVERE; a
//! token longer than 259 bytes is FATAL.

use crate::diag::{Diagnostic, Severity};

/// Longest token TRCUST accepts.
pub const MAX_TOKEN: usize = 259;

/// A token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// A word: keyword, name, register or number.
    Word(String),
    /// A symbol: a word that starts with `.` (`.name`), without its dot;
    /// the name is empty when no word character follows the dot.
    Sym(String),
    /// A file: a word that starts with `@` (`@STATIC`, `@file`), without
    /// its `@`; empty when no word character follows.
    At(String),
    /// A string literal's content.
    Str(Vec<u8>),
    /// One of `= , ( ) + - * . @`.
    Punct(char),
    /// End of the file.
    Eof,
}

impl Token {
    /// The token as TRCUST quotes it in messages.
    pub fn text(&self) -> String {
        match self {
            Token::Word(w) | Token::Sym(w) | Token::At(w) => w.clone(),
            Token::Str(s) => latin1(s),
            Token::Punct(c) => c.to_string(),
            Token::Eof => String::new(),
        }
    }

    /// Whether this is the word `kw` (case-insensitive).
    pub fn is_word(&self, kw: &str) -> bool {
        matches!(self, Token::Word(w) if w.eq_ignore_ascii_case(kw))
    }
}

const PUNCT: &[u8] = b"=,()+-*";

fn is_word_byte(b: u8) -> bool {
    !(b.is_ascii_whitespace() || PUNCT.contains(&b) || b"\";@\0".contains(&b))
}

/// The lexer over a TSF's bytes.
pub struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    /// 1 + line breaks consumed.
    pub line: u32,
    peeked: Option<Token>,
    /// Diagnostics that do not stop the lexer (a NUL in a literal), for
    /// the reader to report in order.
    pub notes: Vec<Diagnostic>,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`.
    pub fn new(src: &'a [u8]) -> Self {
        Lexer {
            src,
            pos: 0,
            line: 1,
            peeked: None,
            notes: Vec::new(),
        }
    }

    fn fatal(&self, sev: Severity, text: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.line, sev, text)
    }

    /// Skips blanks and comments.
    fn skip(&mut self) -> Result<(), Diagnostic> {
        loop {
            let Some(&b) = self.src.get(self.pos) else {
                return Ok(());
            };
            match b {
                b'\n' => {
                    self.line += 1;
                    self.pos += 1;
                }
                b if b.is_ascii_whitespace() || b == 0x1A => self.pos += 1,
                b';' => {
                    while self.src.get(self.pos).is_some_and(|&c| c != b'\n') {
                        self.pos += 1;
                    }
                }
                b'/' if self.src.get(self.pos + 1) == Some(&b'*') => self.comment()?,
                _ => return Ok(()),
            }
        }
    }

    /// Skips a C comment (`/*` at `pos`), nested ones included.
    fn comment(&mut self) -> Result<(), Diagnostic> {
        self.pos += 2;
        let mut depth = 1u32;
        while depth > 0 {
            match self.src.get(self.pos) {
                None => {
                    return Err(self.fatal(Severity::Severe, "premature end of file encountered"));
                }
                Some(b'\n') => {
                    self.line += 1;
                    self.pos += 1;
                }
                Some(b'/') if self.src.get(self.pos + 1) == Some(&b'*') => {
                    depth += 1;
                    self.pos += 2;
                }
                Some(b'*') if self.src.get(self.pos + 1) == Some(&b'/') => {
                    depth -= 1;
                    self.pos += 2;
                }
                Some(_) => self.pos += 1,
            }
        }
        Ok(())
    }

    /// The bytes of a word from `pos`: word characters and dots, through
    /// any comment inside it (TRCUST reads `HELL/*x*/O.EXE` as
    /// `HELLO.EXE`).
    fn word_bytes(&mut self) -> Result<Vec<u8>, Diagnostic> {
        let mut out = Vec::new();
        while let Some(&c) = self.src.get(self.pos) {
            if c == b'/' && self.src.get(self.pos + 1) == Some(&b'*') {
                self.comment()?;
                continue;
            }
            if !(is_word_byte(c) || c == b'.') {
                break;
            }
            out.push(c);
            self.pos += 1;
        }
        Ok(out)
    }

    /// The next token, without consuming it.
    ///
    /// # Errors
    /// A FATAL or SEVERE diagnostic for a malformed token.
    pub fn peek(&mut self) -> Result<&Token, Diagnostic> {
        if self.peeked.is_none() {
            let t = self.read()?;
            self.peeked = Some(t);
        }
        Ok(self.peeked.as_ref().unwrap_or(&Token::Eof))
    }

    /// The next token.
    ///
    /// # Errors
    /// A FATAL or SEVERE diagnostic for a malformed token.
    pub fn next_token(&mut self) -> Result<Token, Diagnostic> {
        match self.peeked.take() {
            Some(t) => Ok(t),
            None => self.read(),
        }
    }

    fn too_long(&self) -> Diagnostic {
        self.fatal(
            Severity::Fatal,
            format!("token in TSF file exceeds {MAX_TOKEN} bytes"),
        )
    }

    fn read(&mut self) -> Result<Token, Diagnostic> {
        self.skip()?;
        let Some(&b) = self.src.get(self.pos) else {
            return Ok(Token::Eof);
        };
        if b == b'"' {
            return self.string(Vec::new());
        }
        if PUNCT.contains(&b) {
            self.pos += 1;
            return Ok(Token::Punct(char::from(b)));
        }
        if b == b'@' {
            self.pos += 1;
            let name = self.word_bytes()?;
            if self.src.get(self.pos) == Some(&b'"') {
                return self.string(name);
            }
            if name.len() + 1 > MAX_TOKEN {
                return Err(self.too_long());
            }
            return Ok(Token::At(latin1(&name)));
        }
        if b == 0 {
            self.pos += 1;
            return Ok(Token::Word("\0".into()));
        }
        // A '.' inside a word is part of it (`dbgh32.exe`), as in TRCUST;
        // a word starting with one is a symbol.
        let word = self.word_bytes()?;
        if self.src.get(self.pos) == Some(&b'"') {
            // A quote inside a word starts a literal that the word's
            // characters begin (a symbol's without its dot).
            let start = usize::from(word.first() == Some(&b'.'));
            return self.string(word[start..].to_vec());
        }
        if word.len() > MAX_TOKEN {
            return Err(self.too_long());
        }
        match word.strip_prefix(b".") {
            Some(name) => Ok(Token::Sym(latin1(name))),
            None => Ok(Token::Word(latin1(&word))),
        }
    }

    /// A literal from the quote at `pos`, its content after `out` (the
    /// characters of a word the quote is inside of).
    fn string(&mut self, mut out: Vec<u8>) -> Result<Token, Diagnostic> {
        self.pos += 1;
        // Where a NUL cut the text.
        let mut cut: Option<usize> = None;
        loop {
            let Some(&c) = self.src.get(self.pos) else {
                return Err(self.fatal(Severity::Severe, "premature end of file encountered"));
            };
            match c {
                b'"' => {
                    self.pos += 1;
                    break;
                }
                b'\n' | b'\r' => return Err(self.fatal(Severity::Severe, "new line in literal")),
                // TRCUST says SEVERE `NULL in literal` and goes on to the
                // closing quote, the literal's text ending at the NUL, and
                // the run does not end for it.
                0 => {
                    let d = self.fatal(Severity::Severe, "NULL in literal");
                    self.notes.push(d);
                    self.pos += 1;
                    cut.get_or_insert(out.len());
                }
                // Only `\"` is an escape: `\\"` is a backslash and an
                // escaped quote, as in TRCUST.
                b'\\' if self.src.get(self.pos + 1) == Some(&b'"') => {
                    out.push(b'"');
                    self.pos += 2;
                }
                c => {
                    out.push(c);
                    self.pos += 1;
                }
            }
            if out.len() > MAX_TOKEN {
                return Err(self.too_long());
            }
        }
        if let Some(n) = cut {
            out.truncate(n);
        }
        Ok(Token::Str(out))
    }

    /// A raw value such as a path or file name: everything up to a blank, a
    /// comma, a `;` or a quote, as bytes, comments inside it left out. Used
    /// for `MODNAME=` and `TP=@file`.
    ///
    /// # Errors
    /// A FATAL diagnostic for an overlong token.
    pub fn raw(&mut self) -> Result<Vec<u8>, Diagnostic> {
        let mut out = Vec::new();
        if let Some(t) = self.peeked.take() {
            // A token was already read: continue from it.
            match t {
                Token::Word(w) => out.extend_from_slice(&latin1_bytes(&w)),
                Token::Sym(w) => {
                    out.push(b'.');
                    out.extend_from_slice(&latin1_bytes(&w));
                }
                Token::At(w) => {
                    out.push(b'@');
                    out.extend_from_slice(&latin1_bytes(&w));
                }
                Token::Punct(c) => out.push(c as u8),
                Token::Str(s) => out.extend_from_slice(&s),
                Token::Eof => {}
            }
        } else {
            self.skip()?;
        }
        while let Some(&c) = self.src.get(self.pos) {
            if c.is_ascii_whitespace() || c == b',' || c == b';' || c == b'"' || c == 0 {
                break;
            }
            if c == b'/' && self.src.get(self.pos + 1) == Some(&b'*') {
                self.comment()?;
                continue;
            }
            out.push(c);
            self.pos += 1;
        }
        if out.len() > MAX_TOKEN {
            return Err(self.too_long());
        }
        Ok(out)
    }
}

/// TRCUST's keywords (its keyword table, from the strings of its binary).
pub const KEYWORDS: [&str; 39] = [
    "TRACE",
    "NAME",
    "ID",
    "MINOR",
    "TP",
    "TYPE",
    "GROUP",
    "REGS",
    "MEM",
    "MEM32",
    "ASCIIZ",
    "ASCIIZ32",
    "DESC",
    "FMT",
    "RETEP",
    "CV",
    "LRET",
    "RET",
    "LEAVE",
    "JMP",
    "DIRECT",
    "INDIRECT",
    "IF",
    "IS",
    "LEN",
    "MODNAME",
    "MAJOR",
    "MAXDATALENGTH",
    "MAXDATALEN",
    "TYPELIST",
    "GROUPLIST",
    "SEG",
    "OPCODE",
    "EREG",
    "EMEM",
    "TDFID",
    "ORBIT",
    "ABORTOP",
    "REMOVEOP",
];

/// Whether `w` is one of TRCUST's keywords (any case).
pub fn is_keyword(w: &str) -> bool {
    KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(w))
}

/// Bytes as Latin-1 text, one character per byte (as `loader` reads MAP
/// files, so names compare byte for byte).
pub fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// The bytes of Latin-1 text (characters above U+00FF become `?`).
pub fn latin1_bytes(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

/// The longest word TRCUST reads as a number.
pub const MAX_NUMBER_CHARS: usize = 10;

/// Parses a TSF number: decimal, or `0x` hex. A word of more than 10
/// characters is no number in TRCUST, whatever its value (`00000000001`
/// and `0x000000001` are not; `0000000001` is 1).
pub fn parse_number(text: &str) -> Option<u64> {
    if text.len() > MAX_NUMBER_CHARS {
        return None;
    }
    if let Some(h) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        if h.is_empty() || h.len() > 16 {
            return None;
        }
        return u64::from_str_radix(h, 16).ok();
    }
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(src: &str) -> Vec<(Token, u32)> {
        let mut l = Lexer::new(src.as_bytes());
        let mut v = Vec::new();
        loop {
            let t = l.next_token().unwrap();
            let end = t == Token::Eof;
            v.push((t, l.line));
            if end {
                return v;
            }
        }
    }

    #[test]
    fn tokens_comments_and_lines() {
        let v = all("MAJOR=0xC6 ; c\r\n/* a /* nested */\n */ TP=.x+5\r\n");
        let toks: Vec<_> = v.iter().map(|(t, _)| t.clone()).collect();
        assert_eq!(
            toks,
            vec![
                Token::Word("MAJOR".into()),
                Token::Punct('='),
                Token::Word("0xC6".into()),
                Token::Word("TP".into()),
                Token::Punct('='),
                Token::Sym("x".into()),
                Token::Punct('+'),
                Token::Word("5".into()),
                Token::Eof,
            ]
        );
        assert_eq!(v[3].1, 3);
        assert_eq!(v.last().unwrap().1, 4);
    }

    #[test]
    fn strings() {
        let v = all(r#""a\"b\n\x41""#);
        assert_eq!(v[0].0, Token::Str(br#"a"b\n\x41"#.to_vec()));
    }

    #[test]
    fn a_quote_inside_a_word_starts_a_literal() {
        let v = all(r#"X"abc"EF .S"t" @F"u" 1"2""#);
        let toks: Vec<_> = v.into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            toks,
            vec![
                Token::Str(b"Xabc".to_vec()),
                Token::Word("EF".into()),
                Token::Str(b"St".to_vec()),
                Token::Str(b"Fu".to_vec()),
                Token::Str(b"12".to_vec()),
                Token::Eof,
            ]
        );
        let mut l = Lexer::new(b"X\"abc\nY");
        assert_eq!(l.next_token().unwrap_err().text, "new line in literal");
    }

    #[test]
    fn a_nul_ends_the_text_not_the_run() {
        let mut l = Lexer::new(b"\"x\0y\" Z");
        assert_eq!(l.next_token().unwrap(), Token::Str(b"x".to_vec()));
        assert_eq!(l.notes.len(), 1);
        assert_eq!(l.notes[0].text, "NULL in literal");
        assert_eq!(l.next_token().unwrap(), Token::Word("Z".into()));
    }

    #[test]
    fn string_errors() {
        let mut l = Lexer::new(b"\"abc\ndef\"");
        assert_eq!(l.next_token().unwrap_err().text, "new line in literal");
        let long = format!("\"{}\"", "x".repeat(260));
        let mut l = Lexer::new(long.as_bytes());
        let e = l.next_token().unwrap_err();
        assert_eq!(e.severity, Severity::Fatal);
        assert_eq!(e.text, "token in TSF file exceeds 259 bytes");
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("0x1C5"), Some(0x1C5));
        assert_eq!(parse_number("08"), Some(8));
        assert_eq!(parse_number("0x"), None);
        assert_eq!(parse_number("1a"), None);
    }
}
