//! The fuzz targets' entry points on arbitrary and mutated input, in the
//! test suite: the TSF compiler, and the TDF, TMI and TFF readers. Bad input
//! gives a message or an error, never a panic; what is produced reads back.

use std::fs;

mod hello;

use hello::{Hello, symbols};
use proptest::prelude::*;
use tdf::compile::{Options, compile};
use tdf::{Tdf, Tmi};

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/formats/trcust-corpus"
);

/// Compiles `src`; whatever comes out must write and read back.
fn check_compile(src: &[u8]) {
    let m = symbols();
    let opts = Options {
        retep_mask: 7,
        ..Options::default()
    };
    let out = compile(src, &opts, Some(&m), &mut Hello);
    if out.aborted {
        assert!(out.tdf.is_none() && out.tff.is_none());
        assert!(out.diagnostics().any(|d| d.severity.aborts()));
    }
    if let Some(t) = &out.tdf {
        assert_eq!(&Tdf::parse(&t.to_bytes()).unwrap(), t);
        for r in &t.records {
            assert!(r.rpn.len() <= 255);
        }
    }
    if let Some(t) = &out.tmi {
        assert_eq!(&Tmi::parse(&t.to_bytes()).unwrap(), t);
    }
    if let Some(t) = &out.tff {
        stda::tff::Tff::parse(&t.to_bytes()).unwrap();
    }
}

fn corpus_files(ext: &str) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for case in fs::read_dir(CORPUS).unwrap().flatten() {
        for sub in ["in", "expect"] {
            if let Ok(rd) = fs::read_dir(case.path().join(sub)) {
                for e in rd.flatten() {
                    if e.path()
                        .extension()
                        .is_some_and(|x| x.eq_ignore_ascii_case(ext))
                    {
                        v.push(fs::read(e.path()).unwrap());
                    }
                }
            }
        }
    }
    v
}

/// Deterministic mutations: every corpus file with bytes flipped, cut and
/// spliced at many positions.
fn mutations(files: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut seed: u32 = 0x1234_5678;
    let mut rand = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    for f in files {
        for _ in 0..24 {
            let mut m = f.clone();
            if m.is_empty() {
                break;
            }
            match rand() % 4 {
                0 => {
                    let i = rand() as usize % m.len();
                    m[i] = rand() as u8;
                }
                1 => {
                    let i = rand() as usize % m.len();
                    m.truncate(i);
                }
                2 => {
                    let i = rand() as usize % m.len();
                    let tok: &[u8] = [
                        &b",("[..],
                        b")",
                        b"\"",
                        b"/*",
                        b"*",
                        b"=",
                        b"\n",
                        b"0xFFFFFFFFFFF",
                        b"TRACE",
                        b"INDIRECT*+4*",
                    ][rand() as usize % 10];
                    m.splice(i..i, tok.iter().copied());
                }
                _ => {
                    let i = rand() as usize % m.len();
                    let j = rand() as usize % m.len();
                    m.swap(i, j);
                }
            }
            out.push(m);
        }
    }
    out
}

/// Inputs on which a fuzzer once found a crash.
#[test]
fn fuzz_regressions() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/regressions");
    let mut n = 0;
    for e in fs::read_dir(dir).unwrap().flatten() {
        check_compile(&fs::read(e.path()).unwrap());
        n += 1;
    }
    assert!(n > 0);
}

#[test]
fn mutated_corpus_tsfs_compile_without_panicking() {
    let files = corpus_files("TSF");
    assert!(files.len() > 90);
    for f in &files {
        check_compile(f);
    }
    for m in mutations(&files) {
        check_compile(&m);
    }
}

#[test]
fn mutated_corpus_binaries_read_without_panicking() {
    for (ext, read) in [
        (
            "TDF",
            (|b: &[u8]| Tdf::parse(b).map(|t| t.to_bytes()).ok()) as fn(&[u8]) -> Option<Vec<u8>>,
        ),
        ("TMI", |b: &[u8]| Tmi::parse(b).map(|t| t.to_bytes()).ok()),
        ("TFF", |b: &[u8]| {
            stda::tff::Tff::parse(b).map(|t| t.to_bytes()).ok()
        }),
    ] {
        let files = corpus_files(ext);
        assert!(!files.is_empty(), "no {ext} files");
        for m in mutations(&files) {
            if let Some(again) = read(&m) {
                // What reads must read again to the same bytes.
                assert_eq!(read(&again), Some(again.clone()));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_compile(src in proptest::collection::vec(any::<u8>(), 0..400)) {
        check_compile(&src);
    }

    #[test]
    fn arbitrary_tokens_compile(words in proptest::collection::vec(
        prop::sample::select(vec![
            "MODNAME=HELLO.EXE", "MAJOR=", "0xC6", "TRACE", "MINOR=", "1", "TP=", ".startup", ".push28",
            "@STATIC", ",", "(", ")", "REGS=(EAX,AX,DS)", "MEM=", "MEM32=", "ASCIIZ=", "ASCIIZ32=",
            "RDS+DI", "FEAX+EBX", ".msg+4", "DIRECT", "INDIRECT*+6*", "IS", "IF", "LEN", "LEN=",
            "ORBIT=(0,1)", "ORBIT=", "ABORTOP", "REMOVEOP", "DESC=\"d\"", "FMT=\"%P%W\"", "TYPE=(A)",
            "TYPELIST NAME=A,ID=2", "GROUP=", "RETEP", "RETEP=RET+JMP", "OPCODE=0x68", "-", "+", "20",
        ]), 0..60)) {
        check_compile(words.join(" ").as_bytes());
    }

    #[test]
    fn arbitrary_bytes_read(b in proptest::collection::vec(any::<u8>(), 0..700)) {
        let _ = Tdf::parse(&b);
        let _ = Tmi::parse(&b);
        let mut tdf = b"TDF\0".to_vec();
        tdf.extend_from_slice(&b);
        let _ = Tdf::parse(&tdf);
        let mut tmi = b"TMI\0".to_vec();
        tmi.extend_from_slice(&b);
        let _ = Tmi::parse(&tmi);
    }
}
