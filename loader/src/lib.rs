//! OS/2 LX and NE modules: read, write, EXEPACK1/EXEPACK2, linker MAP files.
//!
//! Entry points:
//! - [`parse`] reads any LX or NE file (with or without a DOS stub) into a
//!   format-neutral [`Module`]; [`lx::read`] and [`ne::read`] also return the
//!   raw header and page/segment tables (for `exehdr`).
//! - [`write()`] (or [`lx::write`], [`ne::write`]) turns a [`Module`] back into
//!   file bytes; `parse(&write(&m)?)? == m` for modules whose fixup records
//!   are in file order ([`Module::normalize_fixups`]) and whose chain words
//!   are stored ([`Module::store_chain_words`]).
//! - [`Module::new_lx`] / [`Module::new_ne`] start a module from scratch.
//! - [`map::parse`] reads LINK386, MS LINK and Open Watcom WLINK MAP files.
//! - [`omflib::read`] reads OMF libraries for their imports (IMPDEF records)
//!   and dictionary.
//!
//! Readers never panic and never size an allocation by an unchecked count:
//! every error is an [`Error`] naming the file offset and the structure.
//!
//! Building a module from scratch (what `testprogs` does):
//!
//! ```
//! use loader::{Address, EntryPoint, SourceKind, Target};
//!
//! let mut m = loader::Module::new_lx("HELLO");
//! // push 0; call DosExit (the call's rel32 is fixed up); a data object.
//! let code = m.add_object(0x2005, 16, &[0x6A, 0x00, 0xE8, 0, 0, 0, 0, 0xC3]);
//! let data = m.add_object(0x2003, 0x1000, b"hello\r\n");
//! let doscalls = m.import_module("DOSCALLS");
//! m.add_fixup(code, 3, SourceKind::Rel32, Target::ImportOrdinal { module: doscalls, ordinal: 234 });
//! m.add_export("ENTRY", EntryPoint::Entry32 { object: code, offset: 0 });
//! m.start = Some(Address { object: code, offset: 0 });
//! m.stack = Some(Address { object: data, offset: 0x1000 });
//! m.store_chain_words()?; // no chains here; harmless, and needed when there are
//!
//! let bytes = loader::write(&m)?;
//! let back = loader::parse(&bytes)?;
//! assert_eq!(back, m);
//! assert_eq!(back.byte_at(Address { object: code, offset: 2 }), Some(0xE8));
//! assert_eq!(back.export("ENTRY").map(|e| e.ordinal), Some(1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod bytes;
pub mod digest;
pub mod error;
pub mod exepack1;
pub mod exepack2;
pub mod lx;
pub mod map;
mod model;
mod module;
pub mod ne;
pub mod omflib;
pub mod stub;

pub use error::{Error, ErrorKind, Result, WriteError};
pub use model::*;

/// The two module formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Linear eXecutable (OS/2 2.x and later, 32-bit).
    Lx,
    /// New Executable (OS/2 1.x, 16-bit).
    Ne,
}

impl Format {
    /// `"LX"` or `"NE"`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Lx => "LX",
            Format::Ne => "NE",
        }
    }
}

/// Which format a file holds: reads the DOS stub's new-header pointer (when
/// the file starts with `MZ`) and the signature there.
pub fn detect(data: &[u8]) -> Result<(Format, u64)> {
    let offset = stub::new_header_offset(data)?;
    let input = bytes::Bytes::new(data);
    match input.slice(offset, 2, "new header signature")? {
        b"LX" => Ok((Format::Lx, offset)),
        b"NE" => Ok((Format::Ne, offset)),
        b"LE" => Err(Error::new(
            offset,
            "new header signature",
            ErrorKind::Unsupported("LE (VxD) modules"),
        )),
        _ => Err(Error::new(
            offset,
            "new header signature",
            ErrorKind::BadSignature,
        )),
    }
}

/// Reads an LX or NE module.
///
/// # Errors
///
/// An [`Error`] naming the file offset and the structure when the file is
/// not an LX or NE module or any of its tables is malformed.
pub fn parse(data: &[u8]) -> Result<Module> {
    match detect(data)?.0 {
        Format::Lx => Ok(lx::read(data)?.module),
        Format::Ne => Ok(ne::read(data)?.module),
    }
}

/// Writes a module in its own format.
///
/// # Errors
///
/// A [`WriteError`] when the model cannot be expressed in the format
/// (a value too wide for its field, sites of one record in different pages,
/// an LX entry in an NE module, and so on).
pub fn write(module: &Module) -> std::result::Result<Vec<u8>, WriteError> {
    match module.format {
        Format::Lx => lx::write(module),
        Format::Ne => ne::write(module),
    }
}
