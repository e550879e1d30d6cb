//! Single-threaded semaphores and a few information APIs, from guest code.

mod common;

use kernel_sim::{Outcome, Process, ProcessConfig};

fn run(bytes: Vec<u8>) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("T.EXE"), bytes).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), "T.EXE");
    cfg.max_instructions = Some(100_000);
    Process::new(cfg).unwrap().run()
}

/// Appends `call ordinal` (rel32 import) and records the fixup.
fn call(c: &mut Vec<u8>, calls: &mut Vec<(u32, &'static str, u32)>, ordinal: u32) {
    calls.push((c.len() as u32, "DOSCALLS", ordinal));
    c.extend([0xE8, 0, 0, 0, 0]);
}

#[test]
fn mutex_release_without_request_is_not_owner() {
    let (mut c, mut k) = (Vec::new(), Vec::new());
    c.extend([
        0x6A, 0x00, 0x6A, 0x00, 0x68, 0x00, 0x00, 0x02, 0x00, 0x6A, 0x00,
    ]);
    call(&mut c, &mut k, 331); // DosCreateMutexSem(NULL, 0x20000, 0, FALSE)
    c.extend([
        0x83, 0xC4, 0x10, 0x6A, 0xFF, 0xFF, 0x35, 0x00, 0x00, 0x02, 0x00,
    ]);
    call(&mut c, &mut k, 334); // DosRequestMutexSem(h, -1)
    c.extend([0x83, 0xC4, 0x08]);
    for _ in 0..2 {
        c.extend([0xFF, 0x35, 0x00, 0x00, 0x02, 0x00]);
        call(&mut c, &mut k, 335); // DosReleaseMutexSem(h)
        c.extend([0x83, 0xC4, 0x04]);
    }
    c.extend([0x50, 0x6A, 0x01]);
    call(&mut c, &mut k, 234); // DosExit(1, rc of the second release)
    assert_eq!(run(common::lx_program(&c, &k)), Outcome::Exited(288));
}

#[test]
fn waiting_on_an_unposted_event_times_out_instead_of_hanging() {
    let (mut c, mut k) = (Vec::new(), Vec::new());
    c.extend([
        0x6A, 0x00, 0x6A, 0x00, 0x68, 0x00, 0x00, 0x02, 0x00, 0x6A, 0x00,
    ]);
    call(&mut c, &mut k, 324); // DosCreateEventSem(NULL, 0x20000, 0, FALSE)
    c.extend([
        0x83, 0xC4, 0x10, 0x6A, 0xFF, 0xFF, 0x35, 0x00, 0x00, 0x02, 0x00,
    ]);
    call(&mut c, &mut k, 329); // DosWaitEventSem(h, -1)
    c.extend([0x83, 0xC4, 0x08, 0x50, 0x6A, 0x01]);
    call(&mut c, &mut k, 234);
    assert_eq!(run(common::lx_program(&c, &k)), Outcome::Exited(640));
}

#[test]
fn query_sys_info_reports_warp_4() {
    // DosQuerySysInfo(11, 12, 0x20000, 8); exit(major * 100 + minor)
    let (mut c, mut k) = (Vec::new(), Vec::new());
    c.extend([
        0x6A, 0x08, 0x68, 0x00, 0x00, 0x02, 0x00, 0x6A, 0x0C, 0x6A, 0x0B,
    ]);
    call(&mut c, &mut k, 348);
    c.extend([0x83, 0xC4, 0x10]);
    c.extend([0x6B, 0x05, 0x00, 0x00, 0x02, 0x00, 0x64]); // imul eax,[0x20000],100
    c.extend([0x03, 0x05, 0x04, 0x00, 0x02, 0x00]); // add eax,[0x20004]
    c.extend([0x50, 0x6A, 0x01]);
    call(&mut c, &mut k, 234);
    assert_eq!(run(common::lx_program(&c, &k)), Outcome::Exited(2040));
}

#[test]
fn exception_handlers_are_linked_into_the_tib_chain() {
    // DosSetExceptionHandler(0x20000); eax = fs:[0]; exit(eax == 0x20000 ? 0 : 1
    // after unsetting and checking fs:[0] is back to 0xFFFFFFFF).
    let (mut c, mut k) = (Vec::new(), Vec::new());
    c.extend([0x68, 0x00, 0x00, 0x02, 0x00]);
    call(&mut c, &mut k, 354);
    c.extend([0x83, 0xC4, 0x04]);
    c.extend([0x64, 0xA1, 0x00, 0x00, 0x00, 0x00]); // mov eax,fs:[0]
    c.extend([0xA3, 0x00, 0x01, 0x02, 0x00]); // mov [0x20100],eax
    c.extend([0x68, 0x00, 0x00, 0x02, 0x00]);
    call(&mut c, &mut k, 355);
    c.extend([0x83, 0xC4, 0x04]);
    c.extend([0x64, 0xA1, 0x00, 0x00, 0x00, 0x00]); // mov eax,fs:[0]
    c.extend([0x03, 0x05, 0x00, 0x01, 0x02, 0x00]); // add eax,[0x20100]
    c.extend([0x50, 0x6A, 0x01]);
    call(&mut c, &mut k, 234); // exit(0xFFFFFFFF + 0x20000) = 0x1FFFF
    assert_eq!(run(common::lx_program(&c, &k)), Outcome::Exited(0x1FFFF));
}
