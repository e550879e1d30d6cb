//! Type records as the reader decodes them. A type record's layout is
//! given by its metatype (the type its own tag points at): struct and probe
//! types, scalar, array and derived types have the fixed layouts of
//! [`crate::types`]; the root `tnf_struct_type` is the record whose tag
//! points at itself. Slot offsets follow from the slot types' sizes and
//! alignments, exactly as the writer laid them out.

use super::{ReadError, ReadErrorKind, TnfFile};
use crate::refs::{self, Target};

/// How deep derived chains, forwarding cells and nested records may go.
pub(crate) const MAX_DEPTH: usize = 16;

/// One slot of a struct type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Its name (from `slot_names`).
    pub name: String,
    /// Offset of its type record.
    pub ty: u32,
    /// Byte offset within the record.
    pub offset: u32,
}

/// The shape of a type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeKind {
    /// A record with named slots; `string` is a probe type's attributes.
    Struct {
        /// The slots, tag first.
        slots: Vec<Slot>,
        /// `type_size`.
        size: u32,
        /// A probe type record's `tnf_string`.
        string: Option<String>,
    },
    /// `tag, self_size, elements`.
    Array {
        /// The element type.
        element: u32,
        /// Bytes before the first element.
        header_size: u32,
    },
    /// An inline value.
    Scalar {
        /// Bytes.
        size: u32,
        /// Alignment.
        align: u32,
    },
    /// Another type under a new name, with more properties.
    Derived {
        /// The base type.
        base: u32,
    },
}

/// A decoded type record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Type {
    /// Where its record is.
    pub offset: u32,
    /// `tnf_name`.
    pub name: String,
    /// Property type names.
    pub properties: Vec<String>,
    /// The metatype's name (`tnf_struct_type`, `tnf_probe_type`, ...).
    pub metatype: String,
    /// Its shape.
    pub kind: TypeKind,
}

/// How a slot of some type is stored, all derivations followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf {
    /// A 32-bit reference.
    Reference,
    /// A signed integer of this many bytes.
    Int(u32),
    /// An unsigned integer of this many bytes.
    UInt(u32),
    /// A character.
    Char,
    /// A float of this many bytes.
    Float(u32),
    /// Hex-printed (`tnf_opaque`) of this many bytes.
    Opaque(u32),
}

impl Leaf {
    /// Size and alignment in a record.
    pub fn layout(self) -> (u32, u32) {
        match self {
            Leaf::Reference => (4, 4),
            Leaf::Char => (1, 1),
            Leaf::Int(n) | Leaf::UInt(n) | Leaf::Float(n) | Leaf::Opaque(n) => (n, n.max(1)),
        }
    }
}

impl TnfFile<'_> {
    /// Follows forwarding cells from `offset` to a record.
    pub(crate) fn chase(&self, mut offset: u32) -> Result<u32, ReadError> {
        for _ in 0..MAX_DEPTH {
            if offset as usize + 4 > self.view.data.len() {
                return Err(ReadError::at(
                    self.view.data.len(),
                    ReadErrorKind::OutOfFile(offset),
                ));
            }
            let w = self.view.u32(offset)?;
            if refs::ref_type(w) != refs::RefType::Full || w == 0 {
                return Ok(offset);
            }
            offset = match refs::decode(w, offset, self.header.log_size) {
                Target::Permanent(t) => t,
                _ => return Err(ReadError::at(offset as usize, ReadErrorKind::BadForward(w))),
            };
        }
        Err(ReadError::at(offset as usize, ReadErrorKind::Loop))
    }

    /// The record a permanent reference at `at` points to (forwarding cells
    /// followed), or None for a zero reference.
    pub(crate) fn permanent_target(&self, at: u32) -> Result<Option<u32>, ReadError> {
        let w = self.view.u32(at)?;
        match refs::decode(w, at, self.header.log_size) {
            Target::Null => Ok(None),
            Target::Permanent(t) if t as usize + 4 > self.view.data.len() => {
                Err(ReadError::at(at as usize, ReadErrorKind::OutOfFile(t)))
            }
            Target::Permanent(t) => self.chase(t).map(Some),
            Target::Reclaimable { .. } => {
                Err(ReadError::at(at as usize, ReadErrorKind::NotPermanent(w)))
            }
        }
    }

    fn required_target(&self, at: u32) -> Result<u32, ReadError> {
        self.permanent_target(at)?
            .ok_or(ReadError::at(at as usize, ReadErrorKind::NullType))
    }

    /// A string record's characters (up to its NUL or its self_size).
    pub(crate) fn string_at(&self, offset: u32) -> Result<String, ReadError> {
        let size = self.view.u32(offset + 4)?;
        if !(8..=8 + 4096).contains(&size) {
            return Err(ReadError::at(
                offset as usize + 4,
                ReadErrorKind::BadSize(size),
            ));
        }
        let chars = self.view.bytes(offset + 8, (size - 8) as usize)?;
        let end = chars.iter().position(|b| *b == 0).unwrap_or(chars.len());
        Ok(String::from_utf8_lossy(&chars[..end]).into_owned())
    }

    /// The targets of an array of references.
    fn ref_array(&self, offset: u32) -> Result<Vec<u32>, ReadError> {
        let size = self.view.u32(offset + 4)?;
        if !(8..=4096).contains(&size) || size % 4 != 0 {
            return Err(ReadError::at(
                offset as usize + 4,
                ReadErrorKind::BadSize(size),
            ));
        }
        (0..(size - 8) / 4)
            .map(|i| self.required_target(offset + 8 + 4 * i))
            .collect()
    }

    /// Decodes the type record at `offset` (memoised).
    pub(crate) fn load_type(&mut self, offset: u32, depth: usize) -> Result<u32, ReadError> {
        if self.types.contains_key(&offset) {
            return Ok(offset);
        }
        if depth > MAX_DEPTH {
            return Err(ReadError::at(offset as usize, ReadErrorKind::Loop));
        }
        let meta_at = self.required_target(offset)?;
        let name_at = self.required_target(offset + 4)?;
        let name = self.string_at(name_at)?;
        let metatype = if meta_at == offset {
            name.clone()
        } else {
            let meta_name_at = self.required_target(meta_at + 4)?;
            self.string_at(meta_name_at)?
        };
        let mut properties = Vec::new();
        if let Some(props) = self.permanent_target(offset + 8)? {
            for p in self.ref_array(props)? {
                let n = self.required_target(p + 4)?;
                properties.push(self.string_at(n)?);
            }
        }
        let bad = |why: &'static str| ReadError::at(offset as usize, ReadErrorKind::BadType(why));
        // Insert a placeholder first: a type may refer to itself (the root).
        let placeholder = Type {
            offset,
            name: name.clone(),
            properties: properties.clone(),
            metatype: metatype.clone(),
            kind: TypeKind::Scalar { size: 4, align: 4 },
        };
        self.types.insert(offset, placeholder);
        let kind = match metatype.as_str() {
            "tnf_struct_type" | "tnf_probe_type" => {
                let types = match self.permanent_target(offset + 12)? {
                    Some(a) => self.ref_array(a)?,
                    None => Vec::new(),
                };
                let size = self.view.u32(offset + 16)?;
                let names = match self.permanent_target(offset + 20)? {
                    Some(a) => self.ref_array(a)?,
                    None => Vec::new(),
                };
                if names.len() != types.len() {
                    return Err(bad("slot_names and slot_types differ in length"));
                }
                let mut slots = Vec::with_capacity(types.len());
                let mut at = 0u32;
                for (ty, name) in types.into_iter().zip(names) {
                    self.load_type(ty, depth + 1)?;
                    let (sz, align) = self.leaf(ty)?.layout();
                    at = at.next_multiple_of(align);
                    slots.push(Slot {
                        name: self.string_at(name)?,
                        ty,
                        offset: at,
                    });
                    at += sz;
                }
                if at > size || size > 4096 {
                    return Err(bad("slots do not fit type_size"));
                }
                let string = if metatype == "tnf_probe_type" {
                    match self.permanent_target(offset + 24)? {
                        Some(s) => Some(self.string_at(s)?),
                        None => None,
                    }
                } else {
                    None
                };
                TypeKind::Struct {
                    slots,
                    size,
                    string,
                }
            }
            "tnf_array_type" => {
                let header_size = self.view.u32(offset + 16)?;
                let element = self.required_target(offset + 20)?;
                self.load_type(element, depth + 1)?;
                if !(8..=64).contains(&header_size) {
                    return Err(bad("array header_size outside 8..=64"));
                }
                TypeKind::Array {
                    element,
                    header_size,
                }
            }
            "tnf_derived_type" => {
                let base = self.required_target(offset + 12)?;
                self.load_type(base, depth + 1)?;
                TypeKind::Derived { base }
            }
            "tnf_scalar_type" => {
                let size = self.view.u32(offset + 12)?;
                let align = self.view.u32(offset + 16)?;
                if size > 8 || align > 8 {
                    return Err(bad("scalar larger than 8 bytes"));
                }
                TypeKind::Scalar { size, align }
            }
            _ => {
                return Err(bad(
                    "its metatype is none of struct, probe, array, derived, scalar",
                ));
            }
        };
        if let Some(t) = self.types.get_mut(&offset) {
            t.kind = kind;
        }
        Ok(offset)
    }

    /// A loaded type.
    pub fn type_at(&self, offset: u32) -> Option<&Type> {
        self.types.get(&offset)
    }

    /// How a value of type `ty` is stored.
    pub fn leaf(&self, ty: u32) -> Result<Leaf, ReadError> {
        let mut t = ty;
        let mut opaque = false;
        for _ in 0..MAX_DEPTH {
            let Some(info) = self.types.get(&t) else {
                return Err(ReadError::at(
                    t as usize,
                    ReadErrorKind::BadType("not a loaded type"),
                ));
            };
            if info.properties.iter().any(|p| p == "tnf_tagged") {
                return Ok(Leaf::Reference);
            }
            opaque |=
                info.properties.iter().any(|p| p == "tnf_opaque") || info.name == "tnf_opaque";
            match &info.kind {
                TypeKind::Derived { base } => t = *base,
                TypeKind::Struct { .. } | TypeKind::Array { .. } => return Ok(Leaf::Reference),
                TypeKind::Scalar { size, .. } => {
                    let size = *size;
                    return Ok(if opaque {
                        Leaf::Opaque(size)
                    } else if info.name.starts_with("tnf_float") {
                        Leaf::Float(size)
                    } else if info.name == "tnf_char" {
                        Leaf::Char
                    } else if info.name.starts_with("tnf_uint") {
                        Leaf::UInt(size)
                    } else {
                        Leaf::Int(size)
                    });
                }
            }
        }
        Err(ReadError::at(ty as usize, ReadErrorKind::Loop))
    }

    /// The type a derived chain ends at.
    pub fn base_of(&self, ty: u32) -> u32 {
        let mut t = ty;
        for _ in 0..MAX_DEPTH {
            match self.types.get(&t).map(|i| &i.kind) {
                Some(TypeKind::Derived { base }) => t = *base,
                _ => break,
            }
        }
        t
    }
}
