//! What the compiler takes from the module's debug information
//! ([`crate::debuginfo`]): `TP=@file,line` through the line numbers,
//! `REGS=(.var)` through a procedure's register and stack variables,
//! `RETEP=CV` and `TP=.name` through the procedures, and `.name` in memory
//! addresses through the static data symbols (checked before the MAP file,
//! as the document says; a MAP file is optional when there is debug
//! information).
//!
//! Messages: TRCUST printed `CodeView info does not exist for: FILE` for a
//! module without debug information (TRCUST-FORMATS.md §6.2); the others
//! are its message table's (trcust-trace-customizer.txt, messages 90-93):
//! `filename FILE not found in CodeView info`, `line number past end of code
//! for file FILE`, `line number missing or invalid: N`. A line without
//! code moves the tracepoint to the next line that has code. With IBM HLL
//! information TRCUST does so silently (observed with testprogs' DBGH32);
//! with CodeView, which TRCUST 3.05A does not read, we warn `unable to
//! find line number, N used` (TCU0030W; the document says a warning is
//! issued). `/NODE` treats the
//! module as having no debug information; `/NOLN` keeps the symbols but
//! not the line numbers, so `TP=@file,line` reports `filename FILE not
//! found in CodeView info` (as TRCUST does). Without debug information
//! (or with `/NODE`) `TP=@file,line` needs the MAP file like `TP=.name`:
//! SEVERE `symbolic info not given` without one.
//!
//! `TP=.name` of a procedure in the debug information is the first
//! instruction after its prologue (its debug start), `±offs` counted from
//! there, as the document says ("If debug information is used, the address
//! of this tracepoint will be immediately following the prologue"); the
//! debug information is looked at before the MAP file. With `RETEP`, the
//! routine is the procedure (its length bounds the search).
//!
//! IBM HLL (`NB04`) is read the way TRCUST 3.05A reads it, as far as
//! observed with testprogs' DBGH32 and with modules that ALP `+Od` and
//! LINK386 `/DEBUG` build (kernel_sim's `trcust_hll` test, and by hand):
//! `TP=.name` is the offset of the procedure's first begin block, which
//! ALP writes around the body (after the prologue again). Without a block
//! it is offset 0 of the segment when the procedure has variables
//! (DBGH32's `Add2`) or is the last of its table (DBGH32's and a last
//! frameless `main`), else its debug start (a frameless `main` followed
//! by other procedures). `RETEP=CV` is the end of that block (the end of
//! the debug range for a last procedure without block or variables; for
//! the others `unable to locate end of NAME`, an ERROR), and the other
//! RETEP criteria search that range byte by byte (`retep::find_bytes`).
//! `REGS=(.var)` finds no variable, register or stack (`symbol not
//! found`). This rule is inferred from seven procedures; other HLL
//! writers may show more. Still different from TRCUST (issue 17):
//! `MEM=(.var,...)` finds the block's stack variables in TRCUST, and
//! `TP=@file,line` does not find the file names of ALP's HL03 line
//! tables there.
//!
//! A register variable logs its register as `REGS=(reg)` would (a pair,
//! `high:low`, logs the low then the high register); a stack variable
//! logs its bytes (its type's size; 2 or 4 for a type defined in
//! `$$TYPES`) as `MEM=(RSS+BP±n,DIRECT,size)` in a 16-bit procedure and
//! `MEM32=(FEBP±n,DIRECT,size)` in a 32-bit one. The variable is looked
//! up in the procedure that contains the tracepoint (or, when the TP is
//! not known yet, in the first procedure that has one of that name).

use rpn_vm::Instr;

use super::trace::{Place, TraceStmt, UNTRACEABLE};
use super::{Compiler, Step};
use crate::codegen::{self, Truncation};
use crate::debuginfo::{DebugInfo, LineLookup, Location, Procedure, symbols::primitive_size};
use crate::diag::Severity;
use crate::tsf::ast::{Address, Base, DataKind, Flag, Register, Term, register};

/// The module's debug information as the compiler sees it.
#[derive(Debug, Clone, Default)]
pub(crate) enum DebugState {
    /// Not looked at yet.
    #[default]
    Unread,
    /// None (or `/NODE`).
    Absent,
    /// Present but not readable: the reason.
    Unusable(String),
    /// Read.
    Info(Box<DebugInfo>),
}

/// What a `.var` in a REGS list logs.
pub(crate) enum VarLog {
    /// Registers, logged as REGS would.
    Regs(Vec<Register>),
    /// A memory statement.
    Code(Vec<Instr>),
}

/// The TSF register name of CodeView register `r` (8-bit registers log
/// their 16-bit register).
fn cv_register(r: u16) -> Option<Register> {
    const NAMES: [&str; 30] = [
        "AX", "CX", "DX", "BX", "AX", "CX", "DX", "BX", "AX", "CX", "DX", "BX", "SP", "BP", "SI",
        "DI", "EAX", "ECX", "EDX", "EBX", "ESP", "EBP", "ESI", "EDI", "ES", "CS", "SS", "DS", "FS",
        "GS",
    ];
    let i = usize::from(r).checked_sub(1)?;
    register(NAMES.get(i)?)
}

impl Compiler<'_> {
    /// The debug information, read at first use.
    pub(crate) fn debug(&mut self) -> Step<&DebugState> {
        if matches!(self.debug, DebugState::Unread) {
            let state = if self.opts.no_debug {
                DebugState::Absent
            } else {
                let image = self.module()?;
                match (image.debug_bytes(), image.debug_signature()) {
                    (Some(bytes), _) => match DebugInfo::parse(bytes) {
                        Ok(info) => DebugState::Info(Box::new(info)),
                        Err(e) => DebugState::Unusable(e.to_string()),
                    },
                    (None, Some(sig)) => DebugState::Unusable(format!(
                        "{} debug information is not supported",
                        String::from_utf8_lossy(&sig)
                    )),
                    (None, None) => DebugState::Absent,
                }
            };
            self.debug = state;
        }
        Ok(&self.debug)
    }

    /// The debug information when it was read.
    pub(crate) fn debug_info(&mut self) -> Step<Option<&DebugInfo>> {
        Ok(match self.debug()? {
            DebugState::Info(i) => Some(i),
            _ => None,
        })
    }

    /// The debug information, only when the module is already open (a
    /// data statement before the TP does not open it).
    pub(crate) fn debug_info_if_open(&mut self) -> Step<Option<&DebugInfo>> {
        if self.module.is_none() {
            return Ok(None);
        }
        self.debug_info()
    }

    /// The address of the static data symbol or procedure `name` in the
    /// debug information (for `.name` in MEM, ASCIIZ and LEN addresses).
    pub(crate) fn debug_static(&mut self, name: &str) -> Step<Option<(u32, u32)>> {
        let Some(d) = self.debug_info_if_open()? else {
            return Ok(None);
        };
        // IBM HLL: TRCUST finds a name among the public symbols only (not
        // a static that is not public).
        if d.signature == *b"NB04" {
            let public = d.publics.iter().find(|s| s.name == name);
            return Ok(public.map(|s| (u32::from(s.segment), s.offset)));
        }
        let data = d.data.iter().find(|s| s.name == name);
        Ok(data
            .map(|s| (u32::from(s.segment), s.offset))
            .or_else(|| d.procedure(name).map(|p| (u32::from(p.segment), p.offset))))
    }

    /// The procedure called `name` in the debug information.
    pub(crate) fn debug_procedure(&mut self, name: &str) -> Step<Option<Procedure>> {
        Ok(self.debug_info()?.and_then(|d| d.procedure(name)).cloned())
    }

    /// Whether the module's debug information is IBM HLL (`NB04`).
    pub(crate) fn debug_is_hll(&mut self) -> Step<bool> {
        Ok(self.debug_info()?.is_some_and(|d| d.signature == *b"NB04"))
    }

    /// `TP=@file,line`.
    pub(crate) fn tp_line(&mut self, st: &mut TraceStmt, file: &str, line: u64) -> Step<()> {
        let no_lines = self.opts.no_lines;
        let found = match self.debug()? {
            DebugState::Unread | DebugState::Absent => None,
            DebugState::Unusable(why) => {
                let why = why.clone();
                return Err(self.error(format!("{why}, cannot place: @{file}")));
            }
            // `/NOLN`: the information is there, its files are not.
            DebugState::Info(_) if no_lines => {
                return Err(self.error(format!("filename {file} not found in CodeView info")));
            }
            DebugState::Info(d) => Some((
                d.line(file, u32::try_from(line).unwrap_or(u32::MAX)),
                d.signature == *b"NB04",
            )),
        };
        let Some((found, hll)) = found else {
            return Err(self.error(format!("CodeView info does not exist for: {file}")));
        };
        if line == 0 || line > 0xFFFF {
            return Err(self.error(format!("line number missing or invalid: {line}")));
        }
        let (segment, offset) = match found {
            LineLookup::Exact(s, o) => (s, o),
            LineLookup::Next(l, s, o) => {
                if !hll {
                    self.diag(
                        Severity::Warning,
                        format!("unable to find line number, {l} used"),
                    );
                }
                (s, o)
            }
            LineLookup::PastEnd => {
                return Err(self.error(format!("line number past end of code for file {file}")));
            }
            LineLookup::NoFile => {
                return Err(self.error(format!("filename {file} not found in CodeView info")));
            }
        };
        self.place_at(st, u32::from(segment), offset)
    }

    /// Places the tracepoint at `object:offset` after checking the opcode.
    pub(crate) fn place_at(&mut self, st: &mut TraceStmt, object: u32, offset: u32) -> Step<()> {
        let image = self.module()?;
        let Some(opcode) = image.byte_at(object, offset) else {
            return Err(self.error("address not found"));
        };
        if UNTRACEABLE.contains(&opcode) {
            return Err(self.error("opcode at TP address cannot be traced"));
        }
        st.place = Some(Place::At {
            object,
            offset,
            opcode,
        });
        Ok(())
    }

    /// What `.name` in a REGS list logs, or `None` when no procedure in
    /// scope has such a variable.
    pub(crate) fn variable_log(&mut self, st: &TraceStmt, name: &str) -> Step<Option<VarLog>> {
        let at = match st.place {
            Some(Place::At { object, offset, .. }) => {
                u16::try_from(object).ok().map(|o| (o, offset))
            }
            _ => None,
        };
        let Some(info) = self.debug_info()? else {
            return Ok(None);
        };
        // IBM's TRCUST finds no variable for REGS= in HLL information,
        // register or stack (`symbol not found`).
        if info.signature == *b"NB04" {
            return Ok(None);
        }
        let procedure = match at {
            Some((o, off)) => info.procedure_at(o, off),
            None => info.procedures.iter().find(|p| p.variable(name).is_some()),
        };
        let Some((var, big)) = procedure.and_then(|p| Some((p.variable(name)?.clone(), p.big)))
        else {
            return Ok(None);
        };
        Ok(match var.location {
            Location::Register(r) => {
                let low = cv_register(r & 0xFF);
                let high = (r >> 8 != 0).then(|| cv_register(r >> 8));
                match (low, high) {
                    (Some(l), None) => Some(VarLog::Regs(vec![l])),
                    (Some(l), Some(Some(h))) => Some(VarLog::Regs(vec![l, h])),
                    _ => None,
                }
            }
            Location::BpRelative(n) => {
                let size = primitive_size(var.type_index).unwrap_or(if big { 4 } else { 2 });
                let mut t = Truncation::default();
                let (kind, addr) = if big {
                    let ebp = register("EBP").ok_or(super::Stop::Discard)?;
                    (
                        DataKind::Mem32,
                        Address {
                            base: Base::Flat(ebp),
                            terms: vec![Term::Disp(i64::from(n))],
                            post: Vec::new(),
                        },
                    )
                } else {
                    let ss = register("SS").ok_or(super::Stop::Discard)?;
                    let bp = register("BP").ok_or(super::Stop::Discard)?;
                    (
                        DataKind::Mem,
                        Address {
                            base: Base::Seg(ss),
                            terms: vec![Term::Add(bp), Term::Disp(i64::from(n))],
                            post: Vec::new(),
                        },
                    )
                };
                let a = codegen::address(&addr, None, big, &mut t);
                let length = codegen::fixed_length(u64::from(size), &mut t);
                Some(VarLog::Code(codegen::data(
                    kind,
                    &Flag::Direct,
                    length,
                    a,
                    &[],
                    &mut t,
                )))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::cv_register;
    use crate::tsf::ast::register;

    #[test]
    fn codeview_registers() {
        assert_eq!(cv_register(15), register("SI"));
        assert_eq!(cv_register(23), register("ESI"));
        assert_eq!(cv_register(1), register("AX"));
        assert_eq!(cv_register(30), register("GS"));
        assert_eq!(cv_register(0), None);
        assert_eq!(cv_register(31), None);
    }
}
