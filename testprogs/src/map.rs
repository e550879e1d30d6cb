//! LINK386-style MAP files.
//!
//! The layout is IBM LINK386's (see the MAP files of the TRCUST corpus):
//! the module name, the `Start Length Name Class` segment list with
//! `0001:00000000 00000002EH` lines, the `Origin Group` list, `Publics by
//! Name` (with `Imp` lines for imported names, as the Microsoft linkers
//! write them), `Publics by Value`, and `Program entry point at`. Offsets
//! are eight hex digits for 16-bit and 32-bit segments alike, as LINK386
//! writes them. `loader::map::parse` reads it back.

use std::fmt::Write as _;

use crate::Symbol;
use crate::segment::Segment;

/// Renders the MAP file. `imports` are (local name, `MODULE.ordinal` or
/// `MODULE.name`) pairs; `entry` is the start address.
pub(crate) fn render(
    name: &str,
    segments: &[Segment],
    symbols: &[Symbol],
    imports: &[(String, String)],
    entry: (u16, u32),
) -> String {
    let mut out = String::new();
    let _ = writeln!(out);
    let _ = writeln!(out, " {name}");
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        " Start         Length     Name                   Class"
    );
    for (i, s) in segments.iter().enumerate() {
        let _ = writeln!(
            out,
            " {:04X}:{:08X} {:09X}H {:<22} {}",
            i + 1,
            0,
            s.virtual_size,
            s.name,
            s.class
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "  Origin   Group");
    for (i, s) in segments.iter().enumerate() {
        if s.class == "DATA" {
            let _ = writeln!(out, " {:04X}:0   DGROUP", i + 1);
            break;
        }
    }
    let _ = writeln!(out);
    let publics: Vec<&Symbol> = symbols.iter().filter(|s| s.public).collect();
    let _ = writeln!(out, "  Address         Publics by Name");
    let _ = writeln!(out);
    let mut by_name: Vec<(String, String)> = publics
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                format!(" {:04X}:{:08X}       {}", s.object, s.offset, s.name),
            )
        })
        .collect();
    for (local, from) in imports {
        by_name.push((
            local.clone(),
            format!(" 0000:00000000  Imp  {local:<20} ({from})"),
        ));
    }
    by_name.sort_by_key(|(n, _)| n.to_ascii_uppercase());
    for (_, line) in &by_name {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "  Address         Publics by Value");
    let _ = writeln!(out);
    let mut by_value = publics;
    by_value.sort_by_key(|s| (s.object, s.offset));
    for s in by_value {
        let _ = writeln!(out, " {:04X}:{:08X}       {}", s.object, s.offset, s.name);
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Program entry point at {:04X}:{:08X}",
        entry.0, entry.1
    );
    out
}
