//! The entry points of the `trace_options` and `trace_apply` fuzz targets
//! under `cargo test` (issue 13, item 10): TRACE ON specs and TRSPOOL
//! options built from their own tokens and any text, and trace program
//! files built from RPN lines with any operands, applied to a running
//! HELLO32, never panic.

use std::sync::OnceLock;

use kernel_sim::trace::Selection;
use kernel_sim::trace::select::split_operand;
use kernel_sim::{Process, ProcessConfig};
use proptest::prelude::*;
use stda::StdaFormat;
use stda::spool::SpoolOptions;

fn tdf() -> &'static tdf::Tdf {
    static TDF: OnceLock<tdf::Tdf> = OnceLock::new();
    TDF.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        testprogs::tpdll16().unwrap().write_to(dir.path()).unwrap();
        let args = ["TPDLL16.TSF".to_string(), "/M=TPDLL16.MAP".to_string()];
        let out = tdf::trcust::run(&args, dir.path(), tdf::trcust::PathStyle::Host);
        assert_eq!(out.exit_code, 0, "{}", out.text());
        tdf::Tdf::parse(&std::fs::read(dir.path().join("TPDLL16.TDF")).unwrap()).unwrap()
    })
}

fn sandbox() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        testprogs::hello32().unwrap().write_to(dir.path()).unwrap();
        dir
    })
}

/// A piece of a TRACE ON operand or a TRSPOOL option.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("TPDLL16.TDF(".to_string()),
        Just(")".to_string()),
        Just(",".to_string()),
        Just("-".to_string()),
        Just("ALL".to_string()),
        Just("GROUP=".to_string()),
        Just("TYPE=".to_string()),
        Just("0x".to_string()),
        Just(" /A".to_string()),
        Just(" /F".to_string()),
        Just(" /T".to_string()),
        Just(" /Q".to_string()),
        Just(" -w".to_string()),
        Just(" /P".to_string()),
        (0u32..0x2_0000).prop_map(|n| n.to_string()),
        "[ -~]{0,6}",
        "\\PC{0,3}",
    ]
}

/// An RPN source line: any opcode of the table with any operand that
/// fits it.
fn rpn_line() -> impl Strategy<Value = String> {
    let ops: Vec<rpn_vm::Op> = rpn_vm::Op::all().collect();
    (0..ops.len(), any::<u32>()).prop_map(move |(i, n)| {
        let info = ops[i].info();
        match info.operand {
            rpn_vm::Operand::None => info.name(),
            rpn_vm::Operand::Byte => format!("{},{}", info.name(), n & 0xFF),
            rpn_vm::Operand::Word => format!("{},{}", info.name(), n & 0xFFFF),
            rpn_vm::Operand::Dword => format!("{},{n}", info.name()),
        }
    })
}

/// HELLO32's instruction starts the testprogs trace program uses, with
/// their opcodes, and any place (which the runtime refuses).
fn place() -> impl Strategy<Value = (u32, u8)> {
    prop_oneof![
        Just((0x0, 0x68)),
        Just((0xE, 0xE8)),
        Just((0x2C, 0x50)),
        (any::<u32>(), any::<u8>()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn trace_on_specs_and_trspool_options_never_panic(
        tokens in proptest::collection::vec(token(), 0..12),
    ) {
        let text = tokens.concat();
        let (_, spec) = split_operand(&text);
        let _ = Selection::parse(spec.unwrap_or(&text), tdf());
        let args: Vec<String> = text.split_whitespace().map(str::to_string).collect();
        let _ = SpoolOptions::parse(&args);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn trace_programs_applied_to_a_running_module_never_panic(
        (offset, opcode) in place(),
        vars in 0u32..4,
        lines in proptest::collection::vec(rpn_line(), 0..10),
    ) {
        let text = format!(
            "vars={vars}\nmajor=0xCE\n\nminor=1\nobject=1\noffset={offset}\nopcode={opcode:#x}\n{}\n",
            lines.join("\n")
        );
        let Ok(file) = rpn_vm::parse("arbitrary.rpn", &text) else {
            return Ok(());
        };
        let mut cfg = ProcessConfig::new(sandbox().path(), "HELLO32.EXE");
        cfg.max_instructions = Some(50_000);
        cfg.ram_size = 8 << 20;
        let mut p = Process::new(cfg).unwrap();
        p.set_console(
            Box::new(std::io::sink()),
            Box::new(std::io::sink()),
            Box::new(std::io::empty()),
        );
        p.trace_start(StdaFormat::New, 1).unwrap();
        let _ = p.trace_apply("HELLO32", &file, None, None);
        let _ = p.run();
    }
}
