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
fn waiting_on_an_unposted_event_times_out_on_the_clock() {
    // (Waiting forever with one thread is a deadlock: tests/threads.rs.)
    let (mut c, mut k) = (Vec::new(), Vec::new());
    c.extend([
        0x6A, 0x00, 0x6A, 0x00, 0x68, 0x00, 0x00, 0x02, 0x00, 0x6A, 0x00,
    ]);
    call(&mut c, &mut k, 324); // DosCreateEventSem(NULL, 0x20000, 0, FALSE)
    c.extend([
        0x83, 0xC4, 0x10, 0x6A, 0x1E, 0xFF, 0x35, 0x00, 0x00, 0x02, 0x00,
    ]);
    call(&mut c, &mut k, 329); // DosWaitEventSem(h, 30)
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

/// A 32-bit program whose exception handler skips a faulting `div ecx`
/// and sets EAX to 77 (or, `handled` false, declines with
/// XCPT_CONTINUE_SEARCH).
fn divide_program(handled: bool) -> Vec<u8> {
    let (mut c, mut k) = (Vec::new(), Vec::new());
    let handler = 0x10000u32 + 0x80;
    c.extend([0xC7, 0x05, 0x04, 0x00, 0x02, 0x00]);
    c.extend(handler.to_le_bytes()); // record at 0x20000: handler at +4
    c.extend([0x68, 0x00, 0x00, 0x02, 0x00]);
    call(&mut c, &mut k, 354);
    c.extend([
        0x83, 0xC4, 0x04, 0x31, 0xD2, 0x31, 0xC9, 0xB8, 0x05, 0x00, 0x00, 0x00,
    ]);
    c.extend([0xF7, 0xF1]); // div ecx
    c.extend([0x50, 0x6A, 0x01]);
    call(&mut c, &mut k, 234);
    c.resize(0x80, 0x90);
    c.extend([0x8B, 0x44, 0x24, 0x0C]); // mov eax,[esp+12]  (context)
    c.extend([0x81, 0x80, 0x9C, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00]); // Eip += 2
    c.extend([0xC7, 0x80, 0x88, 0x00, 0x00, 0x00, 0x4D, 0x00, 0x00, 0x00]); // Eax = 77
    if handled {
        c.extend([0x83, 0xC8, 0xFF]); // or eax,-1: XCPT_CONTINUE_EXECUTION
    } else {
        c.extend([0x31, 0xC0]); // xor eax,eax: XCPT_CONTINUE_SEARCH
    }
    c.push(0xC3);
    common::lx_program(&c, &k)
}

#[test]
fn a_32_bit_exception_handler_can_resume() {
    assert_eq!(run(divide_program(true)), Outcome::Exited(77));
    let o = run(divide_program(false));
    assert!(matches!(o, Outcome::GuestFault { vector: 0, .. }), "{o}");
}
