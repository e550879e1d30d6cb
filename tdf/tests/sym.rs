//! `.SYM` files for `.name` resolution where no MAP file is given: for
//! every testprogs program, a `.SYM` made from its MAP (as MAPSYM makes
//! one) beside the module gives TRCUST the same TDF as the MAP with
//! `/M=`, and so does `/M=NAME.SYM`; a damaged `.SYM` is a FATAL naming
//! the byte offset.

use std::collections::BTreeMap;
use std::fs;

use tdf::sym::{SymFile, SymSegment};
use tdf::trcust::{PathStyle, run};

/// The SYM of a MAP: one segment per object with publics, in value order.
fn sym_of(map: &str, module: &str) -> SymFile {
    let m = loader::map::parse(map).unwrap();
    let mut by_object: BTreeMap<u16, Vec<(u32, String)>> = BTreeMap::new();
    for s in m.symbols.iter().filter(|s| s.object != 0) {
        by_object
            .entry(s.object)
            .or_default()
            .push((s.offset, s.name.clone()));
    }
    let segments = by_object
        .into_iter()
        .map(|(number, mut symbols)| {
            symbols.sort();
            symbols.dedup();
            SymSegment {
                number,
                name: format!("SEG{number}"),
                bits32: symbols.iter().any(|s| s.0 > 0xFFFF),
                symbols,
            }
        })
        .collect();
    SymFile {
        module: module.to_string(),
        entry_segment: m.entry.map_or(0, |e| e.0),
        constants: Vec::new(),
        segments,
        version: (5, 1),
    }
}

#[test]
fn a_sym_file_beside_the_module_stands_for_the_map() {
    let mut checked = Vec::new();
    for p in &testprogs::all().unwrap() {
        if !p.tsf.contains("TP=.") && !p.tsf.contains("TP = .") {
            continue;
        }
        checked.push(p.name);
        let dir = tempfile::tempdir().unwrap();
        p.write_to(dir.path()).unwrap();
        let with_map = run(
            &[p.tsf_file_name(), format!("/M={}", p.map_file_name())],
            dir.path(),
            PathStyle::Dos,
        );
        assert_eq!(with_map.exit_code, 0, "{}", with_map.text());
        let want = fs::read(dir.path().join(format!("{}.TDF", p.name))).unwrap();
        fs::remove_file(dir.path().join(format!("{}.TDF", p.name))).unwrap();

        // Without /M= and without a SYM: TRCUST's SEVERE.
        let none = run(&[p.tsf_file_name()], dir.path(), PathStyle::Dos);
        assert!(
            none.text().contains("symbolic info not given"),
            "{}",
            none.text()
        );

        let stem = p.file_name.rsplit_once('.').unwrap().0;
        let sym = sym_of(&p.map, p.name).to_bytes().unwrap();
        fs::write(dir.path().join(format!("{stem}.SYM")), &sym).unwrap();
        let out = run(&[p.tsf_file_name()], dir.path(), PathStyle::Dos);
        let text = out.text();
        assert_eq!(out.exit_code, 0, "{}: {text}", p.name);
        assert!(
            text.contains(&format!("Using symbol file: C:\\{stem}.SYM")),
            "{text}"
        );
        let got = fs::read(dir.path().join(format!("{}.TDF", p.name))).unwrap();
        assert_eq!(got, want, "{}", p.name);

        let given = run(
            &[p.tsf_file_name(), format!("/M={stem}.SYM")],
            dir.path(),
            PathStyle::Dos,
        );
        assert_eq!(given.exit_code, 0, "{}", given.text());
        assert_eq!(
            fs::read(dir.path().join(format!("{}.TDF", p.name))).unwrap(),
            want
        );

        // A SYM whose first segment's symbol count runs off the file.
        let mut bad = sym.clone();
        let seg = usize::from(u16::from_le_bytes([bad[12], bad[13]])) * 16;
        bad[seg + 2] = 0xFF;
        bad[seg + 3] = 0xFF;
        fs::write(dir.path().join(format!("{stem}.SYM")), &bad).unwrap();
        let out = run(&[p.tsf_file_name()], dir.path(), PathStyle::Dos);
        let text = out.text();
        assert_ne!(out.exit_code, 0, "{text}");
        assert!(
            text.contains(&format!("byte offset {:#x}", seg + 2)),
            "{}: {text}",
            p.name
        );
    }
    assert!(
        checked.len() >= 4,
        "programs with .name tracepoints: {checked:?}"
    );
}
