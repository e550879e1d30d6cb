//! Dynamic trace in a running OS/2 process: a trace program applied to a
//! real sample module logs what the program passes to the system.

mod common;

use std::path::Path;

use kernel_sim::trace::{TraceCommands, TraceError};
use kernel_sim::{ConsoleBuffer, Outcome, Process, ProcessConfig};
use stda::{Stda, StdaFormat};

fn process(sample: &str, name: &str) -> (tempfile::TempDir, Process, ConsoleBuffer) {
    let dir = tempfile::tempdir().unwrap();
    let from = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/samples")).join(sample);
    std::fs::copy(from, dir.path().join(name)).unwrap();
    let mut cfg = ProcessConfig::new(dir.path(), name);
    cfg.max_instructions = Some(10_000_000);
    let mut p = Process::new(cfg).unwrap();
    let out = common::capture_console(&mut p);
    (dir, p, out)
}

#[test]
fn tracing_test_asm16_logs_the_dos_write_arguments() {
    let (_dir, mut p, out) = process("ne/test-asm16.exe", "TEST.EXE");
    let start = p.module("TEST").unwrap().module.start.unwrap();
    let file = dos_write_trace(&p);
    p.trace_start(StdaFormat::New, 4).unwrap();
    let dto = p.trace_apply("TEST", &file, None, None).unwrap();
    let before = p.clock().extra_cycles;
    let outcome = p.run();
    let trace = p.system_trace().unwrap();
    assert_eq!(
        outcome,
        Outcome::Exited(0),
        "hits {:?}",
        trace.runtime().dtos()[0]
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
    let tp = &trace.runtime().dtos()[dto].tracepoints[0];
    assert_eq!((tp.hits, tp.logged), (1, 1));
    assert!(
        p.clock().extra_cycles - before >= tp.cycles,
        "the hit cost emulated time"
    );
    // The sidecar's fine time: nanoseconds of the clock's cycles.
    let side = trace.sidecar();
    assert_eq!(side.entries.len(), 1);
    let e = side.entries[0];
    let hz = u128::from(p.clock().hz);
    let ns = |c: u64| (u128::from(c) * 1_000_000_000 / hz) as u64;
    assert_eq!(u64::from(e.cost_cycles), tp.cycles);
    assert!(e.cycle > 0 && e.cost_ns > 0);
    assert_eq!((e.ns, e.cost_ns), (ns(e.cycle), ns(tp.cycles)));
    let snap = p.system_trace_mut().unwrap().buffer_mut().get_stda();
    let records = Stda::parse(&snap.stda).unwrap().records();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!((r.major, r.minor), (0xC9, 0x21));
    assert_eq!(r.pid, 1, "the process's ID");
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
        p.trace_start(StdaFormat::New, 4).unwrap();
        p.system_trace_mut()
            .unwrap()
            .runtime_mut()
            .set_native(native);
        let dto = p.trace_apply("TEST", &file, None, None).unwrap();
        assert_eq!(p.run(), Outcome::Exited(0));
        let clock = p.clock().extra_cycles;
        let trace = p.system_trace_mut().unwrap();
        let tp = &trace.runtime().dtos()[dto].tracepoints[0];
        (
            trace.runtime().native_tracepoints(dto),
            (tp.hits, tp.logged, tp.cycles),
            clock,
            trace.buffer_mut().get_stda().stda,
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

/// A system trace with one trace program at test-asm16's entry point
/// (`object=` and `offset=` are filled in after `header`).
fn at_entry(p: &mut Process, header: &str, body: &str) -> Result<(), String> {
    let start = p.module("TEST").unwrap().module.start.unwrap();
    let src = format!(
        "{header}object={}\noffset={}\n{body}",
        start.object, start.offset
    );
    let file = rpn_vm::parse("t.rpn", &src).unwrap();
    p.trace_start(StdaFormat::New, 4).unwrap();
    p.trace_apply("TEST", &file, None, None)
        .map_err(|e| e.to_string())?;
    Ok(())
}

#[test]
fn tracing_the_first_instruction_of_test_asm16() {
    let (_dir, mut p, out) = process("ne/test-asm16.exe", "TEST.EXE");
    at_entry(&mut p, "major=0xC9\nminor=1\n", "Push EAX\nLog DN,1\n").unwrap();
    assert_eq!(p.run(), Outcome::Exited(0));
    assert_eq!(out.text(), "Hello World\r\n");
    let report = p.trace_report().unwrap();
    assert_eq!(report.dtos[0].tracepoints[0].logged, 1);
}

#[test]
fn an_unselected_major_or_a_bad_opcode_is_refused_before_the_run() {
    let (_dir, mut p, _out) = process("ne/test-asm16.exe", "TEST.EXE");
    let file = rpn_vm::parse("t.rpn", "major=1\nminor=1\nobject=1\noffset=0\n").unwrap();
    assert_eq!(
        p.trace_apply("TEST", &file, None, None),
        Err(TraceError::NotStarted),
        "no trace buffer yet"
    );
    let err = at_entry(&mut p, "major=1\nminor=1\nopcode=0x90\n", "")
        .err()
        .unwrap();
    assert!(err.contains("opcode mismatch"), "{err}");
    // A module no process has loaded waits for its first load; this run
    // never loads it, and the report says so.
    let dto = p.trace_apply("NOSUCH", &file, None, None).unwrap();
    assert_eq!(p.run(), Outcome::Exited(0));
    let report = p.trace_report().unwrap();
    assert_eq!(report.dtos[dto].module, "NOSUCH");
    assert!(report.dtos[dto].pids.is_empty(), "never loaded");
    assert_eq!(report.dtos[dto].tracepoints[0].hits, 0);
}

#[test]
fn sysdump_stops_the_system_at_the_tracepoint() {
    let (_dir, mut p, out) = process("ne/test-asm16.exe", "TEST.EXE");
    at_entry(&mut p, "major=1\nminor=1\n", "SysDump\n").unwrap();
    assert_eq!(p.run(), Outcome::Stopped);
    let test = p.module("TEST").unwrap();
    let start = test.module.start.unwrap();
    let entry = test.objects[start.object as usize - 1].base + start.offset;
    assert_eq!(p.trace_report().unwrap().sysdump, Some(entry));
    assert_eq!(out.text(), "", "nothing ran after the dump");
}

#[test]
fn trace_commands_read_their_files_and_trspool_polls_during_the_run() {
    let (dir, mut p, out) = process("ne/test-asm16.exe", "TEST.EXE");
    let start = p.module("TEST").unwrap().module.start.unwrap();
    let rpn = dir.path().join("t.rpn");
    std::fs::write(
        &rpn,
        format!(
            "name=TEST.EXE\nmajor=0xC9\nminor=1\nobject={}\noffset={}\nPush EAX\nLog DN,1\n",
            start.object, start.offset
        ),
    )
    .unwrap();
    let spool = dir.path().join("spool");
    let commands = TraceCommands {
        applies: vec![rpn.to_string_lossy().into_owned()],
        spool: Some((spool.clone(), Default::default())),
        ..TraceCommands::default()
    };
    p.trace_commands(&commands).unwrap();
    assert_eq!(p.run(), Outcome::Exited(0));
    assert_eq!(out.text(), "Hello World\r\n");
    p.trace_stop().unwrap();
    let report = p.trace_report().unwrap();
    assert_eq!(report.dtos.len(), 1);
    assert_eq!(report.dtos[0].module, "TEST");
    let (totals, at) = report.spool.unwrap();
    assert_eq!(at, spool);
    assert_eq!(totals.records, 1, "the last poll took the record");
    let spooled = std::fs::read(spool.join("TRACEBUF.000")).unwrap();
    let spooled = stda::savefile::SaveFile::parse(&spooled).unwrap();
    assert_eq!(spooled.view().unwrap().records().len(), 1);
    let save = p.traceget().unwrap();
    assert!(
        Stda::parse(&save.stda).unwrap().records().is_empty(),
        "TRSPOOL took the record out of the buffer"
    );

    let missing = TraceCommands {
        applies: vec!["/no/such/file.rpn".into()],
        ..TraceCommands::default()
    };
    let err = p.trace_commands(&missing).unwrap_err().to_string();
    assert!(err.starts_with("cannot read /no/such/file.rpn: "), "{err}");
}
