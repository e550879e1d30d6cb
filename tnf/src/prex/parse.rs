//! prex's grammar (reference §1.3, prexgram.y): one statement per logical
//! line, an empty line being no statement.

use std::fmt;

use super::lex::Token;
use super::regex::{EdRegex, RegexError};

/// A spec: an exact identifier, an exact quoted string, or a regex.
#[derive(Clone, Debug, PartialEq)]
pub enum Spec {
    /// `name` (exact).
    Ident(String),
    /// `'text'` (exact).
    Quoted(String),
    /// `/re/` (unanchored).
    Regex(EdRegex),
}

impl Spec {
    /// True if the spec matches `text`.
    pub fn matches(&self, text: &str) -> bool {
        match self {
            Spec::Ident(s) | Spec::Quoted(s) => s == text,
            Spec::Regex(r) => r.is_match(text),
        }
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Spec::Ident(s) | Spec::Quoted(s) => write!(f, "'{s}'"),
            Spec::Regex(r) => write!(f, "{r}"),
        }
    }
}

/// `attr=value`; a bare spec is `keys=spec`.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// The attribute side.
    pub attr: Spec,
    /// The value side.
    pub value: Spec,
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.attr, self.value)
    }
}

/// Which probes a command acts on.
#[derive(Clone, Debug, PartialEq)]
pub enum Selector {
    /// A named set.
    Set(String),
    /// A union of exprs (possibly empty: no probe).
    Exprs(Vec<Expr>),
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selector::Set(s) => write!(f, "${s}"),
            Selector::Exprs(e) => {
                let parts: Vec<String> = e.iter().map(|x| x.to_string()).collect();
                f.write_str(&parts.join(" "))
            }
        }
    }
}

/// What a probe command does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeOp {
    /// `enable`
    Enable,
    /// `disable`
    Disable,
    /// `trace`
    Trace,
    /// `untrace`
    Untrace,
    /// `clear` (disconnect every function)
    Clear,
    /// `connect &fcn`
    Connect(String),
}

impl fmt::Display for ProbeOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProbeOp::Enable => f.write_str("enable"),
            ProbeOp::Disable => f.write_str("disable"),
            ProbeOp::Trace => f.write_str("trace"),
            ProbeOp::Untrace => f.write_str("untrace"),
            ProbeOp::Clear => f.write_str("clear"),
            ProbeOp::Connect(fcn) => write!(f, "connect &{fcn}"),
        }
    }
}

/// How `quit` leaves the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuitMode {
    /// Plain `quit`: kill a target prex started, resume one it attached to.
    Default,
    /// `quit kill`
    Kill,
    /// `quit resume`
    Resume,
    /// `quit suspend`
    Suspend,
}

/// `pfilter` forms (kernel mode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pfilter {
    /// `pfilter`: show.
    Show,
    /// `pfilter on|off`.
    Set(bool),
    /// `pfilter add pid,...`.
    Add(Vec<u64>),
    /// `pfilter delete pid,...`.
    Delete(Vec<u64>),
}

/// `buffer` forms (kernel mode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Buffer {
    /// `buffer`: show.
    Show,
    /// `buffer alloc [size]`.
    Alloc(Option<u64>),
    /// `buffer dealloc`.
    Dealloc,
}

/// One prex statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// An empty line.
    Empty,
    /// `help [topic]`.
    Help(Option<String>),
    /// `continue`.
    Continue,
    /// `quit [kill|resume|suspend]`.
    Quit(QuitMode),
    /// enable/disable/trace/untrace/clear/connect.
    Probe(ProbeOp, Selector),
    /// `create $set exprlist`.
    CreateSet(String, Vec<Expr>),
    /// `create &fcn entry`.
    CreateFcn(String, String),
    /// `source file`.
    Source(String),
    /// `list sets`.
    ListSets,
    /// `list history`.
    ListHistory,
    /// `list tracefile`.
    ListTracefile,
    /// `list fcns`.
    ListFcns,
    /// `list speclist probes selector`.
    ListProbes(Vec<Spec>, Selector),
    /// `list values speclist`.
    ListValues(Vec<Spec>),
    /// `pfilter ...`.
    Pfilter(Pfilter),
    /// `ktrace [on|off]`.
    Ktrace(Option<bool>),
    /// `buffer ...`.
    Buffer(Buffer),
}

/// A statement prex cannot parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Not a statement of the grammar.
    #[error("syntax error")]
    Syntax,
    /// A regex that does not compile.
    #[error("{0}")]
    Regex(#[from] RegexError),
}

struct Parser<'a> {
    toks: &'a [Token],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos)
    }

    fn next(&mut self) -> Option<&Token> {
        let t = self.toks.get(self.pos);
        self.pos += 1;
        t
    }

    fn keyword(&mut self, k: &str) -> bool {
        if self.peek() == Some(&Token::Keyword(kw(k))) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    fn end(&self) -> Result<(), ParseError> {
        if self.at_end() {
            Ok(())
        } else {
            Err(ParseError::Syntax)
        }
    }

    fn spec(&mut self) -> Result<Option<Spec>, ParseError> {
        let s = match self.peek() {
            Some(Token::Ident(s)) => Spec::Ident(s.clone()),
            Some(Token::Quoted(s)) => Spec::Quoted(s.clone()),
            Some(Token::Regex(r)) => Spec::Regex(EdRegex::new(r)?),
            _ => return Ok(None),
        };
        self.pos += 1;
        Ok(Some(s))
    }

    fn exprlist(&mut self) -> Result<Vec<Expr>, ParseError> {
        let mut out = Vec::new();
        while let Some(left) = self.spec()? {
            if self.peek() == Some(&Token::Equals) {
                self.pos += 1;
                let right = self.spec()?.ok_or(ParseError::Syntax)?;
                out.push(Expr {
                    attr: left,
                    value: right,
                });
            } else {
                out.push(Expr {
                    attr: Spec::Ident("keys".into()),
                    value: left,
                });
            }
        }
        Ok(out)
    }

    fn selector(&mut self) -> Result<Selector, ParseError> {
        if let Some(Token::SetName(s)) = self.peek() {
            let s = s.clone();
            self.pos += 1;
            return Ok(Selector::Set(s));
        }
        Ok(Selector::Exprs(self.exprlist()?))
    }

    fn pids(&mut self) -> Result<Vec<u64>, ParseError> {
        let mut out = Vec::new();
        loop {
            match self.next() {
                Some(Token::Int(n)) => out.push(*n),
                _ => return Err(ParseError::Syntax),
            }
            if self.peek() == Some(&Token::Comma) {
                self.pos += 1;
            } else {
                return Ok(out);
            }
        }
    }
}

fn kw(k: &str) -> &'static str {
    super::lex::KEYWORDS
        .iter()
        .find(|w| **w == k)
        .copied()
        .unwrap_or("")
}

/// Parses one logical line's tokens.
pub fn parse(toks: &[Token]) -> Result<Stmt, ParseError> {
    let mut p = Parser { toks, pos: 0 };
    let Some(first) = p.next().cloned() else {
        return Ok(Stmt::Empty);
    };
    let Token::Keyword(k) = first else {
        return Err(ParseError::Syntax);
    };
    let stmt = match k {
        "help" => match p.next().cloned() {
            None => Stmt::Help(None),
            Some(Token::Keyword(k)) => Stmt::Help(Some(k.to_string())),
            Some(Token::Ident(t)) => Stmt::Help(Some(t)),
            Some(_) => return Err(ParseError::Syntax),
        },
        "continue" => Stmt::Continue,
        "quit" => match p.next() {
            None => Stmt::Quit(QuitMode::Default),
            Some(Token::Keyword("kill")) => Stmt::Quit(QuitMode::Kill),
            Some(Token::Keyword("resume")) => Stmt::Quit(QuitMode::Resume),
            Some(Token::Keyword("suspend")) => Stmt::Quit(QuitMode::Suspend),
            Some(_) => return Err(ParseError::Syntax),
        },
        "enable" | "disable" | "trace" | "untrace" | "clear" => {
            let op = match k {
                "enable" => ProbeOp::Enable,
                "disable" => ProbeOp::Disable,
                "trace" => ProbeOp::Trace,
                "untrace" => ProbeOp::Untrace,
                _ => ProbeOp::Clear,
            };
            Stmt::Probe(op, p.selector()?)
        }
        "connect" => {
            let Some(Token::FcnName(f)) = p.next().cloned() else {
                return Err(ParseError::Syntax);
            };
            Stmt::Probe(ProbeOp::Connect(f), p.selector()?)
        }
        "create" => match p.next().cloned() {
            Some(Token::SetName(s)) => Stmt::CreateSet(s, p.exprlist()?),
            Some(Token::FcnName(f)) => match p.next() {
                Some(Token::Ident(entry)) => Stmt::CreateFcn(f, entry.clone()),
                _ => return Err(ParseError::Syntax),
            },
            _ => return Err(ParseError::Syntax),
        },
        "source" => match p.next() {
            Some(Token::Quoted(s) | Token::Ident(s)) => Stmt::Source(s.clone()),
            _ => return Err(ParseError::Syntax),
        },
        "list" => {
            if p.keyword("sets") {
                Stmt::ListSets
            } else if p.keyword("history") {
                Stmt::ListHistory
            } else if p.keyword("tracefile") {
                Stmt::ListTracefile
            } else if p.keyword("fcns") {
                Stmt::ListFcns
            } else if p.keyword("values") {
                let mut specs = Vec::new();
                while let Some(s) = p.spec()? {
                    specs.push(s);
                }
                Stmt::ListValues(specs)
            } else {
                let mut specs = Vec::new();
                while let Some(s) = p.spec()? {
                    specs.push(s);
                }
                if !p.keyword("probes") {
                    return Err(ParseError::Syntax);
                }
                Stmt::ListProbes(specs, p.selector()?)
            }
        }
        "pfilter" => match p.next().cloned() {
            None => Stmt::Pfilter(Pfilter::Show),
            Some(Token::Keyword("on")) => Stmt::Pfilter(Pfilter::Set(true)),
            Some(Token::Keyword("off")) => Stmt::Pfilter(Pfilter::Set(false)),
            Some(Token::Keyword("add")) => Stmt::Pfilter(Pfilter::Add(p.pids()?)),
            Some(Token::Keyword("delete")) => Stmt::Pfilter(Pfilter::Delete(p.pids()?)),
            Some(_) => return Err(ParseError::Syntax),
        },
        "ktrace" => match p.next() {
            None => Stmt::Ktrace(None),
            Some(Token::Keyword("on")) => Stmt::Ktrace(Some(true)),
            Some(Token::Keyword("off")) => Stmt::Ktrace(Some(false)),
            Some(_) => return Err(ParseError::Syntax),
        },
        "buffer" => match p.next() {
            None => Stmt::Buffer(Buffer::Show),
            Some(Token::Keyword("alloc")) => match p.next() {
                None => Stmt::Buffer(Buffer::Alloc(None)),
                Some(Token::Int(n)) => Stmt::Buffer(Buffer::Alloc(Some(*n))),
                Some(_) => return Err(ParseError::Syntax),
            },
            Some(Token::Keyword("dealloc")) => Stmt::Buffer(Buffer::Dealloc),
            Some(_) => return Err(ParseError::Syntax),
        },
        _ => return Err(ParseError::Syntax),
    };
    p.end()?;
    Ok(stmt)
}
