//! `os2trace tdf show FILE [--json]` decodes a TDF, TFF or TMI (header,
//! types and groups, records, RPN disassembled, FMT strings with their
//! controls shown as `{%X}`); `os2trace tdf verify FILE.TDF MODULE [/M=map]`
//! checks each tracepoint against the module and exits 1 when there is a
//! problem (see `tdf::verify`); `os2trace tdf list` lists the tracepoints
//! (see `views`).
//!
//! `--json` prints one object with `kind` (`"TDF"`, `"TFF"`, `"TMI"`) and the
//! fields of the file's model.

use std::fmt::Write as _;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use stda::tff::Tff;
use tdf::definition::EntryKind;
use tdf::{Tdf, Tmi};

/// `tdf`'s arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    command: TdfCommand,
}

#[derive(clap::Subcommand, Debug)]
enum TdfCommand {
    /// Decode a TDF, TFF or TMI file.
    Show {
        /// The file (its magic says which kind).
        file: String,
        /// One JSON object with `kind` and the fields of the file's model.
        #[arg(long)]
        json: bool,
    },
    /// Check each tracepoint against the module (exit 1 on problems).
    #[command(after_help = "/M=map is accepted for --map.")]
    Verify {
        /// The TDF.
        tdf: String,
        /// The LX or NE module it traces.
        module: String,
        /// /M=: the module's linker MAP file, for symbol checks.
        #[arg(long)]
        map: Option<String>,
    },
    /// One line per tracepoint: names, address, MAP symbol, DESC.
    #[command(after_help = crate::views::LIST_AFTER_HELP)]
    List(crate::views::ListArgs),
}

/// Entry point of the subcommand.
pub fn run(args: Args) -> Result<i32> {
    match args.command {
        TdfCommand::Show { file, json } => show(&file, json),
        TdfCommand::Verify { tdf, module, map } => verify(&tdf, &module, map.as_deref()),
        TdfCommand::List(a) => crate::views::tdf_list(a),
    }
}

fn text(bytes: &[u8]) -> String {
    let mut s = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == 1 && i + 1 < bytes.len() {
            let _ = write!(s, "{{%{}}}", char::from(bytes[i + 1]));
            i += 2;
            continue;
        }
        if (0x20..0x7F).contains(&b) {
            s.push(char::from(b));
        } else {
            let _ = write!(s, "\\x{b:02X}");
        }
        i += 1;
    }
    s
}

fn show(file: &str, as_json: bool) -> Result<i32> {
    let file = file.to_string();
    let bytes = std::fs::read(&file).with_context(|| format!("cannot read {file}"))?;
    let (out, value) = match bytes.get(..4) {
        Some(b"TDF\0") => show_tdf(&Tdf::parse(&bytes).with_context(|| file.clone())?),
        Some(b"TFF\0") => show_tff(&Tff::parse(&bytes).with_context(|| file.clone())?),
        Some(b"TMI\0") => show_tmi(&Tmi::parse(&bytes).with_context(|| file.clone())?),
        _ => bail!("{file} is not a TDF, TFF or TMI file (no TDF/TFF/TMI magic at offset 0)"),
    };
    if as_json {
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{}", crate::util::escape_controls(&out));
    }
    Ok(0)
}

fn show_tdf(t: &Tdf) -> (String, Value) {
    let mut s = String::new();
    let module = String::from_utf8_lossy(&t.module).into_owned();
    let _ = writeln!(
        s,
        "TDF  module {module}  major {:04X}  TDFID {:04X}  MAXDATALENGTH {}",
        t.major, t.tdf_id, t.max_data_len
    );
    let _ = writeln!(
        s,
        "     {} records, {} type/group entries, {} variables",
        t.records.len(),
        t.entries.len(),
        t.vars.len()
    );
    let ours = t.os2trace_opcodes();
    if !ours.is_empty() {
        let _ = writeln!(
            s,
            "     an os2trace TDF: uses RPN opcodes OS/2 does not define: {}",
            ours.join(", ")
        );
    }
    let mut entries = Vec::new();
    for e in &t.entries {
        let kind = match e.kind {
            EntryKind::Type => "TYPE",
            EntryKind::Group => "GROUP",
            EntryKind::Other(_) => "?",
        };
        let name = String::from_utf8_lossy(&e.name).into_owned();
        let _ = writeln!(s, "  {kind:<5} {name:<8} {:#06x}", e.id);
        entries.push(json!({"kind": kind, "name": name, "id": e.id}));
    }
    let mut records = Vec::new();
    for r in &t.records {
        let _ = writeln!(
            s,
            "minor {:04X}  {:04X}:{:08X}  opcode {:02X}  type {:04X}  group {:04X}  major {:04X}  {} RPN bytes",
            r.minor,
            r.object,
            r.offset,
            r.opcode,
            r.type_mask,
            r.group,
            r.major,
            r.rpn.len()
        );
        let listing = match rpn_vm::disasm::disassemble(&r.rpn, "  ") {
            Ok(l) => l,
            Err((at, e)) => format!("    <undecodable at byte {at}: {e}>\n"),
        };
        s.push_str(&listing);
        if !listing.ends_with('\n') {
            s.push('\n');
        }
        records.push(json!({
            "minor": r.minor, "object": r.object, "offset": r.offset, "opcode": r.opcode,
            "type": r.type_mask, "group": r.group, "major": r.major,
            "rpn": hex::encode(&r.rpn), "listing": listing.lines().map(str::trim).collect::<Vec<_>>(),
        }));
    }
    let v = json!({
        "kind": "TDF", "module": module, "major": t.major, "tdf_id": t.tdf_id,
        "max_data_len": t.max_data_len, "vars": t.vars, "entries": entries, "records": records,
        "os2trace_opcodes": ours,
    });
    (s, v)
}

fn show_tff(t: &Tff) -> (String, Value) {
    let mut s = String::new();
    let _ = writeln!(s, "TFF  major {:04X}  {} records", t.major, t.records.len());
    let mut records = Vec::new();
    for r in &t.records {
        let desc = text(&r.desc);
        let _ = writeln!(s, "minor {:04X}  DESC \"{desc}\"", r.minor);
        let fmts: Vec<String> = r.fmts.iter().map(|f| text(f)).collect();
        for f in &fmts {
            let _ = writeln!(s, "    FMT \"{f}\"");
        }
        records.push(json!({"minor": r.minor, "desc": desc, "fmts": fmts}));
    }
    (
        s,
        json!({"kind": "TFF", "major": t.major, "records": records}),
    )
}

fn show_tmi(t: &Tmi) -> (String, Value) {
    let mut s = String::new();
    let module = String::from_utf8_lossy(&t.module).into_owned();
    let _ = writeln!(
        s,
        "TMI  module {module}  major {:04X}  TDFID {:04X}  {} records",
        t.major,
        t.tdf_id,
        t.records.len()
    );
    let mut records = Vec::new();
    for r in &t.records {
        let name = String::from_utf8_lossy(&r.name).into_owned();
        let size = if r.size == u32::MAX {
            "last".to_string()
        } else {
            format!("{:#x}", r.size)
        };
        let _ = writeln!(
            s,
            "ORBIT {:04X} (variable {}, bit {})  {:04X}:{:08X}  size {size}  {name}",
            r.orbit_id,
            r.orbit_id / 32,
            r.orbit_id % 32,
            r.object,
            r.offset
        );
        records.push(json!({"orbit_id": r.orbit_id, "object": r.object, "offset": r.offset, "size": r.size, "name": name}));
    }
    (
        s,
        json!({"kind": "TMI", "module": module, "major": t.major, "tdf_id": t.tdf_id, "records": records}),
    )
}

fn verify(tdf_file: &str, module_file: &str, map: Option<&str>) -> Result<i32> {
    let bytes = std::fs::read(tdf_file).with_context(|| format!("cannot read {tdf_file}"))?;
    let tdf = Tdf::parse(&bytes).with_context(|| tdf_file.to_string())?;
    let module =
        std::fs::read(module_file).with_context(|| format!("cannot read {module_file}"))?;
    let image = tdf::module::image_from_bytes(&module).with_context(|| module_file.to_string())?;
    let symbols = match map {
        Some(m) => {
            let b = std::fs::read(m).with_context(|| format!("cannot read {m}"))?;
            Some(tdf::module::symbols_from_map(&b).with_context(|| m.to_string())?)
        }
        None => None,
    };
    let problems = tdf::verify::verify(&tdf, &image, symbols.as_ref());
    for p in &problems {
        println!("{p}");
    }
    if problems.is_empty() {
        println!(
            "{}: {} tracepoints verified against {module_file}, no problems",
            tdf_file,
            tdf.records.len()
        );
        Ok(0)
    } else {
        println!(
            "{}: {} problems in {} tracepoints",
            tdf_file,
            problems.len(),
            tdf.records.len()
        );
        Ok(1)
    }
}
