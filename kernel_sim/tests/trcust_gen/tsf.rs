//! Proptest strategies for trace source files: every statement and keyword
//! of the TSF language, valid and invalid.
//!
//! A [`TsfSpec`] is a list of header items and TRACE statements, each a
//! list of keywords, rendered into tokens; [`Mutation`]s then delete,
//! repeat, misspell or insert tokens anywhere, and comments and line
//! breaks are placed between tokens. Symbol names are indices into the
//! module context's symbols, so the spec needs no knowledge of the module
//! and shrinks well.

use proptest::prelude::*;
use proptest::sample::Index;

/// What the renderer needs from the module context.
pub struct Names<'a> {
    /// Public symbols (as the MAP names them).
    pub symbols: &'a [String],
    /// Source files with debug information: (name, lines).
    pub sources: &'a [(String, u32)],
    /// Debug variables (locals and globals).
    pub variables: &'a [String],
}

/// How a number is written.
#[derive(Debug, Clone, Copy)]
pub enum Base {
    /// `12`
    Dec,
    /// `0xC`
    Hex,
    /// `0XC`
    HexUpper,
    /// `014`
    Octal,
    /// `0Ch`
    SuffixH,
    /// `0b1100`
    Binary,
    /// `12L`
    Junk,
}

/// A number.
#[derive(Debug, Clone, Copy)]
pub struct Num(pub u64, pub Base);

impl Num {
    fn render(&self, tame: bool) -> String {
        let n = self.0;
        let base = match self.1 {
            Base::Dec | Base::Hex | Base::HexUpper => self.1,
            _ if tame => Base::Hex,
            b => b,
        };
        match base {
            Base::Dec => n.to_string(),
            Base::Hex => format!("0x{n:x}"),
            Base::HexUpper => format!("0X{n:X}"),
            Base::Octal => format!("0{n:o}"),
            Base::SuffixH => format!("0{n:X}h"),
            Base::Binary => format!("0b{n:b}"),
            Base::Junk => format!("{n}L"),
        }
    }
}

fn base() -> impl Strategy<Value = Base> + Clone {
    prop_oneof![
        6 => Just(Base::Dec),
        6 => Just(Base::Hex),
        1 => Just(Base::HexUpper),
        1 => Just(Base::Octal),
        1 => Just(Base::SuffixH),
        1 => Just(Base::Binary),
        1 => Just(Base::Junk),
    ]
}

/// A number drawn mostly from `interesting`, sometimes anything.
fn num_of(interesting: &'static [u64]) -> impl Strategy<Value = Num> + Clone {
    (
        prop_oneof![
            8 => proptest::sample::select(interesting),
            1 => any::<u16>().prop_map(u64::from),
            1 => any::<u32>().prop_map(u64::from),
        ],
        base(),
    )
        .prop_map(|(n, b)| Num(n, b))
}

fn small() -> impl Strategy<Value = Num> + Clone {
    num_of(&[0, 1, 2, 3, 4, 5, 6, 8, 16, 20, 255, 256, 0xFFFF, 0x10000])
}

/// A string literal's content.
#[derive(Debug, Clone)]
pub struct Text(pub String);

pub fn text() -> impl Strategy<Value = Text> {
    let piece = prop_oneof![
        6 => "[a-zA-Z0-9 =:]{0,8}",
        2 => proptest::sample::select(&[
            "%D", "%W", "%B", "%F", "%Q", "%S", "%C", "%c", "%P", "%R", "%Rx", "%I2",
            "%I10", "%08D", "%5W", "%%", "%", "%Z", "%U", "%T",
        ][..]).prop_map(str::to_string),
        1 => proptest::sample::select(&[
            "\\n", "\\t", "\\\"", "\\\\", "\\x41", "\\x", "\\0", "\\r", "\\q", "\t", "'",
        ][..]).prop_map(str::to_string),
    ];
    prop::collection::vec(piece, 0..5).prop_map(|v| Text(v.concat()))
}

/// Register names, valid and not.
const REGS: &[&str] = &[
    "AX", "BX", "CX", "DX", "SI", "DI", "BP", "SP", "EAX", "EBX", "ECX", "EDX", "ESI", "EDI",
    "EBP", "ESP", "CS", "DS", "ES", "SS", "FS", "GS", "FLAGS", "EFLAGS", "IP", "EIP", "AL", "CR0",
    "eax", "bx",
];

/// An address base.
#[derive(Debug, Clone)]
pub enum AddrBase {
    /// `.sym`
    Sym(Index),
    /// A bare name (LEN only accepts it).
    BareSym(Index),
    /// `Rseg` (e.g. `RDS`), any register after the R.
    Seg(&'static str),
    /// `Freg`, any register after the F.
    Flat(&'static str),
    /// A number.
    Number(Num),
    /// A debug variable `.var`.
    Var(Index),
}

/// One `+x` / `-x` term.
#[derive(Debug, Clone)]
pub enum Term {
    /// A number.
    Num(Num),
    /// A register.
    Reg(&'static str),
    /// `(n)`.
    Paren(Num),
}

/// An address specification.
#[derive(Debug, Clone)]
pub struct Addr {
    base: AddrBase,
    terms: Vec<(bool, Term)>,
}

fn addr() -> impl Strategy<Value = Addr> {
    let bases = prop_oneof![
        4 => any::<Index>().prop_map(AddrBase::Sym),
        1 => any::<Index>().prop_map(AddrBase::BareSym),
        3 => proptest::sample::select(&["DS", "ES", "SS", "CS", "FS", "GS", "AX", "DI"][..])
            .prop_map(AddrBase::Seg),
        3 => proptest::sample::select(
            &["EAX", "EBX", "ECX", "EDX", "ESI", "EDI", "EBP", "ESP", "AX", "DS", "FLAGS"][..]
        ).prop_map(AddrBase::Flat),
        1 => small().prop_map(AddrBase::Number),
        1 => any::<Index>().prop_map(AddrBase::Var),
    ];
    let term = prop_oneof![
        3 => small().prop_map(Term::Num),
        3 => proptest::sample::select(REGS).prop_map(Term::Reg),
        1 => small().prop_map(Term::Paren),
    ];
    (bases, prop::collection::vec((any::<bool>(), term), 0..3))
        .prop_map(|(base, terms)| Addr { base, terms })
}

/// The mode of a data statement.
#[derive(Debug, Clone)]
pub enum Mode {
    /// `DIRECT`, or an abbreviation of it.
    Direct(usize),
    /// `INDIRECT` (abbreviated to `n` letters) and its levels.
    Indirect(usize, Vec<Vec<(bool, Num)>>),
    /// `IS`
    Is,
    /// `IF`
    If,
    /// Something else.
    Junk(&'static str),
}

fn mode() -> impl Strategy<Value = Mode> {
    let level = prop::collection::vec((any::<bool>(), small()), 0..3);
    prop_oneof![
        4 => (1usize..=6).prop_map(Mode::Direct),
        4 => (1usize..=8, prop_oneof![
            3 => prop::collection::vec(level.clone(), 0..4),
            1 => prop::collection::vec(level, 18..23),
        ]).prop_map(|(n, l)| Mode::Indirect(n, l)),
        1 => Just(Mode::Is),
        1 => Just(Mode::If),
        1 => proptest::sample::select(&["INDIRECTX", "DIRECTLY", "X", "LEN", "2"][..])
            .prop_map(Mode::Junk),
    ]
}

/// A data statement's length.
#[derive(Debug, Clone)]
pub enum Len {
    /// A number.
    Num(Num),
    /// `LEN`
    Variable,
    /// Left out.
    None,
}

/// A tracepoint location.
#[derive(Debug, Clone)]
pub enum Tp {
    /// `@STATIC`
    Static,
    /// `.sym±n,...[,RETEP[=a+b]]`
    Sym(Index, Vec<(bool, Num)>, Option<Option<Vec<&'static str>>>),
    /// `@file,line`
    Line(Index, Num),
    /// Something else.
    Junk(&'static str),
}

fn tp() -> impl Strategy<Value = Tp> {
    let retep = prop_oneof![
        3 => Just(None),
        1 => Just(Some(None)),
        2 => prop::collection::vec(
            proptest::sample::select(&["RET", "JMP", "LEAVE", "LRET", "CV", "ret", "FOO"][..]),
            1..3
        ).prop_map(|v| Some(Some(v))),
    ];
    prop_oneof![
        2 => Just(Tp::Static),
        6 => (any::<Index>(), prop::collection::vec((any::<bool>(), small()), 0..2), retep)
            .prop_map(|(s, d, r)| Tp::Sym(s, d, r)),
        1 => (any::<Index>(), num_of(&[0, 1, 3, 5, 8, 10, 12, 20, 100, 5000]))
            .prop_map(|(f, l)| Tp::Line(f, l)),
        1 => proptest::sample::select(&["2:5", "startup", "@", ".", "@static", "0x10"][..])
            .prop_map(Tp::Junk),
    ]
}

/// An ORBIT value.
#[derive(Debug, Clone)]
pub enum Orbit {
    /// `ORBIT=n`
    One(Num),
    /// `ORBIT=(a,b)`
    Two(Num, Num),
    /// `ORBIT=.sym`
    Sym(Index),
}

/// A name in TYPE= or GROUP=.
#[derive(Debug, Clone)]
pub enum NameRef {
    /// The n-th declared name.
    Declared(Index),
    /// An undeclared name.
    Unknown,
}

/// A TRACE keyword.
#[derive(Debug, Clone)]
pub enum Kw {
    /// `MINOR=`
    Minor(Num),
    /// `TP=`
    Tp(Tp),
    /// `OPCODE=`
    Opcode(Num),
    /// `TYPE=` (parenthesised or not)
    Type(bool, Vec<NameRef>),
    /// `GROUP=`
    Group(bool, Vec<NameRef>),
    /// `DESC=`
    Desc(Text),
    /// `FMT=`
    Fmt(Text),
    /// `REGS=(...)`; a `None` is a debug variable
    Regs(Vec<Option<(&'static str, Index)>>),
    /// `LEN=(addr,mode)`
    Len(Addr, Mode),
    /// `MEM`, `MEM32`, `ASCIIZ`, `ASCIIZ32`
    Data(&'static str, Addr, Mode, Len),
    /// `ORBIT=`
    Orbit(Orbit),
    /// `ABORTOP`
    Abortop,
    /// `REMOVEOP`
    Removeop,
    /// Keywords TRCUST knows but does not accept here, and others.
    Other(&'static str),
}

fn kw() -> impl Strategy<Value = Kw> {
    let names = prop::collection::vec(
        prop_oneof![4 => any::<Index>().prop_map(NameRef::Declared), 1 => Just(NameRef::Unknown)],
        0..4,
    );
    let reg = prop_oneof![
        6 => (proptest::sample::select(REGS), any::<Index>()).prop_map(Some),
        1 => Just(None),
    ];
    let data_len = prop_oneof![
        4 => num_of(&[0, 1, 2, 4, 20, 64, 255, 256, 600, 4096, 0x10000]).prop_map(Len::Num),
        2 => Just(Len::Variable),
        1 => Just(Len::None),
    ];
    prop_oneof![
        4 => num_of(&[0, 1, 2, 3, 5, 0x10, 0xFFFF, 0x10000]).prop_map(Kw::Minor),
        6 => tp().prop_map(Kw::Tp),
        1 => num_of(&[0, 0x55, 0x8B, 0x6A, 0xC3, 0xCC, 0xE8, 0x16A]).prop_map(Kw::Opcode),
        1 => (any::<bool>(), names.clone()).prop_map(|(p, n)| Kw::Type(p, n)),
        1 => (any::<bool>(), names).prop_map(|(p, n)| Kw::Group(p, n)),
        3 => text().prop_map(Kw::Desc),
        2 => text().prop_map(Kw::Fmt),
        3 => prop::collection::vec(reg, 0..6).prop_map(Kw::Regs),
        1 => (addr(), mode()).prop_map(|(a, m)| Kw::Len(a, m)),
        4 => (
            proptest::sample::select(&["MEM", "MEM32", "ASCIIZ", "ASCIIZ32"][..]),
            addr(),
            mode(),
            data_len,
        ).prop_map(|(k, a, m, l)| Kw::Data(k, a, m, l)),
        1 => prop_oneof![
            num_of(&[0, 1, 2, 32, 0x8000_0000]).prop_map(Orbit::One),
            (
                num_of(&[0, 1, 2, 32, 0x8000_0000]),
                num_of(&[0, 1, 2, 3, 100, 2047, 2048, 0xFFFF, 0x1_0000, 0x1_FFFF])
            )
                .prop_map(|(a, b)| Orbit::Two(a, b)),
            any::<Index>().prop_map(Orbit::Sym),
        ].prop_map(Kw::Orbit),
        1 => Just(Kw::Abortop),
        1 => Just(Kw::Removeop),
        1 => proptest::sample::select(&[
            "EREG", "EMEM", "SEG=1", "RETEP", "MINOR", "TP", "DESC=", "MODNAME=X", "TRACE",
            // An ERROR, then a bad literal in what is skipped.
            "MINOR=X \"a\nb\"", "FOO \"a\0b\"", "OPCODE=Y \"c",
        ][..]).prop_map(Kw::Other),
    ]
}

/// A header item.
#[derive(Debug, Clone)]
pub enum Header {
    /// `MODNAME=`: the context's module, spelled in one of several ways.
    Modname(u8),
    /// `MAJOR=`
    Major(Num),
    /// `MAXDATALENGTH=` / `MAXDATALEN=`
    MaxData(bool, Num),
    /// `TDFID=`
    TdfId(Num),
    /// `TYPELIST` (true) or `GROUPLIST`, with (name, id) pairs.
    List(bool, Vec<(u8, Num)>),
}

fn header() -> impl Strategy<Value = Header> {
    let entry = (
        0u8..60,
        num_of(&[1, 2, 3, 4, 8, 0x10, 0x40, 0x80, 0x8000, 0x10000, 0]),
    );
    prop_oneof![
        4 => (0u8..8).prop_map(Header::Modname),
        4 => num_of(&[0, 1, 0xC5, 0xC6, 0x1C5, 0x8001, 0xFFFF, 0x10000]).prop_map(Header::Major),
        1 => (any::<bool>(), num_of(&[0, 19, 20, 100, 512, 4099, 4100]))
            .prop_map(|(l, n)| Header::MaxData(l, n)),
        1 => num_of(&[0, 1, 0x1234, 0xFFFF, 70000]).prop_map(Header::TdfId),
        1 => (any::<bool>(), prop_oneof![
            3 => prop::collection::vec(entry.clone(), 0..5),
            1 => prop::collection::vec(entry, 14..52),
        ]).prop_map(|(t, v)| Header::List(t, v)),
    ]
}

/// A token-level change.
#[derive(Debug, Clone)]
pub enum Mutation {
    /// Delete the token.
    Delete(Index),
    /// Repeat the token.
    Repeat(Index),
    /// Change one letter of the token.
    Misspell(Index, Index),
    /// Insert a token.
    Insert(Index, &'static str),
    /// Insert a comment.
    Comment(Index, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<Index>().prop_map(Mutation::Delete),
        any::<Index>().prop_map(Mutation::Repeat),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::Misspell(a, b)),
        (
            any::<Index>(),
            proptest::sample::select(
                &[
                    ",", "=", "(", ")", "+", "-", "*", ".", "@", "\"x\"", "TRACE", "1", "FOO",
                    "\"", "\"a\nb\"",
                ][..]
            )
        )
            .prop_map(|(a, t)| Mutation::Insert(a, t)),
        (any::<Index>(), 0u8..4).prop_map(|(a, k)| Mutation::Comment(a, k)),
    ]
}

/// A whole TSF.
#[derive(Debug, Clone)]
pub struct TsfSpec {
    header: Vec<Header>,
    traces: Vec<Vec<Kw>>,
    mutations: Vec<Mutation>,
    /// 0 upper, 1 lower, 2 as rendered, 3 mixed.
    case: u8,
    /// Separator style between keywords.
    breaks: u8,
    /// What follows the last token.
    tail: u8,
}

/// The TSF strategy.
pub fn tsf() -> impl Strategy<Value = TsfSpec> {
    (
        prop::collection::vec(header(), 0..5),
        prop::collection::vec(prop::collection::vec(kw(), 0..7), 0..4),
        prop_oneof![3 => Just(Vec::new()), 2 => prop::collection::vec(mutation(), 1..3)],
        0u8..4,
        0u8..3,
        0u8..4,
    )
        .prop_map(|(header, traces, mutations, case, breaks, tail)| TsfSpec {
            header,
            traces,
            mutations,
            case,
            breaks,
            tail,
        })
}

fn pick<'a>(list: &'a [String], i: &Index, fallback: &'a str) -> &'a str {
    if list.is_empty() {
        fallback
    } else {
        &list[i.index(list.len())]
    }
}

const TYPE_NAMES: &[&str] = &["API", "SYS", "PRE", "POST", "MEM", "FS", "IO", "X"];

fn list_name(n: u8) -> String {
    match TYPE_NAMES.get(usize::from(n)) {
        Some(s) => s.to_string(),
        None if n == 59 => "AVERYLONGTYPENAME".to_string(),
        None => format!("T{n}"),
    }
}

/// One rendered token; `kw` marks keywords, whose case may change.
struct Tok {
    text: String,
    kw: bool,
    /// A line break before this token.
    brk: bool,
}

struct Toks(Vec<Tok>, bool);

impl Toks {
    fn kw(&mut self, s: &str) {
        self.0.push(Tok {
            text: s.to_string(),
            kw: true,
            brk: false,
        });
    }
    fn t(&mut self, s: impl Into<String>) {
        self.0.push(Tok {
            text: s.into(),
            kw: false,
            brk: false,
        });
    }
    fn brk(&mut self) {
        if let Some(t) = self.0.last_mut() {
            t.brk = true;
        }
    }
    fn num(&mut self, n: &Num) {
        let text = n.render(self.1);
        self.t(text);
    }
    fn str(&mut self, s: &Text) {
        self.t(format!("\"{}\"", s.0));
    }
    fn addr(&mut self, a: &Addr, names: &Names<'_>) {
        match &a.base {
            AddrBase::Sym(i) => {
                self.t(".");
                self.t(pick(names.symbols, i, "nosuch"));
            }
            AddrBase::BareSym(i) => self.t(pick(names.symbols, i, "nosuch")),
            AddrBase::Seg(r) => self.kw(&format!("R{r}")),
            AddrBase::Flat(r) => self.kw(&format!("F{r}")),
            AddrBase::Number(n) => self.num(n),
            AddrBase::Var(i) => {
                self.t(".");
                self.t(pick(names.variables, i, "var"));
            }
        }
        for (plus, term) in &a.terms {
            self.t(if *plus { "+" } else { "-" });
            match term {
                Term::Num(n) => self.num(n),
                Term::Reg(r) => self.kw(r),
                Term::Paren(n) => {
                    self.t("(");
                    self.num(n);
                    self.t(")");
                }
            }
        }
    }
    fn mode(&mut self, m: &Mode) {
        match m {
            Mode::Direct(n) => self.kw(&"DIRECT"[..*n]),
            Mode::Indirect(n, levels) => {
                self.kw(&"INDIRECT"[..*n]);
                for (i, level) in levels.iter().enumerate() {
                    if i > 0 || level.is_empty() {
                        self.t("*");
                    }
                    for (plus, n) in level {
                        self.t(if *plus { "+" } else { "-" });
                        self.num(n);
                    }
                }
            }
            Mode::Is => self.kw("IS"),
            Mode::If => self.kw("IF"),
            Mode::Junk(_) if self.1 => self.kw("DIRECT"),
            Mode::Junk(s) => self.t(*s),
        }
    }
}

impl TsfSpec {
    /// The TSF's bytes, for a module named `modname` (file name with
    /// extension) and the context's names. `tame` leaves out the
    /// mutations and the junk: a TSF as a careful user writes it.
    pub fn render(&self, modname: &str, names: &Names<'_>, tame: bool) -> Vec<u8> {
        let mut t = Toks(Vec::new(), tame);
        let declared: Vec<String> = self
            .header
            .iter()
            .filter_map(|h| match h {
                Header::List(_, v) => Some(v.iter().map(|(n, _)| list_name(*n))),
                _ => None,
            })
            .flatten()
            .collect();
        for h in &self.header {
            match h {
                Header::Modname(k) => {
                    t.kw("MODNAME");
                    t.t("=");
                    let base = modname.split('.').next().unwrap_or(modname);
                    t.t(match k {
                        0..=3 => modname.to_string(),
                        4 => modname.to_ascii_lowercase(),
                        5 => base.to_string(),
                        6 => format!("C:\\\\{modname}"),
                        _ => "NOSUCH.DLL".to_string(),
                    });
                }
                Header::Major(n) => {
                    t.kw("MAJOR");
                    t.t("=");
                    t.num(n);
                }
                Header::MaxData(long, n) => {
                    t.kw(if *long { "MAXDATALENGTH" } else { "MAXDATALEN" });
                    t.t("=");
                    t.num(n);
                }
                Header::TdfId(n) => {
                    t.kw("TDFID");
                    t.t("=");
                    t.num(n);
                }
                Header::List(types, entries) => {
                    t.kw(if *types { "TYPELIST" } else { "GROUPLIST" });
                    for (i, (name, id)) in entries.iter().enumerate() {
                        if i > 0 {
                            t.t(",");
                        }
                        t.kw("NAME");
                        t.t("=");
                        t.t(list_name(*name));
                        t.t(",");
                        t.kw("ID");
                        t.t("=");
                        t.num(id);
                    }
                }
            }
            t.brk();
        }
        for trace in &self.traces {
            t.kw("TRACE");
            let kws = trace
                .iter()
                .filter(|k| !(tame && matches!(k, Kw::Other(_))));
            for (i, k) in kws.enumerate() {
                if i > 0 {
                    t.t(",");
                    if self.breaks == 1 || (self.breaks == 2 && i % 2 == 0) {
                        t.brk();
                    }
                }
                self.kw_tokens(&mut t, k, names, &declared);
            }
            t.brk();
        }
        if !tame {
            self.mutate(&mut t);
        }
        let mut out = String::new();
        for (i, tok) in t.0.iter().enumerate() {
            let text = if tok.kw {
                match (self.case, i % 2) {
                    (1, _) | (3, 0) => tok.text.to_ascii_lowercase(),
                    _ => tok.text.clone(),
                }
            } else {
                tok.text.clone()
            };
            out.push_str(&text);
            out.push_str(if tok.brk { "\r\n" } else { " " });
        }
        match self.tail {
            0 => {}
            1 => out.push_str("\r\n"),
            2 => out.push_str("; end\r\n"),
            _ => out.push_str("\r\n\x1a"),
        }
        out.into_bytes()
    }

    fn kw_tokens(&self, t: &mut Toks, k: &Kw, names: &Names<'_>, declared: &[String]) {
        let name_list = |t: &mut Toks, paren: bool, list: &[NameRef]| {
            if paren || list.len() != 1 {
                t.t("(");
            }
            for (i, n) in list.iter().enumerate() {
                if i > 0 {
                    t.t(",");
                }
                match n {
                    NameRef::Declared(ix) => t.t(pick(declared, ix, "NONE")),
                    NameRef::Unknown => t.t("UNDECL"),
                }
            }
            if paren || list.len() != 1 {
                t.t(")");
            }
        };
        match k {
            Kw::Minor(n) => {
                t.kw("MINOR");
                t.t("=");
                t.num(n);
            }
            Kw::Tp(tp) => {
                t.kw("TP");
                t.t("=");
                match tp {
                    Tp::Static => {
                        t.t("@");
                        t.kw("STATIC");
                    }
                    Tp::Sym(s, disp, retep) => {
                        t.t(".");
                        t.t(pick(names.symbols, s, "nosuch"));
                        for (plus, n) in disp {
                            t.t(if *plus { "+" } else { "-" });
                            t.num(n);
                        }
                        if let Some(r) = retep {
                            t.t(",");
                            t.kw("RETEP");
                            if let Some(list) = r {
                                t.t("=");
                                for (i, c) in list.iter().enumerate() {
                                    if i > 0 {
                                        t.t("+");
                                    }
                                    t.kw(c);
                                }
                            }
                        }
                    }
                    Tp::Line(f, n) => {
                        t.t("@");
                        let file = if names.sources.is_empty() {
                            "hello.c".to_string()
                        } else {
                            names.sources[f.index(names.sources.len())].0.clone()
                        };
                        t.t(file);
                        t.t(",");
                        t.num(n);
                    }
                    Tp::Junk(_) if t.1 => {
                        t.t("@");
                        t.kw("STATIC");
                    }
                    Tp::Junk(s) => t.t(*s),
                }
            }
            Kw::Opcode(n) => {
                t.kw("OPCODE");
                t.t("=");
                t.num(n);
            }
            Kw::Type(p, l) => {
                t.kw("TYPE");
                t.t("=");
                name_list(t, *p, l);
            }
            Kw::Group(p, l) => {
                t.kw("GROUP");
                t.t("=");
                name_list(t, *p, l);
            }
            Kw::Desc(s) => {
                t.kw("DESC");
                t.t("=");
                t.str(s);
            }
            Kw::Fmt(s) => {
                t.kw("FMT");
                t.t("=");
                t.str(s);
            }
            Kw::Regs(list) => {
                t.kw("REGS");
                t.t("=");
                t.t("(");
                for (i, r) in list.iter().enumerate() {
                    if i > 0 {
                        t.t(",");
                    }
                    match r {
                        Some((reg, _)) => t.kw(reg),
                        None => {
                            t.t(".");
                            let v = names.variables.first().map_or("var", String::as_str);
                            t.t(v);
                        }
                    }
                }
                t.t(")");
            }
            Kw::Len(a, m) => {
                t.kw("LEN");
                t.t("=");
                t.t("(");
                t.addr(a, names);
                t.t(",");
                t.mode(m);
                t.t(")");
            }
            Kw::Data(k, a, m, l) => {
                t.kw(k);
                t.t("=");
                t.t("(");
                t.addr(a, names);
                t.t(",");
                t.mode(m);
                match l {
                    Len::Num(n) => {
                        t.t(",");
                        t.num(n);
                    }
                    Len::Variable => {
                        t.t(",");
                        t.kw("LEN");
                    }
                    Len::None => {}
                }
                t.t(")");
            }
            Kw::Orbit(o) => {
                t.kw("ORBIT");
                t.t("=");
                match o {
                    Orbit::One(n) => t.num(n),
                    Orbit::Two(a, b) => {
                        t.t("(");
                        t.num(a);
                        t.t(",");
                        t.num(b);
                        t.t(")");
                    }
                    Orbit::Sym(s) => {
                        t.t(".");
                        t.t(pick(names.symbols, s, "nosuch"));
                    }
                }
            }
            Kw::Abortop => t.kw("ABORTOP"),
            Kw::Removeop => t.kw("REMOVEOP"),
            Kw::Other(s) => t.kw(s),
        }
    }

    fn mutate(&self, t: &mut Toks) {
        for m in &self.mutations {
            let n = t.0.len();
            if n == 0 {
                return;
            }
            match m {
                Mutation::Delete(i) => {
                    t.0.remove(i.index(n));
                }
                Mutation::Repeat(i) => {
                    let at = i.index(n);
                    let tok = Tok {
                        text: t.0[at].text.clone(),
                        kw: t.0[at].kw,
                        brk: false,
                    };
                    t.0.insert(at, tok);
                }
                Mutation::Misspell(i, j) => {
                    let tok = &mut t.0[i.index(n)];
                    let mut b = tok.text.clone().into_bytes();
                    if !b.is_empty() {
                        let k = j.index(b.len());
                        b[k] = if b[k].is_ascii_alphabetic() {
                            b'Q'
                        } else {
                            b'X'
                        };
                    }
                    tok.text = String::from_utf8_lossy(&b).into_owned();
                }
                Mutation::Insert(i, s) => {
                    let at = i.index(n + 1);
                    t.0.insert(
                        at,
                        Tok {
                            text: s.to_string(),
                            kw: false,
                            brk: false,
                        },
                    );
                }
                Mutation::Comment(i, k) => {
                    let at = i.index(n + 1);
                    let c = match k {
                        0 => "; a comment\r\n",
                        1 => "/* c */",
                        2 => "/* two\r\nlines */",
                        _ => "/* /* nested */ */",
                    };
                    t.0.insert(
                        at,
                        Tok {
                            text: c.to_string(),
                            kw: false,
                            brk: false,
                        },
                    );
                }
            }
        }
    }
}
