//! prex's lexical rules (reference §1.3, prexlex.l): commands end at a
//! newline, a backslash-newline continues the line, `#` comments run to
//! the end of the line; lowercase keywords; IDENT `[a-zA-Z_.%][a-zA-Z0-9_.%]*`;
//! `$set` and `&fcn` names; `'quoted'` strings (no quote or newline inside);
//! `/regex/` with `\/` for a slash; scaled integers `[0-9]+[KkMm]?`; any
//! other character is INVAL, a syntax error.

/// The keywords (prexlex.l's list; `filter` is one no rule uses).
pub const KEYWORDS: &[&str] = &[
    "add",
    "alloc",
    "buffer",
    "clear",
    "connect",
    "continue",
    "create",
    "dealloc",
    "delete",
    "disable",
    "enable",
    "fcns",
    "filter",
    "help",
    "history",
    "tracefile",
    "kill",
    "ktrace",
    "list",
    "off",
    "on",
    "pfilter",
    "probes",
    "quit",
    "resume",
    "sets",
    "source",
    "suspend",
    "trace",
    "untrace",
    "values",
];

/// One token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token {
    /// A keyword.
    Keyword(&'static str),
    /// An identifier.
    Ident(String),
    /// `$name`.
    SetName(String),
    /// `&name`.
    FcnName(String),
    /// `'text'`.
    Quoted(String),
    /// `/regex/` (the text between the slashes, `\/` made `/`).
    Regex(String),
    /// A scaled integer.
    Int(u64),
    /// `=`.
    Equals,
    /// `,` (pfilter pid lists).
    Comma,
    /// Any other character.
    Inval(char),
}

fn ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || matches!(c, '_' | '.' | '%')
}

fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%')
}

/// Joins backslash-newline continuations and splits the text into
/// logical lines, each with the number of the physical line it starts on.
pub fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut start = 1;
    for (i, line) in text.split('\n').enumerate() {
        if current.is_empty() {
            start = i + 1;
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(head) = line.strip_suffix('\\') {
            current.push_str(head);
            current.push(' ');
        } else {
            current.push_str(line);
            out.push((start, std::mem::take(&mut current)));
        }
    }
    if !current.is_empty() {
        out.push((start, current));
    }
    if text.ends_with('\n') {
        // split leaves an empty last piece for a final newline.
        if out.last().is_some_and(|(_, l)| l.is_empty()) {
            out.pop();
        }
    }
    out
}

/// The tokens of one logical line (comments dropped).
pub fn tokens(line: &str) -> Vec<Token> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let word = |i: &mut usize| {
        let s = *i;
        while *i < chars.len() && ident_char(chars[*i]) {
            *i += 1;
        }
        chars[s..*i].iter().collect::<String>()
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\r' => i += 1,
            '#' => break,
            '=' => {
                out.push(Token::Equals);
                i += 1;
            }
            ',' => {
                out.push(Token::Comma);
                i += 1;
            }
            '$' | '&' if chars.get(i + 1).is_some_and(|c| ident_start(*c)) => {
                i += 1;
                let w = word(&mut i);
                out.push(if c == '$' {
                    Token::SetName(w)
                } else {
                    Token::FcnName(w)
                });
            }
            '\'' => match chars[i + 1..].iter().position(|c| *c == '\'') {
                Some(len) => {
                    out.push(Token::Quoted(chars[i + 1..i + 1 + len].iter().collect()));
                    i += len + 2;
                }
                None => {
                    out.push(Token::Inval('\''));
                    i += 1;
                }
            },
            '/' => {
                let mut j = i + 1;
                let mut text = String::new();
                let mut closed = false;
                while j < chars.len() {
                    match chars[j] {
                        '\\' if chars.get(j + 1) == Some(&'/') => {
                            text.push('/');
                            j += 2;
                        }
                        '/' => {
                            closed = true;
                            j += 1;
                            break;
                        }
                        ch => {
                            text.push(ch);
                            j += 1;
                        }
                    }
                }
                if closed {
                    out.push(Token::Regex(text));
                    i = j;
                } else {
                    out.push(Token::Inval('/'));
                    i += 1;
                }
            }
            '0'..='9' => {
                let s = i;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
                let digits: String = chars[s..i].iter().collect();
                let mut n = digits.parse::<u64>().unwrap_or(u64::MAX);
                match chars.get(i) {
                    Some('k' | 'K') => {
                        n = n.saturating_mul(1024);
                        i += 1;
                    }
                    Some('m' | 'M') => {
                        n = n.saturating_mul(1024 * 1024);
                        i += 1;
                    }
                    _ => {}
                }
                out.push(Token::Int(n));
            }
            c if ident_start(c) => {
                let w = word(&mut i);
                match KEYWORDS.iter().find(|k| **k == w) {
                    Some(k) => out.push(Token::Keyword(k)),
                    None => out.push(Token::Ident(w)),
                }
            }
            other => {
                out.push(Token::Inval(other));
                i += 1;
            }
        }
    }
    out
}
