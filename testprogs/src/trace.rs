//! Trace definitions for the programs, in the two source forms os2trace
//! reads: a TSF for TRCUST (`TRACE MINOR=, TP=.symbol+n, OPCODE=0xnn, DESC=,
//! FMT=, data statements`) and a DTRACE trace program file (`major=`,
//! `name=`, then per tracepoint `minor=`, `object=`, `offset=`, `opcode=`
//! and RPN instructions). Both describe the same tracepoints at the same
//! addresses with the same logging, and record the opcode byte found
//! there, which is always the first byte of an instruction.

use std::fmt::Write as _;

use crate::link::TraceSpec;
use crate::{Symbol, Tracepoint};

/// The TSF text. `resolved[i]` is where `specs[i]` landed.
pub(crate) fn tsf(
    file_name: &str,
    major: u16,
    specs: &[TraceSpec],
    resolved: &[Tracepoint],
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "MODNAME={file_name}");
    let _ = writeln!(out, "MAJOR=0x{major:02X}");
    for (spec, tp) in specs.iter().zip(resolved) {
        let mut keywords = Vec::new();
        if spec.retep {
            keywords.push(format!("TP=.{},RETEP=RET", tp.symbol));
        } else if tp.delta == 0 {
            keywords.push(format!("TP=.{}", tp.symbol));
        } else {
            keywords.push(format!("TP=.{}+{}", tp.symbol, tp.delta));
        }
        if !spec.retep {
            keywords.push(format!("OPCODE=0x{:02X}", tp.opcode));
        }
        keywords.push(format!("DESC=\"{}\"", spec.desc));
        for f in spec.fmt {
            keywords.push(format!("FMT=\"{f}\""));
        }
        for d in spec.data {
            keywords.push((*d).to_string());
        }
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "TRACE MINOR={}, {}",
            spec.minor,
            keywords.join(",\n      ")
        );
    }
    out
}

/// The trace program file text. `{name}` in an instruction line becomes
/// the offset of symbol `name` (hex).
pub(crate) fn rpn(
    file_name: &str,
    major: u16,
    specs: &[TraceSpec],
    resolved: &[Tracepoint],
    symbols: &[Symbol],
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "; trace program for {file_name} (os2trace testprogs)");
    let _ = writeln!(out, "major=0x{major:02X}");
    let _ = writeln!(out, "name={file_name}");
    for (spec, tp) in specs.iter().zip(resolved) {
        let _ = writeln!(out);
        let _ = writeln!(out, "; {} (at {})", spec.desc, spec.at);
        let _ = writeln!(out, "minor={}", spec.minor);
        let _ = writeln!(out, "object={}", tp.object);
        let _ = writeln!(out, "offset=0x{:X}", tp.offset);
        let _ = writeln!(out, "opcode=0x{:02X}", tp.opcode);
        for line in spec.rpn {
            let _ = writeln!(out, "  {}", substitute(line, symbols));
        }
    }
    out
}

/// Replaces each `{name}` with `0x` and the hex offset of symbol `name`;
/// an unknown name is left as written (and fails to assemble).
fn substitute(line: &str, symbols: &[Symbol]) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let name = &after[..close];
                match symbols.iter().find(|s| s.name == name) {
                    Some(s) => out.push_str(&format!("0x{:X}", s.offset)),
                    None => out.push_str(&rest[open..open + close + 2]),
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}
