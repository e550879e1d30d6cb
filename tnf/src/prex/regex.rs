//! ed(1)-style regular expressions, as prex compiles them with
//! `compile()`/`step()`: basic regular expressions, unanchored unless they
//! say `^` or `$`. They are translated to the `regex` crate's syntax, which
//! matches in linear time (a typed regex cannot make prex hang).
//!
//! Supported: `.`, `*`, `[...]`/`[^...]` with POSIX classes, `^` at the
//! start, `$` at the end, `\(...\)` groups, `\{m,n\}` intervals and escaped
//! characters. Back-references (`\1`) are refused: no linear-time matcher
//! has them, and prex's selection never needed them.

use std::fmt;

/// A compiled ed-style regex.
#[derive(Clone, Debug)]
pub struct EdRegex {
    source: String,
    re: regex::Regex,
}

impl PartialEq for EdRegex {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl fmt::Display for EdRegex {
    /// As prex prints it (`list history`, `list sets`): between slashes,
    /// a slash in it escaped as it was typed, so the line reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/{}/", self.source.replace('/', "\\/"))
    }
}

/// Why a regex is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad regular expression /{expr}/: {why}")]
pub struct RegexError {
    /// The expression.
    pub expr: String,
    /// What is wrong.
    pub why: String,
}

impl EdRegex {
    /// Compiles `source` (the text between the slashes).
    pub fn new(source: &str) -> Result<Self, RegexError> {
        let err = |why: &str| RegexError {
            expr: source.to_string(),
            why: why.to_string(),
        };
        let translated = translate(source).map_err(err)?;
        let re = regex::RegexBuilder::new(&translated)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| err(&e.to_string()))?;
        Ok(EdRegex {
            source: source.to_string(),
            re,
        })
    }

    /// True if it matches anywhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        self.re.is_match(text)
    }

    /// The expression as typed.
    pub fn source(&self) -> &str {
        &self.source
    }
}

fn lit(out: &mut String, c: char) {
    out.push_str(&regex::escape(&c.to_string()));
}

/// A basic regular expression in the `regex` crate's syntax.
fn translate(src: &str) -> Result<String, &'static str> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    // Where a `*` is literal: at the start, after `\(` or a leading `^`.
    let mut star_literal = true;
    while i < chars.len() {
        let c = chars[i];
        let next_star_literal = match c {
            '^' if i == 0 => {
                out.push('^');
                true
            }
            '$' if i + 1 == chars.len() => {
                out.push('$');
                false
            }
            '.' => {
                out.push('.');
                false
            }
            '*' if star_literal => {
                out.push_str("\\*");
                false
            }
            '*' => {
                out.push('*');
                false
            }
            '[' => {
                i = bracket(&chars, i, &mut out)?;
                star_literal = false;
                continue;
            }
            '\\' => {
                let Some(&e) = chars.get(i + 1) else {
                    return Err("trailing backslash");
                };
                i += 1;
                match e {
                    '(' => {
                        out.push('(');
                        true
                    }
                    ')' => {
                        out.push(')');
                        false
                    }
                    '{' => {
                        let close = chars[i..]
                            .iter()
                            .position(|c| *c == '}')
                            .ok_or("\\{ without \\}")?;
                        let body: String = chars[i + 1..i + close].iter().collect();
                        let body = body.strip_suffix('\\').ok_or("\\{ without \\}")?;
                        if body.is_empty() || !body.chars().all(|c| c.is_ascii_digit() || c == ',')
                        {
                            return Err("bad \\{m,n\\} interval");
                        }
                        out.push('{');
                        out.push_str(body);
                        out.push('}');
                        i += close;
                        false
                    }
                    '1'..='9' => return Err("back-references are not supported"),
                    other => {
                        lit(&mut out, other);
                        false
                    }
                }
            }
            other => {
                lit(&mut out, other);
                false
            }
        };
        star_literal = next_star_literal;
        i += 1;
    }
    Ok(out)
}

/// Copies a bracket expression starting at `chars[start] == '['`; returns
/// the index after its `]`.
fn bracket(chars: &[char], start: usize, out: &mut String) -> Result<usize, &'static str> {
    let mut i = start + 1;
    out.push('[');
    if chars.get(i) == Some(&'^') {
        out.push('^');
        i += 1;
    }
    let mut first = true;
    loop {
        let Some(&c) = chars.get(i) else {
            return Err("[ without ]");
        };
        match c {
            ']' if !first => {
                out.push(']');
                return Ok(i + 1);
            }
            '[' if chars.get(i + 1) == Some(&':') => {
                let rest: String = chars[i..].iter().collect();
                let end = rest.find(":]").ok_or("[: without :]")?;
                let class = &rest[..end + 2];
                out.push_str(class);
                i += class.chars().count();
            }
            '-' => {
                out.push('-');
                i += 1;
            }
            other => {
                // Backslash and the set operators are literal in POSIX brackets.
                if matches!(other, '\\' | '[' | ']' | '&' | '~' | '^') {
                    out.push('\\');
                }
                out.push(other);
                i += 1;
            }
        }
        first = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ed_syntax() {
        let m = |re: &str, s: &str| EdRegex::new(re).unwrap().is_match(s);
        assert!(m("out", "throughout"));
        assert!(m("^in", "inloop"));
        assert!(!m("^loop", "inloop"));
        assert!(m("op$", "inloop"));
        assert!(m("*a", "x*a"));
        assert!(m("a\\{2\\}", "baab"));
        assert!(!m("a\\{3\\}", "baab"));
        assert!(m("\\(ab\\)*c", "c"));
        assert!(m("[[:digit:]]", "x9"));
        assert!(m("a+b", "a+b"));
        assert!(!m("a+b", "aab"));
        assert!(m("[\\]", "\\"));
        assert!(m("[]x]", "]"));
        assert!(m(".*", ""));
        assert!(EdRegex::new("\\(a\\)\\1").is_err());
        assert!(EdRegex::new("[abc").is_err());
        assert!(EdRegex::new("a\\").is_err());
    }
}
