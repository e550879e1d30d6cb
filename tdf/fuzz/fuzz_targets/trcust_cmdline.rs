//! TRCUST's command line: any arguments (split at NULs) over a directory
//! with TPDLL16's DLL, MAP and TSF never panic, and never write outside
//! the directory.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

fn program() -> &'static testprogs::Program {
    static P: OnceLock<testprogs::Program> = OnceLock::new();
    P.get_or_init(|| testprogs::tpdll16().unwrap())
}

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    program().write_to(dir.path()).unwrap();
    let args: Vec<String> = data
        .split(|&b| b == 0)
        .take(12)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .filter(|a| !a.contains("..") && !a.contains('/') && !a.contains('\\'))
        .collect();
    let cmd = tdf::trcust::parse_args(&args);
    let _ = tdf::trcust::run_parsed(&cmd, dir.path(), tdf::trcust::PathStyle::Dos).text();
});
