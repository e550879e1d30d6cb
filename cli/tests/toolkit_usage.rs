//! Every non-PM command-line tool of the OS/2 toolkit's `bin/` runs its
//! usage or help path here (issue 12): each prints its own usage text and
//! ends by its own DosExit, not by a fault or an unimplemented call. The
//! exit code is the tool's choice (eight end their usage with 1, PACK and
//! PACK2 with 4, MASM2ALP with 5), so it is printed in the table, not
//! asserted. RC, NMAKE32 and MKTMPF run on the VisualAge C runtime DLLs
//! (LIBCM, LIBCS) that the kernel provides. Not in the list: RCPP, which
//! RC16 runs (alone it looks for C1.ERR, which no system has, and prints
//! an empty message).
//!
//! Skipped, with a printed notice, unless OS2TK_DIR names the toolkit.

mod common;

use std::io::Write as _;
use std::path::PathBuf;

use common::os2trace;

/// (tool, arguments, a line of its usage text). KWIKINF needs the
/// toolkit's KIUTIL.DLL beside it.
const TOOLS: &[(&str, &[&str], &str)] = &[
    ("alp", &["-?"], "Usage: BASE OPTIONS"),
    ("exehdr", &["/?"], "Usage: EXEHDR [options] filename..."),
    (
        "fwdstamp",
        &[],
        "Usage: FWDSTAMP [options] infile deffile outfile",
    ),
    ("gencat", &[], "Usage: gencat <target_cat>"),
    (
        "implib",
        &[],
        "Usage: IMPLIB [options] implibname {deffile... | dllfile...}",
    ),
    (
        "ipfc",
        &[],
        "Usage: IPFC [-switch]... [-option]... infile [outfile]",
    ),
    (
        "kwikinf",
        &["/?"],
        "Usage: KWIKINF [Option | Search String]",
    ),
    ("link386", &["/?"], "/FARCALLTRANSLATION"),
    ("mapsym", &[], "usage: mapsym [-aln] mapfile"),
    (
        "markexe",
        &["/?"],
        "Usage: MARKEXE [/?] [/Q] [FORCE] [NO] [option] filename...",
    ),
    (
        "masm2alp",
        &["-H"],
        "Usage: masm [options] source(.asm),[out(.obj)],[list(.lst)],[cref(.crf)][;]",
    ),
    (
        "mkcatdef",
        &[],
        "Usage: C:\\MKCATDEF.EXE catname msg_file [msg_file...] [-h]",
    ),
    ("mkmsgf", &["/?"], "MKMSGF <inputfile> <outputfile> [/V]"),
    (
        "mktmpf",
        &[],
        "mktmpf   [-switch...] [-flag arg...] filename...",
    ),
    ("msgbind", &[], "usage: MSGBIND scriptFile"),
    ("nmake", &["/?"], "NMAKE /help"),
    (
        "nmake32",
        &["/?"],
        "[-flags] [targets] [macroname=string] [@responsefile]",
    ),
    ("pack", &[], "List syntax: [d:][path]source_filename"),
    ("pack2", &[], "List syntax: [d:][path]source_filename"),
    (
        "rc",
        &["-?"],
        "rc [<options>]   <.RC input file>  [<.EXE output file>]",
    ),
    (
        "rc16",
        &[],
        "Usage:  rc [<options>]   <.RC input file>  [<.EXE output file>]",
    ),
    ("rpcgen", &[], "usage:  C:\\RPCGEN.EXE infile"),
    (
        "trcust",
        &[],
        "Usage1:  Trcust filename1 filename2 /M=mapfile /W{0|1|2} /D +",
    ),
    (
        "wsformat",
        &["-?"],
        "Usage:  WSFORMAT [input_filename | -p[input_pipename]]",
    ),
];

fn toolkit() -> Option<PathBuf> {
    match std::env::var_os("OS2TK_DIR").map(PathBuf::from) {
        Some(d) if d.join("bin/exehdr.exe").exists() => Some(d),
        _ => {
            let _ = writeln!(
                std::io::stderr(),
                "OS2TK_DIR is not set (or has no bin/exehdr.exe): skipped"
            );
            None
        }
    }
}

#[test]
fn every_non_pm_tool_prints_its_usage_and_exits_by_itself() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // The tools, and the message files RC and MKTMPF read along DPATH.
    for sub in ["bin", "msg"] {
        for e in std::fs::read_dir(tk.join(sub)).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, root.join(p.file_name().unwrap())).unwrap();
        }
    }
    std::fs::copy(tk.join("dll/kiutil.dll"), root.join("KIUTIL.DLL")).unwrap();
    let mut failures = Vec::new();
    println!("tool      | arguments | exit");
    for (tool, args, usage) in TOOLS {
        let exe = format!("{tool}.exe");
        let mut all = vec!["run", "--root", ".", "--env", "DPATH=C:\\", exe.as_str()];
        all.extend_from_slice(args);
        let out = os2trace(root, &all);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let code = out.status.code();
        println!("{tool:9} | {:9} | {code:?}", args.join(" "));
        if !text.contains(usage) || text.contains("os2trace run:") {
            failures.push(format!("{tool} {args:?} ({code:?}):\n{text}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// KIFSMON, KwikINF's keyboard monitor, has no usage text: KwikINF (a PM
/// program) starts it with the shared segment `\SHAREMEM\KWIKINF.DAT`.
/// Alone it finds no segment and ends by its own DosExit(1); its exit
/// list closes its monitor handle, which it never opened (MONCALLS,
/// ERROR_MON_INVALID_HANDLE), and ends the process.
#[test]
fn kifsmon_ends_by_itself_without_kwikinf() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::copy(tk.join("bin/kifsmon.exe"), root.join("KIFSMON.EXE")).unwrap();
    let out = os2trace(
        root,
        &["run", "--root", ".", "--api-log", "KIFSMON.EXE", "1"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("os2trace run:"), "{err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(r#"DosGetShrSeg("\SHAREMEM\KWIKINF.DAT""#) && err.contains("-> rc=2"),
        "{err}"
    );
    assert!(err.contains("MONCALLS.3 DosMonClose(0) -> rc=381"), "{err}");
    assert!(err.contains("not implemented: none called"), "{err}");
}
