//! IBM's OS/2 toolkit tools doing real jobs under `os2trace run`
//! (issue 12, item 6), each output checked: EXEHDR's figures against
//! `os2trace exehdr --json`; ALP and LINK386 building a program that
//! runs; MAPSYM on LINK386's MAP, its `.SYM` read by `tdf::sym` (and
//! written back byte for byte) and used by TRCUST where no MAP is given;
//! GENCAT's message catalog; PACK and PACK2 packing a file; and, over
//! every tool of `bin/`, what `os2trace apis --missing` still lists.
//!
//! Skipped, with a printed notice, unless OS2TK_DIR names the toolkit
//! (and, for the MAPSYM job, `nasm` is on PATH).

mod common;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::os2trace;

fn skip(why: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{why}: skipped");
}

fn toolkit() -> Option<PathBuf> {
    common::toolkit_having("exehdr.exe")
}

/// Copies toolkit files (`bin/x.exe`, ...) into `root` under the given
/// names.
fn copy(tk: &Path, root: &Path, files: &[(&str, &str)]) {
    for (from, to) in files {
        std::fs::copy(tk.join(from), root.join(to)).unwrap_or_else(|e| panic!("{from}: {e}"));
    }
}

/// `os2trace run --root ROOT PROGRAM ARGS`: (exit code, stdout, stderr).
fn run(root: &Path, program: &str, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["run", "--root", ".", "--env", "DPATH=C:\\", program];
    all.extend_from_slice(args);
    let out = os2trace(root, &all);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The value after `label` on EXEHDR's line that starts with it.
fn field<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.trim_start().strip_prefix(label))
        .unwrap_or_else(|| panic!("no {label:?} in:\n{text}"))
        .trim()
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s, 16).unwrap_or_else(|_| panic!("not hex: {s:?}"))
}

#[test]
fn exehdr_figures_agree_with_os2trace_exehdr() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy(
        &tk,
        root,
        &[
            ("bin/exehdr.exe", "EXEHDR.EXE"),
            ("bin/mapsym.exe", "LXPROG.EXE"),
            ("bin/trcust.exe", "NEPROG.EXE"),
        ],
    );
    // A 32-bit LX program.
    let (code, text, err) = run(root, "EXEHDR.EXE", &["LXPROG.EXE"]);
    assert_eq!(code, 0, "{text}{err}");
    let json: serde_json::Value = serde_json::from_str(&common::stdout(&os2trace(
        root,
        &["exehdr", "--json", "LXPROG.EXE"],
    )))
    .unwrap();
    assert_eq!(field(&text, "Module:"), json["name"].as_str().unwrap());
    assert_eq!(
        field(&text, "Description:"),
        json["description"].as_str().unwrap()
    );
    let cs_eip = field(&text, "Initial CS:EIP:");
    assert_eq!(
        cs_eip,
        format!(
            "object {} offset {:08x}",
            json["start"]["object"],
            json["start"]["offset"].as_u64().unwrap()
        )
    );
    let ss_esp = field(&text, "Initial SS:ESP:");
    assert_eq!(
        ss_esp,
        format!(
            "object {} offset {:08x}",
            json["stack"]["object"],
            json["stack"]["offset"].as_u64().unwrap()
        )
    );
    assert_eq!(
        field(&text, "Automatic data object:"),
        json["auto_data"].to_string()
    );
    let stack = field(&text, "Stack allocation:");
    assert_eq!(
        hex(stack.split_whitespace().next().unwrap()),
        json["stack_size"].as_u64().unwrap()
    );
    // The object table: number, base, size, and 32-bit for each.
    let objects = json["objects"].as_array().unwrap();
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.len() > 30 && l.as_bytes()[..4].iter().all(u8::is_ascii_hexdigit))
        .collect();
    assert_eq!(rows.len(), objects.len(), "{text}");
    for (row, o) in rows.iter().zip(objects) {
        let f: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(hex(f[0]), o["index"].as_u64().unwrap());
        assert_eq!(hex(f[1]), o["base"].as_u64().unwrap());
        assert_eq!(hex(f[2]), o["size"].as_u64().unwrap());
        assert_eq!(row.contains("32-bit"), o["bits"] == 32, "{row}");
    }

    // Imports: EXEHDR /v's module count and the entry points its fixup
    // listing names, against ours.
    // (It ends with 1: U1150, MAPSYM's description holds no version.)
    let (code, verbose, err) = run(root, "EXEHDR.EXE", &["/v", "LXPROG.EXE"]);
    assert_eq!(code, 1, "{verbose}{err}");
    assert!(
        format!("{verbose}{err}").contains("U1150"),
        "{verbose}{err}"
    );
    let modules = field(&verbose, "Imported Modules:");
    let count = hex(modules.split_whitespace().next().unwrap());
    assert_eq!(count as usize, json["imports"].as_array().unwrap().len());
    let theirs: std::collections::BTreeSet<String> = verbose
        .split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .filter(|w| w[0] == "imp")
        .map(|w| w[1].to_string())
        .collect();
    let ours_text = common::stdout(&os2trace(root, &["exehdr", "LXPROG.EXE"]));
    let ours: std::collections::BTreeSet<String> = ours_text
        .lines()
        .skip_while(|l| !l.starts_with("Imported entry points"))
        .skip(1)
        .map_while(|l| l.split_whitespace().next().filter(|w| w.contains('.')))
        .map(str::to_string)
        .collect();
    assert!(theirs.len() > 10, "{verbose}");
    assert_eq!(theirs, ours);

    // A 16-bit NE program: segments, CS:IP, SS:SP, DGROUP.
    let (code, text, err) = run(root, "EXEHDR.EXE", &["NEPROG.EXE"]);
    assert_eq!(code, 0, "{text}{err}");
    let json: serde_json::Value = serde_json::from_str(&common::stdout(&os2trace(
        root,
        &["exehdr", "--json", "NEPROG.EXE"],
    )))
    .unwrap();
    assert_eq!(field(&text, "Module:"), json["name"].as_str().unwrap());
    assert_eq!(
        field(&text, "Initial CS:IP:"),
        format!(
            "seg {:>3} offset {:04x}",
            json["start"]["object"].as_u64().unwrap(),
            json["start"]["offset"].as_u64().unwrap()
        )
    );
    assert_eq!(
        field(&text, "DGROUP:"),
        format!("seg {:>3}", json["auto_data"].as_u64().unwrap())
    );
    let segs = json["segments"]
        .as_array()
        .or_else(|| json["objects"].as_array())
        .unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() >= 5 && (f[1] == "CODE" || f[1] == "DATA"))
        .collect();
    assert_eq!(rows.len(), segs.len(), "{text}");
    for (f, s) in rows.iter().zip(segs) {
        assert_eq!(f[0].parse::<u64>().unwrap(), s["index"].as_u64().unwrap());
        assert_eq!(hex(f[3]), s["size"].as_u64().unwrap(), "file size of {f:?}");
        assert_eq!(
            hex(f[4]),
            s["min_alloc"].as_u64().unwrap(),
            "memory size of {f:?}"
        );
    }
}

/// A 32-bit program in MASM syntax, for ALP.
const HELLO_ALP: &str = "\
        .386
        .model  flat
        extrn   DosWrite:near, DosExit:near
        .stack  4096
        .data
msg     db      \"Hello from ALP\", 13, 10
msglen  equ     $ - msg
written dd      ?
        .code
start:  push    offset written
        push    msglen
        push    offset msg
        push    1
        call    DosWrite
        add     esp, 16
        push    eax
        push    1
        call    DosExit
        end     start
";

#[test]
fn alp_and_link386_build_a_program_that_runs() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy(
        &tk,
        root,
        &[
            ("bin/alp.exe", "ALP.EXE"),
            ("bin/alp.msg", "ALP.MSG"),
            ("bin/link386.exe", "LINK386.EXE"),
            ("lib/os2386.lib", "OS2386.LIB"),
        ],
    );
    std::fs::write(root.join("HELLOA.ASM"), HELLO_ALP).unwrap();
    std::fs::write(root.join("HELLOA.DEF"), "NAME HELLOA WINDOWCOMPAT\r\n").unwrap();
    let (code, text, err) = run(root, "ALP.EXE", &["HELLOA.ASM"]);
    assert_eq!(code, 0, "{text}{err}");
    // An OMF object: THEADR first, naming the source.
    let obj = std::fs::read(root.join("HELLOA.obj")).unwrap();
    assert_eq!(obj[0], 0x80, "THEADR");
    assert!(
        obj.windows(10)
            .any(|w| w.eq_ignore_ascii_case(b"HELLOA.ASM"))
    );
    let (code, text, err) = run(
        root,
        "LINK386.EXE",
        &["HELLOA.obj,HELLOA.EXE,HELLOA.MAP,OS2386.LIB,HELLOA.DEF;"],
    );
    assert_eq!(code, 0, "{text}{err}");
    let (code, text, err) = run(root, "HELLOA.EXE", &[]);
    assert_eq!((code, text.as_str()), (0, "Hello from ALP\r\n"), "{err}");
    // The toolkit's one assembler sample (dd.asm) is MASM 6 source for
    // `ml /Zm`: ALP reads it and reports what it does not accept.
    copy(&tk, root, &[("samples/tcpiptk/r0lib32/dd.asm", "DD.ASM")]);
    let (code, text, err) = run(root, "ALP.EXE", &["DD.ASM"]);
    assert_eq!(code, 4, "{text}{err}");
    assert!(
        text.contains("C:\\DD.ASM(96:25): Error ALP3220: Undefined symbol \"mixed_ret\""),
        "{text}"
    );
}

/// A 32-bit program with public symbols, for LINK386's MAP and MAPSYM.
const S32_ASM: &str = "\
BITS 32
extern DosExit
global main_entry
global helper
global counter
segment DATA32 use32 class=DATA FLAT
counter dd 0
segment STACK32 use32 class=STACK stack FLAT
        resb 8192
segment CODE32 use32 class=CODE FLAT
..start:
main_entry:
        call helper
        push 0
        push 1
        call DosExit
helper:
        inc dword [counter]
        ret
";

#[test]
fn mapsym_writes_the_sym_file_tdf_reads() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("S32.ASM"), S32_ASM).unwrap();
    let nasm = Command::new("nasm")
        .args(["-f", "obj", "-o"])
        .arg(root.join("S32.OBJ"))
        .arg(root.join("S32.ASM"))
        .status();
    match nasm {
        Ok(s) => assert!(s.success(), "nasm failed"),
        Err(_) => return skip("nasm is not installed"),
    }
    copy(
        &tk,
        root,
        &[
            ("bin/link386.exe", "LINK386.EXE"),
            ("bin/mapsym.exe", "MAPSYM.EXE"),
            ("lib/os2386.lib", "OS2386.LIB"),
        ],
    );
    std::fs::write(
        root.join("S32.DEF"),
        "NAME S32 WINDOWCOMPAT\r\nSTACKSIZE 16384\r\n",
    )
    .unwrap();
    let (code, text, err) = run(
        root,
        "LINK386.EXE",
        &["/MAP:FULL", "S32.OBJ,S32.EXE,S32.MAP,OS2386.LIB,S32.DEF;"],
    );
    assert_eq!(code, 0, "{text}{err}");
    let (code, text, err) = run(root, "MAPSYM.EXE", &["S32.MAP"]);
    assert_eq!(code, 0, "{text}{err}");
    assert!(text.contains("Program entry point at 0003:0000"), "{text}");
    let sym_bytes = std::fs::read(root.join("S32.sym")).unwrap();
    let sym = tdf::sym::SymFile::parse(&sym_bytes).unwrap();
    assert_eq!(sym.module, "S32");
    assert_eq!(sym.entry_segment, 3);
    // The MAP's publics, by object, are the SYM's symbols.
    let map = loader::map::parse(&std::fs::read_to_string(root.join("S32.MAP")).unwrap()).unwrap();
    let mut want: BTreeMap<u16, Vec<(u32, String)>> = BTreeMap::new();
    for s in map.symbols.iter().filter(|s| s.object != 0) {
        let v = want.entry(s.object).or_default();
        if !v.iter().any(|x| x.1 == s.name) {
            v.push((s.offset, s.name.clone()));
        }
    }
    let got: BTreeMap<u16, Vec<(u32, String)>> = sym
        .segments
        .iter()
        .map(|s| {
            let mut v = s.symbols.clone();
            v.sort();
            (s.number, v)
        })
        .collect();
    for v in want.values_mut() {
        v.sort();
    }
    assert_eq!(got, want);
    assert_eq!(sym.segments[1].name, "CODE32");
    // tdf writes MAPSYM's layout byte for byte.
    assert_eq!(sym.to_bytes().unwrap(), sym_bytes);

    // TRCUST with no /M=: the module's .SYM gives `.helper`.
    std::fs::write(
        root.join("S32.TSF"),
        "MODNAME = S32.EXE\nMAJOR = 0xC0\n\nTRACE MINOR=0x01, TP=.helper, OPCODE=0xFF, DESC=\"helper\"\n",
    )
    .unwrap();
    std::fs::rename(root.join("S32.sym"), root.join("S32.SYM")).unwrap();
    let out = os2trace(root, &["trcust", "S32.TSF"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("Using symbol file:"), "{text}");
    let tdf = tdf::Tdf::parse(&std::fs::read(root.join("S32.TDF")).unwrap()).unwrap();
    assert_eq!(tdf.records.len(), 1);
    assert_eq!((tdf.records[0].object, tdf.records[0].offset), (3, 0xE));
}

#[test]
fn gencat_compiles_a_message_catalog() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy(&tk, root, &[("bin/gencat.exe", "GENCAT.EXE")]);
    let messages = [
        (1u16, 1u16, "Hello, world"),
        (1, 2, "Second message"),
        (2, 5, "Five"),
    ];
    let mut src = String::from("$ a comment\n");
    let mut set = 0;
    for (s, n, text) in messages {
        if s != set {
            src.push_str(&format!("$set {s}\n"));
            set = s;
        }
        src.push_str(&format!("{n} {text}\n"));
    }
    std::fs::write(root.join("T.SRC"), src).unwrap();
    let (code, text, err) = run(root, "GENCAT.EXE", &["T.CAT", "T.SRC"]);
    assert_eq!(code, 0, "{text}{err}");
    let cat = std::fs::read(root.join("T.CAT")).unwrap();
    let w = |at: usize| u16::from_le_bytes([cat[at], cat[at + 1]]);
    assert_eq!(w(4), 2, "two sets");
    // Each message: an entry (number, length, offset) whose offset holds
    // the text and its NUL.
    for (_, n, text) in messages {
        let found = (0..cat.len().saturating_sub(8)).any(|at| {
            let (num, len, off) = (w(at), usize::from(w(at + 2)), usize::from(w(at + 4)));
            num == n
                && len == text.len()
                && cat
                    .get(off..off + len + 1)
                    .is_some_and(|b| &b[..len] == text.as_bytes() && b[len] == 0)
        });
        assert!(found, "{n} {text:?} not in {cat:02x?}");
    }
}

#[test]
fn pack_and_pack2_pack_a_file() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy(
        &tk,
        root,
        &[("bin/pack.exe", "PACK.EXE"), ("bin/pack2.exe", "PACK2.EXE")],
    );
    let data: String = (1..=300).map(|i| format!("{i}\n")).collect();
    std::fs::write(root.join("T.TXT"), &data).unwrap();
    // PACK2's files and PACK's differ in the signature's third byte.
    for (tool, out, sig) in [("PACK2.EXE", "T2.PAK", 0xFD), ("PACK.EXE", "T1.PAK", 0xFE)] {
        let (code, text, err) = run(root, tool, &["T.TXT", out]);
        assert_eq!(code, 0, "{tool}: {text}{err}");
        assert!(
            text.contains("T.TXT"),
            "{tool} names what it packed: {text}"
        );
        // Its messages are bound into it by MSGBIND (16-bit MKMSGSEG).
        assert!(text.contains("1 file(s) packed."), "{tool}: {text}");
        let pak = std::fs::read(root.join(out)).unwrap();
        assert_eq!(
            &pak[..4],
            [0xA5, 0x96, sig, 0xFF],
            "{tool}: the packed-file signature"
        );
        assert!(
            pak.len() < data.len(),
            "{tool}: {} bytes from {}",
            pak.len(),
            data.len()
        );
        // The header names the file and its size.
        let name = pak.windows(5).position(|w| w == b"T.TXT");
        assert!(name.is_some(), "{tool}: {pak:02x?}");
        assert!(
            pak.windows(4)
                .any(|w| w == (data.len() as u32).to_le_bytes()),
            "{tool}: the original size"
        );
    }
}

#[test]
fn pack2_without_arguments_prints_its_bound_usage() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    copy(&tk, dir.path(), &[("bin/pack2.exe", "PACK2.EXE")]);
    let (code, text, err) = run(dir.path(), "PACK2.EXE", &[]);
    assert_eq!(code, 4, "{text}{err}");
    let all = format!("{text}{err}");
    assert!(
        all.contains("SYS1003: "),
        "an OSO001 message bound into it: {all}"
    );
    assert!(all.contains("[/D:MM-DD-YYYY]"), "{all}");
}

/// The toolkit's Presentation Manager tools: their PM imports are out
/// of scope.
const PM_TOOLS: &[&str] = &["dlgedit", "fontedit", "iconedit", "showdesc"];

#[test]
fn what_each_toolkit_tool_still_misses() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut tools: Vec<PathBuf> = std::fs::read_dir(tk.join("bin"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("exe")))
        .collect();
    tools.sort();
    let mut report = String::new();
    let mut complete = Vec::new();
    for t in &tools {
        let name = t
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .to_ascii_lowercase();
        let out = os2trace(dir.path(), &["apis", "--missing", &t.to_string_lossy()]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let missing: Vec<&str> = text
            .lines()
            .filter(|l| !(PM_TOOLS.contains(&name.as_str()) && l.starts_with("PM")))
            .collect();
        if missing.is_empty() && out.status.success() {
            complete.push(name);
        } else {
            report.push_str(&format!("{name}: {} missing\n", missing.len()));
            for l in missing {
                report.push_str(&format!("    {l}\n"));
            }
        }
    }
    println!("toolkit tools with nothing missing: {}", complete.join(" "));
    println!("still missing:\n{report}");
    // These have all they import (the PM tools all but PM calls).
    for t in [
        "alp", "exehdr", "fwdstamp", "gencat", "implib", "ipfc", "mapsym", "markexe", "masm2alp",
        "mkcatdef", "mkmsgf", "mktmpf", "msgbind", "nmake", "nmake32", "pack", "pack2", "rc",
        "rc16", "rcpp", "rpcgen", "showdesc", "trcust",
    ] {
        assert!(complete.iter().any(|c| c == t), "{t}:\n{report}");
    }
}

#[test]
fn rc16_compiles_a_resource_script_and_binds_it_into_an_exe() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy(
        &tk,
        root,
        &[
            ("bin/rc16.exe", "RC16.EXE"),
            ("bin/rcpp.exe", "RCPP.EXE"),
            ("bin/rcpp.err", "RCPP.ERR"),
            ("bin/alp.exe", "ALP.EXE"),
            ("bin/alp.msg", "ALP.MSG"),
            ("bin/link386.exe", "LINK386.EXE"),
            ("lib/os2386.lib", "OS2386.LIB"),
        ],
    );
    std::fs::write(
        root.join("T.RC"),
        "#define IDS_HELLO 1\nSTRINGTABLE\nBEGIN\n  IDS_HELLO, \"Hello from RC\"\n  2, \"Second\"\nEND\n",
    )
    .unwrap();
    // RC16 runs RCPP (the preprocessor) as a child process.
    let (code, text, err) = run(root, "RC16.EXE", &["-r", "T.RC"]);
    assert_eq!(code, 0, "{text}{err}");
    assert!(text.contains("RCPP -E -D RC_INVOKED"), "{text}");
    let res = std::fs::read(root.join("T.RES")).unwrap();
    // A string table resource (type 5) of bundle 1, holding both strings.
    assert_eq!(&res[..6], &[0xFF, 5, 0, 0xFF, 1, 0], "{res:02x?}");
    for s in ["Hello from RC", "Second"] {
        assert!(
            res.windows(s.len()).any(|w| w == s.as_bytes()),
            "{s}: {res:02x?}"
        );
    }
    // Bound into a program ALP and LINK386 build; the program still runs.
    std::fs::write(root.join("HELLOA.ASM"), HELLO_ALP).unwrap();
    std::fs::write(root.join("HELLOA.DEF"), "NAME HELLOA WINDOWCOMPAT\r\n").unwrap();
    assert_eq!(run(root, "ALP.EXE", &["HELLOA.ASM"]).0, 0);
    let link = run(
        root,
        "LINK386.EXE",
        &["HELLOA.obj,HELLOA.EXE,NUL,OS2386.LIB,HELLOA.DEF;"],
    );
    assert_eq!(link.0, 0, "{}{}", link.1, link.2);
    let (code, text, err) = run(root, "RC16.EXE", &["T.RES", "HELLOA.EXE"]);
    assert_eq!(code, 0, "{text}{err}");
    let m = loader::parse(&std::fs::read(root.join("HELLOA.EXE")).unwrap()).unwrap();
    assert_eq!(m.resources.len(), 1, "{:?}", m.resources);
    let r = &m.resources[0];
    assert_eq!((r.type_id, r.name_id), (5, 1));
    let object = &m.objects[usize::from(r.object) - 1];
    let bytes: Vec<u8> = object.pages.iter().flat_map(|p| p.data.clone()).collect();
    let at = r.offset as usize;
    let data = &bytes[at..at + r.size as usize];
    assert!(
        data.windows(13).any(|w| w == b"Hello from RC"),
        "{data:02x?}"
    );
    let (code, text, _) = run(root, "HELLOA.EXE", &[]);
    assert_eq!((code, text.as_str()), (0, "Hello from ALP\r\n"));
}
