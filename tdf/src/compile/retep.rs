//! RETEP: finding a routine's return point from MAP information.
//!
//! A routine runs from its symbol to the next symbol of the same object.
//! Its instructions are decoded with iced-x86 from the symbol on, and the
//! last instruction that matches the criteria is the tracepoint. The
//! criteria are a bit mask (TRCUST's `/RMn`, or `RETEP=RET+JMP...`): 1 LEAVE,
//! 2 JMP, 4 RET, 8 LRET; `RET n` and `RETF n` count only with `/RP`
//! (Pascal returns). `/RSnnn` limits the search to the last nnn bytes of the
//! routine. `RETEP=CV` needs debug information, which MAP files lack.
//! (TRCUST-FORMATS.md §6.2 and §7.4: only bit 4 = RET is confirmed.)

use iced_x86::{Decoder, DecoderOptions, Mnemonic, OpKind};

/// LEAVE.
pub const RM_LEAVE: u8 = 1;
/// JMP (a tail jump out of the routine).
pub const RM_JMP: u8 = 2;
/// Near RET.
pub const RM_RET: u8 = 4;
/// Far RET.
pub const RM_LRET: u8 = 8;
/// From CodeView/HLL debug information.
pub const RM_CV: u8 = 16;

/// How to search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Criteria {
    /// Bit mask of RM_* values.
    pub mask: u8,
    /// Accept `RET n` / `RETF n`.
    pub pascal: bool,
    /// Search only the last `range` bytes.
    pub range: Option<u32>,
}

/// The offset of the return point in `code`, which holds the routine's
/// bytes starting at object offset `start`; `big` selects 32-bit decoding.
pub fn find(code: &[u8], start: u32, big: bool, c: Criteria) -> Option<u32> {
    let bitness = if big { 32 } else { 16 };
    let mut decoder = Decoder::with_ip(bitness, code, u64::from(start), DecoderOptions::NONE);
    let end = u64::from(start) + code.len() as u64;
    let lowest = c.range.map_or(0, |r| end.saturating_sub(u64::from(r)));
    let mut found = None;
    while decoder.can_decode() {
        let ins = decoder.decode();
        if ins.is_invalid() {
            continue;
        }
        let with_imm = ins.op_count() > 0 && ins.op0_kind() == OpKind::Immediate16;
        let bit = match ins.mnemonic() {
            Mnemonic::Leave => RM_LEAVE,
            Mnemonic::Jmp => RM_JMP,
            Mnemonic::Ret if !with_imm || c.pascal => RM_RET,
            Mnemonic::Retf if !with_imm || c.pascal => RM_LRET,
            _ => 0,
        };
        if bit & c.mask != 0 && ins.ip() >= lowest {
            found = Some(ins.ip() as u32);
        }
    }
    found
}

/// IBM HLL's search: the offset of the last byte in `code` (the bytes
/// from object offset `start`) that is the opcode of a selected
/// instruction (C9 LEAVE; E9, EB, EA JMP; C3 RET and CB RETF, C2 and CA
/// with `/RP`), without decoding, as TRCUST searches the block of an HLL
/// procedure (it finds the C3 inside `MOV EAX,EBX`, 8B C3). `/RSnnn`
/// counts back from `routine_end`, the end of the whole procedure.
pub fn find_bytes(code: &[u8], start: u32, routine_end: u32, c: Criteria) -> Option<u32> {
    let lowest = c.range.map_or(0, |r| routine_end.saturating_sub(r));
    let bit = |b: u8| match b {
        0xC9 => RM_LEAVE,
        0xE9..=0xEB => RM_JMP,
        0xC3 => RM_RET,
        0xC2 if c.pascal => RM_RET,
        0xCB => RM_LRET,
        0xCA if c.pascal => RM_LRET,
        _ => 0,
    };
    code.iter()
        .zip(start..)
        .filter(|&(&b, at)| bit(b) & c.mask != 0 && at >= lowest)
        .map(|(_, at)| at)
        .last()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HELLO: [u8; 18] = [
        0x68, 0x00, 0x00, 0x01, 0x00, 0x6A, 0x28, 0x6A, 0x01, 0xE8, 0, 0, 0, 0, 0x83, 0xC4, 0x0C,
        0xC3,
    ];

    fn c(mask: u8, range: Option<u32>) -> Criteria {
        Criteria {
            mask,
            pascal: false,
            range,
        }
    }

    #[test]
    fn finds_the_ret() {
        assert_eq!(find(&HELLO, 0, true, c(RM_RET, None)), Some(0x11));
        assert_eq!(
            find(&HELLO, 0, true, c(RM_RET | RM_JMP, Some(2))),
            Some(0x11)
        );
        assert_eq!(find(&HELLO, 0, true, c(RM_LEAVE | RM_JMP, None)), None);
        assert_eq!(find(&HELLO, 0, true, c(0, None)), None);
        // The C3 is not in the last byte's window when the range is 0.
        assert_eq!(find(&HELLO, 0, true, c(RM_RET, Some(0))), None);
    }

    #[test]
    fn hll_search_is_by_bytes() {
        // MOV EBX,[EBP+8]; DEC EBX; MOV EAX,EBX: the C3 of 8B C3.
        let body = [0x8B, 0x5D, 0x08, 0x4B, 0x8B, 0xC3];
        assert_eq!(find_bytes(&body, 0x31, 0x3A, c(RM_RET, None)), Some(0x36));
        assert_eq!(find_bytes(&body, 0x31, 0x3A, c(RM_LEAVE, None)), None);
        // The last one; /RS counts back from the routine's end.
        let body = [0xB8, 0xC3, 0, 0, 0, 0xC9, 0xC3, 0x89];
        assert_eq!(find_bytes(&body, 0x10, 0x20, c(RM_RET, None)), Some(0x16));
        assert_eq!(find_bytes(&body, 0x10, 0x20, c(RM_LEAVE, None)), Some(0x15));
        assert_eq!(
            find_bytes(&body, 0x10, 0x1A, c(RM_RET, Some(4))),
            Some(0x16)
        );
        assert_eq!(find_bytes(&body, 0x10, 0x20, c(RM_RET, Some(4))), None);
    }

    #[test]
    fn pascal_returns_need_rp() {
        let code = [0x55, 0xC2, 0x04, 0x00];
        assert_eq!(find(&code, 0x10, false, c(RM_RET, None)), None);
        let p = Criteria {
            pascal: true,
            ..c(RM_RET, None)
        };
        assert_eq!(find(&code, 0x10, false, p), Some(0x11));
    }
}
