//! An IBM HLL (`NB04`) writer for DBGH32, from the same description as
//! [`crate::codeview`]'s input: the layout of netlabs' Odin32 `hll.h` and
//! the symbol subrecords emxomf writes (`stabshll.c`), as
//! `tdf::debuginfo::hll` documents them (with what is inferred there).
//!
//! Written: the `NB04` header, a module record (0x0101, style `HL`,
//! version 4.0), the public symbols (0x0102), the symbol scope table (0x0104: change segment, per
//! procedure a procedure subrecord, its auto and register variables and an
//! end; the static data), and the IBM line numbers (0x010B: a file-name
//! table, then a line table, HL04 as LINK386 writes them), then the
//! directory. Stored as
//! an LX module's debug section, ending with the `NB04` trailer.

use crate::codeview::{CvModule, Var};

fn w16(b: &mut Vec<u8>, v: u16) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn w32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn name(b: &mut Vec<u8>, s: &str) {
    b.push(s.len() as u8);
    b.extend_from_slice(s.as_bytes());
}

/// A symbol subrecord: a one-byte length below 0x80, as LINK386's
/// modules have it, else two bytes with the top bit set.
fn sub(b: &mut Vec<u8>, kind: u8, body: &[u8]) {
    let len = body.len() + 1;
    if len < 0x80 {
        b.push(len as u8);
    } else {
        b.push(0x80 | (len >> 8) as u8);
        b.push(len as u8);
    }
    b.push(kind);
    b.extend_from_slice(body);
}

/// HLL primitive type of a 32-bit `int` (emxomf's `signed long`).
const HLL_LONG: u16 = 0x82;

fn symbols(m: &CvModule) -> Vec<u8> {
    let mut b = Vec::new();
    let mut body = Vec::new();
    w16(&mut body, m.segment);
    w16(&mut body, 0);
    sub(&mut b, 0x11, &body);
    for p in &m.procs {
        let mut body = Vec::new();
        w32(&mut body, p.offset);
        w16(&mut body, 0);
        w32(&mut body, p.length);
        w16(&mut body, p.debug_start as u16);
        w32(&mut body, p.debug_end);
        w16(&mut body, 0);
        body.push(if m.big { 8 } else { 0 });
        name(&mut body, p.name);
        sub(&mut b, 0x01, &body);
        for v in &p.vars {
            let mut body = Vec::new();
            match *v {
                Var::Register { name: n, reg, .. } => {
                    w16(&mut body, HLL_LONG);
                    body.push((reg - 1) as u8);
                    name(&mut body, n);
                    sub(&mut b, 0x0D, &body);
                }
                Var::BpRel {
                    name: n, offset, ..
                } => {
                    w32(&mut body, offset as u32);
                    w16(&mut body, HLL_LONG);
                    name(&mut body, n);
                    sub(&mut b, 0x04, &body);
                }
            }
        }
        sub(&mut b, 0x02, &[]);
    }
    for &(n, seg, off, _) in &m.data {
        let mut body = Vec::new();
        w32(&mut body, off);
        w16(&mut body, seg);
        w16(&mut body, HLL_LONG);
        name(&mut body, n);
        sub(&mut b, 0x05, &body);
    }
    b
}

/// The public symbols (0x0102) LINK386 writes for each module: offset
/// u32, object u16, type u16, name; here the procedures and the data.
/// IBM's TRCUST looks a procedure's name up here first (without them it
/// found only the last procedure of the symbol table).
fn publics(m: &CvModule) -> Vec<u8> {
    let mut b = Vec::new();
    for p in &m.procs {
        w32(&mut b, p.offset);
        w16(&mut b, m.segment);
        w16(&mut b, 0);
        name(&mut b, p.name);
    }
    for &(n, seg, off, _) in &m.data {
        w32(&mut b, off);
        w16(&mut b, seg);
        w16(&mut b, 0);
        name(&mut b, n);
    }
    b
}

/// The HL04 line numbers as LINK386 writes them: a file-name table
/// (type 3) first, then the line table (type 0) whose u32 is the linear
/// address of the module's code, with offsets from the module's start.
fn lines(m: &CvModule) -> Vec<u8> {
    let mut names = Vec::new();
    w32(&mut names, 0);
    w32(&mut names, 0);
    w32(&mut names, 1);
    name(&mut names, m.source);
    let mut b = Vec::new();
    w16(&mut b, 0);
    b.push(3);
    b.push(0);
    w16(&mut b, 1);
    w16(&mut b, 0);
    w32(&mut b, names.len() as u32);
    b.extend_from_slice(&names);
    w16(&mut b, 0);
    b.push(0);
    b.push(0);
    w16(&mut b, m.lines.len() as u16);
    w16(&mut b, m.segment);
    w32(&mut b, m.base);
    for &(line, offset) in &m.lines {
        w16(&mut b, line);
        w16(&mut b, 1);
        w32(&mut b, offset);
    }
    b
}

fn module(m: &CvModule) -> Vec<u8> {
    let mut b = Vec::new();
    w16(&mut b, m.segment);
    w32(&mut b, 0);
    w32(&mut b, m.code_size);
    w16(&mut b, 0);
    w16(&mut b, 0);
    b.push(1);
    b.push(0);
    b.extend_from_slice(b"HL");
    b.push(0);
    b.push(4);
    name(&mut b, m.object_name);
    b
}

/// The HLL debug information of `m`.
pub(crate) fn nb04(m: &CvModule) -> Vec<u8> {
    let mut out = b"NB04\0\0\0\0".to_vec();
    let parts = [
        (0x0101u16, module(m)),
        (0x0102, publics(m)),
        (0x0104, symbols(m)),
        (0x010B, lines(m)),
    ];
    let mut dir = Vec::new();
    for (kind, bytes) in &parts {
        w16(&mut dir, *kind);
        w16(&mut dir, 1);
        w32(&mut dir, out.len() as u32);
        w32(&mut dir, bytes.len() as u32);
        out.extend_from_slice(bytes);
    }
    let lfo = out.len() as u32;
    out[4..8].copy_from_slice(&lfo.to_le_bytes());
    w16(&mut out, 8);
    w16(&mut out, 12);
    w32(&mut out, parts.len() as u32);
    out.extend_from_slice(&dir);
    // The trailer LINK386 ends the file with (inside the debug section):
    // `NB04` and the distance from the end back to the signature. IBM's
    // TRCUST finds the information only by it.
    out.extend_from_slice(b"NB04");
    let total = out.len() as u32 + 4;
    w32(&mut out, total);
    out
}
