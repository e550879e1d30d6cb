//! The TRACE ON spec parser (against TPDLL16's TDF) and TRSPOOL's option
//! parser: any text never panics.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

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

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (file, spec) = kernel_sim::trace::select::split_operand(&text);
    let _ = file;
    let _ = kernel_sim::trace::Selection::parse(spec.unwrap_or(&text), tdf());
    let args: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    let _ = stda::spool::SpoolOptions::parse(&args);
});
