//! `os2trace rpn asm|disasm|verify|run`, end to end: listings, compiled
//! files that disassemble back to the same bytes, `FILE:LINE:COL` errors
//! with exit 1 and nothing written, one tracepoint run against a fake
//! machine, interpreted and native, and `verify` and `disasm` of a large
//! file in memory near its size.

mod common;

use std::path::Path;
use std::process::Output;

use common::stdout;

/// Runs `os2trace rpn ARGS` in `dir`.
fn os2trace(dir: &Path, args: &[&str]) -> Output {
    let mut with_rpn = vec!["rpn"];
    with_rpn.extend_from_slice(args);
    common::os2trace(dir, &with_rpn)
}

/// Reads the word at SS:ESP+4 and logs it with a counter; the second
/// tracepoint logs a string.
const PROGRAM: &str = "vars=1\nmajor=0xC8\n\
    minor=0x10\n\
    Push SS\nPush ESP\nPush W,4\nAdd\nPush WIS   ; the word\n\
    Inc V,0\nPush V,0\nLog WN,2\n\
    minor=0x11\n\
    Push W,32\nPush D,0x5000\nLog ARF\n";

fn dir_with(name: &str, text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), text).unwrap();
    dir
}

#[test]
fn asm_lists_and_writes_what_disasm_turns_back_into_the_same_bytes() {
    let dir = dir_with("t.rpn", PROGRAM);
    let listing = stdout(&os2trace(dir.path(), &["asm", "t.rpn", "-o", "t.rpo"]));
    assert!(listing.starts_with("; minor=0x0010"), "{listing}");
    assert!(listing.contains("| Push WIS   ; the word"), "{listing}");
    let text = stdout(&os2trace(dir.path(), &["disasm", "t.rpo"]));
    std::fs::write(dir.path().join("back.rpn"), &text).unwrap();
    stdout(&os2trace(
        dir.path(),
        &["asm", "back.rpn", "-o", "back.rpo"],
    ));
    assert_eq!(
        std::fs::read(dir.path().join("back.rpo")).unwrap(),
        std::fs::read(dir.path().join("t.rpo")).unwrap()
    );
    let verified = stdout(&os2trace(dir.path(), &["verify", "t.rpn"]));
    assert_eq!(verified, "t.rpn: 2 tracepoints verified\n");
}

#[test]
fn bad_programs_name_file_line_and_column_and_write_nothing() {
    let cases = [
        ("minor=1\nPush EAX\nFrob 3\n", "t.rpn:3:1:"),
        ("minor=1\nl: Push EAX\nJmp N,l\n", "t.rpn:3:"),
        ("Push EAX\n", "t.rpn:1:"),
        ("minor=1\nPush W,0x10000\n", "t.rpn:2:"),
    ];
    for (text, place) in cases {
        let dir = dir_with("t.rpn", text);
        for args in [&["asm", "t.rpn", "-o", "t.rpo"][..], &["verify", "t.rpn"]] {
            let out = os2trace(dir.path(), args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{text:?} {args:?}: {err}");
            assert!(err.starts_with(place), "{text:?}: {err}");
            assert!(out.stdout.is_empty(), "{text:?}");
        }
        assert!(
            !dir.path().join("t.rpo").exists(),
            "{text:?}: nothing written"
        );
    }
}

#[test]
fn run_prints_the_outcome_as_json_the_same_interpreted_and_native() {
    let dir = dir_with("t.rpn", PROGRAM);
    let machine = [
        "--regs",
        "esp=0x100,ss=0x17",
        "--sel",
        "0x17=0x20000:0xFFFF",
        "--mem",
        "0x20104=3412",
        "--mem",
        "0x5000=4f532f3200",
    ];
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "t.rpn"];
        args.extend_from_slice(&machine);
        args.extend_from_slice(extra);
        let json: serde_json::Value =
            serde_json::from_str(&stdout(&os2trace(dir.path(), &args))).unwrap();
        json
    };
    let word = run(&["--json"]);
    assert_eq!(word["outcome"], "logged");
    assert_eq!(word["minor"], 0x10);
    // Popped order: the counter (1), then the word 0x1234.
    assert_eq!(word["data"], "01003412");
    assert_eq!(word["vars"], serde_json::json!([1]));
    assert!(word["cycles"].as_u64().unwrap() > 0);
    let string = run(&["--json", "--minor", "0x11"]);
    assert_eq!(string["data"], "0104004f532f32");
    if cfg!(target_arch = "x86_64") {
        assert_eq!(run(&["--json", "--native"]), word);
        assert_eq!(run(&["--json", "--minor", "0x11", "--native"]), string);
    }
}

#[test]
fn run_native_refuses_a_program_it_cannot_compile() {
    let dir = dir_with(
        "t.rpn",
        "minor=1\nPush EAX\nJmp ZN,l\nPush EBX\nl: Log DN,1\n",
    );
    let out = os2trace(dir.path(), &["run", "t.rpn", "--native"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not compile to native code"), "{err}");
    // Interpreted, it runs.
    stdout(&os2trace(dir.path(), &["run", "t.rpn"]));
}

/// A file of 65,535 tracepoints (the most a DTO holds), 9 MB of text.
fn large_program() -> String {
    let body = "Push SS\nPush ESP\nPush W,4\nAdd\nPush WIS\nInc V,0\nPush V,0\nLog WN,2\n";
    let mut text = String::from("vars=1\nmajor=0xC8\n");
    for minor in 1..=0xFFFF {
        text.push_str(&format!("minor={minor}\n{body}{body}"));
    }
    text
}

#[test]
fn verify_and_disasm_of_a_large_file_stay_near_its_size() {
    let text = large_program();
    let dir = dir_with("big.rpn", &text);
    stdout(&os2trace(dir.path(), &["asm", "big.rpn", "-o", "big.rpo"]));
    let compiled = std::fs::metadata(dir.path().join("big.rpo")).unwrap().len();
    // The address space of the binary itself (48 MB; a debug build maps
    // 28) plus six times the file: before, verify needed 13 times the
    // text and disasm 20 times the compiled file.
    let limit = |bytes: u64| 48 * 1024 + 6 * bytes / 1024;
    let d = dir.path();
    let out = common::os2trace_limited(d, &["rpn", "verify", "big.rpn"], limit(text.len() as u64));
    assert_eq!(stdout(&out), "big.rpn: 65535 tracepoints verified\n");
    // rpn run parses the same way: the last tracepoint runs in the same
    // bound.
    let out = common::os2trace_limited(
        d,
        &["rpn", "run", "big.rpn", "--minor", "65535", "--json"],
        limit(text.len() as u64),
    );
    assert!(stdout(&out).contains("\"minor\":65535"), "{out:?}");
    let out = common::os2trace_limited(d, &["rpn", "disasm", "big.rpo"], limit(compiled));
    let back = stdout(&out);
    assert_eq!(back.matches("minor=0x").count(), 0xFFFF);
    // What disasm printed one tracepoint at a time assembles to the same
    // bytes.
    std::fs::write(d.join("back.rpn"), back).unwrap();
    stdout(&os2trace(d, &["asm", "back.rpn", "-o", "back.rpo"]));
    assert!(
        std::fs::read(d.join("back.rpo")).unwrap() == std::fs::read(d.join("big.rpo")).unwrap()
    );
}
