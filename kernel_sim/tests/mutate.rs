//! Arbitrary and mutated program files load or fail with an error, and a
//! short run of whatever loads ends with an outcome: nothing panics.
//! (The same entry points as the fuzz targets in `fuzz/`.)

use kernel_sim::{Process, ProcessConfig};
use proptest::prelude::*;

fn try_run(bytes: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("M.EXE"), bytes).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "M.EXE");
    cfg.max_instructions = Some(20_000);
    cfg.ram_size = 8 << 20;
    if let Ok(mut p) = Process::new(cfg) {
        p.set_console(
            Box::new(std::io::sink()),
            Box::new(std::io::sink()),
            Box::new(std::io::empty()),
        );
        let _ = p.run();
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let s = |r: &str| {
        std::fs::read(format!(
            "{}/../../shared/samples/{r}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    };
    vec![
        s("ne/test-asm16.exe"),
        s("ne/hello16.exe"),
        s("lx/hello.exe"),
        s("lx/testbeep.exe"),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn mutated_samples_never_panic(seed in 0usize..4, edits in prop::collection::vec((any::<u16>(), any::<u8>()), 1..8)) {
        let mut bytes = seeds()[seed].clone();
        for (at, v) in edits {
            let n = bytes.len();
            bytes[usize::from(at) % n] = v;
        }
        try_run(&bytes);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        try_run(&bytes);
    }
}
