//! IBM's rc.exe and nmake32.exe run on the C runtime DLLs implemented
//! here (LIBCM, LIBCS): their help paths, a real resource compile and
//! bind, a makefile with recipes through CMD.EXE. Needs OS2TK_DIR (says
//! it was skipped otherwise).

mod common;

use common::toolkit::{
    assemble_m32, copy_tools, file_ci, run_config, sandbox, tool_config, toolkit,
};
use kernel_sim::{Outcome, Process};
use std::path::Path;

/// Runs `program` in `root` with `args`, the API log on: (outcome,
/// console, the process).
fn run_tool(root: &Path, program: &str, args: &[&str], max: u64) -> (Outcome, String, Process) {
    let mut cfg = tool_config(root, program, args, max);
    cfg.api_log = true;
    run_config(cfg)
}

/// rc.exe and its messages.
const RC_TOOLS: &[(&str, &str)] = &[
    ("bin/rc.exe", "RC.EXE"),
    ("msg/messages.msg", "MESSAGES.MSG"),
    ("msg/rc32.msg", "RC32.MSG"),
];

/// nmake32.exe and its message catalog.
const NMAKE_TOOLS: &[(&str, &str)] = &[
    ("bin/nmake32.exe", "NMAKE32.EXE"),
    ("msg/toolkit.cat", "TOOLKIT.CAT"),
];

const BUDGET: u64 = 400_000_000;

#[test]
fn rc_prints_its_usage() {
    let Some(tk) = toolkit("rc.exe") else {
        return;
    };
    let dir = sandbox(&tk, RC_TOOLS);
    let (o, out, p) = run_tool(dir.path(), "C:\\RC.EXE", &["-?"], BUDGET);
    eprintln!("{out}");
    assert!(p.api_log().iter().any(|e| e.module == "LIBCM"));
    assert_eq!(o, Outcome::Exited(0), "{out}");
    assert!(out.contains("Resource Compiler"), "{out}");
}

#[test]
fn nmake_prints_its_usage() {
    let Some(tk) = toolkit("nmake32.exe") else {
        return;
    };
    let dir = sandbox(&tk, NMAKE_TOOLS);
    let (o, out, p) = run_tool(dir.path(), "C:\\NMAKE32.EXE", &["/?"], BUDGET);
    eprintln!("{out}");
    assert!(p.api_log().iter().any(|e| e.module == "LIBCS"));
    assert_eq!(o, Outcome::Exited(0), "{out}");
    assert!(out.contains("Syntax: NMAKE"), "{out}");
    assert!(out.contains("-nologo"), "{out}");
}

/// nmake32's banner takes its text from TOOLKIT.CAT, whose version line
/// numbers its argument (`Version 5.00.003 %1$s`): the line shows the
/// build date (`__DATE__`, "Mmm dd yyyy", a string in the program).
#[test]
fn nmake_banner_shows_the_catalog_version_and_date() {
    let Some(tk) = toolkit("nmake32.exe") else {
        return;
    };
    let dir = sandbox(&tk, NMAKE_TOOLS);
    let (o, out, _) = run_tool(dir.path(), "C:\\NMAKE32.EXE", &["/?"], BUDGET);
    assert_eq!(o, Outcome::Exited(0), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("Version "))
        .unwrap_or_else(|| panic!("no version line in {out}"));
    let date = line
        .strip_prefix("Version 5.00.003 ")
        .unwrap_or_else(|| panic!("not the catalog's version: {line:?}"));
    let months = "JanFebMarAprMayJunJulAugSepOctNovDec";
    let b = date.as_bytes();
    assert!(
        b.len() == 11
            && months.contains(&date[..3])
            && b[3] == b' '
            && (b[4] == b' ' || b[4].is_ascii_digit())
            && b[5].is_ascii_digit()
            && b[6] == b' '
            && b[7..].iter().all(u8::is_ascii_digit),
        "{line:?}"
    );
    let exe = std::fs::read(tk.join("bin/nmake32.exe")).unwrap();
    let needle = [date.as_bytes(), b"\0"].concat();
    assert!(
        exe.windows(needle.len()).any(|w| w == needle),
        "{date:?} is the program's own build date"
    );
}

/// A string table and a user resource, compiled by rc.exe.
const RC_SOURCE: &str = "\
STRINGTABLE
BEGIN
  1 \"Hello from os2trace\"
  2 \"Second string\"
END
RESOURCE 300 7 T.BIN
";

/// rc.exe compiles a script with a string table and a user resource to
/// a .res with both, then binds the .res into a program LINK386 links
/// (needs nasm for the program); the program still runs.
#[test]
fn rc_compiles_a_resource_script_and_binds_it() {
    let Some(tk) = toolkit("rc.exe") else {
        return;
    };
    let dir = sandbox(&tk, RC_TOOLS);
    let root = dir.path();
    std::fs::write(root.join("T.RC"), RC_SOURCE).unwrap();
    std::fs::write(root.join("T.BIN"), b"user data\x00\x01\x02").unwrap();
    let (o, out, p) = run_tool(root, "C:\\RC.EXE", &["-r", "T.RC"], BUDGET);
    assert_eq!(o, Outcome::Exited(0), "{out}");
    assert!(p.api_log().iter().any(|e| e.name == "fwrite"));
    let res = std::fs::read(file_ci(root, "T.RES").expect("T.RES")).unwrap();
    // The user resource first: type 300, name 7, then its 12 bytes.
    assert_eq!(&res[..6], &[0xFF, 0x2C, 0x01, 0xFF, 7, 0], "{res:02x?}");
    assert_eq!(&res[8..12], &12u32.to_le_bytes(), "{res:02x?}");
    assert_eq!(&res[12..24], b"user data\x00\x01\x02");
    // Then the string table (type 5) of bundle 1 with both strings.
    let st = res
        .windows(6)
        .position(|w| w == [0xFF, 5, 0, 0xFF, 1, 0])
        .expect("a string table resource");
    let find = |needle: &[u8]| res[st..].windows(needle.len()).any(|w| w == needle);
    assert!(find(b"Hello from os2trace"), "{res:02x?}");
    assert!(find(b"Second string"), "{res:02x?}");

    // Bound into a program.
    if !assemble_m32(root) {
        return;
    }
    copy_tools(
        &tk,
        root,
        &[
            ("bin/link386.exe", "LINK386.EXE"),
            ("lib/os2386.lib", "OS2386.LIB"),
        ],
    );
    std::fs::write(root.join("M32.DEF"), "NAME M32 WINDOWCOMPAT\r\n").unwrap();
    let (o, out, _) = run_tool(
        root,
        "C:\\LINK386.EXE",
        &["M32.OBJ,M32.EXE,NUL,OS2386.LIB,M32.DEF;"],
        BUDGET,
    );
    assert_eq!(o, Outcome::Exited(0), "{out}");
    let (o, out, _) = run_tool(root, "C:\\RC.EXE", &["T.RES", "M32.EXE"], BUDGET);
    assert_eq!(o, Outcome::Exited(0), "{out}");
    let m = loader::parse(&std::fs::read(root.join("M32.EXE")).unwrap()).unwrap();
    let mut kinds: Vec<(u16, u16)> = m.resources.iter().map(|r| (r.type_id, r.name_id)).collect();
    kinds.sort();
    assert_eq!(kinds, vec![(5, 1), (300, 7)], "{:?}", m.resources);
    let r = m.resources.iter().find(|r| r.type_id == 300).unwrap();
    let object = &m.objects[usize::from(r.object) - 1];
    let bytes: Vec<u8> = object.pages.iter().flat_map(|p| p.data.clone()).collect();
    let at = r.offset as usize;
    assert_eq!(&bytes[at..at + r.size as usize], b"user data\x00\x01\x02");
    // The program still starts (it prints T.MSG's message, which is not
    // there: DosGetMessage's code is its exit code).
    let (o, _, _) = run_tool(root, "C:\\M32.EXE", &[], BUDGET);
    assert!(matches!(o, Outcome::Exited(_)), "{o:?}");
}

/// nmake32.exe runs a makefile: a target out of date runs its recipe
/// through CMD.EXE (COPY and ECHO), the next run finds it up to date.
#[test]
fn nmake_runs_a_makefile_through_cmd() {
    let Some(tk) = toolkit("nmake32.exe") else {
        return;
    };
    let dir = sandbox(&tk, NMAKE_TOOLS);
    let root = dir.path();
    std::fs::write(root.join("IN.TXT"), "payload\r\n").unwrap();
    std::fs::write(
        root.join("MAKEFILE"),
        "all: OUT.TXT\r\n\techo built $**\r\n\r\nOUT.TXT: IN.TXT\r\n\tcopy IN.TXT OUT.TXT\r\n",
    )
    .unwrap();
    let (o, out, p) = run_tool(root, "C:\\NMAKE32.EXE", &["/nologo"], BUDGET);
    eprintln!("{out}");
    assert_eq!(o, Outcome::Exited(0), "{out}");
    assert_eq!(
        std::fs::read(file_ci(root, "OUT.TXT").expect("OUT.TXT")).unwrap(),
        b"payload\r\n"
    );
    assert!(out.contains("built OUT.TXT\r\n"), "{out}");
    let execs: Vec<_> = p
        .api_log()
        .iter()
        .filter(|e| e.name == "DosExecPgm")
        .collect();
    assert!(!execs.is_empty(), "the recipes run through CMD.EXE");
    assert!(
        execs.iter().all(|e| e.args.contains("CMD.EXE")),
        "{execs:?}"
    );
    // Up to date now (a new run sees both files with its start time, and
    // -= takes equal stamps as up to date): only the pseudo target's
    // recipe runs.
    std::fs::write(file_ci(root, "OUT.TXT").expect("OUT.TXT"), "kept\r\n").unwrap();
    let (o, out, _) = run_tool(root, "C:\\NMAKE32.EXE", &["/nologo", "-="], BUDGET);
    assert_eq!(o, Outcome::Exited(0), "{out}");
    assert_eq!(
        std::fs::read(file_ci(root, "OUT.TXT").expect("OUT.TXT")).unwrap(),
        b"kept\r\n"
    );
    assert!(out.contains("built OUT.TXT"), "{out}");
    assert!(!out.contains("copy"), "{out}");
}

/// mktmpf.exe (VisualAge C++'s runtime linked in) prints its usage: its
/// runtime gets its messages through OS2386.LIB's DosGetMessage stub,
/// whose extra argument MSG.6 must remove (it used to return with ESP 4
/// bytes off and the runtime jumped to 0).
#[test]
fn mktmpf_prints_its_usage() {
    let Some(tk) = toolkit("mktmpf.exe") else {
        return;
    };
    let dir = sandbox(
        &tk,
        &[
            ("bin/mktmpf.exe", "MKTMPF.EXE"),
            ("msg/mktmpf.msg", "MKTMPF.MSG"),
            ("msg/messages.msg", "MESSAGES.MSG"),
        ],
    );
    let (o, out, _) = run_tool(dir.path(), "C:\\MKTMPF.EXE", &[], BUDGET);
    assert_eq!(o, Outcome::Exited(0), "{out}");
    assert!(out.contains("mktmpf   [-switch...]"), "{out}");
    assert!(out.contains("checks the input for syntax errors"), "{out}");
}
