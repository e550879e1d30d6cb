//! tnfdump's output (reference §1.4): the cooked default (probe lines, then
//! events sorted by time in the `Elapsed (ms) Delta (ms) PID LWPID TID CPU
//! Probe Name Data / Description` columns), `-r` (every record raw, with
//! offsets, tags, slot names and references) and `-x` (unsigned values in
//! hex). The formats are tnfdump's printf formats, rendered in Rust.

use std::fmt::Write as _;

use crate::reader::{ReadError, Record, RecordKind, TnfFile, Value};

/// The three header lines of the cooked table.
pub fn cooked_header() -> String {
    let row = |c: [&str; 8]| {
        format!(
            "{:>16} {:>16} {:>5} {:>5} {:>10} {:>3} {:<25} {}\n",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]
        )
    };
    let dashes = row([
        "----------------",
        "----------------",
        "-----",
        "-----",
        "----------",
        "---",
        "-------------------------",
        "------------------------",
    ]);
    let titles = row([
        "Elapsed (ms)",
        "Delta (ms)",
        "PID",
        "LWPID",
        "   TID    ",
        "CPU",
        "Probe Name",
        "Data / Description . . .",
    ]);
    format!("{dashes}{titles}{dashes}")
}

/// The schedule columns of an event: pid, lwpid, tid, cpu, time_base.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sched {
    pid: u64,
    lwpid: u64,
    tid: u64,
    cpu: Option<i64>,
    time_base: i64,
}

fn as_u64(v: &Value) -> u64 {
    match v {
        Value::Int(i) => *i as u64,
        Value::UInt(u) | Value::Opaque(u, _) => *u,
        _ => 0,
    }
}

fn sched(file: &TnfFile<'_>, offset: u32) -> Result<Sched, ReadError> {
    let mut s = Sched::default();
    for (name, v) in file.record_slots(offset)? {
        match name.as_str() {
            "pid" => s.pid = as_u64(&v),
            "lwpid" => s.lwpid = as_u64(&v),
            "tid" => s.tid = as_u64(&v),
            "cpuid" => s.cpu = Some(as_u64(&v) as i64),
            "time_base" => s.time_base = as_u64(&v) as i64,
            _ => {}
        }
    }
    Ok(s)
}

/// A value as the cooked output prints it.
fn cooked_value(
    file: &TnfFile<'_>,
    v: &Value,
    hex: bool,
    depth: usize,
) -> Result<String, ReadError> {
    Ok(match v {
        Value::Int(i) => i.to_string(),
        Value::UInt(u) if hex => format!("0x{u:x}"),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => format!("{f:.6}"),
        Value::Char(c) => char::from(*c).to_string(),
        Value::Opaque(u, _) => format!("0x{u:x}"),
        Value::Null => "0x0        <NULL>".to_string(),
        Value::TypeRef { name, .. } => name.clone(),
        Value::Str { text, .. } => format!("\"{text}\""),
        Value::Ref { offset, type_name } if depth < 4 => {
            let mut out = format!("{{ type: {type_name}");
            for (name, member) in file.record_slots(*offset)?.iter().skip(1) {
                write!(
                    out,
                    " {name}: {}",
                    cooked_value(file, member, hex, depth + 1)?
                )
                .ok();
            }
            out.push_str(" }");
            out
        }
        Value::Ref { offset, type_name } => format!("0x{offset:x} <{type_name}>"),
    })
}

/// A value as the raw output prints it.
fn raw_value(v: &Value, hex: bool) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::UInt(u) if hex => format!("0x{u:x}"),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => format!("{f:.6}"),
        Value::Char(c) => char::from(*c).to_string(),
        Value::Opaque(u, _) => format!("0x{u:x}"),
        Value::Null => format!("0x{:<8x} <NULL>", 0),
        Value::TypeRef { offset, name } => format!("0x{offset:<8x} {name}"),
        Value::Str { offset, text } => format!("0x{offset:<8x} \"{text}\""),
        Value::Ref { offset, type_name } => format!("0x{offset:<8x} <{type_name}>"),
    }
}

/// tnfdump's default output for one file (`-x`: unsigned in hex).
pub fn cooked(file: &TnfFile<'_>, hex: bool) -> Result<String, ReadError> {
    let mut out = String::new();
    let mut events = Vec::new();
    for r in file.records() {
        match r.kind {
            RecordKind::Type if file.type_name(r.ty) == "tnf_probe_type" => {
                out.push_str("probe\t");
                for (name, v) in file.record_slots(r.offset)? {
                    if matches!(
                        name.as_str(),
                        "tnf_tag"
                            | "tnf_properties"
                            | "tnf_slot_types"
                            | "tnf_type_size"
                            | "tnf_slot_names"
                    ) {
                        continue;
                    }
                    write!(out, " {name}: {}", cooked_value(file, &v, hex, 0)?).ok();
                }
                out.push('\n');
            }
            RecordKind::Event(e) => {
                if let Some(s) = e.sched {
                    let s = sched(file, s)?;
                    let time = s.time_base.wrapping_add(i64::from(e.time_delta));
                    events.push((time, *r, s));
                }
            }
            _ => {}
        }
    }
    events.sort_by_key(|(time, r, _)| (*time, r.offset));
    out.push_str(&cooked_header());
    let first = events.first().map(|e| e.0).unwrap_or(0);
    let mut prev = first;
    for (time, r, s) in &events {
        let elapsed = time.wrapping_sub(first) as f64 / 1e6;
        let delta = time.wrapping_sub(prev) as f64 / 1e6;
        prev = *time;
        match s.cpu {
            None => write!(
                out,
                "{elapsed:16.6} {delta:16.6} {:5} {:5} {:10} {:>3}",
                s.pid, s.lwpid, s.tid, "-"
            ),
            Some(cpu) => write!(
                out,
                "{elapsed:16.6} {delta:16.6} {:5} {:5} 0x{:<8x} {cpu:3}",
                s.pid, s.lwpid, s.tid
            ),
        }
        .ok();
        write!(out, " {:<25}", file.type_name(r.ty)).ok();
        // Slots after the tag, the tag_arg and time_delta.
        for (name, v) in file.slots(r)?.iter().skip(3) {
            write!(out, " {name}: {}", cooked_value(file, v, hex, 0)?).ok();
        }
        out.push('\n');
    }
    Ok(out)
}

/// tnfdump `-r`: every record in file order.
pub fn raw(file: &TnfFile<'_>, hex: bool) -> Result<String, ReadError> {
    let mut out = String::new();
    for r in file.records() {
        raw_record(&mut out, file, r, hex)?;
    }
    Ok(out)
}

fn raw_record(
    out: &mut String,
    file: &TnfFile<'_>,
    r: &Record,
    hex: bool,
) -> Result<(), ReadError> {
    writeln!(out, "0x{:<8x}: {{", r.offset).ok();
    for (name, v) in file.slots(r)? {
        writeln!(out, "{name:>24} {}", raw_value(&v, hex)).ok();
    }
    out.push_str("\t}\n");
    Ok(())
}
