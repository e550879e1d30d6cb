//! Any bytes as an OS/2 path: resolving never panics and never leaves the
//! sandbox root.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("SUB")).unwrap();
    let s = kernel_sim::fs::Sandbox::new(dir.path()).unwrap();
    if let Ok(r) = s.resolve(data, &["SUB".to_string()]) {
        assert!(r.host.starts_with(s.root()));
    }
});
