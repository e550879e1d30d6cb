//! Reading a module's `TNF_PROBE_LIST` and its probe descriptors from
//! guest memory (layout in the parent module's docs). Everything is
//! bounded: at most [`MAX_PROBES`] per module, strings of at most 255
//! characters, and every fault or bad field is an error naming the module,
//! the address and what is wrong.

use std::fmt;

use tnf::probe::RecordType;
use tnf::{ArgType, ProbeDesc};

use crate::process::Process;

/// The export that points at a module's probe table.
pub const PROBE_LIST_EXPORT: &str = "TNF_PROBE_LIST";
/// 'TNFL'.
pub const LIST_MAGIC: u32 = 0x4C46_4E54;
/// 'TNFD'.
pub const DESC_MAGIC: u32 = 0x4446_4E54;
/// The most probes one module may declare.
pub const MAX_PROBES: u32 = 4096;
/// Bytes of a descriptor (without the record type pointers of flag bit 1).
pub const DESC_SIZE: u32 = 92;
/// 'TNFR': a record type descriptor.
pub const RECORD_MAGIC: u32 = 0x5246_4E54;
/// Descriptor flag: a debug probe (TNF_PROBE_n_DEBUG).
pub const FLAG_DEBUG: u8 = 1;
/// Descriptor flag: five record type pointers follow at +92.
pub const FLAG_RECORDS: u8 = 2;

/// Where an argument's value is when the site calls TNF_PROBE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgLocation {
    /// A general register (0..7 = EAX ECX EDX EBX ESP EBP ESI EDI).
    Register(u8),
    /// `SS:[EBP+disp]` (BP in 16-bit code).
    Frame(i32),
    /// `DS:[disp]`.
    Data(i32),
    /// The constant itself.
    Constant(i32),
}

/// A probe found in a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuestProbe {
    /// The probe as TNF_PROBE_n declares it.
    pub desc: ProbeDesc,
    /// The module's path (prex's `object` attribute).
    pub object: String,
    /// Linear address of its descriptor.
    pub address: u32,
    /// Linear address right after the site's call.
    pub site: u32,
    /// Where each argument is (a record argument's location holds a
    /// pointer to the record, as a string argument's holds a pointer to
    /// the text).
    pub locations: Vec<ArgLocation>,
    /// For each of `desc.records`, its members' byte offsets in the guest's
    /// structure.
    pub member_offsets: Vec<Vec<u32>>,
    /// A 16-bit module (16:16 pointers, 16-bit ints).
    pub bits16: bool,
}

/// A malformed probe table or descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TnfError {
    /// The module.
    pub module: String,
    /// The linear address of the bad field.
    pub address: u32,
    /// What is wrong.
    pub what: String,
}

impl TnfError {
    pub(crate) fn new(module: &str, address: u32, what: impl Into<String>) -> Self {
        TnfError {
            module: module.to_string(),
            address,
            what: what.into(),
        }
    }
}

impl fmt::Display for TnfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: TNF probe table at {:#010x}: {}",
            self.module, self.address, self.what
        )
    }
}

impl std::error::Error for TnfError {}

/// Reads a module's probe table from guest memory (not a file: a read
/// fails when the guest page is not there), naming the address.
struct ProbeTableReader<'p> {
    p: &'p mut Process,
    module: String,
    bits16: bool,
}

impl ProbeTableReader<'_> {
    fn err(&self, at: u32, what: impl Into<String>) -> TnfError {
        TnfError::new(&self.module, at, what)
    }

    fn u32(&mut self, at: u32) -> Result<u32, TnfError> {
        let mut b = [0u8; 4];
        self.p
            .machine
            .read_linear(at, &mut b)
            .map_err(|_| self.err(at, "not readable"))?;
        Ok(u32::from_le_bytes(b))
    }

    fn u8(&mut self, at: u32) -> Result<u8, TnfError> {
        let mut b = [0u8; 1];
        self.p
            .machine
            .read_linear(at, &mut b)
            .map_err(|_| self.err(at, "not readable"))?;
        Ok(b[0])
    }

    /// A pointer field made linear.
    fn ptr(&mut self, at: u32) -> Result<u32, TnfError> {
        let v = self.u32(at)?;
        if !self.bits16 {
            return Ok(v);
        }
        self.p
            .selector_to_linear((v >> 16) as u16, v & 0xFFFF, 1)
            .ok_or_else(|| {
                self.err(
                    at,
                    format!(
                        "16:16 pointer {:04X}:{:04X} is not valid",
                        v >> 16,
                        v & 0xFFFF
                    ),
                )
            })
    }

    /// A string through the pointer at `at`.
    fn string(&mut self, at: u32, what: &str) -> Result<String, TnfError> {
        let lin = self.ptr(at)?;
        let mut out = Vec::new();
        for i in 0..=tnf::layout::STRING_LIMIT as u32 {
            let b = self
                .u8(lin.wrapping_add(i))
                .map_err(|_| self.err(at, format!("{what} string is not readable")))?;
            if b == 0 {
                return String::from_utf8(out)
                    .map_err(|_| self.err(at, format!("{what} is not UTF-8")));
            }
            out.push(b);
        }
        Err(self.err(at, format!("{what} is longer than 255 characters")))
    }

    fn descriptor(&mut self, at: u32) -> Result<GuestProbe, TnfError> {
        if self.u32(at)? != DESC_MAGIC {
            return Err(self.err(at, "descriptor does not start with 'TNFD'"));
        }
        let site = self.ptr(at + 4)?;
        let name = self.string(at + 8, "name")?;
        let keys = self.string(at + 12, "keys")?;
        let detail = self.string(at + 16, "detail")?;
        let file = self.string(at + 20, "file")?;
        let line = self.u32(at + 24)?;
        let nargs = self.u8(at + 28)?;
        let flags = self.u8(at + 29)?;
        if usize::from(nargs) > tnf::probe::MAX_ARGS {
            return Err(self.err(at + 28, format!("{nargs} arguments (at most 5)")));
        }
        if flags & !(FLAG_DEBUG | FLAG_RECORDS) != 0 {
            return Err(self.err(at + 29, format!("flags {flags:#04x}: unknown bits")));
        }
        let mut args = Vec::new();
        let mut locations = Vec::new();
        let mut records = Vec::new();
        let mut member_offsets = Vec::new();
        for i in 0..u32::from(nargs) {
            let a = at + 32 + 12 * i;
            let code = self.u8(a)?;
            let ty = ArgType::from_code(code)
                .ok_or_else(|| self.err(a, format!("argument type code {code} is unknown")))?;
            let kind = self.u8(a + 1)?;
            let reg = self.u8(a + 2)?;
            let disp = self.u32(a + 4)? as i32;
            let loc = match kind {
                1 if reg < 8 => ArgLocation::Register(reg),
                2 => ArgLocation::Frame(disp),
                3 => ArgLocation::Data(disp),
                4 => ArgLocation::Constant(disp),
                _ => {
                    return Err(
                        self.err(a + 1, format!("argument location {kind}/{reg} is unknown"))
                    );
                }
            };
            let arg_name = self.string(a + 8, "argument name")?;
            if ty == ArgType::Record {
                if flags & FLAG_RECORDS == 0 {
                    return Err(self.err(a, "a record argument without record types (flag 2)"));
                }
                let rt = self.ptr(at + DESC_SIZE + 4 * i)?;
                let (r, offsets) = self.record_type(rt)?;
                records.push(r);
                member_offsets.push(offsets);
            }
            args.push((ty, arg_name));
            locations.push(loc);
        }
        let desc = ProbeDesc {
            name,
            keys,
            detail,
            file,
            line,
            args,
            debug: flags & FLAG_DEBUG != 0,
            records,
        };
        desc.validate().map_err(|e| self.err(at, e.to_string()))?;
        Ok(GuestProbe {
            desc,
            object: String::new(),
            address: at,
            site,
            locations,
            member_offsets,
            bits16: self.bits16,
        })
    }

    /// A record type descriptor and its members' offsets.
    fn record_type(&mut self, at: u32) -> Result<(RecordType, Vec<u32>), TnfError> {
        if self.u32(at)? != RECORD_MAGIC {
            return Err(self.err(at, "record type does not start with 'TNFR'"));
        }
        let name = self.string(at + 4, "record type name")?;
        let count = self.u8(at + 8)?;
        if count == 0 || usize::from(count) > tnf::probe::MAX_ARGS {
            return Err(self.err(at + 8, format!("{count} record members (1 to 5)")));
        }
        let mut members = Vec::new();
        let mut offsets = Vec::new();
        for i in 0..u32::from(count) {
            let m = at + 12 + 12 * i;
            let code = self.u8(m)?;
            let ty = ArgType::from_code(code)
                .filter(|t| *t != ArgType::Record)
                .ok_or_else(|| self.err(m, format!("member type code {code} is not allowed")))?;
            let offset = self.u32(m + 4)?;
            if offset > 0xFFFF {
                return Err(self.err(m + 4, format!("member offset {offset} is beyond 64 KB")));
            }
            members.push((ty, self.string(m + 8, "member name")?));
            offsets.push(offset);
        }
        Ok((RecordType { name, members }, offsets))
    }
}

/// The probes of module `index` (none if it exports no table).
pub(crate) fn read_module(p: &mut Process, index: usize) -> Result<Vec<GuestProbe>, TnfError> {
    let m = &p.pcb.modules[index];
    let Some(entry) = m.module.export(PROBE_LIST_EXPORT) else {
        return Ok(Vec::new());
    };
    let module = m.name.clone();
    let object = m.path.clone();
    let bits16 = matches!(m.module.format, loader::Format::Ne);
    let Some(table) = entry.address().and_then(|a| m.flat(a.object, a.offset)) else {
        return Err(TnfError::new(
            &module,
            0,
            "TNF_PROBE_LIST is not an address in the module",
        ));
    };
    let mut r = ProbeTableReader { p, module, bits16 };
    if r.u32(table)? != LIST_MAGIC {
        return Err(r.err(table, "TNF_PROBE_LIST does not start with 'TNFL'"));
    }
    let count = r.u32(table + 4)?;
    if count > MAX_PROBES {
        return Err(r.err(table + 4, format!("{count} probes (at most {MAX_PROBES})")));
    }
    let mut out = Vec::with_capacity(count as usize);
    for i in 0..count {
        let at = r.ptr(table + 8 + 4 * i)?;
        let mut probe = r.descriptor(at)?;
        probe.object = object.clone();
        out.push(probe);
    }
    Ok(out)
}
