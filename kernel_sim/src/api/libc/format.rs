//! The printf and scanf families' formatting, apart from guest memory:
//! arguments come from an [`ArgSource`] (the guest's stack or a
//! `va_list`), strings through it too, so the conversions are tested
//! without a machine.
//!
//! Decisions, where C leaves room:
//! - `%p` prints eight upper-case hexadecimal digits, as VisualAge C++
//!   does (`0001A2B4`).
//! - Infinities and NaNs print as `INF`/`NAN` (`inf`/`nan` for the
//!   lower-case conversions), signed as the number is.
//! - `%ls`/`%S` and `%lc`/`%C` take UCS-2 (VisualAge's `%S` is the
//!   wide string, as `%ls`) and print each character as one byte, `?`
//!   beyond 0xFF. nmake32's built-in banner (`Version 5.00.002 %S`,
//!   used when TOOLKIT.CAT is not found) passes the narrow `__DATE__`
//!   to `%S`, so it prints the bytes read as UCS-2, as the format
//!   asks; its catalog text (`%1$s`) prints the date.
//! - Numbered arguments (XPG4 `%n$`, `*m$`): see [`pieces`] for the
//!   rules. The arguments are fetched once, in stack order, each with
//!   the size its conversions give it (two dwords for a double or a
//!   `ll` integer; one for an argument no conversion uses); `n` is at
//!   most [`NL_ARGMAX`].
//! - A conversion character that is not one of C's prints itself and
//!   consumes nothing.
//! - One conversion's text is bounded ([`MAX_FIELD`]): a width or
//!   precision beyond it is cut, so a guest cannot make the host build
//!   a huge string.

/// Longest text of one conversion (width and precision are cut to it).
pub(crate) const MAX_FIELD: usize = 4096;
/// Longest text of one call: beyond it the call fails
/// ([`ArgSource::too_long`]).
pub(crate) const MAX_OUT: usize = 0x100_0000;

/// Where the arguments of a formatted call come from.
pub(crate) trait ArgSource {
    /// The error that ends the call (a guest fault).
    type Err;
    /// The next 32-bit argument.
    fn next_u32(&mut self) -> Result<u32, Self::Err>;
    /// A NUL-terminated byte string at `addr`, at most `max` bytes.
    fn string(&mut self, addr: u32, max: usize) -> Result<Vec<u8>, Self::Err>;
    /// A NUL-terminated UCS-2 string at `addr`, at most `max` units.
    fn wstring(&mut self, addr: u32, max: usize) -> Result<Vec<u16>, Self::Err>;
    /// `%n`: store `value` at `addr` with `size` bytes.
    fn store(&mut self, addr: u32, value: u64, size: u32) -> Result<(), Self::Err>;
    /// The error for a text longer than [`MAX_OUT`].
    fn too_long(&mut self) -> Self::Err;

    /// The next 64-bit argument (two stack dwords, low first).
    fn next_u64(&mut self) -> Result<u64, Self::Err> {
        let lo = self.next_u32()?;
        let hi = self.next_u32()?;
        Ok(u64::from(lo) | (u64::from(hi) << 32))
    }
}

/// A parsed conversion specification.
#[derive(Clone, Copy, Debug, Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    prec: Option<usize>,
    /// 'h', 'H' (hh), 'l', 'q' (ll), 'L'.
    size: u8,
    conv: u8,
}

/// Most arguments a numbered (`%n$`) format may refer to (XPG4's
/// NL_ARGMAX; its minimum is 9).
pub(crate) const NL_ARGMAX: usize = 99;

/// Where a width or precision comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Count {
    None,
    Fixed(usize),
    /// `*`: the next argument, or argument `m` with `*m$`.
    Star(Option<usize>),
}

/// One conversion as written, before its arguments are fetched.
#[derive(Clone, Copy, Debug)]
struct Parsed {
    spec: Spec,
    /// `%n$`: the argument number (1-based).
    arg: Option<usize>,
    width: Count,
    prec: Count,
}

impl Parsed {
    /// Whether the conversion takes an argument of its own.
    fn takes_arg(&self) -> bool {
        self.spec.conv != b'%' && CONVERSIONS.contains(&self.spec.conv)
    }

    /// Argument numbers this conversion refers to (0 = unnumbered).
    fn refs(&self) -> impl Iterator<Item = Option<usize>> {
        let star = |c: Count| match c {
            Count::Star(m) => Some(m),
            _ => None,
        };
        [
            star(self.width),
            star(self.prec),
            self.takes_arg().then_some(self.arg),
        ]
        .into_iter()
        .flatten()
    }

    /// Dwords the argument of this conversion takes on the stack.
    fn arg_dwords(&self) -> usize {
        let s = &self.spec;
        if matches!(s.conv, b'e' | b'E' | b'f' | b'F' | b'g' | b'G')
            || (s.size == b'q' && matches!(s.conv, b'd' | b'i' | b'u' | b'o' | b'x' | b'X'))
        {
            2
        } else {
            1
        }
    }
}

/// The conversion characters that take an argument (besides `%`).
const CONVERSIONS: &[u8] = b"diuoxXpcCsSneEfFgG";

/// Parses the specification after a `%` at `fmt[*i..]`; `None` when
/// the format ends inside it.
fn parse_spec(fmt: &[u8], i: &mut usize) -> Option<Parsed> {
    let mut s = Spec::default();
    let mut arg = None;
    let save = *i;
    let n = number(fmt, i);
    if *i > save && fmt.get(*i) == Some(&b'$') {
        *i += 1;
        arg = Some(n);
    } else {
        *i = save;
    }
    while *i < fmt.len() {
        match fmt[*i] {
            b'-' => s.left = true,
            b'+' => s.plus = true,
            b' ' => s.space = true,
            b'#' => s.alt = true,
            b'0' => s.zero = true,
            _ => break,
        }
        *i += 1;
    }
    let width = count(fmt, i);
    let prec = if fmt.get(*i) == Some(&b'.') {
        *i += 1;
        match count(fmt, i) {
            Count::None => Count::Fixed(0),
            c => c,
        }
    } else {
        Count::None
    };
    match fmt.get(*i) {
        Some(b'h') if fmt.get(*i + 1) == Some(&b'h') => {
            s.size = b'H';
            *i += 2;
        }
        Some(b'l') if fmt.get(*i + 1) == Some(&b'l') => {
            s.size = b'q';
            *i += 2;
        }
        Some(b'I') if fmt.get(*i + 1..*i + 3) == Some(b"64") => {
            s.size = b'q';
            *i += 3;
        }
        Some(&m @ (b'h' | b'l' | b'L' | b'q')) => {
            s.size = m;
            *i += 1;
        }
        _ => {}
    }
    let &conv = fmt.get(*i)?;
    *i += 1;
    s.conv = conv;
    Some(Parsed {
        spec: s,
        arg,
        width,
        prec,
    })
}

/// A width or precision: digits, `*` or `*m$`.
fn count(fmt: &[u8], i: &mut usize) -> Count {
    if fmt.get(*i) == Some(&b'*') {
        *i += 1;
        let save = *i;
        let m = number(fmt, i);
        if *i > save && fmt.get(*i) == Some(&b'$') {
            *i += 1;
            return Count::Star(Some(m));
        }
        *i = save;
        return Count::Star(None);
    }
    let save = *i;
    let n = number(fmt, i);
    if *i > save {
        Count::Fixed(n)
    } else {
        Count::None
    }
}

/// The arguments of a numbered format, fetched once in stack order:
/// each argument's first dword in `dwords`.
struct Numbered {
    dwords: Vec<u32>,
    start: Vec<usize>,
}

/// An [`ArgSource`] that reads either in order from the caller's
/// source, or (numbered formats) from a fetched argument onwards.
struct Args<'a, A> {
    inner: &'a mut A,
    numbered: Option<Numbered>,
    at: usize,
}

impl<A: ArgSource> Args<'_, A> {
    /// Points the next read at argument `n` (1-based) of a numbered
    /// format.
    fn seek(&mut self, n: usize) {
        if let Some(t) = &self.numbered {
            self.at = t.start.get(n - 1).copied().unwrap_or(usize::MAX);
        }
    }
}

impl<A: ArgSource> ArgSource for Args<'_, A> {
    type Err = A::Err;
    fn next_u32(&mut self) -> Result<u32, A::Err> {
        match &self.numbered {
            None => self.inner.next_u32(),
            Some(t) => {
                // Every argument referred to was fetched; a read past
                // them is the stack's next dword.
                let v = match t.dwords.get(self.at) {
                    Some(&v) => v,
                    None => self.inner.next_u32()?,
                };
                self.at = self.at.saturating_add(1);
                Ok(v)
            }
        }
    }
    fn string(&mut self, addr: u32, max: usize) -> Result<Vec<u8>, A::Err> {
        self.inner.string(addr, max)
    }
    fn wstring(&mut self, addr: u32, max: usize) -> Result<Vec<u16>, A::Err> {
        self.inner.wstring(addr, max)
    }
    fn store(&mut self, addr: u32, value: u64, size: u32) -> Result<(), A::Err> {
        self.inner.store(addr, value, size)
    }
    fn too_long(&mut self) -> A::Err {
        self.inner.too_long()
    }
}

/// One piece of a format.
enum Piece {
    Text(usize, usize),
    Conv(Parsed),
    /// A conversion that breaks the numbering rules: printed as written.
    Invalid(usize, usize),
}

/// Splits `fmt` into literal text and conversions, and decides whether
/// the format numbers its arguments (XPG4): a format whose first
/// argument reference is numbered must number all of them (`%n$` and
/// `*m$`, `n` and `m` in 1..=[`NL_ARGMAX`]); one whose first is not
/// must number none. A conversion that breaks this, or numbers an
/// argument out of range, is printed as written and takes no argument.
/// `%%` may appear in either.
fn pieces(fmt: &[u8]) -> (Vec<Piece>, bool) {
    let mut out = Vec::new();
    let mut numbered: Option<bool> = None;
    let mut i = 0;
    while i < fmt.len() {
        let start = i;
        while i < fmt.len() && fmt[i] != b'%' {
            i += 1;
        }
        if i > start {
            out.push(Piece::Text(start, i));
        }
        if i >= fmt.len() {
            break;
        }
        let at = i;
        i += 1;
        let Some(p) = parse_spec(fmt, &mut i) else {
            break;
        };
        let refs: Vec<Option<usize>> = p.refs().collect();
        let Some(first) = refs.first() else {
            // `%%` (or a character that is no conversion) takes no
            // argument and decides nothing.
            out.push(Piece::Conv(p));
            continue;
        };
        let mode = *numbered.get_or_insert(first.is_some());
        let ok = refs.iter().all(|r| match r {
            Some(n) => mode && (1..=NL_ARGMAX).contains(n),
            None => !mode,
        });
        out.push(if ok {
            Piece::Conv(p)
        } else {
            Piece::Invalid(at, i)
        });
    }
    (out, numbered == Some(true))
}

/// Formats `fmt` with the arguments of `args` (the printf family),
/// numbered arguments (`%n$`, `*m$`) included.
pub(crate) fn printf<A: ArgSource>(fmt: &[u8], args: &mut A) -> Result<Vec<u8>, A::Err> {
    let (pieces, numbered) = pieces(fmt);
    let mut args = Args {
        inner: args,
        numbered: None,
        at: 0,
    };
    if numbered {
        // Each argument's size, from the conversions that use it (the
        // larger when two disagree; one dword when none does).
        let mut size = [0usize; NL_ARGMAX];
        let mut max = 0;
        for p in &pieces {
            let Piece::Conv(p) = p else { continue };
            let mut note = |n: Option<usize>, dwords: usize| {
                if let Some(n) = n.filter(|n| (1..=NL_ARGMAX).contains(n)) {
                    size[n - 1] = size[n - 1].max(dwords);
                    max = max.max(n);
                }
            };
            if let Count::Star(m) = p.width {
                note(m, 1);
            }
            if let Count::Star(m) = p.prec {
                note(m, 1);
            }
            if p.takes_arg() {
                note(p.arg, p.arg_dwords());
            }
        }
        let mut t = Numbered {
            dwords: Vec::new(),
            start: Vec::with_capacity(max),
        };
        for s in &size[..max] {
            t.start.push(t.dwords.len());
            for _ in 0..(*s).max(1) {
                t.dwords.push(args.inner.next_u32()?);
            }
        }
        args.numbered = Some(t);
    }
    let mut out = Vec::new();
    for piece in &pieces {
        match piece {
            Piece::Text(a, b) | Piece::Invalid(a, b) => out.extend_from_slice(&fmt[*a..*b]),
            Piece::Conv(p) => {
                let mut s = p.spec;
                match p.width {
                    Count::Fixed(n) => s.width = n.min(MAX_FIELD),
                    Count::Star(m) => {
                        if let Some(m) = m {
                            args.seek(m);
                        }
                        let w = args.next_u32()? as i32;
                        if w < 0 {
                            s.left = true;
                        }
                        s.width = (w.unsigned_abs() as usize).min(MAX_FIELD);
                    }
                    Count::None => {}
                }
                match p.prec {
                    Count::Fixed(n) => s.prec = Some(n.min(MAX_FIELD)),
                    Count::Star(m) => {
                        if let Some(m) = m {
                            args.seek(m);
                        }
                        let v = args.next_u32()? as i32;
                        s.prec = (v >= 0).then(|| (v as usize).min(MAX_FIELD));
                    }
                    Count::None => {}
                }
                if let Some(n) = p.arg {
                    args.seek(n);
                }
                convert(&mut out, &s, &mut args)?;
            }
        }
        if out.len() > MAX_OUT {
            return Err(args.too_long());
        }
    }
    Ok(out)
}

fn number(fmt: &[u8], i: &mut usize) -> usize {
    let mut n: usize = 0;
    while let Some(d) = fmt.get(*i).filter(|d| d.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add(usize::from(d - b'0'));
        *i += 1;
    }
    n
}

fn convert<A: ArgSource>(out: &mut Vec<u8>, s: &Spec, args: &mut A) -> Result<(), A::Err> {
    match s.conv {
        b'%' => out.push(b'%'),
        b'd' | b'i' => {
            let v = signed_arg(s, args)?;
            let sign = if v < 0 {
                "-"
            } else if s.plus {
                "+"
            } else if s.space {
                " "
            } else {
                ""
            };
            let digits = integer_digits(v.unsigned_abs(), 10, false, s.prec);
            pad_number(out, s, sign, "", &digits);
        }
        b'u' | b'o' | b'x' | b'X' => {
            let v = unsigned_arg(s, args)?;
            let (base, upper) = match s.conv {
                b'u' => (10, false),
                b'o' => (8, false),
                b'x' => (16, false),
                _ => (16, true),
            };
            let mut digits = integer_digits(v, base, upper, s.prec);
            let mut prefix = "";
            if s.alt && v != 0 {
                match s.conv {
                    b'x' => prefix = "0x",
                    b'X' => prefix = "0X",
                    _ => {}
                }
            }
            if s.alt && s.conv == b'o' && !digits.starts_with('0') {
                digits.insert(0, '0');
            }
            pad_number(out, s, "", prefix, &digits);
        }
        b'p' => {
            let v = args.next_u32()?;
            pad(out, s, format!("{v:08X}").as_bytes());
        }
        b'c' | b'C' => {
            let v = args.next_u32()?;
            let b = if s.size == b'l' || s.conv == b'C' {
                u8::try_from(v & 0xFFFF).unwrap_or(b'?')
            } else {
                v as u8
            };
            pad(out, s, &[b]);
        }
        b's' | b'S' => {
            let addr = args.next_u32()?;
            let max = s.prec.unwrap_or(usize::MAX);
            let text = if addr == 0 {
                b"(null)"[..6.min(max)].to_vec()
            } else if s.size == b'l' || s.conv == b'S' {
                args.wstring(addr, max)?
                    .into_iter()
                    .map(|u| u8::try_from(u).unwrap_or(b'?'))
                    .collect()
            } else {
                args.string(addr, max)?
            };
            pad(out, s, &text);
        }
        b'n' => {
            let addr = args.next_u32()?;
            let size = match s.size {
                b'H' => 1,
                b'h' => 2,
                b'q' => 8,
                _ => 4,
            };
            args.store(addr, out.len() as u64, size)?;
        }
        b'e' | b'E' | b'f' | b'F' | b'g' | b'G' => {
            let v = f64::from_bits(args.next_u64()?);
            let text = float_text(v, s);
            let (sign, body) = match text.strip_prefix('-') {
                Some(b) => ("-", b.to_string()),
                None if s.plus => ("+", text),
                None if s.space => (" ", text),
                None => ("", text),
            };
            if v.is_finite() {
                pad_number(out, &Spec { prec: None, ..*s }, sign, "", &body);
            } else {
                let t = format!("{sign}{body}");
                pad(out, s, t.as_bytes());
            }
        }
        other => out.push(other),
    }
    Ok(())
}

fn signed_arg<A: ArgSource>(s: &Spec, args: &mut A) -> Result<i64, A::Err> {
    Ok(match s.size {
        b'q' => args.next_u64()? as i64,
        b'h' => i64::from(args.next_u32()? as i16),
        b'H' => i64::from(args.next_u32()? as i8),
        _ => i64::from(args.next_u32()? as i32),
    })
}

fn unsigned_arg<A: ArgSource>(s: &Spec, args: &mut A) -> Result<u64, A::Err> {
    Ok(match s.size {
        b'q' => args.next_u64()?,
        b'h' => u64::from(args.next_u32()? as u16),
        b'H' => u64::from(args.next_u32()? as u8),
        _ => u64::from(args.next_u32()?),
    })
}

/// The digits of `v` in `base`, at least `prec` of them (precision 0
/// and value 0 give none).
fn integer_digits(v: u64, base: u64, upper: bool, prec: Option<usize>) -> String {
    let mut digits = match (base, upper) {
        (8, _) => format!("{v:o}"),
        (16, false) => format!("{v:x}"),
        (16, true) => format!("{v:X}"),
        _ => v.to_string(),
    };
    if let Some(p) = prec {
        if p == 0 && v == 0 {
            digits.clear();
        }
        while digits.len() < p {
            digits.insert(0, '0');
        }
    }
    digits
}

/// A number's sign, prefix and digits padded to the width: zeros after
/// the sign and prefix with `0` (not with `-`, nor with a precision).
fn pad_number(out: &mut Vec<u8>, s: &Spec, sign: &str, prefix: &str, digits: &str) {
    let len = sign.len() + prefix.len() + digits.len();
    let fill = s.width.saturating_sub(len);
    if s.left {
        out.extend_from_slice(sign.as_bytes());
        out.extend_from_slice(prefix.as_bytes());
        out.extend_from_slice(digits.as_bytes());
        out.extend(std::iter::repeat_n(b' ', fill));
    } else if s.zero && s.prec.is_none() {
        out.extend_from_slice(sign.as_bytes());
        out.extend_from_slice(prefix.as_bytes());
        out.extend(std::iter::repeat_n(b'0', fill));
        out.extend_from_slice(digits.as_bytes());
    } else {
        out.extend(std::iter::repeat_n(b' ', fill));
        out.extend_from_slice(sign.as_bytes());
        out.extend_from_slice(prefix.as_bytes());
        out.extend_from_slice(digits.as_bytes());
    }
}

fn pad(out: &mut Vec<u8>, s: &Spec, text: &[u8]) {
    let fill = s.width.saturating_sub(text.len());
    if !s.left {
        out.extend(std::iter::repeat_n(b' ', fill));
    }
    out.extend_from_slice(text);
    if s.left {
        out.extend(std::iter::repeat_n(b' ', fill));
    }
}

/// `%e`, `%f`, `%g` of `v` (with its sign when negative).
fn float_text(v: f64, s: &Spec) -> String {
    let upper = s.conv.is_ascii_uppercase();
    if !v.is_finite() {
        let t = if v.is_nan() { "nan" } else { "inf" };
        let t = if upper {
            t.to_ascii_uppercase()
        } else {
            t.to_string()
        };
        return if v.is_sign_negative() && !v.is_nan() {
            format!("-{t}")
        } else {
            t
        };
    }
    let prec = s.prec.unwrap_or(6).min(MAX_FIELD);
    let t = match s.conv.to_ascii_lowercase() {
        b'f' => {
            let mut t = format!("{v:.prec$}");
            if s.alt && prec == 0 {
                t.push('.');
            }
            t
        }
        b'e' => exp_text(v, prec, s.alt),
        _ => {
            let p = prec.max(1);
            let x = exponent_of(v, p - 1);
            let mut t = if x < -4 || x >= p as i32 {
                exp_text(v, p - 1, s.alt)
            } else {
                let fp = (p as i32 - 1 - x).max(0) as usize;
                let mut t = format!("{v:.fp$}");
                if s.alt && fp == 0 {
                    t.push('.');
                }
                t
            };
            if !s.alt {
                t = strip_zeros(&t);
            }
            t
        }
    };
    if upper { t.to_ascii_uppercase() } else { t }
}

/// The decimal exponent `v` has when printed with `%.{prec}e`.
fn exponent_of(v: f64, prec: usize) -> i32 {
    let t = format!("{v:.prec$e}");
    t.rsplit('e')
        .next()
        .and_then(|e| e.parse().ok())
        .unwrap_or(0)
}

/// `%.{prec}e` in C's form: `d.ddde+XX`.
fn exp_text(v: f64, prec: usize, alt: bool) -> String {
    let t = format!("{v:.prec$e}");
    let (mant, exp) = t.split_once('e').unwrap_or((&t, "0"));
    let e: i32 = exp.parse().unwrap_or(0);
    let mut m = mant.to_string();
    if alt && prec == 0 {
        m.push('.');
    }
    format!(
        "{m}e{}{:02}",
        if e < 0 { '-' } else { '+' },
        e.unsigned_abs()
    )
}

/// `%g`'s removal of trailing zeros (and of a trailing point).
fn strip_zeros(t: &str) -> String {
    let (mant, exp) = match t.find('e') {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, ""),
    };
    let mant = if mant.contains('.') {
        mant.trim_end_matches('0').trim_end_matches('.')
    } else {
        mant
    };
    format!("{mant}{exp}")
}

// ---- scanf ----

/// Where the scanf family stores what it converts.
pub(crate) trait Sink {
    /// The error that ends the call (a guest fault).
    type Err;
    /// The next pointer argument.
    fn next_ptr(&mut self) -> Result<u32, Self::Err>;
    /// Store `bytes` at `addr`.
    fn put(&mut self, addr: u32, bytes: &[u8]) -> Result<(), Self::Err>;
}

/// EOF.
pub(crate) const EOF: u32 = u32::MAX;

/// Scans `input` by `fmt` (the scanf family): the number of fields
/// assigned, or [`EOF`] when the input ends before the first conversion.
pub(crate) fn scanf<S: Sink>(input: &[u8], fmt: &[u8], sink: &mut S) -> Result<u32, S::Err> {
    let mut at = 0usize;
    let mut assigned = 0u32;
    let mut converted_any = false;
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        i += 1;
        if c.is_ascii_whitespace() {
            while input.get(at).is_some_and(u8::is_ascii_whitespace) {
                at += 1;
            }
            continue;
        }
        if c != b'%' {
            if input.get(at) != Some(&c) {
                break;
            }
            at += 1;
            continue;
        }
        let suppress = fmt.get(i) == Some(&b'*');
        if suppress {
            i += 1;
        }
        let width = number(fmt, &mut i);
        let width = if width == 0 { usize::MAX } else { width };
        let mut size = 0u8;
        match fmt.get(i) {
            Some(b'h') if fmt.get(i + 1) == Some(&b'h') => {
                size = b'H';
                i += 2;
            }
            Some(b'l') if fmt.get(i + 1) == Some(&b'l') => {
                size = b'q';
                i += 2;
            }
            Some(&m @ (b'h' | b'l' | b'L' | b'q')) => {
                size = m;
                i += 1;
            }
            _ => {}
        }
        let Some(&conv) = fmt.get(i) else {
            break;
        };
        i += 1;
        if conv == b'%' {
            while input.get(at).is_some_and(u8::is_ascii_whitespace) {
                at += 1;
            }
            if input.get(at) != Some(&b'%') {
                break;
            }
            at += 1;
            continue;
        }
        if conv == b'n' {
            if !suppress {
                let p = sink.next_ptr()?;
                put_int(sink, p, at as u64, size)?;
            }
            continue;
        }
        if !matches!(conv, b'c' | b'[') {
            while input.get(at).is_some_and(u8::is_ascii_whitespace) {
                at += 1;
            }
        }
        if at >= input.len() {
            return Ok(if converted_any || assigned > 0 {
                assigned
            } else {
                EOF
            });
        }
        converted_any = true;
        let rest = &input[at..];
        let limit = width.min(rest.len());
        match conv {
            b'd' | b'i' | b'u' | b'o' | b'x' | b'X' | b'p' => {
                let base = match conv {
                    b'd' | b'u' => 10,
                    b'o' => 8,
                    b'x' | b'X' | b'p' => 16,
                    _ => 0,
                };
                let Some((v, n)) = scan_int(&rest[..limit], base) else {
                    break;
                };
                at += n;
                if !suppress {
                    let p = sink.next_ptr()?;
                    put_int(sink, p, v as u64, size)?;
                    assigned += 1;
                }
            }
            b'e' | b'E' | b'f' | b'g' | b'G' => {
                let Some((v, n)) = scan_float(&rest[..limit]) else {
                    break;
                };
                at += n;
                if !suppress {
                    let p = sink.next_ptr()?;
                    if matches!(size, b'l' | b'L') {
                        sink.put(p, &v.to_le_bytes())?;
                    } else {
                        sink.put(p, &(v as f32).to_le_bytes())?;
                    }
                    assigned += 1;
                }
            }
            b's' => {
                let n = rest[..limit]
                    .iter()
                    .take_while(|b| !b.is_ascii_whitespace())
                    .count();
                if !suppress {
                    put_string(sink, &rest[..n])?;
                    assigned += 1;
                }
                at += n;
            }
            b'c' => {
                let n = if width == usize::MAX { 1 } else { limit };
                if rest.len() < n {
                    break;
                }
                if !suppress {
                    let p = sink.next_ptr()?;
                    sink.put(p, &rest[..n])?;
                    assigned += 1;
                }
                at += n;
            }
            b'[' => {
                let (set, negate, used) = scan_set(&fmt[i..]);
                i += used;
                let n = rest[..limit]
                    .iter()
                    .take_while(|b| set.contains(b) != negate)
                    .count();
                if n == 0 {
                    break;
                }
                if !suppress {
                    put_string(sink, &rest[..n])?;
                    assigned += 1;
                }
                at += n;
            }
            _ => break,
        }
    }
    Ok(assigned)
}

/// Stores `s` and a NUL where the next pointer points.
fn put_string<S: Sink>(sink: &mut S, s: &[u8]) -> Result<(), S::Err> {
    let p = sink.next_ptr()?;
    let mut v = s.to_vec();
    v.push(0);
    sink.put(p, &v)
}

fn put_int<S: Sink>(sink: &mut S, p: u32, v: u64, size: u8) -> Result<(), S::Err> {
    match size {
        b'H' => sink.put(p, &[v as u8]),
        b'h' => sink.put(p, &(v as u16).to_le_bytes()),
        b'q' => sink.put(p, &v.to_le_bytes()),
        _ => sink.put(p, &(v as u32).to_le_bytes()),
    }
}

/// `[...]` after the `[`: the set, whether it is negated, and the
/// format bytes used (through the `]`).
fn scan_set(f: &[u8]) -> (Vec<u8>, bool, usize) {
    let mut i = 0;
    let negate = f.first() == Some(&b'^');
    if negate {
        i += 1;
    }
    let mut set = Vec::new();
    if f.get(i) == Some(&b']') {
        set.push(b']');
        i += 1;
    }
    while i < f.len() && f[i] != b']' {
        if f[i] == b'-' && !set.is_empty() && f.get(i + 1).is_some_and(|&b| b != b']') {
            let (lo, hi) = (*set.last().unwrap_or(&0), f[i + 1]);
            set.extend(lo..=hi);
            i += 2;
            continue;
        }
        set.push(f[i]);
        i += 1;
    }
    (set, negate, (i + 1).min(f.len()))
}

/// An integer as strtol reads it (`base` 0: by its prefix): the value
/// (wrapped to 64 bits) and the bytes used; `None` when there is no
/// digit.
pub(crate) fn scan_int(s: &[u8], base: u32) -> Option<(i64, usize)> {
    let mut i = 0;
    let neg = match s.first() {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut base = base;
    let hex_prefix = s.get(i) == Some(&b'0')
        && matches!(s.get(i + 1), Some(b'x' | b'X'))
        && s.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
    if (base == 16 || base == 0) && hex_prefix {
        i += 2;
        base = 16;
    } else if base == 0 {
        base = if s.get(i) == Some(&b'0') { 8 } else { 10 };
    }
    let start = i;
    let mut v: u64 = 0;
    while let Some(d) = s.get(i).and_then(|b| char::from(*b).to_digit(base)) {
        v = v.wrapping_mul(u64::from(base)).wrapping_add(u64::from(d));
        i += 1;
    }
    if i == start {
        return None;
    }
    let v = if neg {
        (v as i64).wrapping_neg()
    } else {
        v as i64
    };
    Some((v, i))
}

/// A floating-point number as strtod reads it: the value and the bytes
/// used.
pub(crate) fn scan_float(s: &[u8]) -> Option<(f64, usize)> {
    let mut i = 0;
    if matches!(s.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits_start = i;
    while s.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let mut mant = i - digits_start;
    if s.get(i) == Some(&b'.') {
        i += 1;
        let f = i;
        while s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        mant += i - f;
    }
    if mant == 0 {
        return None;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(s.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if s.get(j).is_some_and(u8::is_ascii_digit) {
            while s.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            i = j;
        }
    }
    let text = std::str::from_utf8(&s[..i]).ok()?;
    let text = text.strip_suffix('.').unwrap_or(text);
    text.parse::<f64>().ok().map(|v| (v, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments from a list; strings from a small "memory" of
    /// (address, bytes).
    struct List {
        vals: Vec<u32>,
        next: usize,
        mem: Vec<(u32, Vec<u8>)>,
        stored: Vec<(u32, u64, u32)>,
    }

    impl ArgSource for List {
        type Err = String;
        fn next_u32(&mut self) -> Result<u32, String> {
            let v = self.vals.get(self.next).copied().ok_or("no argument")?;
            self.next += 1;
            Ok(v)
        }
        fn string(&mut self, addr: u32, max: usize) -> Result<Vec<u8>, String> {
            let (_, b) = self
                .mem
                .iter()
                .find(|(a, _)| *a == addr)
                .ok_or(format!("fault at {addr:#x}"))?;
            Ok(b.iter()
                .copied()
                .take_while(|&c| c != 0)
                .take(max)
                .collect())
        }
        fn wstring(&mut self, addr: u32, max: usize) -> Result<Vec<u16>, String> {
            let (_, b) = self
                .mem
                .iter()
                .find(|(a, _)| *a == addr)
                .ok_or(format!("fault at {addr:#x}"))?;
            Ok(b.chunks(2)
                .map(|c| u16::from_le_bytes([c[0], *c.get(1).unwrap_or(&0)]))
                .take_while(|&u| u != 0)
                .take(max)
                .collect())
        }
        fn store(&mut self, addr: u32, value: u64, size: u32) -> Result<(), String> {
            self.stored.push((addr, value, size));
            Ok(())
        }
        fn too_long(&mut self) -> String {
            "too long".into()
        }
    }

    fn list(vals: &[u32]) -> List {
        List {
            vals: vals.to_vec(),
            next: 0,
            mem: vec![
                (0x1000, b"hello\0".to_vec()),
                (0x2000, b"h\0i\0\0\0".to_vec()),
            ],
            stored: Vec::new(),
        }
    }

    fn f(fmt: &str, vals: &[u32]) -> String {
        String::from_utf8(printf(fmt.as_bytes(), &mut list(vals)).unwrap()).unwrap()
    }

    fn dbl(v: f64) -> [u32; 2] {
        let b = v.to_bits();
        [b as u32, (b >> 32) as u32]
    }

    #[test]
    fn integers() {
        assert_eq!(
            f("%d|%5d|%-5d|%05d", &[42, 42, 42, 42]),
            "42|   42|42   |00042"
        );
        assert_eq!(f("%d %i %+d % d", &[(-7i32) as u32, 7, 7, 7]), "-7 7 +7  7");
        assert_eq!(
            f("%u %x %X %#x %o %#o", &[u32::MAX, 255, 255, 255, 8, 8]),
            "4294967295 ff FF 0xff 10 010"
        );
        assert_eq!(f("%.3d|%8.3d|%.0d|", &[5, 5, 0]), "005|     005||");
        assert_eq!(
            f("%hd %hu %hhx", &[0x1_FFFF, 0x1_FFFF, 0x1FF]),
            "-1 65535 ff"
        );
        assert_eq!(
            f("%lld %llx", &[0, 1, 0xFFFF_FFFF, 0xF]),
            "4294967296 fffffffff"
        );
        assert_eq!(f("%*d|%-*d|", &[4, 1, (-3i32) as u32, 2]), "   1|2  |");
        assert_eq!(f("%p", &[0x1A2B4]), "0001A2B4");
        assert_eq!(f("100%% %c%c", &[b'o' as u32, b'k' as u32]), "100% ok");
    }

    #[test]
    fn strings() {
        assert_eq!(
            f(
                "[%s] [%8s] [%-8s] [%.2s]",
                &[0x1000, 0x1000, 0x1000, 0x1000]
            ),
            "[hello] [   hello] [hello   ] [he]"
        );
        assert_eq!(f("%s", &[0]), "(null)");
        assert_eq!(f("%ls %S", &[0x2000, 0x2000]), "hi hi");
        assert!(
            printf(b"%s", &mut list(&[0x3000])).is_err(),
            "a bad pointer faults"
        );
        assert!(
            printf(b"%d %d", &mut list(&[1])).is_err(),
            "a missing argument faults"
        );
    }

    #[test]
    fn count_is_stored() {
        let mut l = list(&[0x1000, 0x5000]);
        let out = printf(b"%s%n!", &mut l).unwrap();
        assert_eq!(out, b"hello!");
        assert_eq!(l.stored, vec![(0x5000, 5, 4)]);
    }

    #[test]
    fn floats() {
        let a = dbl(1.23456);
        assert_eq!(f("%f", &a), "1.234560");
        assert_eq!(f("%.2f", &a), "1.23");
        assert_eq!(f("%8.3f|", &a), "   1.235|");
        assert_eq!(f("%e", &dbl(12345.678)), "1.234568e+04");
        assert_eq!(f("%E", &dbl(0.000123)), "1.230000E-04");
        assert_eq!(f("%g", &dbl(0.0001)), "0.0001");
        assert_eq!(f("%g", &dbl(0.00001)), "1e-05");
        assert_eq!(f("%g", &dbl(123456.0)), "123456");
        assert_eq!(f("%g", &dbl(1234567.0)), "1.23457e+06");
        assert_eq!(f("%G", &dbl(2.5)), "2.5");
        assert_eq!(f("%+.1f", &dbl(-0.25)), "-0.2");
        assert_eq!(f("%+.1f", &dbl(2.0)), "+2.0");
        assert_eq!(f("%08.2f", &dbl(-1.5)), "-0001.50");
        assert_eq!(
            f(
                "%f %F",
                &[
                    dbl(f64::INFINITY)[0],
                    dbl(f64::INFINITY)[1],
                    dbl(f64::NAN)[0],
                    dbl(f64::NAN)[1]
                ]
            ),
            "inf NAN"
        );
        assert_eq!(
            f(
                "%#.0f %#g",
                &[dbl(3.0)[0], dbl(3.0)[1], dbl(1.0)[0], dbl(1.0)[1]]
            ),
            "3. 1.00000"
        );
    }

    #[test]
    fn numbered_arguments() {
        // Arguments out of order, and one used twice.
        assert_eq!(f("%2$s %1$d %2$.2s", &[7, 0x1000]), "hello 7 he");
        // The catalog form of nmake32's banner.
        assert_eq!(
            f("Version 5.00.003 %1$s", &[0x1000]),
            "Version 5.00.003 hello"
        );
        // A 64-bit argument between two 32-bit ones: the offsets follow
        // every argument's size, whatever the order of the references.
        let d = dbl(2.5);
        assert_eq!(f("%3$d %2$.1f %1$x", &[0xAB, d[0], d[1], 9]), "9 2.5 ab");
        assert_eq!(f("%2$lld|%1$d", &[5, 0, 1]), "4294967296|5");
        // Widths and precisions from numbered arguments.
        assert_eq!(f("[%1$*2$d] [%1$-*2$d]", &[42, 5]), "[   42] [42   ]");
        assert_eq!(f("[%3$.*1$s]", &[3, 0, 0x1000]), "[hel]");
        assert_eq!(f("[%1$*2$.*3$d]", &[7, 6, 3]), "[   007]");
        assert_eq!(f("[%1$*2$d]", &[1, (-4i32) as u32]), "[1   ]");
        // `%%` mixes with either form.
        assert_eq!(f("%1$d%% %%%2$d", &[50, 3]), "50% %3");
        // %n with a numbered pointer.
        let mut l = list(&[0x1000, 0x5000]);
        assert_eq!(printf(b"%1$s%2$n.", &mut l).unwrap(), b"hello.");
        assert_eq!(l.stored, vec![(0x5000, 5, 4)]);
        // An argument no conversion uses is taken as one dword.
        assert_eq!(f("%3$d %1$d", &[1, 2, 3]), "3 1");
        // A missing argument faults, as in order.
        assert!(printf(b"%2$d", &mut list(&[1])).is_err());
    }

    #[test]
    fn numbering_rules() {
        // Mixing numbered and unnumbered references: the conversion
        // that breaks the form of the first is printed as written.
        assert_eq!(f("%1$d %d", &[4, 5]), "4 %d");
        assert_eq!(f("%d %1$d", &[4, 5]), "4 %1$d");
        assert_eq!(f("%1$*d|", &[4, 5]), "%1$*d|");
        assert_eq!(f("%*1$d|%d", &[3, 9]), "%*1$d|%d", "the width decided");
        // Out of range numbers.
        assert_eq!(f("%0$d %1$d", &[8]), "%0$d 8");
        assert_eq!(f("%1$d %100$d", &[8]), "8 %100$d");
        assert_eq!(
            f(&format!("%{NL_ARGMAX}$d"), &vec![6; NL_ARGMAX]),
            "6",
            "the last argument number allowed"
        );
        // Zero-padding is still a flag after a number that is no `$`.
        assert_eq!(f("%05d|%1$d", &[3]), "00003|%1$d");
    }

    #[test]
    fn huge_width_is_bounded() {
        let s = f("%999999999d", &[1]);
        assert_eq!(s.len(), MAX_FIELD);
        let many = "%4096d".repeat(MAX_OUT / MAX_FIELD + 1);
        let vals = vec![1; MAX_OUT / MAX_FIELD + 1];
        assert_eq!(
            printf(many.as_bytes(), &mut list(&vals)),
            Err("too long".to_string())
        );
    }

    struct Puts(Vec<u32>, Vec<(u32, Vec<u8>)>);
    impl Sink for Puts {
        type Err = String;
        fn next_ptr(&mut self) -> Result<u32, String> {
            if self.0.is_empty() {
                return Err("no argument".into());
            }
            Ok(self.0.remove(0))
        }
        fn put(&mut self, addr: u32, bytes: &[u8]) -> Result<(), String> {
            self.1.push((addr, bytes.to_vec()));
            Ok(())
        }
    }

    #[test]
    fn scanning() {
        let mut s = Puts(vec![1, 2, 3, 4], Vec::new());
        let n = scanf(b"  42 0x1F word rest", b"%d %x %s%n", &mut s).unwrap();
        assert_eq!(n, 3);
        assert_eq!(s.1[0], (1, 42u32.to_le_bytes().to_vec()));
        assert_eq!(s.1[1], (2, 31u32.to_le_bytes().to_vec()));
        assert_eq!(s.1[2], (3, b"word\0".to_vec()));
        assert_eq!(s.1[3], (4, 14u32.to_le_bytes().to_vec()));
        let mut s = Puts(vec![1, 2], Vec::new());
        assert_eq!(scanf(b"12:ab", b"%d:%[a-z]", &mut s).unwrap(), 2);
        assert_eq!(s.1[1], (2, b"ab\0".to_vec()));
        let mut s = Puts(vec![1], Vec::new());
        assert_eq!(scanf(b"   ", b"%d", &mut s).unwrap(), EOF);
        let mut s = Puts(vec![1], Vec::new());
        assert_eq!(scanf(b"x", b"%d", &mut s).unwrap(), 0, "a matching failure");
        let mut s = Puts(vec![1, 2], Vec::new());
        assert_eq!(scanf(b"2.5 -1e3", b"%f %lf", &mut s).unwrap(), 2);
        assert_eq!(s.1[0].1, 2.5f32.to_le_bytes().to_vec());
        assert_eq!(s.1[1].1, (-1000.0f64).to_le_bytes().to_vec());
        let mut s = Puts(vec![1], Vec::new());
        assert_eq!(scanf(b"123456", b"%*2d%3d", &mut s).unwrap(), 1);
        assert_eq!(s.1[0].1, 345u32.to_le_bytes().to_vec());
    }

    #[test]
    fn strtol_rules() {
        assert_eq!(scan_int(b"0x1g", 0), Some((1, 3)));
        assert_eq!(scan_int(b"017", 0), Some((15, 3)));
        assert_eq!(scan_int(b"-12z", 10), Some((-12, 3)));
        assert_eq!(scan_int(b"0x", 16), Some((0, 1)));
        assert_eq!(scan_int(b"z", 10), None);
        assert_eq!(scan_float(b"1.5e+2x"), Some((150.0, 6)));
        assert_eq!(scan_float(b"1e"), Some((1.0, 1)));
        assert_eq!(scan_float(b"."), None);
    }
}
