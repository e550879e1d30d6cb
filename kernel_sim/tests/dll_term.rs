//! DLL termination routines: when a process ends (a return from the
//! entry point, DosExit(EXIT_PROCESS), the last thread's DosExit, an
//! unhandled fault, DosKillProcess) its exit list runs first, then the
//! 32-bit LX DLLs' `_DLL_InitTerm(hmod, 1)` in the reverse of their
//! initialization order, with the LX format's library termination
//! registers; DosFreeModule runs a freed DLL's routine inside the call.
//!
//! Every routine here writes one 68-byte record to stdout with DosWrite:
//! a tag, then SS, GS, FS, ES, DS, the eight registers PUSHAD saves, and
//! the three dwords at the routine's ESP (return address, module handle,
//! flag). The test reads the records back in order.

mod common;

use common::{Code, DATA};
use kernel_sim::{Outcome, Process, ProcessConfig};
use loader::{Address, Module, SourceKind, Target};

/// LX module flags: library, per-process initialization and termination.
const LIBRARY: u32 = 0x8000;
const INIT_INSTANCE: u32 = 0x4;
const TERM_INSTANCE: u32 = 0x4000_0000;

/// Emit the record routine body: writes the record tagged `tag`, keeps
/// every register.
fn record(c: &mut Code, tag: &[u8; 4]) {
    // pushad; push ds; push es; push fs; push gs; push ss
    c.c.extend([0x60, 0x1E, 0x06, 0x0F, 0xA0, 0x0F, 0xA8, 0x16]);
    c.push(u32::from_le_bytes(*tag));
    // mov eax, esp; push 0 (cbActual); push esp; push 68; push eax; push 1
    c.c.extend([0x89, 0xE0, 0x6A, 0x00, 0x54, 0x6A, 68, 0x50, 0x6A, 0x01]);
    // DosWrite; add esp, 20 drops its arguments and cbActual.
    c.call("DOSCALLS", 282, 20);
    // add esp, 24 (tag and segment registers); popad
    c.c.extend([0x83, 0xC4, 24, 0x61]);
}

/// `mov eax, v; ret`.
fn ret_eax(c: &mut Code, v: u32) {
    c.c.push(0xB8);
    c.c.extend(v.to_le_bytes());
    c.c.push(0xC3);
}

/// `mov eax, [0]`: a page fault.
fn fault(c: &mut Code) {
    c.c.extend([0xA1, 0, 0, 0, 0]);
}

fn add_calls(m: &mut Module, calls: &[(u32, &str, u32)]) {
    for &(off, module, ordinal) in calls {
        let mi = m.import_module(module);
        m.add_fixup(
            1,
            off + 1,
            SourceKind::Rel32,
            Target::ImportOrdinal {
                module: mi,
                ordinal,
            },
        );
    }
}

/// A 32-bit LX DLL whose init/term routine (at offset 0 of its one code
/// object) is `code`; it imports `imports`.
fn dll(name: &str, flags: u32, imports: &[&str], code: &Code) -> Vec<u8> {
    let mut m = Module::new_lx(name);
    m.flags = 0x200 | LIBRARY | flags;
    for i in imports {
        m.import_module(i);
    }
    m.add_object(0x2005, code.c.len() as u32, &code.c);
    m.start = Some(Address {
        object: 1,
        offset: 0,
    });
    add_calls(&mut m, &code.calls);
    loader::write(&m).unwrap()
}

/// The usual routine: records itself, returns `ret`.
fn plain_dll(name: &str, flags: u32, imports: &[&str], ret: u32) -> Vec<u8> {
    let mut c = Code::new();
    record(&mut c, name.as_bytes()[..4].try_into().unwrap());
    ret_eax(&mut c, ret);
    dll(name, flags, imports, &c)
}

/// A program (code at 0x10000, stack object at 0x20000 whose bottom is
/// [`DATA`], ESP 0x24000) importing `imports`.
fn exe(imports: &[&str], code: &Code) -> Vec<u8> {
    let mut m = Module::new_lx("MAIN");
    for i in imports {
        m.import_module(i);
    }
    m.add_object(0x2005, code.c.len() as u32, &code.c);
    // ESP starts at 0x24000, a page below the object's end, so a
    // record of an exit-list routine (one argument) stays inside.
    m.add_object(0x2003, 0x5000, &[]);
    m.start = Some(Address {
        object: 1,
        offset: 0,
    });
    m.stack = Some(Address {
        object: 2,
        offset: 0x4000,
    });
    m.stack_size = 0x4000;
    add_calls(&mut m, &code.calls);
    loader::write(&m).unwrap()
}

/// `call` to the subroutine at `target` (patched later if `None`):
/// where the rel32 is.
fn call_local(c: &mut Code, target: Option<usize>) -> usize {
    c.c.push(0xE8);
    let at = c.c.len();
    let rel = target.map_or(0, |t| t as i32 - (at as i32 + 4));
    c.c.extend(rel.to_le_bytes());
    at
}

/// One record read back.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rec {
    tag: String,
    /// SS, GS, FS, ES, DS.
    sregs: [u16; 5],
    /// EDI, ESI, EBP, ESP, EBX, EDX, ECX, EAX.
    regs: [u32; 8],
    /// The return address, the module handle and the flag.
    args: [u32; 3],
}

fn records(out: &[u8]) -> Vec<Rec> {
    assert_eq!(out.len() % 68, 0, "whole records: {out:?}");
    out.chunks(68)
        .map(|r| {
            let d = |i: usize| u32::from_le_bytes(r[i..i + 4].try_into().unwrap());
            Rec {
                tag: String::from_utf8_lossy(&r[..4]).into_owned(),
                sregs: std::array::from_fn(|i| d(4 + 4 * i) as u16),
                regs: std::array::from_fn(|i| d(24 + 4 * i)),
                args: std::array::from_fn(|i| d(56 + 4 * i)),
            }
        })
        .collect()
}

/// Tags with the flag of DLL records ("TRMA0", "TRMA1"), others bare.
fn tags(recs: &[Rec]) -> Vec<String> {
    recs.iter()
        .map(|r| {
            if r.tag.starts_with("TRM") {
                format!("{}{}", r.tag, r.args[2])
            } else {
                r.tag.clone()
            }
        })
        .collect()
}

/// Write `files` into a sandbox, run MAIN.EXE: outcome, records, the
/// process (for handles).
fn run(files: &[(&str, Vec<u8>)]) -> (Outcome, Vec<Rec>, Process, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let mut cfg = ProcessConfig::new(dir.path(), "MAIN.EXE");
    cfg.max_instructions = Some(2_000_000);
    let mut p = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut p);
    let o = p.run();
    let recs = records(&out.contents());
    (o, recs, p, dir)
}

/// How the main program ends.
#[derive(Clone, Copy)]
enum End {
    Return(u32),
    DosExit(u32, u32),
    Fault,
}

/// MAIN: records "MAIN", optionally adds an exit-list routine (which
/// records "EXIT" and calls EXLST_EXIT), then ends as `end` says.
fn main_program(imports: &[&str], exit_list: bool, end: End) -> Vec<u8> {
    let mut c = Code::new();
    let rec = call_local(&mut c, None);
    let mut exit_fixup = None;
    if exit_list {
        // push offset exit_routine (absolute: the EXE sits at 0x10000)
        c.c.push(0x68);
        exit_fixup = Some(c.c.len());
        c.c.extend([0; 4]);
        c.push(1).call("DOSCALLS", 296, 8).expect(0, 90);
    }
    match end {
        End::Return(v) => ret_eax(&mut c, v),
        End::DosExit(action, v) => {
            c.push(v).push(action).call("DOSCALLS", 234, 8);
        }
        End::Fault => fault(&mut c),
    }
    // The record subroutine.
    let here = c.c.len();
    c.c[rec..rec + 4].copy_from_slice(&((here as i32) - (rec as i32 + 4)).to_le_bytes());
    record(&mut c, b"MAIN");
    c.c.push(0xC3);
    if let Some(at) = exit_fixup {
        let routine = 0x10000 + c.c.len() as u32;
        c.c[at..at + 4].copy_from_slice(&routine.to_le_bytes());
        record(&mut c, b"EXIT");
        c.push(0).push(3).call("DOSCALLS", 296, 8);
        ret_eax(&mut c, 0);
    }
    exe(imports, &c)
}

/// TRMB imports TRMA; MAIN imports TRMB and TRMC.
fn three_dlls() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        (
            "TRMA.DLL",
            plain_dll("TRMA", INIT_INSTANCE | TERM_INSTANCE, &["DOSCALLS"], 1),
        ),
        (
            "TRMB.DLL",
            plain_dll("TRMB", INIT_INSTANCE | TERM_INSTANCE, &["TRMA"], 1),
        ),
        // Global initialization and termination: this process's instance
        // is initialized and terminated as the per-process ones are.
        ("TRMC.DLL", plain_dll("TRMC", 0, &[], 1)),
    ]
}

#[test]
fn terminations_run_after_the_exit_list_in_reverse_initialization_order() {
    for end in [
        End::Return(7),
        End::DosExit(1, 7),
        // EXIT_THREAD of the only thread ends the process.
        End::DosExit(0, 7),
    ] {
        let mut files = three_dlls();
        files.push(("MAIN.EXE", main_program(&["TRMB", "TRMC"], true, end)));
        let (o, recs, _p, _dir) = run(&files);
        assert_eq!(o, Outcome::Exited(7));
        assert_eq!(
            tags(&recs),
            [
                "TRMA0", "TRMB0", "TRMC0", "MAIN", "EXIT", "TRMC1", "TRMB1", "TRMA1"
            ]
        );
    }
}

#[test]
fn a_termination_routine_gets_the_lx_library_termination_registers() {
    let mut files = three_dlls();
    files.push((
        "MAIN.EXE",
        main_program(&["TRMB", "TRMC"], false, End::Return(0)),
    ));
    let (o, recs, p, _dir) = run(&files);
    assert_eq!(o, Outcome::Exited(0));
    let flat_ds = recs[3].sregs[4];
    let tib_sel = recs[3].sregs[2];
    for r in recs.iter().filter(|r| r.tag.starts_with("TRM")) {
        let handle = u32::from(p.module(&r.tag).unwrap().handle);
        assert_eq!(r.args[1], handle, "{r:?}");
        // SS, GS, FS, ES, DS: flat, 0, the TIB, flat, flat.
        assert_eq!(r.sregs, [flat_ds, 0, tib_sel, flat_ds, flat_ds], "{r:?}");
        // EDI ESI EBP (ESP) EBX EDX ECX EAX: zero but ESP.
        let mut regs = r.regs;
        regs[3] = 0;
        assert_eq!(regs, [0; 8], "{r:?}");
    }
    // The termination routines run on the initial stack: their ESP is
    // the program's top of stack less the three dwords.
    let terms: Vec<&Rec> = recs
        .iter()
        .filter(|r| r.tag.starts_with("TRM") && r.args[2] == 1)
        .collect();
    assert_eq!(terms.len(), 3);
    for r in terms {
        assert_eq!(r.regs[3], 0x24000 - 12, "{r:?}");
    }
}

#[test]
fn a_fault_ends_the_process_after_its_dlls_terminate() {
    let mut files = three_dlls();
    files.push((
        "MAIN.EXE",
        main_program(&["TRMB", "TRMC"], true, End::Fault),
    ));
    let (o, recs, _p, _dir) = run(&files);
    assert!(matches!(o, Outcome::GuestFault { vector: 14, .. }), "{o:?}");
    assert_eq!(
        tags(&recs),
        [
            "TRMA0", "TRMB0", "TRMC0", "MAIN", "EXIT", "TRMC1", "TRMB1", "TRMA1"
        ]
    );
}

#[test]
fn a_termination_routine_that_faults_or_fails_lets_the_next_one_run() {
    // TRMB's routine faults on termination (after its record); TRMC's
    // returns 0. Both are passed over.
    let mut b = Code::new();
    record(&mut b, b"TRMB");
    // cmp dword [esp+8], 1; jne +5; mov eax,[0]
    b.c.extend([0x83, 0x7C, 0x24, 0x08, 0x01, 0x75, 0x05]);
    fault(&mut b);
    ret_eax(&mut b, 1);
    let mut c = Code::new();
    record(&mut c, b"TRMC");
    // mov eax, [esp+8]; xor eax, 1; ret  (0 on termination)
    c.c.extend([0x8B, 0x44, 0x24, 0x08, 0x83, 0xF0, 0x01, 0xC3]);
    let files = vec![
        (
            "TRMA.DLL",
            plain_dll("TRMA", INIT_INSTANCE | TERM_INSTANCE, &[], 1),
        ),
        (
            "TRMB.DLL",
            dll("TRMB", INIT_INSTANCE | TERM_INSTANCE, &["TRMA"], &b),
        ),
        ("TRMC.DLL", dll("TRMC", TERM_INSTANCE, &[], &c)),
        (
            "MAIN.EXE",
            main_program(&["TRMB", "TRMC"], false, End::DosExit(1, 3)),
        ),
    ];
    let (o, recs, _p, _dir) = run(&files);
    assert_eq!(o, Outcome::Exited(3));
    assert_eq!(
        tags(&recs),
        ["TRMA0", "TRMB0", "TRMC0", "MAIN", "TRMC1", "TRMB1", "TRMA1"]
    );
}

#[test]
fn a_dll_whose_entry_object_is_16_bit_has_no_termination() {
    // TRMD's entry object is not 32-bit (no BIG flag): initialized,
    // never terminated (the LX format allows no termination for 16-bit
    // entries).
    let mut c = Code::new();
    record(&mut c, b"TRMD");
    ret_eax(&mut c, 1);
    let mut m = Module::new_lx("TRMD");
    m.flags = 0x200 | LIBRARY | INIT_INSTANCE | TERM_INSTANCE;
    m.add_object(0x1005, c.c.len() as u32, &c.c);
    m.start = Some(Address {
        object: 1,
        offset: 0,
    });
    add_calls(&mut m, &c.calls);
    let mut files = three_dlls();
    files.push(("TRMD.DLL", loader::write(&m).unwrap()));
    files.push((
        "MAIN.EXE",
        main_program(&["TRMA", "TRMD"], false, End::Return(0)),
    ));
    let (o, recs, _p, _dir) = run(&files);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(tags(&recs), ["TRMA0", "TRMD0", "MAIN", "TRMA1"]);
}

/// MAIN: DosLoadModule(TRMB) twice, DosFreeModule three times (rc 0, 0,
/// then ERROR_INVALID_HANDLE), records between; DosFreeModule of the
/// EXE's own handle and of TRMC (loaded at load time) are
/// ERROR_INVALID_HANDLE.
#[test]
fn dos_free_module_runs_the_termination_of_what_it_frees() {
    let name = DATA + 0x40;
    let hmod = DATA + 0x60;
    let mut c = Code::new();
    let mut recs_at = Vec::new();
    c.store(name, u32::from_le_bytes(*b"TRMB"))
        .store(name + 4, 0);
    for _ in 0..2 {
        c.push(hmod)
            .push(name)
            .push(32)
            .push(DATA)
            .call("DOSCALLS", 318, 16)
            .expect(0, 91);
    }
    recs_at.push(call_local(&mut c, None));
    c.push_mem(hmod).call("DOSCALLS", 322, 4).expect(0, 92);
    recs_at.push(call_local(&mut c, None));
    c.push_mem(hmod).call("DOSCALLS", 322, 4).expect(0, 93);
    recs_at.push(call_local(&mut c, None));
    c.push_mem(hmod).call("DOSCALLS", 322, 4).expect(6, 94);
    // The EXE (handle 1) and TRMC, a load-time DLL.
    c.push(1).call("DOSCALLS", 322, 4).expect(6, 95);
    c.store(name, u32::from_le_bytes(*b"TRMC"));
    c.push(hmod)
        .push(name)
        .call("DOSCALLS", 319, 8)
        .expect(0, 96);
    c.push_mem(hmod).call("DOSCALLS", 322, 4).expect(6, 97);
    // Unknown handles.
    c.push(0x7777).call("DOSCALLS", 322, 4).expect(6, 98);
    // A freed DLL is no longer found by name.
    c.store(name, u32::from_le_bytes(*b"TRMB"));
    c.push(hmod)
        .push(name)
        .call("DOSCALLS", 319, 8)
        .expect(126, 99);
    ret_eax(&mut c, 0);
    let here = c.c.len();
    for at in recs_at {
        c.c[at..at + 4].copy_from_slice(&((here as i32) - (at as i32 + 4)).to_le_bytes());
    }
    record(&mut c, b"MAIN");
    c.c.push(0xC3);
    let mut files = three_dlls();
    files.push(("MAIN.EXE", exe(&["TRMC"], &c)));
    let (o, recs, _p, _dir) = run(&files);
    assert_eq!(o, Outcome::Exited(0));
    // TRMB brings TRMA; freeing TRMB frees both, TRMB first. TRMC, an
    // import of the program, ends with the process.
    assert_eq!(
        tags(&recs),
        [
            "TRMC0", "TRMA0", "TRMB0", "MAIN", "MAIN", "TRMB1", "TRMA1", "MAIN", "TRMC1"
        ]
    );
    // Inside DosFreeModule the routine runs on the caller's stack, below
    // its frame.
    let t = recs
        .iter()
        .find(|r| r.tag == "TRMB" && r.args[2] == 1)
        .unwrap();
    assert!(t.regs[3] < 0x24000 && t.regs[3] > 0x23000, "{t:?}");
    assert_eq!(t.regs[7], 0);
}

#[test]
fn dos_free_module_refuses_a_dll_with_an_exit_list_routine() {
    // TRMX's init adds its own routine to the exit list: DosFreeModule
    // is ERROR_INVALID_ACCESS and nothing is freed; at the end the exit
    // routine runs, then TRMX's termination.
    let mut x = Code::new();
    record(&mut x, b"TRMX");
    // cmp dword [esp+8], 0; jne done
    x.c.extend([0x83, 0x7C, 0x24, 0x08, 0x00, 0x75]);
    let jne = x.c.len();
    x.c.push(0);
    // call $+5; pop eax; add eax, (routine - here)
    x.c.extend([0xE8, 0, 0, 0, 0, 0x58, 0x05]);
    let base = x.c.len() - 2;
    let add_at = x.c.len();
    x.c.extend([0; 4]);
    x.c.push(0x50);
    x.push(1).call("DOSCALLS", 296, 8);
    let done = x.c.len();
    x.c[jne] = (done - jne - 1) as u8;
    ret_eax(&mut x, 1);
    let routine = x.c.len();
    x.c[add_at..add_at + 4].copy_from_slice(&((routine - base) as u32).to_le_bytes());
    record(&mut x, b"EXIT");
    x.push(0).push(3).call("DOSCALLS", 296, 8);
    ret_eax(&mut x, 0);

    let name = DATA + 0x40;
    let hmod = DATA + 0x60;
    let mut c = Code::new();
    c.store(name, u32::from_le_bytes(*b"TRMX"))
        .store(name + 4, 0);
    c.push(hmod)
        .push(name)
        .push(32)
        .push(DATA)
        .call("DOSCALLS", 318, 16)
        .expect(0, 91);
    c.push_mem(hmod).call("DOSCALLS", 322, 4).expect(12, 92);
    // Still loaded: found by name.
    c.push(hmod)
        .push(name)
        .call("DOSCALLS", 319, 8)
        .expect(0, 93);
    ret_eax(&mut c, 5);
    let files = vec![
        ("TRMX.DLL", dll("TRMX", TERM_INSTANCE, &[], &x)),
        ("MAIN.EXE", exe(&[], &c)),
    ];
    let (o, recs, _p, _dir) = run(&files);
    assert_eq!(o, Outcome::Exited(5));
    assert_eq!(tags(&recs), ["TRMX0", "EXIT", "TRMX1"]);
}

#[test]
fn a_killed_process_runs_its_dll_terminations() {
    // CHILD imports TRMA, records "CHLD" and spins; MAIN starts it
    // (EXEC_ASYNCRESULT), sleeps, kills it, waits for it: its codes say
    // TC_KILLPROCESS, and TRMA's termination ran in the child first.
    let mut child = Code::new();
    record(&mut child, b"CHLD");
    child.c.extend([0xEB, 0xFE]);
    let name = DATA + 0x40;
    let res = DATA + 0x60;
    let ppid = DATA + 0x70;
    let mut c = Code::new();
    c.store(name, u32::from_le_bytes(*b"CHIL"))
        .store(name + 4, u32::from_le_bytes(*b"D.EX"))
        .store(name + 8, u32::from(b'E'));
    c.push(name)
        .push(res)
        .push(0)
        .push(0)
        .push(2)
        .push(32)
        .push(DATA)
        .call("DOSCALLS", 283, 28)
        .expect(0, 81);
    c.push(50).call("DOSCALLS", 229, 4);
    c.push_mem(res)
        .push(0)
        .call("DOSCALLS", 235, 8)
        .expect(0, 82);
    c.push_mem(res)
        .push(ppid)
        .push(res)
        .push(0)
        .push(0)
        .call("DOSCALLS", 280, 20)
        .expect(0, 83);
    // codeTerminate: TC_KILLPROCESS.
    c.load_eax(res).expect(3, 84);
    let rec = call_local(&mut c, None);
    ret_eax(&mut c, 0);
    let here = c.c.len();
    c.c[rec..rec + 4].copy_from_slice(&((here as i32) - (rec as i32 + 4)).to_le_bytes());
    record(&mut c, b"MAIN");
    c.c.push(0xC3);
    let files = vec![
        (
            "TRMA.DLL",
            plain_dll("TRMA", INIT_INSTANCE | TERM_INSTANCE, &[], 1),
        ),
        ("CHILD.EXE", exe(&["TRMA"], &child)),
        ("MAIN.EXE", exe(&[], &c)),
    ];
    let (o, recs, _p, _dir) = run(&files);
    assert_eq!(o, Outcome::Exited(0));
    assert_eq!(tags(&recs), ["TRMA0", "CHLD", "TRMA1", "MAIN"]);
}

#[test]
fn an_exit_routine_a_termination_routine_adds_runs_after_it() {
    // TRMY's termination adds an exit-list routine of its own; it runs
    // next, and its EXLST_EXIT ends it (nothing after it runs).
    let mut x = Code::new();
    record(&mut x, b"TRMY");
    // cmp dword [esp+8], 1; jne done
    x.c.extend([0x83, 0x7C, 0x24, 0x08, 0x01, 0x75]);
    let jne = x.c.len();
    x.c.push(0);
    // call $+5; pop eax; add eax, (routine - here); push eax
    x.c.extend([0xE8, 0, 0, 0, 0, 0x58, 0x05]);
    let base = x.c.len() - 2;
    let add_at = x.c.len();
    x.c.extend([0; 4]);
    x.c.push(0x50);
    x.push(1).call("DOSCALLS", 296, 8);
    let done = x.c.len();
    x.c[jne] = (done - jne - 1) as u8;
    ret_eax(&mut x, 1);
    let routine = x.c.len();
    x.c[add_at..add_at + 4].copy_from_slice(&((routine - base) as u32).to_le_bytes());
    record(&mut x, b"EXIT");
    x.push(0).push(3).call("DOSCALLS", 296, 8);
    record(&mut x, b"BAD!");
    ret_eax(&mut x, 0);
    let files = vec![
        (
            "TRMA.DLL",
            plain_dll("TRMA", INIT_INSTANCE | TERM_INSTANCE, &[], 1),
        ),
        ("TRMY.DLL", dll("TRMY", TERM_INSTANCE, &["TRMA"], &x)),
        ("MAIN.EXE", main_program(&["TRMY"], false, End::Return(4))),
    ];
    let (o, recs, _p, _dir) = run(&files);
    assert_eq!(o, Outcome::Exited(4));
    assert_eq!(
        tags(&recs),
        ["TRMA0", "TRMY0", "MAIN", "TRMY1", "EXIT", "TRMA1"]
    );
}
