//! Probes as TNF_PROBE_n declares them: a name, keys, a detail string, the
//! file and line, and up to five typed, named arguments; and the attribute
//! string prex matches against (reference §1.1).

use std::fmt;

/// The most arguments a probe carries (`TNF_PROBE_5`).
pub const MAX_ARGS: usize = 5;

/// The predefined argument types of TNF_PROBE(3TNF), with the sizes of an
/// ILP32 program (OS/2 16:32 and 16:16 programs alike pass 32-bit ints).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ArgType {
    /// `int`
    Int,
    /// `unsigned int`
    UInt,
    /// `long`
    Long,
    /// `unsigned long`
    ULong,
    /// `long long`
    LongLong,
    /// `unsigned long long`
    ULongLong,
    /// `float`
    Float,
    /// `double`
    Double,
    /// `char *`, logged as a string record
    String,
    /// `void *`, printed in hex
    Opaque,
    /// A pointer to a user record (TNF_DECLARE_RECORD), logged as a
    /// reference to a record of its own; the probe's [`ProbeDesc::records`]
    /// says which type, in the order of its record arguments. Not in
    /// [`ALL`](Self::ALL): it has no fixed TNF type.
    Record,
}

/// Descriptor code of [`ArgType::Record`].
pub const RECORD_CODE: u8 = 10;

impl ArgType {
    /// Every type, in the order of their codes.
    pub const ALL: [ArgType; 10] = [
        ArgType::Int,
        ArgType::UInt,
        ArgType::Long,
        ArgType::ULong,
        ArgType::LongLong,
        ArgType::ULongLong,
        ArgType::Float,
        ArgType::Double,
        ArgType::String,
        ArgType::Opaque,
    ];

    /// The type's code in a guest probe descriptor (its index in [`ALL`](Self::ALL)).
    pub fn code(self) -> u8 {
        if self == ArgType::Record {
            return RECORD_CODE;
        }
        Self::ALL.iter().position(|t| *t == self).unwrap_or(0) as u8
    }

    /// The type of a descriptor code.
    pub fn from_code(code: u8) -> Option<ArgType> {
        if code == RECORD_CODE {
            return Some(ArgType::Record);
        }
        Self::ALL.get(usize::from(code)).copied()
    }

    /// The macro spelling (`tnf_long`).
    pub fn c_name(self) -> &'static str {
        match self {
            ArgType::Int => "tnf_int",
            ArgType::UInt => "tnf_uint",
            ArgType::Long => "tnf_long",
            ArgType::ULong => "tnf_ulong",
            ArgType::LongLong => "tnf_longlong",
            ArgType::ULongLong => "tnf_ulonglong",
            ArgType::Float => "tnf_float",
            ArgType::Double => "tnf_double",
            ArgType::String => "tnf_string",
            ArgType::Opaque => "tnf_opaque",
            ArgType::Record => "tnf_record",
        }
    }

    /// The type from its macro spelling.
    pub fn from_c_name(name: &str) -> Option<ArgType> {
        Self::ALL.into_iter().find(|t| t.c_name() == name)
    }

    /// The TNF type the writer logs it as (a record's is its own type's
    /// name: [`ProbeDesc::tnf_types`]).
    pub fn tnf_type(self) -> &'static str {
        match self {
            ArgType::Int | ArgType::Long => "tnf_int32",
            ArgType::UInt | ArgType::ULong => "tnf_uint32",
            ArgType::LongLong => "tnf_int64",
            ArgType::ULongLong => "tnf_uint64",
            ArgType::Float => "tnf_float32",
            ArgType::Double => "tnf_float64",
            ArgType::String => "tnf_string",
            ArgType::Opaque => "tnf_opaque",
            ArgType::Record => "tnf_struct",
        }
    }

    /// Bytes the value takes in the event record (a string is a reference).
    pub fn slot_size(self) -> u32 {
        match self {
            ArgType::LongLong | ArgType::ULongLong | ArgType::Double => 8,
            _ => 4,
        }
    }
}

/// One argument value as the probe site passed it.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    /// A signed integer (int, long, long long).
    Int(i64),
    /// An unsigned integer (unsigned, unsigned long, unsigned long long).
    UInt(u64),
    /// A float or double.
    Float(f64),
    /// A string (cut to 255 characters when written).
    Str(Vec<u8>),
    /// A pointer.
    Opaque(u64),
    /// A user record: its members' values, in its type's order.
    Record(Vec<ArgValue>),
}

/// A user record type, as TNF_DECLARE_RECORD / TNF_DEFINE_RECORD_n
/// declare it: the TNF type name and up to five typed, named members of
/// the predefined types (no nested records).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RecordType {
    /// The TNF type name (`node_tnf`).
    pub name: String,
    /// The members' types and names.
    pub members: Vec<(ArgType, String)>,
}

/// A probe as compiled into a program: what TNF_PROBE_n declares.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProbeDesc {
    /// The probe name (a C identifier).
    pub name: String,
    /// Space-separated keys (groups).
    pub keys: String,
    /// The detail string (`attr value; ...`).
    pub detail: String,
    /// The source file.
    pub file: String,
    /// The source line.
    pub line: u32,
    /// The arguments' types and names.
    pub args: Vec<(ArgType, String)>,
    /// True for TNF_PROBE_n_DEBUG probes (`debug;` before the detail).
    pub debug: bool,
    /// The record types of the [`ArgType::Record`] arguments, in order.
    pub records: Vec<RecordType>,
}

/// Why a probe declaration is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// The name is not a C identifier.
    #[error("probe name {0:?} is not a C identifier")]
    BadName(String),
    /// An argument name is not a C identifier.
    #[error("argument name {0:?} is not a C identifier")]
    BadArgName(String),
    /// Keys hold `;`, `'` or `=`.
    #[error("keys {0:?} contain ';', quote or '='")]
    BadKeys(String),
    /// More than five arguments.
    #[error("{0} arguments (TNF_PROBE_5 is the most)")]
    TooManyArgs(usize),
    /// A string holds a NUL or a newline.
    #[error("{0} holds a NUL or a newline")]
    BadText(&'static str),
    /// Record arguments and record types do not pair up, or a record type
    /// is malformed.
    #[error("record type: {0}")]
    BadRecord(String),
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl ProbeDesc {
    /// Checks what the C macro would refuse at compile time.
    pub fn validate(&self) -> Result<(), ProbeError> {
        if !is_ident(&self.name) {
            return Err(ProbeError::BadName(self.name.clone()));
        }
        if self.keys.contains([';', '\'', '=']) {
            return Err(ProbeError::BadKeys(self.keys.clone()));
        }
        if self.args.len() > MAX_ARGS {
            return Err(ProbeError::TooManyArgs(self.args.len()));
        }
        for (_, n) in &self.args {
            if !is_ident(n) {
                return Err(ProbeError::BadArgName(n.clone()));
            }
        }
        let record_args = self
            .args
            .iter()
            .filter(|(t, _)| *t == ArgType::Record)
            .count();
        if record_args != self.records.len() {
            return Err(ProbeError::BadRecord(format!(
                "{record_args} record arguments but {} record types",
                self.records.len()
            )));
        }
        for r in &self.records {
            if !is_ident(&r.name) {
                return Err(ProbeError::BadRecord(format!(
                    "{:?} is not a C identifier",
                    r.name
                )));
            }
            if r.members.is_empty() || r.members.len() > MAX_ARGS {
                return Err(ProbeError::BadRecord(format!(
                    "{} has {} members (1 to 5)",
                    r.name,
                    r.members.len()
                )));
            }
            for (t, n) in &r.members {
                if *t == ArgType::Record {
                    return Err(ProbeError::BadRecord(format!(
                        "{}.{n} is a record (records do not nest)",
                        r.name
                    )));
                }
                if !is_ident(n) {
                    return Err(ProbeError::BadRecord(format!(
                        "member {n:?} of {} is not a C identifier",
                        r.name
                    )));
                }
            }
        }
        for (what, s) in [
            ("keys", &self.keys),
            ("detail", &self.detail),
            ("file", &self.file),
        ] {
            if s.contains(['\0', '\n']) {
                return Err(ProbeError::BadText(what));
            }
        }
        Ok(())
    }

    /// The TNF type of each argument slot (a record's own type name).
    pub fn tnf_types(&self) -> Vec<&str> {
        let mut records = self.records.iter();
        self.args
            .iter()
            .map(|(t, _)| match t {
                ArgType::Record => records.next().map_or("tnf_struct", |r| r.name.as_str()),
                t => t.tnf_type(),
            })
            .collect()
    }

    /// The record type of argument `index`, if it is a record.
    pub fn record_of(&self, index: usize) -> Option<&RecordType> {
        if self.args.get(index)?.0 != ArgType::Record {
            return None;
        }
        let k = self.args[..index]
            .iter()
            .filter(|(t, _)| *t == ArgType::Record)
            .count();
        self.records.get(k)
    }

    /// The detail as the macro stores it (`debug;` first for debug probes).
    pub fn full_detail(&self) -> String {
        if self.debug {
            format!("debug;{}", self.detail)
        } else {
            self.detail.clone()
        }
    }

    /// The attribute string the macro builds at compile time:
    /// `name N;slots a b ;keys K;file F;line L;DETAIL`.
    pub fn attributes(&self) -> String {
        let mut slots = String::new();
        for (_, n) in &self.args {
            slots.push_str(n);
            slots.push(' ');
        }
        format!(
            "name {};slots {};keys {};file {};line {};{}",
            self.name,
            slots,
            self.keys,
            self.file,
            self.line,
            self.full_detail()
        )
    }

    /// The string of the probe type record, what tnfdump prints as
    /// `tnf_string`: the attributes after `slots ...;`.
    pub fn type_string(&self) -> String {
        format!(
            "keys {};file {};line {};{}",
            self.keys,
            self.file,
            self.line,
            self.full_detail()
        )
    }
}

impl fmt::Display for ProbeDesc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.attributes())
    }
}

/// The line the `&debug` function writes to stderr when a probe fires
/// (debug_funcs.c): `probe <name>; sunw%debug "<v>"; arg=<value>; ...`.
pub fn debug_line(desc: &ProbeDesc, args: &[ArgValue]) -> String {
    use std::fmt::Write as _;
    let mut out = format!("probe {}; ", desc.name);
    let detail = crate::prex::matching::units(&desc.detail);
    if let Some(u) = detail.iter().find(|u| u.attr == "sunw%debug") {
        write!(out, "sunw%debug \"{}\"; ", u.raw.trim_matches('\'')).ok();
    }
    for (i, ((ty, name), v)) in desc.args.iter().zip(args).enumerate() {
        let text = debug_value(*ty, v, desc.record_of(i));
        write!(out, "{name}={text}; ").ok();
    }
    out.trim_end().to_string()
}

/// One value as `&debug` prints it; a record (our decision: debug_funcs.c
/// prints no records) as `{ type: T member=value; ... }`.
fn debug_value(ty: ArgType, v: &ArgValue, record: Option<&RecordType>) -> String {
    match (ty, v) {
        (_, ArgValue::Record(values)) => {
            let mut t = format!("{{ type: {}", record.map_or("?", |r| r.name.as_str()));
            let members = record.map(|r| r.members.as_slice()).unwrap_or_default();
            for ((mty, mname), m) in members.iter().zip(values) {
                t.push_str(&format!(" {mname}={};", debug_value(*mty, m, None)));
            }
            t.push_str(" }");
            t
        }
        (_, ArgValue::Str(s)) => format!("\"{}\"", String::from_utf8_lossy(s)),
        (ArgType::Opaque, ArgValue::Opaque(u) | ArgValue::UInt(u)) => format!("0x{u:x}"),
        (ArgType::Float | ArgType::Double, ArgValue::Float(f)) => format!("{f:.6}"),
        (_, ArgValue::Int(i)) => i.to_string(),
        (_, ArgValue::UInt(u) | ArgValue::Opaque(u)) => u.to_string(),
        (_, ArgValue::Float(f)) => format!("{f:.6}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_line_as_the_man_page_shows() {
        let d = ProbeDesc {
            name: "input_values".into(),
            keys: "input".into(),
            detail: "sunw%debug 'have read input values successfully'".into(),
            file: "t.c".into(),
            line: 1,
            args: vec![
                (ArgType::Int, "int_input".into()),
                (ArgType::String, "string_input".into()),
            ],
            debug: false,
            records: Vec::new(),
        };
        assert_eq!(
            debug_line(
                &d,
                &[ArgValue::Int(100), ArgValue::Str(b"success".to_vec())]
            ),
            "probe input_values; sunw%debug \"have read input values successfully\"; int_input=100; string_input=\"success\";"
        );
        assert_eq!(
            d.attributes(),
            "name input_values;slots int_input string_input ;keys input;file t.c;line 1;sunw%debug 'have read input values successfully'"
        );
    }
}
