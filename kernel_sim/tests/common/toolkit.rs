//! What the tests that run IBM's toolkit share: finding it (OS2TK_DIR),
//! NASM, copying tools into a sandbox, running one, and a 32-bit program
//! that prints a message file's message. A test that cannot run says it
//! was skipped on stderr itself: libtest captures `println!`/`eprintln!`
//! of a passing test, but not a direct write, so `cargo test` shows it.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use kernel_sim::{Outcome, Process, ProcessConfig};

/// Prints `why: skipped` where the test output shows it, as one line
/// (stderr locked: tests run in parallel threads, and an unlocked
/// `writeln!` writes its pieces one by one).
pub fn skip(why: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{why}: skipped");
}

/// The toolkit's directory, when OS2TK_DIR names one that has `bin/TOOL`
/// (else a skip notice).
pub fn toolkit(tool: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("OS2TK_DIR").map(PathBuf::from);
    match dir {
        Some(d) if d.join("bin").join(tool).exists() => Some(d),
        _ => {
            skip(&format!("OS2TK_DIR is not set (or has no bin/{tool})"));
            None
        }
    }
}

/// `nasm -f obj` of `src` into `obj`; false (with a notice) without nasm.
pub fn nasm(src: &Path, obj: &Path) -> bool {
    match Command::new("nasm")
        .args(["-f", "obj", "-o"])
        .arg(obj)
        .arg(src)
        .status()
    {
        Ok(s) => {
            assert!(s.success(), "nasm failed");
            true
        }
        Err(_) => {
            skip("nasm is not installed");
            false
        }
    }
}

/// Writes [`M32_ASM`] into `root` and assembles it to M32.OBJ; false
/// (with a notice) without nasm.
pub fn assemble_m32(root: &Path) -> bool {
    std::fs::write(root.join("M32.ASM"), M32_ASM).unwrap();
    nasm(&root.join("M32.ASM"), &root.join("M32.OBJ"))
}

/// Copies (toolkit path, name in `root`) pairs.
pub fn copy_tools(tk: &Path, root: &Path, tools: &[(&str, &str)]) {
    for (from, to) in tools {
        std::fs::copy(tk.join(from), root.join(to)).unwrap();
    }
}

/// A fresh sandbox with `tools` copied in (see [`copy_tools`]).
pub fn sandbox(tk: &Path, tools: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tools(tk, dir.path(), tools);
    dir
}

/// What [`run_tool`] runs: `program` in `root` with `args` and an
/// instruction budget.
pub fn tool_config(
    root: &Path,
    program: &str,
    args: &[&str],
    max_instructions: u64,
) -> ProcessConfig {
    let mut cfg = ProcessConfig::new(root, program);
    cfg.args = args.iter().map(|s| s.to_string()).collect();
    cfg.max_instructions = Some(max_instructions);
    cfg
}

/// Runs the process `cfg` makes, its console captured: (outcome,
/// console, the process).
pub fn run_config(cfg: ProcessConfig) -> (Outcome, String, Process) {
    let mut p = Process::new(cfg).unwrap();
    let out = super::capture_console(&mut p);
    let o = p.run();
    (o, out.text(), p)
}

/// Runs `program` in `root` with `args` and an instruction budget:
/// (outcome, console, the process).
pub fn run_tool(
    root: &Path,
    program: &str,
    args: &[&str],
    max_instructions: u64,
) -> (Outcome, String, Process) {
    run_config(tool_config(root, program, args, max_instructions))
}

/// The file in `dir` named `name` in any case (the sandbox keeps the
/// case a program gives).
pub fn file_ci(dir: &Path, name: &str) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .find(|e| e.file_name().to_string_lossy().eq_ignore_ascii_case(name))
        .map(|e| e.path())
}

/// Asserts that `text` has each of `wants`, one after the other.
pub fn assert_in_order(text: &str, wants: &[&str]) {
    let mut at = 0;
    for want in wants {
        let i = text[at..]
            .find(want)
            .unwrap_or_else(|| panic!("{want:?} in {text}"));
        at += i + want.len();
    }
}

/// A 32-bit program (NASM, OMF) printing message 2 of T.MSG through
/// OS2386.LIB's DosGetMessage (bound messages first, then the file), with
/// "os2trace" for %1; it exits with DosGetMessage's return code.
pub const M32_ASM: &str = "\
BITS 32
extern DosGetMessage
extern DosPutMessage
extern DosExit
segment DATA32 use32 class=DATA FLAT
name    db 'T.MSG',0
who     db 'os2trace',0
table   dd who
len     dd 0
buf     times 128 db 0
segment STACK32 use32 class=STACK stack FLAT
        resb 8192
segment CODE32 use32 class=CODE FLAT
..start:
        push len
        push name
        push 2
        push 128
        push buf
        push 1
        push table
        call DosGetMessage
        add esp, 28
        push eax
        push buf
        push dword [len]
        push 1
        call DosPutMessage
        add esp, 12
        pop eax
        push eax
        push 1
        call DosExit
";
