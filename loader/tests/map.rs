//! MAP files in the LINK386, MS LINK and WLINK styles, hand written here, and
//! the real maps of the TRCUST corpus.

use loader::map::{self, MapStyle};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/formats/trcust-corpus"
);

fn read(path: &str) -> map::MapFile {
    map::parse_bytes(&std::fs::read(path).unwrap()).unwrap()
}

fn names(m: &map::MapFile) -> Vec<(u16, u32, &str)> {
    m.symbols
        .iter()
        .map(|s| (s.object, s.offset, s.name.as_str()))
        .collect()
}

#[test]
fn link386_publics_segments_imports_entry() {
    let m = read(&format!("{DATA}/link386.map"));
    assert_eq!(m.style, MapStyle::Link386);
    assert_eq!(
        names(&m),
        vec![(1, 0, "_start"), (1, 0x24, "main"), (2, 0x10, "counter")]
    );
    assert_eq!(m.segments.len(), 4);
    assert_eq!(
        m.segments[3].class, "CODE",
        "the bitness word after the class is not part of it"
    );
    assert_eq!(m.exports.len(), 1);
    assert_eq!(
        (
            m.exports[0].object,
            m.exports[0].offset,
            m.exports[0].name.as_str(),
            m.exports[0].alias.as_str()
        ),
        (1, 0x24, "MAIN", "main")
    );
    assert_eq!(
        (
            m.segments[1].object,
            m.segments[1].length,
            m.segments[1].class.as_str()
        ),
        (2, 0x10400, "DATA")
    );
    assert_eq!(m.imports.len(), 1);
    assert_eq!(
        (m.imports[0].name.as_str(), m.imports[0].module.as_deref()),
        ("DosBeep", Some("DOSCALLS"))
    );
    assert_eq!(m.entry, Some((1, 0)));
    assert_eq!(m.symbol_size(m.lookup("_start").unwrap()), Some(0x24));
    assert_eq!(m.symbol_size(m.lookup("main").unwrap()), None);
    assert_eq!(m.symbol_at(1, 0x30).unwrap().name, "main");
}

#[test]
fn mslink_16bit_offsets_and_markers() {
    let m = read(&format!("{DATA}/mslink.map"));
    assert_eq!(m.style, MapStyle::MsLink);
    assert_eq!(
        names(&m),
        vec![
            (0, 0, "__acrtused"),
            (1, 0x70, "_main"),
            (1, 0x14E, "_exit"),
            (2, 0x54, "_msg")
        ]
    );
    assert_eq!(
        m.imports
            .iter()
            .map(|i| i.name.as_str())
            .collect::<Vec<_>>(),
        vec!["DOSEXIT", "VIOWRTTTY"]
    );
    assert!(
        m.segments.is_empty(),
        "linear segment lines carry no object number"
    );
    assert_eq!(m.entry, Some((1, 0)));
    assert_eq!(m.lookup_ignore_case("_MAIN").unwrap().offset, 0x70);
}

#[test]
fn wlink_memory_map() {
    let m = read(&format!("{DATA}/wlink.map"));
    assert_eq!(m.style, MapStyle::Wlink);
    assert_eq!(
        names(&m),
        vec![
            (1, 0x10, "main_"),
            (1, 0x60, "beep_"),
            (1, 0x124, "_cstart_"),
            (2, 4, "__argc")
        ]
    );
    assert_eq!(m.imports.len(), 2);
    assert_eq!(m.imports[1].module.as_deref(), Some("DOSCALLS"));
    assert_eq!(m.entry, Some((1, 0x124)));
}

#[test]
fn trcust_corpus_maps() {
    let m = read(&format!("{CORPUS}/a16_d_rdsdi/in/HELLO2.MAP"));
    assert_eq!(m.style, MapStyle::Link386);
    assert_eq!(m.symbols.len(), 8);
    assert_eq!(
        m.lookup("push28").map(|s| (s.object, s.offset)),
        Some((2, 5))
    );
    assert_eq!(m.lookup("retsite").map(|s| m.symbol_size(s)), Some(None));
    assert_eq!(m.symbol_size(m.lookup("startup").unwrap()), Some(5));
    for case in ["map_nospace", "map_16bit", "map_byvalue_only"] {
        let m = read(&format!("{CORPUS}/{case}/in/X.MAP"));
        assert_eq!(
            m.lookup("push28").map(|s| (s.object, s.offset)),
            Some((2, 5)),
            "{case}"
        );
    }
    let m = read(&format!("{CORPUS}/re_cv/in/X.MAP"));
    assert_eq!(m.symbol_size(m.lookup("func").unwrap()), Some(0x12));
}

#[test]
fn malformed_address_names_the_line() {
    let text = "\n  Address         Publics by Value\n\n 0001:00000000       ok\n 0001:0000000000012  toolong\n";
    let err = map::parse(text).unwrap_err();
    assert_eq!(err.line, 5);
    assert!(err.to_string().contains("line 5"));
    let err = map::parse("  Address   Publics by Value\n 0002:00000005\n").unwrap_err();
    assert_eq!(err.line, 2);
}

#[test]
fn section_ends_at_non_address_line() {
    let m = map::parse(
        "  Address   Publics by Value\n 0001:0010   a\nsome trailer text\n 0001:0020 b\n",
    )
    .unwrap();
    assert_eq!(m.symbols.len(), 1);
}

/// A map written all in lower case (or all in upper case) has the same
/// sections, markers and symbols as the one the linker wrote.
#[test]
fn any_case_headers_and_markers() {
    for file in ["link386.map", "mslink.map", "wlink.map"] {
        let text = std::fs::read_to_string(format!("{DATA}/{file}")).unwrap();
        let orig = map::parse(&text).unwrap();
        assert!(!orig.symbols.is_empty(), "{file}");
        for recased in [text.to_ascii_lowercase(), text.to_ascii_uppercase()] {
            let m = map::parse(&recased).unwrap();
            assert_eq!(m.style, orig.style, "{file}");
            let lower = |m: &map::MapFile| -> Vec<(u16, u32, String)> {
                m.symbols
                    .iter()
                    .map(|s| (s.object, s.offset, s.name.to_ascii_lowercase()))
                    .collect()
            };
            assert_eq!(lower(&m), lower(&orig), "{file}");
            assert_eq!(m.imports.len(), orig.imports.len(), "{file}");
            assert_eq!(m.segments.len(), orig.segments.len(), "{file}");
            assert_eq!(m.entry, orig.entry, "{file}");
        }
    }
}
