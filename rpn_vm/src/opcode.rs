//! The one opcode table of the RPN instruction set.
//!
//! Every fact about an opcode lives in the single list below: its byte, its
//! mnemonic and form as the trace program file spells them, its operand kind
//! (and so its length), and its cost in cycles. The [`Op`] enum, the
//! byte-to-op lookup, the assembler, disassembler, verifier and interpreter
//! are all derived from it; nothing else in the workspace names an opcode
//! byte.
//!
//! The bytes are those of `formats/TRCUST-FORMATS.md` §5.1a: 35 are OS/2's
//! own, read from the TDFs IBM's TRCUST writes (marked `os2` below); the rest
//! are os2trace's, assigned in the gaps of OS/2's numbering (marked
//! `os2trace`). A TDF that uses an os2trace byte is an os2trace TDF.
//!
//! Cycle costs are os2trace's model of the kernel interpreter on a 386: a
//! dispatch of about 4 cycles, plus the work (a register or variable read,
//! a multiply, a copy into the log). Memory-touching ops add a cost per unit
//! (`cycles_per_unit`): per byte copied for `Log MRx/ARx`, per item for
//! `Log WN/DN`, per entry rotated for `Pop N`. The figures are approximations
//! chosen to rank ops sensibly, not measurements of a real kernel.

/// The immediate operand an opcode carries after its byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operand {
    /// No operand: the instruction is one byte long.
    None,
    /// One byte (`Log WN,byte`, `Pop N,byte`, `Push OXS,byte`).
    Byte,
    /// A little-endian word (`Push W,word`, variable indices, jump distances).
    Word,
    /// A little-endian dword (`Push D,dword`, `Push OXF,dword`).
    Dword,
}

impl Operand {
    /// Size of the operand in bytes.
    pub const fn size(self) -> usize {
        match self {
            Operand::None => 0,
            Operand::Byte => 1,
            Operand::Word => 2,
            Operand::Dword => 4,
        }
    }

    /// Largest value the operand can hold.
    pub const fn max(self) -> u32 {
        match self {
            Operand::None => 0,
            Operand::Byte => 0xFF,
            Operand::Word => 0xFFFF,
            Operand::Dword => u32::MAX,
        }
    }
}

/// Where an opcode byte comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Observed in TDFs written by IBM's TRCUST 3.05A.
    Os2,
    /// Assigned by os2trace in a gap of OS/2's numbering.
    Os2Trace,
}

/// Everything the table says about one opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpInfo {
    /// The opcode.
    pub op: Op,
    /// Its byte in the bytecode.
    pub byte: u8,
    /// Mnemonic as written in trace program files (`Push`, `Log`, `Cnvrt`).
    pub mnemonic: &'static str,
    /// Form after the mnemonic (`EAX`, `W`, `MRS`, `VIi`), empty when none.
    pub form: &'static str,
    /// Operand carried after the byte.
    pub operand: Operand,
    /// Fixed cost in cycles.
    pub cycles: u32,
    /// Extra cycles per unit of work (byte copied, item logged, entry popped).
    pub cycles_per_unit: u32,
    /// Whether the byte is OS/2's or os2trace's.
    pub origin: Origin,
}

impl OpInfo {
    /// Length of the instruction in bytes, opcode included.
    pub const fn len(&self) -> usize {
        1 + self.operand.size()
    }

    /// Always false: an instruction has at least its opcode byte.
    pub const fn is_empty(&self) -> bool {
        false
    }

    /// The canonical spelling of the mnemonic and form, e.g. `Log WN`.
    pub fn name(&self) -> String {
        if self.form.is_empty() {
            self.mnemonic.to_string()
        } else {
            format!("{} {}", self.mnemonic, self.form)
        }
    }
}

macro_rules! define_opcodes {
    ($( $variant:ident = $byte:literal, $mnem:literal, $form:literal, $operand:ident,
        $cycles:literal, $per_unit:literal, $origin:ident; )*) => {
        /// An RPN opcode. The discriminant is the index into [`OPCODES`],
        /// not the byte; use [`Op::byte`] for that.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Op {
            $(
                #[doc = concat!("`", $mnem, " ", $form, "`")]
                $variant,
            )*
        }

        /// The opcode table, in [`Op`] order.
        pub const OPCODES: &[OpInfo] = &[
            $( OpInfo {
                op: Op::$variant,
                byte: $byte,
                mnemonic: $mnem,
                form: $form,
                operand: Operand::$operand,
                cycles: $cycles,
                cycles_per_unit: $per_unit,
                origin: Origin::$origin,
            }, )*
        ];
    };
}

define_opcodes! {
    PushEax     = 0x00, "Push",  "EAX",    None,  4, 0, Os2;
    PushEcx     = 0x01, "Push",  "ECX",    None,  4, 0, Os2;
    PushEdx     = 0x02, "Push",  "EDX",    None,  4, 0, Os2;
    PushEbx     = 0x03, "Push",  "EBX",    None,  4, 0, Os2;
    PushEsp     = 0x04, "Push",  "ESP",    None,  4, 0, Os2;
    PushEbp     = 0x05, "Push",  "EBP",    None,  4, 0, Os2;
    PushEsi     = 0x06, "Push",  "ESI",    None,  4, 0, Os2;
    PushEdi     = 0x07, "Push",  "EDI",    None,  4, 0, Os2;
    PushEs      = 0x08, "Push",  "ES",     None,  4, 0, Os2;
    PushCs      = 0x09, "Push",  "CS",     None,  4, 0, Os2;
    PushSs      = 0x0A, "Push",  "SS",     None,  4, 0, Os2;
    PushDs      = 0x0B, "Push",  "DS",     None,  4, 0, Os2;
    PushEflags  = 0x0C, "Push",  "EFlags", None,  4, 0, Os2;
    PushEip     = 0x0D, "Push",  "EIP",    None,  4, 0, Os2;
    PushFs      = 0x0E, "Push",  "FS",     None,  4, 0, Os2;
    PushGs      = 0x0F, "Push",  "GS",     None,  4, 0, Os2;
    PushW       = 0x10, "Push",  "W",      Word,  4, 0, Os2;
    PushOxs     = 0x11, "Push",  "OXS",    Byte,  6, 0, Os2;
    PushWis     = 0x12, "Push",  "WIS",    None, 22, 0, Os2;
    PushSis     = 0x13, "Push",  "SIS",    None, 24, 0, Os2;
    LogWn       = 0x14, "Log",   "WN",     Byte,  6, 3, Os2;
    LogMrs      = 0x15, "Log",   "MRS",    None, 30, 1, Os2;
    Add         = 0x16, "Add",   "",       None,  5, 0, Os2;
    Sub         = 0x17, "Sub",   "",       None,  5, 0, Os2Trace;
    Mul         = 0x18, "Mul",   "",       None, 26, 0, Os2Trace;
    LogArs      = 0x19, "Log",   "ARS",    None, 30, 2, Os2;
    PushD       = 0x1A, "Push",  "D",      Dword, 4, 0, Os2;
    PushOxf     = 0x1B, "Push",  "OXF",    Dword, 6, 0, Os2;
    PushFif     = 0x1C, "Push",  "FIF",    None, 16, 0, Os2;
    CnvrtFxs    = 0x1D, "Cnvrt", "FXS",    None, 12, 0, Os2Trace;
    CnvrtSxf    = 0x1E, "Cnvrt", "SXF",    None, 12, 0, Os2Trace;
    CnvrtDxs    = 0x1F, "Cnvrt", "DXS",    None,  6, 0, Os2;
    CnvrtSxd    = 0x20, "Cnvrt", "SXD",    None,  6, 0, Os2;
    LogDn       = 0x21, "Log",   "DN",     Byte,  6, 4, Os2;
    LogMrf      = 0x22, "Log",   "MRF",    None, 20, 1, Os2;
    LogArf      = 0x23, "Log",   "ARF",    None, 20, 2, Os2;
    JmpN        = 0x24, "Jmp",   "N",      Word,  7, 0, Os2Trace;
    JmpNn       = 0x25, "Jmp",   "NN",     Word,  5, 0, Os2Trace;
    JmpPn       = 0x26, "Jmp",   "PN",     Word,  5, 0, Os2Trace;
    JmpZn       = 0x27, "Jmp",   "ZN",     Word,  5, 0, Os2Trace;
    PushV       = 0x28, "Push",  "V",      Word,  6, 0, Os2Trace;
    PushVii     = 0x29, "Push",  "VIi",    None,  8, 0, Os2Trace;
    MoveV       = 0x2A, "Move",  "V",      Word,  6, 0, Os2Trace;
    MoveVii     = 0x2B, "Move",  "VIi",    None,  8, 0, Os2Trace;
    IncV        = 0x2C, "Inc",   "V",      Word,  7, 0, Os2Trace;
    IncVii      = 0x2D, "Inc",   "VIi",    None,  9, 0, Os2Trace;
    PopN        = 0x2E, "Pop",   "N",      Byte,  4, 1, Os2Trace;
    Abort       = 0x31, "Abort", "",       None,  4, 0, Os2;
    OrV         = 0x32, "Or",    "V",      Word,  7, 0, Os2;
    Remove      = 0x33, "Remove", "",      None, 40, 0, Os2;
    SysDump     = 0x34, "SysDump", "",     None,  4, 0, Os2Trace;
    And         = 0x35, "And",   "",       None,  5, 0, Os2Trace;
    Or          = 0x36, "Or",    "",       None,  5, 0, Os2Trace;
    Xor         = 0x37, "Xor",   "",       None,  5, 0, Os2Trace;
    Neg         = 0x38, "Neg",   "",       None,  4, 0, Os2Trace;
    Exit        = 0x39, "Exit",  "",       None,  4, 0, Os2Trace;
    SetMinW     = 0x3A, "SetMin", "W",     Word,  5, 0, Os2Trace;
    SetMin      = 0x3B, "SetMin", "",      None,  5, 0, Os2Trace;
    SetMajW     = 0x3C, "SetMaj", "W",     Word,  5, 0, Os2Trace;
    SetMaj      = 0x3D, "SetMaj", "",      None,  5, 0, Os2Trace;
    Xchg        = 0x3E, "Xchg",  "",       None,  6, 0, Os2Trace;
}

/// Number of opcodes in the table.
pub const OPCODE_COUNT: usize = OPCODES.len();

const fn build_byte_map() -> [Option<Op>; 256] {
    let mut map = [None; 256];
    let mut i = 0;
    while i < OPCODES.len() {
        let info = &OPCODES[i];
        assert!(info.op as usize == i, "OPCODES must be in Op order");
        assert!(map[info.byte as usize].is_none(), "duplicate opcode byte");
        map[info.byte as usize] = Some(info.op);
        i += 1;
    }
    map
}

/// Byte to opcode, built at compile time (which also rejects duplicates).
static BYTE_MAP: [Option<Op>; 256] = build_byte_map();

impl Op {
    /// The table entry of this opcode.
    #[inline]
    pub fn info(self) -> &'static OpInfo {
        &OPCODES[self as usize]
    }

    /// The opcode's byte.
    #[inline]
    pub fn byte(self) -> u8 {
        self.info().byte
    }

    /// The opcode a byte stands for, if any.
    #[inline]
    pub fn from_byte(byte: u8) -> Option<Op> {
        BYTE_MAP[byte as usize]
    }

    /// The operand kind.
    #[inline]
    pub fn operand(self) -> Operand {
        self.info().operand
    }

    /// Instruction length in bytes.
    #[inline]
    pub fn len(self) -> usize {
        self.info().len()
    }

    /// Always false; see [`OpInfo::is_empty`].
    #[inline]
    pub fn is_empty(self) -> bool {
        false
    }

    /// All opcodes, in table order.
    pub fn all() -> impl Iterator<Item = Op> {
        OPCODES.iter().map(|info| info.op)
    }

    /// True for the instructions that end the hit unconditionally.
    pub fn ends_hit(self) -> bool {
        matches!(self, Op::Abort | Op::Remove | Op::SysDump | Op::Exit)
    }

    /// True for the four jumps.
    pub fn is_jump(self) -> bool {
        matches!(self, Op::JmpN | Op::JmpNn | Op::JmpPn | Op::JmpZn)
    }

    /// The register a `Push <reg>` opcode reads, if it is one.
    pub fn pushed_register(self) -> Option<crate::Reg> {
        use crate::Reg;
        Some(match self {
            Op::PushEax => Reg::Eax,
            Op::PushEcx => Reg::Ecx,
            Op::PushEdx => Reg::Edx,
            Op::PushEbx => Reg::Ebx,
            Op::PushEsp => Reg::Esp,
            Op::PushEbp => Reg::Ebp,
            Op::PushEsi => Reg::Esi,
            Op::PushEdi => Reg::Edi,
            Op::PushEs => Reg::Es,
            Op::PushCs => Reg::Cs,
            Op::PushSs => Reg::Ss,
            Op::PushDs => Reg::Ds,
            Op::PushEflags => Reg::Eflags,
            Op::PushEip => Reg::Eip,
            Op::PushFs => Reg::Fs,
            Op::PushGs => Reg::Gs,
            _ => return None,
        })
    }

    /// Stack effect as (entries popped, entries pushed); for the `N,byte`
    /// forms the operand gives the count. Peeking instructions pop nothing.
    pub fn stack_effect(self, operand: u32) -> (u32, u32) {
        match self {
            op if op.pushed_register().is_some() => (0, 1),
            Op::PushW | Op::PushD | Op::PushOxs | Op::PushOxf | Op::PushV => (0, 1),
            Op::PushVii => (0, 1),
            Op::PushWis => (2, 1),
            Op::PushSis => (2, 2),
            Op::PushFif => (1, 1),
            Op::Add | Op::Sub | Op::Mul | Op::And | Op::Or | Op::Xor => (2, 1),
            Op::Neg => (1, 1),
            Op::CnvrtDxs | Op::CnvrtFxs => (1, 2),
            Op::CnvrtSxd | Op::CnvrtSxf => (2, 1),
            Op::LogWn | Op::LogDn | Op::PopN => (operand, 0),
            Op::LogMrs | Op::LogArs => (3, 0),
            Op::LogMrf | Op::LogArf => (2, 0),
            Op::Xchg => (2, 2),
            Op::MoveVii => (2, 2),
            _ => (0, 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lengths of warp-debug-dtrace.txt §1.6, by canonical name.
    const SEED_LENGTHS: &[(&str, usize)] = &[
        ("Abort", 1),
        ("Add", 1),
        ("Cnvrt DXS", 1),
        ("Cnvrt FXS", 1),
        ("Cnvrt SXD", 1),
        ("Cnvrt SXF", 1),
        ("Inc V", 3),
        ("Inc VIi", 1),
        ("Jmp N", 3),
        ("Jmp NN", 3),
        ("Jmp PN", 3),
        ("Jmp ZN", 3),
        ("Log ARF", 1),
        ("Log ARS", 1),
        ("Log DN", 2),
        ("Log MRF", 1),
        ("Log MRS", 1),
        ("Log WN", 2),
        ("Move V", 3),
        ("Move VIi", 1),
        ("Mul", 1),
        ("Or V", 3),
        ("Pop N", 2),
        ("Push CS", 1),
        ("Push D", 5),
        ("Push DS", 1),
        ("Push EAX", 1),
        ("Push EBP", 1),
        ("Push EBX", 1),
        ("Push ECX", 1),
        ("Push EDI", 1),
        ("Push EDX", 1),
        ("Push EFlags", 1),
        ("Push EIP", 1),
        ("Push ES", 1),
        ("Push ESI", 1),
        ("Push ESP", 1),
        ("Push FIF", 1),
        ("Push FS", 1),
        ("Push GS", 1),
        ("Push OXF", 5),
        ("Push OXS", 2),
        ("Push SIS", 1),
        ("Push SS", 1),
        ("Push V", 3),
        ("Push VIi", 1),
        ("Push W", 3),
        ("Push WIS", 1),
        ("Remove", 1),
        ("Sub", 1),
        ("SysDump", 1),
        ("And", 1),
        ("Or", 1),
        ("Xor", 1),
        ("Neg", 1),
        ("Exit", 1),
        ("SetMin W", 3),
        ("SetMin", 1),
        ("SetMaj W", 3),
        ("SetMaj", 1),
        ("Xchg", 1),
    ];

    /// The 35 bytes observed in IBM TRCUST output (TRCUST-FORMATS.md §5.1).
    const OBSERVED: &[(u8, &str)] = &[
        (0x00, "Push EAX"),
        (0x01, "Push ECX"),
        (0x02, "Push EDX"),
        (0x03, "Push EBX"),
        (0x04, "Push ESP"),
        (0x05, "Push EBP"),
        (0x06, "Push ESI"),
        (0x07, "Push EDI"),
        (0x08, "Push ES"),
        (0x09, "Push CS"),
        (0x0A, "Push SS"),
        (0x0B, "Push DS"),
        (0x0C, "Push EFlags"),
        (0x0D, "Push EIP"),
        (0x0E, "Push FS"),
        (0x0F, "Push GS"),
        (0x10, "Push W"),
        (0x11, "Push OXS"),
        (0x12, "Push WIS"),
        (0x13, "Push SIS"),
        (0x14, "Log WN"),
        (0x15, "Log MRS"),
        (0x16, "Add"),
        (0x19, "Log ARS"),
        (0x1A, "Push D"),
        (0x1B, "Push OXF"),
        (0x1C, "Push FIF"),
        (0x1F, "Cnvrt DXS"),
        (0x20, "Cnvrt SXD"),
        (0x21, "Log DN"),
        (0x22, "Log MRF"),
        (0x23, "Log ARF"),
        (0x31, "Abort"),
        (0x32, "Or V"),
        (0x33, "Remove"),
    ];

    #[test]
    fn table_has_every_seed_instruction_with_its_length() {
        assert_eq!(OPCODE_COUNT, SEED_LENGTHS.len());
        for (name, len) in SEED_LENGTHS {
            let info = OPCODES
                .iter()
                .find(|i| i.name() == *name)
                .unwrap_or_else(|| panic!("{name} missing"));
            assert_eq!(info.len(), *len, "{name}");
        }
    }

    #[test]
    fn os2_bytes_match_trcust_output() {
        let os2: Vec<_> = OPCODES.iter().filter(|i| i.origin == Origin::Os2).collect();
        assert_eq!(os2.len(), 35);
        for (byte, name) in OBSERVED {
            let op = Op::from_byte(*byte).unwrap();
            assert_eq!(op.info().name(), *name);
            assert_eq!(op.info().origin, Origin::Os2);
        }
    }

    #[test]
    fn byte_map_round_trips_and_gaps_are_empty() {
        for op in Op::all() {
            assert_eq!(Op::from_byte(op.byte()), Some(op));
        }
        for byte in [0x2F, 0x30, 0x3F, 0x80, 0xFF] {
            assert_eq!(Op::from_byte(byte), None);
        }
    }
}
