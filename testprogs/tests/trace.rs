//! The TSF and trace program files: their tracepoints land on instruction
//! boundaries of named routines, record the byte there, and agree with
//! each other.

mod common;

use common::decode_all;
use testprogs::Program;

fn all() -> Vec<Program> {
    testprogs::all().expect("every program builds")
}

/// One TRACE statement of a TSF, as far as the tests need it.
#[derive(Debug)]
struct TsfTrace {
    minor: u16,
    symbol: String,
    delta: u32,
    /// Absent with RETEP.
    opcode: Option<u8>,
    /// `TP=.symbol,RETEP=RET`.
    retep: bool,
}

/// Reads MODNAME, MAJOR and the TRACE statements' MINOR, TP and OPCODE
/// keywords (statements continue over lines after a trailing comma).
fn read_tsf(text: &str) -> (String, u16, Vec<TsfTrace>) {
    let mut modname = String::new();
    let mut major = 0;
    let mut traces = Vec::new();
    let mut statements: Vec<String> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        match statements.last_mut() {
            Some(last) if last.trim_end().ends_with(',') => last.push_str(t),
            _ => statements.push(t.to_string()),
        }
    }
    for s in statements {
        if let Some(v) = s.strip_prefix("MODNAME=") {
            modname = v.to_string();
        } else if let Some(v) = s.strip_prefix("MAJOR=0x") {
            major = u16::from_str_radix(v, 16).unwrap();
        } else if let Some(rest) = s.strip_prefix("TRACE ") {
            let mut minor = None;
            let mut tp = None;
            let mut opcode = None;
            let mut retep = false;
            // DESC and FMT strings hold no commas in these files.
            for kw in rest.split(',') {
                let kw = kw.trim();
                if let Some(v) = kw.strip_prefix("MINOR=") {
                    minor = Some(v.parse().unwrap());
                } else if let Some(v) = kw.strip_prefix("TP=.") {
                    tp = Some(match v.split_once('+') {
                        Some((s, d)) => (s.to_string(), d.parse().unwrap()),
                        None => (v.to_string(), 0),
                    });
                } else if let Some(v) = kw.strip_prefix("OPCODE=0x") {
                    opcode = Some(u8::from_str_radix(v, 16).unwrap());
                } else if kw == "RETEP=RET" {
                    retep = true;
                }
            }
            let (symbol, delta) = tp.expect("TP=");
            traces.push(TsfTrace {
                minor: minor.expect("MINOR="),
                symbol,
                delta,
                opcode,
                retep,
            });
        } else {
            panic!("unexpected TSF statement {s:?}");
        }
    }
    (modname, major, traces)
}

fn on_boundary(p: &Program, object: u16, offset: u32) -> bool {
    decode_all(&p.module, object)
        .iter()
        .any(|(ip, _)| *ip == offset)
}

#[test]
fn tsf_tracepoints_resolve_through_the_map_to_instruction_starts() {
    for p in all() {
        let (modname, major, traces) = read_tsf(&p.tsf);
        assert_eq!(modname, p.file_name);
        assert_eq!(major, p.major);
        assert_eq!(traces.len(), p.tracepoints.len(), "{}", p.name);
        let map = loader::map::parse(&p.map).unwrap();
        for (t, tp) in traces.iter().zip(&p.tracepoints) {
            let s = map
                .lookup(&t.symbol)
                .unwrap_or_else(|| panic!("{}: {} not in the MAP", p.name, t.symbol));
            assert_eq!(t.retep, tp.retep, "{}: minor {}", p.name, t.minor);
            if t.retep {
                // The routine's return point: its last instruction, a RET,
                // before the next public symbol of the object.
                check_return_point(&p, &map, s, tp);
                continue;
            }
            assert!(
                t.opcode.is_some(),
                "{}: minor {} has no OPCODE=",
                p.name,
                t.minor
            );
            let offset = s.offset + t.delta;
            assert_eq!(
                (t.minor, s.object, offset),
                (tp.minor, tp.object, tp.offset)
            );
            assert!(
                on_boundary(&p, s.object, offset),
                "{}: minor {} at {}:{offset:#x} is mid-instruction",
                p.name,
                t.minor,
                s.object
            );
            let byte = p.module.byte_at(loader::Address {
                object: s.object,
                offset,
            });
            assert_eq!(byte, t.opcode, "{}: minor {}", p.name, t.minor);
        }
        let mut minors: Vec<u16> = traces.iter().map(|t| t.minor).collect();
        minors.sort();
        minors.dedup();
        assert_eq!(minors.len(), traces.len(), "{}: duplicate minor", p.name);
    }
}

/// A RETEP tracepoint is the last instruction of its routine, a RET.
fn check_return_point(
    p: &Program,
    map: &loader::map::MapFile,
    routine: &loader::map::Symbol,
    tp: &testprogs::Tracepoint,
) {
    let end = map
        .symbol_size(routine)
        .map(|n| routine.offset + n)
        .expect("a routine with RETEP has a symbol after it");
    let code = decode_all(&p.module, routine.object);
    let (last, i) = code
        .iter()
        .rfind(|(ip, _)| *ip >= routine.offset && *ip < end)
        .unwrap();
    assert_eq!(i.mnemonic(), iced_x86::Mnemonic::Ret, "{}", p.name);
    assert_eq!((tp.object, tp.offset), (routine.object, *last));
    assert_eq!(tp.delta, tp.offset - routine.offset);
    assert_eq!(tp.opcode, 0xC3);
}

#[test]
fn trace_programs_assemble_and_match_the_tracepoints() {
    for p in all() {
        let file =
            rpn_vm::source::parse(&p.rpn_file_name(), &p.rpn).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(file.header.major, Some(p.major));
        assert_eq!(file.header.name.as_deref(), Some(p.file_name));
        assert_eq!(file.tracepoints.len(), p.tracepoints.len());
        for (t, tp) in file.tracepoints.iter().zip(&p.tracepoints) {
            assert_eq!(t.minor, tp.minor);
            assert_eq!(t.object, Some(u32::from(tp.object)), "{}", p.name);
            assert_eq!(t.offset, Some(tp.offset), "{}", p.name);
            assert_eq!(t.opcode, Some(tp.opcode), "{}", p.name);
            assert!(on_boundary(&p, tp.object, tp.offset));
            let i = common::instruction_at(&p.module, tp.object, tp.offset).unwrap();
            let first = p.module.object_bytes(tp.object).unwrap()[tp.offset as usize];
            assert_eq!(first, tp.opcode, "{}: {i}", p.name);
            assert!(!t.program.is_empty());
            // Every program logs something.
            assert!(
                t.program
                    .instructions()
                    .any(|(_, i)| i.op.info().mnemonic == "Log"),
                "{}: minor {} logs nothing",
                p.name,
                t.minor
            );
        }
    }
}

/// Tracepoints at a label that is not public are named by the public
/// symbol before it plus a distance.
#[test]
fn local_labels_are_named_from_the_public_before_them() {
    let p = testprogs::tpdll16().unwrap();
    let tp = p.tracepoints.iter().find(|t| t.minor == 3).unwrap();
    assert_eq!(tp.label, "putmsg_doswrite");
    assert_eq!(tp.symbol, "PUTMSG");
    let putmsg = p.symbol("PUTMSG").unwrap();
    assert_eq!(tp.offset, putmsg.offset + tp.delta);
    assert!(tp.delta > 0);
    assert!(p.tsf.contains(&format!("TP=.PUTMSG+{}", tp.delta)));
    assert_eq!(tp.opcode, 0x9A, "the DosWrite call");
}

/// `{symbol}` placeholders in the trace programs become offsets.
#[test]
fn symbol_offsets_are_substituted_in_trace_programs() {
    let p = testprogs::farcal16().unwrap();
    let fntab = p.symbol("fntab").unwrap().offset;
    assert!(p.rpn.contains(&format!("Push W,0x{fntab:X}")));
    assert!(!p.rpn.contains('{'));
}

#[test]
fn retep_tracepoints_name_the_routine() {
    let p = testprogs::tpdll32().unwrap();
    let retep: Vec<&str> = p
        .tracepoints
        .iter()
        .filter(|t| t.retep)
        .map(|t| t.symbol.as_str())
        .collect();
    assert_eq!(retep, ["AddNums", "PutMsg"]);
    assert!(p.tsf.contains("TP=.AddNums,RETEP=RET"));
    assert!(p.tsf.contains("TP=.PutMsg,RETEP=RET"));
}
