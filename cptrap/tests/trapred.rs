//! TRAPRED dialogues over a file made here: a golden dialogue (update with
//! CPTRAP_GOLDEN_UPDATE=1) and the properties of TYPE, TYPEBACK and the
//! selection.

use std::path::Path;

use cptrap::trapred::{AfterCommand, DialogueOptions, run_dialogue};
use cptrap::{CptrapFile, Entry, Interface, InterfaceRecord, Recorder, Selection, TypeNum};
use proptest::prelude::*;

/// Two API calls, three VM interface records (codes 1, 2, 3 with 8, 264 and
/// 300 bytes of data) and an allocation, in that time order.
fn sample() -> CptrapFile {
    let mut rec = Recorder::new(Selection::all(), 4);
    let mut call = Entry::api_call("DOSCALLS", 282, 0, 0x0001_0040);
    call.frame.pid = 1;
    call.frame.tid = 1;
    call.frame.time = 100;
    rec.record_entry(&call);
    let data = |n: usize| -> Vec<u8> { (0..n).map(|i| b'A' + (i % 26) as u8).collect() };
    for (t, (code, n)) in [(1u16, 8usize), (2, 264), (3, 300)].into_iter().enumerate() {
        let record = InterfaceRecord::new(Interface::VirtualMachine, code, &data(n));
        rec.record_interface(record, 1, 1, 200 + t as u64);
    }
    let mut alloc = Entry::new(TypeNum::ALLOC);
    alloc.frame.pid = 1;
    alloc.frame.time = 300;
    alloc.words = [0x0002_0000, 4096, 0x13, 0];
    rec.record_entry(&alloc);
    call.frame.time = 400;
    call.frame.aux = 234;
    rec.record_entry(&call);
    let mut file = Vec::new();
    rec.finish(&mut file).unwrap();
    CptrapFile::parse(&file).unwrap()
}

fn dialogue(file: &CptrapFile, script: &str) -> (String, String, AfterCommand) {
    let mut input = script.as_bytes();
    let (mut term, mut printer) = (Vec::new(), Vec::new());
    let outcome = run_dialogue(
        file,
        &mut input,
        &mut term,
        &mut printer,
        DialogueOptions::default(),
    )
    .unwrap();
    (
        String::from_utf8(term).unwrap(),
        String::from_utf8(printer).unwrap(),
        outcome,
    )
}

fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("CPTRAP_GOLDEN_UPDATE").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (CPTRAP_GOLDEN_UPDATE=1 writes it)", path.display()));
    assert_eq!(actual, expected, "{} differs", path.display());
}

const SCRIPT: &str = "\
* the whole file, then the interface records by code
query
type 2
TYPE *
typeb 3
top
TYPEBack
sel type 3e code 2 3
TYPE *
TYPEB *
SELECT CODE ALL PROC 2
TYPE *
sel all
bot
typeback 2
record 3
Type
locate doscalls.234
p *
frob
TYPE 0
HOLD
STOP
";

#[test]
fn golden_dialogue() {
    let (term, printer, outcome) = dialogue(&sample(), SCRIPT);
    golden("trapred_dialogue.txt", &term);
    assert_eq!(outcome, AfterCommand::Stop { delete: false });
    // PRINTER * after the last record prints nothing.
    assert_eq!(printer, "");
}

#[test]
fn printer_writes_what_type_shows() {
    let file = sample();
    let (term, printer, outcome) = dialogue(&file, "SEL TYPE 3E\nP 2\nQUIT\n");
    assert!(term.contains("2 RECORDS PRINTED"), "{term}");
    assert_eq!(outcome, AfterCommand::Quit);
    let (shown, _, _) = dialogue(&file, "SEL TYPE 3E\nTYPE 2\n");
    let shown: Vec<&str> = shown
        .lines()
        .filter(|l| !l.starts_with("trapred> "))
        .skip(1)
        .collect();
    let printed: Vec<&str> = printer.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(shown, printed);
}

#[test]
fn stop_deletes_unless_held_and_end_of_input_quits() {
    let file = sample();
    assert_eq!(
        dialogue(&file, "STOP\n").2,
        AfterCommand::Stop { delete: true }
    );
    assert_eq!(
        dialogue(&file, "HOLD\nNOHOLD\nstop\n").2,
        AfterCommand::Stop { delete: true }
    );
    assert_eq!(dialogue(&file, "TYPE\n").2, AfterCommand::Quit);
}

fn record_numbers(term: &str) -> Vec<usize> {
    term.lines()
        .filter_map(|l| l.strip_prefix("RECORD "))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

proptest! {
    #[test]
    fn typeback_retraces_type(start in 1usize..7, n in 1usize..7) {
        let file = sample();
        let (fwd, _, _) = dialogue(&file, &format!("RECORD {start}\nTYPE {n}\n"));
        let (back, _, _) = dialogue(&file, &format!("RECORD {start}\nTYPE {n}\nTYPEB {n}\n"));
        let forward = record_numbers(&fwd);
        let both = record_numbers(&back);
        let mut reversed = forward.clone();
        reversed.reverse();
        // TYPE shows what is left up to n; TYPEB n then shows those in
        // reverse, then goes on towards the top up to n in all.
        prop_assert_eq!(forward.len(), n.min(7 - start));
        let back = &both[forward.len()..];
        prop_assert_eq!(back.len(), n.min(start - 1 + forward.len()));
        prop_assert_eq!(&back[..forward.len()], &reversed[..]);
        let expected_rest: Vec<usize> = (1..start).rev().take(back.len() - forward.len()).collect();
        prop_assert_eq!(&back[forward.len()..], &expected_rest[..]);
    }
}
