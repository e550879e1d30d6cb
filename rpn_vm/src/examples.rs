//! The five trace program examples of warp-debug-dtrace.txt §1.7, and the
//! fixed sample machine state that `os2trace demo`, the tests and the
//! benchmarks run them against.
//!
//! The sample state is a 16-bit context in a tiled LDT: SS = 0x001F maps
//! the 64 KB at 0x30000, so SS:SP = 001F:FF00 is flat 0x3FF00. At SS:SP+8
//! lies the 16:16 pointer 0002:0040, which `Cnvrt SXD` turns into the flat
//! address 0x00020040 (example 5 treats a sel:off pair as a flat dword, as
//! the seed says), where a 16-byte message waits.

use crate::fake::{FakeMachine, FakeSegment};
use crate::machine::Reg;

/// One example: its title as the seed gives it, and its trace program file.
#[derive(Debug, Clone, Copy)]
pub struct Example {
    /// The seed's title.
    pub title: &'static str,
    /// The trace program file text (header and one tracepoint).
    pub source: &'static str,
}

/// The five examples, with the seed's instructions and comments.
pub const EXAMPLES: [Example; 5] = [
    Example {
        title: "Log AX and BX registers",
        source: "major=0xC8\nminor=1\n  Push EBX\n  Push EAX\n  Log  WN,2 ;lower 16 bits of each DWORD\n",
    },
    Example {
        title: "Log EIP, EBP and EAX",
        source: "major=0xC8\nminor=2\n  Push EAX\n  Push EBP\n  Push EIP\n  Log  DN,3  ;3 DWORDs from the stack\n",
    },
    Example {
        title: "Log value at EBP+ESI",
        source: "major=0xC8\nminor=3\n  Push W,4  ; push immediate value 4 - length to log\n  Push EBP\n  Push ESI\n  Add       ; add top two DWORDs - puts EBP+ESI on stack\n  Log  MRF  ; log memory at flat address range\n",
    },
    Example {
        title: "Log value at SS:SP using 16-bit segmented addressing",
        source: "major=0xC8\nminor=4\n  Push W,9  ; push immediate  value 9 - length to log\n  Push SS\n  Push ESP\n  Log  MRS  ; log memory at segmented address range\n",
    },
    Example {
        title: "Log 16 bytes of data pointed to by the flat address at SS:SP+8",
        source: "major=0xC8\nminor=5\n  Push W,16 ; push immediate value 16 - length to log\n  Push SS\n  Push ESP\n  Push 8    ; offset 8\n  Add       ; 8 added to ESP value on stack\n  Push SIS  ; pop ESP then SS and pop Dword at that address\n            ; as two Words extended to Dwords (as if it was a sel:offset).\n            ; stack now contains the length and split address of data to log\n  Cnvrt SXD ; Concatenate the two words to form a flat address\n  Log  MRF  ; log the data.\n",
    },
];

/// The message example 5 finds.
pub const SAMPLE_MESSAGE: &[u8; 16] = b"DosOpen(C:\\A.TX)";

/// The fixed sample machine state.
pub fn sample_machine() -> FakeMachine {
    let mut m = FakeMachine::new();
    m.set_reg(Reg::Eax, 0x0000_1234)
        .set_reg(Reg::Ebx, 0x0000_ABCD)
        .set_reg(Reg::Ecx, 0x0000_0010)
        .set_reg(Reg::Edx, 0x0000_03F8)
        .set_reg(Reg::Ebp, 0x0003_FF20)
        .set_reg(Reg::Esi, 0x0000_0010)
        .set_reg(Reg::Edi, 0x0000_0040)
        .set_reg(Reg::Esp, 0x0000_FF00)
        .set_reg(Reg::Eip, 0x0000_2A11)
        .set_reg(Reg::Eflags, 0x0000_0246)
        .set_reg(Reg::Cs, 0x000F)
        .set_reg(Reg::Ss, 0x001F)
        .set_reg(Reg::Ds, 0x0017)
        .set_reg(Reg::Es, 0x0017);
    m.add_selector(
        0x000F,
        FakeSegment {
            base: 0x0001_0000,
            limit: 0xFFFF,
            present: true,
        },
    )
    .add_selector(
        0x0017,
        FakeSegment {
            base: 0x0002_0000,
            limit: 0xFFFF,
            present: true,
        },
    )
    .add_selector(
        0x001F,
        FakeSegment {
            base: 0x0003_0000,
            limit: 0xFFFF,
            present: true,
        },
    )
    .add_object(1, 0x000F, 0x0001_0000)
    .add_object(2, 0x0017, 0x0002_0000);
    // The stack at SS:SP: return address, then a far pointer at SP+8.
    m.write(
        0x0003_FF00,
        &[
            0x34, 0x12, 0x0F, 0x00, 0x01, 0x00, 0x02, 0x00, 0x40, 0x00, 0x02, 0x00,
        ],
    );
    // EBP+ESI = 0x3FF30.
    m.write(0x0003_FF30, &0xCAFE_F00Du32.to_le_bytes());
    m.write(0x0002_0040, SAMPLE_MESSAGE);
    m
}
