//! The adapter from `loader`'s modules and MAP files to what the compiler
//! reads ([`crate::target::ModuleImage`], [`SymbolTable`]).
//!
//! Object bytes are the decoded pages (legal, iterated per the LX
//! specification, EXEPACK2) without fixups, as TRCUST reads them; an LX
//! object's pages are padded to the page size except the last stored one.

use thiserror::Error;

use crate::target::{MemoryImage, Symbol, SymbolTable};

/// Largest object image built (bytes from pages; the zero tail is implied).
pub const MAX_OBJECT_BYTES: u64 = 64 << 20;

/// A module that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ModuleError {
    /// `loader` rejected the file.
    #[error("{0}")]
    Load(#[from] loader::Error),
    /// An object's pages are larger than [`MAX_OBJECT_BYTES`].
    #[error("object {object}: {bytes} bytes of page data is more than this tool reads")]
    TooLarge {
        /// Object number.
        object: usize,
        /// Bytes of page data.
        bytes: u64,
    },
}

/// The decoded objects of an LX or NE module.
///
/// # Errors
/// [`ModuleError`] for a file `loader` cannot read.
pub fn image_from_module(module: &loader::Module) -> Result<MemoryImage, ModuleError> {
    let page_size = module.page_size();
    let mut objects = Vec::with_capacity(module.objects.len());
    let sizes = module.objects.iter().map(|o| o.virtual_size).collect();
    for (i, obj) in module.objects.iter().enumerate() {
        let stored = obj.stored_len(page_size);
        if stored > MAX_OBJECT_BYTES {
            return Err(ModuleError::TooLarge {
                object: i + 1,
                bytes: stored,
            });
        }
        let mut bytes = Vec::with_capacity(stored as usize);
        if page_size == 0 {
            if let Some(p) = obj.pages.first() {
                bytes.extend_from_slice(&p.data);
            }
        } else {
            for p in &obj.pages {
                if bytes.len() as u64 >= stored {
                    break;
                }
                let start = bytes.len();
                bytes.extend_from_slice(&p.data);
                bytes.resize(start + page_size as usize, 0);
            }
            bytes.truncate(stored as usize);
        }
        let big = match module.format {
            loader::Format::Lx => obj.flags & loader::LX_OBJ_BIG != 0,
            loader::Format::Ne => obj.flags & loader::NE_SEG_32BIT != 0,
        };
        objects.push((bytes, big));
    }
    Ok(MemoryImage { objects, sizes })
}

/// Reads a module file's objects.
///
/// # Errors
/// [`ModuleError`] for a file `loader` cannot read.
pub fn image_from_bytes(bytes: &[u8]) -> Result<MemoryImage, ModuleError> {
    image_from_module(&loader::parse(bytes)?)
}

/// The public symbols of a MAP file.
///
/// # Errors
/// The MAP parser's error (with its line).
pub fn symbols_from_map(bytes: &[u8]) -> Result<SymbolTable, loader::map::MapError> {
    let map = loader::map::parse_bytes(bytes)?;
    Ok(SymbolTable::new(
        map.symbols
            .into_iter()
            .map(|s| Symbol {
                name: s.name,
                object: u32::from(s.object),
                offset: s.offset,
            })
            .collect(),
    ))
}
