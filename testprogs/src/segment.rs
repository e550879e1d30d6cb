//! Segments before linking: bytes, labels and fixup requests, and the two
//! builders that make them.
//!
//! [`Code`] wraps iced-x86's [`CodeAssembler`]: instructions are added
//! through [`Code::a`], and labels, public names and fixups are attached to
//! the *next* instruction added. After assembly every fixup site is found
//! by decoding the instruction it belongs to and reading iced-x86's
//! constant offsets (the immediate or the displacement), so a site always
//! lies exactly on the field it patches. [`Data`] lays out bytes, words,
//! strings, far pointers and zero-filled space.
//!
//! A fixup names its target symbolically ([`Ref`]); the linker
//! (`crate::link`) resolves symbols across all segments of the module.

use iced_x86::code_asm::{CodeAssembler, CodeLabel};
use iced_x86::{BlockEncoderOptions, Code as Op, Decoder, DecoderOptions, Instruction};
use loader::SourceKind;

use crate::error::{BuildError, Result};

/// What a fixup refers to, before linking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ref {
    /// A label of this module (any segment), by name.
    Symbol(&'static str),
    /// The selector of segment `n` of this module (offset 0).
    Segment(u16),
    /// An import by ordinal; `name` is what the MAP file calls it.
    Ordinal {
        module: &'static str,
        ordinal: u32,
        name: &'static str,
    },
    /// An offset in segment `segment` of this module (for data with no
    /// label of its own: the strings and pointers of a TNF probe table).
    Local { segment: u16, offset: u32 },
    /// An import by name.
    Named {
        module: &'static str,
        name: &'static str,
    },
}

/// A label: a name for an offset in a segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Label {
    pub name: String,
    pub offset: u32,
    /// Listed in the MAP file.
    pub public: bool,
}

/// A fixup request: the site in this segment, its kind and its target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SiteFixup {
    pub offset: u32,
    pub kind: SourceKind,
    pub target: Ref,
}

/// A segment (NE) or object (LX) ready for linking.
#[derive(Debug, Clone)]
pub(crate) struct Segment {
    /// Segment name in the MAP file (`_TEXT`, `CODE32`, ...).
    pub name: &'static str,
    /// Class name in the MAP file (`CODE`, `DATA`, `STACK`).
    pub class: &'static str,
    /// NE segment flags or LX object flags.
    pub flags: u32,
    /// Stored bytes.
    pub bytes: Vec<u8>,
    /// Memory size (at least the stored bytes).
    pub virtual_size: u32,
    pub labels: Vec<Label>,
    pub fixups: Vec<SiteFixup>,
}

/// Which field of an instruction a fixup patches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    /// The immediate (also the target of `call ptr16:16` and `call rel32`).
    Imm,
    /// The memory displacement.
    Disp,
}

/// A code segment under construction.
pub(crate) struct Code {
    program: &'static str,
    /// The assembler; add instructions here.
    pub a: CodeAssembler,
    /// The label set on the next instruction, and the instruction count
    /// when it was set.
    current: Option<(CodeLabel, usize)>,
    names: Vec<(&'static str, CodeLabel, bool)>,
    fixups: Vec<(CodeLabel, Field, SourceKind, Ref)>,
}

impl Code {
    /// An empty 16- or 32-bit code segment.
    pub fn new(program: &'static str, bits: u32) -> Result<Code> {
        let a = CodeAssembler::new(bits).map_err(|e| asm(program, e))?;
        Ok(Code {
            program,
            a,
            current: None,
            names: Vec::new(),
            fixups: Vec::new(),
        })
    }

    /// A new jump target, placed later with [`Code::place`].
    pub fn label(&mut self) -> CodeLabel {
        self.a.create_label()
    }

    /// Places `label` on the next instruction. Must come before any name or
    /// fixup of that instruction.
    pub fn place(&mut self, label: &mut CodeLabel) -> Result<()> {
        self.a.set_label(label).map_err(|e| asm(self.program, e))?;
        self.current = Some((*label, self.a.instructions().len()));
        Ok(())
    }

    /// The label of the next instruction, created when it has none yet.
    fn mark(&mut self) -> Result<CodeLabel> {
        let count = self.a.instructions().len();
        match self.current {
            Some((label, at)) if at == count => Ok(label),
            _ => {
                let mut label = self.a.create_label();
                self.place(&mut label)?;
                Ok(label)
            }
        }
    }

    /// Names the next instruction; the name is listed in the MAP file.
    pub fn public(&mut self, name: &'static str) -> Result<()> {
        let label = self.mark()?;
        self.names.push((name, label, true));
        Ok(())
    }

    /// Names the next instruction for tracepoints and tests only (not in
    /// the MAP file).
    pub fn local(&mut self, name: &'static str) -> Result<()> {
        let label = self.mark()?;
        self.names.push((name, label, false));
        Ok(())
    }

    /// Attaches a fixup to a field of the next instruction.
    pub fn fixup(&mut self, field: Field, kind: SourceKind, target: Ref) -> Result<()> {
        let label = self.mark()?;
        self.fixups.push((label, field, kind, target));
        Ok(())
    }

    /// Runs an assembler call, mapping its error.
    pub fn op(
        &mut self,
        f: impl FnOnce(&mut CodeAssembler) -> std::result::Result<(), iced_x86::IcedError>,
    ) -> Result<()> {
        f(&mut self.a).map_err(|e| asm(self.program, e))
    }

    /// Adds a prepared instruction.
    pub fn instr(&mut self, instruction: Instruction) -> Result<()> {
        self.op(|a| a.add_instruction(instruction))
    }

    /// `call far ptr16:16` to an import, or to a label of this module (any
    /// segment) with [`Ref::Symbol`]: `9A` with a ptr16:16 fixup.
    pub fn call_far_import(&mut self, target: Ref) -> Result<()> {
        self.fixup(Field::Imm, SourceKind::Ptr1616, target)?;
        self.op(|a| a.call_far(0, 0))
    }

    /// `call rel32` to an import (32-bit): `E8` with a self-relative fixup.
    pub fn call_rel32_import(&mut self, target: Ref) -> Result<()> {
        self.fixup(Field::Imm, SourceKind::Rel32, target)?;
        // Encoded by hand: the displacement is 0 until the loader fixes it.
        self.op(|a| a.db(&[0xE8, 0, 0, 0, 0]))
    }

    /// `push imm32` of a flat address in this module: `68` with an off32
    /// fixup. `value` is the address at the preferred base.
    pub fn push_address(&mut self, symbol: &'static str, value: u32) -> Result<()> {
        self.fixup(Field::Imm, SourceKind::Off32, Ref::Symbol(symbol))?;
        let instruction =
            Instruction::with1(Op::Pushd_imm32, value as i32).map_err(|e| asm(self.program, e))?;
        self.instr(instruction)
    }

    /// `mov reg32, imm32` of a flat address in this module: an off32
    /// fixup on the immediate. `value` is the address at the preferred base.
    pub fn mov_address(
        &mut self,
        reg: iced_x86::code_asm::AsmRegister32,
        symbol: &'static str,
        value: u32,
    ) -> Result<()> {
        self.fixup(Field::Imm, SourceKind::Off32, Ref::Symbol(symbol))?;
        let instruction =
            Instruction::with2(Op::Mov_r32_imm32, iced_x86::Register::from(reg), value)
                .map_err(|e| asm(self.program, e))?;
        self.instr(instruction)
    }

    /// Marks the next instruction's displacement as the flat address of
    /// `symbol` (an off32 fixup), for `[symbol]` memory operands.
    pub fn data_ref(&mut self, symbol: &'static str) -> Result<()> {
        self.fixup(Field::Disp, SourceKind::Off32, Ref::Symbol(symbol))
    }

    /// `mov reg16, imm16` of a segment's selector: a sel16 fixup.
    pub fn mov_selector(
        &mut self,
        reg: iced_x86::code_asm::AsmRegister16,
        segment: u16,
    ) -> Result<()> {
        self.fixup(Field::Imm, SourceKind::Sel16, Ref::Segment(segment))?;
        let instruction =
            Instruction::with2(Op::Mov_r16_imm16, iced_x86::Register::from(reg), 0u32)
                .map_err(|e| asm(self.program, e))?;
        self.instr(instruction)
    }

    /// Assembles the segment (at offset 0) and finds its labels and sites.
    pub fn finish(self, name: &'static str, class: &'static str, flags: u32) -> Result<Segment> {
        let program = self.program;
        let mut a = self.a;
        let bits = a.bitness();
        let result = a
            .assemble_options(0, BlockEncoderOptions::RETURN_NEW_INSTRUCTION_OFFSETS)
            .map_err(|e| asm(program, e))?;
        let bytes = result.inner.code_buffer.clone();
        let ip = |label: &CodeLabel| -> Result<u32> {
            let ip = result.label_ip(label).map_err(|e| asm(program, e))?;
            Ok(ip as u32)
        };
        let mut labels = Vec::new();
        for (name, label, public) in &self.names {
            labels.push(Label {
                name: (*name).to_string(),
                offset: ip(label)?,
                public: *public,
            });
        }
        let mut fixups = Vec::new();
        for (label, field, kind, target) in self.fixups {
            let at = ip(&label)?;
            let site = field_offset(&bytes, bits, at, field).ok_or_else(|| {
                crate::error::link_error(
                    program,
                    format!("{name}:{at:#x}: the instruction has no such field for a fixup"),
                )
            })?;
            fixups.push(SiteFixup {
                offset: at + site,
                kind,
                target,
            });
        }
        Ok(Segment {
            name,
            class,
            flags,
            virtual_size: bytes.len() as u32,
            bytes,
            labels,
            fixups,
        })
    }
}

/// Offset within the instruction at `at` of the field a fixup patches.
fn field_offset(bytes: &[u8], bits: u32, at: u32, field: Field) -> Option<u32> {
    let tail = bytes.get(at as usize..)?;
    let mut decoder = Decoder::try_with_ip(bits, tail, 0, DecoderOptions::NONE).ok()?;
    let instruction = decoder.decode();
    if instruction.is_invalid() {
        return None;
    }
    let offsets = decoder.get_constant_offsets(&instruction);
    let (has, offset) = match field {
        Field::Imm => (offsets.has_immediate(), offsets.immediate_offset()),
        Field::Disp => (offsets.has_displacement(), offsets.displacement_offset()),
    };
    has.then_some(offset as u32)
}

fn asm(program: &'static str, e: iced_x86::IcedError) -> BuildError {
    BuildError::Asm {
        program,
        message: e.to_string(),
    }
}

/// A data segment under construction: stored bytes, then zero-filled space.
pub(crate) struct Data {
    bytes: Vec<u8>,
    /// Zero-filled bytes after the stored ones.
    bss: u32,
    labels: Vec<Label>,
    fixups: Vec<SiteFixup>,
}

impl Data {
    /// An empty data segment.
    pub fn new() -> Data {
        Data {
            bytes: Vec::new(),
            bss: 0,
            labels: Vec::new(),
            fixups: Vec::new(),
        }
    }

    /// The offset of the next byte.
    pub fn here(&self) -> u32 {
        self.bytes.len() as u32 + self.bss
    }

    fn name(&mut self, name: &'static str) -> u32 {
        let offset = self.here();
        self.labels.push(Label {
            name: name.to_string(),
            offset,
            public: true,
        });
        offset
    }

    /// Stored bytes under a public name; returns their offset.
    pub fn bytes(&mut self, name: &'static str, bytes: &[u8]) -> u32 {
        // Stored data after zero-filled space stores those zeros too.
        let zeros = std::mem::take(&mut self.bss) as usize;
        self.bytes.resize(self.bytes.len() + zeros, 0);
        let offset = self.name(name);
        self.bytes.extend_from_slice(bytes);
        offset
    }

    /// A stored little-endian word.
    pub fn word(&mut self, name: &'static str, value: u16) -> u32 {
        self.bytes(name, &value.to_le_bytes())
    }

    /// A stored little-endian dword.
    pub fn dword(&mut self, name: &'static str, value: u32) -> u32 {
        self.bytes(name, &value.to_le_bytes())
    }

    /// A 16:16 far pointer to `target` (a ptr16:16 fixup), named `name`
    /// when given.
    pub fn far_ptr(&mut self, name: Option<&'static str>, target: &'static str) -> u32 {
        let offset = match name {
            Some(n) => self.name(n),
            None => self.here(),
        };
        self.fixups.push(SiteFixup {
            offset,
            kind: SourceKind::Ptr1616,
            target: Ref::Symbol(target),
        });
        self.bytes.extend_from_slice(&[0; 4]);
        offset
    }

    /// Stored bytes with no label; returns their offset.
    pub fn anon(&mut self, bytes: &[u8]) -> u32 {
        let zeros = std::mem::take(&mut self.bss) as usize;
        self.bytes.resize(self.bytes.len() + zeros, 0);
        let offset = self.here();
        self.bytes.extend_from_slice(bytes);
        offset
    }

    /// A pointer to `target` with no label: a flat address (`Off32`) or a
    /// 16:16 far pointer (`Ptr1616`); returns its offset.
    pub fn ptr(&mut self, kind: SourceKind, target: Ref) -> u32 {
        let offset = self.anon(&[0; 4]);
        self.fixups.push(SiteFixup {
            offset,
            kind,
            target,
        });
        offset
    }

    /// Zero-filled space (not stored in the file), after all stored data.
    pub fn zeroed(&mut self, name: &'static str, len: u32) -> u32 {
        let offset = self.name(name);
        self.bss += len;
        offset
    }

    /// The segment.
    pub fn finish(self, name: &'static str, class: &'static str, flags: u32) -> Segment {
        Segment {
            name,
            class,
            flags,
            virtual_size: self.bytes.len() as u32 + self.bss,
            bytes: self.bytes,
            labels: self.labels,
            fixups: self.fixups,
        }
    }
}

#[cfg(test)]
mod tests {
    use iced_x86::code_asm::*;
    use loader::SourceKind;

    use super::{Code, Data, Field, Ref};
    use crate::error::BuildError;

    #[test]
    fn fixup_sites_are_the_fields_of_their_instructions() {
        let mut c = Code::new("T", 16).unwrap();
        c.public("start").unwrap();
        c.op(|a| a.push(1)).unwrap();
        c.call_far_import(Ref::Symbol("start")).unwrap();
        c.fixup(Field::Disp, SourceKind::Off16, Ref::Symbol("start"))
            .unwrap();
        c.op(|a| a.mov(ax, word_ptr(0x1234))).unwrap();
        let s = c.finish("_TEXT", "CODE", 0).unwrap();
        // push 1 (2 bytes), 9A oooo ssss at 2, A1 disp16 at 7.
        let sites: Vec<(u32, SourceKind)> = s.fixups.iter().map(|f| (f.offset, f.kind)).collect();
        assert_eq!(sites, [(3, SourceKind::Ptr1616), (8, SourceKind::Off16)]);
        assert_eq!(s.bytes[2], 0x9A);
        assert_eq!(s.bytes[7], 0xA1);
        assert_eq!(s.labels[0].offset, 0);
    }

    #[test]
    fn a_fixup_on_a_missing_field_is_an_error() {
        let mut c = Code::new("T", 32).unwrap();
        c.fixup(Field::Imm, SourceKind::Off32, Ref::Symbol("x"))
            .unwrap();
        c.op(|a| a.ret()).unwrap();
        let err = c.finish("CODE32", "CODE", 0).unwrap_err();
        assert!(matches!(err, BuildError::Link { .. }), "{err}");
        assert!(err.to_string().contains("no such field"));
    }

    #[test]
    fn two_labels_on_one_instruction_share_it() {
        let mut c = Code::new("T", 32).unwrap();
        c.op(|a| a.nop()).unwrap();
        let mut l = c.label();
        c.place(&mut l).unwrap();
        c.public("a").unwrap();
        c.local("b").unwrap();
        c.op(|a| a.ret()).unwrap();
        let s = c.finish("CODE32", "CODE", 0).unwrap();
        let offsets: Vec<u32> = s.labels.iter().map(|l| l.offset).collect();
        assert_eq!(offsets, [1, 1]);
        assert!(s.labels[0].public && !s.labels[1].public);
    }

    #[test]
    fn stored_data_after_zero_fill_stores_the_zeros() {
        let mut d = Data::new();
        d.bytes("a", b"xy");
        let z = d.zeroed("z", 4);
        let b = d.word("b", 0x1234);
        let s = d.finish("_DATA", "DATA", 1);
        assert_eq!((z, b), (2, 6));
        assert_eq!(s.bytes, [b'x', b'y', 0, 0, 0, 0, 0x34, 0x12]);
        assert_eq!(s.virtual_size, 8);
        let mut d = Data::new();
        d.bytes("a", b"xy");
        d.zeroed("z", 4);
        let s = d.finish("_DATA", "DATA", 1);
        assert_eq!((s.bytes.len(), s.virtual_size), (2, 6));
    }
}
