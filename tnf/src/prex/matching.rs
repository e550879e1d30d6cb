//! How prex matches an expr against a probe (reference §1.3, expr.c and
//! spec.c): the attribute string is split into units on `;` (not inside
//! single quotes); a unit's first blank-delimited word is the attribute,
//! the rest its values, split on blanks with `'...'` one value. `L=R`
//! matches if some unit's attribute matches L and one of its values
//! matches R; a unit without values matches once against "". An exprlist
//! is a union.

use super::parse::{Expr, Spec};

/// One `attr value...` unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// The attribute name.
    pub attr: String,
    /// The value text as written (trimmed).
    pub raw: String,
    /// The values, quotes removed.
    pub values: Vec<String>,
}

fn split_outside_quotes(s: &str, sep: impl Fn(char) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in s.chars() {
        if c == '\'' {
            quoted = !quoted;
            cur.push(c);
        } else if !quoted && sep(c) {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    out.push(cur);
    out
}

/// The units of an attribute string.
pub fn units(attrs: &str) -> Vec<Unit> {
    let mut out = Vec::new();
    for unit in split_outside_quotes(attrs, |c| c == ';') {
        let unit = unit.trim_matches([' ', '\t']);
        if unit.is_empty() {
            continue;
        }
        let (attr, rest) = match unit.find([' ', '\t']) {
            Some(i) => (&unit[..i], unit[i..].trim_matches([' ', '\t'])),
            None => (unit, ""),
        };
        let values = split_outside_quotes(rest, |c| c == ' ' || c == '\t')
            .into_iter()
            .filter(|v| !v.is_empty())
            .map(|v| v.trim_matches('\'').to_string())
            .collect();
        out.push(Unit {
            attr: attr.to_string(),
            raw: rest.to_string(),
            values,
        });
    }
    out
}

/// True if `expr` matches some unit.
pub fn expr_matches(expr: &Expr, units: &[Unit]) -> bool {
    units.iter().any(|u| {
        expr.attr.matches(&u.attr)
            && if u.values.is_empty() {
                expr.value.matches("")
            } else {
                u.values.iter().any(|v| expr.value.matches(v))
            }
    })
}

/// True if any expr matches (an empty list matches nothing).
pub fn any_matches(exprs: &[Expr], units: &[Unit]) -> bool {
    exprs.iter().any(|e| expr_matches(e, units))
}

/// The units whose attribute matches `spec`.
pub fn units_matching<'a>(
    spec: &'a Spec,
    units: &'a [Unit],
) -> impl Iterator<Item = &'a Unit> + 'a {
    units.iter().filter(move |u| spec.matches(&u.attr))
}
