//! Arbitrary input never panics: the same entry points as the fuzz targets
//! in `rpn_vm/fuzz`, driven by proptest so that CI exercises them.

use proptest::prelude::*;
use rpn_vm::{Hit, HitOutcome, Interpreter, Program, object, parse};

/// Text made of the pieces trace programs are made of, so that the parser
/// gets past its first checks often.
fn arb_source() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "minor=1",
        "major=0x10",
        "vars=3",
        "logmax=9",
        "name=X.DLL",
        "typedef=A,2",
        "object=1",
        "offset=0x20",
        "Push EAX",
        "Push W,",
        "Push D,-",
        "Log WN,",
        "Log MRF",
        "Jmp ZN,",
        "Jmp N,",
        "lbl:",
        "lbl",
        "Inc V,",
        "Move VIi",
        "Pop N,",
        "; c",
        ",",
        "=",
        ":",
        "0x",
        "h",
        "1",
        "255",
        "65536",
        "-",
        " ",
        "\n",
        "\n",
        "\n",
    ]);
    prop::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parser_never_panics_and_round_trips(src in arb_source()) {
        if let Ok(file) = parse("p.rpn", &src) {
            let text = rpn_vm::disasm::write_file(&file);
            let again = parse("again.rpn", &text).expect("disassembly re-assembles");
            for (a, b) in file.tracepoints.iter().zip(&again.tracepoints) {
                prop_assert_eq!(a.program.bytes(), b.program.bytes());
            }
        }
    }

    #[test]
    fn arbitrary_text_never_panics(src in "\\PC{0,200}") {
        let _ = parse("p.rpn", &src);
    }

    #[test]
    fn verify_then_run_never_panics(vars in 0u32..4, code in prop::collection::vec(0u8..0x40, 0..80), logmax in 0usize..80) {
        let loads = [Program::load(&code, vars), Program::load_without_stack_limit(&code, vars)];
        for program in loads.into_iter().flatten() {
            let mut machine = rpn_vm::examples::sample_machine();
            let mut v = vec![0u32; vars as usize];
            let hit = Hit { major: 1, minor: 1, logmax };
            let mut interp = Interpreter::new();
            let result = interp.run(&program, &mut machine, &mut v, hit);
            if let HitOutcome::Logged(r) = result.outcome {
                prop_assert!(r.data.len() <= logmax);
            }
        }
    }

    #[test]
    fn object_reader_never_panics(data in prop::collection::vec(any::<u8>(), 0..64), seed in any::<u8>()) {
        let mut bytes = b"RPNO\x01\x00".to_vec();
        bytes.push(seed % 3);
        bytes.extend(data);
        if let Ok(file) = object::read(&bytes) {
            prop_assert_eq!(object::write(&file), bytes);
        }
    }
}
