//! What the compiler needs to know about the module being traced: its bytes
//! (the opcode at each tracepoint, the instructions of a routine for RETEP)
//! and its symbols (from a linker MAP file or debug information).
//!
//! [`ModuleImage`] is implemented over `loader`'s modules by the file layer
//! and by small fakes in tests; [`SymbolTable`] holds public symbols in
//! `object:offset` form, however they were read.

use std::collections::HashMap;

/// Read access to a module's objects (LX objects or NE segments), decoded:
/// iterated and compressed pages expanded, fixups not applied.
pub trait ModuleImage {
    /// Number of objects (segments); they are numbered from 1.
    fn object_count(&self) -> u32;

    /// The decoded bytes stored for `object` (what the file holds; the
    /// object's zero-filled tail beyond them is not included), or `None` if
    /// there is no such object.
    fn object_bytes(&self, object: u32) -> Option<&[u8]>;

    /// Whether `object` is a 32-bit object (`None` if unknown).
    fn is_32bit(&self, object: u32) -> Option<bool>;

    /// The signature of the module's debug information (`NB04` for IBM
    /// HLL, `NB0x` for CodeView), if it carries any.
    fn debug_signature(&self) -> Option<[u8; 4]> {
        None
    }

    /// The module's debug information, from its `NBxx` signature on (the
    /// LX debug section, or what is appended to the file), if it has any.
    fn debug_bytes(&self) -> Option<&[u8]> {
        None
    }

    /// Bytes of memory the object takes (its virtual size); by default the
    /// bytes stored.
    fn object_size(&self, object: u32) -> Option<u32> {
        self.object_bytes(object).map(|b| b.len() as u32)
    }

    /// The byte at `object:offset`: 0 past the stored bytes (the zero-filled
    /// part of an object), `None` for a missing object.
    fn byte_at(&self, object: u32, offset: u32) -> Option<u8> {
        let bytes = self.object_bytes(object)?;
        Some(bytes.get(offset as usize).copied().unwrap_or(0))
    }
}

/// A module image held in memory: one byte vector per object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryImage {
    /// Objects in order (object 1 first), with whether each is 32-bit.
    pub objects: Vec<(Vec<u8>, bool)>,
    /// Virtual sizes, when known (else the stored length counts).
    pub sizes: Vec<u32>,
    /// The signature of the module's debug information (`NB04`, `NB09`...),
    /// if it has any.
    pub debug: Option<[u8; 4]>,
}

impl ModuleImage for MemoryImage {
    fn object_count(&self) -> u32 {
        self.objects.len() as u32
    }

    fn object_bytes(&self, object: u32) -> Option<&[u8]> {
        let i = usize::try_from(object).ok()?.checked_sub(1)?;
        self.objects.get(i).map(|(b, _)| b.as_slice())
    }

    fn is_32bit(&self, object: u32) -> Option<bool> {
        let i = usize::try_from(object).ok()?.checked_sub(1)?;
        self.objects.get(i).map(|&(_, b)| b)
    }

    fn debug_signature(&self) -> Option<[u8; 4]> {
        self.debug
    }

    fn object_size(&self, object: u32) -> Option<u32> {
        let i = usize::try_from(object).ok()?.checked_sub(1)?;
        let stored = self.objects.get(i)?.0.len() as u32;
        Some(self.sizes.get(i).copied().unwrap_or(stored))
    }
}

/// One public symbol.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Symbol {
    /// Name as the linker wrote it.
    pub name: String,
    /// Object or segment number.
    pub object: u32,
    /// Offset within it.
    pub offset: u32,
}

/// Public symbols, looked up by name and by address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SymbolTable {
    symbols: Vec<Symbol>,
    /// Indexes sorted by (object, offset, index).
    by_address: Vec<usize>,
    /// Exact name to the first index.
    by_name: HashMap<String, usize>,
    /// Upper-case name to the first index.
    by_upper: HashMap<String, usize>,
}

impl SymbolTable {
    /// A table of `symbols` (duplicates by name keep the first).
    pub fn new(symbols: Vec<Symbol>) -> Self {
        let mut by_address: Vec<usize> = (0..symbols.len()).collect();
        by_address.sort_by_key(|&i| (symbols[i].object, symbols[i].offset, i));
        let mut by_name = HashMap::with_capacity(symbols.len());
        let mut by_upper = HashMap::with_capacity(symbols.len());
        for (i, s) in symbols.iter().enumerate() {
            by_name.entry(s.name.clone()).or_insert(i);
            by_upper.entry(s.name.to_ascii_uppercase()).or_insert(i);
        }
        SymbolTable {
            symbols,
            by_address,
            by_name,
            by_upper,
        }
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The symbols in the order given.
    pub fn symbols(&self) -> &[Symbol] {
        &self.symbols
    }

    /// The symbol called `name`; `ignore_case` is TRCUST's `/I`.
    pub fn lookup(&self, name: &str, ignore_case: bool) -> Option<&Symbol> {
        let i = if ignore_case {
            self.by_upper.get(&name.to_ascii_uppercase())
        } else {
            self.by_name.get(name)
        };
        i.map(|&i| &self.symbols[i])
    }

    /// Position in `by_address` of the first symbol after `object:offset`.
    fn after(&self, object: u32, offset: u32) -> usize {
        self.by_address.partition_point(|&i| {
            let s = &self.symbols[i];
            (s.object, s.offset) <= (object, offset)
        })
    }

    /// The end of the routine that starts at `sym`: the offset of the next
    /// symbol in the same object, if any.
    pub fn next_offset(&self, sym: &Symbol) -> Option<u32> {
        let at = self.after(sym.object, sym.offset);
        let next = &self.symbols[*self.by_address.get(at)?];
        (next.object == sym.object).then_some(next.offset)
    }

    /// The symbol containing `object:offset` (the last one at or before
    /// it in the same object) and its size: the distance to the next symbol
    /// of the object, or 0xFFFFFFFF for the last one.
    pub fn containing(&self, object: u32, offset: u32) -> Option<(&Symbol, u32)> {
        let at = self.after(object, offset).checked_sub(1)?;
        // The first of the symbols sharing this address.
        let found = &self.symbols[self.by_address[at]];
        if found.object != object {
            return None;
        }
        let first = self.by_address[..=at]
            .iter()
            .rev()
            .take_while(|&&i| {
                let s = &self.symbols[i];
                (s.object, s.offset) == (found.object, found.offset)
            })
            .last()
            .map(|&i| &self.symbols[i])?;
        let size = self
            .next_offset(first)
            .map_or(u32::MAX, |next| next - first.offset);
        Some((first, size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello() -> SymbolTable {
        let s = |n: &str, o, off| Symbol {
            name: n.into(),
            object: o,
            offset: off,
        };
        SymbolTable::new(vec![
            s("msg", 1, 0),
            s("startup", 2, 0),
            s("push28", 2, 5),
            s("push1", 2, 7),
            s("retsite", 2, 0x11),
        ])
    }

    #[test]
    fn lookups() {
        let t = hello();
        assert!(t.lookup("STARTUP", false).is_none());
        assert_eq!(t.lookup("STARTUP", true).unwrap().offset, 0);
        let (s, size) = t.containing(2, 8).unwrap();
        assert_eq!((s.name.as_str(), size), ("push1", 10));
        let (s, size) = t.containing(2, 0x11).unwrap();
        assert_eq!((s.name.as_str(), size), ("retsite", u32::MAX));
        assert!(t.containing(3, 0).is_none());
    }

    #[test]
    fn image_bytes() {
        let m = MemoryImage {
            objects: vec![(vec![0x48], false), (vec![0x68, 0x00], true)],
            sizes: vec![],
            debug: None,
        };
        assert_eq!(m.byte_at(2, 0), Some(0x68));
        assert_eq!(m.byte_at(2, 0x40), Some(0));
        assert_eq!(m.byte_at(3, 0), None);
        assert_eq!(m.byte_at(0, 0), None);
    }
}
