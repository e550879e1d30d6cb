//! DLL termination with IBM's linker: a DLL assembled by NASM and
//! linked by LINK386 (running here) with `LIBRARY ... INITINSTANCE
//! TERMINSTANCE` gets the module flags OS/2 reads (0x4 and 0x40000000),
//! and its `_DLL_InitTerm` runs at load with flag 0 and, as the program
//! ends, with flag 1. Skipped unless OS2TK_DIR names the toolkit and
//! `nasm` is on PATH.

mod common;

use common::toolkit::{copy_tools, nasm, run_tool, toolkit};
use kernel_sim::Outcome;

/// The DLL: `_DLL_InitTerm` writes which call it is, and an exported
/// `HELLO` (upper case, as LINK386 writes import names) writes a greeting.
const DLL_ASM: &str = "\
BITS 32
extern DosWrite
segment DATA32 use32 class=DATA FLAT
msg0    db 'TERMDLL init',13,10
msg1    db 'TERMDLL term',13,10
msgh    db 'TERMDLL hello',13,10
written dd 0
segment CODE32 use32 class=CODE FLAT
..start:
global _DLL_InitTerm
_DLL_InitTerm:
        mov eax, msg0
        cmp dword [esp+8], 0
        je .say
        mov eax, msg1
.say:   push written
        push 14
        push eax
        push 1
        call DosWrite
        add esp, 16
        mov eax, 1
        ret
global HELLO
HELLO:  push written
        push 15
        push msgh
        push 1
        call DosWrite
        add esp, 16
        ret
";

/// The program: calls TERMDLL's HELLO, then DosExit(EXIT_PROCESS, 3).
const EXE_ASM: &str = "\
BITS 32
extern HELLO
extern DosExit
segment STACK32 use32 class=STACK stack FLAT
        resb 8192
segment CODE32 use32 class=CODE FLAT
..start:
        call HELLO
        push 3
        push 1
        call DosExit
";

#[test]
fn a_link386_dll_with_terminstance_terminates_as_the_program_ends() {
    let Some(tk) = toolkit("link386.exe") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("TERMDLL.ASM"), DLL_ASM).unwrap();
    std::fs::write(root.join("TMAIN.ASM"), EXE_ASM).unwrap();
    if !nasm(&root.join("TERMDLL.ASM"), &root.join("TERMDLL.OBJ"))
        || !nasm(&root.join("TMAIN.ASM"), &root.join("TMAIN.OBJ"))
    {
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
    std::fs::write(
        root.join("TERMDLL.DEF"),
        "LIBRARY TERMDLL INITINSTANCE TERMINSTANCE\r\n\
         DATA MULTIPLE NONSHARED\r\n\
         EXPORTS\r\n  HELLO @1\r\n",
    )
    .unwrap();
    std::fs::write(
        root.join("TMAIN.DEF"),
        "NAME TMAIN WINDOWCOMPAT\r\nIMPORTS\r\n  HELLO=TERMDLL.HELLO\r\n",
    )
    .unwrap();
    let link = |args: &str| {
        let (o, text, _) = run_tool(root, "LINK386.EXE", &["/NOLOGO", args], 200_000_000);
        assert_eq!(o, Outcome::Exited(0), "{args}: {text}");
    };
    link("TERMDLL.OBJ,TERMDLL.DLL,NUL,OS2386.LIB,TERMDLL.DEF;");
    link("TMAIN.OBJ,TMAIN.EXE,NUL,OS2386.LIB,TMAIN.DEF;");
    let dll = loader::parse(&std::fs::read(root.join("TERMDLL.DLL")).unwrap()).unwrap();
    assert_eq!(
        dll.flags & 0x4000_8004,
        0x4000_8004,
        "a library with per-process initialization and termination: {:#x}",
        dll.flags
    );
    // With no DESCRIPTION, LINK386's non-resident name table is the
    // export's name alone: the import by name finds it.
    assert_eq!(dll.description.as_deref(), Some(""));
    assert_eq!(dll.export("HELLO").map(|e| e.ordinal), Some(1));
    let (o, text, _) = run_tool(root, "TMAIN.EXE", &[], 1_000_000);
    assert_eq!(
        (o, text.as_str()),
        (
            Outcome::Exited(3),
            "TERMDLL init\r\nTERMDLL hello\r\nTERMDLL term\r\n"
        )
    );
}
