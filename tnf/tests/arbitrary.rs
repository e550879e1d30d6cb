//! Bad input never panics: the reader and both dumps on mutated and
//! arbitrary files, prex on arbitrary command text. The fuzz targets in
//! fuzz/ run the same entry points; crashes they find become cases here.

mod support;

use proptest::prelude::*;
use tnf::prex::{Mode, Session};
use tnf::{ArgType, ArgValue, Endian, TnfFile, TnfWriter};

fn good_file(endian: Endian) -> Vec<u8> {
    let p = support::probe(
        "p",
        &[
            ArgType::String,
            ArgType::Double,
            ArgType::Opaque,
            ArgType::ULong,
        ],
    );
    let mut w = TnfWriter::new(128 * 1024, endian).unwrap();
    for i in 0..40u64 {
        w.event(
            0,
            &p,
            (1, 1, 1),
            1000 * i as i64,
            &[
                ArgValue::Str(b"abc".to_vec()),
                ArgValue::Float(0.5),
                ArgValue::Opaque(i),
                ArgValue::UInt(i),
            ],
        )
        .unwrap();
    }
    w.into_bytes()
}

/// What the fuzz target does.
pub fn read_and_dump(data: &[u8]) {
    match TnfFile::parse(data) {
        Ok(file) => {
            if let Err(e) = tnf::dump::cooked(&file, false) {
                assert!(e.offset <= data.len());
            }
            if let Err(e) = tnf::dump::raw(&file, true) {
                assert!(e.offset <= data.len());
            }
        }
        Err(e) => assert!(e.offset <= data.len(), "{e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn mutated_files_never_panic(
        big in any::<bool>(),
        edits in prop::collection::vec((0usize..(1usize << 17), any::<u8>()), 1..40),
        cut in prop::option::of(0usize..(1usize << 17)),
    ) {
        let mut data = good_file(if big { Endian::Big } else { Endian::Little });
        // Aim most edits at the interesting parts: header, directory, first tag and data blocks.
        for (at, v) in edits {
            let at = match at % 4 {
                0 => at % 64,
                1 => 0x10000 + at % 0x1000,
                2 => 0x18000 + at % 0x1000,
                _ => at,
            };
            if let Some(b) = data.get_mut(at) {
                *b = v;
            }
        }
        if let Some(c) = cut {
            data.truncate(c);
        }
        read_and_dump(&data);
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..2048)) {
        read_and_dump(&data);
        let mut with_magic = b"TNF\0".to_vec();
        with_magic.extend(&data);
        read_and_dump(&with_magic);
    }

    #[test]
    fn prex_survives_any_text(text in "[ -~\t\n\\\\'/$&=,#]{0,200}") {
        let mut s = Session::new(Mode::User, "t");
        s.add_probes("X", [support::probe("p", &[ArgType::Long])]);
        let _ = s.run(&text, 1, &mut |_| Err("no files".to_string()));
        let mut k = Session::new(Mode::Kernel, "");
        let _ = k.run(&text, 1, &mut |_| Ok(text.clone()));
    }
}

#[test]
fn the_good_file_reads() {
    for e in [Endian::Little, Endian::Big] {
        let data = good_file(e);
        let file = TnfFile::parse(&data).unwrap();
        assert_eq!(support::events(&file).len(), 40);
    }
}
