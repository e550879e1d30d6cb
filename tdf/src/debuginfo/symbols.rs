//! Symbol records (`sstAlignSym`, `sstGlobalSym`): procedures with their
//! debug start and end, and the variables in their scope.
//!
//! Each record is `reclen` u16 (bytes that follow it), `rectyp` u16, then
//! the fields. Read (CodeView 4, 16-bit type indexes; `NB11` uses the
//! 0x1000 forms with 32-bit type indexes):
//!
//! | type | record | fields |
//! |---|---|---|
//! | 0x0002 / 0x1001 | S_REGISTER | type, register (low byte; high byte the second register of a pair), name |
//! | 0x0006 | S_END | closes the innermost scope |
//! | 0x0100 / 0x0200 / 0x1006 | S_BPREL16/32 | offset (i16 or i32), type, name |
//! | 0x0101-0x0102 / 0x0201-0x0202 / 0x1007-0x1008 | S_LDATA/S_GDATA | offset, segment, type, name |
//! | 0x0104-0x0105 / 0x0204-0x0205 / 0x100A-0x100B | S_LPROC/S_GPROC | parent, end, next (u32), length, debug start, debug end, offset, segment, type, flags u8, name |
//!
//! Scopes opened by 0x0106-0x0108 and 0x0206-0x0208 (thunk, block, with)
//! nest inside a procedure; variables belong to the innermost procedure.

use super::{DebugError, DebugInfo};
use binread::Cursor;

/// Where a variable lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// In a register: the CodeView register number (`CV_REG_*`: 1-8 AL..BH,
    /// 9-16 AX..DI, 17-24 EAX..EDI, 25-30 ES CS SS DS FS GS); a pair is
    /// `high << 8 | low`.
    Register(u16),
    /// On the stack at (E)BP + offset.
    BpRelative(i32),
}

/// A local variable of a procedure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// Register or stack.
    pub location: Location,
    /// Its CodeView type index.
    pub type_index: u32,
}

/// A procedure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Procedure {
    /// Its name.
    pub name: String,
    /// Segment (object) number.
    pub segment: u16,
    /// Offset of its first byte.
    pub offset: u32,
    /// Its length in bytes.
    pub length: u32,
    /// From the start to where the frame is set up (after the prologue).
    pub debug_start: u32,
    /// From the start to where it is ready to return (before the epilogue).
    pub debug_end: u32,
    /// A 32-bit procedure (S_xPROC32).
    pub big: bool,
    /// Global (S_GPROC) rather than module-local.
    pub global: bool,
    /// Register and stack variables in its scope.
    pub variables: Vec<Variable>,
    /// IBM HLL only: the first begin-block subrecord inside the procedure
    /// (its offset in the segment and its length), which IBM's compilers
    /// and ALP write around the body (after the prologue, before the
    /// epilogue); None for CodeView and for a procedure without one.
    pub block: Option<(u32, u32)>,
    /// IBM HLL only: the last procedure of its module's symbol table.
    pub last_in_table: bool,
}

impl Procedure {
    /// IBM HLL: where TRCUST 3.05A places `TP=.name` (observed, see
    /// `tdf::compile::debug`): the procedure's first block; without one,
    /// offset 0 of its segment when it has variables or is the last of its
    /// table, else its debug start.
    pub fn hll_entry(&self) -> u32 {
        match self.block {
            Some((at, _)) => at,
            None if !self.variables.is_empty() || self.last_in_table => 0,
            None => self.offset.saturating_add(self.debug_start),
        }
    }

    /// IBM HLL: the range TRCUST 3.05A searches for a return point, up to
    /// where `RETEP=CV` places it: the first block; without one, the
    /// procedure to its debug end when it is the last of its table and has
    /// no variables; else none (`unable to locate end of NAME`).
    pub fn hll_body(&self) -> Option<(u32, u32)> {
        match self.block {
            Some((at, len)) => Some((at, at.saturating_add(len))),
            None if self.variables.is_empty() && self.last_in_table => {
                Some((self.offset, self.offset.saturating_add(self.debug_end)))
            }
            None => None,
        }
    }

    /// The variable called `name` (case-sensitive).
    pub fn variable(&self, name: &str) -> Option<&Variable> {
        self.variables.iter().find(|v| v.name == name)
    }
}

/// A static data symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataSymbol {
    /// Its name.
    pub name: String,
    /// Segment (object) number.
    pub segment: u16,
    /// Offset.
    pub offset: u32,
    /// Its CodeView type index.
    pub type_index: u32,
}

/// The size in bytes of a value of CodeView primitive type `t` (type
/// indexes below 0x1000), or `None` for a type defined in `$$TYPES`.
pub fn primitive_size(t: u32) -> Option<u32> {
    if t >= 0x1000 {
        return None;
    }
    let mode = (t >> 8) & 7;
    match mode {
        1 => return Some(2),
        2..=4 => return Some(4),
        5 => return Some(6),
        0 => {}
        _ => return None,
    }
    let kind = (t >> 4) & 0xF;
    let size = t & 7;
    match kind {
        // Signed, unsigned, boolean: 1, 2, 4, 8 bytes.
        1..=3 => [1, 2, 4, 8].get(size as usize).copied(),
        // Real: 32, 64, 80 bits.
        4 => [4, 8, 10].get(size as usize).copied(),
        // Really a char, int: sizes 1, 2, 4 (wchar 2).
        7 => match size {
            0 | 1 => Some(1),
            2 | 3 => Some(2),
            4 | 5 => Some(4),
            6 | 7 => Some(8),
            _ => None,
        },
        _ => None,
    }
}

/// Structure name in read errors.
const RECORD: &str = "symbol record";

/// Reads symbol records from `at` to the end of `bytes` into `info`.
pub(crate) fn read(
    bytes: &[u8],
    at: usize,
    wide_types: bool,
    info: &mut DebugInfo,
) -> Result<(), DebugError> {
    // The procedure each open scope belongs to.
    let mut scopes: Vec<Option<usize>> = Vec::new();
    let mut at = at;
    while at + 4 <= bytes.len() {
        let mut c = Cursor::at(bytes, at as u64);
        let len = usize::from(c.u16(RECORD)?);
        if len < 2 {
            // Alignment padding (a zero length) ends the records of a block.
            at += 2;
            continue;
        }
        let end = at + 2 + len;
        if end > bytes.len() {
            let e = binread::Error::new(at, RECORD, binread::ErrorKind::Truncated);
            return Err(e.into());
        }
        let rec = &bytes[..end];
        let mut r = Cursor::at(rec, (at + 2) as u64);
        let kind = r.u16(RECORD)?;
        let current = scopes.iter().rev().find_map(|s| *s);
        match kind {
            0x0002 | 0x1001 => {
                let type_index = if wide_types {
                    r.u32(RECORD)?
                } else {
                    u32::from(r.u16(RECORD)?)
                };
                let reg = r.u16(RECORD)?;
                let name = r.pstring(RECORD)?;
                add_variable(info, current, name, Location::Register(reg), type_index);
            }
            0x0006 => {
                scopes.pop();
            }
            0x0100 => {
                let off = r.u16(RECORD)? as i16;
                let type_index = u32::from(r.u16(RECORD)?);
                let name = r.pstring(RECORD)?;
                let loc = Location::BpRelative(i32::from(off));
                add_variable(info, current, name, loc, type_index);
            }
            0x0200 | 0x1006 => {
                let off = r.u32(RECORD)? as i32;
                let type_index = if kind == 0x1006 {
                    r.u32(RECORD)?
                } else {
                    u32::from(r.u16(RECORD)?)
                };
                let name = r.pstring(RECORD)?;
                add_variable(info, current, name, Location::BpRelative(off), type_index);
            }
            0x0101 | 0x0102 | 0x0201 | 0x0202 | 0x1007 | 0x1008 => {
                let (offset, segment, type_index) = match kind {
                    0x0101 | 0x0102 => (
                        u32::from(r.u16(RECORD)?),
                        r.u16(RECORD)?,
                        u32::from(r.u16(RECORD)?),
                    ),
                    0x0201 | 0x0202 => (r.u32(RECORD)?, r.u16(RECORD)?, u32::from(r.u16(RECORD)?)),
                    _ => {
                        let t = r.u32(RECORD)?;
                        (r.u32(RECORD)?, r.u16(RECORD)?, t)
                    }
                };
                let name = r.pstring(RECORD)?;
                info.data.push(DataSymbol {
                    name,
                    segment,
                    offset,
                    type_index,
                });
            }
            0x0104 | 0x0105 | 0x0204 | 0x0205 | 0x100A | 0x100B => {
                r.skip(12, RECORD)?;
                let big = kind != 0x0104 && kind != 0x0105;
                let word = |r: &mut Cursor<'_>| -> binread::Result<u32> {
                    if big {
                        r.u32(RECORD)
                    } else {
                        r.u16(RECORD).map(u32::from)
                    }
                };
                let length = word(&mut r)?;
                let debug_start = word(&mut r)?;
                let debug_end = word(&mut r)?;
                // The procedure's type index is not used: skipped.
                let (offset, segment) = if kind >= 0x1000 {
                    r.skip(4, RECORD)?;
                    (r.u32(RECORD)?, r.u16(RECORD)?)
                } else {
                    let o = word(&mut r)?;
                    let segment = r.u16(RECORD)?;
                    r.skip(2, RECORD)?;
                    (o, segment)
                };
                r.u8(RECORD)?;
                let name = r.pstring(RECORD)?;
                let procedure = Procedure {
                    name,
                    segment,
                    offset,
                    length,
                    debug_start,
                    debug_end,
                    big,
                    global: matches!(kind, 0x0105 | 0x0205 | 0x100B),
                    variables: Vec::new(),
                    block: None,
                    last_in_table: false,
                };
                let what = ("procedure symbol", "debug start or end past its length");
                scopes.push(Some(add_procedure(info, procedure, at, what)?));
            }
            0x0106..=0x0108 | 0x0206..=0x0208 => scopes.push(None),
            _ => {}
        }
        at = end;
    }
    Ok(())
}

/// Adds `procedure` to `info` and gives its index, once its debug start and
/// end are found within its length (else the error names `what`, the
/// structure and the problem, at `at`).
/// Shared by the CodeView and HLL symbol readers.
pub(super) fn add_procedure(
    info: &mut DebugInfo,
    procedure: Procedure,
    at: usize,
    (structure, problem): (&'static str, &'static str),
) -> Result<usize, DebugError> {
    if procedure.debug_start > procedure.length || procedure.debug_end > procedure.length {
        return Err(super::bad(at, structure, problem));
    }
    info.procedures.push(procedure);
    Ok(info.procedures.len() - 1)
}

/// Adds a variable to procedure `procedure` (an index into
/// `info.procedures`); outside a procedure (`None`, a block scope) it is
/// dropped. Shared by the CodeView and HLL symbol readers.
pub(super) fn add_variable(
    info: &mut DebugInfo,
    procedure: Option<usize>,
    name: String,
    location: Location,
    type_index: u32,
) {
    if let Some(p) = procedure.and_then(|i| info.procedures.get_mut(i)) {
        p.variables.push(Variable {
            name,
            location,
            type_index,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procedures_and_their_variables_are_added_in_range_only() {
        let mut info = DebugInfo::default();
        let p = |debug_start, debug_end| Procedure {
            name: "f".into(),
            segment: 1,
            offset: 0,
            length: 10,
            debug_start,
            debug_end,
            big: true,
            global: true,
            variables: Vec::new(),
            block: None,
            last_in_table: false,
        };
        let what = ("proc", "past its length");
        assert_eq!(add_procedure(&mut info, p(3, 10), 0, what), Ok(0));
        assert_eq!(
            add_procedure(&mut info, p(3, 11), 0x40, what)
                .unwrap_err()
                .to_string(),
            "debug information offset 0x40: proc: past its length"
        );
        assert_eq!(
            add_procedure(&mut info, p(11, 0), 0x50, what)
                .unwrap_err()
                .to_string(),
            "debug information offset 0x50: proc: past its length"
        );
        assert_eq!(info.procedures.len(), 1);
        add_variable(&mut info, Some(0), "v".into(), Location::Register(3), 0x74);
        add_variable(&mut info, None, "w".into(), Location::Register(3), 0x74);
        add_variable(&mut info, Some(1), "w".into(), Location::Register(3), 0x74);
        assert_eq!(
            info.procedures[0].variables,
            [Variable {
                name: "v".into(),
                location: Location::Register(3),
                type_index: 0x74
            }]
        );
    }

    #[test]
    fn primitive_sizes() {
        assert_eq!(primitive_size(0x0011), Some(2)); // short
        assert_eq!(primitive_size(0x0012), Some(4)); // long
        assert_eq!(primitive_size(0x0074), Some(4)); // int4
        assert_eq!(primitive_size(0x0072), Some(2)); // int2
        assert_eq!(primitive_size(0x0070), Some(1)); // char
        assert_eq!(primitive_size(0x0410), Some(4)); // near32 pointer
        assert_eq!(primitive_size(0x0110), Some(2)); // near pointer
        assert_eq!(primitive_size(0x1000), None);
    }
}
