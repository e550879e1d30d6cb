//! Arbitrary bytecode: verify, then interpret against the sample machine.
//! Never panics; a verified program always ends.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpn_vm::{Hit, Interpreter, Program};

fuzz_target!(|data: &[u8]| {
    let (vars, code) = match data.split_first() {
        Some((v, rest)) => (u32::from(*v % 8), rest),
        None => return,
    };
    for program in [
        Program::load(code, vars),
        Program::load_without_stack_limit(code, vars),
    ] {
        if let Ok(program) = program {
            let mut machine = rpn_vm::examples::sample_machine();
            let mut v = vec![0u32; vars as usize];
            let hit = Hit {
                major: 1,
                minor: 1,
                logmax: 64,
            };
            let mut interp = Interpreter::new();
            let result = interp.run(&program, &mut machine, &mut v, hit);
            if let rpn_vm::Outcome::Logged(r) = result.outcome {
                assert!(r.data.len() <= 64);
            }
        }
    }
});
