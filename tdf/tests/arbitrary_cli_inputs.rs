//! The entry points of the `trcust_cmdline` and `verify` fuzz targets
//! under `cargo test` (issue 13, item 10): TRCUST command lines built
//! from its own switches and any text over TPDLL16's files, and TPDLL16's
//! real TDF with bytes changed, verified with and without the MAP, never
//! panic; TRCUST writes only in its directory.

use std::sync::OnceLock;

use proptest::prelude::*;

struct Fixture {
    program: testprogs::Program,
    image: tdf::target::MemoryImage,
    map: tdf::target::SymbolTable,
    tdf: Vec<u8>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let program = testprogs::tpdll16().unwrap();
        let dir = tempfile::tempdir().unwrap();
        program.write_to(dir.path()).unwrap();
        let args = ["TPDLL16.TSF".to_string(), "/M=TPDLL16.MAP".to_string()];
        let out = tdf::trcust::run(&args, dir.path(), tdf::trcust::PathStyle::Host);
        assert_eq!(out.exit_code, 0, "{}", out.text());
        Fixture {
            image: tdf::module::image_from_bytes(&program.bytes).unwrap(),
            map: tdf::module::symbols_from_map(program.map.as_bytes()).unwrap(),
            tdf: std::fs::read(dir.path().join("TPDLL16.TDF")).unwrap(),
            program,
        }
    })
}

/// One TRCUST argument.
fn argument() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("TPDLL16.TSF".to_string()),
        Just("TPDLL16".to_string()),
        Just("/M=TPDLL16.MAP".to_string()),
        Just("/M=".to_string()),
        Just("OUT.TDF".to_string()),
        Just("/C=ALL.TFF".to_string()),
        Just("/L=TPDLL16.DLL".to_string()),
        Just("/W0".to_string()),
        Just("/W9".to_string()),
        Just("/D".to_string()),
        Just("/P".to_string()),
        Just("/I".to_string()),
        Just("/RM7".to_string()),
        Just("/RS99999999999".to_string()),
        Just("/RP".to_string()),
        Just("/NODE".to_string()),
        Just("/NOLN".to_string()),
        Just("/RAS".to_string()),
        Just("-m=TPDLL16.MAP".to_string()),
        "[A-Za-z0-9=./\\-]{0,10}".prop_filter("stays in the directory", |a| {
            !a.contains("..") && !a.contains('/') && !a.contains('\\')
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn trcust_command_lines_never_panic_and_write_only_in_their_directory(
        args in proptest::collection::vec(argument(), 0..6),
    ) {
        let outer = tempfile::tempdir().unwrap();
        let dir = outer.path().join("d");
        std::fs::create_dir(&dir).unwrap();
        fixture().program.write_to(&dir).unwrap();
        let cmd = tdf::trcust::parse_args(&args);
        let out = tdf::trcust::run_parsed(&cmd, &dir, tdf::trcust::PathStyle::Dos);
        let _ = out.text();
        let beside: Vec<_> = std::fs::read_dir(outer.path()).unwrap().collect();
        prop_assert_eq!(beside.len(), 1, "{:?}", args);
    }

    #[test]
    fn changed_tdfs_verify_without_panicking(
        edits in proptest::collection::vec((any::<u16>(), any::<u8>()), 1..8),
        cut in any::<u16>(),
    ) {
        let f = fixture();
        let mut bytes = f.tdf.clone();
        for (at, v) in edits {
            let i = usize::from(at) % bytes.len();
            bytes[i] = v;
        }
        bytes.truncate(bytes.len().max(1) - usize::from(cut) % 8);
        if let Ok(t) = tdf::Tdf::parse(&bytes) {
            let _ = tdf::verify::verify(&t, &f.image, None);
            let _ = tdf::verify::verify(&t, &f.image, Some(&f.map));
        }
    }
}
