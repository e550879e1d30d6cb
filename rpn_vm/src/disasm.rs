//! Bytecode back to trace program text.
//!
//! The text re-assembles to the same bytes: canonical mnemonics, immediates
//! of `Push W/D` and `SetMin/SetMaj W` in hex, counts and variable indices in
//! decimal, and jumps to labels `L<offset>` placed on their targets (a jump to
//! the very end of the program keeps its numeric distance, since a label
//! must precede an instruction).

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::instr::{DecodeError, Instr, decode_all};
use crate::opcode::{Op, Operand};
use crate::source::{FileHeader, TraceProgramFile, Tracepoint};

/// The text of one instruction, with a jump's target label if it has one.
pub fn instruction_text(instr: Instr, label: Option<&str>) -> String {
    let info = instr.op.info();
    let name = info.name();
    match (info.operand, label) {
        (Operand::None, _) => name,
        (_, Some(label)) => format!("{name},{label}"),
        _ if matches!(
            instr.op,
            Op::PushW | Op::PushD | Op::SetMinW | Op::SetMajW | Op::PushOxf
        ) =>
        {
            format!("{name},0x{:X}", instr.operand)
        }
        _ => format!("{name},{}", instr.operand),
    }
}

/// Disassembles one program, one instruction per line, indented by `indent`.
///
/// # Errors
/// The byte offset and [`DecodeError`] of the first byte that does not decode.
pub fn disassemble(bytes: &[u8], indent: &str) -> Result<String, (usize, DecodeError)> {
    let decoded = decode_all(bytes)?;
    let targets: BTreeSet<usize> = decoded
        .iter()
        .filter(|(_, i)| i.op.is_jump())
        .map(|(o, i)| o + i.len() + i.operand as usize)
        .filter(|t| *t < bytes.len() && decoded.iter().any(|(o, _)| o == t))
        .collect();
    let mut out = String::new();
    for (offset, instr) in decoded {
        let label_here = targets.contains(&offset).then(|| format!("L{offset}:"));
        let target = offset + instr.len() + instr.operand as usize;
        let jump_label =
            (instr.op.is_jump() && targets.contains(&target)).then(|| format!("L{target}"));
        let text = instruction_text(instr, jump_label.as_deref());
        match label_here {
            Some(l) => writeln!(out, "{indent}{l:<7} {text}"),
            None => writeln!(out, "{indent}        {text}"),
        }
        .ok();
    }
    Ok(out)
}

/// Writes a whole trace program file back as text.
pub fn write_file(file: &TraceProgramFile) -> String {
    let mut out = header_text(&file.header);
    for tp in &file.tracepoints {
        out.push_str(&tracepoint_text(tp));
    }
    out
}

/// The text of a file's header lines (the start of [`write_file`]).
pub fn header_text(h: &FileHeader) -> String {
    let mut out = String::new();
    write_header(&mut out, h);
    out
}

/// The text of one tracepoint, from the blank line before its `minor=`
/// (a part of [`write_file`], for writers that stream a large file).
pub fn tracepoint_text(tp: &Tracepoint) -> String {
    let mut out = String::new();
    writeln!(out).ok();
    writeln!(out, "minor=0x{:X}", tp.minor).ok();
    let keys = [
        ("major", tp.major.map(u32::from)),
        ("opcode", tp.opcode.map(u32::from)),
        ("object", tp.object),
        ("offset", tp.offset),
    ];
    for (key, value) in keys {
        if let Some(v) = value {
            writeln!(out, "{key}=0x{v:X}").ok();
        }
    }
    if !tp.types.is_empty() {
        writeln!(out, "type={}", tp.types.join("+")).ok();
    }
    if let Some(g) = &tp.group {
        writeln!(out, "group={g}").ok();
    }
    // A verified program always decodes.
    out.push_str(&disassemble(tp.program.bytes(), "").unwrap_or_default());
    out
}

fn write_header(out: &mut String, h: &FileHeader) {
    let numbers = [
        ("vars", h.vars),
        ("major", h.major.map(u32::from)),
        ("hmte", h.hmte),
        ("id", h.id),
        ("logmax", h.logmax),
    ];
    for (key, value) in numbers {
        if let Some(v) = value {
            writeln!(out, "{key}={v}").ok();
        }
    }
    if let Some(name) = &h.name {
        writeln!(out, "name={name}").ok();
    }
    for (word, id) in &h.typedefs {
        writeln!(out, "typedef={word},0x{id:X}").ok();
    }
    for (word, id) in &h.groupdefs {
        writeln!(out, "groupdef={word},0x{id:X}").ok();
    }
}
