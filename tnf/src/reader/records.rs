//! Walking the blocks for records, and decoding a record's slots into
//! values with references resolved.

use super::types::{Leaf, MAX_DEPTH, TypeKind};
use super::{ReadError, ReadErrorKind, TnfFile};
use crate::layout::{BLOCK_SIZE, round8};
use crate::refs::{self, RefType, Target};

/// What a record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// The file header (at offset 4).
    FileHeader,
    /// A block header.
    BlockHeader,
    /// A type record (in a tag block).
    Type,
    /// A probe event.
    Event(Event),
    /// Any other tagged record: schedule records, strings, arrays.
    Other,
}

/// An event record's decoded head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// The probe type record.
    pub probe: u32,
    /// The schedule record (None if it was overwritten).
    pub sched: Option<u32>,
    /// ns since the schedule record's time_base.
    pub time_delta: u32,
}

/// One record of the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Its offset in the file.
    pub offset: u32,
    /// Its type record (for an event, the probe type).
    pub ty: u32,
    /// Its size in bytes.
    pub size: u32,
    /// What it is.
    pub kind: RecordKind,
}

/// A slot's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A float (float32 widened).
    Float(f64),
    /// A character.
    Char(u8),
    /// A hex-printed value and its size in bytes.
    Opaque(u64, u32),
    /// A NULL or overwritten (dangling) reference.
    Null,
    /// A reference to a type record.
    TypeRef {
        /// The type record.
        offset: u32,
        /// Its name.
        name: String,
    },
    /// A reference to a string.
    Str {
        /// The string record.
        offset: u32,
        /// Its characters.
        text: String,
    },
    /// A reference to another record (a struct or an array).
    Ref {
        /// The record.
        offset: u32,
        /// Its type's name.
        type_name: String,
    },
}

impl TnfFile<'_> {
    pub(super) fn read_records(&mut self) -> Result<(), ReadError> {
        let fh_type = self.record_type(4)?;
        let size = self.struct_size(fh_type, 4)?;
        self.records.push(Record {
            offset: 4,
            ty: fh_type,
            size,
            kind: RecordKind::FileHeader,
        });
        let first = self.header.directory_size / BLOCK_SIZE;
        for block in first..self.header.block_count {
            let b = block * BLOCK_SIZE;
            if self.view.u32(b)? == 0 {
                continue;
            }
            let ty = self.record_type(b)?;
            let valid = self.view.u16(b + 8)?;
            if u32::from(valid) < self.header.block_header_size || u32::from(valid) > BLOCK_SIZE {
                return Err(ReadError::at(
                    b as usize + 8,
                    ReadErrorKind::BadBytesValid(valid),
                ));
            }
            self.records.push(Record {
                offset: b,
                ty,
                size: self.header.block_header_size,
                kind: RecordKind::BlockHeader,
            });
            let end = b + u32::from(valid);
            let mut p = b + self.header.block_header_size;
            while p + 4 <= end {
                let w = self.view.u32(p)?;
                let record = match refs::ref_type(w) {
                    RefType::Full => {
                        p += 4;
                        continue;
                    }
                    RefType::Reserved => {
                        return Err(ReadError::at(p as usize, ReadErrorKind::Reserved(w)));
                    }
                    RefType::Tag => self.tagged_record(p)?,
                    RefType::Pair => self.event_record(p, w)?,
                };
                if record.size > end - p {
                    return Err(ReadError::at(
                        p as usize,
                        ReadErrorKind::PastBlock {
                            size: record.size,
                            left: end - p,
                        },
                    ));
                }
                p += round8(record.size.max(4));
                self.records.push(record);
            }
        }
        Ok(())
    }

    /// Loads the type a record's tag at `at` points to.
    fn record_type(&mut self, at: u32) -> Result<u32, ReadError> {
        let ty = self
            .permanent_target(at)?
            .ok_or(ReadError::at(at as usize, ReadErrorKind::NullType))?;
        self.check_in_file(ty, at)?;
        self.load_type(ty, 0)
    }

    fn check_in_file(&self, target: u32, at: u32) -> Result<(), ReadError> {
        if target >= self.header.block_count * BLOCK_SIZE {
            return Err(ReadError::at(at as usize, ReadErrorKind::OutOfFile(target)));
        }
        Ok(())
    }

    fn struct_size(&self, ty: u32, at: u32) -> Result<u32, ReadError> {
        match self.types.get(&self.base_of(ty)).map(|t| &t.kind) {
            Some(TypeKind::Struct { size, .. }) => Ok(*size),
            _ => Err(ReadError::at(
                at as usize,
                ReadErrorKind::NotARecord(self.type_name(ty)),
            )),
        }
    }

    /// A type's name ("?" if unknown).
    pub fn type_name(&self, ty: u32) -> String {
        self.types
            .get(&ty)
            .map(|t| t.name.clone())
            .unwrap_or_else(|| "?".to_string())
    }

    fn tagged_record(&mut self, p: u32) -> Result<Record, ReadError> {
        let ty = self.record_type(p)?;
        let base = self.base_of(ty);
        let size = match self.types.get(&base).map(|t| &t.kind) {
            Some(TypeKind::Struct { size, .. }) => *size,
            Some(TypeKind::Array { header_size, .. }) => {
                let s = self.view.u32(p + 4)?;
                if s < *header_size || s > BLOCK_SIZE {
                    return Err(ReadError::at(p as usize + 4, ReadErrorKind::BadSize(s)));
                }
                s
            }
            _ => {
                return Err(ReadError::at(
                    p as usize,
                    ReadErrorKind::NotARecord(self.type_name(ty)),
                ));
            }
        };
        let meta = self.type_name(ty);
        let kind = if matches!(
            meta.as_str(),
            "tnf_struct_type"
                | "tnf_probe_type"
                | "tnf_scalar_type"
                | "tnf_array_type"
                | "tnf_derived_type"
        ) {
            self.load_type(p, 0)?;
            RecordKind::Type
        } else {
            RecordKind::Other
        };
        Ok(Record {
            offset: p,
            ty,
            size,
            kind,
        })
    }

    fn event_record(&mut self, p: u32, w: u32) -> Result<Record, ReadError> {
        let bad = || ReadError::at(p as usize, ReadErrorKind::BadPair(w));
        let tag16 = w >> 16;
        let cell = match tag16 & 3 {
            1 => tag16 & !3,
            0 => p + tag16,
            _ => return Err(bad()),
        };
        if cell < 512 || cell >= self.header.block_count * BLOCK_SIZE {
            return Err(bad());
        }
        let probe = self.record_type(cell)?;
        let size = self.struct_size(probe, p)?;
        if size < 8 {
            return Err(bad());
        }
        let ref16 = w & 0xFFFF;
        if ref16 & 3 != 1 {
            return Err(bad());
        }
        let sched = self.reclaim(p + (ref16 & !3))?;
        let time_delta = self.view.u32(p + 4)?;
        Ok(Record {
            offset: p,
            ty: probe,
            size,
            kind: RecordKind::Event(Event {
                probe,
                sched,
                time_delta,
            }),
        })
    }

    /// Resolves the reference at `at`: NULL, or overwritten, gives None.
    pub(crate) fn reclaim(&self, at: u32) -> Result<Option<u32>, ReadError> {
        let w = self.view.u32(at)?;
        match refs::decode(w, at, self.header.log_size) {
            Target::Null => Ok(None),
            Target::Permanent(t) => {
                self.check_in_file(t, at)?;
                self.chase(t).map(Some)
            }
            Target::Reclaimable { offset, gen_delta } => {
                let Some((source_gen, _)) = self.block_generation(at) else {
                    return Ok(None);
                };
                let Some((target_gen, valid)) = self.block_generation(offset) else {
                    return Ok(None);
                };
                let in_block = offset & (BLOCK_SIZE - 1);
                let alive = target_gen == source_gen.wrapping_add(gen_delta as u32)
                    && in_block >= self.header.block_header_size
                    && in_block < valid;
                if alive {
                    self.chase(offset).map(Some)
                } else {
                    Ok(None)
                }
            }
        }
    }

    /// The record's slots, named, with values: an event's first slot is
    /// its probe type, followed by the synthetic `tnf_tag_arg` (its
    /// schedule record).
    pub fn slots(&self, record: &Record) -> Result<Vec<(String, Value)>, ReadError> {
        self.slots_at(record.offset, record.ty, record.kind, 0)
    }

    fn slots_at(
        &self,
        offset: u32,
        ty: u32,
        kind: RecordKind,
        depth: usize,
    ) -> Result<Vec<(String, Value)>, ReadError> {
        if depth > MAX_DEPTH {
            return Err(ReadError::at(offset as usize, ReadErrorKind::Loop));
        }
        let base = self.base_of(ty);
        let Some(info) = self.types.get(&base) else {
            return Err(ReadError::at(
                offset as usize,
                ReadErrorKind::BadType("not a loaded type"),
            ));
        };
        let mut out = Vec::new();
        match &info.kind {
            TypeKind::Struct { slots, .. } => {
                for (i, slot) in slots.iter().enumerate() {
                    let at = offset + slot.offset;
                    if i == 0 {
                        out.push((slot.name.clone(), self.type_ref(ty)));
                        if let RecordKind::Event(e) = kind {
                            let v = match e.sched {
                                Some(s) => self.describe(s)?,
                                None => Value::Null,
                            };
                            out.push(("tnf_tag_arg".to_string(), v));
                        }
                        continue;
                    }
                    out.push((slot.name.clone(), self.value(slot.ty, at)?));
                }
            }
            TypeKind::Array {
                element,
                header_size,
            } => {
                out.push(("tnf_tag".to_string(), self.type_ref(ty)));
                let self_size = self.view.u32(offset + 4)?;
                out.push((
                    "tnf_self_size".to_string(),
                    Value::UInt(u64::from(self_size)),
                ));
                let leaf = self.leaf(*element)?;
                if leaf == Leaf::Char {
                    out.push((
                        "chars".to_string(),
                        Value::Str {
                            offset,
                            text: self.string_at(offset)?,
                        },
                    ));
                } else {
                    let (size, _) = leaf.layout();
                    let n = self_size.saturating_sub(*header_size) / size.max(1);
                    for i in 0..n.min(1024) {
                        out.push((
                            i.to_string(),
                            self.value(*element, offset + header_size + i * size)?,
                        ));
                    }
                }
            }
            _ => {
                return Err(ReadError::at(
                    offset as usize,
                    ReadErrorKind::NotARecord(info.name.clone()),
                ));
            }
        }
        Ok(out)
    }

    fn type_ref(&self, ty: u32) -> Value {
        Value::TypeRef {
            offset: ty,
            name: self.type_name(ty),
        }
    }

    /// What a reference to the record at `target` shows.
    fn describe(&self, target: u32) -> Result<Value, ReadError> {
        if let Some(t) = self.types.get(&target) {
            return Ok(Value::TypeRef {
                offset: target,
                name: t.name.clone(),
            });
        }
        let tag = self.view.u32(target)?;
        if refs::ref_type(tag) != RefType::Tag {
            return Ok(Value::Ref {
                offset: target,
                type_name: "?".to_string(),
            });
        }
        let Some(ty) = self.permanent_target(target)? else {
            return Ok(Value::Null);
        };
        let base = self.base_of(ty);
        if let Some(TypeKind::Array { element, .. }) = self.types.get(&base).map(|t| &t.kind)
            && self.leaf(*element)? == Leaf::Char
        {
            return Ok(Value::Str {
                offset: target,
                text: self.string_at(target)?,
            });
        }
        Ok(Value::Ref {
            offset: target,
            type_name: self.type_name(ty),
        })
    }

    /// The value of type `ty` stored at `at`.
    pub fn value(&self, ty: u32, at: u32) -> Result<Value, ReadError> {
        let v = &self.view;
        Ok(match self.leaf(ty)? {
            Leaf::Reference => match self.reclaim(at)? {
                None => Value::Null,
                Some(t) => self.describe(t)?,
            },
            Leaf::Char => Value::Char(v.u8(at)?),
            Leaf::Int(1) => Value::Int(i64::from(v.u8(at)? as i8)),
            Leaf::Int(2) => Value::Int(i64::from(v.u16(at)? as i16)),
            Leaf::Int(4) => Value::Int(i64::from(v.u32(at)? as i32)),
            Leaf::Int(_) => Value::Int(v.u64(at)? as i64),
            Leaf::UInt(1) => Value::UInt(u64::from(v.u8(at)?)),
            Leaf::UInt(2) => Value::UInt(u64::from(v.u16(at)?)),
            Leaf::UInt(4) => Value::UInt(u64::from(v.u32(at)?)),
            Leaf::UInt(_) => Value::UInt(v.u64(at)?),
            Leaf::Float(4) => Value::Float(f64::from(f32::from_bits(v.u32(at)?))),
            Leaf::Float(_) => Value::Float(f64::from_bits(v.u64(at)?)),
            Leaf::Opaque(8) => Value::Opaque(v.u64(at)?, 8),
            Leaf::Opaque(n) => Value::Opaque(u64::from(v.u32(at)?), n),
        })
    }

    /// The named slots of the record at `offset` (for schedule records and
    /// user records referenced from events).
    pub fn record_slots(&self, offset: u32) -> Result<Vec<(String, Value)>, ReadError> {
        let ty = self
            .permanent_target(offset)?
            .ok_or(ReadError::at(offset as usize, ReadErrorKind::NullType))?;
        self.slots_at(offset, ty, RecordKind::Other, 1)
    }
}
