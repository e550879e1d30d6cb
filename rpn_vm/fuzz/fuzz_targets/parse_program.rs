//! Trace program text: parse and assemble must never panic; whatever
//! assembles must disassemble and re-assemble to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(file) = rpn_vm::parse("fuzz.rpn", text) {
        let again = rpn_vm::disasm::write_file(&file);
        let reparsed = rpn_vm::parse("again.rpn", &again).expect("disassembly re-assembles");
        for (a, b) in file.tracepoints.iter().zip(&reparsed.tracepoints) {
            assert_eq!(a.program.bytes(), b.program.bytes());
        }
    }
});
