//! The fuzz targets' entry points (cptrap/fuzz) fed arbitrary and mutated
//! bytes in the test suite: the reader never panics, a corrupt file gets an
//! error naming an offset inside it, and TRAPRED survives any input.

use cptrap::trapred::display::record_lines;
use cptrap::trapred::{DialogueOptions, run_dialogue};
use cptrap::{CptrapFile, Entry, Interface, InterfaceRecord, Recorder, Selection, TypeNum};
use proptest::prelude::*;

fn valid_file(n: usize) -> Vec<u8> {
    let mut rec = Recorder::new(Selection::all(), 64);
    for i in 0..n {
        let mut e = Entry::new(TypeNum::PRODUCED[i % TypeNum::PRODUCED.len()]);
        e.frame.time = i as u64;
        e.words = [i as u32, 1, 2, 3];
        rec.record_entry(&e);
        let data: Vec<u8> = (0..(i * 37) % 300).map(|j| j as u8).collect();
        rec.record_interface(
            InterfaceRecord::new(Interface::Cp, i as u16, &data),
            1,
            1,
            i as u64,
        );
    }
    let mut file = Vec::new();
    rec.finish(&mut file).unwrap();
    file
}

fn exercise(bytes: &[u8]) {
    match CptrapFile::parse(bytes) {
        Ok(file) => {
            for r in file.records() {
                assert!(!record_lines(r).is_empty());
            }
        }
        Err(e) => {
            assert!(e.offset <= bytes.len(), "{e}");
            assert!(e.to_string().contains("byte offset"), "{e}");
        }
    }
}

proptest! {
    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..9000)) {
        exercise(&bytes);
    }

    #[test]
    fn mutated_files(n in 1usize..40, flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let mut bytes = valid_file(n);
        for (at, value) in flips {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        exercise(&bytes);
    }

    #[test]
    fn arbitrary_trapred_input(text in "[ -~\n]{0,300}") {
        let file = CptrapFile::parse(&valid_file(5)).unwrap();
        let mut input = text.as_bytes();
        let (mut term, mut printer) = (Vec::new(), Vec::new());
        run_dialogue(&file, &mut input, &mut term, &mut printer, DialogueOptions::default()).unwrap();
    }
}

#[test]
fn trapred_words_with_odd_operands() {
    let file = CptrapFile::parse(&valid_file(5)).unwrap();
    for script in [
        "TYPE *\nTYPEB *\nRECORD 99999999999999999999\n",
        "SELECT TIME 0 18446744073709551615\nTYPE *\n",
        "SELECT TYPE FF X'40' 3G\nSEL PROC 70000\nL \u{7f}\n",
        "RECORD 11\nTYPE\nRECORD 10\nTYPE\nBOTTOM\nTYPEB 2\nLOCATE zz\n",
    ] {
        let mut input = script.as_bytes();
        let (mut term, mut printer) = (Vec::new(), Vec::new());
        run_dialogue(
            &file,
            &mut input,
            &mut term,
            &mut printer,
            DialogueOptions::default(),
        )
        .unwrap();
    }
}
