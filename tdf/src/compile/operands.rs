//! The operands of a TRACE: the TP address (MAP symbols, `±offs`, RETEP,
//! `@STATIC`, `@file,line`), REGS lists, address specifications with their
//! indirection flags (LEN, MEM32, MEM, ASCIIZ32, ASCIIZ), and ORBIT.
//!
//! The points where checks are made follow TRCUST's observed line numbers:
//! the TP symbol is resolved after the token that follows the address has
//! been read; a zero or missing length is reported at the length itself;
//! anything after ABORTOP or REMOVEOP when the whole TRACE has been read
//! (trace.rs).

use rpn_vm::Instr;

use super::debug::VarLog;
use super::retep::{self, Criteria};
use super::trace::{Place, TraceStmt};
use super::{Compiler, Step};
use crate::codegen::{self, Truncation};
use crate::diag::Severity;
use crate::tsf::ast::{
    Address, Base, DataKind, Flag, Length, RegItem, Term, is_flat_general, is_segment,
    is_word_general, register,
};
use crate::tsf::lexer::{Token, parse_number};

/// A LEN= statement waiting for its memory statement.
#[derive(Debug, Clone)]
pub(crate) struct LenStmt {
    addr: Address,
    flag: Flag,
}

impl Compiler<'_> {
    pub(crate) fn tp_kw(&mut self, st: &mut TraceStmt) -> Step<()> {
        if st.place.is_some() {
            return Err(self.error("TP redefinition, tracepoint ignored"));
        }
        self.expect('=', false)?;
        match self.peek()? {
            Token::At(file) => {
                self.next()?;
                if file.eq_ignore_ascii_case("STATIC") {
                    if st.has_data {
                        return Err(self
                            .error("unexpected: DATA_STATEMENT with STATIC tracepoint, ignored"));
                    }
                    st.place = Some(Place::Static);
                    return Ok(());
                }
                self.open_module(false)?;
                // Symbols are needed as for `.name`: debug information or
                // a MAP file.
                if self.debug_info()?.is_none() {
                    self.symbols()?;
                }
                // The token that is not the comma or the line number is
                // left to be read again (a TRACE starts the next
                // tracepoint; the end of the file ends the run as it
                // would after any ERROR).
                if self.peek()? != Token::Punct(',') {
                    // TRCUST names the tokens it wants, not the one found.
                    return Err(self.error("syntax error: missing 'comma' before 'linenum'"));
                }
                self.next()?;
                let t = self.peek()?;
                let line = match &t {
                    Token::Word(w) => parse_number(w),
                    Token::Eof => return Err(self.premature_eof()),
                    _ => None,
                };
                let Some(line) = line else {
                    let text = t.text();
                    return Err(self.error(format!("line number missing or invalid: {text}")));
                };
                self.next()?;
                self.tp_line(st, &file, line)
            }
            Token::Sym(name) => {
                self.next()?;
                // Checked at every `TP=.name`: a module opened for an
                // earlier `TP=@file` (with `/L=`) does not make up for a
                // missing MODNAME.
                if self.modname.is_none() {
                    return Err(self.severe("module name not specified"));
                }
                self.module()?;
                // With debug information a MAP file is optional.
                let symbols = match self.debug_info()? {
                    Some(_) => self.map.clone(),
                    None => Some(self.symbols()?),
                };
                let mut disp: i64 = 0;
                while let Token::Punct(c @ ('+' | '-')) = self.peek()? {
                    self.next()?;
                    if let Token::Word(w) = self.peek()?
                        && w.starts_with(|c: char| c.is_ascii_digit())
                        && parse_number(&w).is_none()
                    {
                        // TRCUST reports it and leaves it to be read as the
                        // next keyword.
                        self.diag(Severity::Error, format!("invalid number found: {w}"));
                        break;
                    }
                    let (n, _) = self.number()?;
                    let n = i64::try_from(n).unwrap_or(i64::MAX);
                    disp = if c == '+' {
                        disp.saturating_add(n)
                    } else {
                        disp.saturating_sub(n)
                    };
                }
                // RETEP follows after a comma, or right away (TRCUST takes
                // `TP=.name RETEP=RET` too).
                let mut retep: Option<u8> = None;
                if self.peek()? == Token::Punct(',') {
                    self.next()?;
                    if self.peek()?.is_word("RETEP") {
                        self.next()?;
                        retep = Some(self.retep_criteria()?);
                    }
                } else if self.peek()?.is_word("RETEP") {
                    self.next()?;
                    retep = Some(self.retep_criteria()?);
                }
                self.peek()?;
                let procedure = self.debug_procedure(&name)?;
                let hll = self.debug_is_hll()?;
                let symbols = symbols.as_deref();
                let sym = symbols.and_then(|s| s.lookup(&name, self.opts.ignore_case));
                // The routine: (object, start, end, entry) from the debug
                // procedure (entry after its prologue, as the document
                // says), else from the MAP symbol and the next one.
                let routine = match (&procedure, sym) {
                    (Some(p), _) => Some((
                        u32::from(p.segment),
                        p.offset,
                        p.offset.checked_add(p.length),
                        // IBM HLL: where TRCUST takes the body from, its
                        // first block (0 without one; see `debug`).
                        if hll {
                            p.hll_entry()
                        } else {
                            p.offset.saturating_add(p.debug_start)
                        },
                    )),
                    (None, Some(s)) => Some((
                        s.object,
                        s.offset,
                        symbols.and_then(|t| t.next_offset(s)),
                        s.offset,
                    )),
                    // IBM HLL: a public symbol that is no procedure (DBGH32's
                    // `total`).
                    (None, None) if hll => self
                        .debug_static(&name)?
                        .map(|(object, offset)| (object, offset, None, offset)),
                    (None, None) => None,
                };
                let Some((object, start, end, entry)) = routine else {
                    return Err(self.error(format!("symbol not found: {name}")));
                };
                let mut offset = match u32::try_from(i64::from(entry) + disp) {
                    Ok(o) => o,
                    Err(_) => return Err(self.error("address not found")),
                };
                if let (Some(mask), Some(p), true) = (retep, &procedure, hll) {
                    // IBM HLL: the body TRCUST reads, searched byte by
                    // byte (see `debug`).
                    let Some((from, to)) = p.hll_body() else {
                        return Err(self.error(format!("unable to locate end of {name}")));
                    };
                    if mask & retep::RM_CV != 0 {
                        offset = to;
                    } else {
                        let code = self.code_bytes(object, from, to)?;
                        let proc_end = p.offset.saturating_add(p.length);
                        let found = retep::find_bytes(&code, from, proc_end, self.criteria(mask));
                        offset = self.return_point(found, &name)?;
                    }
                } else if let Some(mask) = retep {
                    let cv = procedure
                        .as_ref()
                        .filter(|p| mask & retep::RM_CV != 0 && u32::from(p.segment) == object)
                        .and_then(|p| p.offset.checked_add(p.debug_end));
                    if let Some(at) = cv {
                        offset = at;
                    } else {
                        let Some(end) = end else {
                            return Err(self.error(format!("symbol not found: {name}")));
                        };
                        let big = self.module()?.is_32bit(object) != Some(false);
                        let code = self.code_bytes(object, start, end)?;
                        let found = retep::find(&code, start, big, self.criteria(mask));
                        offset = self.return_point(found, &name)?;
                    }
                }
                self.place_at(st, object, offset)
            }
            Token::Eof => Err(self.premature_eof()),
            other => {
                let found = other.text();
                Err(self.error(format!("syntax error: missing '.symbol' before '{found}'")))
            }
        }
    }

    /// `RETEP[=RET+JMP+...]` after the RETEP word.
    /// The module's bytes of `object` from `from` to `to` (0 where it has
    /// none): the code a return point is searched in.
    fn code_bytes(&mut self, object: u32, from: u32, to: u32) -> Step<Vec<u8>> {
        let image = self.module()?;
        Ok((from..to)
            .map(|o| image.byte_at(object, o).unwrap_or(0))
            .collect())
    }

    /// The search criteria of RETEP's `mask` with the run's options.
    fn criteria(&self, mask: u8) -> Criteria {
        Criteria {
            mask,
            pascal: self.opts.retep_pascal,
            range: self.opts.retep_range,
        }
    }

    /// The return point a search `found`, or (none found) a warning and
    /// the tracepoint discarded, as TRCUST does.
    fn return_point(&mut self, found: Option<u32>, name: &str) -> Step<u32> {
        found.ok_or_else(|| {
            self.diag(
                Severity::Warning,
                format!("unable to determine return point for {name}"),
            );
            super::Stop::Discard
        })
    }

    fn retep_criteria(&mut self) -> Step<u8> {
        if self.peek()? != Token::Punct('=') {
            return Ok(self.opts.retep_mask);
        }
        self.next()?;
        let mut mask = 0;
        loop {
            let t = self.next()?;
            let word = t.text().to_ascii_uppercase();
            mask |= match word.as_str() {
                "RET" => retep::RM_RET,
                "JMP" => retep::RM_JMP,
                "LEAVE" => retep::RM_LEAVE,
                "LRET" => retep::RM_LRET,
                "CV" => retep::RM_CV,
                _ => {
                    let text = t.text();
                    return Err(self.error(format!("invalid parameter: '{text}', ignored")));
                }
            };
            if self.peek()? != Token::Punct('+') {
                return Ok(mask);
            }
            self.next()?;
        }
    }

    /// Ends a data statement: reads the next token.
    fn data_end(&mut self) -> Step<()> {
        self.peek()?;
        Ok(())
    }

    pub(crate) fn regs_kw(&mut self, st: &mut TraceStmt) -> Step<()> {
        self.static_data_check(st, "REGS")?;
        self.expect('=', false)?;
        self.expect('(', false)?;
        let mut items = Vec::new();
        loop {
            let t = self.next()?;
            match &t {
                Token::Sym(name) => items.push(RegItem::Variable(name.clone())),
                Token::Word(w) => match register(w) {
                    Some(r) => items.push(RegItem::Reg(r)),
                    None => {
                        let text = t.text();
                        return Err(self.error(format!("register expected, '{text}' found")));
                    }
                },
                other => {
                    let text = other.text();
                    return Err(self.error(format!("register expected, '{text}' found")));
                }
            }
            match self.next()? {
                Token::Punct(',') => {}
                Token::Punct(')') => break,
                other => {
                    let found = other.text();
                    return Err(self.error(format!("syntax error: missing ')' before '{found}'")));
                }
            }
        }
        // Runs of registers, and the memory statements of stack variables.
        let mut code = Vec::new();
        let mut regs = Vec::new();
        for item in items {
            match item {
                RegItem::Reg(r) => regs.push(r),
                // Register and stack variables come from debug information.
                RegItem::Variable(name) => match self.variable_log(st, &name)? {
                    Some(VarLog::Regs(rs)) => regs.extend(rs),
                    Some(VarLog::Code(c)) => {
                        code.extend(codegen::regs(&regs));
                        regs.clear();
                        code.extend(c);
                    }
                    None => return Err(self.error(format!("symbol not found: {name}"))),
                },
            }
        }
        code.extend(codegen::regs(&regs));
        self.data_end()?;
        self.append(st, code)
    }

    pub(crate) fn orbit_kw(&mut self, st: &mut TraceStmt) -> Step<()> {
        if st.orbit.is_some() {
            return Err(self.error("ORBIT redefinition, tracepoint ignored"));
        }
        self.expect('=', false)?;
        self.expect('(', false)?;
        // The comma between the numbers may be left out.
        let mask = self.orbit_number()?;
        if self.peek()? == Token::Punct(',') {
            self.next()?;
        }
        let var = self.orbit_number()?;
        // A variable index above 16 bits keeps its low word (auto ORBITs
        // still need the whole value to be 1).
        if var > 0xFFFF {
            self.diag(Severity::Warning, "index too large, high word ignored");
        }
        // The closing parenthesis is checked before the values.
        self.expect(')', false)?;
        let (mask, var) = if mask == 0 {
            if var != 1 {
                return Err(self.error("invalid ORBIT value, tracepoint ignored"));
            }
            let k = self.auto_orbits;
            self.auto_orbits += 1;
            st.auto_orbit = true;
            (1u32 << (k % 32), k / 32)
        } else {
            (mask as u32, (var & 0xFFFF) as u32)
        };
        if var > 0xFFFF {
            return Err(self.error("invalid ORBIT value, tracepoint ignored"));
        }
        self.peek()?;
        st.orbit = Some((mask, var));
        self.append(st, codegen::orbit(mask, var as u16))
    }

    /// A number of ORBIT=(mask,var).
    /// A token that is no number is left to be read again (`TRACE` starts
    /// the next tracepoint).
    fn orbit_number(&mut self) -> Step<u64> {
        let t = self.peek()?;
        if t == Token::Eof {
            return Err(self.premature_eof());
        }
        if let Token::Word(w) = &t
            && let Some(n) = parse_number(w).filter(|&n| n <= u64::from(u32::MAX))
        {
            self.next()?;
            return Ok(n);
        }
        let found = t.text();
        Err(self.error(format!("syntax error: missing 'number' before '{found}'")))
    }

    pub(crate) fn len_kw(&mut self, st: &mut TraceStmt) -> Step<()> {
        self.static_data_check(st, "LEN")?;
        self.expect('=', false)?;
        self.expect('(', false)?;
        let addr = self.address(None, true)?;
        self.expect(',', false)?;
        let flag = self.flag()?;
        self.expect(')', false)?;
        self.data_end()?;
        st.pending_len = Some(LenStmt { addr, flag });
        Ok(())
    }

    pub(crate) fn data_kw(&mut self, st: &mut TraceStmt, kw: &str) -> Step<()> {
        let kind = match kw {
            "MEM32" => DataKind::Mem32,
            "MEM" => DataKind::Mem,
            "ASCIIZ32" => DataKind::Asciiz32,
            _ => DataKind::Asciiz,
        };
        self.static_data_check(st, "DATA_STATEMENT")?;
        self.expect('=', false)?;
        self.expect('(', false)?;
        let addr = self.address(Some(kind), false)?;
        self.expect(',', false)?;
        let flag = self.flag()?;
        self.expect(',', false)?;
        let t = self.next()?;
        let length = if t.is_word("LEN") {
            if st.pending_len.is_none() {
                return Err(self.error("variable LEN parameter not preceding"));
            }
            Length::Variable
        } else {
            let text = t.text();
            match parse_number(&text) {
                Some(0) => return Err(self.error("zero length specified, tracepoint ignored")),
                Some(n) => Length::Fixed(n),
                None => {
                    return Err(self.error(format!(
                        "syntax error: missing 'data length' before '{text}'"
                    )));
                }
            }
        };
        self.expect(')', false)?;
        self.length_check(length);
        self.data_end()?;
        let mut t = Truncation::default();
        let flat = kind.flat();
        let length_code = match length {
            Length::Fixed(n) => codegen::fixed_length(n, &mut t),
            Length::Variable => {
                let len = st.pending_len.take().ok_or(super::Stop::Discard)?;
                let len_flat = match len.addr.base {
                    Base::Flat(_) => true,
                    Base::Seg(_) => false,
                    Base::Symbol { .. } => flat,
                };
                let sym = self.resolve(&len.addr)?;
                let a = codegen::address(&len.addr, sym, len_flat, &mut t);
                codegen::len_code(a, &len.flag, &len.addr.post, len_flat, &mut t)
            }
        };
        let sym = self.resolve(&addr)?;
        let a = codegen::address(&addr, sym, flat, &mut t);
        let code: Vec<Instr> = codegen::data(kind, &flag, length_code, a, &addr.post, &mut t);
        if t.high_word {
            self.diag(Severity::Warning, "index too large, high word ignored");
        }
        self.append(st, code)
    }

    /// The symbol of an address as (object, offset).
    fn resolve(&mut self, addr: &Address) -> Step<Option<(u32, u32)>> {
        let Base::Symbol { name, .. } = &addr.base else {
            return Ok(None);
        };
        // The debug information first, then the MAP file.
        if let Some(at) = self.debug_static(name)? {
            return Ok(Some(at));
        }
        let symbols = match (self.map.clone(), self.debug_info_if_open()?) {
            (None, Some(_)) => None,
            _ => Some(self.symbols()?),
        };
        match symbols
            .as_deref()
            .and_then(|s| s.lookup(name, self.opts.ignore_case))
        {
            Some(s) => Ok(Some((s.object, s.offset))),
            None => Err(self.error(format!("symbol not found: {name}"))),
        }
    }

    /// An address specification. `kind` is the memory statement (None for
    /// LEN=, which also accepts a bare symbol name).
    fn address(&mut self, kind: Option<DataKind>, bare_symbol: bool) -> Step<Address> {
        let t = self.next()?;
        let base = match &t {
            Token::Sym(name) => Base::Symbol {
                name: name.clone(),
                disp: 0,
            },
            Token::Word(w) => {
                let upper = w.to_ascii_uppercase();
                let flat = upper
                    .strip_prefix('F')
                    .and_then(register)
                    .filter(|&r| is_flat_general(r));
                let seg = upper.strip_prefix('R').and_then(register);
                if let Some(r) = flat {
                    if kind.is_some_and(|k| !k.flat()) {
                        return Err(self.error(
                            "invalid address specified: use segmented Regs with MEM/ASCIIZ",
                        ));
                    }
                    Base::Flat(r)
                } else if let Some(r) = seg {
                    if !is_segment(r) {
                        return Err(self.error(format!("segment register expected, '{w}' found")));
                    }
                    if kind.is_some_and(DataKind::flat) {
                        return Err(self.error(
                            "invalid address specified: use flat Regs with MEM32/ASCIIZ32",
                        ));
                    }
                    Base::Seg(r)
                } else if bare_symbol && !upper.starts_with(|c: char| c.is_ascii_digit()) {
                    Base::Symbol {
                        name: w.clone(),
                        disp: 0,
                    }
                } else if upper.starts_with('F') && upper.len() > 1 {
                    return Err(self.error(format!("invalid flat register specified: {w}")));
                } else {
                    return Err(self.error(format!("invalid address specified: {w}")));
                }
            }
            other => {
                let text = other.text();
                return Err(self.error(format!("invalid address specified: {text}")));
            }
        };
        let mut addr = Address {
            base,
            terms: Vec::new(),
            post: Vec::new(),
        };
        while let Token::Punct(c @ ('+' | '-')) = self.peek()? {
            self.next()?;
            let sign: i64 = if c == '+' { 1 } else { -1 };
            let t = self.next()?;
            match &t {
                Token::Punct('(') => {
                    let (n, _) = self.number()?;
                    self.expect(')', false)?;
                    addr.post.push(sign * i64::try_from(n).unwrap_or(i64::MAX));
                }
                Token::Word(w) if w.starts_with(|c: char| c.is_ascii_digit()) => {
                    let Some(n) = parse_number(w) else {
                        return Err(self.error(format!("invalid number found: {w}")));
                    };
                    let n = sign * i64::try_from(n).unwrap_or(i64::MAX);
                    match &mut addr.base {
                        Base::Symbol { disp, .. } => *disp = disp.saturating_add(n),
                        _ => addr.terms.push(Term::Disp(n)),
                    }
                }
                Token::Word(w) => {
                    let r = register(w);
                    let ok = match (&addr.base, r) {
                        (Base::Flat(_), Some(r)) => is_flat_general(r),
                        (Base::Seg(_), Some(r)) => is_word_general(r),
                        _ => false,
                    };
                    let Some(r) = r.filter(|_| ok) else {
                        return Err(self.error(format!("register expected, '{w}' found")));
                    };
                    addr.terms
                        .push(if sign > 0 { Term::Add(r) } else { Term::Sub(r) });
                }
                other => {
                    let text = other.text();
                    return Err(self.error(format!("number expected, '{text}' found")));
                }
            }
        }
        Ok(addr)
    }

    /// `D[IRECT]`, `I[NDIRECT][*[±n]...]...`, `IS` or `IF`.
    fn flag(&mut self) -> Step<Flag> {
        let t = self.peek()?;
        if t == Token::Eof {
            return Err(self.premature_eof());
        }
        // Any other token (a number, a string, punctuation, a keyword) is
        // `missing 'DIRECT/INDIRECT'`, and is left to be read again (a
        // TRACE starts the next tracepoint).
        let word = match &t {
            Token::Word(w) => w.to_ascii_uppercase(),
            _ => String::new(),
        };
        let known = word == "IS"
            || word == "IF"
            || (!word.is_empty() && ("DIRECT".starts_with(&word) || "INDIRECT".starts_with(&word)));
        if !known {
            let found = t.text();
            return Err(self.error(format!(
                "syntax error: missing 'DIRECT/INDIRECT' before '{found}'"
            )));
        }
        self.next()?;
        if word == "IS" {
            return Ok(Flag::IndirectSegmented);
        }
        if word == "IF" {
            return Ok(Flag::IndirectFlat);
        }
        if "DIRECT".starts_with(&word) {
            return Ok(Flag::Direct);
        }
        let mut levels: Vec<Vec<i64>> = Vec::new();
        loop {
            match self.peek()? {
                Token::Punct('*') => {
                    self.next()?;
                    levels.push(Vec::new());
                }
                Token::Punct(c @ ('+' | '-')) => {
                    self.next()?;
                    let (n, _) = self.number()?;
                    let n = i64::try_from(n).unwrap_or(i64::MAX);
                    if levels.is_empty() {
                        levels.push(Vec::new());
                    }
                    if let Some(level) = levels.last_mut() {
                        level.push(if c == '+' { n } else { -n });
                    }
                }
                _ => break,
            }
        }
        if levels.is_empty() {
            levels.push(Vec::new());
        }
        if levels.len() > 20 {
            return Err(self.error("invalid parameter: more than 20 levels of indirection"));
        }
        Ok(Flag::Indirect(levels))
    }
}
