//! OMF import libraries: written here, read back; the dictionary's hash
//! finds every name; malformed libraries give errors naming the offset;
//! with OS2TK_DIR set, every library of the toolkit's `lib/` reads and its
//! dictionary agrees with its modules.

use loader::ErrorKind;
use loader::omflib::{ImportDef, ImportTarget, read, write_import_library};
use proptest::prelude::*;
use std::io::Write as _;

fn def(public: &str, module: &str, target: ImportTarget) -> ImportDef {
    ImportDef {
        public: public.into(),
        module: module.into(),
        target,
    }
}

fn sample() -> Vec<ImportDef> {
    vec![
        def("DOSEXITLIST", "DOSCALLS", ImportTarget::Ordinal(7)),
        def("DOS16EXITLIST", "DOSCALLS", ImportTarget::Ordinal(7)),
        def("DosOpen", "DOSCALLS", ImportTarget::Ordinal(273)),
        def("_Thing", "MYDLL", ImportTarget::Name("Thing".into())),
    ]
}

#[test]
fn written_library_reads_back() {
    let bytes = write_import_library(&sample()).unwrap();
    let lib = read(&bytes).unwrap();
    assert_eq!(lib.page_size, 16);
    assert_eq!(lib.other_modules, 0);
    let got: Vec<_> = lib
        .imports
        .iter()
        .map(|i| (i.public.clone(), i.module.clone(), i.target.clone()))
        .collect();
    let want: Vec<_> = sample()
        .into_iter()
        .map(|d| (d.public, d.module, d.target))
        .collect();
    assert_eq!(got, want);
    assert_eq!(lib.dictionary.len(), 4);
    for (imp, page) in lib.imports.iter().zip(&lib.module_pages) {
        assert_eq!(lib.lookup(&imp.public), Some(*page));
        // The module's THEADR (5 bytes and the name) precedes the COMENT.
        assert_eq!(
            imp.offset,
            u64::from(*page) * 16 + 5 + imp.public.len() as u64
        );
    }
    assert_eq!(lib.lookup("dosopen"), lib.lookup("DosOpen"), "case-blind");
    assert_eq!(lib.lookup("DosClose"), None);
}

#[test]
fn empty_entry_name_means_the_public_name() {
    let bytes =
        write_import_library(&[def("Same", "M", ImportTarget::Name(String::new()))]).unwrap();
    let lib = read(&bytes).unwrap();
    assert_eq!(lib.imports[0].target, ImportTarget::Name("Same".into()));
}

#[test]
fn bad_signature_and_page_size() {
    let mut b = write_import_library(&sample()).unwrap();
    b[0] = 0x80;
    let e = read(&b).unwrap_err();
    assert_eq!((e.offset, e.structure), (0, "library header"));
    let mut b = write_import_library(&sample()).unwrap();
    b[1] = 14; // page size 17
    b[15] = 0;
    let e = read(&b).unwrap_err();
    assert_eq!((e.offset, e.structure), (1, "library header"));
}

#[test]
fn bad_checksum_names_its_byte() {
    let mut b = write_import_library(&sample()).unwrap();
    // The first module's THEADR starts at 16; its checksum is its last byte.
    let len = usize::from(u16::from_le_bytes([b[17], b[18]]));
    b[16 + 2 + len] ^= 1;
    let e = read(&b).unwrap_err();
    assert_eq!(e.structure, "OMF record");
    assert_eq!(e.offset, 16 + 2 + len as u64);
}

#[test]
fn truncated_library() {
    let b = write_import_library(&sample()).unwrap();
    for cut in [5, 20, 40, b.len() - 100] {
        let e = read(&b[..cut]).unwrap_err();
        assert!(
            matches!(
                e.kind,
                ErrorKind::Truncated | ErrorKind::TooMany { .. } | ErrorKind::Invalid(_)
            ),
            "{cut}: {e}"
        );
        assert!(e.offset <= b.len() as u64, "{cut}: {e}");
    }
}

#[test]
fn trailing_bytes_in_an_impdef() {
    let mut b = write_import_library(&sample()[..1]).unwrap();
    // Module at 16: THEADR (3 + 13 bytes), then the COMENT.
    let coment = 16 + 3 + 1 + 11 + 1;
    assert_eq!(b[coment], 0x88);
    // Claim one more byte: the checksum becomes a body byte; the next
    // record (MODEND's type byte) becomes this one's checksum.
    b[coment + 1] += 1;
    let e = read(&b).unwrap_err();
    assert!(
        e.structure == "OMF record" || e.structure == "IMPDEF record",
        "{e}"
    );
}

#[test]
fn dictionary_page_that_is_no_module() {
    let mut b = write_import_library(&sample()).unwrap();
    // Find the first entry of block 0 and point its page elsewhere.
    let dict_offset = u32::from_le_bytes([b[3], b[4], b[5], b[6]]) as usize;
    let bucket = (0..37).find(|k| b[dict_offset + k] != 0).unwrap();
    let off = dict_offset + usize::from(b[dict_offset + bucket]) * 2;
    let len = usize::from(b[off]);
    b[off + 1 + len] = 0xEE;
    b[off + 2 + len] = 0x7E;
    let e = read(&b).unwrap_err();
    assert_eq!(e.structure, "dictionary entry");
    assert_eq!(e.offset, (off + 1 + len) as u64);
}

proptest! {
    #[test]
    fn many_names_round_trip(names in prop::collection::btree_set("[A-Za-z_][A-Za-z0-9_]{0,40}", 1..400)) {
        let defs: Vec<_> = names
            .iter()
            .enumerate()
            .map(|(i, n)| def(n, "DOSCALLS", ImportTarget::Ordinal(i as u16)))
            .collect();
        let lib = read(&write_import_library(&defs).unwrap()).unwrap();
        prop_assert_eq!(lib.imports.len(), defs.len());
        for (i, imp) in lib.imports.iter().enumerate() {
            prop_assert_eq!(&imp.public, &defs[i].public);
            // Names differing only in case share a slot; the first wins.
            let page = lib.lookup(&imp.public);
            prop_assert!(page.is_some(), "{} not found", imp.public);
        }
    }
}

/// With OS2TK_DIR set: every library of `lib/` reads, and every dictionary
/// entry is found by the hash at the page it names.
#[test]
fn toolkit_libraries() {
    let Some(dir) = std::env::var_os("OS2TK_DIR") else {
        let _ = writeln!(std::io::stderr(), "skipped: OS2TK_DIR is not set");
        return;
    };
    let lib_dir = std::path::Path::new(&dir).join("lib");
    let mut paths: Vec<_> = std::fs::read_dir(&lib_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("lib")))
        .collect();
    paths.sort();
    assert!(!paths.is_empty());
    let mut imports = 0;
    for p in &paths {
        let bytes = std::fs::read(p).unwrap();
        let lib = match read(&bytes) {
            Ok(lib) => lib,
            Err(e) if matches!(e.kind, ErrorKind::Unsupported(_)) => {
                println!("{}: not OMF: {e}", p.display());
                continue;
            }
            Err(e) => panic!("{}: {e}", p.display()),
        };
        for d in &lib.dictionary {
            assert_eq!(
                lib.lookup(&d.name),
                Some(d.page),
                "{}: {}",
                p.display(),
                d.name
            );
        }
        for i in &lib.imports {
            assert!(
                lib.lookup(&i.public).is_some(),
                "{}: {}",
                p.display(),
                i.public
            );
        }
        imports += lib.imports.len();
        println!(
            "{}: {} imports, {} other modules, {} dictionary entries",
            p.display(),
            lib.imports.len(),
            lib.other_modules,
            lib.dictionary.len()
        );
    }
    assert!(imports > 10_000, "{imports}");
}

/// Mutated libraries (bytes flipped, words set to extremes, tails cut)
/// never panic the reader or the lookup.
#[test]
fn mutated_libraries_never_panic() {
    let names: Vec<_> = (0..120)
        .map(|i| def(&format!("Name{i}X"), "DOSCALLS", ImportTarget::Ordinal(i)))
        .collect();
    let base = write_import_library(&names).unwrap();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    for round in 0..3000 {
        let mut b = base.clone();
        for _ in 0..1 + round % 4 {
            let at = (next() % b.len() as u64) as usize;
            match next() % 3 {
                0 => b[at] ^= 1 << (next() % 8),
                1 => b[at] = [0, 0xFF, 0x7F, 0x80][(next() % 4) as usize],
                _ => b.truncate(at),
            }
            if b.is_empty() {
                break;
            }
        }
        if let Ok(lib) = read(&b) {
            for d in &lib.dictionary {
                let _ = lib.lookup(&d.name);
            }
            let _ = lib.lookup("Name7X");
        }
    }
}
