//! The adapter from `loader`'s modules and MAP files to what the compiler
//! reads ([`crate::target::ModuleImage`], [`SymbolTable`]).
//!
//! Object bytes are the decoded pages (legal, iterated per the LX
//! specification, EXEPACK2) without fixups, as TRCUST reads them; an LX
//! object's pages are padded to the page size except the last stored one.

use thiserror::Error;

use crate::target::{MemoryImage, ModuleImage, Symbol, SymbolTable};

/// The last component of an OS/2 or host path: what follows the last `\`,
/// `/` or drive colon (`C:\DIR\FOO.DLL`, `C:FOO.DLL` and `dir/FOO.DLL` all
/// give `FOO.DLL`). The one rule for the base name of a module or file.
pub fn file_name(path: &str) -> &str {
    // The separators are ASCII, so the byte rule's cut is a char boundary.
    &path[path.len() - file_name_bytes(path.as_bytes()).len()..]
}

/// [`file_name`] of a path that may not be text (a TSF's MODNAME bytes).
pub fn file_name_bytes(path: &[u8]) -> &[u8] {
    let base_at = path
        .iter()
        .rposition(|&b| matches!(b, b'\\' | b'/' | b':'))
        .map_or(0, |i| i + 1);
    &path[base_at..]
}

/// The module a path names: its [`file_name`] without the extension
/// (`C:\DIR\FOO.DLL` and `foo` give `FOO` and `foo`; case is kept).
pub fn module_name(path: &str) -> &str {
    let base = file_name(path);
    base.split('.').next().unwrap_or(base)
}

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
    let debug = module
        .lx
        .as_ref()
        .and_then(|o| o.debug_info.get(..4))
        .and_then(|s| <[u8; 4]>::try_from(s).ok())
        .filter(|s| s.starts_with(b"NB"));
    Ok(MemoryImage {
        objects,
        sizes,
        debug,
    })
}

/// Reads a module file's objects.
///
/// # Errors
/// [`ModuleError`] for a file `loader` cannot read.
pub fn image_from_bytes(bytes: &[u8]) -> Result<MemoryImage, ModuleError> {
    let mut image = image_from_module(&loader::parse(bytes)?)?;
    if image.debug.is_none() {
        image.debug = debug_trailer(bytes);
    }
    Ok(image)
}

/// A module file as the compiler reads it: its objects and its debug
/// information (the LX debug section when it starts with `NB`, else what
/// is appended to the file with an `NBxx` trailer).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileImage {
    /// The objects.
    pub image: MemoryImage,
    /// The debug information, from its signature on.
    pub debug: Option<Vec<u8>>,
}

impl ModuleImage for FileImage {
    fn object_count(&self) -> u32 {
        self.image.object_count()
    }

    fn object_bytes(&self, object: u32) -> Option<&[u8]> {
        self.image.object_bytes(object)
    }

    fn is_32bit(&self, object: u32) -> Option<bool> {
        self.image.is_32bit(object)
    }

    fn debug_signature(&self) -> Option<[u8; 4]> {
        self.image.debug_signature()
    }

    fn debug_bytes(&self) -> Option<&[u8]> {
        self.debug.as_deref()
    }

    fn object_size(&self, object: u32) -> Option<u32> {
        self.image.object_size(object)
    }
}

/// Reads a module file's objects and debug information.
///
/// # Errors
/// [`ModuleError`] for a file `loader` cannot read.
pub fn file_image(bytes: &[u8]) -> Result<FileImage, ModuleError> {
    let module = loader::parse(bytes)?;
    let mut image = image_from_module(&module)?;
    let section = module
        .lx
        .as_ref()
        .map(|o| o.debug_info.as_slice())
        .filter(|d| d.starts_with(b"NB"));
    let debug = section.or_else(|| crate::debuginfo::appended(bytes));
    if image.debug.is_none() {
        image.debug = debug_trailer(bytes);
    }
    Ok(FileImage {
        image,
        debug: debug.map(<[u8]>::to_vec),
    })
}

/// The signature of debug information appended to a module file: the last
/// 8 bytes are `NBxx` and the distance back to the start of the debug
/// information, which starts with the same signature (what TRCUST checks
/// at end-8).
pub fn debug_trailer(bytes: &[u8]) -> Option<[u8; 4]> {
    let tail = bytes.len().checked_sub(8)?;
    let sig: [u8; 4] = bytes[tail..tail + 4].try_into().ok()?;
    if &sig[..2] != b"NB" {
        return None;
    }
    let back = u32::from_le_bytes(bytes[tail + 4..].try_into().ok()?) as usize;
    let start = bytes.len().checked_sub(back)?;
    (bytes.get(start..start + 4)? == sig).then_some(sig)
}

/// The public symbols of a MAP file.
///
/// # Errors
/// The MAP parser's error (with its line).
pub fn symbols_from_map(bytes: &[u8]) -> Result<SymbolTable, loader::map::MapError> {
    let map = parse_skipping_bad_lines(bytes)?;
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

/// Parses a MAP as TRCUST reads it: a symbol line it cannot read is
/// skipped (TRCUST scans each line with `%lx:%lx %s` and ignores lines that
/// do not fit), so each line `loader` refuses is dropped and the rest read
/// again.
fn parse_skipping_bad_lines(bytes: &[u8]) -> Result<loader::map::MapFile, loader::map::MapError> {
    let mut lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
    let mut dropped = 0usize;
    loop {
        let joined = lines.concat();
        match loader::map::parse_bytes(&joined) {
            Ok(m) => return Ok(m),
            Err(e) if e.line >= 1 && e.line <= lines.len() && dropped < 1_000 => {
                lines.remove(e.line - 1);
                dropped += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_of_paths() {
        assert_eq!(module_name("C:\\BIN\\LOOP32.EXE"), "LOOP32");
        assert_eq!(module_name("C:foo.dll"), "foo");
        assert_eq!(module_name("dir/SUB.D/X"), "X");
        assert_eq!(module_name("DOSCALLS"), "DOSCALLS");
        assert_eq!(file_name("D:\\OS2\\DLL\\PMWIN.DLL"), "PMWIN.DLL");
        assert_eq!(file_name(""), "");
        assert_eq!(
            crate::trcust::with_default_ext("D.IR\\LOOP", "RPN"),
            "D.IR\\LOOP.RPN"
        );
        assert_eq!(crate::trcust::with_default_ext("X.BIN", "TDF"), "X.BIN");
    }

    #[test]
    fn debug_trailer_is_found() {
        let mut file = vec![0u8; 32];
        file.extend_from_slice(b"NB04");
        file.extend_from_slice(&[1, 2, 3, 4]);
        file.extend_from_slice(b"NB04");
        file.extend_from_slice(&16u32.to_le_bytes());
        assert_eq!(debug_trailer(&file), Some(*b"NB04"));
        let n = file.len();
        file[n - 4] = 15;
        assert_eq!(debug_trailer(&file), None);
        assert_eq!(debug_trailer(b"NB0"), None);
        let hello = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/samples/lx/hello.exe"
        ))
        .unwrap();
        assert_eq!(image_from_bytes(&hello).unwrap().debug, None);
    }
}
