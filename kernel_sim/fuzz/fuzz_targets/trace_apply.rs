//! The trace runtime applied to a loaded module: any text as a trace
//! program file, applied to HELLO32 (built once by testprogs) and run
//! with a small budget, never panics.
#![no_main]

use std::sync::OnceLock;

use kernel_sim::{Process, ProcessConfig};
use libfuzzer_sys::fuzz_target;
use stda::StdaFormat;

fn sandbox() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        testprogs::hello32().unwrap().write_to(dir.path()).unwrap();
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(file) = rpn_vm::parse("fuzz.rpn", text) else {
        return;
    };
    let mut cfg = ProcessConfig::new(sandbox().path(), "HELLO32.EXE");
    cfg.max_instructions = Some(50_000);
    cfg.ram_size = 8 << 20;
    let Ok(mut p) = Process::new(cfg) else {
        return;
    };
    p.set_console(Box::new(std::io::sink()), Box::new(std::io::sink()), Box::new(std::io::empty()));
    if p.trace_start(StdaFormat::New, 1).is_err() {
        return;
    }
    let _ = p.trace_apply("HELLO32", &file, None, None);
    let _ = p.run();
});
