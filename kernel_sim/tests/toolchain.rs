//! IBM's toolchain end to end (issue 12, item 6): NASM's sample
//! `test-asm16.asm` assembled to OMF with `nasm -f obj`, linked by IBM's
//! LINK386 (running here) against OS2286.LIB with a `.def` file; the EXE
//! it writes runs here and is traced. Skipped unless OS2TK_DIR names the
//! toolkit and `nasm` is on PATH.

mod common;

use std::path::{Path, PathBuf};

use common::toolkit::{assemble_m32, copy_tools, nasm};
use kernel_sim::{ConsoleBuffer, Outcome, Process, ProcessConfig};

fn toolkit() -> Option<PathBuf> {
    common::toolkit::toolkit("link386.exe")
}

/// Run `program` in `root` with `args`: (outcome, console, process).
fn run(root: &Path, program: &str, args: &[&str]) -> (Outcome, String, Process) {
    common::toolkit::run_tool(root, program, args, 200_000_000)
}
use stda::{Stda, StdaFormat};

fn sample_source() -> PathBuf {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/samples/src/test-asm16.asm"
    ))
    .to_path_buf()
}

#[test]
fn nasm_and_link386_build_a_program_that_runs_and_is_traced() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    if !nasm(&sample_source(), &root.join("TEST.OBJ")) {
        return;
    }
    copy_tools(
        &tk,
        root,
        &[
            ("bin/link386.exe", "LINK386.EXE"),
            ("lib/os2286.lib", "OS2286.LIB"),
        ],
    );
    std::fs::write(
        root.join("TEST.DEF"),
        "NAME TEST WINDOWCOMPAT\nDESCRIPTION 'NASM sample'\nPROTMODE\nSTACKSIZE 4096\n",
    )
    .unwrap();

    // LINK386 objects,exe,map,libraries,def;
    let (o, text, _) = run(
        root,
        "LINK386.EXE",
        &["TEST.OBJ,TEST.EXE,TEST.MAP,OS2286.LIB,TEST.DEF;"],
    );
    assert_eq!(o, Outcome::Exited(0), "{text}");

    // The EXE: an LX module with the sample's three 16-bit segments,
    // entry at _TEXT:0, importing DOSCALLS (DosWrite, DosExit).
    let bytes = std::fs::read(root.join("TEST.EXE")).unwrap();
    let m = loader::parse(&bytes).unwrap();
    assert_eq!(m.format, loader::Format::Lx);
    assert_eq!(m.name, "test");
    assert_eq!(m.objects.len(), 3);
    let start = m.start.unwrap();
    assert_eq!((start.object, start.offset), (3, 0));
    assert_eq!(m.stack_size, 4096);
    assert!(m.objects.iter().all(|o| o.flags & 0x2000 == 0), "16-bit");
    let map = std::fs::read_to_string(root.join("TEST.MAP")).unwrap();
    assert!(
        map.contains("Program entry point at 0003:00000000"),
        "{map}"
    );
    assert!(map.contains("_TEXT") && map.contains("DGROUP"), "{map}");

    // It runs.
    let (o, text, _) = run(root, "TEST.EXE", &[]);
    assert_eq!((o, text.as_str()), (Outcome::Exited(0), "Hello World\r\n"));

    // And is traced: the DosWrite call (14 bytes into _TEXT) logs the
    // length and the string it writes.
    let mut cfg = ProcessConfig::new(root, "TEST.EXE");
    cfg.max_instructions = Some(1_000_000);
    let mut p = Process::new(cfg).unwrap();
    p.set_console(
        Box::new(ConsoleBuffer::new()),
        Box::new(ConsoleBuffer::new()),
        Box::new(std::io::empty()),
    );
    let src = "major=0xC9\nminor=0x21\nobject=3\noffset=14\nopcode=0x9A\n\
               Push SS\nPush ESP\nPush W,4\nAdd\nPush WIS\n\
               Push SS\nPush ESP\nPush W,6\nAdd\nPush SIS\nLog MRS\n";
    let file = rpn_vm::parse("t.rpn", src).unwrap();
    p.trace_start(StdaFormat::New, 4).unwrap();
    p.trace_apply("TEST", &file, None, None).unwrap();
    assert_eq!(p.run(), Outcome::Exited(0));
    let snap = p.system_trace_mut().unwrap().buffer_mut().get_stda();
    let records = Stda::parse(&snap.stda).unwrap().records();
    assert_eq!(records.len(), 1);
    let mut want = vec![0, 13, 0];
    want.extend_from_slice(b"Hello World\r\n");
    assert_eq!((records[0].major, records[0].minor), (0xC9, 0x21));
    assert_eq!(records[0].data, want);
}

#[test]
fn nmake_prints_its_bound_messages() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::copy(tk.join("bin/nmake.exe"), root.join("NMAKE.EXE")).unwrap();
    // Its messages are bound into it by MSGBIND (there is no NMMSG.MSG).
    let (o, text, _) = run(root, "NMAKE.EXE", &["/?"]);
    assert_eq!(o, Outcome::Exited(0), "{text}");
    assert!(
        text.contains("Usage:") && text.contains("NMAKE @commandfile"),
        "{text}"
    );
    let (o, text, _) = run(root, "NMAKE.EXE", &[]);
    assert_eq!(o, Outcome::Exited(2), "{text}");
    assert!(
        text.contains("fatal error U1064: MAKEFILE not found and no target specified"),
        "{text}"
    );
}

#[test]
fn ipfc_compiles_an_ipf_file_to_an_inf_file() {
    let Some(tk) = toolkit() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::copy(tk.join("bin/ipfc.exe"), root.join("IPFC.EXE")).unwrap();
    // IPFC reads its APSY*.APS and IPF*.NLS tables from %IPFC%.
    std::fs::create_dir(root.join("IPFC")).unwrap();
    for e in std::fs::read_dir(tk.join("ipfc")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), root.join("IPFC").join(e.file_name())).unwrap();
    }
    std::fs::write(
        root.join("T.IPF"),
        ":userdoc.\n:title.Test\n:h1.Hello\n:p.Hello world.\n:euserdoc.\n",
    )
    .unwrap();
    let (o, text, _) = run(root, "IPFC.EXE", &[]);
    assert_eq!(o, Outcome::Exited(0), "{text}");
    assert!(text.contains("Usage: IPFC"), "{text}");
    let mut cfg = ProcessConfig::new(root, "IPFC.EXE");
    cfg.args = vec!["/INF".into(), "T.IPF".into()];
    cfg.set_env("IPFC", "C:\\IPFC");
    cfg.set_env("TMP", "C:\\");
    cfg.max_instructions = Some(500_000_000);
    let mut p = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut p);
    assert_eq!(p.run(), Outcome::Exited(0), "{}", out.text());
    assert!(
        out.text()
            .contains("Output file successfully created (INF)")
    );
    // An INF file starts with its "HSP" signature and the INF flag.
    let inf = std::fs::read(root.join("T.INF")).unwrap();
    assert_eq!(&inf[..3], b"HSP", "{:02x?}", &inf[..16.min(inf.len())]);
    assert_eq!(inf[3], 1, "INF, not HLP");
}

#[test]
fn mkmsgf_and_link386_make_a_32_bit_program_that_prints_its_message() {
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
            ("lib/os2386.lib", "OS2386.LIB"),
        ],
    );
    std::fs::write(
        root.join("T.TXT"),
        "TST\r\nTST0001E: Bound error %1\r\nTST0002I: Hello from %1\r\n",
    )
    .unwrap();
    let (o, text, _) = run(root, "MKMSGF.EXE", &["T.TXT", "T.MSG"]);
    assert_eq!(o, Outcome::Exited(0), "{text}");
    let msg = std::fs::read(root.join("T.MSG")).unwrap();
    assert_eq!(&msg[..11], b"\xFFMKMSGF\0TST", "an MKMSGF file of TST");
    assert_eq!(&msg[11..15], &[2, 0, 1, 0], "two messages from 1");

    std::fs::write(
        root.join("M32.DEF"),
        "NAME M32 WINDOWCOMPAT\r\nSTACKSIZE 16384\r\n",
    )
    .unwrap();
    let (o, text, _) = run(
        root,
        "LINK386.EXE",
        &["M32.OBJ,M32.EXE,M32.MAP,OS2386.LIB,M32.DEF;"],
    );
    assert_eq!(o, Outcome::Exited(0), "{text}");
    let m = loader::parse(&std::fs::read(root.join("M32.EXE")).unwrap()).unwrap();
    assert!(
        m.objects.iter().any(|o| o.flags & 0x2000 != 0),
        "32-bit objects"
    );
    let map = std::fs::read_to_string(root.join("M32.MAP")).unwrap();
    assert!(
        map.contains("MSGSEG32"),
        "the stub's message segment: {map}"
    );

    // DosGetMessage reads T.MSG along DPATH (C:\): an I message, no prefix.
    let (o, text, _) = run(root, "M32.EXE", &[]);
    assert_eq!(
        (o, text.as_str()),
        (Outcome::Exited(0), "Hello from os2trace\r\n")
    );
}
