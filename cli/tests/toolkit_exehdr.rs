//! IBM's EXEHDR on LX modules whose non-resident name table is empty
//! (issue 12): the toolkit's own ALP.EXE (ten of its LX tools have no
//! description) and a program LINK386 links from a `.DEF` without
//! DESCRIPTION. EXEHDR prints its whole dump, and its figures agree with
//! `os2trace exehdr --json`. Then, in its own clean-up, it faults, and it
//! would on OS/2 too (addresses as EXEHDR 4.01.001 is loaded, at its
//! fixed base):
//!
//! - its allocator (0x20038) returns the static "" at 0x600E1 for a size
//!   of 0 instead of calling malloc; the LX dump asks it for the
//!   non-resident name table (0x237EA), whose size is 0, and at its end
//!   frees what it got whenever it is not NULL (0x24549 to 0x24558);
//! - the runtime's free (0x2902C) takes the dword before the pointer as
//!   the address of the heap's control block (unless it is -1) and reads
//!   the block's signature (0xBEEFAAAA) before any check of that address
//!   (0x2907D): the dword before 0x600E1 is "EXE\0" of the literal
//!   ".EXE", so it reads 0x00455845;
//! - EXEHDR has nothing there: its objects end at 0x6BC20, and its only
//!   allocations are the runtime's 64 KB heap and an 8 KB block, the same
//!   calls on OS/2, which allocates private memory objects upward from
//!   the low end of the process's address space, each on a 64 KB
//!   boundary (IBM redbook GG24-3774, "Shared Memory Objects"; the OS/2
//!   Warp Server for SMP addendum on OBJ_ANY), so right above 0x6BC20,
//!   nowhere near 4 MB. The read is an access violation there as here. The handler free registers (0x2B430) passes it on;
//!   the runtime's handler (0x2D368) maps it to SIGSEGV, which EXEHDR
//!   does not catch, reports the exception (from DDE4.MSG, VisualAge
//!   C++'s message file, not the system's) and the process ends.
//!
//! The same program linked with a DESCRIPTION is dumped and EXEHDR ends
//! with 0.
//!
//! Skipped, with a printed notice, unless OS2TK_DIR names the toolkit.

mod common;

use std::path::{Path, PathBuf};

use common::os2trace;

fn toolkit() -> Option<PathBuf> {
    common::toolkit_having("link386.exe")
}

const HELLO_ASM: &str = "\
        .386
        .model  flat
        extrn   DosWrite:near, DosExit:near
        .stack  4096
        .data
msg     db      \"Hello\", 13, 10
written dd      ?
        .code
start:  push    offset written
        push    7
        push    offset msg
        push    1
        call    DosWrite
        add     esp, 16
        push    eax
        push    1
        call    DosExit
        end     start
";

/// Runs `os2trace ARGS` in `root`: (exit code, stdout, stderr).
fn run(root: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = os2trace(root, args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// EXEHDR's figures in `hdr` are those of `os2trace exehdr --json`.
fn figures_agree(hdr: &str, json: &serde_json::Value) {
    let field = |label: &str| -> String {
        hdr.lines()
            .find_map(|l| l.strip_prefix(label))
            .unwrap_or_else(|| panic!("{label} in:\n{hdr}"))
            .trim()
            .to_string()
    };
    assert_eq!(field("Module:"), json["name"].as_str().unwrap());
    assert_eq!(field("Description:"), "");
    assert!(
        field("Module type:").eq_ignore_ascii_case(json["module_type"].as_str().unwrap()),
        "{hdr}"
    );
    let objects = json["objects"].as_array().unwrap();
    let pages = |o: &serde_json::Value| o["pages"].as_array().unwrap().len() as u64;
    let all: u64 = objects.iter().map(pages).sum();
    assert_eq!(
        field("Number of memory pages:"),
        format!("{all:08x} ({all})")
    );
    let at = |k: &str| {
        format!(
            "object {} offset {:08x}",
            json[k]["object"],
            json[k]["offset"].as_u64().unwrap()
        )
    };
    assert_eq!(field("Initial CS:EIP:"), at("start"));
    assert_eq!(field("Initial SS:ESP:"), at("stack"));
    assert_eq!(
        field("Automatic data object:"),
        json["auto_data"].as_u64().unwrap_or(0).to_string()
    );
    let stack = json["stack_size"].as_u64().unwrap();
    assert_eq!(
        field("Stack allocation:"),
        format!("{stack:08x} ({stack}) bytes")
    );
    let rows: Vec<&str> = hdr
        .lines()
        .skip_while(|l| !l.contains("address   size"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect();
    assert_eq!(rows.len(), objects.len(), "{hdr}");
    for (row, o) in rows.iter().zip(objects) {
        let cols: Vec<u64> = row
            .split_whitespace()
            .take(5)
            .map(|c| u64::from_str_radix(c, 16).unwrap())
            .collect();
        let want = [
            o["index"].as_u64().unwrap(),
            o["base"].as_u64().unwrap(),
            o["size"].as_u64().unwrap(),
        ];
        assert_eq!(cols[..3], want, "{row}");
        assert_eq!(cols[4], pages(o), "{row}");
        let flags = o["flags"].as_u64().unwrap();
        for (bit, word) in [
            (1, "READABLE"),
            (2, "WRITEABLE"),
            (4, "EXECUTABLE"),
            (0x20, "SHARED"),
            (0x2000, "32-bit"),
        ] {
            assert_eq!(row.contains(word), flags & bit != 0, "{word} in {row}");
        }
    }
}

/// `os2trace exehdr --json MODULE` in `root`.
fn json(root: &Path, module: &str) -> serde_json::Value {
    let out = os2trace(root, &["exehdr", "--json", module]);
    serde_json::from_str(&common::stdout(&out)).unwrap()
}

#[test]
fn exehdr_dumps_modules_without_a_description_then_faults_in_its_own_free() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (from, to) in [
        ("bin/alp.exe", "ALP.EXE"),
        ("bin/alp.msg", "ALP.MSG"),
        ("bin/link386.exe", "LINK386.EXE"),
        ("bin/exehdr.exe", "EXEHDR.EXE"),
        ("lib/os2386.lib", "OS2386.LIB"),
    ] {
        std::fs::copy(tk.join(from), root.join(to)).unwrap();
    }
    std::fs::write(root.join("HELLO.ASM"), HELLO_ASM).unwrap();
    std::fs::write(root.join("HELLO.DEF"), "NAME HELLO WINDOWCOMPAT\r\n").unwrap();
    std::fs::write(
        root.join("DESC.DEF"),
        "NAME DESC WINDOWCOMPAT\r\nDESCRIPTION 'described'\r\n",
    )
    .unwrap();
    let tool = |args: &[&str]| {
        let mut all = vec!["run", "--root", ".", "--env", "DPATH=C:\\"];
        all.extend_from_slice(args);
        let (code, out, err) = run(root, &all);
        assert_eq!(code, Some(0), "{args:?}:\n{out}{err}");
    };
    tool(&["ALP.EXE", "HELLO.ASM"]);
    tool(&[
        "LINK386.EXE",
        "/NOLOGO",
        "HELLO.OBJ,HELLO.EXE,NUL,OS2386.LIB,HELLO.DEF;",
    ]);
    tool(&[
        "LINK386.EXE",
        "/NOLOGO",
        "HELLO.OBJ,DESC.EXE,NUL,OS2386.LIB,DESC.DEF;",
    ]);

    for module in ["ALP.EXE", "HELLO.EXE"] {
        let json = json(root, module);
        assert!(json["description"].is_null(), "{module}: {json}");
        let (code, hdr, err) = run(root, &["run", "--root", ".", "EXEHDR.EXE", module]);
        figures_agree(&hdr, &json);
        // EXEHDR's free of its static "" reads 0x00455845 ("EXE\0").
        assert!(
            err.contains("guest page fault (vector 14) at 005B:0002907D")
                && err.contains("address 0x00455845"),
            "{module}: {err}"
        );
        assert_eq!(code, Some(1), "{module}: {err}");
    }

    // With a description, EXEHDR prints it and ends by itself with 0.
    let (code, hdr, err) = run(root, &["run", "--root", ".", "EXEHDR.EXE", "DESC.EXE"]);
    assert_eq!(code, Some(0), "{hdr}{err}");
    assert!(
        hdr.lines()
            .any(|l| l.starts_with("Description:") && l.trim_end().ends_with("described")),
        "{hdr}"
    );
    let json = json(root, "DESC.EXE");
    assert_eq!(json["description"], "described");
}
