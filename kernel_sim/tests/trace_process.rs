//! Dynamic trace in a running OS/2 process: a trace program applied to a
//! real sample module logs what the program passes to the system.

use std::path::Path;

use kernel_sim::trace::TraceSession;
use kernel_sim::{ConsoleBuffer, Outcome, Process, ProcessConfig};
use stda::{Stda, StdaFormat};

fn process(sample: &str, name: &str) -> (tempfile::TempDir, Process, ConsoleBuffer) {
    let dir = tempfile::tempdir().unwrap();
    let from = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/samples")).join(sample);
    std::fs::copy(from, dir.path().join(name)).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), name);
    cfg.max_instructions = Some(10_000_000);
    let mut p = Process::new(cfg).unwrap();
    let out = ConsoleBuffer::new();
    p.set_console(
        Box::new(out.clone()),
        Box::new(out.clone()),
        Box::new(std::io::empty()),
    );
    (dir, p, out)
}

#[test]
fn tracing_test_asm16_logs_the_dos_write_arguments() {
    let (_dir, mut p, out) = process("ne/test-asm16.exe", "TEST.EXE");
    let start = p.module("TEST").unwrap().module.start.unwrap();
    let file = dos_write_trace(&p);
    let mut session = TraceSession::new(&p, StdaFormat::New, 4, 1).unwrap();
    let dto = session
        .apply_program(&mut p, "TEST", &file, None, None)
        .unwrap();
    let before = p.clock().extra_cycles;
    let outcome = p.run_with_hook(Some(&mut session));
    assert_eq!(
        outcome,
        Outcome::Exited(0),
        "hits {:?}",
        session.runtime.dtos()[0]
            .tracepoints
            .iter()
            .map(|t| (t.hits, t.logged, t.linear, t.original))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        out.text(),
        "Hello World\r\n",
        "the traced instruction still ran"
    );
    let tp = &session.runtime.dtos()[dto].tracepoints[0];
    assert_eq!((tp.hits, tp.logged), (1, 1));
    assert!(
        p.clock().extra_cycles - before >= tp.cycles,
        "the hit cost emulated time"
    );
    let snap = session.buffer.get_stda();
    let records = Stda::parse(&snap.stda).unwrap().records();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!((r.major, r.minor), (0xC9, 0x21));
    let mut want = vec![0, 13, 0];
    want.extend_from_slice(b"Hello World\r\n");
    want.extend_from_slice(&[1, 0]);
    let eip = start.offset + 14 + 1;
    want.extend_from_slice(&eip.to_le_bytes());
    assert_eq!(r.data, want);
}

/// A trace program for test-asm16's DosWrite call. The entry pushes
/// DosWrite's arguments (14 bytes of code), then calls it far: trace the
/// CALL and log the length and the string it is about to write, the handle
/// (SS:SP -> &wlen, then len, then &msg, then 1), and EIP.
fn dos_write_trace(p: &Process) -> rpn_vm::TraceProgramFile {
    let start = p.module("TEST").unwrap().module.start.unwrap();
    let src = format!(
        "major=0xC9\nminor=0x21\nobject={}\noffset={}\nopcode=0x9A\n\
         Push SS\nPush ESP\nPush W,4\nAdd\nPush WIS     ; the length\n\
         Push SS\nPush ESP\nPush W,6\nAdd\nPush SIS     ; the string's selector, offset\n\
         Log MRS\n\
         Push SS\nPush ESP\nPush W,10\nAdd\nPush WIS\nLog WN,1 ; the handle\n\
         Push EIP\nLog DN,1\n",
        start.object,
        start.offset + 14
    );
    rpn_vm::parse("t.rpn", &src).unwrap()
}

#[test]
fn native_and_interpreted_programs_write_the_same_trace() {
    let run = |native: bool| {
        let (_dir, mut p, _out) = process("ne/test-asm16.exe", "TEST.EXE");
        let file = dos_write_trace(&p);
        let mut session = TraceSession::new(&p, StdaFormat::New, 4, 1).unwrap();
        session.runtime.set_native(native);
        let dto = session
            .apply_program(&mut p, "TEST", &file, None, None)
            .unwrap();
        assert_eq!(p.run_with_hook(Some(&mut session)), Outcome::Exited(0));
        let tp = &session.runtime.dtos()[dto].tracepoints[0];
        (
            session.runtime.native_tracepoints(dto),
            (tp.hits, tp.logged, tp.cycles),
            p.clock().extra_cycles,
            session.buffer.get_stda().stda,
        )
    };
    let (native_count, native_tp, native_clock, native_stda) = run(true);
    let (interp_count, interp_tp, interp_clock, interp_stda) = run(false);
    assert_eq!(interp_count, 0, "set_native(false) keeps the interpreter");
    if cfg!(target_arch = "x86_64") {
        assert_eq!(native_count, 1, "the program compiles on this host");
    }
    assert_eq!(native_tp, interp_tp);
    assert_eq!(native_tp.1, 1, "one record logged");
    assert_eq!(native_clock, interp_clock);
    assert_eq!(native_stda, interp_stda, "byte-identical trace buffers");
}

/// A session with one trace program at test-asm16's entry point
/// (`object=` and `offset=` are filled in after `header`).
fn at_entry(p: &mut Process, header: &str, body: &str) -> Result<TraceSession, String> {
    let start = p.module("TEST").unwrap().module.start.unwrap();
    let src = format!(
        "{header}object={}\noffset={}\n{body}",
        start.object, start.offset
    );
    let file = rpn_vm::parse("t.rpn", &src).unwrap();
    let mut session = TraceSession::new(p, StdaFormat::New, 4, 1).unwrap();
    session
        .apply_program(p, "TEST", &file, None, None)
        .map_err(|e| e.to_string())?;
    Ok(session)
}

#[test]
fn tracing_the_first_instruction_of_test_asm16() {
    let (_dir, mut p, out) = process("ne/test-asm16.exe", "TEST.EXE");
    let mut session = at_entry(&mut p, "major=0xC9\nminor=1\n", "Push EAX\nLog DN,1\n").unwrap();
    assert_eq!(p.run_with_hook(Some(&mut session)), Outcome::Exited(0));
    assert_eq!(out.text(), "Hello World\r\n");
    assert_eq!(session.runtime.dtos()[0].tracepoints[0].logged, 1);
}

#[test]
fn an_unselected_major_or_a_bad_opcode_is_refused_before_the_run() {
    let (_dir, mut p, _out) = process("ne/test-asm16.exe", "TEST.EXE");
    let err = at_entry(&mut p, "major=1\nminor=1\nopcode=0x90\n", "")
        .err()
        .unwrap();
    assert!(err.contains("opcode mismatch"), "{err}");
    let file = rpn_vm::parse("t.rpn", "major=1\nminor=1\nobject=1\noffset=0\n").unwrap();
    let mut session = TraceSession::new(&p, StdaFormat::New, 4, 1).unwrap();
    assert!(
        session
            .apply_program(&mut p, "NOSUCH", &file, None, None)
            .is_err()
    );
}

#[test]
fn sysdump_stops_the_system_at_the_tracepoint() {
    let (_dir, mut p, out) = process("ne/test-asm16.exe", "TEST.EXE");
    let mut session = at_entry(&mut p, "major=1\nminor=1\n", "SysDump\n").unwrap();
    assert_eq!(p.run_with_hook(Some(&mut session)), Outcome::Stopped);
    assert!(session.sysdump.is_some());
    assert_eq!(out.text(), "", "nothing ran after the dump");
}
