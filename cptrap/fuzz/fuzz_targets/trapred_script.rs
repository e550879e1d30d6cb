//! TRAPRED's command parser and session on arbitrary command lines over a
//! small fixed file: no panic, whatever is typed.
#![no_main]

use libfuzzer_sys::fuzz_target;

use cptrap::trapred::{DialogueOptions, run_dialogue};
use cptrap::{CptrapFile, Entry, Interface, InterfaceRecord, Recorder, Selection};

fuzz_target!(|data: &[u8]| {
    let mut rec = Recorder::new(Selection::all(), 1);
    rec.record_entry(&Entry::api_call("DOSCALLS", 282, 0, 0));
    rec.record_interface(InterfaceRecord::new(Interface::VirtualMachine, 3, b"abc"), 1, 1, 9);
    let mut bytes = Vec::new();
    rec.finish(&mut bytes).unwrap();
    let file = CptrapFile::parse(&bytes).unwrap();
    let text = String::from_utf8_lossy(data);
    let mut input = text.as_bytes();
    let _ = run_dialogue(&file, &mut input, &mut Vec::new(), &mut Vec::new(), DialogueOptions::default());
});
