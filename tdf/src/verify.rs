//! Checks a TDF against the module it is for (`os2trace tdf verify`),
//! beyond TRCUST, which checked one opcode byte:
//!
//! * the object exists and the offset lies inside it;
//! * the offset is on an instruction boundary, decoded with iced-x86 from
//!   the start of the containing MAP symbol (or of the object when there is
//!   no MAP), 16- or 32-bit after the object;
//! * the opcode recorded in the TDF is the module's byte there;
//! * the instruction can be traced (not 9C CC CD CE 62 69 6B F6 F7);
//! * no two tracepoints share an address;
//! * the RPN program passes `rpn_vm`'s verifier (opcodes, 16-entry stack,
//!   255 bytes, variables within the TDF's count).

use std::collections::HashMap;

use iced_x86::{Decoder, DecoderOptions};
use rpn_vm::Program;

use crate::compile::trace_untraceable;
use crate::definition::Tdf;
use crate::target::{ModuleImage, SymbolTable};

/// One problem with one tracepoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Minor code of the tracepoint.
    pub minor: u16,
    /// Its object.
    pub object: u32,
    /// Its offset.
    pub offset: u32,
    /// What is wrong.
    pub text: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "minor {:04X} at {:04X}:{:08X}: {}",
            self.minor, self.object, self.offset, self.text
        )
    }
}

/// Whether `offset` starts an instruction when `code` (object bytes from
/// `start`) is decoded from `start`.
pub fn on_boundary(code: &[u8], start: u32, offset: u32, big: bool) -> bool {
    if offset < start {
        return false;
    }
    let mut d = Decoder::with_ip(
        if big { 32 } else { 16 },
        code,
        u64::from(start),
        DecoderOptions::NONE,
    );
    while d.can_decode() {
        let ip = d.ip();
        if ip == u64::from(offset) {
            return true;
        }
        if ip > u64::from(offset) {
            return false;
        }
        let _ = d.decode();
    }
    d.ip() == u64::from(offset)
}

/// The instruction starts of one stretch of code, decoded once: a module
/// with many tracepoints in one routine (or, without a MAP, one object)
/// is not decoded again for each of them.
struct Starts {
    ips: Vec<u32>,
    end: u64,
}

impl Starts {
    fn decode(code: &[u8], start: u32, big: bool) -> Starts {
        let mut d = Decoder::with_ip(
            if big { 32 } else { 16 },
            code,
            u64::from(start),
            DecoderOptions::NONE,
        );
        let mut ips = Vec::new();
        while d.can_decode() {
            ips.push(d.ip() as u32);
            let _ = d.decode();
        }
        Starts { ips, end: d.ip() }
    }

    /// As [`on_boundary`] over the same bytes.
    fn contains(&self, offset: u32) -> bool {
        self.ips.binary_search(&offset).is_ok() || self.end == u64::from(offset)
    }
}

/// Where a tracepoint's boundary is decoded from: object, start, 32-bit.
type Stretch = (u32, u32, bool);

/// Every problem of `tdf` against `image` (and its MAP symbols), in record
/// order. Linear in the records and the code: each stretch (MAP symbol,
/// or object) is decoded once, up to its last tracepoint.
pub fn verify(tdf: &Tdf, image: &dyn ModuleImage, map: Option<&SymbolTable>) -> Vec<Problem> {
    let stretch = |object: u32, offset: u32| -> Stretch {
        let start = map
            .and_then(|m| m.containing(object, offset))
            .map_or(0, |(s, _)| s.offset);
        (object, start, image.is_32bit(object) != Some(false))
    };
    // Pass 1: how far each stretch must be decoded.
    let mut reach: HashMap<Stretch, usize> = HashMap::new();
    for r in &tdf.records {
        if image
            .object_size(r.object)
            .is_some_and(|size| r.offset < size)
        {
            let len = image.object_bytes(r.object).map_or(0, <[u8]>::len);
            let to = (r.offset as usize + 16).min(len);
            let e = reach.entry(stretch(r.object, r.offset)).or_insert(0);
            *e = (*e).max(to);
        }
    }
    let starts: HashMap<Stretch, Starts> = reach
        .into_iter()
        .map(|(key @ (object, start, big), to)| {
            let bytes = image.object_bytes(object).unwrap_or(&[]);
            let from = (start as usize).min(bytes.len());
            (key, Starts::decode(&bytes[from..to.max(from)], start, big))
        })
        .collect();
    let mut problems = Vec::new();
    let mut seen: HashMap<(u32, u32), u16> = HashMap::new();
    for r in &tdf.records {
        let mut p = |text: String| {
            problems.push(Problem {
                minor: r.minor,
                object: r.object,
                offset: r.offset,
                text,
            });
        };
        if let Some(&first) = seen.get(&(r.object, r.offset)) {
            p(format!("same address as minor {first:04X}"));
        }
        seen.insert((r.object, r.offset), r.minor);
        if let Err(e) = Program::load(&r.rpn, tdf.vars.len() as u32) {
            p(format!("RPN program rejected: {e}"));
        }
        let Some(size) = image.object_size(r.object) else {
            p(format!(
                "object {} does not exist (the module has {})",
                r.object,
                image.object_count()
            ));
            continue;
        };
        if r.offset >= size {
            p(format!(
                "offset is past the end of the object ({size:#x} bytes)"
            ));
            continue;
        }
        let byte = image.byte_at(r.object, r.offset).unwrap_or(0);
        if byte != r.opcode {
            p(format!(
                "recorded opcode {:02X}, the module has {byte:02X}",
                r.opcode
            ));
        }
        if trace_untraceable(byte) {
            p(format!("opcode {byte:02X} cannot be traced"));
        }
        let key = stretch(r.object, r.offset);
        let on = r.offset >= key.1 && starts.get(&key).is_some_and(|s| s.contains(r.offset));
        if !on {
            p(format!(
                "not on an instruction boundary (decoding from {:04X}:{:08X})",
                r.object, key.1
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::TdfRecord;
    use crate::target::MemoryImage;

    const CODE: [u8; 18] = [
        0x68, 0x00, 0x00, 0x01, 0x00, 0x6A, 0x28, 0x6A, 0x01, 0xE8, 0, 0, 0, 0, 0x83, 0xC4, 0x0C,
        0xC3,
    ];

    fn rec(minor: u16, offset: u32, opcode: u8) -> TdfRecord {
        TdfRecord {
            type_mask: 0,
            group: 0,
            object: 2,
            offset,
            minor,
            major: 1,
            opcode,
            pad: 0,
            rpn: vec![0x00, 0x21, 0x01],
        }
    }

    #[test]
    fn finds_each_problem() {
        let image = MemoryImage {
            objects: vec![(vec![0xCC], true), (CODE.to_vec(), true)],
            sizes: vec![],
            debug: None,
        };
        let mut tdf = Tdf {
            records: vec![
                rec(1, 0, 0x68),
                rec(2, 1, 0x00),
                rec(3, 5, 0x6B),
                rec(4, 5, 0x6A),
                rec(5, 0x40, 0),
                TdfRecord {
                    object: 1,
                    ..rec(6, 0, 0xCC)
                },
            ],
            ..Tdf::default()
        };
        tdf.records[0].rpn = vec![0x30];
        let problems = verify(&tdf, &image, None);
        let texts: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(texts.len(), 6, "{texts:#?}");
        assert!(texts[0].contains("RPN program rejected"));
        assert!(texts[1].contains("instruction boundary"));
        assert!(texts[2].contains("recorded opcode 6B, the module has 6A"));
        assert!(texts[3].contains("same address as minor 0003"));
        assert!(texts[4].contains("past the end"));
        assert!(texts[5].contains("cannot be traced"));
    }

    /// The decoded-once starts give `on_boundary`'s answer at every offset,
    /// with and without symbols splitting the code.
    #[test]
    fn starts_agree_with_on_boundary() {
        let mut code = Vec::new();
        for i in 0..200u32 {
            code.extend_from_slice(&CODE);
            code.extend(std::iter::repeat_n(0x90, (i % 3) as usize));
        }
        let image = MemoryImage {
            objects: vec![(code.clone(), true)],
            sizes: vec![],
            debug: None,
        };
        let records: Vec<TdfRecord> = (0..code.len() as u32)
            .map(|o| TdfRecord {
                object: 1,
                ..rec(o as u16 + 1, o, code[o as usize])
            })
            .collect();
        let tdf = Tdf {
            records,
            ..Tdf::default()
        };
        let flagged: Vec<u32> = verify(&tdf, &image, None)
            .into_iter()
            .filter(|p| p.text.contains("instruction boundary"))
            .map(|p| p.offset)
            .collect();
        let want: Vec<u32> = (0..code.len() as u32)
            .filter(|&o| {
                let to = (o as usize + 16).min(code.len());
                !on_boundary(&code[..to], 0, o, true)
            })
            .collect();
        assert_eq!(flagged, want);
    }
}
