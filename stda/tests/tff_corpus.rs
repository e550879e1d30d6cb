//! The TFF reader and writer against IBM TRCUST 3.05A's own files: every
//! TFF of the corpus reads and writes back byte for byte, and the FMT
//! encoding of single-record cases matches what TRCUST stored.

use std::path::{Path, PathBuf};

use stda::fmt::compile_fmt;
use stda::tff::{Tff, TffRecord};

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/formats/trcust-corpus"
);

fn corpus_tffs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for case in std::fs::read_dir(CORPUS).expect("corpus directory") {
        let case = case.unwrap().path();
        for sub in ["expect", "in"] {
            let Ok(dir) = std::fs::read_dir(case.join(sub)) else {
                continue;
            };
            for f in dir {
                let f = f.unwrap().path();
                if f.extension().is_some_and(|e| e.eq_ignore_ascii_case("tff")) {
                    out.push(f);
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_corpus_tff_round_trips() {
    let files = corpus_tffs();
    assert!(files.len() >= 40, "only {} TFFs found", files.len());
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let tff = Tff::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(tff.to_bytes(), bytes, "{}", path.display());
        // The name TRCUST gave it is the one TRACEFMT looks for.
        let name = path.file_name().unwrap().to_str().unwrap();
        if name.starts_with("TRC") {
            assert_eq!(Tff::file_name(tff.major), name);
        }
    }
}

#[test]
fn known_files_decode() {
    let read = |case: &str, name: &str| {
        Tff::parse(&std::fs::read(Path::new(CORPUS).join(case).join("expect").join(name)).unwrap())
            .unwrap()
    };
    let t = read("f_ign", "TRC00C5.TFF");
    assert_eq!(t.major, 0xC5);
    assert_eq!(
        t.records,
        [TffRecord {
            minor: 0x10,
            desc: b"d".to_vec(),
            fmts: vec![
                b"skip \x01I10 here".to_vec(),
                b"and \x01I2 more".to_vec(),
                b"\x01I255 x".to_vec(),
                b"\x01I1000 x".to_vec(),
            ],
        }]
    );
    let t = read("f_empty", "TRC00C5.TFF");
    assert_eq!(t.records[0].fmts, [Vec::<u8>::new()]);
    assert!(t.records[0].desc.is_empty());
    let t = read("f_desc", "TRC00C5.TFF");
    assert!(t.records[0].fmts.is_empty());
    let t = read("comb_d", "OUT.TFF");
    let minors: Vec<u16> = t.records.iter().map(|r| r.minor).collect();
    assert_eq!(minors, [2, 0x20, 0x300]);
    let t = read("f_major1c5", "TRC01C5.TFF");
    assert_eq!(t.major, 0x1C5);
}

#[test]
fn writer_sorts_by_minor_like_trcust() {
    let rec = |minor: u16, d: &str| TffRecord {
        minor,
        desc: d.as_bytes().to_vec(),
        fmts: vec![],
    };
    let a = Tff {
        major: 0xC5,
        records: vec![rec(0x300, "c"), rec(2, "a"), rec(0x20, "b")],
    };
    let parsed = Tff::parse(&a.to_bytes()).unwrap();
    let minors: Vec<u16> = parsed.records.iter().map(|r| r.minor).collect();
    assert_eq!(minors, [2, 0x20, 0x300]);
}

/// The FMT strings of a TSF, in order (TSF string rules: `\"` is `"`).
fn tsf_fmts(tsf: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(k) = tsf[i..]
        .windows(4)
        .position(|w| w.eq_ignore_ascii_case(b"FMT="))
    {
        i += k + 4;
        if tsf.get(i) != Some(&b'"') {
            continue;
        }
        i += 1;
        let mut s = Vec::new();
        while i < tsf.len() && tsf[i] != b'"' {
            if tsf[i] == b'\\' && tsf.get(i + 1) == Some(&b'"') {
                s.push(b'"');
                i += 2;
            } else {
                s.push(tsf[i]);
                i += 1;
            }
        }
        out.push(s);
    }
    out
}

#[test]
fn fmt_encoding_matches_trcust() {
    let mut checked = 0;
    for path in corpus_tffs() {
        let case = path.parent().unwrap().parent().unwrap();
        if path.parent().unwrap().file_name().unwrap() != "expect" {
            continue;
        }
        let tff = Tff::parse(&std::fs::read(&path).unwrap()).unwrap();
        if tff.records.len() != 1 {
            continue;
        }
        let Some(tsf) = std::fs::read_dir(case.join("in")).unwrap().find_map(|f| {
            let p = f.unwrap().path();
            p.extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("tsf"))
                .then_some(p)
        }) else {
            continue;
        };
        let src = tsf_fmts(&std::fs::read(&tsf).unwrap());
        let compiled: Vec<Vec<u8>> = src.iter().map(|s| compile_fmt(s)).collect();
        assert_eq!(compiled, tff.records[0].fmts, "{}", case.display());
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} cases checked");
}
