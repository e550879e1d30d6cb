//! Every non-PM command-line tool of the OS/2 toolkit's `bin/` runs its
//! usage or help path here (issue 12): each prints its own usage text and
//! ends by its own DosExit, not by a fault or an unimplemented call, with
//! the exit code its own code gives. Each tool is run with the argument
//! that reaches its help path (found in its argument parser), and the exit
//! code is asserted. Thirteen end their help with 0. Eleven end every
//! usage or help path with a constant that is not 0, found in their code
//! and shown at each entry of [`TOOLS`] (addresses are linear, as loaded
//! here; the 16-bit ones are `selector:offset`): none of those paths asks
//! the system anything that could change the code, so no emulation
//! difference (handle types, environment, command line, message files)
//! is involved. RC, NMAKE32 and MKTMPF run on the VisualAge C runtime DLLs
//! (LIBCM, LIBCS) that the kernel provides. Not in the list: RCPP, which
//! RC16 runs (alone it looks for C1.ERR, which no system has, and prints
//! an empty message).
//!
//! Skipped, with a printed notice, unless OS2TK_DIR names the toolkit.

mod common;

use std::path::PathBuf;

use common::os2trace;

/// (tool, arguments, a line of its usage text, exit code). KWIKINF needs
/// the toolkit's KIUTIL.DLL beside it.
const TOOLS: &[(&str, &[&str], &str, i32)] = &[
    ("alp", &["-?"], "Usage: BASE OPTIONS", 0),
    ("exehdr", &["/?"], "Usage: EXEHDR [options] filename...", 0),
    (
        "fwdstamp",
        &[],
        "Usage: FWDSTAMP [options] infile deffile outfile",
        0,
    ),
    // Its only usage path: `if (argc < 2)` at 0x1004F prints the usage
    // through the function at 0x118C4, which ends `mov eax,1; call exit`
    // (0x118D5). Any argument is taken as the catalog to build.
    ("gencat", &[], "Usage: gencat <target_cat>", 1),
    (
        "implib",
        &[],
        "Usage: IMPLIB [options] implibname {deffile... | dllfile...}",
        0,
    ),
    (
        "ipfc",
        &[],
        "Usage: IPFC [-switch]... [-option]... infile [outfile]",
        0,
    ),
    (
        "kwikinf",
        &["/?"],
        "Usage: KWIKINF [Option | Search String]",
        0,
    ),
    ("link386", &["/?"], "/FARCALLTRANSLATION", 0),
    // The usage routine at 0x12640 ends `mov eax,1; call exit` (0x12655);
    // it is reached with fewer than two arguments (0x10154) and from every
    // option letter other than a, d, l, n (0x1013F), `?` and `h` included.
    ("mapsym", &[], "usage: mapsym [-aln] mapfile", 1),
    // No argument, or `/?` or `-?` first (compared at 0x101AF, 0x101C3),
    // prints the usage (and with an argument, the options) and ends
    // `mov eax,1; call exit` (0x10202). Other arguments are file names.
    (
        "markexe",
        &["/?"],
        "Usage: MARKEXE [/?] [/Q] [FORCE] [NO] [option] filename...",
        1,
    ),
    // `-H` (option 0xC of its table) prints the usage, message 11, with
    // `mov ecx,0xb; mov edx,5; mov al,0xc; call 0x1017C` (0x10744): a
    // message of kind 0xC ends the program with exit(EDX) (0x10153). Its
    // other usage message, 10 ("use -H for assistance"), exits 5 the
    // same way (0x10CF7).
    (
        "masm2alp",
        &["-H"],
        "Usage: masm [options] source(.asm),[out(.obj)],[list(.lst)],[cref(.crf)][;]",
        5,
    ),
    // Its only usage path: `if (argc < 3)` at 0x1002A prints the usage and
    // ends `mov eax,1; call exit` (0x10060). Its `-h` is an option (make
    // the header file), not help.
    (
        "mkcatdef",
        &[],
        "Usage: C:\\MKCATDEF.EXE catname msg_file [msg_file...] [-h]",
        1,
    ),
    ("mkmsgf", &["/?"], "MKMSGF <inputfile> <outputfile> [/V]", 0),
    (
        "mktmpf",
        &[],
        "mktmpf   [-switch...] [-flag arg...] filename...",
        0,
    ),
    // Its only usage path: `if (argc != 2)` at 0x10015 prints the usage
    // and returns 1 from main (`mov eax,1` at 0x10026); its one argument
    // is always the script file.
    ("msgbind", &[], "usage: MSGBIND scriptFile", 1),
    ("nmake", &["/?"], "NMAKE /help", 0),
    (
        "nmake32",
        &["/?"],
        "[-flags] [targets] [macroname=string] [@responsefile]",
        0,
    ),
    // 16-bit. DosExit takes the error level (word 0xC11C of its data);
    // every call of the help text (000F:007F) follows the message
    // routine with error level 4 (`push 4; push 3EBh; call 3E09h`): no
    // argument at 000F:4433, `/?` at 000F:430A.
    ("pack", &["/?"], "List syntax: [d:][path]source_filename", 4),
    // As PACK: `/?` at 000F:41CA, no argument at 000F:42F3, both
    // `push 4` before the help text.
    (
        "pack2",
        &["/?"],
        "List syntax: [d:][path]source_filename",
        4,
    ),
    (
        "rc",
        &["-?"],
        "rc [<options>]   <.RC input file>  [<.EXE output file>]",
        0,
    ),
    // 16-bit. No argument, and `-?` and `-h` from its option parser
    // (000F:07A9, 000F:07AF), all go to the usage at 000F:03FE, which
    // ends `push 1; call 1ECCh` (000F:053C), its exit.
    (
        "rc16",
        &["-?"],
        "Usage:  rc [<options>]   <.RC input file>  [<.EXE output file>]",
        1,
    ),
    // The usage routine ends `mov eax,1; call exit` (0x12CAD). Its `-h`
    // is an option (make the header), and without an input file it
    // copies the NULL name (strcpy at 0x11D7D) and faults, as on OS/2.
    ("rpcgen", &[], "usage:  C:\\RPCGEN.EXE infile", 1),
    (
        "trcust",
        &[],
        "Usage1:  Trcust filename1 filename2 /M=mapfile /W{0|1|2} /D +",
        0,
    ),
    // `-?`, as any option letter outside b..p (0x10066 to 0x101DC), sets
    // the usage flag, as does no argument while WSTRACE.DMP does not
    // exist; the one call of the usage routine (0x1026D) is followed by
    // `mov eax,1; call exit` (0x10272).
    (
        "wsformat",
        &["-?"],
        "Usage:  WSFORMAT [input_filename | -p[input_pipename]]",
        1,
    ),
];

fn toolkit() -> Option<PathBuf> {
    common::toolkit_having("exehdr.exe")
}

#[test]
fn every_non_pm_tool_prints_its_usage_and_exits_with_its_own_code() {
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
    for &(tool, args, usage, want) in TOOLS {
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
        if !text.contains(usage) || text.contains("os2trace run:") || code != Some(want) {
            failures.push(format!("{tool} {args:?} ({code:?}, want {want}):\n{text}"));
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
