//! Golden-file tests of `os2trace exehdr` (text and JSON) on the sample
//! modules, cross-checked against the samples' independent analyses.
//! Set `OS2TRACE_BLESS=1` to rewrite the golden files after a deliberate
//! change of the output.

use std::process::Command;

use serde_json::Value;

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/samples");
const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/exehdr");
const MODULES: [&str; 6] = [
    "lx/hello.exe",
    "lx/testbeep.exe",
    "lx/testpm.exe",
    "ne/test-asm16.exe",
    "ne/hello16.exe",
    "ne/testargv16.exe",
];

fn exehdr(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_os2trace"))
        .arg("exehdr")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn golden(name: &str, actual: &str) {
    let path = format!("{GOLDEN}/{name}");
    if std::env::var_os("OS2TRACE_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected =
        std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("missing golden file {path}"));
    assert_eq!(actual, expected, "{name} differs from its golden file");
}

fn stem(module: &str) -> String {
    module
        .rsplit('/')
        .next()
        .unwrap()
        .trim_end_matches(".exe")
        .to_string()
}

#[test]
fn text_output_matches_golden() {
    for module in MODULES {
        let (code, out, err) = exehdr(&[&format!("{SAMPLES}/{module}")]);
        assert_eq!(code, 0, "{module}: {err}");
        golden(&format!("{}.txt", stem(module)), &out);
    }
}

#[test]
fn json_output_matches_golden_and_the_analyses() {
    for module in MODULES {
        let path = format!("{SAMPLES}/{module}");
        let (code, out, err) = exehdr(&[&path, "--json"]);
        assert_eq!(code, 0, "{module}: {err}");
        golden(&format!("{}.json", stem(module)), &out);
        let v: Value = serde_json::from_str(&out).unwrap();
        let a: Value = serde_json::from_str(
            &std::fs::read_to_string(format!("{path}.analysis.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(v["format"], a["format"]);
        assert_eq!(v["imports"], a["import_modules"]);
        assert_eq!(v["entries"], a["entries"]);
        if a["format"] == "LX" {
            for (o, g) in v["objects"]
                .as_array()
                .unwrap()
                .iter()
                .zip(a["objects"].as_array().unwrap())
            {
                assert_eq!(o["sha256"], g["image_sha256_pre_fixup"], "{module}");
                assert_eq!(o["size"], g["vsize"]);
                assert_eq!(o["flags"], g["flags"]);
                for (p, gp) in o["pages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .zip(g["pages"].as_array().unwrap())
                {
                    assert_eq!(p["kind"], gp["kind"]);
                    assert_eq!(p["sha256"], gp["sha256"]);
                }
            }
            assert_eq!(v["fixups"]["kinds"], a["fixup_kinds"]);
        } else {
            for (s, g) in v["segments"]
                .as_array()
                .unwrap()
                .iter()
                .zip(a["segments"].as_array().unwrap())
            {
                assert_eq!(s["sha256"], g["sha256"], "{module}");
                assert_eq!(s["size"], g["len"]);
                assert_eq!(s["flags"], g["flags"]);
            }
        }
    }
}

#[test]
fn errors_and_usage() {
    let (code, _, err) = exehdr(&[]);
    assert_eq!(code, 2);
    assert!(err.to_lowercase().contains("usage"));
    let (code, _, _) = exehdr(&["a", "b"]);
    assert_eq!(code, 2);
    let (code, _, err) = exehdr(&["/nonexistent/module.exe"]);
    assert_eq!(code, 1);
    assert!(err.contains("cannot read"), "{err}");

    // A truncated module: the message names the structure and the offset.
    let bytes = std::fs::read(format!("{SAMPLES}/lx/testbeep.exe")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.exe");
    std::fs::write(&cut, &bytes[..600]).unwrap();
    let (code, _, err) = exehdr(&[cut.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("offset 0x"), "{err}");
}

/// Modules built with the loader's writer, so the dumps show what the
/// samples lack: entries and exports, forwarders, iterated and compressed
/// pages, import by name, chains.
fn built_modules() -> Vec<(&'static str, Vec<u8>)> {
    use loader::*;
    let mut lx = Module::new_lx("BUILT");
    lx.flags = 0x8000; // library
    lx.description = Some("built.dll: exehdr golden test".into());
    let code: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
    let obj = lx.add_object(0x2005, 8192, &code);
    lx.objects[0].pages[0].kind = PageKind::Compressed;
    lx.objects[0].pages[1].kind = PageKind::Iterated;
    let data = lx.add_object(0x2003, 0x3000, &[0u8; 16]);
    lx.objects[1].pages.push(Page {
        kind: PageKind::Zeroed,
        data: Vec::new(),
    });
    lx.start = Some(Address {
        object: obj,
        offset: 0x10,
    });
    lx.auto_data = Some(data);
    let doscalls = lx.import_module("DOSCALLS");
    lx.add_fixup(
        obj,
        0x20,
        SourceKind::Rel32,
        Target::ImportOrdinal {
            module: doscalls,
            ordinal: 234,
        },
    );
    lx.add_fixup(
        obj,
        0x30,
        SourceKind::Rel32,
        Target::ImportName {
            module: doscalls,
            name: "DosBeep".into(),
        },
    );
    for (k, off) in [0x40u32, 0x48, 0x50].into_iter().enumerate() {
        lx.fixups.push(Fixup {
            record: 2,
            object: obj,
            offset: off,
            kind: SourceKind::Off32,
            alias: false,
            target: Target::Internal {
                object: data,
                offset: 4 * k as u32,
            },
            additive: None,
            add_to_site: false,
            chained: true,
        });
    }
    lx.entries = vec![
        Entry {
            ordinal: 1,
            flags: 1,
            point: EntryPoint::Entry32 {
                object: obj,
                offset: 0x100,
            },
        },
        Entry {
            ordinal: 2,
            flags: 1,
            point: EntryPoint::Entry16 {
                object: obj,
                offset: 0x200,
            },
        },
        Entry {
            ordinal: 5,
            flags: 1,
            point: EntryPoint::Forwarder {
                module: doscalls,
                target: ForwardTarget::Ordinal(286),
            },
        },
    ];
    lx.resident_names = vec![Name {
        name: "FIRST".into(),
        ordinal: 1,
    }];
    lx.nonresident_names = vec![
        Name {
            name: "Second".into(),
            ordinal: 2,
        },
        Name {
            name: "Beep".into(),
            ordinal: 5,
        },
    ];
    lx.resources.push(Resource {
        type_id: 10,
        name_id: 1,
        object: data,
        offset: 0,
        size: 16,
    });
    lx.store_chain_words().unwrap();

    let mut ne = Module::new_ne("BUILT16");
    ne.flags = 0x8001;
    ne.description = Some("built16.dll".into());
    let seg = ne.add_object(0x0D10, 0x200, &[0x90; 0x120]);
    let dseg = ne.add_object(0x0D01, 0x400, &[0u8; 0x100]);
    ne.objects[1].pages[0].kind = PageKind::Iterated;
    let viocalls = ne.import_module("VIOCALLS");
    for off in [0x10u32, 0x20, 0x30] {
        ne.fixups.push(Fixup {
            record: 0,
            object: seg,
            offset: off,
            kind: SourceKind::Ptr1616,
            alias: false,
            target: Target::ImportOrdinal {
                module: viocalls,
                ordinal: 19,
            },
            additive: None,
            add_to_site: false,
            chained: false,
        });
    }
    ne.add_fixup(
        seg,
        0x40,
        SourceKind::Sel16,
        Target::Internal {
            object: dseg,
            offset: 0,
        },
    );
    ne.entries = vec![
        Entry {
            ordinal: 1,
            flags: 1,
            point: EntryPoint::NeMovable {
                segment: 1,
                offset: 0x50,
            },
        },
        Entry {
            ordinal: 3,
            flags: 3,
            point: EntryPoint::NeFixed {
                segment: 2,
                offset: 0x10,
            },
        },
    ];
    ne.resident_names = vec![
        Name {
            name: "ENTRYONE".into(),
            ordinal: 1,
        },
        Name {
            name: "SHAREDDATA".into(),
            ordinal: 3,
        },
    ];
    ne.auto_data = Some(dseg);
    let rsrc = ne.add_object(0x0C51, 0x18, b"MESSAGE TABLE RESOURCE..");
    ne.resources.push(Resource {
        type_id: 10,
        name_id: 1,
        object: rsrc,
        offset: 0,
        size: 0x18,
    });
    ne.store_chain_words().unwrap();
    vec![
        ("built", write(&lx).unwrap()),
        ("built16", write(&ne).unwrap()),
    ]
}

#[test]
fn built_modules_match_golden() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in built_modules() {
        let path = dir.path().join(format!("{name}.dll"));
        std::fs::write(&path, &bytes).unwrap();
        let (code, out, err) = exehdr(&[path.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        golden(&format!("{name}.txt"), &out);
        let (code, out, err) = exehdr(&[path.to_str().unwrap(), "--json"]);
        assert_eq!(code, 0, "{err}");
        golden(&format!("{name}.json"), &out);
    }
}
