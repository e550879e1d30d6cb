//! Names of the entries of the system DLLs by ordinal, from the ordinal
//! table ([`super::ordinals`]): what an unimplemented call is called in
//! the stop message (`unimplemented DOSCALLS.7 (DOSEXITLIST)`), and the
//! convention a named entry would have.

use std::sync::OnceLock;

use crate::api::ApiDef;
use crate::api::ordinals::{self, Fact};

/// Every entry of the ordinal table as a named (unimplemented) API entry,
/// with its fact.
fn named_defs() -> &'static [(ApiDef, &'static Fact)] {
    static NAMES: OnceLock<Vec<(ApiDef, &'static Fact)>> = OnceLock::new();
    NAMES.get_or_init(|| {
        ordinals::facts()
            .iter()
            .map(|f| {
                let def = ApiDef {
                    module: f.module,
                    ordinal: f.ordinal.unwrap_or(0),
                    name: f.name,
                    conv: f.bits.conv(),
                    args: &[],
                    func: None,
                };
                (def, f)
            })
            .collect()
    })
}

/// The named (unimplemented) entry for an ordinal.
pub fn named(module: &str, ordinal: u32) -> Option<&'static ApiDef> {
    named_defs()
        .iter()
        .find(|(d, f)| f.ordinal.is_some() && d.module == module && d.ordinal == ordinal)
        .map(|(d, _)| d)
}

/// The named entry for a name: the entry spelled so (ignoring case), else
/// one of whose aliases is, else one whose name matches without the
/// 16/32 marker (`DOS32OPEN` finds `DosOpen`).
pub fn by_name(module: &str, name: &str) -> Option<&'static ApiDef> {
    let defs = named_defs().iter().filter(|(d, _)| d.module == module);
    defs.clone()
        .find(|(d, _)| d.name.eq_ignore_ascii_case(name))
        .or_else(|| {
            defs.clone()
                .find(|(_, f)| f.aliases.iter().any(|a| a.eq_ignore_ascii_case(name)))
        })
        .or_else(|| defs.clone().find(|(_, f)| f.is_named(name)))
        .map(|(d, _)| d)
}
