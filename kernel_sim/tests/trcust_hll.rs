//! IBM's TRCUST and ours on a module with IBM HLL debug information built
//! here by IBM's own tools: ALP `+Od:IBM32` assembles [`HLL_ASM`] and
//! LINK386 `/DEBUG` links it, both running in kernel_sim (the module is
//! made at test time, never stored). Each TSF of [`CASES`] must give the
//! same files, exit code and console from both TRCUSTs (issue 17: how
//! TRCUST reads HLL procedures; `tdf::compile::debug` documents it).
//! Skipped (with a notice) without OS2TK_DIR.

mod common;
mod trcust_gen;

use std::path::Path;

use common::toolkit::{copy_tools, run_tool, toolkit};
use kernel_sim::Outcome;
use trcust_gen::Case;
use trcust_gen::harness::{Verdict, judge};

/// Three procedures as ALP writes their HLL records: `Add2` has a frame
/// and a LOCAL (a begin block after its 6-byte prologue, its parameters
/// and local inside), `main` no frame (no block; it follows `Add2`, so it
/// does not start at 0), `Sub1` a frame with `USES EBX` and a parameter.
const HLL_ASM: &str = "\
        .386
        .MODEL FLAT, SYSCALL
        EXTRN DosExit:PROC
        .STACK 4096
        .DATA
total   DD 0
        .CODE
Add2    PROC a:DWORD, b:DWORD
        LOCAL scratch:DWORD
        mov eax, a
        add eax, b
        mov scratch, eax
        ret
Add2    ENDP
main    PROC
        push 3
        push 2
        call Add2
        push eax
        call Sub1
        mov total, eax
        push 0
        push 1
        call DosExit
main    ENDP
Sub1    PROC USES ebx, x:DWORD
        mov ebx, x
        dec ebx
        mov eax, ebx
        ret
Sub1    ENDP
        END main
";

/// (what it shows, TSF).
const CASES: &[(&str, &str)] = &[
    (
        "a procedure is placed at its block; main, without one, at 0",
        "MODNAME=HLLT.EXE\nTRACE MINOR=1, TP=.Add2, DESC=\"a\"\n\
         TRACE MINOR=2, TP=.main, DESC=\"b\"\nTRACE MINOR=3, TP=.Sub1, DESC=\"c\"\n",
    ),
    (
        "offsets count from there",
        "MODNAME=HLLT.EXE\nTRACE MINOR=1, TP=.Add2+1, DESC=\"a\"\n\
         TRACE MINOR=2, TP=.main+2, DESC=\"b\"\nTRACE MINOR=3, TP=.Sub1-1, DESC=\"c\"\n",
    ),
    (
        "main at 0 and main+0 is a duplicate address",
        "MODNAME=HLLT.EXE\nTRACE MINOR=1, TP=.main, DESC=\"a\"\n\
         TRACE MINOR=2, TP=.main+0, DESC=\"b\"\n",
    ),
    (
        "REGS=(.var) finds no stack variable",
        "MODNAME=HLLT.EXE\nTRACE MINOR=1, TP=.Add2, REGS=(.a), DESC=\"a\"\n\
         TRACE MINOR=2, TP=.Sub1, REGS=(EBX,.x), DESC=\"b\"\n\
         TRACE MINOR=3, TP=.Sub1, REGS=(EBX), DESC=\"c\"\n",
    ),
    (
        "RETEP=CV ends at the block's end",
        "MODNAME=HLLT.EXE\nTRACE MINOR=1, TP=.Add2, RETEP=CV, DESC=\"a\"\n\
         TRACE MINOR=2, TP=.Sub1, RETEP=CV, DESC=\"b\"\n",
    ),
    (
        "other RETEP criteria search the block byte by byte (Sub1's C3 of \
         MOV EAX,EBX; none in Add2's block)",
        "MODNAME=HLLT.EXE\nTRACE MINOR=1, TP=.Sub1, RETEP=RET, DESC=\"a\"\n\
         TRACE MINOR=2, TP=.Add2, RETEP=RET+LEAVE, DESC=\"b\"\n\
         TRACE MINOR=3, TP=.Sub1 RETEP=LEAVE, DESC=\"c\"\n",
    ),
    (
        "a frameless procedure amid others has no end",
        "MODNAME=HLLT.EXE\nTRACE MINOR=1, TP=.main, RETEP=CV, DESC=\"a\"\n\
         TRACE MINOR=2, TP=.main, RETEP=RET, DESC=\"b\"\n",
    ),
    (
        "a static that is not public is no symbol, for TP= or MEM=",
        "MODNAME=HLLT.EXE\nTRACE MINOR=1, TP=.total, DESC=\"a\"\n\
         TRACE MINOR=2, TP=.nothere, DESC=\"b\"\n\
         TRACE MINOR=3, TP=.Add2, MEM32=(.total,DIRECT,4), DESC=\"c\"\n\
         TRACE MINOR=4, TP=.Sub1, MEM32=(.Add2,DIRECT,4), DESC=\"d\"\n",
    ),
];

/// HLLT.EXE, assembled and linked in `root`.
fn build(tk: &Path, root: &Path) -> Option<Vec<u8>> {
    copy_tools(
        tk,
        root,
        &[
            ("bin/alp.exe", "ALP.EXE"),
            ("bin/alp.msg", "ALP.MSG"),
            ("bin/link386.exe", "LINK386.EXE"),
            ("lib/os2386.lib", "OS2386.LIB"),
        ],
    );
    std::fs::write(root.join("HLLT.ASM"), HLL_ASM).ok()?;
    std::fs::write(root.join("HLLT.DEF"), "NAME HLLT WINDOWCOMPAT\r\n").ok()?;
    let (o, text, _) = run_tool(root, "ALP.EXE", &["+Od:IBM32", "HLLT.ASM"], 2_000_000_000);
    assert_eq!(o, Outcome::Exited(0), "ALP: {text}");
    let (o, text, _) = run_tool(
        root,
        "LINK386.EXE",
        &["/DEBUG", "HLLT.OBJ,HLLT.EXE,NUL,OS2386.LIB,HLLT.DEF;"],
        2_000_000_000,
    );
    assert_eq!(o, Outcome::Exited(0), "LINK386: {text}");
    std::fs::read(root.join("HLLT.EXE")).ok()
}

#[test]
fn hll_procedures_are_read_as_ibm_trcust_reads_them() {
    let Some(tk) = toolkit("alp.exe") else { return };
    let Ok(trcust) = std::fs::read(tk.join("bin").join("trcust.exe")) else {
        common::toolkit::skip("OS2TK_DIR has no bin/trcust.exe");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&tk, dir.path()).expect("HLLT.EXE built");
    // The module has IBM HLL information, as LINK386 writes it.
    let bytes = tdf::debuginfo::appended(&exe).expect("debug information");
    let info = tdf::debuginfo::DebugInfo::parse(bytes).expect("readable");
    assert_eq!(&info.signature, b"NB04");
    let add2 = info.procedure("Add2").expect("Add2");
    assert_eq!(add2.block, Some((add2.offset + add2.debug_start, 9)));
    assert_eq!(info.procedure("main").expect("main").block, None);
    let mut failed = Vec::new();
    for (what, tsf) in CASES {
        let case = Case {
            args: vec!["T.TSF".into()],
            files: vec![
                ("T.TSF".into(), tsf.as_bytes().to_vec()),
                ("HLLT.EXE".into(), exe.clone()),
            ],
            modules: Vec::new(),
        };
        let (v, ibm, ours) = judge(&trcust, &case);
        if v != Verdict::Same {
            failed.push(format!(
                "{what}: {v:?}\n--- IBM\n{}--- ours\n{}",
                ibm.text(),
                ours.text()
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
