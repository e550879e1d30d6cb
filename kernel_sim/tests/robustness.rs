//! A guest that faults, loops or calls something unknown ends with a clear
//! message, never a host panic; the debug hook sees INT3.

mod common;

use kernel_sim::trace::TrapKind;
use kernel_sim::{HookAction, Outcome, Process, ProcessConfig, TrapHook};

fn run_code(code: &[u8], calls: &[(u32, &str, u32)], max: u64) -> (Outcome, Process) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("T.EXE"),
        common::ne_program(code, b"", calls),
    )
    .unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(max);
    let mut p = Process::new(cfg).unwrap();
    let o = p.run();
    (o, p)
}

#[test]
fn a_fault_ends_the_run_with_its_place() {
    // mov ax,0x1234 ; mov ds,ax  -> #GP(0x1234): no such LDT selector.
    let (o, _) = run_code(&[0xB8, 0x34, 0x12, 0x8E, 0xD8], &[], 1000);
    let Outcome::GuestFault {
        vector, error, eip, ..
    } = o.clone()
    else {
        panic!("{o}")
    };
    assert_eq!((vector, error, eip), (13, Some(0x1234), 3));
    assert!(o.to_string().contains("general protection fault"), "{o}");
    assert_eq!(o.exit_code(), 1);
}

#[test]
fn a_page_fault_names_the_address() {
    // mov ax,[0xFFF0]: the automatic data segment's limit is far below.
    let (o, _) = run_code(&[0xA1, 0xF0, 0xFF], &[], 1000);
    assert!(matches!(o, Outcome::GuestFault { vector: 13, .. }), "{o}");
    // A 32-bit style flat access to an unmapped page: les bx,[0] with a
    // selector whose tile is not present is #GP too; a not-present page
    // made on purpose gives #PF with CR2.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("T.EXE"),
        common::ne_program(&[0xA1, 0x10, 0x00, 0xEB, 0xFE], b"", &[]),
    )
    .unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(1000);
    let mut p = Process::new(cfg).unwrap();
    let ds = p.machine().cpu().sreg(emu::SegReg::Ds).base;
    assert!(p.set_page_present(ds, false));
    let o = p.run();
    assert_eq!(
        o,
        Outcome::GuestFault {
            vector: 14,
            error: Some(4),
            cs: p.modules()[0].objects[0].selector,
            eip: 0,
            cr2: Some(ds + 0x10)
        }
    );
    assert!(o.to_string().contains("page fault"), "{o}");
}

#[test]
fn a_loop_hits_the_instruction_limit() {
    let (o, p) = run_code(&[0xEB, 0xFE], &[], 5000);
    assert_eq!(o, Outcome::InstructionLimit(5000));
    assert_eq!(p.instructions(), 5000);
    assert!(o.to_string().contains("instruction limit"));
}

#[test]
fn unknown_and_unimplemented_apis_stop_with_their_names() {
    let (o, _) = run_code(&[0x9A, 0, 0, 0, 0], &[(0, "DOSCALLS", 12)], 1000);
    assert_eq!(o.to_string(), "unimplemented DOSCALLS.12 (DOSPTRACE)");
    let (o, _) = run_code(&[0x9A, 0, 0, 0, 0], &[(0, "DOSCALLS", 9999)], 1000);
    assert_eq!(o.to_string(), "unimplemented DOSCALLS.9999");
    let (o, _) = run_code(&[0x9A, 0, 0, 0, 0], &[(0, "PMWIN", 907)], 1000);
    assert_eq!(o.to_string(), "unimplemented PMWIN.907 (WIN32CREATEMENU)");
}

#[test]
fn software_interrupts_and_halts_are_faults() {
    // INT 21h: no DOS here.
    let (o, _) = run_code(&[0xCD, 0x21], &[], 1000);
    assert!(matches!(o, Outcome::GuestFault { vector: 0x21, .. }), "{o}");
    // HLT at ring 3 is a #GP.
    let (o, _) = run_code(&[0xF4], &[], 1000);
    assert!(matches!(o, Outcome::GuestFault { vector: 13, .. }), "{o}");
    // Jumping into the thunk region between slots runs HLT: #GP as well.
    let (o, _) = run_code(&[0xEA, 0x01, 0x00, 0x63, 0x00], &[], 1000);
    assert!(matches!(o, Outcome::GuestFault { vector: 13, .. }), "{o}");
}

struct CountBreakpoints(u32);

impl TrapHook for CountBreakpoints {
    fn on_trap(&mut self, _p: &mut Process, kind: TrapKind) -> HookAction {
        if kind == TrapKind::Breakpoint && self.0 < 2 {
            self.0 += 1;
            return HookAction::Resume;
        }
        HookAction::NotMine
    }
}

struct StopAtFirst;

impl TrapHook for StopAtFirst {
    fn on_trap(&mut self, _p: &mut Process, _kind: TrapKind) -> HookAction {
        HookAction::Stop
    }
}

#[test]
fn the_hook_sees_int3_first() {
    // int3 ; int3 ; int3 ; then exit(7)
    let mut code = vec![0xCC, 0xCC, 0xCC];
    code.extend(common::push(1));
    code.extend(common::push(7));
    let at = code.len() as u32;
    code.extend([0x9A, 0, 0, 0, 0]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("T.EXE"),
        common::ne_program(&code, b"", &[(at, "DOSCALLS", 5)]),
    )
    .unwrap();
    let mut p = Process::new(ProcessConfig::new(dir.path(), "T.EXE")).unwrap();
    let mut hook = CountBreakpoints(0);
    let o = p.run_with_hook(Some(&mut hook));
    assert_eq!(hook.0, 2);
    assert!(
        matches!(
            o,
            Outcome::GuestFault {
                vector: 3,
                eip: 3,
                ..
            }
        ),
        "{o}"
    );
    // Without the third INT3 the program exits normally.
    let mut p = Process::new(ProcessConfig::new(dir.path(), "T.EXE")).unwrap();
    p.patch_code(p.modules()[0].objects[0].base + 2, &[0x90])
        .unwrap();
    let mut hook = CountBreakpoints(0);
    assert_eq!(p.run_with_hook(Some(&mut hook)), Outcome::Exited(7));
    // A hook can end the run.
    let mut p = Process::new(ProcessConfig::new(dir.path(), "T.EXE")).unwrap();
    assert_eq!(p.run_with_hook(Some(&mut StopAtFirst)), Outcome::Stopped);
    assert_eq!(p.machine().cpu().eip, 1, "stopped after the first INT3");
}

#[test]
fn garbage_modules_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    for (i, bytes) in [&b""[..], b"MZ", b"NE\0\0\0\0", &[0xFF; 300]]
        .iter()
        .enumerate()
    {
        let name = format!("G{i}.EXE");
        std::fs::write(dir.path().join(&name), bytes).unwrap();
        assert!(Process::new(ProcessConfig::new(dir.path(), name)).is_err());
    }
    assert!(Process::new(ProcessConfig::new(dir.path(), "MISSING.EXE")).is_err());
}

#[test]
fn dos_set_vec_handles_a_divide_error() {
    let mut code = common::push(0);
    code.push(0x0E); // push cs
    code.extend(common::push(20)); // the handler below
    code.push(0x1E); // push ds
    code.extend(common::push(0x100));
    code.extend([0x9A, 0, 0, 0, 0]); // 11: DosSetVec
    code.extend([0x31, 0xC0, 0xF6, 0xF0]); // xor ax,ax ; div al
    assert_eq!(code.len(), 20);
    code.extend(common::push(1));
    code.extend(common::push(42));
    code.extend([0x9A, 0, 0, 0, 0]); // 26: DosExit(1, 42)
    let (o, _) = run_code(&code, &[(11, "DOSCALLS", 89), (26, "DOSCALLS", 5)], 1000);
    assert_eq!(o, Outcome::Exited(42));
    // Without the handler the divide error ends the run.
    let (o, _) = run_code(&[0x31, 0xC0, 0xF6, 0xF0], &[], 1000);
    assert!(o.to_string().contains("divide error"), "{o}");
}
