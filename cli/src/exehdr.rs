//! `os2trace exehdr MODULE [--json]`: dumps an LX or NE module in the spirit
//! of IBM's EXEHDR: header, objects or segments, pages, entries, imports and
//! a fixup summary.
//!
//! `--json` prints one object: `format`, `name`, `module_type`, `flags`,
//! `start`, `stack`, `auto_data`; for LX `objects` (`index`, `flags`, `size`
//! = virtual size, `base`, `bits`, `sha256` of the unrelocated image, and
//! `pages` with `kind` and `sha256` of the decoded page, zero-padded to the
//! page size as the loader maps it); for NE `segments`
//! (`index`, `flags` as stored, `size` = bytes in the file, `min_alloc`,
//! `bits`, `sha256` of the data as stored with iterated data expanded);
//! `imports` (module names); `entries` (`ordinal`, `name`, `object`,
//! `offset`, `exported`); `resources` (`type`, `name`, `object`, `offset`,
//! `size`); `fixups` (`sites`, `records`, `kinds`).

use std::fmt::Write as _;

use anyhow::{Context, Result};
use loader::digest::{image_sha256, page_sha256};
use loader::{Bitness, EntryPoint, Format, ForwardTarget, Module, Target, lx, ne};
use serde_json::{Value, json};

/// `exehdr`'s arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// An OS/2 LX or NE executable or DLL.
    module: String,
    /// One JSON object instead of the text dump (also /JSON).
    #[arg(long)]
    json: bool,
}

/// Entry point of the subcommand.
pub fn run(args: Args) -> Result<i32> {
    let file = args.module;
    let as_json = args.json;
    let bytes = std::fs::read(&file).with_context(|| format!("cannot read {file}"))?;
    let (format, _) =
        loader::detect(&bytes).with_context(|| format!("{file} is not an LX or NE module"))?;
    let dump = match format {
        Format::Lx => {
            let f = lx::read(&bytes).with_context(|| format!("cannot read {file}"))?;
            if as_json {
                pretty(&lx_json(&f))
            } else {
                lx_text(&f)
            }
        }
        Format::Ne => {
            let f = ne::read(&bytes).with_context(|| format!("cannot read {file}"))?;
            if as_json {
                pretty(&ne_json(&f))
            } else {
                ne_text(&f)
            }
        }
    };
    // Names come from the module: no escape sequences reach the terminal.
    print!("{}", crate::util::escape_controls(&dump));
    Ok(0)
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

fn bits(m: &Module, object: usize) -> u32 {
    match m.bitness(object as u16 + 1) {
        Some(Bitness::Bits32) => 32,
        _ => 16,
    }
}

fn address(a: Option<loader::Address>) -> Value {
    a.map_or(
        Value::Null,
        |a| json!({"object": a.object, "offset": a.offset}),
    )
}

/// How many fixup records the module's fixup sites come from (consecutive
/// sites of one record count once).
fn fixup_records(m: &Module) -> usize {
    m.fixups
        .windows(2)
        .filter(|w| w[0].record != w[1].record)
        .count()
        + usize::from(!m.fixups.is_empty())
}

/// Name of import module `n` (1-based), `?` when there is none.
fn import_module(m: &Module, n: u16) -> &str {
    m.imports
        .get(usize::from(n).wrapping_sub(1))
        .map_or("?", String::as_str)
}

/// `oooo:xxxxxxxx`, an object (or segment) and an offset in hex.
fn object_offset(a: loader::Address) -> String {
    format!("{:04x}:{:08x}", a.object, a.offset)
}

/// The name of an OS type code in a module header.
fn os_name(os: u16) -> String {
    if os == 1 {
        "OS/2".to_string()
    } else {
        os.to_string()
    }
}

/// The JSON dump: the fields every module has, what `specific` inserts for
/// its format, then imports, resources, entries and fixups.
fn json_dump(m: &Module, specific: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Value {
    let mut v = serde_json::Map::new();
    v.insert("format".into(), json!(m.format.name()));
    v.insert("name".into(), json!(m.name));
    v.insert("description".into(), json!(m.description));
    v.insert("module_type".into(), json!(m.module_type().name()));
    v.insert("flags".into(), json!(m.flags));
    v.insert("start".into(), address(m.start));
    v.insert("stack".into(), address(m.stack));
    v.insert("auto_data".into(), json!(m.auto_data));
    v.insert("heap_size".into(), json!(m.heap_size));
    v.insert("stack_size".into(), json!(m.stack_size));
    specific(&mut v);
    v.insert("imports".into(), json!(m.imports));
    let resources: Vec<Value> = m
        .resources
        .iter()
        .map(|r| json!({"type": r.type_id, "name": r.name_id, "object": r.object, "offset": r.offset, "size": r.size}))
        .collect();
    v.insert("resources".into(), Value::Array(resources));
    let entries: Vec<Value> = m
        .entries
        .iter()
        .map(|e| {
            let a = e.address();
            json!({
                "ordinal": e.ordinal,
                "name": m.export_name(e.ordinal),
                "object": a.map(|a| a.object),
                "offset": a.map(|a| a.offset),
                "exported": e.exported(),
            })
        })
        .collect();
    v.insert("entries".into(), Value::Array(entries));
    v.insert(
        "fixups".into(),
        json!({"sites": m.fixups.len(), "records": fixup_records(m), "kinds": m.fixup_kinds()}),
    );
    Value::Object(v)
}

fn lx_json(f: &lx::LxFile) -> Value {
    let m = &f.module;
    let ps = m.page_size();
    json_dump(m, |v| {
        v.insert("page_size".into(), json!(ps));
        let objects: Vec<Value> = m
            .objects
            .iter()
            .enumerate()
            .map(|(i, o)| {
                let pages: Vec<Value> = o
                    .pages
                    .iter()
                    .map(|p| json!({"kind": p.kind.name(), "sha256": page_sha256(p, ps)}))
                    .collect();
                json!({
                    "index": i + 1,
                    "flags": o.flags,
                    "size": o.virtual_size,
                    "base": o.base,
                    "bits": bits(m, i),
                    "sha256": image_sha256(o, ps),
                    "pages": pages,
                })
            })
            .collect();
        v.insert("objects".into(), Value::Array(objects));
    })
}

fn ne_json(f: &ne::NeFile) -> Value {
    let m = &f.module;
    json_dump(m, |v| {
        let segments: Vec<Value> = f
            .segments
            .iter()
            .zip(&m.objects)
            .enumerate()
            .map(|(i, (s, o))| {
                json!({
                    "index": i + 1,
                    "flags": s.flags,
                    "size": s.length,
                    "min_alloc": o.virtual_size,
                    "bits": bits(m, i),
                    "sha256": image_sha256(o, 0),
                })
            })
            .collect();
        v.insert("segments".into(), Value::Array(segments));
    })
}

fn lx_object_flags(flags: u32) -> String {
    let names = [
        (0x0001, "readable"),
        (0x0002, "writable"),
        (0x0004, "executable"),
        (0x0008, "resource"),
        (0x0010, "discardable"),
        (0x0020, "shared"),
        (0x0040, "preload"),
        (0x0080, "invalid pages"),
        (0x0100, "zero-filled pages"),
        (0x1000, "16:16 alias"),
        (0x2000, "32-bit"),
        (0x4000, "conforming"),
    ];
    names
        .iter()
        .filter(|(b, _)| flags & b != 0)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

fn ne_segment_flags(flags: u16) -> String {
    let mut words = vec![if flags & 1 != 0 { "DATA" } else { "CODE" }.to_string()];
    for (bit, name) in [
        (0x0008, "ITERATED"),
        (0x0010, "MOVABLE"),
        (0x0020, "SHARED"),
        (0x0040, "PRELOAD"),
    ] {
        if flags & bit != 0 {
            words.push(name.into());
        }
    }
    if flags & 0x0080 != 0 {
        words.push(
            if flags & 1 != 0 {
                "READONLY"
            } else {
                "EXECUTEONLY"
            }
            .into(),
        );
    }
    if flags & 0x0100 != 0 {
        words.push("RELOCINFO".into());
    }
    if flags & 0x1000 != 0 {
        words.push("DISCARDABLE".into());
    }
    if flags & 0x2000 != 0 {
        words.push("32-BIT".into());
    }
    words.push(format!("DPL {}", (flags >> 10) & 3));
    words.join(" ")
}

/// One header line: the label, padded to column 26, then the value.
fn field(out: &mut String, label: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "{label:<26}{value}");
}

/// The text dump: the header fields every module has, what `specific`
/// writes for its format, then imports, entries, resources and fixups.
fn text_dump(m: &Module, specific: impl FnOnce(&mut String)) -> String {
    let mut out = String::new();
    field(&mut out, "Module:", &m.name);
    if let Some(d) = &m.description {
        field(&mut out, "Description:", d);
    }
    field(&mut out, "Format:", m.format.name());
    field(&mut out, "Module type:", m.module_type().name());
    field(&mut out, "Module flags:", format_args!("{:08x}", m.flags));
    let addr = |a: Option<loader::Address>| a.map_or("none".to_string(), object_offset);
    field(&mut out, "Initial CS:IP / EIP:", addr(m.start));
    field(&mut out, "Initial SS:SP / ESP:", addr(m.stack));
    let auto_data = m.auto_data.map_or("none".into(), |n| n.to_string());
    field(&mut out, "Automatic data:", auto_data);
    field(&mut out, "Heap size:", format_args!("{:08x}", m.heap_size));
    field(
        &mut out,
        "Stack size:",
        format_args!("{:08x}", m.stack_size),
    );
    specific(&mut out);
    tail_text(&mut out, m);
    out
}

fn tail_text(out: &mut String, m: &Module) {
    let _ = writeln!(out, "\nImports:");
    if m.imports.is_empty() {
        let _ = writeln!(out, "  none");
    }
    for (i, name) in m.imports.iter().enumerate() {
        let _ = writeln!(out, "  {:3} {name}", i + 1);
    }
    let _ = writeln!(out, "\nEntries:");
    if m.entries.is_empty() {
        let _ = writeln!(out, "  none");
    }
    for e in &m.entries {
        let name = m.export_name(e.ordinal).unwrap_or("");
        let place = match &e.point {
            EntryPoint::Forwarder { module, target } => {
                let module = import_module(m, *module);
                match target {
                    ForwardTarget::Ordinal(o) => format!("-> {module}.{o}"),
                    ForwardTarget::Name(n) => format!("-> {module}.{n}"),
                }
            }
            _ => e.address().map_or(String::new(), object_offset),
        };
        let exported = if e.exported() { "exported" } else { "" };
        let _ = writeln!(out, "  {:5}  {place:<22} {exported:<8} {name}", e.ordinal);
    }
    if !m.resources.is_empty() {
        let _ = writeln!(out, "\nResources:");
        for r in &m.resources {
            let _ = writeln!(
                out,
                "  type {:5} name {:5}  {:04x}:{:08x} {:8} bytes",
                r.type_id, r.name_id, r.object, r.offset, r.size
            );
        }
    }
    let _ = writeln!(
        out,
        "\nFixups: {} sites in {} records",
        m.fixups.len(),
        fixup_records(m)
    );
    for (kind, n) in m.fixup_kinds() {
        let _ = writeln!(out, "  {kind:<32} {n:6}");
    }
    // (module, ordinal, name) -> sites
    let mut by_import: std::collections::BTreeMap<(String, u32, String), usize> =
        Default::default();
    for f in &m.fixups {
        let key = match &f.target {
            Target::ImportOrdinal { module, ordinal } => (
                import_module(m, *module).to_string(),
                *ordinal,
                String::new(),
            ),
            Target::ImportName { module, name } => {
                (import_module(m, *module).to_string(), 0, name.clone())
            }
            _ => continue,
        };
        *by_import.entry(key).or_insert(0) += 1;
    }
    if !by_import.is_empty() {
        let _ = writeln!(out, "\nImported entry points (sites):");
        for ((module, ordinal, name), n) in by_import {
            let label = if name.is_empty() {
                format!("{module}.{ordinal}")
            } else {
                format!("{module}.{name}")
            };
            let _ = writeln!(out, "  {label:<32} {n:6}");
        }
    }
}

fn lx_text(f: &lx::LxFile) -> String {
    let m = &f.module;
    let h = &f.header;
    text_dump(m, |out| {
        let cpu = match h.cpu {
            1 => "80286".to_string(),
            2 => "80386".to_string(),
            3 => "80486".to_string(),
            n => format!("{n}"),
        };
        field(out, "CPU type:", cpu);
        field(out, "OS type:", os_name(h.os));
        field(out, "Module version:", format_args!("{:08x}", h.version));
        field(out, "Page size:", format_args!("{:08x}", h.page_size));
        field(out, "Page offset shift:", h.page_shift);
        field(out, "Pages:", h.npages);
        if h.debug_off != 0 {
            let debug = format!("{:08x} ({} bytes)", h.debug_off, h.debug_len);
            field(out, "Debug info:", debug);
        }
        let _ = writeln!(
            *out,
            "\nno. virtual  base     flags    pages bits  attributes"
        );
        for (i, o) in m.objects.iter().enumerate() {
            let _ = writeln!(
                out,
                "{:3} {:08x} {:08x} {:08x} {:5} {:4}  {}",
                i + 1,
                o.virtual_size,
                o.base,
                o.flags,
                o.pages.len(),
                bits(m, i),
                lx_object_flags(o.flags)
            );
        }
        let _ = writeln!(
            *out,
            "\nobject page  logical kind        file offset  stored decoded"
        );
        let mut logical = 0usize;
        for (i, o) in m.objects.iter().enumerate() {
            for (k, p) in o.pages.iter().enumerate() {
                let e = f.pages[logical];
                logical += 1;
                let _ = writeln!(
                    *out,
                    "{:6} {:4} {:8} {:<11} {:08x} {:8} {:7}",
                    i + 1,
                    k + 1,
                    logical,
                    p.kind.name(),
                    e.file_offset,
                    e.data_size,
                    p.data.len()
                );
            }
        }
    })
}

fn ne_text(f: &ne::NeFile) -> String {
    let m = &f.module;
    let h = &f.header;
    text_dump(m, |out| {
        let linker = format!("{}.{}", h.linker_version, h.linker_revision);
        field(out, "Linker version:", linker);
        field(out, "Target OS:", os_name(h.target_os.into()));
        field(out, "Alignment shift:", h.align);
        field(out, "Movable entries:", h.nmovable);
        let _ = writeln!(
            *out,
            "\nno. file off  length   loaded min alloc flags relocs  attributes"
        );
        for (i, s) in f.segments.iter().enumerate() {
            let _ = writeln!(
                *out,
                "{:3} {:08x} {:6x} {:8x} {:9x} {:04x} {:6}  {}",
                i + 1,
                s.file_offset,
                s.length,
                m.objects[i].stored_len(0),
                m.objects[i].virtual_size,
                s.flags,
                s.relocations,
                ne_segment_flags(s.flags)
            );
        }
    })
}
