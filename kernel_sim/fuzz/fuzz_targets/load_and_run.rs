//! Any bytes as a program file: loading and a short run never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("FUZZ.EXE"), data).unwrap();
    let mut cfg = kernel_sim::ProcessConfig::new(dir.path(), "FUZZ.EXE");
    cfg.max_instructions = Some(20_000);
    cfg.ram_size = 8 << 20;
    if let Ok(mut p) = kernel_sim::Process::new(cfg) {
        p.set_console(Box::new(std::io::sink()), Box::new(std::io::sink()), Box::new(std::io::empty()));
        let _ = p.run();
    }
});
