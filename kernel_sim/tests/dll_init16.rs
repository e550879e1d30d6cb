//! A 16-bit DLL's initialization routine in a 32-bit process: TPDLL16's
//! `DLLINIT` (far, AX = the module handle, returns AX = 1) runs on a
//! 16-bit stack whether the DLL comes with the program or from a
//! DosLoadModule, and the program goes on on its own stack afterwards.

mod common;

use common::{Code, DATA};
use kernel_sim::{Outcome, Process, ProcessConfig};

/// TPDLL16's `hmod` and `initcount`, the first two words of its DGROUP.
fn init_words(p: &mut Process) -> (u16, u16) {
    let m = p.module("TPDLL16").expect("TPDLL16 loaded").clone();
    let base = m.object(2).expect("DGROUP").base;
    let mut w = [0u8; 4];
    p.read_guest(base, &mut w).unwrap();
    assert_eq!(u16::from_le_bytes([w[0], w[1]]), m.handle, "hmod");
    (m.handle, u16::from_le_bytes([w[2], w[3]]))
}

fn run(files: &[(&str, Vec<u8>)]) -> (Outcome, Process, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    testprogs::tpdll16().unwrap().write_to(dir.path()).unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(200_000);
    cfg.api_log = true;
    let mut p = Process::new(cfg).unwrap();
    common::capture_console(&mut p);
    let o = p.run();
    (o, p, dir)
}

/// `push esp; pop eax; sub eax, [at]`: EAX = ESP less the dword at `at`.
fn esp_less(c: &mut Code, at: u32) {
    c.c.extend([0x54, 0x58]);
    c.sub_eax(at);
}

/// `mov [at], esp`.
fn save_esp(c: &mut Code, at: u32) {
    c.c.extend([0x89, 0x25]);
    c.c.extend(at.to_le_bytes());
}

#[test]
fn dos_load_module_of_a_16_bit_dll_runs_its_init_on_a_16_bit_stack() {
    let (name, hmod, pfn, proc_name, esp) = (
        DATA + 0x40,
        DATA + 0x60,
        DATA + 0x64,
        DATA + 0x80,
        DATA + 0x90,
    );
    let mut c = Code::new();
    c.store(name, u32::from_le_bytes(*b"TPDL"))
        .store(name + 4, u32::from_le_bytes(*b"L16\0"))
        .store(proc_name, u32::from_le_bytes(*b"GETC"))
        .store(proc_name + 4, u32::from_le_bytes(*b"OUNT"))
        .store(proc_name + 8, 0);
    save_esp(&mut c, esp);
    c.push(hmod)
        .push(name)
        .push(32)
        .push(DATA)
        .call("DOSCALLS", 318, 16)
        .expect(0, 91);
    // The program's ESP is where it was before the call.
    esp_less(&mut c, esp);
    c.expect(0, 92);
    c.push(pfn)
        .push(proc_name)
        .push(0)
        .push_mem(hmod)
        .call("DOSCALLS", 321, 16)
        .expect(0, 93);
    // A second load finds it loaded: the routine (global init) runs once.
    c.push(hmod)
        .push(name)
        .push(32)
        .push(DATA)
        .call("DOSCALLS", 318, 16)
        .expect(0, 94);
    c.c.extend([0x31, 0xC0]); // xor eax, eax
    let exe = c.exit_eax();
    let (o, mut p, _dir) = run(&[("T.EXE", exe)]);
    assert_eq!(o, Outcome::Exited(0), "{:#?}", p.api_log());
    let (_, count) = init_words(&mut p);
    assert_eq!(count, 1);
}

#[test]
fn a_32_bit_program_importing_a_16_bit_dll_starts_after_its_init() {
    // The import is never called: it only makes TPDLL16 a load-time DLL.
    let mut c = Code::new();
    c.c.extend([0x31, 0xC0]); // xor eax, eax
    c.c.extend([0x50, 0x6A, 0x01]);
    c.call("DOSCALLS", 234, 8);
    c.call("TPDLL16", 3, 0);
    let exe = common::lx_program(&c.c, &c.calls);
    let (o, mut p, _dir) = run(&[("T.EXE", exe)]);
    assert_eq!(o, Outcome::Exited(0), "{:#?}", p.api_log());
    let (_, count) = init_words(&mut p);
    assert_eq!(count, 1);
}

/// What an NE DLL's `DLLINIT` writes (from its automatic data segment).
const INIT_LINE: &[u8] = b"16-bit init writes\r\n";

/// An NE DLL named `name` whose initialization routine writes
/// [`INIT_LINE`] with the 16-bit DosWrite (DOSCALLS.138, far pascal,
/// through DS, its automatic data) and returns AX = `ret` when the
/// write succeeds, 0 otherwise.
fn ne_dll(name: &str, ret: u16) -> Vec<u8> {
    use loader::{Address, Module, SourceKind, Target};
    let [lo, hi] = ret.to_le_bytes();
    let mut c = vec![0x6A, 0x01, 0x1E, 0x68, 0x00, 0x00];
    c.extend([0x6A, INIT_LINE.len() as u8, 0x1E, 0x68, 0x40, 0x00]);
    let call_at = c.len() as u32;
    c.extend([0x9A, 0, 0, 0, 0]);
    // test ax, ax; mov ax, ret; jz +2; xor ax, ax; retf
    c.extend([0x85, 0xC0, 0xB8, lo, hi, 0x74, 0x02, 0x31, 0xC0, 0xCB]);
    let mut m = Module::new_ne(name);
    m.flags = 0x8001;
    m.add_object(0x0C00, c.len() as u32, &c);
    m.add_object(0x0C01, 0x200, INIT_LINE);
    m.start = Some(Address {
        object: 1,
        offset: 0,
    });
    m.auto_data = Some(2);
    let mi = m.import_module("DOSCALLS");
    m.add_fixup(
        1,
        call_at + 1,
        SourceKind::Ptr1616,
        Target::ImportOrdinal {
            module: mi,
            ordinal: 138,
        },
    );
    loader::write(&m).expect("an NE DLL")
}

/// An init that calls a 16-bit API runs on a stack the API can use (its
/// far pascal arguments at SS:SP); one that returns AX = 0 fails
/// DosLoadModule with ERROR_INIT_ROUTINE_FAILED, naming the module.
#[test]
fn dos_load_module_reports_a_16_bit_init_that_fails() {
    let (name, hmod, failed) = (DATA + 0x40, DATA + 0x60, DATA + 0x80);
    let mut c = Code::new();
    c.store(name, u32::from_le_bytes(*b"GOOD"))
        .store(name + 4, 0)
        .push(hmod)
        .push(name)
        .push(32)
        .push(failed)
        .call("DOSCALLS", 318, 16)
        .expect(0, 91)
        .store(name, u32::from_le_bytes(*b"BAD\0"))
        .push(hmod)
        .push(name)
        .push(32)
        .push(failed)
        .call("DOSCALLS", 318, 16)
        .expect(295, 92)
        .load_eax(failed);
    let exe = c.exit_eax();
    let dir = tempfile::tempdir().unwrap();
    for (n, bytes) in [
        ("T.EXE", exe),
        ("GOOD.DLL", ne_dll("GOOD", 1)),
        ("BAD.DLL", ne_dll("BAD", 0)),
    ] {
        std::fs::write(dir.path().join(n), bytes).unwrap();
    }
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(200_000);
    cfg.api_log = true;
    let mut p = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut p);
    let o = p.run();
    assert_eq!(
        o,
        Outcome::Exited(u32::from_le_bytes(*b"BAD\0")),
        "{:#?}",
        p.api_log()
    );
    assert_eq!(out.contents(), [INIT_LINE, INIT_LINE].concat());
    assert!(p.module("GOOD").is_some());
    assert!(p.module("BAD").is_none());
}
