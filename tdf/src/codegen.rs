//! RPN code generation for the TSF data statements, exactly as TRCUST
//! 3.05A compiles them (TRCUST-FORMATS.md §5.2), except that `-reg`
//! subtracts (TRCUST adds) and truncations are reported to the caller.
//!
//! * `REGS=(...)`: each run of registers of one width is pushed in reverse
//!   order and logged with one `Log DN,n` (dwords) or `Log WN,n` (words).
//! * Flat statements (MEM32, ASCIIZ32): `Push W len`, the address, the
//!   indirections, `Log MRF`/`Log ARF` (`IS`: `Push FIF; Cnvrt DXS;
//!   Log MRS/ARS`).
//! * Segmented statements (MEM, ASCIIZ): `Push W len`, the selector and
//!   offset, the indirections, `Log MRS`/`Log ARS` (`IF`: `Push SIS;
//!   Cnvrt SXD; Log MRF/ARF`).
//! * `LEN=(spec,flag)` replaces the next statement's `Push W len` by the
//!   address of spec, its indirections and `Push WIS` or `Push FIF`.
//! * `ORBIT=(mask,var)`: `Push D mask; Or V var`.
//!
//! Opcode bytes come from `rpn_vm`'s table only.

use rpn_vm::{Instr, Op};

use crate::tsf::ast::{Address, Base, DataKind, Flag, Register, Term};

fn i(op: Op) -> Instr {
    Instr::new(op)
}

fn w(op: Op, operand: u32) -> Instr {
    Instr::with(op, operand)
}

/// Notes for the caller about values that did not fit their field.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Truncation {
    /// A displacement or length was cut to 16 bits (message 143).
    pub high_word: bool,
}

fn word(n: i64, t: &mut Truncation) -> u32 {
    if !(-0x8000..=0xFFFF).contains(&n) {
        t.high_word = true;
    }
    (n as u32) & 0xFFFF
}

/// `REGS=`: runs of same-width registers, each pushed in reverse and
/// logged with one instruction.
pub fn regs(list: &[Register]) -> Vec<Instr> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < list.len() {
        let wide = list[start].wide;
        let mut end = start;
        while end < list.len() && list[end].wide == wide {
            end += 1;
        }
        for r in list[start..end].iter().rev() {
            out.push(i(r.push));
        }
        let n = (end - start) as u32;
        out.push(w(if wide { Op::LogDn } else { Op::LogWn }, n));
        start = end;
    }
    out
}

/// The code that leaves an address on the stack: a flat address (one
/// entry) or a selector and an offset (two). `sym` is the symbol's object
/// and offset when the base is a symbol.
pub fn address(
    addr: &Address,
    sym: Option<(u32, u32)>,
    flat: bool,
    t: &mut Truncation,
) -> Vec<Instr> {
    let mut out = Vec::new();
    match (&addr.base, flat) {
        (Base::Symbol { disp, .. }, true) => {
            let (object, offset) = sym.unwrap_or((0, 0));
            out.push(w(Op::PushOxf, object));
            let at = i64::from(offset) + disp;
            if at != 0 {
                out.push(w(Op::PushD, at as u32));
                out.push(i(Op::Add));
            }
        }
        (Base::Symbol { disp, .. }, false) => {
            let (object, offset) = sym.unwrap_or((0, 0));
            if object > 0xFF {
                t.high_word = true;
            }
            out.push(w(Op::PushOxs, object & 0xFF));
            out.push(w(Op::PushW, word(i64::from(offset) + disp, t)));
        }
        (Base::Flat(r), _) | (Base::Seg(r), true) => {
            out.push(i(r.push));
            for term in &addr.terms {
                match *term {
                    Term::Add(r) => out.extend([i(r.push), i(Op::Add)]),
                    Term::Sub(r) => out.extend([i(r.push), i(Op::Sub)]),
                    Term::Disp(n) => out.extend([w(Op::PushD, n as u32), i(Op::Add)]),
                }
            }
        }
        (Base::Seg(s), false) => {
            out.push(i(s.push));
            if addr.terms.is_empty() {
                out.push(w(Op::PushW, 0));
            }
            for (k, term) in addr.terms.iter().enumerate() {
                let first = k == 0;
                match *term {
                    Term::Add(r) => out.push(i(r.push)),
                    Term::Sub(r) => {
                        if first {
                            out.push(w(Op::PushW, 0));
                        }
                        out.extend([i(r.push), i(Op::Sub)]);
                        continue;
                    }
                    Term::Disp(n) => out.push(w(Op::PushW, word(n, t))),
                }
                if !first {
                    out.push(i(Op::Add));
                }
            }
        }
    }
    out
}

fn offsets(list: &[i64], flat: bool, t: &mut Truncation, out: &mut Vec<Instr>) {
    for &n in list {
        if flat {
            out.push(w(Op::PushD, n as u32));
        } else {
            out.push(w(Op::PushW, word(n, t)));
        }
        out.push(i(Op::Add));
    }
}

/// The fetches of an `INDIRECT` flag and the `±(n)` displacements of the
/// address, for flat (`Push FIF`) or segmented (`Push SIS`) pointers.
pub fn indirections(flag: &Flag, post: &[i64], flat: bool, t: &mut Truncation) -> Vec<Instr> {
    let mut out = Vec::new();
    let fetch = if flat { Op::PushFif } else { Op::PushSis };
    match flag {
        Flag::Direct => {}
        Flag::Indirect(levels) => {
            for level in levels {
                out.push(i(fetch));
                offsets(level, flat, t, &mut out);
            }
        }
        Flag::IndirectSegmented | Flag::IndirectFlat => out.push(i(fetch)),
    }
    offsets(post, flat, t, &mut out);
    out
}

/// A whole memory statement: `length` is `Push W len` or the LEN code,
/// `addr` the address code.
pub fn data(
    kind: DataKind,
    flag: &Flag,
    length: Vec<Instr>,
    addr: Vec<Instr>,
    post: &[i64],
    t: &mut Truncation,
) -> Vec<Instr> {
    let flat = kind.flat();
    let mut out = length;
    out.extend(addr);
    match (flag, flat) {
        (Flag::IndirectSegmented, true) => {
            out.push(i(Op::PushFif));
            offsets(post, true, t, &mut out);
            out.push(i(Op::CnvrtDxs));
            out.push(i(if kind.string() {
                Op::LogArs
            } else {
                Op::LogMrs
            }));
        }
        (Flag::IndirectFlat, false) => {
            out.push(i(Op::PushSis));
            offsets(post, false, t, &mut out);
            out.push(i(Op::CnvrtSxd));
            out.push(i(if kind.string() {
                Op::LogArf
            } else {
                Op::LogMrf
            }));
        }
        _ => {
            out.extend(indirections(flag, post, flat, t));
            out.push(i(match (flat, kind.string()) {
                (true, false) => Op::LogMrf,
                (true, true) => Op::LogArf,
                (false, false) => Op::LogMrs,
                (false, true) => Op::LogArs,
            }));
        }
    }
    out
}

/// `Push W len` for a constant length.
pub fn fixed_length(len: u64, t: &mut Truncation) -> Vec<Instr> {
    if len > 0xFFFF {
        t.high_word = true;
    }
    vec![w(Op::PushW, (len & 0xFFFF) as u32)]
}

/// The code of a `LEN=` statement: address, indirections, then the fetch of
/// the length word (`Push WIS`) or dword (`Push FIF`).
pub fn len_code(
    addr: Vec<Instr>,
    flag: &Flag,
    post: &[i64],
    flat: bool,
    t: &mut Truncation,
) -> Vec<Instr> {
    let mut out = addr;
    out.extend(indirections(flag, post, flat, t));
    out.push(i(if flat { Op::PushFif } else { Op::PushWis }));
    out
}

/// `ORBIT=(mask,var)`.
pub fn orbit(mask: u32, var: u16) -> Vec<Instr> {
    vec![w(Op::PushD, mask), w(Op::OrV, u32::from(var))]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tsf::ast::register;

    fn bytes(v: &[Instr]) -> Vec<u8> {
        rpn_vm::instr::encode_all(v)
    }

    fn r(n: &str) -> Register {
        register(n).unwrap()
    }

    #[test]
    fn register_runs() {
        let list: Vec<_> = ["AX", "BX", "EAX", "ECX", "DX"]
            .iter()
            .map(|n| r(n))
            .collect();
        assert_eq!(
            bytes(&regs(&list)),
            [
                0x03, 0x00, 0x14, 0x02, 0x01, 0x00, 0x21, 0x02, 0x02, 0x14, 0x01
            ]
        );
    }

    #[test]
    fn segmented_and_flat_addresses() {
        let mut t = Truncation::default();
        let a = Address {
            base: Base::Seg(r("DS")),
            terms: vec![Term::Disp(0x12345)],
            post: vec![],
        };
        let code = data(
            DataKind::Mem,
            &Flag::Direct,
            fixed_length(2, &mut t),
            address(&a, None, false, &mut t),
            &[],
            &mut t,
        );
        assert_eq!(
            bytes(&code),
            [0x10, 0x02, 0x00, 0x0B, 0x10, 0x45, 0x23, 0x15]
        );
        assert!(t.high_word);

        let mut t = Truncation::default();
        let a = Address {
            base: Base::Flat(r("ESP")),
            terms: vec![],
            post: vec![4],
        };
        let code = data(
            DataKind::Mem32,
            &Flag::Indirect(vec![vec![]]),
            fixed_length(4, &mut t),
            address(&a, None, true, &mut t),
            &a.post,
            &mut t,
        );
        assert_eq!(
            bytes(&code),
            [
                0x10, 0x04, 0x00, 0x04, 0x1C, 0x1A, 0x04, 0, 0, 0, 0x16, 0x22
            ]
        );
        assert!(!t.high_word);
    }

    #[test]
    fn minus_register_subtracts() {
        let mut t = Truncation::default();
        let a = Address {
            base: Base::Flat(r("EAX")),
            terms: vec![Term::Sub(r("EDI"))],
            post: vec![],
        };
        let code = address(&a, None, true, &mut t);
        assert_eq!(code.last().unwrap().op, Op::Sub);
    }
}
