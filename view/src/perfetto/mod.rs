//! Exports for trace viewers: Perfetto's protobuf trace format
//! ([`to_perfetto`], encoded with prost from [`proto`]) and the Chrome
//! JSON trace-event format ([`to_chrome`]).
//!
//! Both lay the trace out the same way:
//! * one track per process (PID), and under it one track per DTO, known
//!   here by its major code (`DTO 00C2`);
//! * each record is an instant event on its DTO's track, named by its DESC
//!   (or `MAJ=00C2 MIN=0001` without a rule), with its formatted lines,
//!   decoded fields, sequence number, OS/2 time and data as arguments;
//! * each hit's cost is a slice `cost MIN=0001` of that length, beginning
//!   at the hit, when the sidecar gave it (emulated nanoseconds, so the
//!   picture is the same on any host);
//! * tracepoint hit counts are counter tracks, one per tracepoint
//!   (`hits 00C2/0001`), stepping up at each record.
//!
//! Time: the sidecar's emulated nanoseconds when every record has one,
//! else the OS/2 1/100-second time (as nanoseconds since midnight) with
//! records of the same hundredth in order.

pub mod proto;

use std::collections::BTreeMap;

use prost::Message as _;
use serde_json::{Value, json};

use crate::render::{Formatter, hex};
use crate::trace::Entry;
use proto::{
    CounterDescriptor, DebugAnnotation, ProcessDescriptor, TracePacket, TrackDescriptor,
    TrackEvent, UNIT_COUNT, event_type,
};

/// The sequence all packets are written on.
const SEQUENCE: u32 = 1;

/// Where an entry sits on the timeline.
struct Placed<'a> {
    entry: &'a Entry,
    ts: u64,
    cost: Option<u64>,
}

/// The entries with their timestamps, in nanoseconds.
fn place<'a>(entries: &[&'a Entry]) -> Vec<Placed<'a>> {
    let fine = !entries.is_empty() && entries.iter().all(|e| e.fine.is_some());
    entries
        .iter()
        .map(|e| match (fine, e.fine) {
            (true, Some(f)) => Placed {
                entry: e,
                ts: f.ns,
                cost: (f.cost_ns > 0).then_some(f.cost_ns),
            },
            _ => Placed {
                entry: e,
                ts: e.hundredths().unwrap_or(0) * 10_000_000,
                cost: None,
            },
        })
        .collect()
}

fn process_uuid(pid: u16) -> u64 {
    0x1_0000 + u64::from(pid)
}

fn dto_uuid(pid: u16, major: u8) -> u64 {
    0x2_0000_0000 + (u64::from(pid) << 8) + u64::from(major)
}

fn counter_uuid(major: u8, minor: u16) -> u64 {
    0x3_0000_0000 + (u64::from(major) << 16) + u64::from(minor)
}

fn event_name(fmt: &Formatter, e: &Entry) -> String {
    let desc = fmt.desc(e);
    if desc == "-" {
        format!("MAJ={:04X} MIN={:04X}", e.record.major, e.record.minor)
    } else {
        desc
    }
}

/// The arguments of a record's event, as (name, value) pairs.
fn arguments(fmt: &Formatter, e: &Entry) -> Vec<(String, String)> {
    let r = &e.record;
    let mut args = vec![
        ("seq".to_string(), e.seq.to_string()),
        ("major".to_string(), format!("{:04X}", r.major)),
        ("minor".to_string(), format!("{:04X}", r.minor)),
        ("os2_time".to_string(), crate::render::stamp_text(r.time)),
        ("data".to_string(), hex(&r.data)),
    ];
    if let Some(d) = fmt.decode(e) {
        for (i, l) in d.lines.iter().enumerate() {
            args.push((format!("fmt{}", i + 1), l.clone()));
        }
        for f in d.fields {
            args.push((format!("field.{}", f.name), f.value));
        }
    }
    if let Some(f) = e.fine {
        args.push(("address".to_string(), format!("{:08X}", f.address)));
        args.push(("cycle".to_string(), f.cycle.to_string()));
        args.push(("cost_cycles".to_string(), f.cost_cycles.to_string()));
    }
    args
}

fn descriptor(uuid: u64, name: String) -> TrackDescriptor {
    TrackDescriptor {
        uuid: Some(uuid),
        name: Some(name),
        process: None,
        parent_uuid: None,
        counter: None,
    }
}

fn packet(ts: Option<u64>) -> TracePacket {
    TracePacket {
        timestamp: ts,
        trusted_packet_sequence_id: Some(SEQUENCE),
        track_event: None,
        sequence_flags: None,
        track_descriptor: None,
    }
}

fn event(track: u64, kind: i32, name: Option<String>) -> TrackEvent {
    TrackEvent {
        debug_annotations: Vec::new(),
        r#type: Some(kind),
        track_uuid: Some(track),
        categories: Vec::new(),
        name,
        counter_value: None,
    }
}

/// The Perfetto trace of the entries that are kept.
pub fn perfetto_trace(entries: &[&Entry], fmt: &Formatter) -> proto::Trace {
    let placed = place(entries);
    let mut packets = Vec::new();
    // Tracks first: processes, their DTOs, the counters.
    let mut dtos: BTreeMap<u16, Vec<u8>> = BTreeMap::new();
    let mut tracepoints: BTreeMap<(u8, u16), ()> = BTreeMap::new();
    for p in &placed {
        let r = &p.entry.record;
        let majors = dtos.entry(r.pid).or_default();
        if !majors.contains(&r.major) {
            majors.push(r.major);
        }
        tracepoints.insert((r.major, r.minor), ());
    }
    for (pid, majors) in &dtos {
        let mut d = descriptor(process_uuid(*pid), format!("PID {pid:04X}"));
        d.process = Some(ProcessDescriptor {
            pid: Some(i32::from(*pid)),
            process_name: Some(format!("PID {pid:04X}")),
        });
        let mut p = packet(None);
        p.sequence_flags = Some(1);
        p.track_descriptor = Some(d);
        packets.push(p);
        for major in majors {
            let mut d = descriptor(dto_uuid(*pid, *major), format!("DTO {major:04X}"));
            d.parent_uuid = Some(process_uuid(*pid));
            let mut p = packet(None);
            p.track_descriptor = Some(d);
            packets.push(p);
        }
    }
    for (major, minor) in tracepoints.keys() {
        let mut d = descriptor(
            counter_uuid(*major, *minor),
            format!("hits {major:04X}/{minor:04X}"),
        );
        d.counter = Some(CounterDescriptor {
            unit: Some(UNIT_COUNT),
        });
        let mut p = packet(None);
        p.track_descriptor = Some(d);
        packets.push(p);
    }
    // Events in time order (stable: records of one hundredth keep theirs).
    let mut order: Vec<usize> = (0..placed.len()).collect();
    order.sort_by_key(|&i| placed[i].ts);
    let mut hits: BTreeMap<(u8, u16), i64> = BTreeMap::new();
    for i in order {
        let p = &placed[i];
        let e = p.entry;
        let r = &e.record;
        let track = dto_uuid(r.pid, r.major);
        if p.cost.is_some() {
            let mut begin = packet(Some(p.ts));
            begin.track_event = Some(event(
                track,
                event_type::SLICE_BEGIN,
                Some(format!("cost MIN={:04X}", r.minor)),
            ));
            packets.push(begin);
        }
        let mut ev = event(track, event_type::INSTANT, Some(event_name(fmt, e)));
        ev.categories.push("os2trace".to_string());
        ev.debug_annotations = arguments(fmt, e)
            .into_iter()
            .map(|(name, value)| DebugAnnotation {
                uint_value: None,
                string_value: Some(value),
                name: Some(name),
            })
            .collect();
        let mut inst = packet(Some(p.ts));
        inst.track_event = Some(ev);
        packets.push(inst);
        if let Some(cost) = p.cost {
            // A sidecar is input: its times may be anything.
            let mut end = packet(Some(p.ts.saturating_add(cost)));
            end.track_event = Some(event(track, event_type::SLICE_END, None));
            packets.push(end);
        }
        let n = hits.entry((r.major, r.minor)).or_default();
        *n += 1;
        let mut c = event(counter_uuid(r.major, r.minor), event_type::COUNTER, None);
        c.counter_value = Some(*n);
        let mut cp = packet(Some(p.ts));
        cp.track_event = Some(c);
        packets.push(cp);
    }
    proto::Trace { packet: packets }
}

/// The Perfetto protobuf bytes.
pub fn to_perfetto(entries: &[&Entry], fmt: &Formatter) -> Vec<u8> {
    perfetto_trace(entries, fmt).encode_to_vec()
}

/// The Chrome JSON trace-event document (`ts` and `dur` in microseconds).
pub fn to_chrome(entries: &[&Entry], fmt: &Formatter) -> Value {
    let placed = place(entries);
    let us = |ns: u64| ns as f64 / 1000.0;
    let mut events = Vec::new();
    let mut pids = std::collections::BTreeSet::new();
    let mut dtos = std::collections::BTreeSet::new();
    for p in &placed {
        let r = &p.entry.record;
        if pids.insert(r.pid) {
            events.push(json!({"ph": "M", "name": "process_name", "pid": r.pid,
                "args": {"name": format!("PID {:04X}", r.pid)}}));
        }
        if dtos.insert((r.pid, r.major)) {
            events.push(json!({"ph": "M", "name": "thread_name", "pid": r.pid,
                "tid": r.major, "args": {"name": format!("DTO {:04X}", r.major)}}));
        }
    }
    let mut hits: BTreeMap<(u8, u16), u64> = BTreeMap::new();
    for p in &placed {
        let e = p.entry;
        let r = &e.record;
        let args: serde_json::Map<String, Value> = arguments(fmt, e)
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        if let Some(cost) = p.cost {
            events.push(
                json!({"ph": "X", "name": format!("cost MIN={:04X}", r.minor),
                "cat": "os2trace", "pid": r.pid, "tid": r.major, "ts": us(p.ts), "dur": us(cost)}),
            );
        }
        events.push(
            json!({"ph": "i", "s": "t", "name": event_name(fmt, e), "cat": "os2trace",
            "pid": r.pid, "tid": r.major, "ts": us(p.ts), "args": args}),
        );
        let n = hits.entry((r.major, r.minor)).or_default();
        *n += 1;
        events.push(
            json!({"ph": "C", "name": format!("hits {:04X}/{:04X}", r.major, r.minor),
            "pid": r.pid, "ts": us(p.ts), "args": {"hits": *n}}),
        );
    }
    json!({"traceEvents": events, "displayTimeUnit": "ns"})
}
