//! The permanent side of the writer: the directory of forwarding cells and
//! the tag blocks that hold every type record, with the strings and arrays
//! they reference. Type records are written once and never reclaimed.

use super::{TnfWriter, WriteError};
use crate::layout::{
    self, BLOCK_HEADER_SIZE, BLOCK_SIZE, DATA_START, DIRECTORY_SIZE, STRING_LIMIT, TAG_GENERATION,
    round8,
};
use crate::probe::{ProbeDesc, RecordType};
use crate::refs::{self, FULL, TAG};
use crate::types::{BUILTINS, Def, PROBE_TYPE_SLOTS, struct_size};

impl TnfWriter {
    /// Bytes from the tag area, 8-aligned, never crossing a block.
    pub(super) fn tag_alloc(&mut self, size: u32) -> Result<u32, WriteError> {
        let size = round8(size);
        if size > BLOCK_SIZE - BLOCK_HEADER_SIZE {
            return Err(WriteError::RecordTooLarge(size));
        }
        let block_start = self.tag_next & !(BLOCK_SIZE - 1);
        if self.tag_next == block_start || self.tag_next + size > block_start + BLOCK_SIZE {
            // Start a new tag block (the first, or the current one is full).
            let start = if self.tag_next == block_start {
                block_start
            } else {
                block_start + BLOCK_SIZE
            };
            if start + BLOCK_SIZE > DATA_START {
                return Err(WriteError::TagAreaFull);
            }
            self.block_header(start, TAG_GENERATION);
            self.tag_next = start + BLOCK_HEADER_SIZE;
        }
        let at = self.tag_next;
        self.tag_next += size;
        let block = at & !(BLOCK_SIZE - 1);
        self.put_u16(block + 8, (self.tag_next - block) as u16);
        self.put_u32(layout::header::NEXT_TAG_ALLOC, self.tag_next);
        Ok(at)
    }

    /// The record offset of a type already in the file.
    pub(super) fn type_offset(&self, name: &str) -> Result<u32, WriteError> {
        self.types
            .get(name)
            .copied()
            .ok_or_else(|| WriteError::UnknownType(name.to_string()))
    }

    /// A permanent TAG reference to the type `name`.
    pub(super) fn tag_of(&self, name: &str) -> Result<u32, WriteError> {
        Ok(refs::permanent(self.type_offset(name)?, TAG))
    }

    /// A string record in the tag area, tagged `type_name`.
    fn tag_string(&mut self, type_name: &str, s: &[u8]) -> Result<u32, WriteError> {
        let s = &s[..s.len().min(STRING_LIMIT)];
        let self_size = 8 + s.len() as u32 + 1;
        let at = self.tag_alloc(self_size)?;
        self.put_u32(at, self.tag_of(type_name)?);
        self.put_u32(at + 4, self_size);
        self.image[(at + 8) as usize..(at + 8) as usize + s.len()].copy_from_slice(s);
        Ok(at)
    }

    /// An array of permanent references in the tag area.
    fn tag_array(&mut self, type_name: &str, targets: &[u32]) -> Result<u32, WriteError> {
        let self_size = 8 + 4 * targets.len() as u32;
        let at = self.tag_alloc(self_size)?;
        self.put_u32(at, self.tag_of(type_name)?);
        self.put_u32(at + 4, self_size);
        for (i, t) in targets.iter().enumerate() {
            self.put_u32(at + 8 + 4 * i as u32, refs::permanent(*t, FULL));
        }
        Ok(at)
    }

    fn name_array(&mut self, names: &[&str]) -> Result<u32, WriteError> {
        let mut strings = Vec::with_capacity(names.len());
        for n in names {
            strings.push(self.tag_string("tnf_name", n.as_bytes())?);
        }
        self.tag_array("tnf_name_array", &strings)
    }

    fn type_array(&mut self, names: &[&str]) -> Result<u32, WriteError> {
        let offsets = names
            .iter()
            .map(|n| self.type_offset(n))
            .collect::<Result<Vec<_>, _>>()?;
        self.tag_array("tnf_type_array", &offsets)
    }

    /// The common head of a type record: tag, name, properties.
    fn type_head(
        &mut self,
        at: u32,
        metatype: &str,
        name: &str,
        props: &[&str],
    ) -> Result<(), WriteError> {
        self.put_u32(at, self.tag_of(metatype)?);
        let name = self.tag_string("tnf_name", name.as_bytes())?;
        self.put_u32(at + 4, refs::permanent(name, FULL));
        let props = self.type_array(props)?;
        self.put_u32(at + 8, refs::permanent(props, FULL));
        Ok(())
    }

    /// Writes the root, the metatypes, scalars, arrays, derived types and
    /// property markers, then the three fixed directory cells.
    pub(super) fn write_builtins(&mut self) -> Result<(), WriteError> {
        // Allocate every record first: type records refer to each other.
        for (name, _, _, def) in BUILTINS {
            let size = match def {
                Def::Struct(_) => 24,
                Def::Scalar(..) | Def::Marker => 20,
                Def::Array(..) => 24,
                Def::Derived(_) => 16,
            };
            let at = self.tag_alloc(size)?;
            self.types.insert((*name).to_string(), at);
        }
        for (name, metatype, props, def) in BUILTINS {
            let at = self.type_offset(name)?;
            self.type_head(at, metatype, name, props)?;
            match def {
                Def::Struct(slots) => {
                    let types: Vec<&str> = slots.iter().map(|s| s.1).collect();
                    let names: Vec<&str> = slots.iter().map(|s| s.0).collect();
                    let st = self.type_array(&types)?;
                    self.put_u32(at + 12, refs::permanent(st, FULL));
                    self.put_u32(at + 16, struct_size(types.iter().copied()));
                    let sn = self.name_array(&names)?;
                    self.put_u32(at + 20, refs::permanent(sn, FULL));
                }
                Def::Scalar(size, align) => {
                    self.put_u32(at + 12, *size);
                    self.put_u32(at + 16, *align);
                }
                Def::Marker => {}
                Def::Array(element, header) => {
                    let st = self.type_array(&["tnf_tag", "tnf_self_size"])?;
                    self.put_u32(at + 12, refs::permanent(st, FULL));
                    self.put_u32(at + 16, *header);
                    self.put_u32(at + 20, refs::permanent(self.type_offset(element)?, FULL));
                }
                Def::Derived(base) => {
                    self.put_u32(at + 12, refs::permanent(self.type_offset(base)?, FULL));
                }
            }
        }
        let cells = [
            (layout::FW_FILE_HEADER, "tnf_file_header"),
            (layout::FW_BLOCK_HEADER, "tnf_block_header"),
            (layout::FW_ROOT, "tnf_struct_type"),
        ];
        for (cell, name) in cells {
            self.put_u32(cell, refs::permanent(self.type_offset(name)?, FULL));
        }
        Ok(())
    }

    /// Writes a probe's type record and its directory cell; returns the cell.
    pub(super) fn write_probe_type(&mut self, desc: &ProbeDesc) -> Result<u32, WriteError> {
        let cell = self.fw_next;
        if cell + 4 > DIRECTORY_SIZE {
            return Err(WriteError::DirectoryFull);
        }
        let at = self.tag_alloc(28)?;
        self.type_head(
            at,
            "tnf_probe_type",
            &desc.name,
            &["tnf_struct", "tnf_tagged"],
        )?;
        let mut types = vec!["tnf_probe_event", "tnf_time_delta"];
        types.extend(desc.tnf_types());
        let mut names = vec!["tnf_tag", "time_delta"];
        names.extend(desc.args.iter().map(|(_, n)| n.as_str()));
        let st = self.type_array(&types)?;
        self.put_u32(at + 12, refs::permanent(st, FULL));
        self.put_u32(at + 16, struct_size(types.iter().copied()));
        let sn = self.name_array(&names)?;
        self.put_u32(at + 20, refs::permanent(sn, FULL));
        let s = self.tag_string("tnf_string", desc.type_string().as_bytes())?;
        self.put_u32(at + 24, refs::permanent(s, FULL));
        debug_assert_eq!(PROBE_TYPE_SLOTS.len(), 7);
        self.put_u32(cell, refs::permanent(at, FULL));
        self.fw_next += 4;
        self.put_u32(layout::header::NEXT_FW_ALLOC, self.fw_next);
        Ok(cell)
    }

    /// Writes a user record type (TNF_DEFINE_RECORD_n) as a struct type
    /// record: tag, members; its name goes into the type table.
    pub(super) fn write_record_type(&mut self, r: &RecordType) -> Result<(), WriteError> {
        let at = self.tag_alloc(24)?;
        self.type_head(
            at,
            "tnf_struct_type",
            &r.name,
            &["tnf_struct", "tnf_tagged"],
        )?;
        let mut types = vec!["tnf_tag"];
        types.extend(r.members.iter().map(|(t, _)| t.tnf_type()));
        let mut names = vec!["tnf_tag"];
        names.extend(r.members.iter().map(|(_, n)| n.as_str()));
        let st = self.type_array(&types)?;
        self.put_u32(at + 12, refs::permanent(st, FULL));
        self.put_u32(at + 16, struct_size(types.iter().copied()));
        let sn = self.name_array(&names)?;
        self.put_u32(at + 20, refs::permanent(sn, FULL));
        self.types.insert(r.name.clone(), at);
        Ok(())
    }
}
