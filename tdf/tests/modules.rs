//! TRCUST against real module files through `loader`: the opcode inside an
//! iterated (EXEPACK1) page is the LX specification's byte (TRCUST 3.05A
//! mis-expands 1-byte iteration records), NE segments are read, and
//! `verify` agrees with what the compiler wrote.

use std::fs;

use loader::{Module, PageKind};
use tdf::trcust::{PathStyle, run};

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/samples");

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

#[test]
fn iterated_page_opcode_follows_the_lx_spec() {
    // 16 zero bytes (one iteration record of a 1-byte pattern in EXEPACK1),
    // then code: PUSH EBP at 0x10.
    let mut code = vec![0u8; 16];
    code.extend_from_slice(&[0x55, 0x8B, 0xEC, 0xC9, 0xC3]);
    let mut m = Module::new_lx("ITER");
    let obj = m.add_object(0x2005, 0x1000, &code);
    m.objects[usize::from(obj) - 1].pages[0].kind = PageKind::Iterated;
    let bytes = loader::write(&m).unwrap();
    // The page really is stored iterated.
    let back = loader::parse(&bytes).unwrap();
    assert_eq!(back.objects[0].pages[0].kind, PageKind::Iterated);

    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("ITER.DLL"), &bytes).unwrap();
    fs::write(
        dir.path().join("ITER.MAP"),
        "\n  Address         Publics by Value\n\n 0001:00000000       zeros\n 0001:00000010       func\n 0001:00000015       endf\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("ITER.TSF"),
        "MODNAME=ITER\nMAJOR=0x99\nTRACE MINOR=1, TP=.func\nTRACE MINOR=2, TP=.func+3\n",
    )
    .unwrap();
    let out = run(
        &args(&["ITER.TSF", "/M=ITER.MAP"]),
        dir.path(),
        PathStyle::Dos,
    );
    assert_eq!(out.exit_code, 0, "{}", out.text());
    assert!(out.text().contains("Using module file: C:\\ITER.DLL"));
    let t = tdf::Tdf::parse(&fs::read(dir.path().join("ITER.TDF")).unwrap()).unwrap();
    let ops: Vec<(u32, u8)> = t.records.iter().map(|r| (r.offset, r.opcode)).collect();
    assert_eq!(ops, [(0x10, 0x55), (0x13, 0xC9)]);

    let image = tdf::module::image_from_bytes(&bytes).unwrap();
    let map =
        tdf::module::symbols_from_map(&fs::read(dir.path().join("ITER.MAP")).unwrap()).unwrap();
    assert_eq!(tdf::verify::verify(&t, &image, Some(&map)), []);
}

#[test]
fn ne_segments_are_read() {
    let exe = fs::read(format!("{SAMPLES}/ne/hello16.exe")).unwrap();
    let module = loader::parse(&exe).unwrap();
    let first = module.objects[0].pages[0].data[0];
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("HELLO16.EXE"), &exe).unwrap();
    fs::write(
        dir.path().join("H.MAP"),
        "\n  Address         Publics by Value\n\n 0001:0000       start\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("H.TSF"),
        "MODNAME=HELLO16.EXE\nMAJOR=0x98\nTRACE MINOR=1, TP=.start, DESC=\"x\", REGS=(AX)\n",
    )
    .unwrap();
    let out = run(&args(&["H.TSF", "/M=H.MAP"]), dir.path(), PathStyle::Dos);
    if tdf::compile::trace_untraceable(first) {
        assert!(out.text().contains("cannot be traced"));
        return;
    }
    assert_eq!(out.exit_code, 0, "{}", out.text());
    let t = tdf::Tdf::parse(&fs::read(dir.path().join("H.TDF")).unwrap()).unwrap();
    assert_eq!((t.records[0].object, t.records[0].opcode), (1, first));
}

#[test]
fn missing_module_is_fatal() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("X.MAP"),
        "\n  Address         Publics by Value\n\n 0001:00000000       f\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("X.TSF"),
        "MODNAME=NOPE\nMAJOR=1\nTRACE MINOR=1, TP=.f\n",
    )
    .unwrap();
    let out = run(&args(&["X", "/M=X.MAP"]), dir.path(), PathStyle::Dos);
    assert_eq!(out.exit_code, 1);
    assert!(
        out.text()
            .contains("TRCUST(3) FATAL: file not found or access denied : NOPE\n\nFATAL/SEVERE error detected, TRCUST aborted\n"),
        "{}",
        out.text()
    );
    assert!(out.written.is_empty());
    // Nothing, not even a temporary file, is left.
    let names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names.len(), 2);
}
