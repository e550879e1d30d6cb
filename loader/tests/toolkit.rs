//! Every LX and NE module of the OS/2 Warp 4.5 Toolkit reads, and writes
//! back to the same module. Runs only when `OS2TK_DIR` names the toolkit's
//! root (the public bitwiseworks/os2tk45 repository); skipped otherwise.
//! The toolkit's files are IBM's and are never committed here.

use std::io::Write as _;
use std::path::{Path, PathBuf};

fn modules(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            modules(&p, out);
        } else if let Some(ext) = p.extension().and_then(|e| e.to_str())
            && ["exe", "dll", "sys", "drv", "ifs"].contains(&ext.to_ascii_lowercase().as_str())
        {
            out.push(p);
        }
    }
}

#[test]
fn toolkit_modules_read_and_round_trip() {
    let Some(root) = std::env::var_os("OS2TK_DIR") else {
        let _ = writeln!(std::io::stderr(), "OS2TK_DIR not set: skipped");
        return;
    };
    let mut files = Vec::new();
    modules(Path::new(&root), &mut files);
    files.sort();
    let (mut lx, mut ne, mut other) = (0, 0, 0);
    let mut kinds = std::collections::BTreeMap::new();
    let mut failures = Vec::new();
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        match loader::detect(&bytes) {
            Ok((loader::Format::Lx, _)) => lx += 1,
            Ok((loader::Format::Ne, _)) => ne += 1,
            Err(_) => {
                other += 1;
                continue;
            }
        }
        let m = match loader::parse(&bytes) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        for f in &m.fixups {
            *kinds
                .entry(if f.chained {
                    "chained site"
                } else {
                    f.target.kind_name()
                })
                .or_insert(0) += 1;
        }
        for o in &m.objects {
            for p in &o.pages {
                *kinds.entry(p.kind.name()).or_insert(0) += 1;
            }
        }
        let mut normal = m.clone();
        normal.normalize_fixups();
        if normal != m {
            failures.push(format!(
                "{}: read fixups are not in normal order",
                path.display()
            ));
        }
        match loader::write(&m).map(|b| loader::parse(&b)) {
            Ok(Ok(back)) if back == m => {}
            Ok(Ok(_)) => failures.push(format!(
                "{}: written module reads back different",
                path.display()
            )),
            Ok(Err(e)) => failures.push(format!(
                "{}: written module does not read: {e}",
                path.display()
            )),
            Err(e) => failures.push(format!("{}: cannot write: {e}", path.display())),
        }
    }
    eprintln!("{lx} LX, {ne} NE, {other} other files; pages and fixup sites by kind: {kinds:?}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The toolkit's one LINK386 map (speech/dll/smapi.map) against its DLL.
/// The map comes from a slightly different link: its first segment (CODE32)
/// is 0x90 bytes shorter than in the shipped DLL. So every export the map
/// lists must be an entry of the module under the same name and object,
/// at the same offset inside CODE32 and 0x90 further on after it.
#[test]
fn toolkit_map_agrees_with_its_module() {
    let Some(root) = std::env::var_os("OS2TK_DIR") else {
        let _ = writeln!(std::io::stderr(), "OS2TK_DIR not set: skipped");
        return;
    };
    let dir = Path::new(&root).join("speech/dll");
    let map = loader::map::parse_bytes(&std::fs::read(dir.join("smapi.map")).unwrap()).unwrap();
    let m = loader::parse(&std::fs::read(dir.join("smapi.dll")).unwrap()).unwrap();
    assert_eq!(map.style, loader::map::MapStyle::Link386);
    assert!(map.symbols.len() > 100, "{}", map.symbols.len());
    assert!(!map.imports.is_empty());
    assert!(map.exports.len() > 50, "{}", map.exports.len());
    assert_eq!(map.segments[0].name, "CODE32");
    let code32_end = map.segments[0].offset + map.segments[0].length;
    let (mut same, mut shifted) = (0, 0);
    for e in &map.exports {
        let entry = m
            .export(&e.name)
            .unwrap_or_else(|| panic!("{} not exported", e.name));
        let at = entry.address().unwrap();
        assert_eq!(at.object, e.object, "{}", e.name);
        if e.object == 1 && e.offset >= code32_end {
            assert_eq!(at.offset, e.offset + 0x90, "{}", e.name);
            shifted += 1;
        } else {
            assert_eq!(at.offset, e.offset, "{}", e.name);
            same += 1;
        }
    }
    assert!(same > 10 && shifted > 10, "{same} {shifted}");
    // Publics and exports of the same map agree where both name a routine.
    for e in &map.exports {
        if let Some(s) = map.lookup(&e.alias) {
            assert_eq!((s.object, s.offset), (e.object, e.offset), "{}", e.alias);
        }
    }
}

/// Opcode bytes an independent decoder (TRCUST-FORMATS.md, "Module
/// reading") found in toolkit modules: MAPSYM.EXE's iterated page (the LX
/// specification's expansion, where TRCUST 3.05A itself goes wrong) and
/// TRCUST.EXE's entry point.
#[test]
fn toolkit_bytes_match_the_independent_analysis() {
    let Some(root) = std::env::var_os("OS2TK_DIR") else {
        let _ = writeln!(std::io::stderr(), "OS2TK_DIR not set: skipped");
        return;
    };
    let read = |name: &str| {
        loader::parse(&std::fs::read(Path::new(&root).join("bin").join(name)).unwrap()).unwrap()
    };
    let at = |object, offset| loader::Address { object, offset };
    let mapsym = read("mapsym.exe");
    let page = &mapsym.objects[1].pages[1];
    assert_eq!(page.kind, loader::PageKind::Iterated);
    assert_eq!(
        page.data.len(),
        4096,
        "the iteration records fill the page exactly"
    );
    for (offset, byte) in [
        (0x1000, 0x00),
        (0x1010, 0x99),
        (0x1011, 0x22),
        (0x1014, 0x9E),
        (0x1234, 0x65),
    ] {
        assert_eq!(
            mapsym.byte_at(at(2, offset)),
            Some(byte),
            "mapsym 2:{offset:x}"
        );
    }
    let trcust = read("trcust.exe");
    assert_eq!(trcust.start, Some(at(2, 0x1FFA)));
    assert_eq!(trcust.byte_at(at(2, 0x1FFA)), Some(0xFC));
    // DESIGN.md: TRCUST imports these 19 DOSCALLS entries.
    let ordinals: Vec<u32> = trcust
        .imports_by_ordinal()
        .into_iter()
        .map(|(m, o)| {
            assert_eq!(m, "DOSCALLS");
            o
        })
        .collect();
    assert_eq!(
        ordinals,
        [
            5, 34, 38, 49, 58, 59, 60, 68, 70, 75, 77, 85, 89, 92, 135, 136, 137, 138, 151
        ]
    );
}
