//! Debug information: testprogs' DBG16 (NE, appended CodeView NB09) and
//! DBG32 (LX, NB09 debug section) read by `tdf::debuginfo`, and TRCUST's
//! `TP=@file,line`, `REGS=(.var)` and `RETEP=CV` compiled against them.

use std::fs;

use tdf::Tdf;
use tdf::buildtdf::{Overrides, build};
use tdf::debuginfo::{DebugInfo, LineLookup, Location};
use tdf::module::file_image;
use tdf::target::ModuleImage;
use tdf::trcust::{PathStyle, RunOutcome, run};
use testprogs::Program;

fn programs() -> (Program, Program) {
    (testprogs::dbg16().unwrap(), testprogs::dbg32().unwrap())
}

fn info(p: &Program) -> DebugInfo {
    let image = file_image(&p.bytes).unwrap();
    DebugInfo::parse(image.debug_bytes().expect("debug information")).unwrap()
}

fn label(p: &Program, name: &str) -> u32 {
    p.symbol(name).unwrap().offset
}

#[test]
fn the_debug_programs_carry_codeview() {
    let (p16, p32) = programs();
    // The NE file ends with the trailer; the LX one has a debug section,
    // which is also at the end of the file.
    assert_eq!(
        &p16.bytes[p16.bytes.len() - 8..p16.bytes.len() - 4],
        b"NB09"
    );
    assert_eq!(loader::parse(&p16.bytes).unwrap(), p16.module);
    let lx = loader::parse(&p32.bytes).unwrap();
    assert_eq!(lx, p32.module);
    assert!(lx.lx.unwrap().debug_info.starts_with(b"NB09"));
    for (p, add2, big) in [(&p16, "add2", false), (&p32, "Add2", true)] {
        let image = file_image(&p.bytes).unwrap();
        assert_eq!(image.debug_signature(), Some(*b"NB09"));
        let d = info(p);
        assert_eq!(d.signature, *b"NB09");
        assert_eq!(d.modules.len(), 1);
        assert_eq!(d.files.len(), 1);
        let source = p.source.unwrap().0;
        assert_eq!(d.files[0].name, source);
        for line in [5u32, 8, 9, 10, 11, 12, 15, 16, 17] {
            let want = label(p, &format!("line_{line}"));
            assert_eq!(
                d.line(&source.to_uppercase(), line),
                LineLookup::Exact(1, want),
                "{} line {line}",
                p.name
            );
        }
        assert_eq!(
            d.line(source, 6),
            LineLookup::Next(8, 1, label(p, "line_8"))
        );
        assert_eq!(d.line(source, 18), LineLookup::PastEnd);
        assert_eq!(d.line("other.c", 5), LineLookup::NoFile);
        let proc_ = d.procedure(add2).unwrap();
        assert_eq!(proc_.offset, label(p, add2));
        assert_eq!(proc_.length, label(p, "main") - label(p, add2));
        assert_eq!(proc_.offset + proc_.debug_start, label(p, "add2_body"));
        assert_eq!(proc_.offset + proc_.debug_end, label(p, "add2_epilogue"));
        assert_eq!(proc_.big, big);
        let sum = proc_.variable("sum").unwrap();
        assert_eq!(sum.location, Location::Register(if big { 23 } else { 15 }));
        let scratch = proc_.variable("scratch").unwrap();
        assert_eq!(
            scratch.location,
            Location::BpRelative(if big { -4 } else { -2 })
        );
        assert!(d.procedure("main").is_some());
        assert!(d.procedure("MAIN").is_none());
        assert_eq!(
            d.procedure_at(1, label(p, "line_10"))
                .map(|p| p.name.as_str()),
            Some(add2)
        );
        assert_eq!(d.data.len(), 1);
        assert_eq!((d.data[0].name.as_str(), d.data[0].segment), ("total", 2));
    }
}

/// Writes `p`'s files and `tsf` as T.TSF, and runs TRCUST with `args`.
fn trcust(p: &Program, tsf: &str, args: &[&str]) -> (RunOutcome, Option<Tdf>) {
    let dir = tempfile::tempdir().unwrap();
    p.write_to(dir.path()).unwrap();
    fs::write(dir.path().join("T.TSF"), tsf).unwrap();
    let mut all = vec!["T.TSF".to_string()];
    all.extend(args.iter().map(|s| s.to_string()));
    let out = run(&all, dir.path(), PathStyle::Dos);
    let tdf = fs::read(dir.path().join("T.TDF"))
        .ok()
        .map(|b| Tdf::parse(&b).unwrap());
    (out, tdf)
}

fn messages(out: &RunOutcome) -> Vec<String> {
    out.text()
        .lines()
        .filter(|l| l.starts_with("TRCUST("))
        .map(str::to_string)
        .collect()
}

fn tsf(p: &Program, traces: &str) -> String {
    format!("MODNAME={}\nMAJOR=0x50\n{traces}", p.file_name)
}

/// The RPN of the single record of the TDF compiled from `traces`.
fn rpn(p: &Program, traces: &str, args: &[&str]) -> Vec<u8> {
    let (out, tdf) = trcust(p, &tsf(p, traces), args);
    assert!(messages(&out).is_empty(), "{}", out.text());
    tdf.unwrap().records[0].rpn.clone()
}

#[test]
fn tp_file_line_places_the_tracepoint_on_the_line() {
    let (p16, p32) = programs();
    for p in [&p16, &p32] {
        let file = p.source.unwrap().0;
        let (out, tdf) = trcust(
            p,
            &tsf(
                p,
                &format!(
                    "TRACE MINOR=1, TP=@{file},9\nTRACE MINOR=2, TP=@{},16\n",
                    file.to_uppercase()
                ),
            ),
            &[],
        );
        assert_eq!(out.exit_code, 0);
        assert!(messages(&out).is_empty(), "{}", out.text());
        let tdf = tdf.unwrap();
        let got: Vec<(u32, u32, u8)> = tdf
            .records
            .iter()
            .map(|r| (r.object, r.offset, r.opcode))
            .collect();
        let at = |l: &str| {
            let o = label(p, l);
            (
                1,
                o,
                p.module
                    .byte_at(loader::Address {
                        object: 1,
                        offset: o,
                    })
                    .unwrap(),
            )
        };
        assert_eq!(got, vec![at("line_9"), at("line_16")], "{}", p.name);
        // A line without code: the next line, with a warning.
        let (out, tdf) = trcust(p, &tsf(p, &format!("TRACE MINOR=1, TP=@{file},7\n")), &[]);
        assert_eq!(
            messages(&out),
            ["TRCUST(3) WARNING: unable to find line number, 8 used"]
        );
        assert_eq!(tdf.unwrap().records[0].offset, label(p, "line_8"));
    }
}

#[test]
fn tp_file_line_messages() {
    let (p16, _) = programs();
    let cases: [(&str, &[&str], &str); 6] = [
        (
            "@dbg16.c,40",
            &[],
            "ERROR: line number past end of code for file dbg16.c",
        ),
        (
            "@other.c,5",
            &[],
            "ERROR: filename other.c not found in CodeView info",
        ),
        (
            "@dbg16.c,0",
            &[],
            "ERROR: line number missing or invalid: 0",
        ),
        (
            "@dbg16.c,9",
            &["/NODE"],
            "SEVERE: symbolic info not given for C:\\DBG16.EXE",
        ),
        (
            "@dbg16.c,9",
            &["/NOLN"],
            "ERROR: filename dbg16.c not found in CodeView info",
        ),
        (
            "@dbg16.c,9",
            &["/NOLN", "/NODE"],
            "SEVERE: symbolic info not given for C:\\DBG16.EXE",
        ),
    ];
    for (tp, args, want) in cases {
        let (out, tdf) = trcust(&p16, &tsf(&p16, &format!("TRACE MINOR=1, TP={tp}\n")), args);
        assert_eq!(
            messages(&out),
            [format!("TRCUST(3) {want}")],
            "{tp} {args:?}"
        );
        assert!(tdf.is_none());
        // Without debug information or a MAP file the run ends.
        let severe = want.starts_with("SEVERE");
        assert_eq!(out.exit_code, i32::from(severe));
    }
}

#[test]
fn register_and_stack_variables_are_logged() {
    let (p16, p32) = programs();
    let f = |p: &Program, line: u32, data: &str| {
        let file = p.source.unwrap().0;
        rpn(
            p,
            &format!("TRACE MINOR=1, TP=@{file},{line}, {data}\n"),
            &[],
        )
    };
    // 16-bit: SI, and MEM=(RSS+BP-2,DIRECT,2).
    assert_eq!(f(&p16, 11, "REGS=(.sum)"), f(&p16, 11, "REGS=(SI)"));
    assert_eq!(
        f(&p16, 11, "REGS=(.scratch)"),
        f(&p16, 11, "MEM=(RSS+BP-2,DIRECT,2)")
    );
    assert_eq!(
        f(&p16, 11, "REGS=(.a)"),
        f(&p16, 11, "MEM=(RSS+BP+6,DIRECT,2)")
    );
    // Mixed with registers: runs are kept around the memory statement.
    assert_eq!(
        f(&p16, 11, "REGS=(AX,.sum,.scratch,CX)"),
        f(&p16, 11, "REGS=(AX,SI), MEM=(RSS+BP-2,DIRECT,2), REGS=(CX)")
    );
    // 32-bit: ESI, and MEM32=(FEBP-4,DIRECT,4).
    assert_eq!(f(&p32, 11, "REGS=(.sum)"), f(&p32, 11, "REGS=(ESI)"));
    assert_eq!(
        f(&p32, 11, "REGS=(.scratch)"),
        f(&p32, 11, "MEM32=(FEBP-4,DIRECT,4)")
    );
    assert_eq!(
        f(&p32, 10, "REGS=(.b)"),
        f(&p32, 10, "MEM32=(FEBP+12,DIRECT,4)")
    );
    // Not in the procedure of the tracepoint (main has no variables).
    let (out, _) = trcust(
        &p16,
        &tsf(&p16, "TRACE MINOR=1, TP=@dbg16.c,16, REGS=(.sum)\n"),
        &[],
    );
    assert_eq!(messages(&out), ["TRCUST(3) ERROR: symbol not found: sum"]);
    let (out, _) = trcust(
        &p16,
        &tsf(&p16, "TRACE MINOR=1, TP=@dbg16.c,9, REGS=(.nosuch)\n"),
        &[],
    );
    assert_eq!(
        messages(&out),
        ["TRCUST(3) ERROR: symbol not found: nosuch"]
    );
    // /NODE: no variables at all.
    let map = format!("/M={}", p16.map_file_name());
    let (out, _) = trcust(
        &p16,
        &tsf(&p16, "TRACE MINOR=1, TP=.add2+9, REGS=(.sum)\n"),
        &[&map, "/NODE"],
    );
    assert_eq!(messages(&out), ["TRCUST(3) ERROR: symbol not found: sum"]);
}

#[test]
fn retep_cv_uses_the_procedure_debug_end() {
    let (p16, p32) = programs();
    for (p, add2) in [(&p16, "add2"), (&p32, "Add2")] {
        let map = format!("/M={}", p.map_file_name());
        let traces = format!("TRACE MINOR=1, TP=.{add2},RETEP=CV\n");
        // Without a MAP file: the procedure comes from the debug information.
        for args in [vec![], vec![map.as_str()]] {
            let (out, tdf) = trcust(p, &tsf(p, &traces), &args);
            assert!(messages(&out).is_empty(), "{}", out.text());
            assert_eq!(tdf.unwrap().records[0].offset, label(p, "add2_epilogue"));
        }
        // RETEP=RET still searches the code: the final ret.
        let (_, tdf) = trcust(
            p,
            &tsf(p, &format!("TRACE MINOR=1, TP=.{add2},RETEP=RET+CV\n")),
            &[],
        );
        assert_eq!(tdf.unwrap().records[0].offset, label(p, "add2_epilogue"));
        // (DBG16's `ret 4` is a Pascal return: /RP.)
        let (out, tdf) = trcust(
            p,
            &tsf(p, &format!("TRACE MINOR=1, TP=.{add2},RETEP=RET\n")),
            &["/RP"],
        );
        assert!(messages(&out).is_empty(), "{}", out.text());
        assert_eq!(
            tdf.unwrap().records[0].offset,
            label(p, "main") - 1 - if p.name == "DBG16" { 2 } else { 0 }
        );
        // /NODE: CV finds nothing, as with a MAP file only.
        let (out, _) = trcust(p, &tsf(p, &traces), &[&map, "/NODE"]);
        assert_eq!(
            messages(&out),
            [format!(
                "TRCUST(4) WARNING: unable to determine return point for {add2}"
            )]
        );
    }
}

#[test]
fn the_debug_programs_compile_and_verify_like_the_others() {
    let (p16, p32) = programs();
    for p in [&p16, &p32] {
        let dir = tempfile::tempdir().unwrap();
        p.write_to(dir.path()).unwrap();
        let args = vec![p.tsf_file_name(), format!("/M={}", p.map_file_name())];
        let out = run(&args, dir.path(), PathStyle::Dos);
        assert_eq!(out.exit_code, 0, "{}", out.text());
        assert!(!out.text().contains("TRCUST("), "{}", out.text());
        let tdf =
            Tdf::parse(&fs::read(dir.path().join(format!("{}.TDF", p.name))).unwrap()).unwrap();
        let from_rpn = build(&p.rpn_file_name(), &p.rpn, &Overrides::default()).unwrap();
        let key = |t: &Tdf| -> Vec<(u32, u32, u8, Vec<u8>)> {
            t.records
                .iter()
                .map(|r| (r.object, r.offset, r.opcode, r.rpn.clone()))
                .collect()
        };
        assert_eq!(key(&tdf), key(&from_rpn));
        let image = tdf::module::image_from_bytes(&p.bytes).unwrap();
        let map = tdf::module::symbols_from_map(p.map.as_bytes()).unwrap();
        assert!(tdf::verify::verify(&tdf, &image, Some(&map)).is_empty());
        let src = p.source.unwrap();
        assert_eq!(fs::read_to_string(dir.path().join(src.0)).unwrap(), src.1);
    }
}

#[test]
fn static_data_comes_from_the_debug_information() {
    let (p16, p32) = programs();
    for p in [&p16, &p32] {
        let map = format!("/M={}", p.map_file_name());
        let (file, _) = p.source.unwrap();
        let kw = if p.name == "DBG16" { "MEM" } else { "MEM32" };
        let t = format!("TRACE MINOR=1, TP=@{file},17, {kw}=(.total,DIRECT,2)\n");
        // `total` from the debug information alone is the MAP's `total`.
        let from_debug = rpn(p, &t, &[]);
        let t_map = format!("TRACE MINOR=1, TP=.exit, {kw}=(.total,DIRECT,2)\n");
        assert_eq!(from_debug, rpn(p, &t_map, &[&map, "/NODE"]), "{}", p.name);
        // Not there: symbol not found (no MAP needed to say so).
        let t = format!("TRACE MINOR=1, TP=@{file},17, {kw}=(.nothing,DIRECT,2)\n");
        let (out, _) = trcust(p, &tsf(p, &t), &[]);
        assert_eq!(
            messages(&out),
            ["TRCUST(4) ERROR: symbol not found: nothing"]
        );
    }
}

#[test]
fn ibm_hll_information_is_read_and_used() {
    let h = testprogs::dbgh32().unwrap();
    let d = info(&h);
    assert_eq!(d.signature, *b"NB04");
    assert_eq!(d.modules[0].name, "dbg32.obj");
    assert_eq!(d.files.len(), 1);
    assert_eq!(d.files[0].name, "dbg32.c");
    for line in [5u32, 8, 9, 10, 11, 12, 15, 16, 17] {
        let want = label(&h, &format!("line_{line}"));
        assert_eq!(d.line("dbg32.c", line), LineLookup::Exact(1, want));
    }
    let p = d.procedure("Add2").unwrap();
    assert!(p.big);
    assert_eq!(p.offset + p.debug_start, label(&h, "add2_body"));
    assert_eq!(p.offset + p.debug_end, label(&h, "add2_epilogue"));
    assert_eq!(p.variable("sum").unwrap().location, Location::Register(23));
    assert_eq!(
        p.variable("scratch").unwrap().location,
        Location::BpRelative(-4)
    );
    assert_eq!((d.data[0].name.as_str(), d.data[0].segment), ("total", 2));

    // Used as IBM's TRCUST uses HLL (tdf::compile::debug): no variable
    // for REGS=, and Add2, which has variables but no block, is placed at
    // 0 and has no end for RETEP; line numbers as with CodeView.
    let traces = "TRACE MINOR=1, TP=@dbg32.c,11, REGS=(.sum)\n\
                  TRACE MINOR=2, TP=.Add2,RETEP=CV\n\
                  TRACE MINOR=3, TP=@DBG32.C,7\n\
                  TRACE MINOR=4, TP=.Add2+1\n";
    let (out_h, tdf_h) = trcust(&h, &tsf(&h, traces), &[]);
    assert_eq!(
        messages(&out_h),
        [
            "TRCUST(3) ERROR: symbol not found: sum",
            "TRCUST(5) ERROR: unable to locate end of Add2"
        ]
    );
    let got: Vec<(u16, u32)> = tdf_h
        .unwrap()
        .records
        .iter()
        .map(|r| (r.minor, r.offset))
        .collect();
    assert_eq!(got, [(4, 1), (3, label(&h, "line_8"))]);
}

#[test]
fn tp_name_of_a_debug_procedure_is_after_its_prologue_or_at_its_hll_block() {
    for p in testprogs::debug_programs().unwrap() {
        let add2 = if p.name == "DBG16" { "add2" } else { "Add2" };
        let map = format!("/M={}", p.map_file_name());
        let t = format!("TRACE MINOR=1, TP=.{add2}\nTRACE MINOR=2, TP=.{add2}+3\n");
        // DBGH32's HLL Add2 has no block: IBM's TRCUST places it at 0.
        let body = if p.name == "DBGH32" {
            0
        } else {
            label(&p, "add2_body")
        };
        let start = label(&p, add2);
        for args in [vec![], vec![map.as_str()]] {
            let (out, tdf) = trcust(&p, &tsf(&p, &t), &args);
            assert!(messages(&out).is_empty(), "{}", out.text());
            let got: Vec<u32> = tdf.unwrap().records.iter().map(|r| r.offset).collect();
            assert_eq!(got, [body, body + 3], "{}", p.name);
        }
        // /NODE: the MAP symbol itself.
        let (_, tdf) = trcust(&p, &tsf(&p, &t), &[&map, "/NODE"]);
        let got: Vec<u32> = tdf.unwrap().records.iter().map(|r| r.offset).collect();
        assert_eq!(got, [start, start + 3], "{}", p.name);
    }
}
