//! Which instruction boundaries the run loop offers to the tier (see the
//! module doc of [`super`], "Where blocks start"): the decode-time half,
//! [`in_block`], which says of an instruction that a block would take it
//! and go on after it, so the boundary after it needs no offer when the
//! interpreter ran it.

/// Would [`super::select`] take the instruction whose bytes (prefixes
/// first, as decoded in 32- or 16-bit code) are `bytes` in the middle of
/// a block, as one op that neither ends the block nor transfers control?
/// A subset of what `select` takes, read off the opcode and ModRM bytes
/// (`select` takes the same instructions whatever SS and DF are; segment
/// loads, which a block takes outside V86 mode only, count as taken), as
/// it runs on every decode: a false answer costs an offer (a few
/// nanoseconds), a wrong true one would cost a block start found later
/// (after a block before it returns). So it errs towards false: the
/// forms below only. The test `offer_subset_of_select` holds it to
/// `select` on random bytes.
#[inline]
pub(crate) fn in_block(bytes: &[u8], code32: bool) -> bool {
    // At most one 0x66, one 0x67 and one segment override (bits 0, 1
    // and 2 of `seen`); no LOCK, no repeat prefix (a REP string op ends
    // the block).
    let mut seen = 0u8;
    let mut at = 0;
    let op = loop {
        let Some(&b) = bytes.get(at) else {
            return false;
        };
        let bit = match b {
            0x66 => 1,
            0x67 => 2,
            0x26 | 0x2E | 0x36 | 0x3E | 0x64 | 0x65 => 4,
            0xF0 | 0xF2 | 0xF3 => return false,
            _ => break b,
        };
        if seen & bit != 0 {
            return false;
        }
        seen |= bit;
        at += 1;
    };
    let has66 = seen & 1 != 0;
    // Forms without a memory operand take neither an address-size nor a
    // segment prefix.
    let plain = seen & 6 == 0;
    let modrm = bytes.get(at + 1).copied().unwrap_or(0);
    let (reg, rm) = ((modrm >> 3) & 7, modrm & 7);
    let mem = modrm < 0xC0;
    // 8-bit forms: no 0x66, no CH; AH/DH/BH neither with a memory operand
    // nor with CL (8-bit register numbers: AL CL DL BL AH CH DH BH).
    let byte_rm = !has66
        && if mem {
            reg < 4
        } else {
            reg != 5 && rm != 5 && !((reg >= 4 || rm >= 4) && (reg == 1 || rm == 1))
        };
    let byte_m = !has66 && (mem || rm != 5);
    match op {
        // ADD OR ADC SBB AND SUB XOR CMP r/m,r and r,r/m; MOV likewise;
        // TEST r/m,r.
        0x00..=0x3F if op & 7 <= 3 => (mem || plain) && (op & 1 == 1 || byte_rm),
        0x84 | 0x88 | 0x8A => (mem || plain) && byte_rm,
        0x85 | 0x89 | 0x8B => mem || plain,
        // ... AL/eAX,imm; TEST AL/eAX,imm.
        0x00..=0x3F if op & 7 <= 5 => plain && (op & 1 == 1 || !has66),
        0xA8 => plain && !has66,
        0xA9 => plain,
        // INC/DEC r; PUSH r; POP r but (E)SP; PUSH imm.
        0x40..=0x57 | 0x68 | 0x6A => plain,
        0x58..=0x5F => plain && op != 0x5C,
        // PUSH ES/CS/SS/DS, POP ES/DS.
        0x06 | 0x0E | 0x16 | 0x1E | 0x07 | 0x1F => plain,
        // ALU r/m,imm.
        0x80 => (mem || plain) && byte_m,
        0x81 | 0x83 => mem || plain,
        // MOV r/m16 from ES..GS; MOV ES/DS/FS/GS from m16, or from r16
        // in 16-bit code.
        0x8C => reg <= 5 && (mem || plain),
        0x8E => matches!(reg, 0 | 3 | 4 | 5) && !has66 && (mem || (plain && !code32)),
        // LEA r32 of a 32-bit address.
        0x8D => code32 && mem && !has66 && plain,
        // MOV AL/eAX with a direct address.
        0xA0 | 0xA2 => !has66,
        0xA1 | 0xA3 => true,
        // MOVS, STOS, LODS.
        0xA4 | 0xA5 | 0xAA..=0xAD => true,
        // MOV r,imm.
        0xB0..=0xB7 => plain && !has66 && op != 0xB5,
        0xB8..=0xBF => plain,
        // MOV r/m,imm.
        0xC6 => reg == 0 && (mem || plain) && byte_m,
        0xC7 => reg == 0 && (mem || plain),
        // LES, LDS.
        0xC4 | 0xC5 => mem,
        // TEST r/m,imm; NOT; NEG.
        0xF6 => matches!(reg, 0 | 2 | 3) && (mem || plain) && byte_m,
        0xF7 => matches!(reg, 0 | 2 | 3) && (mem || plain),
        // INC, DEC r/m; PUSH m.
        0xFE => reg <= 1 && (mem || plain) && byte_m,
        0xFF => (reg <= 1 && (mem || plain)) || (reg == 6 && mem),
        // SHL/SHR/SAL/SAR of a register by one.
        0xD0 => reg >= 4 && !mem && plain && byte_m,
        0xD1 => reg >= 4 && !mem && plain,
        // CBW, CWDE, CWD, CDQ; XCHG of registers; LEAVE.
        0x98 | 0x99 | 0x91..=0x97 | 0xC9 => plain,
        0x86 => !mem && plain && byte_rm,
        0x87 => !mem && plain,
        0x0F => {
            let (op2, modrm) = (
                bytes.get(at + 1).copied().unwrap_or(0),
                bytes.get(at + 2).copied().unwrap_or(0),
            );
            let mem = modrm >> 6 != 3;
            match op2 {
                // MOVZX, MOVSX from memory, narrower than the register.
                0xB6 | 0xBE => mem,
                0xB7 | 0xBF => mem && code32 != has66,
                // PUSH FS/GS, POP FS/GS.
                0xA0 | 0xA1 | 0xA8 | 0xA9 => plain,
                // LFS, LGS.
                0xB4 | 0xB5 => mem,
                _ => false,
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::select::{self, End, Source};
    use super::in_block;
    use iced_x86::{Decoder, DecoderOptions, Instruction};
    use proptest::prelude::*;

    /// The first instruction of `bytes` in 32- or 16-bit code, if valid.
    fn decode(bytes: &[u8], code32: bool) -> Option<Instruction> {
        let mut dec =
            Decoder::with_ip(if code32 { 32 } else { 16 }, bytes, 0, DecoderOptions::NONE);
        let insn = dec.decode();
        (!insn.is_invalid()).then_some(insn)
    }

    /// `select` takes the instruction alone as one op that falls through.
    fn select_takes(bytes: &[u8], code32: bool) -> bool {
        [false, true].iter().all(|&stack32| {
            let src = Source {
                bytes,
                eip: 0x100,
                code32,
                stack32,
                df: stack32,
            };
            select::select(src, |_| false)
                .is_some_and(|p| p.insns == 1 && p.ops.len() == 1 && p.end == End::Fall)
        })
    }

    /// `in_block` of the first instruction of `bytes`, if valid.
    fn offer(bytes: &[u8], code32: bool) -> Option<bool> {
        let insn = decode(bytes, code32)?;
        Some(in_block(&bytes[..insn.len()], code32))
    }

    proptest! {
        /// What `in_block` accepts, `select` takes as an op in the middle
        /// of a block, whatever the stack size and DF.
        #[test]
        fn offer_subset_of_select(
            pre in proptest::collection::vec(
                proptest::sample::select(&[0x66u8, 0x67, 0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0xF0, 0xF3, 0x0F][..]),
                0..3,
            ),
            rest in proptest::collection::vec(any::<u8>(), 15),
            code32 in any::<bool>(),
        ) {
            // (Prefixes and 0x0F, rarer in random bytes, up front.)
            let bytes: Vec<u8> = pre.iter().chain(&rest).copied().take(15).collect();
            if let Some(insn) = decode(&bytes, code32) {
                let b = &bytes[..insn.len()];
                if in_block(b, code32) {
                    prop_assert!(select_takes(b, code32), "{insn} ({b:02X?})");
                }
            }
        }
    }

    /// Common forms `in_block` accepts (and `select` takes), and some it
    /// does not: transfers and what `select` refuses.
    #[test]
    fn common_straight_instructions_are_in_block_and_transfers_are_not() {
        let yes32: &[&[u8]] = &[
            &[0x89, 0xC8],                   // mov eax,ecx
            &[0x8B, 0x43, 0x04],             // mov eax,[ebx+4]
            &[0xC7, 0x45, 0xFC, 1, 0, 0, 0], // mov dword [ebp-4],1
            &[0x01, 0xD8],                   // add eax,ebx
            &[0x83, 0xE9, 0x01],             // sub ecx,1
            &[0x85, 0xC0],                   // test eax,eax
            &[0x40],                         // inc eax
            &[0x55],                         // push ebp
            &[0x6A, 0x08],                   // push 8
            &[0x5D],                         // pop ebp
            &[0x8D, 0x44, 0x24, 0x08],       // lea eax,[esp+8]
            &[0x0F, 0xB6, 0x06],             // movzx eax,byte [esi]
            &[0xAB],                         // stosd
            &[0x66, 0x8B, 0x03],             // mov ax,[ebx]
            &[0x26, 0x8B, 0x03],             // mov eax,es:[ebx]
            &[0x8C, 0xD8],                   // mov eax,ds
            &[0x1E],                         // push ds
            &[0x1F],                         // pop ds
            &[0x8E, 0x03],                   // mov es,[ebx]
            &[0xC4, 0x5D, 0xFC],             // les ebx,[ebp-4]
            &[0xD1, 0xE0],                   // shl eax,1
            &[0x99],                         // cdq
            &[0x87, 0xD8],                   // xchg eax,ebx
            &[0x93],                         // xchg eax,ebx
            &[0xC9],                         // leave
            &[0xFF, 0x33],                   // push dword [ebx]
        ];
        for b in yes32 {
            assert_eq!(offer(b, true), Some(true), "{b:02X?}");
            assert!(select_takes(b, true), "{b:02X?}");
        }
        let yes16: &[&[u8]] = &[
            &[0x8B, 0x47, 0x02], // mov ax,[bx+2]
            &[0x50],             // push ax
            &[0xA4],             // movsb
            &[0x8E, 0xD8],       // mov ds,ax
            &[0xC4, 0x5E, 0xFC], // les bx,[bp-4]
            &[0x07],             // pop es
            &[0xFF, 0x76, 0x06], // push word [bp+6]
            &[0x98],             // cbw
            &[0xD1, 0xE3],       // shl bx,1
            &[0xD0, 0xEC],       // shr ah,1
        ];
        for b in yes16 {
            assert_eq!(offer(b, false), Some(true), "{b:02X?}");
            assert!(select_takes(b, false), "{b:02X?}");
        }
        let no16: &[&[u8]] = &[
            &[0x26, 0x8A, 0x27],       // mov ah,es:[bx]
            &[0x8D, 0x46, 0x02],       // lea ax,[bp+2]
            &[0x17],                   // pop ss
            &[0x0F, 0xB2, 0x5E, 0xFC], // lss bx,[bp-4]
            &[0xCA, 0x02, 0x00],       // retf 2
            &[0x66, 0x80, 0x00, 0x00], // add byte [bx+si],0 with 0x66
            &[0x84, 0xA0, 0x00, 0x00], // test [bx+si+0],ah
        ];
        for b in no16 {
            assert_eq!(offer(b, false), Some(false), "{b:02X?}");
        }
        let no32: &[&[u8]] = &[
            &[0x74, 0x02],             // je
            &[0xEB, 0x02],             // jmp short
            &[0xE8, 0, 0, 0, 0],       // call
            &[0xC3],                   // ret
            &[0xFF, 0xD0],             // call eax
            &[0xCD, 0x21],             // int 21h
            &[0xE2, 0xFE],             // loop
            &[0xF3, 0xA5],             // rep movsd
            &[0x8E, 0xD8],             // mov ds,eax (not taken)
            &[0x8E, 0xD0],             // mov ss,ax
            &[0xF9],                   // stc
            &[0xC1, 0xE0, 0x02],       // shl eax,2
            &[0xD3, 0xE0],             // shl eax,cl
            &[0x87, 0x03],             // xchg [ebx],eax
            &[0x00, 0xE8],             // add al,ch (CH)
            &[0x0F, 0xB6, 0xC1],       // movzx eax,cl (register source)
            &[0x0F, 0x22, 0xC0],       // mov cr0,eax
            &[0xF0, 0x01, 0x03],       // lock add [ebx],eax
            &[0x66, 0x66, 0x8B, 0x03], // two 0x66
            &[0x9C],                   // pushfd
            &[0x5C],                   // pop esp
        ];
        for b in no32 {
            assert_eq!(offer(b, true), Some(false), "{b:02X?}");
        }
    }
}
