//! VM/SP's trace table recording facility (CPTRAP) and its reduction program
//! (TRAPRED), for os2trace.
//!
//! * [`TraceTable`]: the always-on wrapping table of fixed-size [`Entry`]s
//!   that the system writes for its own events; [`TypeNum`] maps VM/SP's
//!   type codes to the events of the emulated OS/2 ([`typenum`], [`entry`]).
//! * [`InterfaceRecord`]: data passed through the virtual machine interface
//!   (X'3E') or the CP interface (X'3F'), with the seed's 8-byte header and
//!   at most 264 bytes of data ([`iface`]).
//! * [`Recorder`]: CPTRAP itself, copying the [`Selection`]'s records into a
//!   file of 4 KB blocks through a bounded transfer buffer that loses records
//!   (counted, and marked in the file) when it is full ([`recorder`],
//!   [`file`] for the layout).
//! * [`CptrapFile`]: the reader; errors name the byte offset ([`reader`]).
//! * [`trapred`]: TRAPRED's commands, its session over a file, and how it
//!   displays records.
//!
//! The crate knows nothing of the emulator: the system (kernel_sim) makes
//! the entries and decides how fast the spool takes blocks. Nothing here
//! reads the host clock or touches the file system.
//!
//! ```
//! use cptrap::{CptrapFile, Entry, Interface, InterfaceRecord, Recorder, Selection, TypeNum};
//!
//! let mut cptrap = Recorder::new(Selection::parse(&["TYPE", "02", "3E"])?, 4);
//! let mut call = Entry::api_call("DOSCALLS", 282, 0, 0x0001_0040);
//! call.frame.time = 100;
//! cptrap.record_entry(&call);
//! cptrap.record_interface(InterfaceRecord::new(Interface::VirtualMachine, 3, &[7; 300]), 1, 1, 200);
//! let mut file = Vec::new();
//! cptrap.finish(&mut file)?;
//!
//! let read = CptrapFile::parse(&file)?;
//! assert_eq!(file.len(), 4096);
//! assert_eq!(read.records().len(), 2);
//! assert_eq!(read.records()[1].record.typenum(), TypeNum::VM_INTERFACE);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod entry;
pub mod file;
pub mod iface;
pub mod reader;
pub mod recorder;
pub mod selection;
pub mod table;
pub mod trapred;
pub mod typenum;

pub use entry::{Entry, Frame, IoOp};
pub use file::Record;
pub use iface::{Interface, InterfaceRecord, ParamList};
pub use reader::{CptrapFile, FileRecord, ReadError, ReadErrorKind};
pub use recorder::{Recorder, RecorderStats};
pub use selection::{Selection, SelectionError};
pub use table::TraceTable;
pub use typenum::{TypeNum, TypeSet};
