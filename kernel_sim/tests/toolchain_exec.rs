//! IBM's tools that start other programs (issue 12, items 4 and 6):
//! NMAKE runs a makefile whose recipes go through the built-in CMD.EXE
//! to ECHO, LINK386, IMPLIB, TYPE and IF; a failing recipe stops it with
//! its code; MSGBIND binds a message file into a program (it deletes
//! the program and has CMD.EXE copy its new one in place). Skipped
//! unless OS2TK_DIR names the toolkit and `nasm` is on PATH.

mod common;

use std::path::{Path, PathBuf};

use common::toolkit::{assemble_m32, assert_in_order, copy_tools, file_ci, nasm};
use kernel_sim::Outcome;

fn toolkit() -> Option<PathBuf> {
    common::toolkit::toolkit("nmake.exe")
}

/// Run `program` in `root` with `args`: (outcome, console).
fn run(root: &Path, program: &str, args: &[&str]) -> (Outcome, String) {
    let (o, text, _) = common::toolkit::run_tool(root, program, args, 500_000_000);
    (o, text)
}

const MAKEFILE: &str = "\
all: TEST.EXE MYDLL.LIB

TEST.EXE: TEST.OBJ TEST.DEF
\techo linking $@
\tlink386 /NOLOGO TEST.OBJ,TEST.EXE,TEST.MAP,OS2286.LIB,TEST.DEF;

MYDLL.LIB: MYDLL.DEF
\timplib /NOLOGO MYDLL.LIB MYDLL.DEF
\ttype MYDLL.DEF > COPY.TXT
\tif exist MYDLL.LIB echo library made
";

#[test]
fn nmake_runs_recipes_through_cmd_exe() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let src = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/samples/src/test-asm16.asm"
    ));
    if !nasm(src, &root.join("TEST.OBJ")) {
        return;
    }
    copy_tools(
        &tk,
        root,
        &[
            ("bin/nmake.exe", "NMAKE.EXE"),
            ("bin/link386.exe", "LINK386.EXE"),
            ("bin/implib.exe", "IMPLIB.EXE"),
            ("lib/os2286.lib", "OS2286.LIB"),
        ],
    );
    std::fs::write(
        root.join("TEST.DEF"),
        "NAME TEST WINDOWCOMPAT\nPROTMODE\nSTACKSIZE 4096\n",
    )
    .unwrap();
    let def = "LIBRARY MYDLL\nEXPORTS\n  FOO @1\n  BAR @2\n";
    std::fs::write(root.join("MYDLL.DEF"), def).unwrap();
    std::fs::write(root.join("MAKEFILE"), MAKEFILE).unwrap();

    let (o, text) = run(root, "NMAKE.EXE", &["/NOLOGO"]);
    assert_eq!(o, Outcome::Exited(0), "{text}");
    // NMAKE echoes each recipe line, then CMD.EXE or the tool runs it.
    let order = [
        "\techo linking TEST.EXE\r\nlinking TEST.EXE\r\n",
        "\tlink386 /NOLOGO TEST.OBJ",
        "\timplib /NOLOGO MYDLL.LIB MYDLL.DEF\r\n",
        "\tif exist MYDLL.LIB echo library made\r\nlibrary made\r\n",
    ];
    assert_in_order(&text, &order);
    // What the recipes made: an EXE that runs, an import library with
    // both names, TYPE's copy of the .def.
    let (o, out) = run(root, "TEST.EXE", &[]);
    assert_eq!((o, out.as_str()), (Outcome::Exited(0), "Hello World\r\n"));
    let lib = std::fs::read(root.join("MYDLL.LIB")).unwrap();
    assert_eq!(lib[0], 0xF0, "an OMF library");
    let has = |n: &[u8]| lib.windows(n.len()).any(|w| w == n);
    assert!(has(b"FOO") && has(b"BAR") && has(b"MYDLL"));
    assert_eq!(std::fs::read_to_string(root.join("COPY.TXT")).unwrap(), def);

    // Everything is up to date now: nothing runs.
    let (o, text) = run(root, "NMAKE.EXE", &["/NOLOGO"]);
    assert_eq!(o, Outcome::Exited(0), "{text}");
    assert!(!text.contains("link386"), "{text}");

    // A recipe that fails stops NMAKE with U1077 and code 2.
    std::fs::write(
        root.join("BAD.MAK"),
        "bad:\n\tlink386 /NOLOGO NOPE.OBJ,NOPE.EXE,NUL,OS2286.LIB,TEST.DEF;\n\techo not reached\n",
    )
    .unwrap();
    let (o, text) = run(root, "NMAKE.EXE", &["/NOLOGO", "/F", "BAD.MAK"]);
    assert_eq!(o, Outcome::Exited(2), "{text}");
    assert!(text.contains("L1093") && text.contains("U1077"), "{text}");
    assert!(!text.contains("\r\nnot reached"), "{text}");
}

#[test]
fn msgbind_binds_a_message_file_into_a_program() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    if !assemble_m32(root) {
        return;
    }
    copy_tools(
        &tk,
        root,
        &[
            ("bin/link386.exe", "LINK386.EXE"),
            ("bin/mkmsgf.exe", "MKMSGF.EXE"),
            ("bin/msgbind.exe", "MSGBIND.EXE"),
            ("lib/os2386.lib", "OS2386.LIB"),
        ],
    );
    std::fs::write(
        root.join("T.TXT"),
        "TST\r\nTST0001E: Bound error %1\r\nTST0002I: Hello from %1\r\n",
    )
    .unwrap();
    std::fs::write(
        root.join("M32.DEF"),
        "NAME M32 WINDOWCOMPAT\r\nSTACKSIZE 16384\r\n",
    )
    .unwrap();
    let (o, text) = run(root, "MKMSGF.EXE", &["T.TXT", "T.MSG"]);
    assert_eq!(o, Outcome::Exited(0), "{text}");
    let (o, text) = run(
        root,
        "LINK386.EXE",
        &["M32.OBJ,M32.EXE,M32.MAP,OS2386.LIB,M32.DEF;"],
    );
    assert_eq!(o, Outcome::Exited(0), "{text}");
    let linked = std::fs::read(root.join("M32.EXE")).unwrap();

    std::fs::write(
        root.join("M32.SCR"),
        ">M32.EXE\r\n<T.MSG\r\nTST0001\r\nTST0002\r\n",
    )
    .unwrap();
    let (o, text) = run(root, "MSGBIND.EXE", &["M32.SCR"]);
    assert_eq!(o, Outcome::Exited(0), "{text}");
    assert!(text.contains("Updating M32.EXE"), "{text}");
    let bound = std::fs::read(root.join("M32.EXE")).unwrap();
    assert_ne!(bound, linked, "MSGBIND wrote a new M32.EXE");
    // Its temporary file is gone.
    let left: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".C2T") || n.ends_with(".c2t"))
        .collect();
    assert!(left.is_empty(), "{left:?}");

    // Without T.MSG the program still prints its message: bound.
    std::fs::remove_file(root.join("T.MSG")).unwrap();
    let (o, text) = run(root, "M32.EXE", &[]);
    assert_eq!(
        (o, text.as_str()),
        (Outcome::Exited(0), "Hello from os2trace\r\n")
    );
}

const HELLO_ASM: &str = "\
        .386
        .MODEL FLAT, SYSCALL
        EXTRN DosWrite:PROC
        EXTRN DosExit:PROC
        .STACK 4096
        .DATA
msg     DB 'Hello from ALP', 13, 10
written DD 0
        .CODE
start:
        push OFFSET written
        push 16
        push OFFSET msg
        push 1
        call DosWrite
        add esp, 16
        push 0
        push 1
        call DosExit
        END start
";

const HELLO_MAK: &str = "\
all: HELLO.SYM run

HELLO.OBJ: HELLO.ASM
\talp HELLO.ASM

HELLO.EXE: HELLO.OBJ HELLO.DEF
\tlink386 /NOLOGO /MAP HELLO.OBJ,HELLO.EXE,HELLO.MAP,OS2386.LIB,HELLO.DEF;

HELLO.SYM: HELLO.EXE
\tmapsym HELLO.MAP

run: HELLO.EXE
\tHELLO
";

/// The toolkit's own chain under NMAKE: ALP assembles, LINK386 links
/// against OS2386.LIB, MAPSYM makes the .SYM, and the program runs as a
/// recipe (a child of CMD.EXE, a child of NMAKE). Needs no nasm.
#[test]
fn nmake_builds_with_alp_link386_and_mapsym_and_runs_the_program() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_tools(
        &tk,
        root,
        &[
            ("bin/nmake.exe", "NMAKE.EXE"),
            ("bin/alp.exe", "ALP.EXE"),
            ("bin/alp.msg", "ALP.MSG"),
            ("bin/link386.exe", "LINK386.EXE"),
            ("bin/mapsym.exe", "MAPSYM.EXE"),
            ("lib/os2386.lib", "OS2386.LIB"),
        ],
    );
    std::fs::write(root.join("HELLO.ASM"), HELLO_ASM).unwrap();
    std::fs::write(root.join("HELLO.DEF"), "NAME HELLO WINDOWCOMPAT\r\n").unwrap();
    std::fs::write(root.join("MAKEFILE"), HELLO_MAK).unwrap();
    let (o, text) = run(root, "NMAKE.EXE", &["/NOLOGO"]);
    assert_eq!(o, Outcome::Exited(0), "{text}");
    let order = [
        "\talp HELLO.ASM\r\n",
        "\tlink386 /NOLOGO /MAP",
        "\tmapsym HELLO.MAP\r\n",
        "\tHELLO\r\nHello from ALP\r\n",
    ];
    assert_in_order(&text, &order);
    // MAPSYM's .SYM names the module.
    let sym = std::fs::read(file_ci(root, "HELLO.SYM").expect("HELLO.SYM")).unwrap();
    assert!(sym.windows(5).any(|w| w == b"HELLO"), "{sym:02X?}");
    // The program runs on its own too.
    let (o, out) = run(root, "HELLO.EXE", &[]);
    assert_eq!(
        (o, out.as_str()),
        (Outcome::Exited(0), "Hello from ALP\r\n")
    );
}
