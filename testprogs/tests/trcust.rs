//! The TSFs compile with os2trace's TRCUST (the `tdf` crate) against the
//! modules and MAP files, without a diagnostic, to tracepoint records at
//! the same addresses, with the same opcode bytes and the same RPN bytes
//! as the trace program files assemble to: the two forms agree.

use tdf::ConsoleLine;
use tdf::trcust::{PathStyle, run};

#[test]
fn each_tsf_compiles_to_the_trace_program_files_rpn() {
    let dir = tempfile::tempdir().unwrap();
    testprogs::build_all(dir.path()).unwrap();
    let mut records = 0;
    for p in testprogs::all().unwrap() {
        let args = vec![p.tsf_file_name(), format!("/M={}", p.map_file_name())];
        let out = run(&args, dir.path(), PathStyle::Dos);
        assert_eq!(out.exit_code, 0, "{}:\n{}", p.name, out.text());
        let diags: Vec<&ConsoleLine> = out
            .console
            .iter()
            .filter(|l| matches!(l, ConsoleLine::Diag(_)))
            .collect();
        assert!(diags.is_empty(), "{}: {diags:?}", p.name);
        let tdf_bytes = std::fs::read(dir.path().join(format!("{}.TDF", p.name))).unwrap();
        let tdf = tdf::Tdf::parse(&tdf_bytes).unwrap();
        assert_eq!(tdf.records.len(), p.tracepoints.len(), "{}", p.name);
        let rpn = rpn_vm::source::parse(&p.rpn_file_name(), &p.rpn).unwrap();
        for r in &tdf.records {
            let tp = rpn
                .tracepoints
                .iter()
                .find(|t| t.minor == r.minor)
                .unwrap_or_else(|| panic!("{}: minor {} not in the .RPN", p.name, r.minor));
            assert_eq!(tp.object, Some(r.object), "{} minor {}", p.name, r.minor);
            assert_eq!(tp.offset, Some(r.offset), "{} minor {}", p.name, r.minor);
            assert_eq!(tp.opcode, Some(r.opcode), "{} minor {}", p.name, r.minor);
            assert_eq!(r.major, p.major);
            assert_eq!(
                tp.program.bytes(),
                &r.rpn[..],
                "{} minor {}",
                p.name,
                r.minor
            );
            records += 1;
        }
    }
    assert!(records >= 40, "{records} records");
}
