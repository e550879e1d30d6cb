//! Methods on [`Module`]: construction from scratch, lookups for later
//! crates (object bytes, entries, exports, imports), and storing the chain
//! words that NE relocation chains and LX internal chains keep in the image.

use std::collections::BTreeMap;

use crate::error::WriteError;
use crate::model::*;
use crate::{Format, stub};

impl Module {
    /// An empty LX program with the default stub, 4 KiB pages and no objects.
    pub fn new_lx(name: &str) -> Self {
        Module {
            format: Format::Lx,
            stub: stub::default_stub(),
            name: name.to_string(),
            description: None,
            flags: 0x200,
            objects: Vec::new(),
            entries: Vec::new(),
            resident_names: Vec::new(),
            nonresident_names: Vec::new(),
            imports: Vec::new(),
            fixups: Vec::new(),
            start: None,
            stack: None,
            auto_data: None,
            heap_size: 0,
            stack_size: 0,
            resources: Vec::new(),
            lx: Some(LxOptions::default()),
            ne: None,
        }
    }

    /// An empty NE program with the default stub and no segments.
    pub fn new_ne(name: &str) -> Self {
        Module {
            format: Format::Ne,
            flags: 0x0202,
            lx: None,
            ne: Some(NeOptions::default()),
            ..Module::new_lx(name)
        }
    }

    /// Appends an object (LX: the data is split into pages of the page size;
    /// NE: one segment block) and returns its 1-based number.
    pub fn add_object(&mut self, flags: u32, virtual_size: u32, data: &[u8]) -> u16 {
        let pages = match self.format {
            Format::Ne if data.is_empty() => Vec::new(),
            Format::Ne => vec![Page::legal(data.to_vec())],
            Format::Lx => data
                .chunks(self.page_size().max(1) as usize)
                .map(|c| Page::legal(c.to_vec()))
                .collect(),
        };
        let base = if self.format == Format::Lx {
            0x10000 * (self.objects.len() as u32 + 1)
        } else {
            0
        };
        self.objects.push(Object {
            flags,
            base,
            virtual_size,
            pages,
        });
        self.objects.len() as u16
    }

    /// Adds an imported module name (if new) and returns its 1-based number.
    pub fn import_module(&mut self, name: &str) -> u16 {
        match self.imports.iter().position(|n| n == name) {
            Some(i) => i as u16 + 1,
            None => {
                self.imports.push(name.to_string());
                self.imports.len() as u16
            }
        }
    }

    /// Adds an exported entry point with the next free ordinal and a
    /// resident name; returns the ordinal. The exported flag is set.
    pub fn add_export(&mut self, name: &str, point: EntryPoint) -> u16 {
        let ordinal = self.entries.iter().map(|e| e.ordinal).max().unwrap_or(0) + 1;
        self.entries.push(Entry {
            ordinal,
            flags: 1,
            point,
        });
        self.resident_names.push(Name {
            name: name.to_string(),
            ordinal,
        });
        ordinal
    }

    /// Adds a fixup site as a record of its own.
    pub fn add_fixup(&mut self, object: u16, offset: u32, kind: SourceKind, target: Target) {
        let record = self.fixups.last().map_or(0, |f| f.record + 1);
        self.fixups.push(Fixup {
            record,
            object,
            offset,
            kind,
            alias: false,
            target,
            additive: None,
            add_to_site: false,
            chained: false,
        });
    }

    /// LX page size, or 0 for NE (a segment is one block).
    pub fn page_size(&self) -> u32 {
        self.lx.as_ref().map_or(0, |o| o.page_size)
    }

    /// Object or segment `number` (1-based).
    pub fn object(&self, number: u16) -> Option<&Object> {
        self.objects.get(usize::from(number).checked_sub(1)?)
    }

    /// The unrelocated image of object `number`, virtual size long.
    pub fn object_bytes(&self, number: u16) -> Option<Vec<u8>> {
        Some(self.object(number)?.image(self.page_size()))
    }

    /// The unrelocated byte at `object:offset`, `None` outside the object.
    pub fn byte_at(&self, at: Address) -> Option<u8> {
        self.object(at.object)?.byte_at(self.page_size(), at.offset)
    }

    /// 16- or 32-bit, from the object's flags.
    pub fn bitness(&self, number: u16) -> Option<Bitness> {
        let big = self.object(number)?.flags & 0x2000 != 0;
        Some(if big {
            Bitness::Bits32
        } else {
            Bitness::Bits16
        })
    }

    /// Program, library or driver.
    pub fn module_type(&self) -> ModuleType {
        match self.format {
            Format::Ne if self.flags & 0x8000 != 0 => ModuleType::Library,
            Format::Ne => ModuleType::Program,
            Format::Lx => match self.flags & 0x38000 {
                0 => ModuleType::Program,
                0x8000 => ModuleType::Library,
                0x20000 => ModuleType::PhysicalDriver,
                0x28000 => ModuleType::VirtualDriver,
                other => ModuleType::Other(other),
            },
        }
    }

    /// The entry with this ordinal.
    pub fn entry(&self, ordinal: u16) -> Option<&Entry> {
        self.entries.iter().find(|e| e.ordinal == ordinal)
    }

    /// The exported name of an ordinal (resident names first).
    pub fn export_name(&self, ordinal: u16) -> Option<&str> {
        self.resident_names
            .iter()
            .chain(&self.nonresident_names)
            .find(|n| n.ordinal == ordinal)
            .map(|n| n.name.as_str())
    }

    /// The entry exported under `name` (case-sensitive, as OS/2 does).
    pub fn export(&self, name: &str) -> Option<&Entry> {
        let n = self
            .resident_names
            .iter()
            .chain(&self.nonresident_names)
            .find(|n| n.name == name)?;
        self.entry(n.ordinal)
    }

    /// Fixup counts by `"source/target"` kind name.
    pub fn fixup_kinds(&self) -> BTreeMap<String, usize> {
        let mut kinds = BTreeMap::new();
        for f in &self.fixups {
            *kinds
                .entry(format!("{}/{}", f.kind.name(), f.target.kind_name()))
                .or_insert(0) += 1;
        }
        kinds
    }

    /// Imported (module name, ordinal) pairs, sorted and without repeats.
    pub fn imports_by_ordinal(&self) -> Vec<(String, u32)> {
        let mut out: Vec<(String, u32)> = self
            .fixups
            .iter()
            .filter_map(|f| match f.target {
                Target::ImportOrdinal { module, ordinal } => Some((
                    self.imports
                        .get(usize::from(module).checked_sub(1)?)?
                        .clone(),
                    ordinal,
                )),
                _ => None,
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Puts the fixups in the order the writers produce and the readers
    /// return: records (runs of sites sharing a record number) ordered by
    /// source object, then (LX) by the page of their last site, keeping
    /// their relative order otherwise; records renumbered 0, 1, 2...
    pub fn normalize_fixups(&mut self) {
        let page_size = self.page_size();
        let mut groups: Vec<Vec<Fixup>> = Vec::new();
        for f in std::mem::take(&mut self.fixups) {
            match groups.last_mut() {
                Some(g) if g[0].record == f.record => g.push(f),
                _ => groups.push(vec![f]),
            }
        }
        let page = |g: &Vec<Fixup>| {
            let sites = if g[0].chained { &g[..1] } else { &g[..] };
            let last = sites.iter().map(|f| f.offset).max().unwrap_or(0);
            last.checked_div(page_size).unwrap_or(0)
        };
        groups.sort_by_key(|g| (g[0].object, page(g)));
        for (i, g) in groups.into_iter().enumerate() {
            self.fixups.extend(g.into_iter().map(|mut f| {
                f.record = i as u32;
                f
            }));
        }
    }

    /// Stores the chain words that chained fixups keep in the image: for NE,
    /// each non-additive site holds the offset of the next site of its record
    /// (0xFFFF for the last); for LX internal chains, each site holds the next
    /// site's page offset (0xFFF for the last) in bits 20..31 and the target's
    /// distance from the chain's lowest target in bits 0..19. The writers call
    /// this on their copy; call it on a module built from scratch to make it
    /// equal to what reading the written file gives.
    pub fn store_chain_words(&mut self) -> Result<(), WriteError> {
        let page_size = self.page_size();
        let groups = record_groups(&self.fixups);
        for range in groups {
            let group = &self.fixups[range];
            let first = &group[0];
            let chained_ne = self.format == Format::Ne && ne_chains(first);
            let chained_lx = self.format == Format::Lx && first.chained;
            if !chained_ne && !chained_lx {
                continue;
            }
            let object = usize::from(first.object)
                .checked_sub(1)
                .filter(|&i| i < self.objects.len());
            let Some(object) = object else {
                return Err(WriteError::new(
                    "fixup chain",
                    format!("object {} does not exist", first.object),
                ));
            };
            let mut words: Vec<(u32, Vec<u8>)> = Vec::new();
            if chained_ne {
                for (i, f) in group.iter().enumerate() {
                    let next = group.get(i + 1).map_or(0xFFFF, |n| n.offset);
                    if next > 0xFFFF || f.offset > 0xFFFE {
                        return Err(WriteError::new("NE relocation chain", "site beyond 64 KiB"));
                    }
                    words.push((f.offset, (next as u16).to_le_bytes().to_vec()));
                }
            } else {
                words = lx_chain_words(group, page_size)?;
            }
            let obj = &mut self.objects[object];
            for (offset, bytes) in words {
                let (page, within) = match offset.checked_div(page_size) {
                    None => (0, offset as usize),
                    Some(page) => (page as usize, (offset % page_size) as usize),
                };
                if self.format == Format::Ne && obj.pages.is_empty() {
                    obj.pages.push(Page::legal(Vec::new()));
                }
                let Some(p) = obj.pages.get_mut(page) else {
                    return Err(WriteError::new(
                        "fixup chain",
                        "site outside the object's pages",
                    ));
                };
                if p.data.len() < within + bytes.len() {
                    p.data.resize(within + bytes.len(), 0);
                }
                p.data[within..within + bytes.len()].copy_from_slice(&bytes);
            }
        }
        Ok(())
    }
}

/// Whether an NE relocation threads a chain through its sites.
pub(crate) fn ne_chains(f: &Fixup) -> bool {
    !f.add_to_site && f.kind != SourceKind::Byte && !matches!(f.target, Target::OsFixup { .. })
}

/// Index ranges of consecutive fixups that share a record number.
pub(crate) fn record_groups(fixups: &[Fixup]) -> Vec<std::ops::Range<usize>> {
    let mut groups = Vec::new();
    let mut start = 0;
    for i in 1..=fixups.len() {
        if i == fixups.len() || fixups[i].record != fixups[start].record {
            if start < i {
                groups.push(start..i);
            }
            start = i;
        }
    }
    groups
}

fn lx_chain_words(group: &[Fixup], page_size: u32) -> Result<Vec<(u32, Vec<u8>)>, WriteError> {
    const WHAT: &str = "LX internal fixup chain";
    let first = &group[0];
    let Target::Internal { object: tobj, .. } = first.target else {
        return Err(WriteError::new(
            WHAT,
            "only internal object targets can be chained",
        ));
    };
    let page = first.offset / page_size.max(1);
    let mut targets = Vec::new();
    for f in group {
        match f.target {
            Target::Internal { object, offset } if object == tobj => targets.push(offset),
            _ => {
                return Err(WriteError::new(
                    WHAT,
                    "all targets of a chain must be in one object",
                ));
            }
        }
        if f.kind != SourceKind::Off32
            || f.object != first.object
            || f.offset / page_size.max(1) != page
        {
            return Err(WriteError::new(
                WHAT,
                "a chain is 32-bit offsets within one page",
            ));
        }
        if f.offset % page_size.max(1) + 4 > page_size {
            return Err(WriteError::new(
                WHAT,
                "a chained site must lie wholly in its page",
            ));
        }
    }
    let base = targets.iter().copied().min().unwrap_or(0);
    let mut words = Vec::new();
    for (i, f) in group.iter().enumerate() {
        let delta = targets[i] - base;
        if delta > 0xFFFFF {
            return Err(WriteError::new(
                WHAT,
                "targets of a chain must lie within 1 MiB",
            ));
        }
        let next = match group.get(i + 1) {
            None => 0xFFF,
            Some(n) if n.offset % page_size.max(1) < 0xFFF => n.offset % page_size.max(1),
            Some(_) => {
                return Err(WriteError::new(
                    WHAT,
                    "next site beyond 4 KiB into the page",
                ));
            }
        };
        words.push((f.offset, ((next << 20) | delta).to_le_bytes().to_vec()));
    }
    Ok(words)
}
