//! Shared helpers: probes, written events and reading them back.

#![allow(dead_code)]

use proptest::prelude::*;
use tnf::reader::{RecordKind, Value};
use tnf::{ArgType, ArgValue, ProbeDesc, TnfFile};

/// Any value of a predefined scalar type (no NaN, which does not compare
/// equal to itself); strings of 0 to `max_string` non-NUL bytes.
pub fn value_for(ty: ArgType, max_string: usize) -> BoxedStrategy<ArgValue> {
    match ty {
        ArgType::Int | ArgType::Long => any::<i32>().prop_map(|v| ArgValue::Int(v.into())).boxed(),
        ArgType::LongLong => any::<i64>().prop_map(ArgValue::Int).boxed(),
        ArgType::UInt | ArgType::ULong => {
            any::<u32>().prop_map(|v| ArgValue::UInt(v.into())).boxed()
        }
        ArgType::ULongLong => any::<u64>().prop_map(ArgValue::UInt).boxed(),
        ArgType::Float => any::<f32>()
            .prop_filter("not NaN", |f| !f.is_nan())
            .prop_map(|v| ArgValue::Float(v.into()))
            .boxed(),
        ArgType::Double => any::<f64>()
            .prop_filter("not NaN", |f| !f.is_nan())
            .prop_map(ArgValue::Float)
            .boxed(),
        ArgType::Opaque => any::<u32>()
            .prop_map(|v| ArgValue::Opaque(v.into()))
            .boxed(),
        ArgType::String => prop::collection::vec(1u8..128, 0..max_string)
            .prop_map(ArgValue::Str)
            .boxed(),
        // Not in ArgType::ALL; records have tests of their own.
        ArgType::Record => unreachable!("records are not generated as values"),
    }
}

/// A probe with these argument types, named a0, a1, ...
pub fn probe(name: &str, types: &[ArgType]) -> ProbeDesc {
    ProbeDesc {
        name: name.to_string(),
        keys: format!("k{} all", name.len()),
        detail: String::new(),
        file: "t.c".into(),
        line: 7,
        args: types
            .iter()
            .enumerate()
            .map(|(i, t)| (*t, format!("a{i}")))
            .collect(),
        debug: false,
        records: Vec::new(),
    }
}

/// One event as read back: probe name, (pid, lwpid, tid), time, values.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadEvent {
    pub probe: String,
    pub thread: (u64, u64, u64),
    pub time: i64,
    pub values: Vec<Value>,
}

fn num(v: &Value) -> u64 {
    match v {
        Value::Int(i) => *i as u64,
        Value::UInt(u) => *u,
        _ => u64::MAX,
    }
}

/// Every event in time order.
pub fn events(file: &TnfFile<'_>) -> Vec<ReadEvent> {
    let mut out = Vec::new();
    for r in file.records() {
        let RecordKind::Event(e) = r.kind else {
            continue;
        };
        let sched = file
            .record_slots(
                e.sched
                    .expect("our writer keeps the schedule record in the event's block"),
            )
            .unwrap();
        let get = |n: &str| {
            sched
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| num(v))
                .unwrap()
        };
        let slots = file.slots(r).unwrap();
        out.push(ReadEvent {
            probe: file.type_name(r.ty),
            thread: (get("pid"), get("lwpid"), get("tid")),
            time: get("time_base") as i64 + i64::from(e.time_delta),
            values: slots.into_iter().skip(3).map(|(_, v)| v).collect(),
        });
    }
    out.sort_by_key(|e| e.time);
    out
}

/// What the reader should give back for a written value.
pub fn expected(ty: ArgType, v: &ArgValue) -> Value {
    match (ty, v) {
        (ArgType::Int | ArgType::Long, ArgValue::Int(i)) => Value::Int(i64::from(*i as i32)),
        (ArgType::UInt | ArgType::ULong, ArgValue::UInt(u)) => Value::UInt(u64::from(*u as u32)),
        (ArgType::LongLong, ArgValue::Int(i)) => Value::Int(*i),
        (ArgType::ULongLong, ArgValue::UInt(u)) => Value::UInt(*u),
        (ArgType::Float, ArgValue::Float(f)) => Value::Float(f64::from(*f as f32)),
        (ArgType::Double, ArgValue::Float(f)) => Value::Float(*f),
        (ArgType::Opaque, ArgValue::Opaque(u)) => Value::Opaque(u64::from(*u as u32), 4),
        (ArgType::String, ArgValue::Str(s)) => {
            let s = &s[..s.len().min(255)];
            Value::Str {
                offset: 0,
                text: String::from_utf8_lossy(s).into_owned(),
            }
        }
        _ => panic!("generator made {ty:?} with {v:?}"),
    }
}

/// Values equal, string offsets ignored; a NULL string allowed when `dangling_ok`.
pub fn same(read: &Value, want: &Value, dangling_ok: bool) -> bool {
    match (read, want) {
        (Value::Str { text: a, .. }, Value::Str { text: b, .. }) => a == b,
        (Value::Null, Value::Str { .. }) => dangling_ok,
        (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
        _ => read == want,
    }
}
