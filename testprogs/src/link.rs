//! The linker: segments with symbolic fixups in, a [`Program`] out.
//!
//! It resolves every label across the module's segments, turns fixup
//! requests into loader [`Fixup`](loader::Fixup)s (sorted by segment and
//! site, one record each), fills the sites of LX off32 fixups with the
//! target's address at the preferred base (as a linker does), builds the
//! entry table, resident names, start, stack and automatic data, stores the
//! chain words the writer would store (so `parse(write(m)) == m`), writes
//! the file, and renders the MAP, TSF and trace program texts.

use loader::{Address, Entry, EntryPoint, Format, Module, Name, SourceKind, Target};

use crate::error::{BuildError, Result, link_error};
use crate::segment::{Ref, Segment};
use crate::{Program, Symbol, Tracepoint, map, trace};

/// The preferred base address of LX object `n` (what
/// [`Module::add_object`] gives): 64 KiB times the object number.
pub(crate) fn lx_base(object: u16) -> u32 {
    0x10000 * u32::from(object)
}

/// An exported entry point.
pub(crate) struct Export {
    pub ordinal: u16,
    /// The label it leads to.
    pub symbol: &'static str,
    /// The exported name (resident name table).
    pub name: &'static str,
}

/// A tracepoint to define at a label, in both TSF and trace program form.
pub(crate) struct TraceSpec {
    pub minor: u16,
    /// The TSF names the routine with `RETEP=RET` instead of the address:
    /// `at` must be the routine's last `ret`, and the public symbol before
    /// it the routine.
    pub retep: bool,
    /// The label (public or local) of the traced instruction.
    pub at: &'static str,
    /// TSF `DESC=`.
    pub desc: &'static str,
    /// TSF `FMT=` strings.
    pub fmt: &'static [&'static str],
    /// TSF data statements (`REGS=(AX)`, `MEM=(RSS+SP,DIRECT,12)`).
    pub data: &'static [&'static str],
    /// The same logging as trace program instructions.
    pub rpn: &'static [&'static str],
}

/// Everything about one module except its code.
pub(crate) struct Spec {
    pub format: Format,
    /// Module name (first resident name), e.g. `HELLO16`.
    pub name: &'static str,
    /// File name, e.g. `HELLO16.EXE`.
    pub file_name: &'static str,
    /// Description (first non-resident name).
    pub description: &'static str,
    /// Module flags (NE flag word or LX module flags).
    pub flags: u32,
    pub segments: Vec<Segment>,
    pub exports: Vec<Export>,
    /// Label of the start (EXE) or initialization routine (DLL).
    pub start: &'static str,
    /// Initial SS:SP / ESP object and offset.
    pub stack: Option<(u16, u32)>,
    pub stack_size: u32,
    pub auto_data: Option<u16>,
    pub major: u16,
    pub tracepoints: Vec<TraceSpec>,
}

/// The import module number of `m` in `module` (added when new); records
/// the MAP file's `Imp` line, `name` imported as `what` (`DOSCALLS.138`),
/// once in `imports`.
fn import(
    module: &mut Module,
    imports: &mut Vec<(String, String)>,
    m: &str,
    name: &str,
    what: String,
) -> u16 {
    let number = module.import_module(m);
    let line = (name.to_string(), what);
    if !imports.contains(&line) {
        imports.push(line);
    }
    number
}

/// Links the module and writes it.
pub(crate) fn link(spec: Spec) -> Result<Program> {
    let program = spec.name;
    let mut symbols: Vec<Symbol> = Vec::new();
    for (i, seg) in spec.segments.iter().enumerate() {
        for l in &seg.labels {
            if symbols.iter().any(|s| s.name == l.name) {
                return Err(link_error(
                    program,
                    format!("label {} defined twice", l.name),
                ));
            }
            symbols.push(Symbol {
                object: i as u16 + 1,
                offset: l.offset,
                name: l.name.clone(),
                public: l.public,
            });
        }
    }
    let find = |name: &str| -> Result<&Symbol> {
        symbols
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| link_error(program, format!("undefined label {name}")))
    };

    let mut module = match spec.format {
        Format::Ne => Module::new_ne(spec.name),
        Format::Lx => Module::new_lx(spec.name),
    };
    module.description = Some(spec.description.to_string());
    module.flags = spec.flags;
    let mut segments = spec.segments;
    let mut fixups = Vec::new();
    let mut imports = Vec::new();
    for (i, seg) in segments.iter_mut().enumerate() {
        let object = i as u16 + 1;
        for f in &seg.fixups {
            let target = match &f.target {
                Ref::Symbol(name) => {
                    let s = find(name)?;
                    Target::Internal {
                        object: s.object,
                        offset: s.offset,
                    }
                }
                Ref::Segment(n) => Target::Internal {
                    object: *n,
                    offset: 0,
                },
                Ref::Local { segment, offset } => Target::Internal {
                    object: *segment,
                    offset: *offset,
                },
                Ref::Ordinal {
                    module: m,
                    ordinal,
                    name,
                } => Target::ImportOrdinal {
                    module: import(&mut module, &mut imports, m, name, format!("{m}.{ordinal}")),
                    ordinal: *ordinal,
                },
                Ref::Named { module: m, name } => Target::ImportName {
                    module: import(&mut module, &mut imports, m, name, format!("{m}.{name}")),
                    name: name.to_string(),
                },
            };
            if spec.format == Format::Lx
                && f.kind == SourceKind::Off32
                && let Target::Internal { object: o, offset } = target
            {
                let value = lx_base(o) + offset;
                let site = f.offset as usize;
                let Some(bytes) = seg.bytes.get_mut(site..site + 4) else {
                    return Err(link_error(program, "off32 site outside the stored bytes"));
                };
                bytes.copy_from_slice(&value.to_le_bytes());
            }
            fixups.push((object, f.offset, f.kind, target));
        }
    }
    for seg in &segments {
        let n = module.add_object(seg.flags, seg.virtual_size, &seg.bytes);
        if spec.format == Format::Lx {
            module.objects[usize::from(n) - 1].base = lx_base(n);
        }
    }
    fixups.sort_by_key(|f| (f.0, f.1));
    for (object, offset, kind, target) in fixups {
        module.add_fixup(object, offset, kind, target);
    }
    for e in &spec.exports {
        let s = find(e.symbol)?;
        let point = match spec.format {
            Format::Ne => EntryPoint::NeFixed {
                segment: s.object as u8,
                offset: s.offset as u16,
            },
            Format::Lx => EntryPoint::Entry32 {
                object: s.object,
                offset: s.offset,
            },
        };
        module.entries.push(Entry {
            ordinal: e.ordinal,
            flags: 1,
            point,
        });
        module.resident_names.push(Name {
            name: e.name.to_string(),
            ordinal: e.ordinal,
        });
    }
    module.entries.sort_by_key(|e| e.ordinal);
    let start = find(spec.start)?;
    module.start = Some(Address {
        object: start.object,
        offset: start.offset,
    });
    module.stack = spec
        .stack
        .map(|(object, offset)| Address { object, offset });
    module.stack_size = spec.stack_size;
    module.auto_data = spec.auto_data;
    module
        .store_chain_words()
        .map_err(|source| BuildError::Write { program, source })?;
    let bytes = loader::write(&module).map_err(|source| BuildError::Write { program, source })?;

    let mut tracepoints = Vec::new();
    for t in &spec.tracepoints {
        let at = find(t.at)?;
        let anchor = symbols
            .iter()
            .filter(|s| s.public && s.object == at.object && s.offset <= at.offset)
            .max_by_key(|s| s.offset)
            .ok_or_else(|| link_error(program, format!("no public symbol before {}", t.at)))?;
        let opcode = module
            .byte_at(Address {
                object: at.object,
                offset: at.offset,
            })
            .ok_or_else(|| link_error(program, format!("{} lies outside its segment", t.at)))?;
        tracepoints.push(Tracepoint {
            minor: t.minor,
            label: t.at.to_string(),
            symbol: anchor.name.clone(),
            delta: at.offset - anchor.offset,
            object: at.object,
            offset: at.offset,
            opcode,
            retep: t.retep,
        });
    }
    let entry = (start.object, start.offset);
    let map = map::render(spec.name, &segments, &symbols, &imports, entry);
    let tsf = trace::tsf(spec.file_name, spec.major, &spec.tracepoints, &tracepoints);
    let rpn = trace::rpn(
        spec.file_name,
        spec.major,
        &spec.tracepoints,
        &tracepoints,
        &symbols,
    );
    Ok(Program {
        name: spec.name,
        file_name: spec.file_name,
        major: spec.major,
        module,
        bytes,
        map,
        tsf,
        rpn,
        symbols,
        tracepoints,
        source: None,
    })
}

#[cfg(test)]
mod tests {
    use loader::Format;

    use super::{Spec, link};
    use crate::error::BuildError;
    use crate::segment::{Code, Data, Segment};

    fn spec(segments: Vec<Segment>, start: &'static str) -> Spec {
        Spec {
            format: Format::Ne,
            name: "T",
            file_name: "T.EXE",
            description: "T",
            flags: 0x0202,
            segments,
            exports: Vec::new(),
            start,
            stack: None,
            stack_size: 0,
            auto_data: None,
            major: 1,
            tracepoints: Vec::new(),
        }
    }

    fn code(f: impl FnOnce(&mut Code)) -> Segment {
        let mut c = Code::new("T", 16).unwrap();
        f(&mut c);
        c.finish("_TEXT", "CODE", 0).unwrap()
    }

    #[test]
    fn an_undefined_label_is_a_link_error() {
        let seg = code(|c| {
            c.public("main").unwrap();
            c.call_far_import(crate::segment::Ref::Symbol("nowhere"))
                .unwrap();
        });
        let err = link(spec(vec![seg], "main")).unwrap_err();
        assert!(matches!(err, BuildError::Link { .. }));
        assert!(err.to_string().contains("undefined label nowhere"), "{err}");
        let seg = code(|c| {
            c.public("main").unwrap();
            c.op(|a| a.ret()).unwrap();
        });
        let err = link(spec(vec![seg], "start")).unwrap_err();
        assert!(err.to_string().contains("undefined label start"), "{err}");
    }

    #[test]
    fn a_label_defined_twice_is_a_link_error() {
        let seg = code(|c| {
            c.public("main").unwrap();
            c.op(|a| a.ret()).unwrap();
        });
        let mut d = Data::new();
        d.word("main", 0);
        let err = link(spec(vec![seg, d.finish("_DATA", "DATA", 1)], "main")).unwrap_err();
        assert!(err.to_string().contains("defined twice"), "{err}");
    }

    #[test]
    fn a_module_the_writer_refuses_is_a_write_error() {
        // A segment above 64 KiB does not fit an NE file.
        let mut d = Data::new();
        d.bytes("big", &vec![1; 0x1_0001]);
        let seg = code(|c| {
            c.public("main").unwrap();
            c.op(|a| a.ret()).unwrap();
        });
        let err = link(spec(vec![seg, d.finish("_DATA", "DATA", 1)], "main")).unwrap_err();
        assert!(matches!(err, BuildError::Write { .. }), "{err}");
    }
}
