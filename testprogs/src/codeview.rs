//! A CodeView 4 (`NB09`) writer for the programs that carry debug
//! information, as Microsoft LINK and WLINK append it to a module: the
//! `NB09` signature and the directory offset, the subsections (each
//! aligned to 4 bytes), the subsection directory, and the trailer (`NB09`
//! and the distance from the end of the file back to the signature).
//!
//! One object file (module index 1) with one code segment: `sstModule`,
//! `sstSrcModule` (one source file, one line table), `sstAlignSym`
//! (procedures `S_GPROC16`/`S_GPROC32` with their `S_REGISTER` and
//! `S_BPREL16`/`S_BPREL32` variables, each closed by `S_END`), and
//! `sstGlobalSym` (`S_GDATA16`/`S_GDATA32`). Layouts as in Microsoft's
//! public CodeView 4 headers (`cvexefmt.h`, `cvinfo.h`); tdf's reader
//! (`tdf::debuginfo`) is written separately from the same description.

/// `sstModule`.
const SST_MODULE: u16 = 0x120;
/// `sstAlignSym`.
const SST_ALIGN_SYM: u16 = 0x125;
/// `sstSrcModule`.
const SST_SRC_MODULE: u16 = 0x127;
/// `sstGlobalSym`.
const SST_GLOBAL_SYM: u16 = 0x129;

/// CodeView register numbers (`CV_REG_*`).
pub(crate) mod reg {
    /// SI.
    pub const SI: u16 = 15;
    /// ESI.
    pub const ESI: u16 = 23;
}

/// CodeView primitive type indexes.
pub(crate) mod ty {
    /// 16-bit signed (`short`).
    pub const SHORT: u16 = 0x0011;
    /// 32-bit signed int (`int4`).
    pub const INT4: u16 = 0x0074;
}

/// A variable of a procedure.
pub(crate) enum Var {
    /// In a register (`S_REGISTER`).
    Register {
        name: &'static str,
        reg: u16,
        ty: u16,
    },
    /// At (E)BP + offset (`S_BPREL16`/`S_BPREL32`).
    BpRel {
        name: &'static str,
        offset: i32,
        ty: u16,
    },
}

/// A procedure.
pub(crate) struct Proc {
    pub name: &'static str,
    pub offset: u32,
    pub length: u32,
    pub debug_start: u32,
    pub debug_end: u32,
    pub vars: Vec<Var>,
}

/// What one object file contributes.
pub(crate) struct CvModule {
    /// Object file name (`dbg16.obj`).
    pub object_name: &'static str,
    /// Source file name (`dbg16.c`).
    pub source: &'static str,
    /// The code segment (object) number and its size.
    pub segment: u16,
    pub code_size: u32,
    /// 32-bit code.
    pub big: bool,
    /// The linear address of the code (an LX object's base), which HLL
    /// line tables record.
    pub base: u32,
    /// (line, offset of its first instruction), by offset.
    pub lines: Vec<(u16, u32)>,
    pub procs: Vec<Proc>,
    /// Global data: (name, segment, offset, type).
    pub data: Vec<(&'static str, u16, u32, u16)>,
}

fn pad4(b: &mut Vec<u8>) {
    while !b.len().is_multiple_of(4) {
        b.push(0);
    }
}

fn name(b: &mut Vec<u8>, s: &str) {
    b.push(s.len() as u8);
    b.extend_from_slice(s.as_bytes());
}

fn w16(b: &mut Vec<u8>, v: u16) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn w32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}

/// Appends a symbol record (type, body), padded to 4 bytes; returns its
/// offset in `b`.
fn record(b: &mut Vec<u8>, kind: u16, body: &[u8]) -> usize {
    let at = b.len();
    let mut len = 2 + body.len();
    while !(len + 2).is_multiple_of(4) {
        len += 1;
    }
    w16(b, len as u16);
    w16(b, kind);
    b.extend_from_slice(body);
    b.resize(at + 2 + len, 0);
    at
}

fn sst_module(m: &CvModule) -> Vec<u8> {
    let mut b = Vec::new();
    w16(&mut b, 0); // overlay
    w16(&mut b, 0); // library
    w16(&mut b, 1); // segments
    b.extend_from_slice(b"CV");
    w16(&mut b, m.segment);
    w16(&mut b, 0);
    w32(&mut b, 0);
    w32(&mut b, m.code_size);
    name(&mut b, m.object_name);
    b
}

fn sst_src_module(m: &CvModule) -> Vec<u8> {
    let mut b = Vec::new();
    w16(&mut b, 1); // files
    w16(&mut b, 1); // segments
    let file_at = 4 + 4 + 8 + 4;
    w32(&mut b, file_at);
    w32(&mut b, 0);
    w32(&mut b, m.code_size.saturating_sub(1));
    w16(&mut b, m.segment);
    w16(&mut b, 0);
    // The source file.
    w16(&mut b, 1);
    w16(&mut b, 0);
    let base_at = b.len();
    w32(&mut b, 0); // patched below
    w32(&mut b, 0);
    w32(&mut b, m.code_size.saturating_sub(1));
    name(&mut b, m.source);
    pad4(&mut b);
    let table_at = b.len() as u32;
    b[base_at..base_at + 4].copy_from_slice(&table_at.to_le_bytes());
    w16(&mut b, m.segment);
    w16(&mut b, m.lines.len() as u16);
    for &(_, offset) in &m.lines {
        w32(&mut b, offset);
    }
    for &(line, _) in &m.lines {
        w16(&mut b, line);
    }
    pad4(&mut b);
    b
}

fn sst_align_sym(m: &CvModule) -> Vec<u8> {
    let mut b = Vec::new();
    w32(&mut b, 1); // CV_SIGNATURE_C7
    for p in &m.procs {
        let mut body = Vec::new();
        w32(&mut body, 0); // parent
        let end_field = body.len();
        w32(&mut body, 0); // end: patched below
        w32(&mut body, 0); // next
        if m.big {
            for v in [p.length, p.debug_start, p.debug_end, p.offset] {
                w32(&mut body, v);
            }
        } else {
            for v in [p.length, p.debug_start, p.debug_end, p.offset] {
                w16(&mut body, v as u16);
            }
        }
        w16(&mut body, m.segment);
        w16(&mut body, 0); // type
        body.push(0); // flags
        name(&mut body, p.name);
        let at = record(&mut b, if m.big { 0x0205 } else { 0x0105 }, &body);
        for v in &p.vars {
            let mut body = Vec::new();
            match *v {
                Var::Register { name: n, reg, ty } => {
                    w16(&mut body, ty);
                    w16(&mut body, reg);
                    name(&mut body, n);
                    record(&mut b, 0x0002, &body);
                }
                Var::BpRel {
                    name: n,
                    offset,
                    ty,
                } => {
                    if m.big {
                        w32(&mut body, offset as u32);
                    } else {
                        w16(&mut body, offset as u16);
                    }
                    w16(&mut body, ty);
                    name(&mut body, n);
                    record(&mut b, if m.big { 0x0200 } else { 0x0100 }, &body);
                }
            }
        }
        let end = record(&mut b, 0x0006, &[]) as u32;
        let field = at + 4 + end_field;
        b[field..field + 4].copy_from_slice(&end.to_le_bytes());
    }
    b
}

fn sst_global_sym(m: &CvModule) -> Vec<u8> {
    let mut syms = Vec::new();
    for &(n, seg, off, ty) in &m.data {
        let mut body = Vec::new();
        if m.big {
            w32(&mut body, off);
        } else {
            w16(&mut body, off as u16);
        }
        w16(&mut body, seg);
        w16(&mut body, ty);
        name(&mut body, n);
        record(&mut syms, if m.big { 0x0202 } else { 0x0102 }, &body);
    }
    let mut b = Vec::new();
    w16(&mut b, 0); // symbol hash: none
    w16(&mut b, 0); // address hash: none
    w32(&mut b, syms.len() as u32);
    w32(&mut b, 0);
    w32(&mut b, 0);
    b.extend_from_slice(&syms);
    b
}

/// The debug information of `m` in NB09 form, with its trailer, ready to
/// append to a module file (or to store as an LX module's debug section).
pub(crate) fn nb09(m: &CvModule) -> Vec<u8> {
    let mut out = b"NB09\0\0\0\0".to_vec();
    let subsections = [
        (SST_MODULE, 1u16, sst_module(m)),
        (SST_SRC_MODULE, 1, sst_src_module(m)),
        (SST_ALIGN_SYM, 1, sst_align_sym(m)),
        (SST_GLOBAL_SYM, 0xFFFF, sst_global_sym(m)),
    ];
    let mut dir = Vec::new();
    for (kind, module, bytes) in &subsections {
        pad4(&mut out);
        w16(&mut dir, *kind);
        w16(&mut dir, *module);
        w32(&mut dir, out.len() as u32);
        w32(&mut dir, bytes.len() as u32);
        out.extend_from_slice(bytes);
    }
    pad4(&mut out);
    let lfo = out.len() as u32;
    out[4..8].copy_from_slice(&lfo.to_le_bytes());
    w16(&mut out, 16);
    w16(&mut out, 12);
    w32(&mut out, subsections.len() as u32);
    w32(&mut out, 0);
    w32(&mut out, 0);
    out.extend_from_slice(&dir);
    out.extend_from_slice(b"NB09");
    let total = out.len() as u32 + 4;
    w32(&mut out, total);
    out
}
