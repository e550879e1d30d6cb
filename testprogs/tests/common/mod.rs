//! Helpers shared by the integration tests: decoding code segments.

#![allow(dead_code)]

use iced_x86::{Decoder, DecoderOptions, Instruction};
use loader::{Bitness, Format, Module};

/// Whether segment/object `n` holds code.
pub fn is_code(m: &Module, n: u16) -> bool {
    let flags = m.object(n).expect("object exists").flags;
    match m.format {
        Format::Ne => flags & 1 == 0,
        Format::Lx => flags & 4 != 0,
    }
}

/// 16 or 32.
pub fn bits(m: &Module, n: u16) -> u32 {
    match m.bitness(n).expect("object exists") {
        Bitness::Bits16 => 16,
        Bitness::Bits32 => 32,
    }
}

/// Every instruction of a code segment, decoded from offset 0 to its end,
/// with its offset. Panics on an invalid instruction: the code segments
/// hold nothing but instructions.
pub fn decode_all(m: &Module, n: u16) -> Vec<(u32, Instruction)> {
    let bytes = m.object_bytes(n).expect("object exists");
    let mut decoder = Decoder::with_ip(bits(m, n), &bytes, 0, DecoderOptions::NONE);
    let mut out = Vec::new();
    while decoder.can_decode() {
        let ip = decoder.ip() as u32;
        let i = decoder.decode();
        assert!(
            !i.is_invalid(),
            "{}: invalid instruction at {n}:{ip:#x}",
            m.name
        );
        out.push((ip, i));
    }
    out
}

/// The instruction that starts exactly at `object:offset`.
pub fn instruction_at(m: &Module, object: u16, offset: u32) -> Option<Instruction> {
    decode_all(m, object)
        .into_iter()
        .find(|(ip, _)| *ip == offset)
        .map(|(_, i)| i)
}
